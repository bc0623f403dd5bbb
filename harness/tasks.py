"""Seeded tasks with disjoint train / held-out splits, returning tensors ready for the model.

Every claim trains on one of these, so none grows its own data code. Conventions:

* token ids: ``PAD=0, BOS=1, EOS=2`` (``UNK=3`` in the parallel corpus); synthetic content tokens start at 3.
* targets use ``IGNORE_INDEX=-100`` wherever there is nothing to predict (padding, untargeted positions).
* pad masks are True at PAD positions (PyTorch's ``key_padding_mask`` convention); None when a task never pads.
* ``task.kind`` is ``"seq2seq"`` (``src, tgt_in, tgt_out, src_pad_mask``), ``"tagging"`` (``x, y`` with
  ``y`` per position) or ``"classify"`` (``x, y`` with one target row per example).
* a task may ask for ``n_targets`` predictions per targeted position (multi-position retrieval, C5): the
  model then emits ``task.out_dim = tgt_vocab * n_targets`` logits there and ``y`` has a trailing
  ``n_targets`` axis. ``logits.reshape(*y.shape, task.tgt_vocab)`` lines logits up with targets for every task.
* splits: an example is held out by a fixed hash of its *input* (or, for number words, of its integer), so
  no held-out input is ever drawn for training. ``heldout(n)`` is the same for every seed (fixed ``heldout_seed``);
  ``train_batch(generator, b)`` draws from the caller's ``torch.Generator`` only.
* generation is vectorised (a few tensor ops per batch) so data stays a small part of a training step.
"""
from __future__ import annotations

import math
import random
import re
import hashlib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Sequence

import torch
from torch import Tensor

PAD, BOS, EOS, UNK = 0, 1, 2, 3
N_SPECIAL = 3                 # synthetic tasks: content ids start here
IGNORE_INDEX = -100
KINDS = ("seq2seq", "tagging", "classify")
HELDOUT_SEED = 20170612       # one fixed held-out set per task, shared by all seeds

_HASH_PRIME = 2_147_483_629   # < 2**31: token * coef < 2**47 for ids < 2**16; a sum of 4096 stays < 2**63
_HASH_BUCKETS = 1_000_003


# --------------------------------------------------------------------------------------------- batch
@dataclass
class Batch:
    """Tensors for one step. seq2seq fills ``src, tgt_in, tgt_out, src_pad_mask``; tagging/classify ``x, y, pad_mask``.
    ``meta`` carries task-specific side information for probes (e.g. marked positions, the integers)."""
    kind: str
    src: Tensor | None = None
    tgt_in: Tensor | None = None
    tgt_out: Tensor | None = None
    src_pad_mask: Tensor | None = None
    x: Tensor | None = None
    y: Tensor | None = None
    pad_mask: Tensor | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def inputs(self) -> Tensor:
        return self.src if self.kind == "seq2seq" else self.x

    @property
    def targets(self) -> Tensor:
        return self.tgt_out if self.kind == "seq2seq" else self.y

    def __len__(self) -> int:
        return int(self.inputs.shape[0])

    def _map(self, fn: Callable[[Tensor], Tensor]) -> "Batch":
        kw = {f.name: (fn(v) if isinstance(v, Tensor) else v)
              for f in fields(self) for v in [getattr(self, f.name)]}
        kw["meta"] = {k: (fn(v) if isinstance(v, Tensor) else v) for k, v in self.meta.items()}
        return Batch(**kw)

    def to(self, device: torch.device | str) -> "Batch":
        return self._map(lambda t: t.to(device, non_blocking=True))

    def __getitem__(self, idx) -> "Batch":
        """Row slice (``batch[a:b]`` or an index tensor): for chunked evaluation."""
        return self._map(lambda t: t[idx])


def _check_positive(name: str, value: int, minimum: int = 1) -> None:
    if not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")


_HASH_COEF = torch.randint(1, _HASH_PRIME, (4096,), generator=torch.Generator().manual_seed(0x5EED))


def _hash_rows(t: Tensor) -> Tensor:
    """A fixed linear hash of each row (int64 in [0, _HASH_BUCKETS)): decides train vs held-out.
    PAD (0) contributes nothing, so trailing padding (a batch trimmed to its longest row) keeps the hash."""
    if t.shape[1] > len(_HASH_COEF):
        raise ValueError(f"split keys are at most {len(_HASH_COEF)} tokens long, got {t.shape[1]}")
    h = (t.to(torch.int64) * _HASH_COEF[: t.shape[1]]).sum(dim=1) % _HASH_PRIME
    return (h * 2_654_435_761) % _HASH_PRIME % _HASH_BUCKETS


def heldout_mask(keys: Tensor, fraction: float) -> Tensor:
    """True where a row (N, T) of split keys belongs to the held-out split."""
    return _hash_rows(keys.reshape(keys.shape[0], -1)) < int(round(fraction * _HASH_BUCKETS))


def rows_in_training_split(task: "Task", batch: "Batch") -> int:
    """How many rows of ``batch`` the task's hash would put in the training split (must be 0 for held-out)."""
    return int((~heldout_mask(task.split_keys(batch), task.heldout_fraction)).sum())


def validation_test_split(task: "Task", n_val: int, n_test: int) -> tuple["Batch", "Batch"]:
    """(validation, test) from the task's held-out split (issue 26: every tuning stage and early stop reads the
    validation part, every reported result the test part): the first ``n_val`` rows of ``task.heldout(n_val +
    n_test)`` and the rest, less any row whose input also occurs in the validation part (a repeated draw), so
    nothing chosen on validation has seen a test input."""
    full = task.heldout(n_val + n_test)
    val, rest = full[:n_val], full[n_val:]
    keys = getattr(task, "split_keys", None)
    if keys is None:
        return val, rest
    seen = {tuple(r) for r in keys(val).tolist()}
    keep = torch.tensor([tuple(r) not in seen for r in keys(rest).tolist()], dtype=torch.bool)
    return val, rest[keep]


