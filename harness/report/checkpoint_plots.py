"""A checkpoint's readings as pictures (issue 49): one layer x head heatmap per reading, the checkpoint and the same
architecture at init side by side on one colour scale, so that what training moved reads at a glance (as mup's
coordinate checks put init and trained side by side). Each reading has a fixed scale that means something (issue
55): a ratio on log2 around the footnote's 1 with its factor 2 marked, a std or a variance on a log scale with 1
marked, a share on [0, 1]; the same colour is the same value for every checkpoint.

It reads ``harness.trial.checkpoint_probes.layer_table``'s frame (columns ``which``, ``layer``, ``head`` and the
readings) and never imports torch.
"""
from __future__ import annotations

import re
from pathlib import PurePath
from typing import Any, Sequence

import numpy as np

from harness.report.plots import plt

#: how a reading is coloured (issue 55: fixed scales that mean something, the same for every checkpoint):
#: "log2": a ratio whose unit is 1, drawn as log2 on [-3, 3] around 0, +-1 (the factor 2) marked; "log": a size
#: whose unit is 1 (a std, a variance) on a log scale over 2^-6 .. 2^6 around 1, 1/2, 1 and 2 marked; "share": a
#: share on [0, 1], its threshold marked; "data": no unit, a log scale over both panels' values (said in the label)
SCALES = {"log2": dict(lo=-3.0, hi=3.0, marks=(-1.0, 0.0, 1.0), cmap="RdBu_r"),
          "log": dict(lo=2.0 ** -6, hi=2.0 ** 6, marks=(0.5, 1.0, 2.0), cmap="RdBu_r"),
          "share": dict(lo=0.0, hi=1.0, marks=(), cmap="viridis"),
          "data": dict(lo=None, hi=None, marks=(), cmap="viridis")}
#: the readings drawn: (column, label, scale, marks beyond the scale's own)
HEATMAPS = (("independence_ratio", "independence ratio (footnote 1, band 1/2..2)", "log2", ()),
            ("logit_std", "scaled logit std (footnote's unit 1, band 1/2..2)", "log", ()),
            ("qk_std_over_sqrt_dk", "q.k std / d_k^1/2, before the scale (footnote: 1)", "log", ()),
            ("saturated_rows", "saturated rows (max > 0.99; 1% marked)", "share", (0.01,)),
            ("grad_mean_abs", "mean |dL/dlogits| (log, scale from the data)", "data", ()),
            ("entropy_ratio", "entropy / ln n (collapsed under 0.1)", "share", (0.1,)),
            ("sink_ratio", "sink mass over uniform (uniform 1)", "log2", ()),
            ("sink_mass", "weight on the first key (sink over 0.3)", "share", (0.3,)),
            ("head_distance", "head distance (TV)", "share", ()),
            ("q_var", "Var(q component) (footnote: 1)", "log", ()),
            ("k_var", "Var(k component) (footnote: 1)", "log", ()))
#: cells get their value written in them up to this many a panel (a 4 x 4 grid does, a 32 x 32 one does not)
MAX_LABELLED = 64
#: file names too generic to name a path alone: their folder is kept beside them
_GENERIC = {"config.json", "model.safetensors", "pytorch_model.bin", "model.safetensors.index.json",
            "pytorch_model.bin.index.json"}


def by_name(text: Any) -> str:
    """``text`` with every absolute path cut to its name (its folder and name for a generic file name such as
    config.json): a title shows paths by name."""
    def short(m: re.Match) -> str:
        p = PurePath(m.group(0))
        return f"{p.parent.name}/{p.name}" if p.name in _GENERIC and p.parent.name else p.name
    return re.sub(r"(?<![\w.~])/(?:[^\s/:,()'\"]+/)*[^\s/:,()'\"]+", short, str(text))


def _grid(table: Any, which: str, column: str) -> np.ndarray:
    part = table[table.which == which].pivot_table(index="layer", columns="head", values=column)
    return part.to_numpy(dtype=float)


def _norm(kind: str, grids: Sequence[np.ndarray]):
    """The colour norm of a reading's row, fixed by its kind (``SCALES``); "data" spans both panels' values."""
    from matplotlib.colors import LogNorm, Normalize

    s = SCALES[kind]
    if kind == "log2":
        return Normalize(s["lo"], s["hi"])
    if kind == "log":
        return LogNorm(s["lo"], s["hi"])
    if kind == "share":
        return Normalize(s["lo"], s["hi"])
    pos = np.concatenate([g[np.isfinite(g) & (g > 0)] for g in grids])
    lo, hi = (float(pos.min()), float(pos.max())) if pos.size else (1e-6, 1.0)
    return LogNorm(lo, hi if hi > lo else lo * 10)


