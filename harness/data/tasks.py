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
from dataclasses import dataclass, field, fields
from typing import Any, Callable

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
