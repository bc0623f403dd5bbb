"""Measurement probes over the model's taps. Measurement only: numbers in, numbers out; no verdicts.

Tensor conventions are the taps' (model/taps.py): q, k ``(B, h, T|S, d_k)``, logits and weights ``(B, h, T, S)``.
A ``pad_mask`` is ``(B, T)`` with True at padded *query* positions (those rows are left out); masked keys
already carry zero weight. Per-head results are numpy arrays of shape ``(h,)``.

* C4 / Q3: ``qk_logit_variance``, ``component_variance``, ``qk_component_correlation``,
  ``qk_independence_ratio``.
* C3 / R2: ``softmax_grad_magnitude`` (mean |dL/dlogits|), ``softmax_jacobian_norm``, ``saturation_check``.
* C3 / C5 / Q2: ``attention_entropy``, ``max_attention_weight``, ``saturated_fraction``, ``sink_mass``.
* C2: ``path_lengths`` / ``path_length`` (float64 Jacobians), ``input_grad_vs_distance``.
* C1 / M0: ``forbidden_modules`` (recurrent / convolutional), ``dependency_matrix`` (causal structure),
  ``future_target_leak`` (a trained seq2seq decoder reading later target tokens), ``greedy_texts`` and
  ``corpus_bleu`` (sacrebleu).
"""
from __future__ import annotations

import copy
import inspect
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

import numpy as np
import torch
from torch import Tensor, nn

from model import ModelConfig, MultiHeadAttention, capture

from harness.measure import stats
from harness.data.tasks import Batch
from harness.train.loop import eval_mode, forward_batch, greedy_decode, task_loss


# ------------------------------------------------------------------------------------------ helpers
def _rows(weights: Tensor, pad_mask: Tensor | None) -> Tensor:
    """(B, h, T) bool: the query rows that count (not padded, with some weight)."""
    keep = weights.sum(-1) > 0
    if pad_mask is not None:
        keep = keep & ~pad_mask[:, None, :].to(weights.device)
    return keep


def _per_head_mean(values: Tensor, keep: Tensor) -> np.ndarray:
    """Mean over (B, T) of (B, h, T) values where keep, per head."""
    v = values.double() * keep
    return (v.sum((0, 2)) / keep.sum((0, 2)).clamp_min(1)).cpu().numpy()


def _valid_logits(logits: Tensor, mask: Tensor | None) -> Tensor:
    """The entries of ``logits`` where ``mask`` (broadcastable, True = counted) holds, flattened."""
    if mask is None:
        return logits.reshape(-1)
    return logits[mask.to(logits.device).expand_as(logits)]


# ------------------------------------------------------------------------------- variance argument
def qk_logit_variance(q: Tensor, k: Tensor, scale: float = 1.0, mask: Tensor | None = None,
                      per_head: bool = False) -> float | np.ndarray:
    """Var(scale * q.k) over all (query, key) pairs (C4: unscaled, ~d_k when components are iid with unit
    variance). ``mask`` (broadcastable to (B, h, T, S), True = counted) drops masked pairs."""
    logits = torch.matmul(q.double(), k.double().transpose(-2, -1)) * scale
    m = None if mask is None else mask.expand_as(logits)
    if per_head:
        return np.array([_valid_logits(logits[:, i], None if m is None else m[:, i]).var().item()
                         for i in range(logits.shape[1])])
    return float(_valid_logits(logits, m).var())


def qk_independence_ratio(q: Tensor, k: Tensor, per_head: bool = False) -> float | np.ndarray:
    """Var(q.k) over all (query, key) pairs divided by what the footnote's independence predicts from the
    components' own moments, sum_i (E[q_i^2] E[k_i^2] - E[q_i]^2 E[k_i]^2) (q independent of k, the terms
    q_i k_i uncorrelated across i). 1 when that premise holds, whatever the component variances; above 1 when
    q and k align (their covariances share directions, so the sum is coherent: Var(q.k) = tr(C_q C_k) grows
    past the diagonal sum). Q3 reads it through training. Averaged over heads unless ``per_head``."""
    qd, kd = q.double(), k.double()
    dots = torch.matmul(qd, kd.transpose(-2, -1))                                  # (B, h, T, S)
    h = q.shape[1]
    qs = qd.transpose(0, 1).reshape(h, -1, q.shape[-1])                            # (h, B*T, d)
    ks = kd.transpose(0, 1).reshape(h, -1, k.shape[-1])
    predicted = (qs.pow(2).mean(1) * ks.pow(2).mean(1) - qs.mean(1).pow(2) * ks.mean(1).pow(2)).sum(-1)
    ratio = (dots.transpose(0, 1).reshape(h, -1).var(-1) / predicted.clamp_min(1e-300)).cpu().numpy()
    return ratio if per_head else float(ratio.mean())


