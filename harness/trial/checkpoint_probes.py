"""Readings of a model's attention per layer and head, for a trained checkpoint beside its init (issue 49).

``readings(model, backend, ids, which)`` probes the model (``model_probes.probe``, the trial's own tap) on each
probe sequence as its own batch, so that every reading has one sample per sequence (the firmness of an answer is
taken over probe batches), and adds the footnote's premise per head: the mean and variance of the q and k
components (``q_mean``, ``q_var``, ``k_mean``, ``k_var``). One row per (``which``, ``batch``, ``layer``, ``head``);
``layer`` is the attention call's index in the forward pass (one call a layer in a decoder).

The logit columns, each named by what it is (issue 55, item 4): ``logit_std`` is the std of the logits *after* the
model's own scale (``scale``, recorded per head: what the softmax sees, and what the footnote says comes back to 1);
``qk_std`` is the std of q.k before it (``logit_std / |scale|``), and ``qk_std_over_sqrt_dk`` that over sqrt(d_k):
the footnote's ratio, 1 when q's and k's components are independent with unit variance (it equals ``logit_std``
where the scale is 1/sqrt(d_k)). ``std_over_sqrt_dk`` is deprecated, kept because results.json's
``checkpoint_readings`` table carries it: it is ``logit_std / sqrt(d_k)``, the scaled std divided by sqrt(d_k) a
second time, and measures nothing the footnote names.

``layer_table(df)`` pools the batches: one row per (which, layer, head), the frame the report's heatmaps draw.
``sink_entropy_rho(df)``: Spearman's rho between sink mass and entropy across a model's heads (Q2's quantity).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch
from torch import Tensor, nn

from harness.trial import model_probes

#: the readings per head a checkpoint is read for, in the order the report draws them
READINGS = ("q_mean", "q_var", "k_mean", "k_var", "independence_ratio", "logit_std", "law_ratio", "std_over_sqrt_dk",
            "saturated_rows", "grad_mean_abs", "entropy_ratio", "sink_ratio", "head_distance", "group_head_distance",
            "scale", "qk_std", "qk_std_over_sqrt_dk", "sink_mass")
#: deprecated columns (issue 55): name -> what it is and what to read instead; kept for results.json's tables
DEPRECATED = {"std_over_sqrt_dk": "logit_std / sqrt(d_k): the scaled logits' std divided by sqrt(d_k) a second time; "
                                  "read logit_std (after the scale) or qk_std_over_sqrt_dk (q.k before it)"}
#: a head has collapsed when its entropy over the allowed keys is below this share of ln n (Q1's threshold)
COLLAPSED = 0.1
#: a head sinks when its mean weight on the first key (``sink_mass``, rows with 2 or more keys) exceeds this: the
#: threshold epsilon = 0.3 with which Gu et al. 2024 ("When attention sink emerges") count sink heads
SINK_MASS = 0.3


def qk_moments(call: model_probes.Call) -> list[dict[str, float]]:
    """Per head: the mean and variance of q's and k's components over positions, batch and components (k's
    head is the query head's kv group)."""
    if call.q is None or call.k is None:
        return [dict(q_mean=math.nan, q_var=math.nan, k_mean=math.nan, k_var=math.nan)] * call.weights.shape[1]
    q = call.q.float()
    k = model_probes._expand_kv(call.k.float(), q.shape[1])
    return [dict(q_mean=float(q[:, h].mean()), q_var=float(q[:, h].var()), k_mean=float(k[:, h].mean()),
                 k_var=float(k[:, h].var())) for h in range(q.shape[1])]


def first_key_mass(call: model_probes.Call) -> list[dict[str, float]]:
    """Per head: ``sink_mass``, the mean weight a row puts on its first allowed key (rows with 2 or more allowed
    keys), the quantity attention-sink papers threshold (``SINK_MASS``)."""
    w = call.weights.detach().float()
    B, H, L, S = w.shape
    allowed = call.allowed.expand(B, H, L, S)
    first = allowed.float().argmax(-1, keepdim=True)
    mass = w.masked_fill(~allowed, 0.0).gather(-1, first).squeeze(-1)               # (B, H, L)
    valid = allowed.sum(-1) >= 2
    return [dict(sink_mass=float(mass[:, h][valid[:, h]].mean()) if bool(valid[:, h].any()) else math.nan)
            for h in range(H)]


def head_extras(call: model_probes.Call) -> list[dict[str, float]]:
    """``qk_moments`` and ``first_key_mass`` of one call, one dict a head."""
    return [{**a, **b} for a, b in zip(qk_moments(call), first_key_mass(call))]


#: what ``grad_mean_abs`` differentiates (the ``grad_loss`` column): a causal model's own next-token loss through an
#: output head, or the probe's fixed random direction where there is none
OWN_LOSS, RANDOM_DIRECTION = "next-token loss", "random direction"


def next_token_loss(head: Tensor, ids: Tensor, used: dict | None = None):
    """The loss of predicting ``ids[:, 1:]`` from the model's output at every position: its last hidden states
    through ``head`` (vocabulary x width), or its logits where the output already is (the vocabulary's width): the
    model's own loss on its probe text, C3's L in |dL/dlogits|. None where the output covers fewer positions than
    the input (nanoGPT's logits of the last position alone), and ``used["own"]`` is then False."""
    def loss_of(out: Tensor) -> Tensor | None:
        full = out.dim() == 3 and out.shape[1] == ids.shape[1]
        if full and out.shape[-1] == head.shape[1]:
            logits = out[:, :-1].float() @ head.float().T
        elif full and out.shape[-1] == head.shape[0]:
            logits = out[:, :-1].float()
        else:
            if used is not None:
                used["own"] = False
            return None
        return nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1))
    return loss_of


