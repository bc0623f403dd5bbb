"""Greedy decoding for any seq2seq model with the ``encode`` / ``decode`` interface."""
from __future__ import annotations

import torch
from torch import nn


@torch.no_grad()
def greedy_decode(model: nn.Module, src: torch.Tensor, bos_id: int, max_len: int,
                  src_pad_mask: torch.Tensor | None = None, eos_id: int | None = None) -> torch.Tensor:
    """Decode argmax tokens one at a time (re-running the decoder on the prefix: no KV cache).

    Returns (B, L) generated ids without the BOS, L <= max_len; once a row has produced
    ``eos_id`` it keeps producing ``eos_id``, and decoding stops when every row has.
    """
    memory = model.encode(src, src_pad_mask)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long, device=src.device)
    done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        nxt = model.decode(ys, memory, src_pad_mask)[:, -1].argmax(-1)
        if eos_id is not None:
            nxt = nxt.masked_fill(done, eos_id)
            done = done | (nxt == eos_id)
        ys = torch.cat([ys, nxt.unsqueeze(1)], dim=1)
        if eos_id is not None and bool(done.all()):
            break
    return ys[:, 1:]