def logit_std(logits: Tensor, mask: Tensor | None = None) -> float:
    """Standard deviation of attention logits (the tap, after scaling): C3's mediator."""
    return float(_valid_logits(logits.double(), mask).std())


def component_variance(x: Tensor, per_head: bool = False) -> float | np.ndarray:
    """Per-component variance of q or k (B, h, T, d): the variance of each component over batch and positions,
    averaged over components (and heads unless ``per_head``). The footnote assumes 1; PyTorch's default Linear
    init gives about 1/3 (C4 (b))."""
    v = x.double().permute(1, 3, 0, 2).reshape(x.shape[1], x.shape[3], -1).var(-1)   # (h, d)
    return v.mean(-1).cpu().numpy() if per_head else float(v.mean())


def _corr_offdiag(x: Tensor) -> float:
    """Mean |correlation| between distinct components of x (n, d)."""
    c = torch.corrcoef(x.T)
    d = c.shape[0]
    off = c[~torch.eye(d, dtype=torch.bool, device=c.device)]
    return float(off.abs().nan_to_num().mean()) if d > 1 else 0.0


def qk_component_correlation(q: Tensor, k: Tensor) -> dict[str, float]:
    """How far q and k are from the footnote's independence (Q3), averaged over heads:

    * ``q_offdiag`` / ``k_offdiag``: mean |corr(q_i, q_j)| (i != j) over samples (batch x positions);
    * ``qk_same_index``: mean |corr(q_i, k_i)| at the same position (a token's query against its own key).

    0 for independent components (up to sampling noise ~ 1/sqrt(samples))."""
    B, h, T, d = q.shape
    qs = q.double().permute(1, 0, 2, 3).reshape(h, -1, d)
    ks = k.double().permute(1, 0, 2, 3).reshape(h, -1, k.shape[-1])
    out = {"q_offdiag": 0.0, "k_offdiag": 0.0, "qk_same_index": 0.0}
    for i in range(h):
        out["q_offdiag"] += _corr_offdiag(qs[i]) / h
        out["k_offdiag"] += _corr_offdiag(ks[i]) / h
        if q.shape[2] == k.shape[2]:
            qc, kc = qs[i] - qs[i].mean(0), ks[i] - ks[i].mean(0)
            r = (qc * kc).sum(0) / (qc.norm(dim=0) * kc.norm(dim=0)).clamp_min(1e-300)
            out["qk_same_index"] += float(r.abs().mean()) / h
        else:
            out["qk_same_index"] = math.nan
    return out


# ----------------------------------------------------------------------------------- softmax probes
def softmax_grad_magnitude(grad: Tensor, mask: Tensor | None = None) -> float:
    """Mean |dL/dlogits| (e.g. ``cache.grad("...logits")``) over unmasked entries: the gradient that reaches
    the scores through the softmax (C3: it shrinks as the softmax saturates)."""
    return float(_valid_logits(grad.double().abs(), mask).mean())


def softmax_jacobian_norm(weights: Tensor, pad_mask: Tensor | None = None) -> float:
    """Mean over query rows of the Frobenius norm of the softmax Jacobian J = diag(p) - p p^T, from the weights
    alone: ||J||_F^2 = sum p^2 - 2 sum p^3 + (sum p^2)^2. 0 for a one-hot row; sqrt(1/n - 1/n^2) for uniform."""
    p = weights.double()
    s2, s3 = (p ** 2).sum(-1), (p ** 3).sum(-1)
    norm = (s2 - 2 * s3 + s2 ** 2).clamp_min(0).sqrt()
    keep = _rows(weights, pad_mask)
    return float((norm * keep).sum() / keep.sum().clamp_min(1))


