"""Readings of a model's attention per layer and head, for a trained checkpoint beside its init (issue 49).

``readings(model, backend, ids, which)`` probes the model (``model_probes.probe``, the trial's own tap) on each
probe sequence as its own batch, so that every reading has one sample per sequence (the firmness of an answer is
taken over probe batches), and adds the footnote's premise per head: the mean and variance of the q and k
components (``q_mean``, ``q_var``, ``k_mean``, ``k_var``). One row per (``which``, ``batch``, ``layer``, ``head``);
``layer`` is the attention call's index in the forward pass (one call a layer in a decoder).

``layer_table(df)`` pools the batches: one row per (which, layer, head), the frame the report's heatmaps draw.
``sink_entropy_rho(df)``: Spearman's rho between sink mass and entropy across a model's heads (Q2's quantity).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch
from torch import Tensor, nn

from harness.measure import model_probes

#: the readings per head a checkpoint is read for, in the order the report draws them
READINGS = ("q_mean", "q_var", "k_mean", "k_var", "independence_ratio", "logit_std", "law_ratio", "std_over_sqrt_dk",
            "saturated_rows", "grad_mean_abs", "entropy_ratio", "sink_ratio", "head_distance", "group_head_distance")
#: a head has collapsed when its entropy over the allowed keys is below this share of ln n (Q1's threshold)
COLLAPSED = 0.1


def qk_moments(call: model_probes.Call) -> list[dict[str, float]]:
    """Per head: the mean and variance of q's and k's components over positions, batch and components (k's
    head is the query head's kv group)."""
    if call.q is None or call.k is None:
        return [dict(q_mean=math.nan, q_var=math.nan, k_mean=math.nan, k_var=math.nan)] * call.weights.shape[1]
    q = call.q.float()
    k = model_probes._expand_kv(call.k.float(), q.shape[1])
    return [dict(q_mean=float(q[:, h].mean()), q_var=float(q[:, h].var()), k_mean=float(k[:, h].mean()),
                 k_var=float(k[:, h].var())) for h in range(q.shape[1])]


#: what ``grad_mean_abs`` differentiates (the ``grad_loss`` column): a causal model's own next-token loss through an
#: output head, or the probe's fixed random direction where there is none
OWN_LOSS, RANDOM_DIRECTION = "next-token loss", "random direction"


def next_token_loss(head: Tensor, ids: Tensor):
    """The loss of predicting ``ids[:, 1:]`` from the model's last hidden states through ``head`` (vocabulary x
    width): the model's own loss on its probe text, C3's L in |dL/dlogits|."""
    def loss_of(out: Tensor) -> Tensor:
        logits = out[:, :-1].float() @ head.float().T
        return nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1))
    return loss_of


def readings(model: nn.Module, backend: str, ids: Tensor, which: str, seed: int = 0,
             head: Tensor | None = None, head_name: str = "") -> pd.DataFrame:
    """``model_probes.probe`` on each row of ``ids`` (one batch a sequence; an encoder-decoder gets it as its
    decoder's input too), with ``qk_moments`` and the logit std over d_k^1/2 beside it: one row per (batch, layer,
    head), tagged ``which``. ``head`` (vocabulary x width, named ``head_name``): |dL/dlogits| is taken for the
    next-token loss through it (``next_token_loss``), else for the fixed random direction; ``grad_loss`` says
    which."""
    frames = []
    both = bool(getattr(getattr(model, "config", None), "is_encoder_decoder", False))
    for b in range(ids.shape[0]):
        inputs = {"input_ids": ids[b:b + 1], **({"decoder_input_ids": ids[b:b + 1]} if both else {})}
        loss_of = next_token_loss(head, ids[b:b + 1]) if head is not None else None
        df = model_probes.probe(model, backend, inputs, seed=seed, extra=qk_moments, loss_of=loss_of)
        frames.append(df.assign(batch=b))
    df = pd.concat(frames, ignore_index=True).rename(columns={"call": "layer"})
    df["std_over_sqrt_dk"] = df.logit_std / np.sqrt(df.d_k.astype(float))
    grad_loss = f"{OWN_LOSS} ({head_name})" if head is not None else RANDOM_DIRECTION
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


def layer_log2_independence(df: pd.DataFrame, which: str = "checkpoint") -> dict[int, np.ndarray]:
    """Layer -> log2 of the independence ratio per probe batch (the mean of log2 over the layer's heads): Q3's
    samples."""
    part = df[df.which == which].assign(l2=lambda d: np.log2(d.independence_ratio))
    per = part.groupby(["layer", "batch"]).l2.mean()
    return {int(layer): per.xs(layer, level="layer").to_numpy() for layer in per.index.get_level_values(0).unique()}


def sink_entropy_rho(df: pd.DataFrame, which: str = "checkpoint") -> float:
    """Spearman's rho between the heads' sink mass and their entropy ratio (every layer's heads, batches pooled)."""
    t = layer_table(df[df.which == which])
    if len(t) < 3:
        return math.nan
    a, b = t.sink_ratio.rank().to_numpy(), t.entropy_ratio.rank().to_numpy()
    if a.std() == 0 or b.std() == 0:
        return math.nan
    return float(np.corrcoef(a, b)[0, 1])