def seq2seq_batch(src: Tensor, tgt: Tensor, meta: dict[str, Any] | None = None) -> Batch:
    """Build a seq2seq Batch from PAD-padded source and target token rows (content left-aligned).
    ``tgt_in = BOS + tgt``, ``tgt_out = tgt + EOS`` (IGNORE_INDEX after EOS); both trimmed to the batch's longest."""
    n = src.shape[0]
    src_len = (src != PAD).sum(1)
    tgt_len = (tgt != PAD).sum(1)
    src = src[:, : max(int(src_len.max()), 1)]
    lt = int(tgt_len.max()) + 1
    tgt = torch.cat([tgt, tgt.new_zeros(n, 1)], 1)[:, :lt]
    pos = torch.arange(lt).unsqueeze(0)
    tgt_out = tgt.clone()
    tgt_out[pos == tgt_len.unsqueeze(1)] = EOS
    tgt_out[pos > tgt_len.unsqueeze(1)] = IGNORE_INDEX
    tgt_in = torch.cat([tgt.new_full((n, 1), BOS), tgt[:, :-1]], 1)
    return Batch("seq2seq", src=src, tgt_in=tgt_in, tgt_out=tgt_out, src_pad_mask=src == PAD, meta=meta or {})


# ---------------------------------------------------------------------------------------------- base
class Task:
    """Common interface. Subclasses set ``name, kind, src_vocab, tgt_vocab, max_src_len, max_tgt_len`` and
    implement ``train_batch`` and ``_make_heldout``."""
    name: str = "task"
    kind: str = "tagging"
    src_vocab: int
    tgt_vocab: int            # seq2seq: target token ids; tagging/classify: number of classes
    n_targets: int = 1        # predictions per targeted position
    max_src_len: int
    max_tgt_len: int = 0      # seq2seq: longest tgt_in / tgt_out (content + 1)
    chance: float | None = None  # chance-level accuracy of one target, where it is defined
    heldout_fraction: float = 0.1

    def __init__(self) -> None:
        self._heldout_cache: dict[int, Batch] = {}

    @property
    def out_dim(self) -> int:
        """Logits the model emits per targeted position."""
        return self.tgt_vocab * self.n_targets

    @property
    def max_len(self) -> int:
        """Longest sequence the model sees (positional-encoding length)."""
        return max(self.max_src_len, self.max_tgt_len)

    def model_kwargs(self) -> dict[str, int]:
        """``ModelConfig`` fields this task fixes: ``ModelConfig.tiny(**task.model_kwargs(), ...)``."""
        return {"src_vocab": self.src_vocab, "tgt_vocab": self.out_dim, "max_len": self.max_len}

    def params(self) -> dict[str, Any]:
        """The task's defining parameters, for evidence tables."""
        return {"task": self.name, "kind": self.kind}

    def train_batch(self, generator: torch.Generator, batch_size: int) -> Batch:
        raise NotImplementedError

    def heldout(self, n: int) -> Batch:
        """``n`` held-out examples, identical on every call and for every seed."""
        _check_positive("n", n)
        if n not in self._heldout_cache:
            self._heldout_cache[n] = self._make_heldout(n)
        return self._heldout_cache[n]

    def _make_heldout(self, n: int) -> Batch:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.params().items() if k != 'task')})"


class SyntheticTask(Task):
    """A task sampled by ``_sample(generator, n) -> dict`` (tensors, first axis examples), split by hashing
    ``_split_key(sample)``; ``_to_batch(sample)`` turns a sample into a Batch. Train batches reject held-out
    inputs (a ``heldout_fraction`` of draws, so ~1/(1-f) oversampling)."""

    def __init__(self, heldout_fraction: float = 0.1) -> None:
        super().__init__()
        if not 0.0 < heldout_fraction < 1.0:
            raise ValueError(f"heldout_fraction must be in (0, 1), got {heldout_fraction!r}")
        self.heldout_fraction = heldout_fraction

    def _sample(self, generator: torch.Generator, n: int) -> dict[str, Tensor]:
        raise NotImplementedError

    def _split_key(self, sample: dict[str, Tensor]) -> Tensor:
        return sample["x"]

    def _to_batch(self, sample: dict[str, Tensor]) -> Batch:
        raise NotImplementedError

    def _draw(self, generator: torch.Generator, n: int, heldout: bool) -> dict[str, Tensor]:
        f = self.heldout_fraction if heldout else 1.0 - self.heldout_fraction
        parts, got = [], 0
        for _ in range(1000):
            m = int(math.ceil((n - got) / f * 1.1)) + 8
            s = self._sample(generator, m)
            keep = heldout_mask(self._split_key(s), self.heldout_fraction)
            if not heldout:
                keep = ~keep
            s = {k: v[keep] for k, v in s.items()}
            parts.append(s)
            got += int(keep.sum())
            if got >= n:
                break
        else:  # the split is empty for these parameters (a tiny example space)
            raise ValueError(f"{self!r}: cannot draw {n} {'held-out' if heldout else 'training'} examples; "
                             f"the example space is too small for heldout_fraction={self.heldout_fraction}")
        return {k: torch.cat([p[k] for p in parts])[:n] for k in parts[0]}

    def train_batch(self, generator: torch.Generator, batch_size: int) -> Batch:
        _check_positive("batch_size", batch_size)
        return self._to_batch(self._draw(generator, batch_size, heldout=False))

    def _make_heldout(self, n: int) -> Batch:
        return self._to_batch(self._draw(torch.Generator().manual_seed(HELDOUT_SEED), n, heldout=True))

    def split_keys(self, batch: Batch) -> Tensor:
        """The rows the split hashes, for a batch of this task (tests check disjointness on them)."""
        return batch.inputs