def attention_entropy(weights: Tensor, pad_mask: Tensor | None = None) -> np.ndarray:
    """Per head: -sum_j p_j ln p_j (nats) averaged over query rows (and batch). ln n for uniform over n keys,
    0 for one-hot (C3, C5, Q2)."""
    p = weights.double()
    ent = -(p * torch.log(p.clamp_min(1e-300))).sum(-1)
    return _per_head_mean(ent, _rows(weights, pad_mask))


def max_attention_weight(weights: Tensor, pad_mask: Tensor | None = None) -> np.ndarray:
    """Per head: the row maximum of the attention weights, averaged over query rows."""
    return _per_head_mean(weights.double().amax(-1), _rows(weights, pad_mask))


def saturated_fraction(weights: Tensor, thr: float = 0.99, pad_mask: Tensor | None = None) -> np.ndarray:
    """Per head: fraction of query rows whose max weight exceeds ``thr`` (C3: saturated rows)."""
    if not 0.0 < thr < 1.0:
        raise ValueError(f"thr must be in (0, 1), got {thr!r}")
    return _per_head_mean((weights.amax(-1) > thr).double(), _rows(weights, pad_mask))


def sink_mass(weights: Tensor, pad_mask: Tensor | None = None, position: int = 0) -> np.ndarray:
    """Per head: mean attention that query rows put on key ``position`` (0: the first token; Gu et al. 2024's
    importance of that position, Q2)."""
    return _per_head_mean(weights.double()[..., position], _rows(weights, pad_mask))


# -------------------------------------------------------------------------------- taps on a batch
def run_with_taps(model: nn.Module, batch: Batch, patterns: Sequence[str], n_classes: int | None = None,
                  backward: bool = False):
    """Forward ``batch`` through ``model`` with taps ``patterns`` captured (eval mode: no dropout). With
    ``backward=True`` the task loss (needs ``n_classes`` = task.tgt_vocab) is back-propagated, so
    ``cache.grad(name)`` holds dL/d(tap); parameter gradients are cleared afterwards.
    Returns (cache, logits)."""
    was = model.training
    model.eval()
    try:
        with capture(model, *patterns, retain_grad=backward) as cache:
            with torch.set_grad_enabled(backward):
                logits = forward_batch(model, batch)
                if backward:
                    if n_classes is None:
                        raise ValueError("run_with_taps(backward=True) needs n_classes (task.tgt_vocab)")
                    task_loss(logits, batch.targets, n_classes).backward()
        if backward:
            model.zero_grad(set_to_none=True)
        return cache, logits.detach()
    finally:
        model.train(was)


# ---------------------------------------------------------------------------------- path length (C2)
# A dependency is "present" when the float64 Jacobian block |d y_i / d x_{i-d}| exceeds PATH_TOL. Why this
# threshold: an absent path is *exactly* zero in any precision (no edge in the graph, a causal pad, or a
# masked attention weight that is exactly 0), while a present one decays geometrically with depth/steps
# and can underflow float32 (deep convs, LSTMs over dozens of steps measured exactly 0.0 there). float64 keeps
# it: the smallest present value we measured for d <= 128 is ~1e-61 (kernel-3 conv, 64 layers, d=128; LSTM at
# d=128: ~1e-28), far above 1e-200, and float64 rounding never turns an exact zero into a nonzero.
PATH_TOL = 1e-200


def _supports_window(model: nn.Module) -> bool:
    return "window" in inspect.signature(model.features).parameters


def _float64_copy(model: nn.Module) -> nn.Module:
    m = copy.deepcopy(model).double()
    m.eval()
    return m


def _input_states(model: nn.Module, seq_len: int, batch: int, seed: int) -> Tensor:
    g = torch.Generator().manual_seed(seed)
    vocab = model.embedding.tok.num_embeddings
    x = torch.randint(0, vocab, (batch, seq_len), generator=g)
    with torch.no_grad():
        return model.embed(x).double()


def dependency_magnitude(model: nn.Module, h: Tensor, i: int, n_layers: int | None = None,
                         window: int | None = None, n_proj: int = 4, seed: int = 0) -> np.ndarray:
    """|d y_i / d h_j| for every input position j: the norm over ``n_proj`` random projections of output i
    (a random projection of a nonzero Jacobian block is nonzero with probability 1), averaged over the batch.
    ``model`` must be float64 (``features(h, n_layers)``; ``window`` for the recurrent tagger)."""
    kw = {"window": window} if window is not None else {}
    return output_dependency(lambda x: model.features(x, n_layers=n_layers, **kw), h, i, n_proj, seed)


