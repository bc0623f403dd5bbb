"""A small trained checkpoint to read with ``--model-weights`` (docs/model-trial.md, "After training").

A 2-layer Llama (hidden 64, 4 heads, 2 kv heads) trained for ``--steps`` AdamW steps at 1e-2 on the suite's MarkovLM
(a random Markov chain whose second half repeats the first), saved with ``save_pretrained`` into FOLDER, with 8
held-out sequences of the task as FOLDER/probe_ids.npy. It prints the ``--model-override`` options that build the
same architecture. Offline; about 10 s on one core.

    python examples/train_checkpoint.py /tmp/markov-llama [--steps 100]
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch

SHAPE = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=64)


def train(steps: int = 100, batch: int = 8, lr: float = 1e-2, seed: int = 0, probe: int = 8):
    """(the trained LlamaForCausalLM in eval mode, the config overrides that build it, ``probe`` held-out
    sequences of the task as token ids)."""
    import transformers

    from harness.data.tasks import MarkovLM

    task = MarkovLM(vocab=32, seq_len=32)
    overrides = {**SHAPE, "vocab_size": task.src_vocab}
    torch.manual_seed(seed)
    model = transformers.LlamaForCausalLM(transformers.LlamaConfig(**overrides))
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    g = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        b = task.train_batch(g, batch)
        logits = model(input_ids=b.x).logits[..., :task.tgt_vocab]
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, task.tgt_vocab), b.y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model.eval(), overrides, task.heldout(probe).x


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder", type=Path)
    p.add_argument("--steps", type=int, default=100)
    a = p.parse_args()
    model, overrides, ids = train(a.steps)
    model.save_pretrained(a.folder)
    np.save(a.folder / "probe_ids.npy", ids.numpy())
    print(" ".join(f"--model-override={k}={v}" for k, v in overrides.items()))


if __name__ == "__main__":
    main()
