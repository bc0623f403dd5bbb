"""``compare`` of two checkpoint reads (issue 55, item 10): is it the same model, and what moved per layer.

``model_mismatch(old, new)``: the model judged is named by what identifies it, not by where it was read from: the
built class and the sha256 of its config's content (``model.config_sha256``, its path left out) where both records
hold one, else the ``--model`` builder's name and its source's sha256. A trained read against a read of its own init
save, two byte-identical ``config.json`` files in two folders, is one model.

``checkpoint_moves(old, new)``: where both records hold Q3's ``checkpoint_readings`` (one row per which x layer x
head), each layer's readings at the checkpoint, old -> new, pooled over heads as Q3 pools them (the scaled logits'
std and the independence ratio as geometric means, the shares as means). Torch-free: the records' rows are read as
they are.
"""
from __future__ import annotations

import math
from typing import Any, Mapping

#: the per-layer readings compare prints: (column, header, pooling over heads, format)
COLUMNS = (("logit_std", "scaled logit std", "geo", "{:.3g}"),
           ("saturated_rows", "saturated rows", "mean", "{:.1%}"),
           ("entropy_ratio", "entropy/ln n", "mean", "{:.2f}"),
           ("sink_mass", "first-key weight", "mean", "{:.2f}"),
           ("independence_ratio", "indep. ratio", "geo", "{:.2f}"))


def _identity(model: Mapping[str, Any]) -> tuple[Any, ...]:
    if model.get("config_sha256"):
        return ("config", model.get("class"), model["config_sha256"])
    return ("builder", model.get("spec"), model.get("source_sha256"))


def _name(model: Mapping[str, Any] | None) -> str:
    if not model:
        return "this project's own model"
    sha = model.get("config_sha256") or model.get("source_sha256")
    what = "config" if model.get("config_sha256") else "source"
    return f"{model.get('spec')}" + (f" ({what} sha256 {sha[:12]})" if sha else "")


def model_mismatch(old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
    """The warning where the two records judged different models (``_identity``), else None."""
    models = [r.get("model") or None for r in (old, new)]
    if models[0] is None and models[1] is None:
        return None
    if models[0] is not None and models[1] is not None and _identity(models[0]) == _identity(models[1]):
        return None
    return f"different models judged: {_name(models[0])} against {_name(models[1])}; verdicts are not comparable"


def _readings(record: Mapping[str, Any]) -> list[Mapping[str, Any]] | None:
    rows = (((record.get("claims") or {}).get("Q3") or {}).get("tables") or {}).get("checkpoint_readings")
    return rows or None


def _pool(rows: list[Mapping[str, Any]], column: str, how: str) -> float:
    values = [float(r[column]) for r in rows if r.get(column) is not None]
    values = [v for v in values if math.isfinite(v) and (how != "geo" or v > 0)]
    if not values:
        return math.nan
    if how == "geo":
        return 2 ** (sum(math.log2(v) for v in values) / len(values))
    return sum(values) / len(values)


def per_layer(rows: list[Mapping[str, Any]], which: str = "checkpoint") -> dict[int, dict[str, float]]:
    """Layer -> each of ``COLUMNS``' readings, pooled over the layer's heads, for the rows of ``which``."""
    layers: dict[int, list[Mapping[str, Any]]] = {}
    for r in rows:
        if r.get("which") == which:
            layers.setdefault(int(r["layer"]), []).append(r)
    return {layer: {c: _pool(part, c, how) for c, _, how, _ in COLUMNS} for layer, part in sorted(layers.items())}


def _init_words(record: Mapping[str, Any]) -> str:
    init = ((record.get("model") or {}).get("weights") or {}).get("init")
    if not init:
        return "not recorded"
    return f"saved init {init.get('path')}" if init.get("source") == "saved" else \
        f"random draw (seed {init.get('seed')})"


def checkpoint_moves(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """The per-layer readings at the checkpoint, old -> new, as terminal lines ([] unless both records hold Q3's
    ``checkpoint_readings``): a header naming the weights read, one line a layer, a column only where both records
    hold it, the scaled logit std's factor beside it."""
    a, b = _readings(old), _readings(new)
    if a is None or b is None:
        return []
    pa, pb = per_layer(a), per_layer(b)
    weights = [((r.get("model") or {}).get("weights") or {}).get("path", "?") for r in (old, new)]
    out = [f"Q3's checkpoint readings per layer, old -> new (heads pooled as Q3 pools them: the std and the ratio as "
           f"geometric means, the shares as means): old weights {weights[0]} (at init: {_init_words(old)}), new "
           f"weights {weights[1]} (at init: {_init_words(new)})"]
    shown = [c for c in COLUMNS if any(math.isfinite(v[c[0]]) for v in pa.values())
             and any(math.isfinite(v[c[0]]) for v in pb.values())]
    cells = []
    for layer in sorted(set(pa) | set(pb)):
        row = [str(layer)]
        for column, _, _, fmt in shown:
            x, y = (p.get(layer, {}).get(column, math.nan) for p in (pa, pb))
            text = f"{fmt.format(x) if math.isfinite(x) else '-'} -> {fmt.format(y) if math.isfinite(y) else '-'}"
            if column == "logit_std" and math.isfinite(x) and math.isfinite(y) and x > 0:
                text += f" (x{y / x:.3g})"
            row.append(text)
        cells.append(row)
    head = ["layer"] + [h for _, h, _, _ in shown]
    widths = [max(len(r[i]) for r in [head] + cells) for i in range(len(head))]
    out += ["  ".join(v.rjust(w) if i == 0 else v.ljust(w) for i, (v, w) in enumerate(zip(r, widths))).rstrip()
            for r in [head] + cells]
    if set(pa) != set(pb):
        out.append(f"the two reads have different layers ({len(pa)} against {len(pb)}): '-' where one has none")
    return out
