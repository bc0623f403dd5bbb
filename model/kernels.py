"""The attention kernel under trial, if any (issue 27): a session-wide setting, as ``model/faults.py`` holds the fault.

``set_kernel(fn)`` makes every ``MultiHeadAttention`` with a dot-product score call ``fn`` in place of its own
score-softmax-value step (the pytest option ``--attention`` calls it for the session); ``with use_kernel(fn):``
does the same inside a block. ``fn(q, k, v, *, mask, is_causal, scale, dropout_p) -> (out, weights or None)``
takes and returns (B, h, T, d) tensors, ``mask`` bool with True where a query may attend
(``harness.trial.kernel.Kernel`` puts a user's function in this form). The model imports nothing from the harness.

A kernel can also be one model's, not the session's: ``register_kernel(name, fn)`` binds a name, and a
``ModelConfig(kernel=name)`` makes that model's attention call it whatever the session's is (a kernel trial's
training arm, beside a reference arm built without one). The name is the kernel's identity in the config, and so in
every memo keyed on the config (``harness.trial.kernel.Kernel.identity``: its name, convention and source hash).
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

_active: Callable[..., Any] | None = None
_named: dict[str, Callable[..., Any]] = {}


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


def register_kernel(name: str, fn: Callable[..., Any]) -> str:
    """Bind ``name`` to ``fn`` for ``ModelConfig(kernel=name)``; returns ``name``. Binding a name again replaces it
    (the same identity: the caller's name says what the kernel is)."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"register_kernel: expected a non-empty name, got {name!r}")
    if not callable(fn):
        raise ValueError(f"register_kernel: expected a callable kernel for {name!r}, got {type(fn).__name__}")
    _named[name] = fn
    return name


def kernel_named(name: str) -> Callable[..., Any]:
    """The kernel registered as ``name``; a ValueError naming the registered ones otherwise."""
    try:
        return _named[name]
    except KeyError:
        raise ValueError(f"no kernel registered as {name!r} (model.kernels.register_kernel); registered: "
                         f"{sorted(_named) or 'none'}") from None
