"""Heads (M0): changing one head's q, k, v changes only that head's output."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pandas as pd
import torch

from harness.trial.kernel_probes.reference import _first_line

HEAD_CHANGE_MIN = 1e-3                  # the perturbed head's output moves by O(1); others must not move at all


@dataclass
class HeadsReport:
    table: pd.DataFrame                 # per head: max |change| of its output when head ``changed`` is perturbed
    changed: int
    rejected: str = ""

    @property
    def holds(self) -> bool:
        if self.rejected:
            return False
        t = self.table.set_index("head")
        others = t.drop(index=self.changed).max_change
        return bool((others == 0).all() and t.loc[self.changed, "max_change"] > HEAD_CHANGE_MIN)

    def detail(self) -> str:
        if self.rejected:
            return f"not measured: {self.rejected}"
        t = self.table.set_index("head")
        return (f"head {self.changed}'s q, k, v redrawn: its output moves by {t.loc[self.changed, 'max_change']:.3g}, "
                f"the other heads' by at most {t.drop(index=self.changed).max_change.max():.3g} (must be exactly 0)")


def heads_independent(kernel: Callable, *, heads: int = 4, L: int = 6, d_k: int = 16, changed: int = 2,
                      dtype=torch.float32, device="cpu") -> HeadsReport:
    """Redraw head ``changed``'s q, k, v and read how far each head's output moves (a ``view`` written where a
    ``transpose`` was meant mixes heads and positions: the other heads move)."""
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, heads, L, d_k, generator=g).to(device=device, dtype=dtype) for _ in range(3))
    q2, k2, v2 = q.clone(), k.clone(), v.clone()
    for t in (q2, k2, v2):
        t[:, changed] = torch.randn(1, L, d_k, generator=g).to(device=device, dtype=dtype)
    try:
        with torch.no_grad():
            a, b = kernel(q, k, v)[0], kernel(q2, k2, v2)[0]
    except Exception as exc:
        return HeadsReport(pd.DataFrame(), changed, _first_line(exc))
    change = (a - b).abs().double().amax(dim=(0, 2, 3)).cpu()
    return HeadsReport(pd.DataFrame({"head": range(heads), "max_change": change.tolist()}), changed)
