"""The footnote's two halves per layer of a checkpoint, each head judged on its own (issue 55; issue 65, item 1).

The footnote's argument is about each head's q.k, so each head is read on its own: a layer holds a half only where
every one of its heads does (its independence ratio, or its scaled logits' std, within Q3's factor 2 of 1). A
geometric mean over heads would let opposite failures cancel (one head saturating at std 7.4 and two near uniform
at 0.4 pool to 0.94), so it is printed beside, as a reported reading, never as the answer. What Q3 counts is the
same: each head is one part of ``checkpoint_<half>_layer<i>`` (``claims/test_q3_variance_after_training.py``).

``footnote_rows(df)``: one row a layer with both halves at the checkpoint and at init, the heads outside the band,
and the reported readings (saturated rows, collapsed heads, sinks). ``regime_table(df)``: the terminal's lines.
Every word follows a number printed beside it.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from harness.trial import checkpoint_probes as readings_of

if TYPE_CHECKING:
    import pandas as pd

#: Q3's factor band on log2 of a head's independence ratio and scaled logit std: within a factor 2 of 1
FACTOR_TWO = 1.0
#: the two halves: (name, the per-head column, what a value is called in words)
HALVES = (("independence", "independence_ratio", "ratio"), ("scale", "logit_std", "std"))
#: at most this many heads are named one by one in a group; beyond, the first three and the count
NAMED_HEADS = 4


def _heads_text(heads: list[int]) -> str:
    if len(heads) == 1:
        return f"head {heads[0]}"
    if len(heads) <= NAMED_HEADS:
        return f"heads {', '.join(map(str, heads[:-1]))} and {heads[-1]}"
    return f"{len(heads)} heads ({', '.join(map(str, heads[:3]))}, ...)"


def _values_text(values: list[float]) -> str:
    if len(values) == 1:
        return f"{values[0]:.2g}"
    if len(values) <= NAMED_HEADS:
        return f"{', '.join(f'{v:.2g}' for v in values[:-1])} and {values[-1]:.2g}"
    return f"{min(values):.2g} to {max(values):.2g}"


def head_word(half: str, state: str, entropy: float, saturated: float) -> str:
    """What one head outside the band does, in a word that follows its readings: the scale half's 'saturating'
    (``SATURATED_SHARE`` of its rows or more over 0.99, as printed) or 'above the band'; 'near uniform' (entropy at
    least ``NEAR_UNIFORM`` of ln n) or 'below the band'; the independence half's 'above'/'below the band'."""
    ro = readings_of
    if half == "scale" and state == "above" and round(saturated, 3) >= ro.SATURATED_SHARE:
        return "saturating"
    if half == "scale" and state == "below" and entropy >= ro.NEAR_UNIFORM:
        return "near uniform"
    return ro.band_words(state)


def half_of_heads(half: str, heads: "pd.DataFrame", column: str) -> dict[str, Any]:
    """One half at one point (checkpoint or init) over a layer's heads (``layer_table`` rows): ``state`` 'holds'
    where every head holds, 'above' or 'below' where every head outside the band is on that side, 'above and
    below' where they are on both, 'not read' where a head was not read; ``out``: [(head, value, word)] of the heads
    outside the band; ``words``: 'every head within the band (0.9 to 1.3)', '3 of 4 heads outside the band (head 0
    saturating at 7.4; heads 2 and 3 near uniform at 0.4 and 0.39)'."""
    values = [float(v) for v in heads[column]]
    states = [readings_of.half_state(FACTOR_TWO, v) for v in values]
    n = len(values)
    if n == 0 or "not read" in states:
        return dict(state="not read", out=[], words="not read by the tap")
    out = [(int(h), v, head_word(half, s, float(e), float(sat)))
           for h, v, s, e, sat in zip(heads["head"], values, states, heads.entropy_ratio, heads.saturated_rows)
           if s != "holds"]
    sides = sorted({s for s in states if s != "holds"})
    span = f"{min(values):.2g} to {max(values):.2g}" if n > 1 else f"{values[0]:.2g}"
    if not out:
        return dict(state="holds", out=out, words=f"every head within the band ({span})" if n > 1
                    else f"its head within the band ({span})")
    groups: dict[str, list[tuple[int, float]]] = {}
    for h, v, word in out:
        groups.setdefault(word, []).append((h, v))
    if len(out) == n and len(groups) == 1:
        words = f"every head {out[0][2]} ({span})" if n > 1 else f"its head {out[0][2]} ({span})"
    else:
        words = f"{len(out)} of {n} heads outside the band (" + "; ".join(
            f"{_heads_text([h for h, _ in g])} {w} at {_values_text([v for _, v in g])}" for w, g in groups.items()) \
            + ")"
    return dict(state=" and ".join(sides), out=out, words=words)


