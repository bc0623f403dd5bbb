"""Effective resolution of attention, measured as linear decodability (C5, Q2).

The note's cost of attention is "reduced effective resolution due to averaging attention-weighted positions".
We measure resolution directly: how well the *token* at each attended position can be read back, by a linear
probe, from what attention delivered (the attention output at the query). If attention averages several
positions, their value vectors are superposed in one output vector with weights that vary from example to
example; a linear readout of one of them then suffers crosstalk from the others, and its decodability falls.
If the positions are kept apart (sharp heads, or heads that mix them in different proportions), each token
stays linearly recoverable. So decodability per attended position counts how many of the attended positions
the output still *resolves*, which is what "effective resolution" means; entropy only says how spread the
weights are, not whether the information survived.

* ``linear_probe_accuracy``: a closed-form ridge-regression probe onto one-hot classes (standardised features,
  bias, argmax). Closed form: deterministic, no learning-rate or epoch choice, fast.
* ``decodability``: that accuracy corrected for the base rate (the majority class of the fit split): 0 = no
  better than guessing the commonest token, 1 = every token read back. A target that never varies carries
  nothing to resolve and scores 0.
* ``positional_resolution`` (C5): decodability of the token at each of M task-defined attended positions
  (targets ``(N, M)``) from the attention output; the mean over positions is the resolution, M times it the
  number of positions resolved.
* ``slot_weights``, ``slot_shares``, ``top_slot_share``, ``distinct_majority_slots`` (C5): where the query's
  attention went among the M slots: each head's weight on each slot, its share of the slot mass, the share its
  most-attended slot holds (1/M: an even average, 1: one slot selected), and how many different slots receive
  most of some head's slot mass.
* ``head_resolution`` (Q2): per head, decodability of the token at the head's own most-attended key from that
  head's output, for models where no task says which positions should be attended.

Probes are fitted on one split and scored on another (``fit`` / ``eval`` arguments), so a probe cannot
memorise its test examples.
"""
from __future__ import annotations

import numpy as np
import torch
from torch import Tensor


def _as_2d(x: Tensor | np.ndarray, name: str) -> Tensor:
    t = torch.as_tensor(x).detach().to("cpu", torch.float64)
    if t.dim() != 2:
        raise ValueError(f"{name} must be (N, D) features, got shape {tuple(t.shape)}")
    if not torch.isfinite(t).all():
        raise ValueError(f"{name} contains NaN or inf")
    return t


def _as_labels(y: Tensor | np.ndarray, n: int, n_classes: int, name: str) -> Tensor:
    t = torch.as_tensor(y).detach().to("cpu", torch.int64).reshape(-1)
    if t.numel() != n:
        raise ValueError(f"{name} has {t.numel()} labels for {n} feature rows")
    if t.numel() and (t.min() < 0 or t.max() >= n_classes):
        raise ValueError(f"{name} must lie in [0, {n_classes}), got [{int(t.min())}, {int(t.max())}]")
    return t


def linear_probe_accuracy(x_fit: Tensor, y_fit: Tensor, x_eval: Tensor, y_eval: Tensor, n_classes: int,
                          ridge: float = 1e-3) -> float:
    """Accuracy on (x_eval, y_eval) of a linear classifier fitted on (x_fit, y_fit): ridge regression of the
    one-hot labels on standardised features plus a bias, (X'X + ridge N I) W = X'Y, prediction argmax."""
    if not isinstance(n_classes, int) or n_classes < 2:
        raise ValueError(f"n_classes must be an integer >= 2, got {n_classes!r}")
    if not ridge > 0:
        raise ValueError(f"ridge must be > 0, got {ridge!r}")
    xf, xe = _as_2d(x_fit, "x_fit"), _as_2d(x_eval, "x_eval")
    if xf.shape[1] != xe.shape[1]:
        raise ValueError(f"x_fit and x_eval differ in width: {xf.shape[1]} vs {xe.shape[1]}")
    yf = _as_labels(y_fit, xf.shape[0], n_classes, "y_fit")
    ye = _as_labels(y_eval, xe.shape[0], n_classes, "y_eval")
    mu, sd = xf.mean(0), xf.std(0).clamp_min(1e-8)
    design = lambda x: torch.cat([(x - mu) / sd, torch.ones(x.shape[0], 1, dtype=x.dtype)], 1)  # noqa: E731
    a = design(xf)
    onehot = torch.nn.functional.one_hot(yf, n_classes).to(torch.float64)
    gram = a.T @ a + ridge * a.shape[0] * torch.eye(a.shape[1], dtype=torch.float64)
    w = torch.linalg.solve(gram, a.T @ onehot)
    return float((design(xe) @ w).argmax(1).eq(ye).double().mean())


