"""A checkpoint's readings as pictures (issue 49): one layer x head heatmap per reading, the checkpoint and the same
architecture at init side by side on one colour scale, so that what training moved reads at a glance (as mup's
coordinate checks put init and trained side by side).

It reads ``harness.measure.checkpoint.layer_table``'s frame (columns ``which``, ``layer``, ``head`` and the
readings) and never imports torch.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from harness.report.plots import plt

#: the readings drawn, with their label; a ratio is drawn on log2 (1 at the centre of its scale)
HEATMAPS = (("independence_ratio", "independence ratio (log2)", True),
            ("logit_std", "logit std", False),
            ("std_over_sqrt_dk", "logit std / d_k^1/2", False),
            ("saturated_rows", "saturated rows (max > 0.99)", False),
            ("grad_mean_abs", "mean |dL/dlogits|", False),
            ("entropy_ratio", "entropy / ln n", False),
            ("sink_ratio", "sink mass over uniform (log2)", True),
            ("head_distance", "head distance (TV)", False),
            ("q_var", "Var(q component)", False),
            ("k_var", "Var(k component)", False))


def _grid(table: Any, which: str, column: str, log2: bool) -> np.ndarray:
    part = table[table.which == which].pivot_table(index="layer", columns="head", values=column)
    values = part.to_numpy(dtype=float)
    return np.log2(np.clip(values, 1e-12, None)) if log2 else values


def figure_heatmaps(table: Any, title: str, readings: Sequence[tuple[str, str, bool]] = HEATMAPS):
    """One row a reading, two panels (checkpoint, init), layers down and heads across, one colour scale a row."""
    rows = [r for r in readings if r[0] in table.columns]
    fig, axes = plt.subplots(len(rows), 2, figsize=(9.0, 2.3 * len(rows) + 0.6), squeeze=False, layout="constrained")
    for r, (column, label, log2) in enumerate(rows):
        grids = [_grid(table, w, column, log2) for w in ("checkpoint", "init")]
        finite = np.concatenate([g[np.isfinite(g)] for g in grids]) if any(np.isfinite(g).any() for g in grids) \
            else np.array([0.0])
        lo, hi = float(finite.min()), float(finite.max())
        if log2:
            edge = max(abs(lo), abs(hi), 1e-6)
            lo, hi, cmap = -edge, edge, "RdBu_r"
        else:
            cmap = "viridis"
        if math.isclose(lo, hi):
            hi = lo + 1e-6
        for c, (which, grid) in enumerate(zip(("checkpoint", "init"), grids)):
            ax = axes[r, c]
            im = ax.imshow(grid, aspect="auto", cmap=cmap, vmin=lo, vmax=hi, interpolation="nearest")
            ax.set_title(f"{label}: {which}", fontsize=9)
            ax.set_ylabel("layer", fontsize=8)
            ax.set_xlabel("head", fontsize=8)
            ax.set_xticks(range(grid.shape[1]))
            ax.set_yticks(range(grid.shape[0]))
            ax.tick_params(labelsize=7)
        fig.colorbar(im, ax=list(axes[r]), shrink=0.9)
    fig.suptitle(title, fontsize=10)
    return fig
