"""A user's model on trial (issue 40): its own attention tapped, measured per (call, head), and swept over a family.

The trial never edits the model. It taps every attention call of one forward pass in one of two ways, chosen at
pre-flight (``preflight``) as the first that captures a call *and* leaves the output as it was:

* ``transformers``: one recording function registered in both transformers' ``AttentionInterface`` and its
  ``AttentionMaskInterface`` and switched on with ``set_attn_implementation``. It calls the model's own
  ``eager_attention_forward`` (from the model's modelling file), so soft-capping, position biases and GQA stay the
  model's, and it sees q and k after RoPE and QK-norm and the scaling the model applies. Registered in the attention
  interface only, a model gets *no mask* (Llama then attends to future tokens): the mask interface is registered
  too, and the pre-flight compares the tapped output with the default either way.
* ``functions``: a ``TorchFunctionMode`` over the forward. ``F.scaled_dot_product_attention`` is replaced by the
  same operation written out (so its weights can be read); a softmax over the last dim of a 4-D tensor is recorded
  with its input as the logits, and q, k as the operands of the last 4-D matmul whose product has the logits' shape
  (GPT-Neo, or a user's module that writes attention out). The scaling is then read off logits / (q k^T).

``probe(model, inputs)`` runs one tapped forward and backward (the loss: the model's first output against a fixed
random direction, so every layer's softmax gets a gradient) and returns one row per (call, head) of ``COLUMNS``.
``family(build, key, values, ...)`` probes a model family at each value of a swept dimension and seed, for the
log-log slopes of the claims (C4: logit std against head_dim; R2: against width).

What a tap cannot see is NaN in the frame, and the claim records that criterion as unmeasured, with the reason.
"""
from __future__ import annotations

import gc
import inspect
import math
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.overrides import TorchFunctionMode

from harness.trial.kernel import causal_allowed
from harness.measure.probes import logit_std as pooled_std, qk_independence_ratio

TAP_NAME = "attention_claims_tap"
BACKENDS = ("transformers", "functions")
SATURATED = 0.99            # a row is saturated when its largest weight exceeds this (C3's saturated rows)
PREFLIGHT_RTOL = 1e-4       # tapped and default outputs agree within this, relative to the output's largest entry
COLUMNS = ("call", "module", "head", "kv_group", "d_k", "scale", "q_rms", "k_rms", "logit_std", "row_logit_std",
           "predicted_std", "law_ratio", "independence_ratio", "entropy_ratio", "saturated_rows", "grad_mean_abs",
           "sink_ratio", "head_distance", "group_head_distance", "future_weight_max", "causal", "softcap", "rows")


class TapError(RuntimeError):
    """The model's attention cannot be tapped as given; one line naming what was tried."""


@dataclass
class Call:
    """One attention call as the tap saw it. ``logits``: q k^T times the applied scaling, before soft-capping, biases
    and masks (the compatibility function the claims are about); ``allowed``: the keys each query may attend to;
    ``weights``: the model's own softmax output (its gradient is kept for dL/dlogits)."""
    module: str
    logits: Tensor                     # (B, H, L, S)
    allowed: Tensor                    # (B, 1 or H, L, S) bool
    weights: Tensor                    # (B, H, L, S)
    q: Tensor | None = None            # (B, H, L, D)
    k: Tensor | None = None            # (B, H_kv, S, D)
    scale: float | None = None
    causal: bool | None = None
    softcap: float | None = None
    grad: Tensor | None = None         # dL/dweights, where the probe asked for it (``probe``)


def _allowed(mask: Tensor | None, shape: Sequence[int], device) -> Tensor:
    """True where a query may attend: a bool mask as given, an additive one (or a bias) where it is above half the
    dtype's lowest value (transformers' masked entries are finfo.min), everything without one."""
    if mask is None:
        return torch.ones(1, 1, shape[-2], shape[-1], dtype=torch.bool, device=device)
    if mask.dtype == torch.bool:
        return mask
    return mask > torch.finfo(mask.dtype).min / 2