def output_dependency(fn: Callable[[Tensor], Tensor], h: Tensor, i: int, n_proj: int = 4, seed: int = 0
                      ) -> np.ndarray:
    """|d fn(h)_i / d h_j| for every input position j, for any position-wise map ``fn``: (B, T, d) -> (B, T', d'):
    the norm over ``n_proj`` random projections of output i, averaged over the batch (float64 ``h`` keeps a
    structural zero exactly zero and a present dependency far from it: see PATH_TOL)."""
    g = torch.Generator().manual_seed(seed)
    h = h.detach().clone().requires_grad_(True)
    y = fn(h)[:, i]                                                          # (B, d')
    r = torch.randn(n_proj, y.shape[-1], generator=g, dtype=y.dtype)
    sq = torch.zeros(h.shape[:2], dtype=torch.float64)
    for p in range(n_proj):
        (gr,) = torch.autograd.grad((y * r[p]).sum(), h, retain_graph=p + 1 < n_proj)
        sq += gr.pow(2).sum(-1).double()
    return sq.sqrt().mean(0).numpy()


def dependency_matrix(fn: Callable[[Tensor], Tensor], h: Tensor, n_proj: int = 4, seed: int = 0) -> np.ndarray:
    """(T', T) matrix of ``output_dependency`` for every output position i (rows) and input position j
    (columns). M0: a causal stack has exact zeros above the diagonal."""
    n_out = fn(h.detach()).shape[1]
    return np.stack([output_dependency(fn, h, i, n_proj, seed) for i in range(n_out)])


def path_lengths(model: nn.Module, ds: Iterable[int], max_layers: int | None = None, seq_len: int | None = None,
                 batch: int = 1, seed: int = 0, tol: float = PATH_TOL, n_proj: int = 1) -> dict[int, int | None]:
    """C2's path length at each distance d in ``ds``, measured: the smallest depth n (layers of
    ``features(h, n)``) at which output i = seq_len-1 depends on input i-d, from float64 autograd Jacobians
    (``tol``: see PATH_TOL). Depths are searched in order (no monotonicity assumed); one Jacobian row per depth
    serves every d. For a recurrent tagger (``features(..., window=w)``: y_i from a zero state over inputs
    i-w+1..i) it is the number of sequential recurrent steps from x_{i-d} to y_i: the smallest window w with a
    dependency, minus one (= d for an LSTM), found by bisection over w (a window contains every smaller one).
    None where no depth up to ``max_layers`` (default: all the model's layers / windows up to seq_len) connects
    the two positions."""
    ds = list(ds)
    if not ds or any(not isinstance(d, int) or isinstance(d, bool) or d < 1 for d in ds):
        raise ValueError(f"ds must be integers >= 1, got {ds!r}")
    seq_len = max(ds) + 1 if seq_len is None else seq_len
    if seq_len < max(ds) + 1:
        raise ValueError(f"seq_len ({seq_len}) must be >= the largest d + 1 ({max(ds) + 1})")
    m = _float64_copy(model)
    h = _input_states(m, seq_len, batch, seed)
    i = seq_len - 1
    out: dict[int, int | None] = {d: None for d in ds}
    if _supports_window(m):
        limit = seq_len if max_layers is None else min(max_layers + 1, seq_len)
        mags: dict[int, np.ndarray] = {}

        def present(w: int, d: int) -> bool:
            if w not in mags:
                mags[w] = dependency_magnitude(m, h, i, window=w, n_proj=n_proj, seed=seed)
            return bool(mags[w][i - d] > tol)

        for d in out:
            if not present(limit, d):
                continue
            lo, hi = 0, limit          # invariant: absent at lo (window 0 sees nothing), measured present at hi
            while hi - lo > 1:
                mid = (lo + hi) // 2
                lo, hi = (lo, mid) if present(mid, d) else (mid, hi)
            out[d] = hi - 1
        return out
    total = len(m.layers) if hasattr(m, "layers") else _n_layers(m)
    limit = total if max_layers is None else min(max_layers, total)
    remaining = set(out)
    for n in range(1, limit + 1):
        if not remaining:
            break
        mag = dependency_magnitude(m, h, i, n_layers=n, n_proj=n_proj, seed=seed)
        for d in sorted(remaining):
            if mag[i - d] > tol:
                out[d] = n
                remaining.discard(d)
    return out