def regime_rows(df: "pd.DataFrame") -> list[dict[str, Any]]:
    """``footnote_rows`` of the layers where the checkpoint leaves the footnote's regime (``why`` not empty): a head
    whose independence ratio or scaled logits' std is outside Q3's factor 2 (counted), saturated rows at
    ``SATURATED_SHARE`` or more (as printed), or a collapsed head (reported); with the init's values beside."""
    return [r for r in footnote_rows(df) if r["why"]]


def regime_table(df: "pd.DataFrame") -> list[str]:
    """``footnote_rows`` as terminal lines: what they measure and which of it is counted, the scale the logits
    were read after, a table of every layer (the init in brackets), one line a layer answering the footnote in its
    two halves, and the heads that sink (or "no head sinks"). Every word follows a number printed beside it."""
    ro, rows = readings_of, footnote_rows(df)
    out = [f"the footnote per head in two halves, each within a factor 2 of 1 (|log2| <= {FACTOR_TWO:g}): "
           "independence (Var(q.k) over what independent components give) and scale (the scaled logits' std, "
           "whose unit is 1); counted: each head on its own, over the probe sequences of this one checkpoint (not "
           "over training runs), and a layer holds a half only where every head does; reported, never counted: the "
           "geometric means over heads, saturated rows, collapsed heads and sinks",
           ro.scale_note(df),
           f"{'layer':>5}  {'heads out: indep.':>17}  {'scale':>5}  {'geo. mean ratio (init)':>22}  "
           f"{'geo. mean std (init)':>20}  {'saturated (init)':>16}  {'collapsed':>9}  {'sinks':>5}  "
           "fails on (counted) | reported"]
    out += [f"{r['layer']:>5}  {len(r['independence_heads']):>13}/{r['heads']:<3}  "
            f"{len(r['scale_heads']):>2}/{r['heads']:<2}  {r['ratio']:>13.2f} ({r['ratio_init']:>6.2f})  "
            f"{r['logit_std']:>11.3g} ({r['logit_std_init']:>6.3g})  "
            f"{r['saturated']:>6.1%} ({r['saturated_init']:>6.1%})"
            f"  {r['collapsed']:>4}/{r['heads']:<4}  {r['sinks']:>2}/{r['heads']:<2}  "
            f"{'+'.join(r['fails_on']) or '-'} | {'+'.join(r['reported']) or '-'}" for r in rows]
    out.append(f"(heads out: heads whose own reading is outside the band, counted; saturated: the share of rows "
               f"whose largest weight is over 0.99, \"saturation\" from {ro.SATURATED_SHARE:.0%} as printed; "
               f"collapsed: heads whose entropy is under {ro.COLLAPSED:g} of ln n; sinks: heads whose mean weight on "
               f"the first key is over {ro.SINK_MASS:g}; these three reported)")
    out += [f"layer {r['layer']}: {r['footnote']}" for r in rows]
    sinking = [r for r in rows if r["sinks"]]
    out.append(f"no head sinks at the checkpoint (none puts a mean weight over {ro.SINK_MASS:g} on the first key)"
               if not sinking else f"heads that sink at the checkpoint (mean weight on the first key over "
               f"{ro.SINK_MASS:g}): " + "; ".join(f"layer {r['layer']} " + ", ".join(
                   f"head {h} ({m:.2f})" for h, m in r["sink_heads"]) for r in sinking))
    return out


