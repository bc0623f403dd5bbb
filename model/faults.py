"""Named faults the model can be broken with, for the suite-sensitivity run (issue 10).

A verification suite is worth the faults it catches: ``set_fault(name)`` breaks the model in one
documented way for the whole session (the pytest option ``--inject-fault`` calls it), and the
model consults ``active_fault()`` at forward time, so models built before the fault was set are
broken too. Only one fault is active at a time.
"""
from __future__ import annotations

import contextlib
from typing import Iterator

#: the ``local_window`` fault's half-width: two layers reach 2 x 4 = 8 positions
LOCAL_WINDOW = 4

FAULTS: dict[str, str] = {
    "no_scale": "a dot product's scale derived from d_k (the default 1/sqrt(d_k), or d_k^-alpha) becomes 1 "
                "(an explicit scale=\"none\" or a number is unaffected)",
    "scale_by_dk": "a dot product's scale derived from d_k is applied twice (to q and to k): the default 1/sqrt(d_k) "
                   "becomes 1/d_k, d_k^-alpha becomes d_k^-2alpha",
    "scale_inverted": "a dot product's scale derived from d_k multiplies by it instead of dividing: 1/sqrt(d_k) "
                      "becomes sqrt(d_k), d_k^-alpha becomes d_k^+alpha",
    "uniform_attention": "softmax replaced by uniform weights over the unmasked keys (causal mask respected)",
    "single_head": "every head uses head 0's slice of the q/k/v projections (h is in effect 1)",
    "causal_leak": "the causal mask lets position i also see position i+1",
    "no_positional_encoding": "the positional encoding is not added to the embeddings",
    "padding_leak": "the key-padding mask is dropped: padded keys get attention weight like any other",
    "local_window": f"self-attention sees only keys within {LOCAL_WINDOW} positions of the query (|i - j| <= "
                    f"{LOCAL_WINDOW}), so its path length grows with distance",
    "additive_no_tanh": "additive attention loses its tanh: v_a^T (q + k), whose query term is the same for every "
                        "key, so the weights cannot depend on the query",
}

_active: str | None = None


def _check(name: str | None) -> None:
    if name is not None and name not in FAULTS:
        raise ValueError(f"unknown fault {name!r}; valid faults: {', '.join(FAULTS)}")


def set_fault(name: str | None) -> None:
    """Activate fault ``name`` for every model in this process (None clears it)."""
    global _active
    _check(name)
    _active = name


def active_fault() -> str | None:
    return _active


@contextlib.contextmanager
def inject(name: str | None) -> Iterator[None]:
    """Activate ``name`` inside the block, then restore the previous fault."""
    global _active
    _check(name)
    previous = _active
    _active = name
    try:
        yield
    finally:
        _active = previous