def decodability(x_fit: Tensor, y_fit: Tensor, x_eval: Tensor, y_eval: Tensor, n_classes: int,
                 ridge: float = 1e-3) -> float:
    """Base-rate-corrected probe accuracy (acc - base) / (1 - base), base = accuracy of always answering the
    fit split's commonest label. 1: every label decoded; 0: no better than the base rate (also when the
    label never varies, base = 1: nothing to resolve). Can dip slightly below 0 by chance."""
    yf = torch.as_tensor(y_fit).reshape(-1).to(torch.int64)
    ye = torch.as_tensor(y_eval).reshape(-1).to(torch.int64)
    mode = int(torch.bincount(yf, minlength=n_classes).argmax()) if yf.numel() else 0
    base = float(ye.eq(mode).double().mean()) if ye.numel() else 1.0
    if base >= 1.0 - 1e-12:
        return 0.0
    acc = linear_probe_accuracy(x_fit, y_fit, x_eval, y_eval, n_classes, ridge)
    return (acc - base) / (1.0 - base)


def positional_resolution(out_fit: Tensor, targets_fit: Tensor, out_eval: Tensor, targets_eval: Tensor,
                          n_classes: int, ridge: float = 1e-3) -> np.ndarray:
    """C5: per attended position j, the decodability of its token (``targets[:, j]``, (N, M)) from the
    attention output at the query (``out``: (N, D), e.g. every head's output concatenated). Returns (M,);
    its mean is the fraction of the M positions resolved."""
    tf, te = torch.as_tensor(targets_fit), torch.as_tensor(targets_eval)
    if tf.dim() != 2 or te.dim() != 2 or tf.shape[1] != te.shape[1]:
        raise ValueError(f"targets must be (N, M) with the same M, got {tuple(tf.shape)} and {tuple(te.shape)}")
    return np.array([decodability(out_fit, tf[:, j], out_eval, te[:, j], n_classes, ridge)
                     for j in range(tf.shape[1])])


def top_attended_tokens(weights: Tensor, tokens: Tensor) -> Tensor:
    """The token at each query's most-attended key, per head: weights (N, h, S), tokens (N, S) -> (N, h)."""
    if weights.dim() != 3 or tokens.dim() != 2 or weights.shape[0] != tokens.shape[0] \
            or weights.shape[2] != tokens.shape[1]:
        raise ValueError(f"weights must be (N, h, S) and tokens (N, S), got {tuple(weights.shape)} and "
                         f"{tuple(tokens.shape)}")
    idx = weights.argmax(-1)                                              # (N, h)
    return tokens.gather(1, idx)


def head_resolution(out_fit: Tensor, weights_fit: Tensor, tokens_fit: Tensor, out_eval: Tensor,
                    weights_eval: Tensor, tokens_eval: Tensor, n_classes: int, ridge: float = 1e-3) -> np.ndarray:
    """Q2: per head, the decodability of the token at the head's most-attended key from the head's own output.
    ``out``: (N, h, d_v) head outputs at N query rows, ``weights``: (N, h, S) those rows' attention weights,
    ``tokens``: (N, S) the key tokens (ids in [0, n_classes)). Returns (h,). A head that always attends one
    fixed token (a sink on BOS) resolves nothing and scores 0."""
    if out_fit.dim() != 3 or out_eval.dim() != 3:
        raise ValueError(f"out must be (N, h, d_v), got {tuple(out_fit.shape)} and {tuple(out_eval.shape)}")
    yf, ye = top_attended_tokens(weights_fit, tokens_fit), top_attended_tokens(weights_eval, tokens_eval)
    return np.array([decodability(out_fit[:, i], yf[:, i], out_eval[:, i], ye[:, i], n_classes, ridge)
                     for i in range(out_fit.shape[1])])


def slot_weights(weights: Tensor, slots: Tensor) -> Tensor:
    """The query rows' weight on each slot, per head: weights (N, h, S), slots (N, M) positions -> (N, h, M)."""
    return weights.gather(2, slots[:, None, :].expand(-1, weights.shape[1], -1))


def slot_shares(weights: Tensor, slots: Tensor) -> Tensor:
    """(h, M): per head, the share of the query's slot mass that each slot j receives (slot j: column j of
    ``slots``), mean over examples. ``weights`` (N, h, S), ``slots`` (N, M)."""
    on = slot_weights(weights, slots)
    return (on / on.sum(-1, keepdim=True).clamp_min(1e-12)).mean(0)


def top_slot_share(weights: Tensor, slots: Tensor) -> Tensor:
    """(h,): per head, the share of the query's slot mass that its most-attended slot holds, mean over examples.
    1/M: the slots weighted evenly (a head that averages them); 1: one slot only (a head that selects)."""
    on = slot_weights(weights, slots)
    return (on.max(-1).values / on.sum(-1).clamp_min(1e-12)).mean(0)


def distinct_majority_slots(shares: Tensor | np.ndarray, majority: float = 0.5) -> int:
    """The number of different slots that receive most (> ``majority``) of some head's slot mass, from
    ``slot_shares`` (h, M). A head that splits its mass (no slot above ``majority``) holds none; two heads on one
    slot count it once."""
    held = torch.as_tensor(shares).max(-1)
    return len({int(j) for v, j in zip(held.values, held.indices) if float(v) > majority})