def _ratio(v: float) -> str:
    """1/8, 1/2, 1, 2, 64: a power of two as a ratio."""
    return f"1/{1 / v:g}" if v < 1 else f"{v:g}"


def _text(value: float, kind: str) -> str:
    if not np.isfinite(value):
        return "nan"
    if kind == "share":
        return "0" if value == 0 else f"{value:.1%}" if value < 0.01 else f"{value:.0%}"
    return f"{value:.3g}"


def figure_heatmaps(table: Any, title: str, readings: Sequence[tuple[str, str, str, tuple]] = HEATMAPS):
    """One row a reading, two panels (checkpoint, init), layers down and heads across, each row on its reading's
    fixed scale (``SCALES``) with the footnote's unit and band (or the reading's threshold) marked on the colour
    bar; values written in the cells where they fit (``MAX_LABELLED``); paths in ``title`` shown by name."""
    rows = [r for r in readings if r[0] in table.columns]
    fig, axes = plt.subplots(len(rows), 2, figsize=(9.0, 2.3 * len(rows) + 0.6), squeeze=False, layout="constrained")
    for r, (column, label, kind, extra) in enumerate(rows):
        grids = [_grid(table, w, column) for w in ("checkpoint", "init")]
        norm = _norm(kind, grids)
        shown = [np.log2(np.clip(g, 1e-12, None)) if kind == "log2" else
                 np.clip(g, 1e-300, None) if norm.__class__.__name__ == "LogNorm" else g for g in grids]
        cmap = plt.get_cmap(SCALES[kind]["cmap"]).copy()
        for c, (which, grid, raw) in enumerate(zip(("checkpoint", "init"), shown, grids)):
            ax = axes[r, c]
            im = ax.imshow(grid, aspect="auto", cmap=cmap, norm=norm, interpolation="nearest")
            ax.set_title(f"{label}: {which}", fontsize=9)
            ax.set_ylabel("layer", fontsize=8)
            ax.set_xlabel("head", fontsize=8)
            ax.set_xticks(range(grid.shape[1]))
            ax.set_yticks(range(grid.shape[0]))
            ax.tick_params(labelsize=7)
            if grid.size <= MAX_LABELLED:
                for (y, x), v in np.ndenumerate(raw):
                    rgba = cmap(norm(grid[y, x])) if np.isfinite(grid[y, x]) else (1, 1, 1, 1)
                    dark = 0.299 * rgba[0] + 0.587 * rgba[1] + 0.114 * rgba[2] < 0.5
                    ax.text(x, y, _text(v, kind), ha="center", va="center", fontsize=7,
                            color="white" if dark else "black")
        bar = fig.colorbar(im, ax=list(axes[r]), shrink=0.9, extend="neither" if kind == "share" else "both")
        marks = tuple(SCALES[kind]["marks"]) + tuple(extra)
        for mark in marks:
            bar.ax.axhline(mark, color="k", lw=2.0 if mark in (0.0, 1.0) and kind != "share" else 1.2,
                           ls="-" if mark in (0.0, 1.0) and kind != "share" else "--")
        if kind in ("log2", "log"):                  # ticks at the marks and the ends, labelled as the ratio
            ticks = sorted({SCALES[kind]["lo"], SCALES[kind]["hi"], *marks})
            bar.set_ticks(ticks, labels=[_ratio(2.0 ** t if kind == "log2" else t) for t in ticks])
            bar.ax.minorticks_off()
        elif extra:                                  # a mark too near 0 to label is drawn, not ticked
            bar.set_ticks(sorted({0.0, 1.0, *(m for m in extra if m >= 0.05)}))
    fig.suptitle(by_name(title), fontsize=10)
    return fig


#: the series' panels (issue 55, item 10): (column, label, scale) over the training steps, one line a layer
SERIES_PANELS = (("logit_std", "scaled logit std (log; unit 1, band 1/2..2)", "log"),
                 ("entropy_ratio", "attention entropy / ln n (collapsed under 0.1)", "share"),
                 ("saturated_rows", "saturated rows (max > 0.99; 1% marked)", "share"))