# ------------------------------------------------------------------------------ copy / reverse / sort
class SequenceTransduction(SyntheticTask):
    """copy, reverse or sort a random token sequence (C1). Lengths uniform in [min_len, max_len]."""
    kind = "seq2seq"
    OPS = ("copy", "reverse", "sort")

    def __init__(self, op: str = "reverse", vocab: int = 20, min_len: int = 6, max_len: int = 12,
                 heldout_fraction: float = 0.1) -> None:
        super().__init__(heldout_fraction)
        if op not in self.OPS:
            raise ValueError(f"op must be one of {self.OPS}, got {op!r}")
        _check_positive("vocab", vocab, 2)
        _check_positive("min_len", min_len)
        _check_positive("max_len", max_len)
        if max_len < min_len:
            raise ValueError(f"max_len ({max_len}) must be >= min_len ({min_len})")
        self.op, self.vocab, self.min_len, self.max_len_ = op, vocab, min_len, max_len
        self.name = op
        self.src_vocab = self.tgt_vocab = N_SPECIAL + vocab
        self.max_src_len, self.max_tgt_len = max_len, max_len + 1

    def params(self) -> dict[str, Any]:
        return {**super().params(), "vocab": self.vocab, "min_len": self.min_len, "max_len": self.max_len_}

    def _sample(self, generator, n):
        L = self.max_len_
        lengths = torch.randint(self.min_len, L + 1, (n,), generator=generator)
        tok = torch.randint(N_SPECIAL, N_SPECIAL + self.vocab, (n, L), generator=generator)
        pos = torch.arange(L).unsqueeze(0)
        valid = pos < lengths.unsqueeze(1)
        src = tok.masked_fill(~valid, PAD)
        return {"x": src, "len": lengths}

    def target(self, src: Tensor, lengths: Tensor) -> Tensor:
        """The op applied to PAD-padded rows (content left-aligned)."""
        L = src.shape[1]
        pos = torch.arange(L).unsqueeze(0)
        valid = pos < lengths.unsqueeze(1)
        if self.op == "copy":
            return src.clone()
        if self.op == "reverse":
            idx = (lengths.unsqueeze(1) - 1 - pos).clamp(min=0)
            return src.gather(1, idx).masked_fill(~valid, PAD)
        big = torch.iinfo(src.dtype).max
        return src.masked_fill(~valid, big).sort(dim=1).values.masked_fill(~valid, PAD)

    def _to_batch(self, s):
        return seq2seq_batch(s["x"], self.target(s["x"], s["len"]))


# --------------------------------------------------------------------------------- key-value lookup
class KeyValueLookup(SyntheticTask):
    """Associative recall (C3, C4): ``n_pairs`` (key, value) pairs with distinct keys, then a query key; the
    target (at the query, the last position) is that key's value, a class in [0, n_values).

    ``pair_format="fused"`` (default) writes each pair as ONE token (id encodes key and value) so that a single
    attention layer can solve it: the query matches a pair's key component and reads its value component from
    the same position. ``"separate"`` writes ``k1 v1 k2 v2 ... q`` (the classic form; needs two layers)."""
    kind = "tagging"
    FORMATS = ("fused", "separate")

    def __init__(self, n_pairs: int = 16, n_keys: int | None = None, n_values: int = 16,
                 pair_format: str = "fused", heldout_fraction: float = 0.1) -> None:
        super().__init__(heldout_fraction)
        _check_positive("n_pairs", n_pairs)
        n_keys = n_pairs if n_keys is None else n_keys
        _check_positive("n_keys", n_keys)
        _check_positive("n_values", n_values, 2)
        if n_keys < n_pairs:
            raise ValueError(f"n_keys ({n_keys}) must be >= n_pairs ({n_pairs}): keys are distinct")
        if pair_format not in self.FORMATS:
            raise ValueError(f"pair_format must be one of {self.FORMATS}, got {pair_format!r}")
        self.n_pairs, self.n_keys, self.n_values, self.pair_format = n_pairs, n_keys, n_values, pair_format
        self.name = "kv_lookup"
        self.tgt_vocab = n_values
        self.chance = 1.0 / n_values
        if pair_format == "fused":
            self.src_vocab = N_SPECIAL + n_keys * n_values + n_keys
            self.max_src_len = n_pairs + 1
        else:
            self.src_vocab = N_SPECIAL + n_keys + n_values
            self.max_src_len = 2 * n_pairs + 1

    def params(self):
        return {**super().params(), "n_pairs": self.n_pairs, "n_keys": self.n_keys, "n_values": self.n_values,
                "pair_format": self.pair_format}

    def _sample(self, generator, n):
        keys = torch.rand(n, self.n_keys, generator=generator).argsort(dim=1)[:, : self.n_pairs]
        values = torch.randint(0, self.n_values, (n, self.n_pairs), generator=generator)
        which = torch.randint(0, self.n_pairs, (n,), generator=generator)
        qkey = keys.gather(1, which.unsqueeze(1))
        target = values.gather(1, which.unsqueeze(1)).squeeze(1)
        if self.pair_format == "fused":
            pairs = N_SPECIAL + keys * self.n_values + values
            query = N_SPECIAL + self.n_keys * self.n_values + qkey
            x = torch.cat([pairs, query], 1)
        else:
            kv = torch.stack([N_SPECIAL + keys, N_SPECIAL + self.n_keys + values], 2).reshape(n, -1)
            x = torch.cat([kv, N_SPECIAL + qkey], 1)
        return {"x": x, "target": target, "query_index": which}

    def _to_batch(self, s):
        x = s["x"]
        y = torch.full_like(x, IGNORE_INDEX)
        y[:, -1] = s["target"]
        step = 1 if self.pair_format == "fused" else 2
        return Batch("tagging", x=x, y=y, meta={"query_pair_position": s["query_index"] * step})


