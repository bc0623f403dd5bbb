"""Named hook points that measurements read (TransformerLens-style).

A ``Tap`` is an identity module placed where a probe wants to look (q, k, v, logits, weights, out
of every attention module). Its name is its module path in the model you capture from, e.g.
``encoder.layers.0.self_attn.logits``. With no capture active a tap does nothing and the attention
module takes its SDPA fast path; ``capture`` switches the matched taps on for the duration of a
``with`` block::

    with capture(model, "*.logits", retain_grad=True) as cache:
        loss = loss_fn(model(x), y)
        loss.backward()
    cache["encoder.layers.0.self_attn.logits"]        # (B, h, T, S), detached
    cache.grad("encoder.layers.0.self_attn.logits")   # dL/dlogits, filled by backward

If a module runs several times in one capture (e.g. step-by-step decoding), the last call wins.
"""
from __future__ import annotations

import contextlib
import fnmatch
from typing import Iterator

import torch
from torch import nn


class TapCache(dict):
    """``{tap_name: tensor}`` captured in forward; ``grad(name)`` gives the retained gradient."""

    def __init__(self, retain_grad: bool = False, detach: bool = True) -> None:
        super().__init__()
        self.retain_grad = retain_grad
        self.detach = detach
        self.grads: dict[str, torch.Tensor] = {}

    def _store(self, name: str, x: torch.Tensor) -> None:
        self[name] = x.detach() if self.detach else x
        if self.retain_grad and x.requires_grad:
            x.register_hook(lambda g, name=name: self.grads.__setitem__(name, g.detach()))

    def grad(self, name: str) -> torch.Tensor:
        """dL/d(tap output) from the last backward through tap ``name``."""
        if not self.retain_grad:
            raise RuntimeError("capture(..., retain_grad=True) is needed to read gradients")
        try:
            return self.grads[name]
        except KeyError:
            raise KeyError(f"no gradient for tap {name!r}: was backward() called on a loss that "
                           f"depends on it? (captured: {sorted(self.grads) or 'none'})") from None

    def names(self, pattern: str = "*") -> list[str]:
        return sorted(n for n in self if fnmatch.fnmatchcase(n, pattern))


class Tap(nn.Module):
    """Identity hook point. ``active`` is True while at least one capture is listening."""

    def __init__(self) -> None:
        super().__init__()
        # (cache, name this tap has in the model that cache captures from)
        self._sinks: list[tuple[TapCache, str]] = []

    @property
    def active(self) -> bool:
        return bool(self._sinks)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for sink, name in self._sinks:
            sink._store(name, x)
        return x

    def extra_repr(self) -> str:
        return "active" if self._sinks else ""


def tap_names(model: nn.Module) -> list[str]:
    """Every tap in ``model``, by module path."""
    return [name for name, m in model.named_modules() if isinstance(m, Tap)]


@contextlib.contextmanager
def capture(model: nn.Module, *patterns: str, retain_grad: bool = False,
            detach: bool = True) -> Iterator[TapCache]:
    """Switch on the taps of ``model`` whose name matches any fnmatch ``pattern`` (all taps when
    none is given) and yield the cache they fill.

    ``retain_grad``: register a gradient hook on each captured tensor, so ``cache.grad(name)``
    holds dL/d(tap) after backward (C3/R2 read dL/dlogits this way). ``detach=False`` keeps the
    graph on stored tensors (for a probe that differentiates through them).
    Raises ValueError if no tap matches: a misspelt pattern must not measure nothing silently.
    """
    pats = patterns or ("*",)
    cache = TapCache(retain_grad=retain_grad, detach=detach)
    taps = [(name, m) for name, m in model.named_modules()
            if isinstance(m, Tap) and any(fnmatch.fnmatchcase(name, p) for p in pats)]
    if not taps:
        raise ValueError(f"no tap matches {list(pats)}; model taps are e.g. "
                         f"{tap_names(model)[:6] or 'none (this model has no taps)'}")
    for name, tap in taps:
        tap._sinks.append((cache, name))
    try:
        yield cache
    finally:
        for _, tap in taps:
            tap._sinks[:] = [s for s in tap._sinks if s[0] is not cache]  # by identity