def path_length(model: nn.Module, d: int, max_layers: int | None = None, **kw: Any) -> int | None:
    """``path_lengths(model, [d], ...)[d]``: the measured path length at one distance."""
    return path_lengths(model, [d], max_layers, **kw)[d]


def _n_layers(model: nn.Module) -> int:
    for name in ("encoder", "decoder"):
        stack = getattr(model, name, None)
        if stack is not None and hasattr(stack, "layers"):
            return len(stack.layers)
    raise ValueError(f"cannot tell how many layers {type(model).__name__} has; pass max_layers")


def input_grad_vs_distance(model: nn.Module, ds: Iterable[int], seq_len: int | None = None, batch: int = 8,
                           seed: int = 0, n_proj: int = 4) -> dict[int, float]:
    """C2 (b): |d y_t / d x_{t-d}| for each distance d (t = seq_len-1, the full model, float64), averaged over
    ``batch`` random inputs and ``n_proj`` random output projections. Measured at whatever state the model is
    in (at init for C2)."""
    ds = sorted(set(int(d) for d in ds))
    if not ds or ds[0] < 0:
        raise ValueError(f"ds must be non-negative distances, got {ds}")
    seq_len = ds[-1] + 1 if seq_len is None else seq_len
    if seq_len < ds[-1] + 1:
        raise ValueError(f"seq_len ({seq_len}) must exceed the largest distance ({ds[-1]})")
    m = _float64_copy(model)
    h = _input_states(m, seq_len, batch, seed)
    mag = dependency_magnitude(m, h, seq_len - 1, n_proj=n_proj, seed=seed)
    return {d: float(mag[seq_len - 1 - d]) for d in ds}


# ------------------------------------------------------------------------------ saturation check (R2)
ScoreFactory = Callable[[int, torch.Generator], Callable[[Tensor, Tensor], Tensor]]


@dataclass
class SaturationReport:
    """``measurements``: one row per (dim, seed) with logit_std, entropy, entropy_ratio (entropy / ln n_keys),
    grad_mean_abs (mean |dL/dlogits|), jacobian_norm, saturated_fraction, max_weight. ``slopes``: log-log
    slope (``stats.loglog_slope``) of logit_std, grad_mean_abs and jacobian_norm against dim, and the
    slope of entropy_ratio against ln dim. ``logit_trend``: "grows" if the logit-std slope CI lies above
    +min_slope, "shrinks" if below -min_slope, else "flat". The verdict is the caller's."""
    measurements: Any                      # pandas.DataFrame
    slopes: dict[str, stats.SlopeFit]
    min_slope: float
    n_keys: int
    logit_trend: str = "flat"
    trends: dict[str, str] = field(default_factory=dict)


def _trend(fit: stats.SlopeFit, min_slope: float) -> str:
    if fit.lo > min_slope:
        return "grows"
    if fit.hi < -min_slope:
        return "shrinks"
    return "flat"