def _expand_kv(k: Tensor, heads: int) -> Tensor:
    return k if k.shape[1] == heads else k.repeat_interleave(heads // k.shape[1], dim=1)


# ---------------------------------------------------------------------------------------------- transformers tap
def is_transformers(model: nn.Module) -> bool:
    mod = sys.modules.get("transformers")
    return mod is not None and isinstance(model, mod.PreTrainedModel)


def _register_transformers() -> None:
    from transformers import AttentionInterface
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, AttentionMaskInterface
    AttentionInterface.register(TAP_NAME, _transformers_tap)
    AttentionMaskInterface.register(TAP_NAME, ALL_MASK_ATTENTION_FUNCTIONS["eager"])


_CALLS: list[Call] | None = None       # the calls of the forward being tapped (None: not tapping)
_NAMES: dict[int, str] = {}


def _transformers_tap(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    eager = getattr(sys.modules.get(type(module).__module__), "eager_attention_forward", None)
    if eager is None:
        raise TapError(f"{type(module).__name__} has no eager_attention_forward in {type(module).__module__}")
    out, weights = eager(module, query, key, value, attention_mask, scaling=scaling, dropout=dropout, **kwargs)
    if _CALLS is not None:
        scale = float(scaling if scaling is not None else getattr(module, "scaling", query.shape[-1] ** -0.5))
        logits = torch.matmul(query, _expand_kv(key, query.shape[1]).transpose(-1, -2)).detach() * scale
        allowed = _allowed(attention_mask, logits.shape, logits.device)
        bias = kwargs.get("position_bias")
        if bias is not None:
            allowed = allowed & _allowed(bias, logits.shape, logits.device)
        if weights is not None and weights.requires_grad:
            weights.retain_grad()
        _CALLS.append(Call(_NAMES.get(id(module), type(module).__name__), logits, allowed, weights,
                           query.detach(), key.detach(), scale, getattr(module, "is_causal", None),
                           kwargs.get("softcap")))
    return out, weights


@contextmanager
def _transformers_taps(model: nn.Module) -> Iterator[list[Call]]:
    global _CALLS, _NAMES
    _register_transformers()
    before = model.config._attn_implementation
    model.set_attn_implementation(TAP_NAME)
    if model.config._attn_implementation != TAP_NAME:
        raise TapError(f"{type(model).__name__} does not take an attention implementation (transformers' "
                       "AttentionInterface)")
    _CALLS, _NAMES = [], {id(m): n for n, m in model.named_modules()}
    try:
        yield _CALLS
    finally:
        _CALLS = None
        model.set_attn_implementation(before)


# ------------------------------------------------------------------------------------------------- functions tap
class _FunctionTaps(TorchFunctionMode):
    """Records SDPA calls (written out) and 4-D last-dim softmaxes with the matmul that made their input."""

    def __init__(self, unscaled: bool = False) -> None:
        super().__init__()
        self.unscaled = unscaled
        self.calls: list[Call] = []
        self.last_mm: tuple[Tensor, Tensor, Tensor] | None = None

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is F.scaled_dot_product_attention:
            return self._sdpa(*args, **kwargs)
        if func in (torch.matmul, Tensor.matmul, Tensor.__matmul__):
            out = func(*args, **kwargs)
            if isinstance(out, Tensor) and out.dim() == 4:
                self.last_mm = (args[0], args[1], out)
            return out
        if func in (F.softmax, torch.softmax, Tensor.softmax):
            x = args[0]
            dim = kwargs.get("dim", args[1] if len(args) > 1 else None)
            out = func(*args, **kwargs)
            if isinstance(x, Tensor) and x.dim() == 4 and dim in (-1, 3):
                if self.unscaled:
                    raise TapError("a softmax the tap only reads cannot be unscaled")
                self._softmax(x, out)
            return out
        return func(*args, **kwargs)

    def _sdpa(self, q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
        L, S, D = q.shape[-2], k.shape[-2], q.shape[-1]
        s = 1.0 if self.unscaled else D ** -0.5 if scale is None else float(scale)
        ke, ve = _expand_kv(k, q.shape[1]), _expand_kv(v, q.shape[1])
        qk = torch.matmul(q, ke.transpose(-1, -2)) * s
        scores, allowed = qk, torch.ones(1, 1, L, S, dtype=torch.bool, device=q.device)
        if is_causal:
            allowed = causal_allowed(L, S, q.device, alignment="top-left")[None, None]     # SDPA's is_causal
        if attn_mask is not None:
            if attn_mask.dtype == torch.bool:
                allowed = allowed & attn_mask
            else:
                scores = scores + attn_mask
                allowed = allowed & _allowed(attn_mask, qk.shape, q.device)
        scores = scores.masked_fill(~allowed, float("-inf"))
        weights = torch.softmax(scores.float(), dim=-1).to(q.dtype)
        if weights.requires_grad:
            weights.retain_grad()
        out = torch.matmul(weights, ve)
        self.calls.append(Call(f"attention call {len(self.calls)}", qk.detach(), allowed, weights, q.detach(),
                               k.detach(), s, bool(is_causal) or None))
        return out

    def _softmax(self, x: Tensor, out: Tensor) -> None:
        if out.requires_grad:
            out.retain_grad()
        allowed = _allowed(x, x.shape, x.device)
        q = k = None
        scale = None
        logits = x.detach()
        mm = self.last_mm
        if mm is not None and mm[2].shape == x.shape:
            a, bt, prod = mm
            if a.shape[-1] == bt.shape[-2]:
                q, k = a.detach(), bt.detach().transpose(-1, -2)
                ok = allowed & (prod.detach().abs() > 1e-12)
                ratio = (x.detach()[ok] / prod.detach()[ok]) if bool(ok.any()) else None
                steady = ratio is not None and float((ratio - ratio.median()).abs().max()) < \
                    1e-3 * float(ratio.median().abs() + 1e-30)
                if steady:
                    scale = float(ratio.median())
                    logits = prod.detach() * scale
        self.last_mm = None
        self.calls.append(Call(f"softmax call {len(self.calls)}", logits, allowed, out, q, k, scale, None))


@contextmanager
def _function_taps(model: nn.Module, unscaled: bool = False) -> Iterator[list[Call]]:
    mode = _FunctionTaps(unscaled)
    with mode:
        yield mode.calls


@contextmanager
def tapped(model: nn.Module, backend: str, unscaled: bool = False) -> Iterator[list[Call]]:
    """Every attention call of the forward passes run inside, recorded (``backend``: one of ``BACKENDS``;
    ``unscaled``: the functions tap computes SDPA at scale 1)."""
    if backend == "transformers":
        with _transformers_taps(model) as calls:
            yield calls
    else:
        with _function_taps(model, unscaled) as calls:
            yield calls


# ------------------------------------------------------------------------------------------------------ inputs
def model_inputs(model: nn.Module, batch: int, length: int, seed: int) -> dict[str, Tensor]:
    """Uniform token ids for a model with a vocabulary (the inputs every probe at init needs); an encoder-decoder
    gets them as its decoder's too. A module without one raises ``TapError``."""
    config = getattr(model, "config", None)
    vocab = getattr(config, "vocab_size", None) or getattr(model, "vocab_size", None)
    g = torch.Generator().manual_seed(seed)
    if vocab:
        ids = torch.randint(0, int(vocab), (batch, length), generator=g)
        inputs = {"input_ids": ids}
        if getattr(config, "is_encoder_decoder", False):
            inputs["decoder_input_ids"] = torch.randint(0, int(vocab), (batch, length), generator=g)
        return inputs
    width = getattr(model, "d_model", None) or getattr(model, "hidden_size", None) or getattr(model, "dim", None)
    if width:
        return {"x": torch.randn(batch, length, int(width), generator=g)}
    raise TapError(f"{type(model).__name__}: no vocab_size (config.vocab_size or .vocab_size) and no width "
                   "(.d_model, .hidden_size or .dim) to draw an input from")


def by_keyword(model: nn.Module, names: Sequence[str]) -> bool:
    """Whether ``model.forward`` takes ``names`` as keywords (transformers' ``input_ids``, or ``**kwargs``); else its
    inputs are passed positionally, in order (nanoGPT's ``forward(idx, targets=None)``, issue 65)."""
    try:
        params = inspect.signature(model.forward).parameters
    except (TypeError, ValueError):
        return True
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return True
    return all(n in params and params[n].kind is not params[n].POSITIONAL_ONLY for n in names)


def forward(model: nn.Module, inputs: dict[str, Tensor]) -> Tensor:
    """The model's first output as one tensor (``last_hidden_state`` or ``logits``, or what the module returns).
    The model is called as its signature asks: ``input_ids=`` where ``forward`` names it, positionally otherwise
    (``by_keyword``)."""
    if set(inputs) == {"x"} or not by_keyword(model, list(inputs)):
        out = model(*inputs.values())
    else:
        out = model(**inputs)
    if isinstance(out, Tensor):
        return out
    if isinstance(out, dict) or hasattr(out, "keys"):
        return next(v for v in out.values() if isinstance(v, Tensor))
    return out[0]


# --------------------------------------------------------------------------------------------------- pre-flight
@dataclass
class Preflight:
    backend: str
    calls: int
    max_diff: float               # largest |tapped - default| relative to the default's largest entry
    tried: dict[str, str]         # backend -> why it was not taken
    causal_calls: int = 0         # the calls that said they are causal (SDPA's is_causal=True, a module's is_causal)


def preflight(model: nn.Module, inputs: dict[str, Tensor]) -> Preflight:
    """The first backend that captures at least one attention call and leaves the output as it was
    (``PREFLIGHT_RTOL``); ``TapError`` naming what each backend did otherwise."""
    with torch.no_grad():
        ref = forward(model, inputs)
    scale = float(ref.abs().max()) or 1.0
    tried: dict[str, str] = {}
    order = BACKENDS if is_transformers(model) and model._can_set_attn_implementation() else ("functions",)
    if order == ("functions",) and is_transformers(model):
        tried["transformers"] = f"{type(model).__name__} does not follow transformers' AttentionInterface"
    for backend in order:
        try:
            with torch.no_grad(), tapped(model, backend) as calls:
                out = forward(model, inputs)
                n = len(calls)
                causal = sum(1 for c in calls if c.causal is True)
        except TapError as exc:
            tried[backend] = str(exc)
            continue
        diff = float((out - ref).abs().max()) / scale
        if n == 0:
            tried[backend] = "no attention call captured"
        elif not diff <= PREFLIGHT_RTOL:
            tried[backend] = f"tapped output differs from the default by {diff:.3g} (relative)"
        else:
            return Preflight(backend, n, diff, tried, causal)
    raise TapError("cannot tap the model's attention: " + "; ".join(f"{b}: {w}" for b, w in tried.items()))


# -------------------------------------------------------------------------------------------------------- probe
def _rows_of(call: Call) -> list[dict[str, Any]]:
    w = call.weights
    grad = call.grad if call.grad is not None else w.grad
    B, H, L, S = w.shape
    allowed = call.allowed.expand(B, H, L, S)
    n_allowed = allowed.sum(-1)                                          # (B, H, L)
    valid = n_allowed >= 2
    wd = w.detach().float().masked_fill(~allowed, 0.0)
    logits = call.logits.float()
    rows = []
    q = call.q.float() if call.q is not None else None
    k = _expand_kv(call.k.float(), H) if call.k is not None else None
    groups = H // call.k.shape[1] if call.k is not None else 1
    indep = qk_independence_ratio(q, k, per_head=True) if q is not None and k is not None else [math.nan] * H
    future = ~causal_allowed(L, S, w.device)                                         # keys after the query
    # heads' weight maps: total variation between two heads' rows, averaged over the rows (C5's head distances),
    # as the L1 distance between the heads' maps with the rows not every head can read zeroed (torch.cdist: no
    # (B, H, H, L, S) difference, nor H of (B, H, L, S), whose freed pieces glibc kept: 2.4 GB at 384 heads)
    rows_ok = valid.all(1)[:, None, :]                                               # (B, 1, L)
    maps = wd.double().masked_fill(~rows_ok[..., None], 0.0).transpose(0, 1).reshape(1, H, -1)
    pair = (0.5 * torch.cdist(maps, maps, p=1.0)[0] / rows_ok.sum().clamp(min=1)).float()   # (H, H)
    for h in range(H):
        v = valid[:, h]
        nv = int(v.sum())
        al = allowed[:, h]
        lg = logits[:, h].masked_fill(~al, 0.0)
        cnt = al.sum(-1).clamp(min=1)
        mean = lg.sum(-1) / cnt
        var = ((lg - mean[..., None]) ** 2).masked_fill(~al, 0.0).sum(-1) / cnt
        row_std = float(var[v].mean().sqrt()) if nv else math.nan
        logit_std = pooled_std(logits[:, h], al) if int(al.sum()) > 1 else math.nan
        ww = wd[:, h]
        ent = -(ww.clamp(min=1e-30).log() * ww).sum(-1)
        ent_ratio = float((ent[v] / n_allowed[:, h][v].float().log()).mean()) if nv else math.nan
        sat = float((ww.max(-1).values[v] > SATURATED).float().mean()) if nv else math.nan
        first = al.float().argmax(-1, keepdim=True)
        sink = float((ww.gather(-1, first).squeeze(-1)[v] * n_allowed[:, h][v]).mean()) if nv else math.nan
        if grad is not None and nv:
            gw = grad[:, h].float()
            gl = ww * (gw - (ww * gw).sum(-1, keepdim=True))
            g = float(gl.abs()[al & v[..., None]].mean())
        else:
            g = math.nan
        if q is not None and k is not None and call.scale is not None:
            q2, k2 = float((q[:, h] ** 2).mean()), float((k[:, h] ** 2).mean())
            d_k = q.shape[-1]
            pred = abs(call.scale) * math.sqrt(d_k * q2 * k2)
        else:
            q2 = k2 = pred = math.nan
            d_k = call.q.shape[-1] if call.q is not None else math.nan
        fw = float(ww[:, future].max()) if bool(future.any()) else 0.0
        others = [o for o in range(H) if o != h]
        mates = [o for o in others if o // groups == h // groups]
        dist = float(pair[h, others].mean()) if others else math.nan
        gdist = float(pair[h, mates].mean()) if mates else math.nan
        rows.append(dict(call=None, module=call.module, head=h, kv_group=h // groups, d_k=d_k,
                         scale=call.scale if call.scale is not None else math.nan, q_rms=math.sqrt(q2),
                         k_rms=math.sqrt(k2), logit_std=logit_std, row_logit_std=row_std, predicted_std=pred,
                         law_ratio=logit_std / pred if pred and not math.isnan(pred) else math.nan,
                         independence_ratio=float(indep[h]), entropy_ratio=ent_ratio, saturated_rows=sat,
                         grad_mean_abs=g, sink_ratio=sink, head_distance=dist, group_head_distance=gdist,
                         future_weight_max=fw, causal=call.causal, softcap=call.softcap, rows=nv))
    return rows


def probe(model: nn.Module, backend: str, inputs: dict[str, Tensor], seed: int = 0,
          unscaled: bool = False, extra: Callable[[Call], list[dict[str, Any]]] | None = None,
          loss_of: Callable[[Tensor], Tensor] | None = None) -> pd.DataFrame:
    """One tapped forward and backward: one row per (call, head) of ``COLUMNS``. ``unscaled``: every call's
    scaling set to 1 (C3's unscaled arm): the attention modules' ``scaling`` (transformers) or SDPA's ``scale``
    (functions); a softmax the tap only reads cannot be unscaled (``TapError``). ``extra(call)``: more columns,
    one dict a head, added to that call's rows. ``loss_of(output)``: the loss the backward differentiates (e.g. a
    trained model's own next-token loss); by default, or where it returns None, the output against a fixed random
    direction."""
    model.zero_grad(set_to_none=True)
    with tapped(model, backend, unscaled) as calls, _unscaled(model if unscaled and backend == "transformers"
                                                                 else None):
        out = forward(model, inputs)
        loss = loss_of(out) if loss_of is not None else None      # None: the output cannot carry that loss
        if loss is None:
            g = torch.Generator().manual_seed(10_000 + seed)
            direction = torch.randn(out.shape, generator=g) / math.sqrt(out[..., 0].numel())
            loss = (out.float() * direction).sum()
        taken = list(calls)
        # dL/dweights only: the parameters' gradients are never read (half the backward, and no copy of the
        # model's size held for them)
        need = [c for c in taken if c.weights is not None and c.weights.requires_grad]
        if need:
            grads = torch.autograd.grad(loss, [c.weights for c in need], allow_unused=True)
            for c, g in zip(need, grads):
                c.grad = g
    frames = []
    for i, call in enumerate(taken):
        rows = _rows_of(call)
        for r, more in zip(rows, extra(call) if extra is not None else [{}] * len(rows)):
            r.update(more, call=i)
        frames.extend(rows)
    model.zero_grad(set_to_none=True)
    if extra is None:
        return pd.DataFrame(frames, columns=list(COLUMNS))
    return pd.DataFrame(frames)


@contextmanager
def _unscaled(model: nn.Module | None):
    """Every attention module's ``scaling`` set to 1 for the duration (transformers' modules); None: no change."""
    if model is None:
        yield
        return
    touched = [(m, m.scaling) for m in model.modules() if isinstance(getattr(m, "scaling", None), (int, float))]
    if not touched:
        raise TapError("no attention module exposes .scaling to unscale")
    try:
        for m, _ in touched:
            m.scaling = 1.0
        yield
    finally:
        for m, s in touched:
            m.scaling = s


def future_dependency(model: nn.Module, inputs: dict[str, Tensor], seed: int = 0) -> float:
    """The largest change of any output at position i < L - 1 when the last input position is redrawn, relative to
    the output's largest entry: 0 for a causal model (the mask checked from outside the attention)."""
    key = "decoder_input_ids" if "decoder_input_ids" in inputs else ("input_ids" if "input_ids" in inputs else "x")
    x = inputs[key]
    changed = dict(inputs)
    g = torch.Generator().manual_seed(20_000 + seed)
    if x.dtype in (torch.int64, torch.int32):
        top = int(x.max()) + 1                          # ids below the largest drawn one stay in the vocabulary
        y = x.clone()
        y[:, -1] = (x[:, -1] + 1 + torch.randint(0, max(top - 1, 1), (x.shape[0],), generator=g)) % max(top, 2)
    else:
        y = x.clone()
        y[:, -1] = torch.randn(y[:, -1].shape, generator=g)
    changed[key] = y
    with torch.no_grad():
        a, b = forward(model, inputs), forward(model, changed)
    scale = float(a.abs().max()) or 1.0
    if a.dim() < 2 or a.shape[1] < 2:              # an output of the last position alone (nanoGPT's logits)
        return math.nan
    return float((a[:, :-1] - b[:, :-1]).abs().max()) / scale


# ------------------------------------------------------------------------------------------------------- family
def family(build: Callable[[Any, int], nn.Module], values: Sequence[Any], seeds: Sequence[int], backend: str,
           batch: int, length: int, label: str = "value") -> pd.DataFrame:
    """``probe`` over a family: ``build(value, seed)`` at each value and seed; the per-(call, head) rows averaged
    to one row per (value, seed): the model-wide logit std (root mean square over heads), mean |dL/dlogits|,
    applied scale and d_k."""
    rows = []
    for value in values:
        for seed in seeds:
            model = build(value, seed)
            df = probe(model, backend, model_inputs(model, batch, length, seed), seed=seed)
            n_params = sum(p.numel() for p in model.parameters())
            del model                   # freed before the next member is built: one member held at a time (a
            gc.collect()                # model's reference cycles would keep it until the collector ran)
            rows.append({label: value, "seed": seed, "d_k": float(df.d_k.mean()), "n_params": n_params,
                         "scale": float(df.scale.mean()), "logit_std": float(np.sqrt((df.logit_std ** 2).mean())),
                         "grad_mean_abs": float(df.grad_mean_abs.mean()),
                         "entropy_ratio": float(df.entropy_ratio.mean())})
    return pd.DataFrame(rows)
