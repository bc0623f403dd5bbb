"""Figures: matplotlib on its Agg backend (set here, once, for every claim module) and the plots shared by claims.

A claim module draws its own figures with ``plt`` from here (``from harness.report.plots import plt``), never
choosing a backend itself, and saves them with ``ev.figure``. The plots several claims draw live here:
``figure_loss_vs_lr`` / ``figure_loss_vs_lr_by_task`` (held-out loss against learning rate per arm, the chosen
rate circled: issue 17's tuning, read from ``harness.study.tuning.Tuned`` choices).

The report layer: it reads what the measuring layers hand it and never imports torch (nor ``harness.study``,
which does): a ``Tuned`` is read by its attributes (``arm``, ``d_k``, ``lr``, ``grid``, ``mean_loss``,
``setting``).
"""
from __future__ import annotations

import math
from typing import Any, Mapping

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is set)

__all__ = ["plt", "figure_loss_vs_lr", "figure_loss_vs_lr_by_task"]


def figure_loss_vs_lr(tuned: Mapping[Any, Any], title: str):
    """Held-out loss against learning rate per arm, one panel per d_k, the chosen rate circled (issue 17).
    ``tuned``: the choices (``harness.study.tuning.Tuned``), keyed by anything."""
    return figure_loss_vs_lr_by_task({"": tuned}, title)


def figure_loss_vs_lr_by_task(per_task: Mapping[str, Mapping[Any, Any]], title: str):
    """Held-out loss against learning rate per arm, one row of panels per task ('' for a single, unnamed task)
    and one panel per d_k (one for arms without a d_k), the chosen rate circled."""
    rows = list(per_task)
    n_cols = max(len({t.d_k for t in tuned.values()}) for tuned in per_task.values())
    fig, axes = plt.subplots(len(rows), n_cols, figsize=(4.6 * n_cols, 3.6 * len(rows)), squeeze=False)
    for r, task in enumerate(rows):
        tuned = per_task[task]
        d_ks = sorted({t.d_k for t in tuned.values()})
        for c in range(n_cols):
            ax = axes[r][c]
            if c >= len(d_ks):
                ax.axis("off")
                continue
            for t in (t for t in tuned.values() if t.d_k == d_ks[c]):
                finite = [(lr, v) for lr, v in zip(t.grid, t.mean_loss) if math.isfinite(v)]
                line, = ax.plot([p[0] for p in finite], [p[1] for p in finite], "o-", label=t.arm)
                ax.plot([t.lr], [dict(zip(t.grid, t.mean_loss))[t.lr]], "o", ms=12, mfc="none",
                        color=line.get_color())
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("learning rate")
            ax.set_ylabel("held-out loss (tuning seeds)")
            name = next(iter(tuned.values())).setting
            ax.set_title(", ".join(p for p in (task, "" if d_ks[c] is None else f"{name} = {d_ks[c]}") if p))
            ax.legend(fontsize=7)
            ax.grid(True, which="both", alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    return fig