def figure_series(table: Any, title: str):
    """The readings per layer over the saves of one run (``harness.trial.checkpoint_series.series_table``), as
    Zhai et al. 2023 plot entropy collapse: x the step (parsed from the saves' names, or their place in the order
    given; init at 0, hollow), one line a layer; the scaled logits' std on a log scale with 1 and its band marked,
    entropy and saturated rows on [0, 1] with their thresholds marked."""
    fig, axes = plt.subplots(1, len(SERIES_PANELS), figsize=(4.2 * len(SERIES_PANELS), 3.6), squeeze=False,
                             layout="constrained")
    by_name_ = str(table.step_from.iloc[0]) == "name"
    for ax, (column, label, kind) in zip(axes[0], SERIES_PANELS):
        for layer, part in table.groupby("layer"):
            part = part.sort_values("step", kind="stable")
            line, = ax.plot(part.step, part[column], marker="o", label=f"layer {layer}")
            init = part[part.which == "init"]
            ax.plot(init.step, init[column], marker="o", ls="none", mfc="white", color=line.get_color())
        if kind == "log":
            ax.set_yscale("log")
            ax.axhline(1.0, color="k", lw=1.2)
            ax.axhspan(0.5, 2.0, color="0.85", zorder=0)
        else:
            ax.set_ylim(-0.02, 1.02)
            for mark in ((0.1,) if column == "entropy_ratio" else (0.01,)):
                ax.axhline(mark, color="k", lw=1.0, ls="--")
        ax.set_title(label, fontsize=9)
        ax.set_xlabel("training step (from the saves' names)" if by_name_ else "save (in the order given)",
                      fontsize=8)
        ax.tick_params(labelsize=7)
    axes[0, 0].legend(fontsize=7, title="hollow: init", title_fontsize=7)
    fig.suptitle(by_name(title), fontsize=10)
    return fig


#: how many heads ``figure_patterns`` draws: the most concentrated ones
PATTERN_HEADS = 4


def strongest_heads(table: Any, n: int = PATTERN_HEADS) -> list[tuple[int, int]]:
    """(layer, head) of the checkpoint's ``n`` most concentrated heads: the lowest entropy over ln n (``layer_table``'s
    checkpoint rows), ties in layer and head order."""
    part = table[table.which == "checkpoint"].sort_values(["entropy_ratio", "layer", "head"], kind="stable")
    return [(int(r.layer), int(r.head)) for r in part.head(n).itertuples()]


def figure_patterns(patterns: Sequence[Any], table: Any, ids: Sequence[int], title: str,
                    n: int = PATTERN_HEADS):
    """Where the strongest heads look on the first probe sequence (issue 55, item 7): one query x key map a head
    (``strongest_heads``), weights on [0, 1], titled with the head's entropy over ln n and its weight on the first
    key over the probe batches. The axes are positions; where the sequence is short enough to read (32 tokens),
    each tick is labelled with that position's token id, and the axis label says so."""
    heads = [(layer, h) for layer, h in strongest_heads(table, n) if layer < len(patterns)]
    fig, axes = plt.subplots(1, max(1, len(heads)), figsize=(3.4 * max(1, len(heads)), 3.6), squeeze=False,
                             layout="constrained")
    rows = table[table.which == "checkpoint"].set_index(["layer", "head"])
    image = None
    for ax, (layer, h) in zip(axes[0], heads):
        w = np.asarray(patterns[layer][h], dtype=float)
        image = ax.imshow(w, vmin=0.0, vmax=1.0, cmap="viridis", interpolation="nearest")
        r = rows.loc[(layer, h)]
        ax.set_title(f"layer {layer} head {h}: entropy {r.entropy_ratio:.2f} of ln n,\n"
                     f"first key {r.sink_mass:.2f}", fontsize=8)
        tokens = [str(int(t)) for t in ids][: w.shape[-1]]
        named = len(tokens) <= 32                    # the ticks carry each position's token id where they fit
        ax.set_xlabel("key position" + (" (ticks: its token id)" if named else ""), fontsize=7)
        ax.set_ylabel("query position" + (" (ticks: its token id)" if named else ""), fontsize=7)
        if named:
            ax.set_xticks(range(len(tokens)), tokens, rotation=90, fontsize=5)
            ax.set_yticks(range(min(len(tokens), w.shape[0])), tokens[: w.shape[0]], fontsize=5)
        else:
            ax.tick_params(labelsize=6)
    if image is not None:
        fig.colorbar(image, ax=axes[0].tolist(), shrink=0.8, label="attention weight")
    else:
        axes[0, 0].text(0.5, 0.5, "no attention weights were read", ha="center", va="center")
        axes[0, 0].set_axis_off()
    fig.suptitle(by_name(title), fontsize=10)
    return fig