def footnote_rows(df: "pd.DataFrame") -> list[dict[str, Any]]:
    """One row per layer (attention call): the footnote's two halves at the checkpoint and at init, each head judged
    on its own (``half_of_heads``), with the geometric means over heads and probe sequences beside (``ratio``,
    ``logit_std``: reported) and the readings that say what a failed half does (entropy, saturated rows, collapsed
    heads, sinks). ``independence``, ``scale`` (and ``*_init``): holds, above, below, 'above and below', not read;
    ``independence_heads``, ``scale_heads`` (and ``*_init``): [(head, value, word)] outside the band; ``fails_on``:
    the counted halves that fail; ``reported``: saturation, collapse; ``why``: both; ``footnote``:
    ``footnote_words``."""
    ro, rows = readings_of, []
    for layer, part in ro.layer_table(df).groupby("layer"):
        c, i = part[part.which == "checkpoint"], part[part.which == "init"]
        sinks = [(int(h), float(m)) for h, m in zip(c["head"], c.sink_mass) if m > ro.SINK_MASS]
        r = dict(layer=int(layer), module=str(c.module.iloc[0]), heads=len(c),
                 ratio=ro.geo_mean(c.independence_ratio), ratio_init=ro.geo_mean(i.independence_ratio),
                 logit_std=ro.geo_mean(c.logit_std), logit_std_init=ro.geo_mean(i.logit_std),
                 scale=float(c.scale.mean()), d_k=float(c.d_k.mean()),
                 entropy=float(c.entropy_ratio.mean()), entropy_init=float(i.entropy_ratio.mean()),
                 saturated=round(float(c.saturated_rows.mean()), 3),      # as printed (0.1%): the words follow it
                 saturated_init=round(float(i.saturated_rows.mean()), 3),
                 collapsed=int(c.collapsed.sum()), sinks=len(sinks), sink_heads=sinks)
        for half, col, _ in HALVES:
            for s, heads in (("", c), ("_init", i)):
                h = half_of_heads(half, heads, col)
                r[half + s], r[f"{half}_heads{s}"], r[f"{half}_words{s}"] = h["state"], h["out"], h["words"]
        r["fails_on"] = [h for h, _, _ in HALVES if r[h] not in ("holds", "not read")]
        r["reported"] = [w for w, on in (("saturation", r["saturated"] >= ro.SATURATED_SHARE),
                                         ("collapse", r["collapsed"] > 0)) if on]
        r["why"] = r["fails_on"] + r["reported"]
        r["footnote"] = footnote_words(r)
        rows.append(r)
    return rows


def footnote_words(r: dict[str, Any]) -> str:
    """A ``footnote_rows`` row's answer: "holds: ..." only where every head holds both halves at the checkpoint;
    else the half that failed first, at init and at the checkpoint, naming the heads outside the band: "fails on
    scale: at init every head near uniform (0.024 to 0.028), std 0.026 over the heads; at the checkpoint 3 of 4
    heads outside the band (head 0 saturating at 7.4; heads 2 and 3 near uniform at 0.4 and 0.39), std 0.945 over
    the heads; independence holds: ...". The values over the heads are their geometric means, reported."""
    def sat(s: str) -> str:
        share = r["saturated" + s]
        return f", {share:.1%} of its rows over 0.99" if share >= readings_of.SATURATED_SHARE else ""

    def number(v: float, fmt: str) -> str:
        return format(v, fmt) if np.isfinite(v) and not math.isnan(v) else "not read"

    def at(half: str, s: str) -> str:
        value = number(r[("ratio" if half == "independence" else "logit_std") + s], ".2f" if half == "independence"
                       else ".3g")
        return (f"{r[f'{half}_words{s}']}, {'ratio' if half == 'independence' else 'std'} {value} over the heads"
                + (sat(s) if half == "scale" else ""))

    words = {"independence": f"at the checkpoint {at('independence', '')}; at init {at('independence', '_init')}",
             "scale": f"at init {at('scale', '_init')}; at the checkpoint {at('scale', '')}"}
    failed = list(r["fails_on"])
    unread = [h for h in words if r[h] == "not read"]
    if len(failed) == 1:
        other = next(h for h in words if h not in failed)
        return f"fails on {failed[0]}: {words[failed[0]]}; {other} {r[other]}: {words[other]}"
    head = "fails on independence and scale: " if failed else f"not answered, {unread[0]} not read: " if unread \
        else "holds: "
    return head + "; ".join(f"{h} {w}" for h, w in words.items())