def saturation_check(score_fn: ScoreFactory, dims: Sequence[int], n_keys: int = 64, n_queries: int = 32,
                     batch: int = 16, seeds: Sequence[int] = (0, 1, 2), min_slope: float = 0.1,
                     sample_qk: Callable[[int, torch.Generator], tuple[Tensor, Tensor]] | None = None
                     ) -> SaturationReport:
    """R2's diagnostic for any compatibility function. For each dim and seed: ``score = score_fn(dim, gen)``
    builds the function (its parameters seeded by ``gen``); q (batch, n_queries, dim) and k (batch, n_keys, dim)
    are iid N(0, 1) (or ``sample_qk(dim, gen)``); logits = score(q, k) (batch, n_queries, n_keys).
    The softmax gradient is taken for a loss on the attention output, L = sum(softmax(logits) V * G) with
    random V, G ~ N(0, 1): dL/dlogits passes through the softmax Jacobian, so it vanishes when the softmax
    saturates (a loss on the weights themselves would not show that).

    ``min_slope``: the log-log slope magnitude below which a trend counts as flat (0.1: the std changes by
    less than 7% per doubling of dim); callers state it in their criterion."""
    import pandas as pd

    dims = [int(x) for x in dims]
    if len(dims) < 2 or min(dims) < 1:
        raise ValueError(f"dims needs at least two positive dimensions, got {dims}")
    if not seeds:
        raise ValueError("seeds must not be empty")
    if len(dims) * len(seeds) < 3:
        raise ValueError("need at least 3 (dim, seed) points for a slope CI")
    rows = []
    for dim in dims:
        for seed in seeds:
            g = torch.Generator().manual_seed(int(seed) * 100_003 + dim)
            fn = score_fn(dim, g)
            if sample_qk is None:
                q = torch.randn(batch, n_queries, dim, generator=g)
                k = torch.randn(batch, n_keys, dim, generator=g)
            else:
                q, k = sample_qk(dim, g)
            v = torch.randn(batch, k.shape[1], 8, generator=g)
            up = torch.randn(batch, q.shape[1], 8, generator=g)
            logits = fn(q, k)
            if logits.shape != (q.shape[0], q.shape[1], k.shape[1]):
                raise ValueError(f"score_fn(dim={dim}) returned logits of shape {tuple(logits.shape)}, expected "
                                 f"{(q.shape[0], q.shape[1], k.shape[1])}")
            logits = logits.detach().double().requires_grad_(True)
            w = torch.softmax(logits, -1)
            (grad,) = torch.autograd.grad((w @ v.double() * up.double()).sum(), logits)
            w = w.detach().unsqueeze(1)                                     # (B, 1, T, S): one "head"
            rows.append({
                "dim": dim, "seed": int(seed),
                "logit_std": float(logits.detach().std()),
                "entropy": float(attention_entropy(w)[0]),
                "entropy_ratio": float(attention_entropy(w)[0]) / math.log(k.shape[1]),
                "grad_mean_abs": float(grad.abs().mean()),
                "jacobian_norm": softmax_jacobian_norm(w),
                "saturated_fraction": float(saturated_fraction(w)[0]),
                "max_weight": float(max_attention_weight(w)[0]),
            })
    df = pd.DataFrame(rows)
    slopes: dict[str, stats.SlopeFit] = {}
    for col in ("logit_std", "grad_mean_abs", "jacobian_norm"):
        y = df[col].to_numpy()
        if np.all(y > 0):
            slopes[col] = stats.loglog_slope(df["dim"], y)
    slopes["entropy_ratio"] = stats.linear_slope(np.log(df["dim"].to_numpy(float)), df["entropy_ratio"].to_numpy())
    trends = {name: _trend(fit, min_slope) for name, fit in slopes.items()}
    return SaturationReport(df, slopes, min_slope, n_keys, trends.get("logit_std", "flat"), trends)


def dot_score(scale_exponent: float = 0.5) -> ScoreFactory:
    """A parameter-free score for ``saturation_check``: q.k * dim^-alpha (alpha 0: unscaled, 0.5: the paper,
    1: scaled by 1/d)."""
    def factory(dim: int, generator: torch.Generator) -> Callable[[Tensor, Tensor], Tensor]:
        return lambda q, k: (q @ k.transpose(-2, -1)) * dim ** -scale_exponent
    return factory



def attention_score(make_cfg: Callable[[int], ModelConfig]) -> ScoreFactory:
    """A score for ``saturation_check`` that IS the model's compatibility function: for each dim, a one-head
    ``MultiHeadAttention(make_cfg(dim))`` (d_model = d_k = dim; its own init for v_a and the QK-norm gain, seeded
    from the check's generator) with W^Q, W^K set to the identity, so the check's q and k enter the score
    unchanged; the logits are read from its ``logits`` tap. Everything the module does to a score runs (scale,
    scale_exponent, additive, qk_norm and any active fault from ``model.faults``): R2 applies the check to
    the model's default attention, not to a re-implementation of it."""
    def factory(dim: int, generator: torch.Generator) -> Callable[[Tensor, Tensor], Tensor]:
        cfg = make_cfg(dim)
        if (cfg.n_heads, cfg.d_model, cfg.d_k) != (1, dim, dim):
            raise ValueError(f"attention_score: make_cfg({dim}) must give n_heads=1 and d_model=d_k={dim}, got "
                             f"n_heads={cfg.n_heads}, d_model={cfg.d_model}, d_k={cfg.d_k}")
        fork = int(torch.randint(0, 2**31 - 1, (1,), generator=generator))
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(fork)
            mha = MultiHeadAttention(cfg).eval()
        with torch.no_grad():
            for proj in (mha.q_proj, mha.k_proj):
                proj.weight.copy_(torch.eye(dim))
                proj.bias.zero_()

        def score(q: Tensor, k: Tensor) -> Tensor:
            with torch.no_grad(), capture(mha, "logits") as cache:
                mha(q, memory=k)
            return cache["logits"][:, 0]
        return score
    return factory

