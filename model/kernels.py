"""The attention kernel under trial, if any (issue 27): a session-wide setting, as ``model/faults.py`` holds the fault.

``set_kernel(fn)`` makes every ``MultiHeadAttention`` with a dot-product score call ``fn`` in place of its own
score-softmax-value step (the pytest option ``--attention`` calls it for the session); ``with use_kernel(fn):``
does the same inside a block. ``fn(q, k, v, *, mask, is_causal, scale, dropout_p) -> (out, weights or None)``
takes and returns (B, h, T, d) tensors, ``mask`` bool with True where a query may attend
(``harness.kernel.Kernel`` puts a user's function in this form). The model imports nothing from the harness.
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

_active: Callable[..., Any] | None = None


def set_kernel(fn: Callable[..., Any] | None) -> None:
    """Use ``fn`` as every dot-product attention's kernel in this process (None: the module's own again)."""
    global _active
    if fn is not None and not callable(fn):
        raise ValueError(f"set_kernel: expected a callable kernel or None, got {type(fn).__name__}")
    _active = fn


def active_kernel() -> Callable[..., Any] | None:
    return _active


@contextlib.contextmanager
def use_kernel(fn: Callable[..., Any] | None) -> Iterator[None]:
    """``fn`` as the kernel inside the block, then the previous one again."""
    previous = active_kernel()
    set_kernel(fn)
    try:
        yield
    finally:
        set_kernel(previous)