def readings(model: nn.Module, backend: str, ids: Tensor, which: str, seed: int = 0,
             head: Tensor | None = None, head_name: str = "", patterns: list | None = None) -> pd.DataFrame:
    """``model_probes.probe`` on each row of ``ids`` (one batch a sequence; an encoder-decoder gets it as its
    decoder's input too), with ``head_extras`` and the unscaled q.k std (``qk_std``, ``qk_std_over_sqrt_dk``)
    beside it: one row per (batch, layer, head), tagged ``which``. ``head`` (vocabulary x width, named
    ``head_name``): |dL/dlogits| is taken for the next-token loss through it (``next_token_loss``), else for the
    fixed random direction; ``grad_loss`` says which. ``patterns`` (a list): each call's attention weights on the
    first probe sequence are appended to it, one (heads, queries, keys) float16 array a call, for
    ``figure_patterns``."""
    frames = []
    both = bool(getattr(getattr(model, "config", None), "is_encoder_decoder", False))
    used = {"own": head is not None}
    for b in range(ids.shape[0]):
        inputs = {"input_ids": ids[b:b + 1], **({"decoder_input_ids": ids[b:b + 1]} if both else {})}
        loss_of = next_token_loss(head, ids[b:b + 1], used) if head is not None else None
        extra = head_extras
        if patterns is not None and b == 0:
            def extra(call: model_probes.Call) -> list[dict[str, float]]:
                patterns.append(call.weights[0].detach().float().cpu().numpy().astype(np.float16))
                return head_extras(call)
        df = model_probes.probe(model, backend, inputs, seed=seed, extra=extra, loss_of=loss_of)
        frames.append(df.assign(batch=b))
    df = pd.concat(frames, ignore_index=True).rename(columns={"call": "layer"})
    df["std_over_sqrt_dk"] = df.logit_std / np.sqrt(df.d_k.astype(float))     # deprecated: see ``DEPRECATED``
    df["qk_std"] = df.logit_std / df.scale.astype(float).abs()
    df["qk_std_over_sqrt_dk"] = df.qk_std / np.sqrt(df.d_k.astype(float))
    grad_loss = f"{OWN_LOSS} ({head_name})" if used["own"] else RANDOM_DIRECTION + (
        " (the model's output covers its last position only)" if head is not None else "")
    return df.assign(which=which, grad_loss=grad_loss)


def layer_table(df: pd.DataFrame) -> pd.DataFrame:
    """The batches pooled: one row per (which, layer, head) of ``READINGS`` (the mean over probe batches; the
    independence ratio's geometric mean) and ``collapsed`` (entropy below ``COLLAPSED`` of ln n)."""
    keys = ["which", "layer", "module", "head", "kv_group", "d_k"]
    out = df.groupby(keys, sort=True)[list(READINGS)].mean().reset_index()
    geo = df.assign(l2=np.log2(df.independence_ratio)).groupby(keys, sort=True).l2.mean()
    out["independence_ratio"] = 2.0 ** geo.to_numpy()
    out["collapsed"] = out.entropy_ratio < COLLAPSED
    return out


def layer_log2(df: pd.DataFrame, column: str, which: str = "checkpoint") -> dict[int, np.ndarray]:
    """Layer -> log2 of ``column`` per probe batch (the mean of log2 over the layer's heads: their geometric mean)."""
    part = df[df.which == which].assign(l2=lambda d: np.log2(d[column].astype(float)))
    per = part.groupby(["layer", "batch"]).l2.mean()
    return {int(layer): per.xs(layer, level="layer").to_numpy() for layer in per.index.get_level_values(0).unique()}


def layer_log2_independence(df: pd.DataFrame, which: str = "checkpoint") -> dict[int, np.ndarray]:
    """Layer -> log2 of the independence ratio per probe batch (the mean of log2 over the layer's heads): Q3's
    samples for the footnote's independence half."""
    return layer_log2(df, "independence_ratio", which)