# ---------------------------------------------------------------------------- structure and BLEU (C1, M0)
# What "no recurrence, no convolution" (C1) rules out: every recurrent layer or cell and every convolution.
RECURRENT_OR_CONV: tuple[type, ...] = (nn.RNNBase, nn.RNNCellBase, nn.modules.conv._ConvNd)


def forbidden_modules(model: nn.Module, forbidden: tuple[type, ...] = RECURRENT_OR_CONV) -> list[tuple[str, str]]:
    """(name, type) of every module of ``model`` (walking ``named_modules()``) that is an instance of
    ``forbidden``; C1 (a) expects none in the Transformer."""
    return [(name or "<root>", type(m).__name__) for name, m in model.named_modules() if isinstance(m, forbidden)]


#: float32 rounding of logits recomputed from the same causal prefix is ~1e-7 of their scale (a kernel may reorder
#: a reduction when masked keys change); a decoder that reads a later target token moves them by orders more
FUTURE_LEAK_TOL = 1e-5


def future_target_leak(model: nn.Module, batch: Batch, n: int = 16, seed: int = 0,
                       device: torch.device | str | None = None) -> tuple[float, int | None]:
    """C1: does a trained seq2seq model's prediction at target position t read target tokens after t? For every t,
    every token of ``tgt_in`` after t is redrawn (from the batch's own target tokens) and the teacher-forced logits
    at positions <= t are recomputed. Returns (the largest change over every t, relative to the largest |logit|;
    the first t where it exceeds ``FUTURE_LEAK_TOL``, None if none). A causal decoder gives ~0: its teacher-forced
    loss then scores what greedy decoding can produce; a decoder that sees the next target gets a low loss by
    copying it."""
    device = device or next(model.parameters()).device
    b = batch[:n].to(device)
    g = torch.Generator().manual_seed(seed)
    pool = b.tgt_in[:, 1:].reshape(-1).cpu()
    worst, first = 0.0, None
    with eval_mode(model):
        base = forward_batch(model, b)
        scale = float(base.abs().max()) or 1.0
        for t in range(b.tgt_in.shape[1] - 1):
            redrawn = b.tgt_in.clone()
            later = redrawn[:, t + 1:]
            later.copy_(pool[torch.randint(len(pool), later.shape, generator=g)].to(device))
            out = model(b.src, redrawn, src_pad_mask=b.src_pad_mask)
            change = float((out[:, : t + 1] - base[:, : t + 1]).abs().max()) / scale
            worst = max(worst, change)
            if first is None and change > FUTURE_LEAK_TOL:
                first = t
    return worst, first


def greedy_texts(model: nn.Module, batch: Batch, to_text: Callable[[Tensor], str], max_len: int,
                 device: torch.device | str | None = None, chunk: int = 512) -> list[str]:
    """Greedy translations of ``batch.src`` as text (``to_text(ids)`` of each decoded row, ids up to EOS:
    e.g. ``task.text_tokens`` or ``task.detokenize``), in chunks of ``chunk`` rows, eval mode."""
    device = device or next(model.parameters()).device
    texts: list[str] = []
    with eval_mode(model):
        for a in range(0, len(batch), chunk):
            b = batch[a: a + chunk].to(device)
            out = greedy_decode(model, b.src, b.src_pad_mask, max_len).cpu()
            texts.extend(to_text(row) for row in out)
    return texts


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[str], tokenize: str = "13a") -> float:
    """Corpus BLEU (0-100) with sacrebleu, one reference per hypothesis. ``tokenize="none"`` scores
    already-tokenised text split on spaces (C1's number words: German morphemes)."""
    import sacrebleu

    if len(hypotheses) != len(references) or not hypotheses:
        raise ValueError(f"need as many hypotheses as references (and at least one), got {len(hypotheses)} "
                         f"and {len(references)}")
    return float(sacrebleu.corpus_bleu(list(hypotheses), [list(references)], tokenize=tokenize).score)