# ------------------------------------------------------------------------- multi-position retrieval
class MultiPositionRetrieval(SyntheticTask):
    """C5: ``seq_len`` random tokens, ``n_marked`` of them carry distinct marks 1..M; a final query position must
    return all M marked tokens at once (slot j = the token marked j). One query gathers M positions, so a single
    head must average them: the resolution question. ``y`` is (B, T, M), targeted at the last position.

    ``binding`` says what tells the model which slot a gathered token fills:

    * ``"token"`` (default): marks sit at random positions, fused with the token in one id (as in fused key-value
      lookup), so one attention layer suffices. The value vector of a marked position carries its slot, so a
      single head can average the M positions without losing which token fills which slot.
    * ``"position"``: slot j is a fixed position (evenly spaced: ``j * seq_len // M + seq_len // (2M)``) and tokens
      carry no mark. Only *where* attention looked says which slot a token fills; an average of the M positions'
      values (token and positional encoding added) no longer binds token to slot. The case where averaging can
      cost resolution (C5).

    ``kind``: ``"tagging"`` (default, y as above) or ``"classify"``: the same draws with y (B, M), the query's
    targets only, for a model pooled at the query (``pool="last"``) that need not compute the other positions'
    outputs (C5 trains this way)."""
    kind = "tagging"
    BINDINGS = ("token", "position")

    def __init__(self, n_marked: int = 4, seq_len: int = 16, vocab: int = 16, heldout_fraction: float = 0.1,
                 binding: str = "token", kind: str = "tagging"):
        super().__init__(heldout_fraction)
        _check_positive("n_marked", n_marked)
        _check_positive("seq_len", seq_len)
        _check_positive("vocab", vocab, 2)
        if n_marked > seq_len:
            raise ValueError(f"n_marked ({n_marked}) must be <= seq_len ({seq_len})")
        if binding not in self.BINDINGS:
            raise ValueError(f"binding must be one of {self.BINDINGS}, got {binding!r}")
        if kind not in ("tagging", "classify"):
            raise ValueError(f"kind must be 'tagging' or 'classify', got {kind!r}")
        self.n_marked, self.seq_len, self.vocab, self.binding, self.kind = n_marked, seq_len, vocab, binding, kind
        self.name = "multi_retrieval"
        self.n_targets = n_marked
        self.tgt_vocab = vocab
        self.chance = 1.0 / vocab
        self.query_token = N_SPECIAL + vocab * (n_marked + 1 if binding == "token" else 1)
        self.src_vocab = self.query_token + 1
        self.max_src_len = seq_len + 1

    def params(self):
        return {**super().params(), "n_marked": self.n_marked, "seq_len": self.seq_len, "vocab": self.vocab,
                "binding": self.binding}

    def _sample(self, generator, n):
        tok = torch.randint(0, self.vocab, (n, self.seq_len), generator=generator)
        if self.binding == "position":
            positions = (torch.arange(self.n_marked) * self.seq_len // self.n_marked
                         + self.seq_len // (2 * self.n_marked)).expand(n, -1).clone()
            x = torch.cat([N_SPECIAL + tok, torch.full((n, 1), self.query_token)], 1)
            return {"x": x, "target": tok.gather(1, positions), "positions": positions}
        positions = torch.rand(n, self.seq_len, generator=generator).argsort(dim=1)[:, : self.n_marked]
        mark = torch.zeros(n, self.seq_len, dtype=torch.int64)
        mark.scatter_(1, positions, torch.arange(1, self.n_marked + 1).expand(n, -1))
        x = torch.cat([N_SPECIAL + tok + self.vocab * mark, torch.full((n, 1), self.query_token)], 1)
        return {"x": x, "target": tok.gather(1, positions), "positions": positions}

    def _to_batch(self, s):
        x = s["x"]
        meta = {"marked_positions": s["positions"]}
        if self.kind == "classify":
            return Batch("classify", x=x, y=s["target"], meta=meta)
        y = torch.full((*x.shape, self.n_marked), IGNORE_INDEX, dtype=torch.int64)
        y[:, -1] = s["target"]
        return Batch("tagging", x=x, y=y, meta=meta)


# ---------------------------------------------------------------------------------- long-range match
class FirstEqualsLast(SyntheticTask):
    """C2: a sequence of length d+1; is its last token equal to its first (distance d)? Balanced classes.
    ``kind="classify"``: y (B,), one label per sequence. ``kind="tagging"``: y (B, d+1), targeted at the last
    position only (for causal models whose last position is the one that can see position 0)."""

    def __init__(self, d: int = 16, vocab: int = 8, kind: str = "classify", heldout_fraction: float = 0.1):
        super().__init__(heldout_fraction)
        _check_positive("d", d)
        _check_positive("vocab", vocab, 2)
        if kind not in ("classify", "tagging"):
            raise ValueError(f"kind must be 'classify' or 'tagging', got {kind!r}")
        self.d, self.vocab, self.kind = d, vocab, kind
        self.name = "first_equals_last"
        self.src_vocab = N_SPECIAL + vocab
        self.tgt_vocab = 2
        self.chance = 0.5
        self.max_src_len = d + 1

    def params(self):
        return {**super().params(), "d": self.d, "vocab": self.vocab}

    def _sample(self, generator, n):
        x = torch.randint(0, self.vocab, (n, self.d + 1), generator=generator)
        equal = torch.rand(n, generator=generator) < 0.5
        shift = torch.randint(1, self.vocab, (n,), generator=generator)
        x[:, -1] = torch.where(equal, x[:, 0], (x[:, 0] + shift) % self.vocab)
        return {"x": x + N_SPECIAL, "label": equal.long()}

    def _to_batch(self, s):
        x = s["x"]
        if self.kind == "classify":
            return Batch("classify", x=x, y=s["label"])
        y = torch.full_like(x, IGNORE_INDEX)
        y[:, -1] = s["label"]
        return Batch("tagging", x=x, y=y)


class DelayedCopy(SyntheticTask):
    """C2: tagging, ``y_t = x_{t-d}`` (the class of the token d positions back) for t >= d; length d + n_out."""
    kind = "tagging"

    def __init__(self, d: int = 16, vocab: int = 8, n_out: int = 8, heldout_fraction: float = 0.1):
        super().__init__(heldout_fraction)
        _check_positive("d", d)
        _check_positive("vocab", vocab, 2)
        _check_positive("n_out", n_out)
        self.d, self.vocab, self.n_out = d, vocab, n_out
        self.name = "delayed_copy"
        self.src_vocab = N_SPECIAL + vocab
        self.tgt_vocab = vocab
        self.chance = 1.0 / vocab
        self.max_src_len = d + n_out

    def params(self):
        return {**super().params(), "d": self.d, "vocab": self.vocab, "n_out": self.n_out}

    def _sample(self, generator, n):
        return {"x": N_SPECIAL + torch.randint(0, self.vocab, (n, self.d + self.n_out), generator=generator)}

    def _to_batch(self, s):
        x = s["x"]
        y = torch.full_like(x, IGNORE_INDEX)
        y[:, self.d:] = x[:, : -self.d] - N_SPECIAL
        return Batch("tagging", x=x, y=y)


# ------------------------------------------------------------------------------------- language model
class MarkovLM(SyntheticTask):
    """A small synthetic language for decoder-only LMs (Q2): next-token prediction on text from a fixed random
    Markov chain (each of ``vocab`` tokens has ``branching`` successors with Dirichlet(1) probabilities, drawn
    once from ``chain_seed``, so every seed sees the same language). With ``repeat=True`` the second half of each
    sequence repeats the first, so part of the text is predictable from local statistics (attend to the
    previous token) and part only in context (look back half a sequence): heads have different jobs.
    ``x = [BOS, s_0 .. s_{L-2}]``, ``y = [s_0 .. s_{L-1}]`` (classes 0..vocab-1; content ids are N_SPECIAL + s),
    every position targeted."""
    kind = "tagging"

    def __init__(self, vocab: int = 32, seq_len: int = 32, branching: int = 4, repeat: bool = True,
                 chain_seed: int = 0, heldout_fraction: float = 0.1):
        super().__init__(heldout_fraction)
        _check_positive("vocab", vocab, 2)
        _check_positive("seq_len", seq_len, 2)
        _check_positive("branching", branching)
        if branching > vocab:
            raise ValueError(f"branching ({branching}) must be <= vocab ({vocab})")
        if repeat and seq_len % 2:
            raise ValueError(f"seq_len must be even with repeat=True, got {seq_len}")
        self.vocab, self.seq_len, self.branching, self.repeat, self.chain_seed = (
            vocab, seq_len, branching, bool(repeat), chain_seed)
        self.name = "markov_lm"
        self.src_vocab = N_SPECIAL + vocab
        self.tgt_vocab = vocab
        self.chance = 1.0 / vocab
        self.max_src_len = seq_len
        g = torch.Generator().manual_seed(chain_seed)
        self.successors = torch.rand(vocab, vocab, generator=g).argsort(dim=1)[:, :branching]   # (V, b)
        gamma = -torch.log(torch.rand(vocab, branching, generator=g).clamp_min(1e-12))         # Dirichlet(1)
        self.probs = gamma / gamma.sum(1, keepdim=True)

    def params(self):
        return {**super().params(), "vocab": self.vocab, "seq_len": self.seq_len, "branching": self.branching,
                "repeat": self.repeat, "chain_seed": self.chain_seed}

    def _sample(self, generator, n):
        length = self.seq_len // 2 if self.repeat else self.seq_len
        cur = torch.randint(0, self.vocab, (n,), generator=generator)
        steps = [cur]
        for _ in range(length - 1):
            pick = torch.multinomial(self.probs[cur], 1, generator=generator).squeeze(1)
            cur = self.successors[cur, pick]
            steps.append(cur)
        s = torch.stack(steps, 1)
        if self.repeat:
            s = torch.cat([s, s], 1)
        x = torch.cat([torch.full((n, 1), BOS), N_SPECIAL + s[:, :-1]], 1)
        return {"x": x, "y": s}

    def _to_batch(self, s):
        return Batch("tagging", x=s["x"], y=s["y"])


# -------------------------------------------------------------------------------------- number words
_EN_UNITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
             "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
_EN_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_DE_UNITS = ["null", "eins", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun", "zehn", "elf",
             "zwölf", "dreizehn", "vierzehn", "fünfzehn", "sechzehn", "siebzehn", "achtzehn", "neunzehn"]
_DE_TENS = ["", "", "zwanzig", "dreißig", "vierzig", "fünfzig", "sechzig", "siebzig", "achtzig", "neunzig"]


def _en_chunk(c: int) -> list[str]:
    """English tokens for 1 <= c <= 999 ("-" is its own token: twenty - one)."""
    out: list[str] = []
    if c >= 100:
        out += [_EN_UNITS[c // 100], "hundred"]
        c %= 100
    if c >= 20:
        out.append(_EN_TENS[c // 10])
        if c % 10:
            out += ["-", _EN_UNITS[c % 10]]
    elif c:
        out.append(_EN_UNITS[c])
    return out


def _de_chunk(c: int, final: bool) -> list[str]:
    """German morphemes for 1 <= c <= 999. Units precede tens ('ein und zwanzig'); 'eins' only when the 1 ends
    the whole number (``final``), 'ein' before 'und', 'hundert', 'tausend'. 100 is 'ein hundert' (our choice)."""
    out: list[str] = []
    if c >= 100:
        out += ["ein" if c // 100 == 1 else _DE_UNITS[c // 100], "hundert"]
        c %= 100
    if c >= 20:
        if c % 10:
            out += ["ein" if c % 10 == 1 else _DE_UNITS[c % 10], "und"]
        out.append(_DE_TENS[c // 10])
    elif c == 1:
        out.append("eins" if final else "ein")
    elif c:
        out.append(_DE_UNITS[c])
    return out


def english_number_tokens(n: int) -> list[str]:
    """English tokens for 0 <= n <= 999_999 (American style, no 'and')."""
    if n == 0:
        return ["zero"]
    hi, lo = divmod(n, 1000)
    return (_en_chunk(hi) + ["thousand"] if hi else []) + (_en_chunk(lo) if lo else [])


def german_number_tokens(n: int) -> list[str]:
    """German morphemes for 0 <= n <= 999_999; ``"".join`` gives the written word."""
    if n == 0:
        return ["null"]
    hi, lo = divmod(n, 1000)
    return (_de_chunk(hi, final=False) + ["tausend"] if hi else []) + (_de_chunk(lo, final=True) if lo else [])


def english_number_text(tokens: Sequence[str]) -> str:
    return " ".join(tokens).replace(" - ", "-")


def german_number_text(tokens: Sequence[str]) -> str:
    return "".join(tokens)


class Vocab:
    """Token strings <-> ids with the shared specials in front."""

    def __init__(self, tokens: Sequence[str], specials: Sequence[str] = ("<pad>", "<bos>", "<eos>")) -> None:
        self.itos = list(specials) + [t for t in dict.fromkeys(tokens) if t not in specials]
        self.stoi = {t: i for i, t in enumerate(self.itos)}
        self.unk = self.stoi.get("<unk>")

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, tokens: Sequence[str]) -> list[int]:
        if self.unk is None:
            return [self.stoi[t] for t in tokens]
        return [self.stoi.get(t, self.unk) for t in tokens]

    def decode(self, ids: Sequence[int] | Tensor) -> list[str]:
        """Tokens up to the first EOS, skipping PAD/BOS and IGNORE_INDEX."""
        out = []
        for i in (ids.tolist() if isinstance(ids, Tensor) else ids):
            if i == EOS:
                break
            if i in (PAD, BOS, IGNORE_INDEX) or i < 0:
                continue
            out.append(self.itos[i] if i < len(self.itos) else "<unk>")
        return out


def _token_table(seqs: list[list[int]]) -> Tensor:
    width = max(len(s) for s in seqs)
    t = torch.full((len(seqs), width), PAD, dtype=torch.int64)
    for i, s in enumerate(seqs):
        t[i, : len(s)] = torch.tensor(s, dtype=torch.int64)
    return t


def _compact(t: Tensor) -> Tensor:
    """Move each row's non-PAD tokens to the front, keeping their order (vectorised)."""
    key = (t == PAD).to(torch.int64) * t.shape[1] + torch.arange(t.shape[1])
    return t.gather(1, key.argsort(dim=1))


class NumberWords(SyntheticTask):
    """Number-words transduction (C1), generated from rules (nothing downloaded), integers 0..max_n:

    * ``source="digits", target="en"``: "1234" -> "one thousand two hundred thirty-four";
    * ``source="en", target="de"``: English words -> German morphemes. German puts units before tens
      (thirty - four -> vier und dreißig), so the model must reorder.

    German is tokenised into morphemes (ein und zwanzig, drei hundert ...) and written joined
    ('einundzwanzig'); ``detokenize(ids)`` gives the written form, ``text_tokens(ids)`` the space-joined
    morphemes (what token-level BLEU should score). The split holds out integers: a held-out integer never
    occurs in training. Per-batch generation composes precomputed 0..999 chunk tables (vectorised)."""
    kind = "seq2seq"
    SOURCES = ("digits", "en")
    TARGETS = ("en", "de")

    def __init__(self, source: str = "en", target: str = "de", max_n: int = 9999, min_n: int = 0,
                 heldout_fraction: float = 0.1) -> None:
        super().__init__(heldout_fraction)
        if source not in self.SOURCES:
            raise ValueError(f"source must be one of {self.SOURCES}, got {source!r}")
        if target not in self.TARGETS:
            raise ValueError(f"target must be one of {self.TARGETS}, got {target!r}")
        if source == target:
            raise ValueError(f"source and target must differ, both are {source!r}")
        if not isinstance(max_n, int) or not 0 < max_n <= 999_999:
            raise ValueError(f"max_n must be an integer in [1, 999999], got {max_n!r}")
        if not isinstance(min_n, int) or not 0 <= min_n < max_n:
            raise ValueError(f"min_n must be an integer in [0, max_n), got {min_n!r}")
        self.source, self.target, self.max_n, self.min_n = source, target, max_n, min_n
        self.name = f"number_words_{target}"
        en_words = ["zero", "-"] + _EN_UNITS[1:] + _EN_TENS[2:] + ["hundred", "thousand"]
        de_words = ["null", "ein", "und"] + _DE_UNITS[1:] + _DE_TENS[2:] + ["hundert", "tausend"]
        vocabs = {"digits": Vocab(list("0123456789")), "en": Vocab(en_words), "de": Vocab(de_words)}
        self.src_vocab_obj, self.tgt_vocab_obj = vocabs[source], vocabs[target]
        self.src_vocab, self.tgt_vocab = len(self.src_vocab_obj), len(self.tgt_vocab_obj)
        self._tables = {side: self._chunk_tables(lang, vocab)
                        for side, lang, vocab in (("src", source, self.src_vocab_obj), ("tgt", target, self.tgt_vocab_obj))
                        if lang != "digits"}
        self.max_src_len = self._width(source)
        self.max_tgt_len = self._width(target) + 1
        ints = torch.arange(min_n, max_n + 1)
        held = heldout_mask(ints.unsqueeze(1), heldout_fraction)
        self.train_integers, self.heldout_integers = ints[~held], ints[held]
        if len(self.train_integers) == 0 or len(self.heldout_integers) == 0:
            raise ValueError(f"range [{min_n}, {max_n}] is too small to split with heldout_fraction={heldout_fraction}")

    def params(self):
        return {**super().params(), "source": self.source, "target": self.target, "max_n": self.max_n,
                "min_n": self.min_n}

    def _width(self, lang: str) -> int:
        if lang == "digits":
            return len(str(self.max_n))
        high, low = self._tables["src" if lang == self.source else "tgt"]
        return high.shape[1] + low.shape[1]

    @staticmethod
    def _chunk_tables(lang: str, vocab: Vocab) -> tuple[Tensor, Tensor]:
        """(high, low): row c < 1000 of ``high`` is the thousands part for c (with 'thousand'; row 0 empty), row c
        of ``low`` the last three digits (row 0 empty, row 1000 the word for zero)."""
        if lang == "en":
            high = [[]] + [_en_chunk(c) + ["thousand"] for c in range(1, 1000)]
            low = [[]] + [_en_chunk(c) for c in range(1, 1000)] + [["zero"]]
        else:
            high = [[]] + [_de_chunk(c, final=False) + ["tausend"] for c in range(1, 1000)]
            low = [[]] + [_de_chunk(c, final=True) for c in range(1, 1000)] + [["null"]]
        return _token_table([vocab.encode(t) for t in high]), _token_table([vocab.encode(t) for t in low])

    def encode_integers(self, n: Tensor, side: str) -> Tensor:
        """PAD-padded token rows for integers ``n`` on ``side`` ("src" or "tgt")."""
        lang = self.source if side == "src" else self.target
        if lang == "digits":
            width = len(str(self.max_n))
            powers = 10 ** torch.arange(width - 1, -1, -1)
            digits = (n.unsqueeze(1) // powers) % 10
            lead = (n.unsqueeze(1) < powers) & (powers > 1)     # leading zeros (but keep a lone '0')
            return _compact((digits + N_SPECIAL).masked_fill(lead, PAD))
        high, low = self._tables[side]
        hi, lo = n // 1000, n % 1000
        lo = torch.where(n == 0, torch.full_like(lo, 1000), lo)
        return _compact(torch.cat([high[hi], low[lo]], 1))

    def train_batch(self, generator, batch_size):  # integers are drawn from the split directly
        _check_positive("batch_size", batch_size)
        idx = torch.randint(0, len(self.train_integers), (batch_size,), generator=generator)
        return self.batch_for(self.train_integers[idx])

    def _make_heldout(self, n):
        g = torch.Generator().manual_seed(HELDOUT_SEED)
        pool = self.heldout_integers
        idx = torch.randperm(len(pool), generator=g)[:n] if n <= len(pool) else torch.randint(0, len(pool), (n,), generator=g)
        return self.batch_for(pool[idx])

    def batch_for(self, integers: Tensor) -> Batch:
        """The seq2seq Batch for given integers (``meta["integers"]``)."""
        return seq2seq_batch(self.encode_integers(integers, "src"), self.encode_integers(integers, "tgt"),
                             meta={"integers": integers})

    def split_keys(self, batch: Batch) -> Tensor:
        return batch.meta["integers"].unsqueeze(1)

    def text_tokens(self, ids: Tensor | Sequence[int], side: str = "tgt") -> str:
        """Space-joined tokens of one row (up to EOS)."""
        return " ".join((self.tgt_vocab_obj if side == "tgt" else self.src_vocab_obj).decode(ids))

    def detokenize(self, ids: Tensor | Sequence[int], side: str = "tgt") -> str:
        """Written text of one row: 'einundzwanzig', 'twenty-one', '21'."""
        lang = self.target if side == "tgt" else self.source
        toks = (self.tgt_vocab_obj if side == "tgt" else self.src_vocab_obj).decode(ids)
        return german_number_text(toks) if lang in ("de", "digits") else english_number_text(toks)


# ----------------------------------------------------------------------------------- parallel corpus
_TOKEN_RE = re.compile(r"\w+|[^\w\s]", re.UNICODE)
_NO_SPACE_BEFORE = re.compile(r" ([.,!?;:%)\]}'])")
_NO_SPACE_AFTER = re.compile(r"([(\[{]) ")


class SimpleTokenizer:
    """Words and single punctuation marks (regex ``\\w+|[^\\w\\s]``), optionally lowercased. Enough for
    a user's own parallel data; detokenize re-attaches punctuation."""

    def __init__(self, lowercase: bool = False) -> None:
        self.lowercase = lowercase

    def tokenize(self, text: str) -> list[str]:
        return _TOKEN_RE.findall(text.lower() if self.lowercase else text)

    @staticmethod
    def detokenize(tokens: Sequence[str]) -> str:
        return _NO_SPACE_AFTER.sub(r"\1", _NO_SPACE_BEFORE.sub(r"\1", " ".join(tokens)))


class ParallelCorpus(Task):
    """A user's parallel corpus (C1 full profile): two aligned text files or one TSV (source<TAB>target).

    Pairs are held out by a BLAKE2b hash of the source line (identical sources share a split); vocabularies are
    built from the training split only (``min_freq``, ``max_vocab``), unknown tokens map to ``UNK=3``.
    Pairs longer than ``max_len`` tokens on either side are dropped (``n_dropped``). Tokens are kept as one
    flat int32 buffer with offsets, so memory is the corpus's token count."""
    kind = "seq2seq"

    def __init__(self, pairs: Sequence[tuple[str, str]], heldout_fraction: float = 0.05, max_len: int = 100,
                 lowercase: bool = False, min_freq: int = 1, max_vocab: int | None = None,
                 shared_vocab: bool = False, name: str = "parallel_corpus") -> None:
        super().__init__()
        if not 0.0 < heldout_fraction < 1.0:
            raise ValueError(f"heldout_fraction must be in (0, 1), got {heldout_fraction!r}")
        _check_positive("max_len", max_len)
        _check_positive("min_freq", min_freq)
        if max_vocab is not None:
            _check_positive("max_vocab", max_vocab, 1)
        self.name, self.heldout_fraction, self.max_len_ = name, heldout_fraction, max_len
        self.tokenizer = SimpleTokenizer(lowercase)
        threshold = int(round(heldout_fraction * 2**64))
        src_tok, tgt_tok, held, raw = [], [], [], []
        self.n_dropped = 0
        for s, t in pairs:
            st, tt = self.tokenizer.tokenize(s), self.tokenizer.tokenize(t)
            if not st or not tt or len(st) > max_len or len(tt) > max_len:
                self.n_dropped += 1
                continue
            src_tok.append(st)
            tgt_tok.append(tt)
            raw.append((s.strip(), t.strip()))
            digest = hashlib.blake2b(s.strip().encode("utf-8"), digest_size=8).digest()
            held.append(int.from_bytes(digest, "big") < threshold)
        if not src_tok:
            raise ValueError("the corpus has no usable pairs (empty, or every pair longer than max_len)")
        held_t = torch.tensor(held, dtype=torch.bool)
        if held_t.all() or not held_t.any():
            raise ValueError(f"corpus of {len(src_tok)} pairs gives an empty split at heldout_fraction="
                             f"{heldout_fraction}; give more pairs or another fraction")
        train_idx = (~held_t).nonzero().squeeze(1).tolist()

        def build(seqs: list[list[str]]) -> Vocab:
            counts: dict[str, int] = {}
            for i in train_idx:
                for tok in seqs[i]:
                    counts[tok] = counts.get(tok, 0) + 1
            ranked = sorted((t for t, c in counts.items() if c >= min_freq), key=lambda t: (-counts[t], t))
            return Vocab(ranked[: max_vocab], specials=("<pad>", "<bos>", "<eos>", "<unk>"))

        self.src_vocab_obj = build([a + b for a, b in zip(src_tok, tgt_tok)] if shared_vocab else src_tok)
        self.tgt_vocab_obj = self.src_vocab_obj if shared_vocab else build(tgt_tok)
        self.src_vocab, self.tgt_vocab = len(self.src_vocab_obj), len(self.tgt_vocab_obj)
        self.max_src_len = max(len(s) for s in src_tok)
        self.max_tgt_len = max(len(t) for t in tgt_tok) + 1
        self._src = self._ragged([self.src_vocab_obj.encode(s) for s in src_tok])
        self._tgt = self._ragged([self.tgt_vocab_obj.encode(t) for t in tgt_tok])
        self._raw = raw
        self.train_index = (~held_t).nonzero().squeeze(1)
        self.heldout_index = held_t.nonzero().squeeze(1)

    @staticmethod
    def _ragged(seqs: list[list[int]]) -> tuple[Tensor, Tensor, Tensor]:
        lens = torch.tensor([len(s) for s in seqs], dtype=torch.int64)
        flat = torch.tensor([i for s in seqs for i in s], dtype=torch.int32)
        starts = torch.cumsum(lens, 0) - lens
        return flat, starts, lens

    @staticmethod
    def _gather(ragged: tuple[Tensor, Tensor, Tensor], idx: Tensor) -> Tensor:
        flat, starts, lens = ragged
        width = int(lens[idx].max())
        pos = torch.arange(width).unsqueeze(0)
        valid = pos < lens[idx].unsqueeze(1)
        at = (starts[idx].unsqueeze(1) + pos).clamp(max=len(flat) - 1)
        return flat[at].to(torch.int64).masked_fill(~valid, PAD)

    @classmethod
    def from_files(cls, src_path: str | Path, tgt_path: str | Path, **kw) -> "ParallelCorpus":
        src = Path(src_path).read_text(encoding="utf-8").splitlines()
        tgt = Path(tgt_path).read_text(encoding="utf-8").splitlines()
        if len(src) != len(tgt):
            raise ValueError(f"src_path has {len(src)} lines but tgt_path has {len(tgt)}: files must be aligned")
        return cls(list(zip(src, tgt)), **kw)

    @classmethod
    def from_tsv(cls, path: str | Path, **kw) -> "ParallelCorpus":
        pairs = []
        for i, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            parts = line.split("\t")
            if len(parts) != 2:
                raise ValueError(f"{path}:{i}: expected 'source<TAB>target', found {len(parts)} fields")
            pairs.append((parts[0], parts[1]))
        return cls(pairs, **kw)

    def params(self):
        return {**super().params(), "pairs_train": len(self.train_index), "pairs_heldout": len(self.heldout_index),
                "src_vocab": self.src_vocab, "tgt_vocab": self.tgt_vocab, "max_len": self.max_len_}

    def _batch(self, idx: Tensor) -> Batch:
        return seq2seq_batch(self._gather(self._src, idx), self._gather(self._tgt, idx), meta={"index": idx})

    def train_batch(self, generator, batch_size):
        _check_positive("batch_size", batch_size)
        pick = torch.randint(0, len(self.train_index), (batch_size,), generator=generator)
        return self._batch(self.train_index[pick])

    def _make_heldout(self, n):
        return self._batch(self.heldout_index[:n])

    def split_keys(self, batch: Batch) -> Tensor:
        return batch.meta["index"].unsqueeze(1)

    def references(self, batch: Batch) -> list[str]:
        """The raw target lines of a batch (BLEU references)."""
        return [self._raw[i][1] for i in batch.meta["index"].tolist()]

    def detokenize(self, ids: Tensor | Sequence[int], side: str = "tgt") -> str:
        v = self.tgt_vocab_obj if side == "tgt" else self.src_vocab_obj
        return self.tokenizer.detokenize(v.decode(ids))


# English -> German sentence frames for generated_parallel_corpus: words, capitals and punctuation that sacrebleu's
# 13a tokeniser and SimpleTokenizer both split, around a number written out in each language
_CORPUS_FRAMES = (("I counted {en} sheep.", "Ich zählte {de} Schafe."),
                  ("There are {en} birds on the roof.", "Auf dem Dach sind {de} Vögel."),
                  ("She paid {en} euros, not more.", "Sie zahlte {de} Euro, nicht mehr."),
                  ("Is the answer {en}?", "Ist die Antwort {de}?"))


def generated_parallel_corpus(n_pairs: int, seed: int = 0) -> list[tuple[str, str]]:
    """``n_pairs`` distinct (English, German) sentence pairs made from rules (nothing downloaded, no licence): a
    number from 2 to 999999 written out (``english_number_text`` / German joined) inside one of four sentence
    frames. A stand-in for a user's corpus where only the path must run (C1 (d) in a dry run): the loader,
    tokenisation, vocabularies, hash split, decoding and BLEU."""
    _check_positive("n_pairs", n_pairs)
    pairs = []
    for k in random.Random(seed).sample(range(len(_CORPUS_FRAMES) * 999_998), n_pairs):
        (en, de), n = _CORPUS_FRAMES[k % len(_CORPUS_FRAMES)], 2 + k // len(_CORPUS_FRAMES)
        pairs.append((en.format(en=english_number_text(english_number_tokens(n))),
                      de.format(de=german_number_text(german_number_tokens(n)))))
    return pairs


# -------------------------------------------------------------------------------------------- registry
TASKS: dict[str, Callable[..., Task]] = {
    "copy": lambda **kw: SequenceTransduction("copy", **kw),
    "reverse": lambda **kw: SequenceTransduction("reverse", **kw),
    "sort": lambda **kw: SequenceTransduction("sort", **kw),
    "kv_lookup": KeyValueLookup,
    "multi_retrieval": MultiPositionRetrieval,
    "first_equals_last": FirstEqualsLast,
    "delayed_copy": DelayedCopy,
    "markov_lm": MarkovLM,
    "number_words_en": lambda **kw: NumberWords(source="digits", target="en", **kw),
    "number_words_de": lambda **kw: NumberWords(source="en", target="de", **kw),
}


def make_task(name: str, **kwargs: Any) -> Task:
    """Build a task by name (profile blocks hold ``{"task": name, ...}``). The parallel corpus needs files:
    use ``ParallelCorpus.from_files`` / ``from_tsv``."""
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; valid: {', '.join(sorted(TASKS))}")
    try:
        return TASKS[name](**kwargs)
    except TypeError as e:  # an unknown keyword: say which task and what it got
        raise ValueError(f"task {name!r}: {e}") from None