def layer_log2_logit_std(df: pd.DataFrame, which: str = "checkpoint") -> dict[int, np.ndarray]:
    """Layer -> log2 of the scaled logits' std per probe batch (the mean of log2 over the layer's heads): Q3's
    samples for the footnote's scale half, whose unit is 1 (log2 0)."""
    return layer_log2(df, "logit_std", which)


def head_log2(df: pd.DataFrame, column: str, which: str = "checkpoint") -> dict[int, dict[int, np.ndarray]]:
    """Layer -> head -> log2 of ``column`` per probe batch: each head on its own (issue 65), the parts of Q3's
    per-layer criteria, since a mean over heads lets opposite failures cancel."""
    part = df[df.which == which].assign(l2=lambda d: np.log2(d[column].astype(float)))
    out: dict[int, dict[int, np.ndarray]] = {}
    for (layer, head), g in part.sort_values("batch").groupby(["layer", "head"]):
        out.setdefault(int(layer), {})[int(head)] = g.l2.to_numpy()
    return out


def sink_entropy_rho(df: pd.DataFrame, which: str = "checkpoint") -> float:
    """Spearman's rho between the heads' sink mass and their entropy ratio (every layer's heads, batches pooled)."""
    t = layer_table(df[df.which == which])
    if len(t) < 3:
        return math.nan
    a, b = t.sink_ratio.rank().to_numpy(), t.entropy_ratio.rank().to_numpy()
    if a.std() == 0 or b.std() == 0:
        return math.nan
    return float(np.corrcoef(a, b)[0, 1])


# ------------------------------------------------------------------- words for the footnote's halves (issue 55)
#: the saturated share (rows whose largest weight is over 0.99) from which a layer is said to saturate: Q3's
#: reported ``checkpoint_not_saturated`` level, compared as printed (to 0.1%) so that the words follow the number
SATURATED_SHARE = 0.01
#: attention is said to be near uniform where its entropy is at least this share of ln n
NEAR_UNIFORM = 0.9


def geo_mean(values) -> float:
    """2 ** the mean of log2: how Q3's criteria pool heads and probe sequences (NaN for none)."""
    v = np.asarray(values, dtype=float)
    return float(2 ** np.log2(v).mean()) if v.size else math.nan


def half_state(band: float, value: float) -> str:
    """'holds' where |log2 value| <= ``band``, else 'below' or 'above'; 'not read' where it is not positive."""
    if not (np.isfinite(value) and value > 0):
        return "not read"
    l2 = math.log2(value)
    return "holds" if abs(l2) <= band else "below" if l2 < 0 else "above"


def band_words(state: str) -> str:
    """``half_state`` in words: 'within the band', 'below the band', 'above the band', 'not read'."""
    return {"holds": "within the band", "not read": "not read"}.get(state, f"{state} the band")


def scale_words(band: float, std: float, entropy: float, saturated: float) -> str:
    """The scale half at one point, each word following the number beside it: 'std 0.05, below the band, attention
    near uniform (entropy 0.99 of ln n)'; 'std 7, above the band, saturating (27.0% of rows over 0.99)'."""
    state = half_state(band, std)
    if state == "not read":
        return "std not read"
    text = f"std {std:.3g}, {band_words(state)}"
    if entropy >= NEAR_UNIFORM:
        text += f", attention near uniform (entropy {entropy:.2f} of ln n)"
    if saturated >= SATURATED_SHARE:
        text += f", saturating ({saturated:.1%} of rows over 0.99)"
    return text


def scale_note(df: pd.DataFrame) -> str:
    """The scale the logits were read after, the model's own (the ``scale`` column): 'logits read after the model's
    own scale: 0.1768 = 1/sqrt(32) in every layer', or per layer where they differ."""
    per = df[df.which == "checkpoint"].groupby("layer").agg(scale=("scale", "mean"), d_k=("d_k", "mean"))

    def one(s: float, d: float) -> str:
        if not np.isfinite(s):
            return "not read by the tap"
        if not (np.isfinite(d) and d > 0):
            return f"{s:.4g}"
        return f"{s:.4g} = 1/sqrt({d:g})" if math.isclose(abs(s), d ** -0.5, rel_tol=1e-3) \
            else f"{s:.4g} (1/sqrt(d_k) = {d ** -0.5:.4g} at d_k {d:g})"

    words = [one(float(s), float(d)) for s, d in zip(per.scale, per.d_k)]
    if len(set(words)) == 1:
        return f"logits read after the model's own scale: {words[0]} in every layer"
    return "logits read after the model's own scale: " + ", ".join(
        f"layer {int(layer)} {w}" for layer, w in zip(per.index, words))
