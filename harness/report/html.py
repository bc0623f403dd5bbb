"""results.json -> one self-contained index.html (issue 4). Rendering only: no verdict logic here.

``python -m harness.report reports/results.json`` rebuilds the page without rerunning anything;
``... compare OLD NEW`` prints what moved between two runs; ``... findings RESULTS [--write README.md]`` prints the
findings table (``harness.report.findings``, the summary's effects in words) as Markdown.

The page embeds everything (CSS inline, figures as base64 PNG) and fetches nothing. Every string
from data goes through jinja2 autoescape, so a statement like ``<script>`` renders as text.

Optional inputs found beside results.json in the report dir:

* ``benchmark*.json`` — pytest-benchmark JSON (``--benchmark-json``, R3 / issue 9): a table of the
  benchmarks and a time-against-n plot (n from ``params["n"]`` or ``extra_info["n"]``).
* ``sensitivity.json`` — the fault-injection matrix (issues 10, 20), written by ``harness.suite.sensitivity``::

      {"claims": ["C1", ...],                               # the matrix's columns
       "no_fault": {"C1": "supported", ...},                # the reference verdicts (master seed 0)
       "faults": {"<fault>": {"expected": ["R1", ...],      # claim ids that must be refuted
                              "caught": [...], "weak": [...],   # refuted / only inconclusive
                              "verdicts": {"R1": "refuted", ...}, # every claim's verdict under the fault
                              "cells": {"R1": "caught", ...},     # caught|weak|missed|kept|side effect|moved
                              "side_effects": {cid: reason}, "description": "...", "duration_s": 1.0}},
       "sensitivity": 1.0, "specificity": 1.0, "counts": {...}, "stability": {...},
       "flaky": [{"fault": "<fault>" | null, "master_seed": 0, "claim": "C2", "cell": "kept", "why": "..."}]}
                                                            # cells with a firmness < 0.9 (issue 25)

  rendered as the fault x claim matrix.
"""
from __future__ import annotations

import argparse
import base64
import io
import json
import math
import re
import sys
from pathlib import Path
from typing import Any, Mapping

import jinja2

from harness.record import baseline as baseline_gate
from harness import fp_path
from harness.report import findings
from harness.record import results as results_io
from harness.record import verdict as verdicts

# The note's items, so the page can say which of them this run did not reach (not a verdict source).
NOTE_ITEMS = {
    "C1": "Attention alone suffices for sequence transduction",
    "C2": "Relating two positions in O(1) operations helps long-range dependency",
    "C3": "Unscaled dot products saturate the softmax at large d_k",
    "C4": "1/√d_k is the right scale",
    "C5": "Multi-head attention recovers resolution lost to averaging",
    "R1": "Scale dot-product attention by 1/√d_k",
    "R2": "When a compatibility function's magnitude grows with a dimension, check what that does to the softmax's gradients",
    "R3": "Prefer the operation that maps to optimized matmul",
    "Q1": "Does QK-norm fix the problem the scaling fixes, and does the scaling still earn its place?",
    "Q2": "Is 'reduced effective resolution due to averaging' what the entropy-collapse and attention-sink literature measures?",
    "Q3": "Does the variance argument, true at initialization, hold after training?",
}
MAX_TABLE_ROWS = 200
_BADGE = {verdicts.SUPPORTED: "ok", verdicts.REFUTED: "bad", verdicts.INCONCLUSIVE: "meh", verdicts.ERROR: "err"}


def fmt(value: Any) -> str:
    """Numbers to 4 significant digits, pairs as [lo, hi], missing as an em dash."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        return f"{value:.4g}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(fmt(v) for v in value) + "]"
    if isinstance(value, dict):
        return ", ".join(f"{k}: {fmt(v)}" for k, v in value.items())
    return str(value)


def natural_key(name: str) -> list:
    """'ratio/64' < 'ratio/128' < 'ratio/256': numbers inside names compare as numbers."""
    return [(0, int(tok), "") if tok.isdigit() else (1, 0, tok) for tok in re.split(r"(\d+)", str(name)) if tok]


#: A question's yes and no are both answers: one neutral badge, never the colours of a pass or a failure.
_ANSWERS = {verdicts.QUESTION_LABELS[verdicts.SUPPORTED], verdicts.QUESTION_LABELS[verdicts.REFUTED]}


def badge_class(verdict: str | None) -> str:
    if verdict in _ANSWERS:
        return "answer"
    return _BADGE.get(verdicts.canonical(verdict) if verdict else None, "none")


def slug(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in str(text))


def _png_data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def embed_figure(report_dir: Path, rel: str) -> str | None:
    """A figure file as a data URI; only PNGs inside the report dir (data never names other files)."""
    root = report_dir.resolve()
    path = (root / rel).resolve()
    if path.suffix.lower() != ".png" or not path.is_relative_to(root) or not path.is_file():
        return None
    return _png_data_uri(path.read_bytes())


def _table(records: Any) -> dict[str, Any]:
    rows = records if isinstance(records, list) else []
    columns: list[str] = []
    for r in rows:
        for k in (r if isinstance(r, dict) else {}):
            if k not in columns:
                columns.append(k)
    shown = rows[:MAX_TABLE_ROWS]
    return {"columns": columns, "rows": [[r.get(c) for c in columns] for r in shown if isinstance(r, dict)],
            "truncated": max(0, len(rows) - len(shown)), "n_rows": len(rows)}


def _figure_png(plot) -> str:
    """Render with the Agg canvas directly (no pyplot state, no GUI backend) and return a data URI."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4))
    FigureCanvasAgg(fig)
    plot(fig.add_subplot(1, 1, 1))
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    return _png_data_uri(buf.getvalue())


def load_benchmarks(report_dir: Path) -> list[dict[str, Any]]:
    """pytest-benchmark JSON files in the report dir, each with a table and (if n is known) a plot."""
    out = []
    for path in sorted(report_dir.glob("benchmark*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            benches = data["benchmarks"]
            rows = []
            for b in benches:
                st, params = b.get("stats", {}), b.get("params") or {}
                n = params.get("n", (b.get("extra_info") or {}).get("n"))
                series = b.get("group") or b.get("name", "?").split("[")[0]
                other = {k: v for k, v in params.items() if k != "n"}
                if other:
                    series += " " + ", ".join(f"{k}={v}" for k, v in sorted(other.items()))
                rows.append({"name": b.get("name", "?"), "series": series, "n": n, "mean": st.get("mean"),
                             "stddev": st.get("stddev"), "median": st.get("median"), "min": st.get("min"),
                             "rounds": st.get("rounds"), "extra": b.get("extra_info") or {}})
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            out.append({"file": path.name, "error": f"not a pytest-benchmark JSON ({type(exc).__name__}: {exc})"})
            continue
        plot = None
        by_series: dict[str, list[tuple[float, float]]] = {}
        for r in rows:
            if isinstance(r["n"], (int, float)) and isinstance(r["mean"], (int, float)):
                by_series.setdefault(r["series"], []).append((r["n"], r["mean"]))
        if by_series:
            def draw(ax, by_series=by_series):
                for name, pts in sorted(by_series.items()):
                    pts.sort()
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name)
                ax.set_xscale("log", base=2)
                ax.set_yscale("log")
                ax.set_xlabel("sequence length n")
                ax.set_ylabel("mean time per call (s)")
                ax.set_title("Time against n")
                ax.legend(fontsize=8)
                ax.grid(True, which="both", alpha=0.3)
            plot = _figure_png(draw)
        out.append({"file": path.name, "rows": rows, "plot": plot, "datetime": data.get("datetime"),
                     "machine": (data.get("machine_info") or {}).get("cpu", {}).get("brand_raw")})
    return out


def load_sensitivity(report_dir: Path, claim_ids: list[str]) -> dict[str, Any] | None:
    """sensitivity.json as a fault x claim matrix (schema in the module docstring)."""
    path = report_dir / "sensitivity.json"
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        faults = data["faults"]
        columns = sorted(data.get("claims") or {c for f in faults.values() for c in f["cells"]},
                         key=results_io.claim_sort_key)
        rows = []
        for name, f in faults.items():
            cells = [{"state": f["cells"].get(cid, ""), "verdict": f["verdicts"].get(cid),
                      "reason": (f.get("side_effects") or {}).get(cid, "")} for cid in columns]
            rows.append({"fault": name, "description": f.get("description", ""), "cells": cells,
                         "duration_s": f.get("duration_s")})
        expected = sum(len(f["expected"]) for f in faults.values())
        caught = sum(len(f["caught"]) for f in faults.values())
        return {"columns": columns, "rows": rows, "computed": caught / expected if expected else None,
                "stored": data.get("sensitivity"), "specificity": data.get("specificity"),
                "counts": data.get("counts") or {}, "stability": data.get("stability") or {},
                "no_fault": data.get("no_fault") or {}, "not_in_matrix": data.get("not_in_matrix") or [],
                "flaky": data.get("flaky") or [],
                "mismatch": data.get("sensitivity") is not None and expected > 0
                and abs(data["sensitivity"] - caught / expected) > 1e-9,
                "extra_columns": [c for c in columns if c not in claim_ids]}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        return {"error": f"sensitivity.json is malformed or of an older schema ({type(exc).__name__}: {exc}); "
                         "rerun `python -m harness.suite.sensitivity --jobs 2`"}


# What the verdict box says before listing the criteria ``verdict.deciding_criteria`` picks.
_DECIDING_LEAD = {
    verdicts.REFUTED: "Refuted by:",
    verdicts.INCONCLUSIVE: "Left open by:",
    verdicts.SUPPORTED: "Every counted criterion passed; the least firm:",
}


def move_view(row: Mapping[str, Any]) -> dict[str, Any]:
    """One row of ``baseline.moves`` as display text (shared by the page, the compare page and its text)."""
    def side(value: Any, other: Any) -> str:
        if row["what"] != "criterion":
            return fmt(value)
        text = value.get("outcome") or "—"
        if value.get("fingerprint") != other.get("fingerprint") and value.get("fingerprint"):
            text += f"; definition {value['fingerprint']}"
        return text

    note = ""
    if row["what"] == "metric" and row.get("tolerance") is not None:
        direction = {"higher": "higher is better", "lower": "lower is better", "both": "must not move"}
        note = (f"tolerance ±{fmt(row['tolerance'])}{' relative' if row.get('relative') else ''}, "
                f"{direction.get(row.get('direction'), row.get('direction'))}")
    if row["what"] == "criterion":
        note = row.get("evidence") or ""
    return {**row, "old_text": side(row["old"], row["new"]), "new_text": side(row["new"], row["old"]), "note": note}


def build_context(results: Mapping[str, Any], report_dir: Path) -> dict[str, Any]:
    claims = []
    for cid, c in results["claims"].items():
        head = c.get("headline")
        deciding, more = verdicts.deciding_criteria(c)
        claims.append({
            **c,
            "title": findings.strip_own_id(cid, c.get("title")),
            "statement": findings.strip_own_id(cid, c.get("statement")),
            "effect_text": findings.deciding_effect(c),
            "anchor": "claim-" + slug(cid),
            "badge": badge_class(c["verdict"]),
            "headline_text": f"{head} = {fmt(c['metrics'].get(head))}" if head else "—",
            "figures_embedded": [{"path": f, "uri": embed_figure(report_dir, f)} for f in c.get("figures", [])],
            "tables_view": {name: _table(t) for name, t in (c.get("tables") or {}).items()},
            "metrics_sorted": sorted(c["metrics"].items(), key=lambda kv: natural_key(kv[0])),
            "notes": c.get("notes") or [],
            "regression": c.get("regression"),
            "fragile": verdicts.fragile(c.get("firmness")),
            "firmness_text": verdicts.firmness_text(c, len(c["seeds"]) if c.get("seeds") else None),
            "deciding": [{**k, "effect_text": findings.effect_text(k)} for k in deciding],
            "deciding_more": more,
            "deciding_lead": _DECIDING_LEAD.get(verdicts.canonical(c["verdict"]), ""),
            # results.json written before the objections existed: rebuilt from the record (firmness, ceiling)
            "objections": c.get("objections") or verdicts.objections(c),
        })
    verdict_by_id = {cid: c["verdict"] for cid, c in results["claims"].items()}
    run = results["run"]
    moves = None
    if run.get("baseline"):
        moves = [move_view(m) for m in baseline_gate.moves(results["claims"])]
    return {
        "run": run,
        "attention": results.get("attention"),
        "claims": claims,
        "moves": moves,
        "moves_regressed": sum(1 for m in moves or () if m["regressed"]),
        "moves_unstable": sum(1 for m in moves or () if m["status"] == "unstable"),
        "other_path": fp_path.mismatch(results["run"], {"fp_path": results["run"].get("baseline_fp_path")})
        if results["run"].get("baseline") else None,
        "gated": any(c.get("regression") for c in claims),
        "not_run": [(cid, text) for cid, text in NOTE_ITEMS.items() if cid not in results["claims"]],
        "practices": [{**p, "badge_verdicts": {cid: badge_class(v if v != "not run" else None)
                                               for cid, v in p["verdicts"].items()}}
                      for p in verdicts.practice_dispositions(verdict_by_id)],
        "benchmarks": load_benchmarks(report_dir),
        "sensitivity": load_sensitivity(report_dir, list(results["claims"])),
        "run_items": [(k, v) for k, v in run.items() if k != "skipped"],
        "how_decided": verdicts.HOW_VERDICTS_ARE_DECIDED,
    }


_CSS = """
body{font-family:-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:0;color:#1d2329;background:#f6f7f9;line-height:1.45}
.layout{display:flex;align-items:flex-start;max-width:1480px;margin:0 auto}
nav.contents{position:sticky;top:0;flex:0 0 232px;max-height:100vh;overflow-y:auto;box-sizing:border-box;padding:18px 10px 18px 16px;font-size:.88em}
nav.contents ol{list-style:none;margin:0;padding:0}nav.contents li{margin:1px 0}
nav.contents a{display:block;padding:2px 6px;border-radius:4px;color:#1d2329;text-decoration:none}nav.contents a:hover{background:#e3e7ec}
nav.contents .cid{display:inline-block;min-width:2.6em;font-weight:600}nav.contents .group{margin:10px 0 2px 6px;color:#5b6672;font-size:.85em;text-transform:uppercase;letter-spacing:.04em}
nav.contents .title{font-weight:700;margin:0 0 8px 6px}
main{flex:1 1 auto;min-width:0;max-width:1180px;padding:24px 28px 60px;background:#fff;min-height:100vh;box-sizing:border-box}
@media (max-width:900px){.layout{display:block}nav.contents{position:static;max-height:none;border-bottom:1px solid #e3e7ec;background:#fff}
nav.contents ol{columns:2}main{padding:16px 12px 40px}}
h1{font-size:1.6em;margin:0 0 4px}h2{font-size:1.25em;margin:34px 0 10px;border-bottom:2px solid #e3e7ec;padding-bottom:4px}
h3{font-size:1.05em;margin:18px 0 6px}
section{scroll-margin-top:8px}
.sub{color:#5b6672;margin:0 0 16px}
table{border-collapse:collapse;width:100%;margin:8px 0 14px;font-size:.92em}
th,td{border:1px solid #dde2e8;padding:5px 8px;text-align:left;vertical-align:top;overflow-wrap:break-word}
th{background:#f0f3f6;font-weight:600}
td.num,table.data td{font-variant-numeric:tabular-nums;white-space:nowrap}td.id{white-space:nowrap;font-weight:600}
td.val{font-variant-numeric:tabular-nums;min-width:9em;overflow-wrap:anywhere}td.effect{min-width:16em;font-variant-numeric:tabular-nums}td.text{min-width:16em}
table.summary .fragile{white-space:normal;display:inline-block}
.scroll{overflow-x:auto;max-width:100%}.scroll table.data{width:auto;min-width:40%}
.badge{display:inline-block;padding:1px 9px;border-radius:10px;font-size:.85em;font-weight:600;color:#fff;white-space:nowrap;-webkit-print-color-adjust:exact;print-color-adjust:exact}
.badge.answer{background:#3f5f8a}.badge.ok{background:#2e7d32}.badge.bad{background:#c62828}.badge.meh{background:#b7791f}.badge.err{background:#6a1b9a}.badge.none{background:#8a949e}
.banner{padding:10px 14px;border-radius:6px;margin:10px 0;font-weight:600}
.banner.bad{background:#fdecea;color:#8e1c1c;border:1px solid #f5c2c0}.banner.warn{background:#fff6e0;color:#7a5300;border:1px solid #f3dc9c}
.banner.info{background:#e8f1fb;color:#1d4f84;border:1px solid #bcd6f2}.banner.good{background:#e9f6ea;color:#1e5b22;border:1px solid #b9dfbc}
.verdict{border:1px solid #dde2e8;border-left:6px solid #8a949e;border-radius:4px;padding:8px 14px;margin:10px 0 12px;background:#fafbfc}
.verdict.answer{border-left-color:#3f5f8a}.verdict.ok{border-left-color:#2e7d32}.verdict.bad{border-left-color:#c62828}.verdict.meh{border-left-color:#b7791f}.verdict.err{border-left-color:#6a1b9a}
.verdict p{margin:2px 0}.verdict ul{margin:4px 0 2px;padding-left:20px}.verdict li{margin:2px 0}
blockquote{margin:6px 0 10px;padding:6px 12px;border-left:4px solid #9fb3c8;background:#f7f9fb;font-style:italic}
table.objections{font-size:.9em;margin:6px 0 10px}table.objections td:first-child{min-width:16em}
.obj-answered{color:#1a7f37;white-space:nowrap}.obj-open{color:#9a6700;font-weight:600;white-space:nowrap}.obj-not-applicable{color:#5b6672;white-space:nowrap}
.limitation{background:#fffaf0;border-left:4px solid #e0b050;padding:6px 12px;margin:8px 0}
.claim{border-top:1px solid #e3e7ec;margin-top:26px}
.meta{color:#5b6672;font-size:.9em}.back{font-size:.85em;margin:10px 0 0}
figure{margin:10px 0;display:inline-block;max-width:100%}figure img{max-width:100%;border:1px solid #e3e7ec}
figcaption{font-size:.85em;color:#5b6672}
pre{background:#f7f7f9;padding:8px;overflow-x:auto;white-space:pre-wrap}
details.evidence{border:1px solid #e3e7ec;border-radius:4px;margin:6px 0;padding:0 10px}
details.evidence>summary{cursor:pointer;padding:5px 0;font-weight:600}details.evidence[open]>summary{border-bottom:1px solid #e3e7ec;margin-bottom:6px}
.cell-caught{background:#d9f2dc;text-align:center}.cell-missed,.cell-moved{background:#f9d6d5;text-align:center;font-weight:700}
.cell-weak,.cell-side-effect{background:#fff0c9;text-align:center}.cell-kept,.cell-{color:#aab;text-align:center}
.pass{color:#2e7d32;font-weight:700}.fail{color:#c62828;font-weight:700}.unk{color:#8a949e}
.fragile{color:#8a4b00;background:#fff0d6;border:1px solid #f0c070;border-radius:4px;padding:0 6px;font-size:.85em;font-weight:600;white-space:nowrap}
table.criteria td.name{min-width:10em;font-weight:600}table.criteria td.rule{min-width:9em}
table.criteria tr.text td{border-top:none;background:#fcfcfd;font-size:.92em}table.criteria tr.head td{border-bottom:none}
table.criteria .test{color:#3d4750}tr.regressed td{background:#fdf1f0}
ol.how li{margin:4px 0}
dl.run{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;font-size:.92em}dl.run dt{font-weight:600}dl.run dd{margin:0;overflow-wrap:anywhere}
@media print{
@page{margin:12mm}
body{background:#fff;font-size:10pt;line-height:1.3}
.layout{display:block;max-width:none}nav.contents,.back{display:none}main{max-width:none;padding:0;min-height:0}
a{color:inherit;text-decoration:none}
h2,h3{break-after:avoid}.claim{margin-top:14px}
table{font-size:8.5pt}th,td{padding:2px 4px}table.data td{white-space:normal}
td.name,td.val,td.text{overflow-wrap:anywhere}table.criteria td.num{white-space:normal}.base{display:none}
table.criteria tr.text td{font-size:7.5pt;line-height:1.25}ul{padding-left:18px}li{margin:1px 0}.claim>ul{font-size:9pt}
table.criteria tbody,tr,figure,.verdict{break-inside:avoid}
.scroll{overflow:visible}
figure{margin:4px 6px 4px 0}figure img{max-height:6.5cm}figcaption{font-size:7pt}
details.evidence{border:none;padding:0;margin:2px 0}
details.evidence:not([open])>summary{list-style:none;font-weight:400;font-size:.85em;color:#5b6672;padding:0}
details.evidence:not([open])>summary::-webkit-details-marker{display:none}
details.evidence:not([open])>summary::after{content:" (collapsed in the HTML page; not printed)"}
}
"""

_MACROS = r"""
{% macro badge(verdict, cls) %}<span class="badge {{ cls }}">{{ verdict }}</span>{% endmacro %}
{% macro moves_table(moves, link_claims, not_run) %}
{% if moves %}
<div class="scroll"><table class="moves"><thead><tr><th>claim</th><th>what</th><th>name</th><th>baseline</th><th>this run</th><th>status</th></tr></thead><tbody>
{% for m in moves %}<tr{% if m.regressed %} class="regressed"{% endif %}><td class="id">{% if link_claims %}<a href="#claim-{{ slug(m.claim) }}">{{ m.claim }}</a>{% else %}{{ m.claim }}{% endif %}</td><td>{{ m.what }}</td><td class="text">{{ m.name }}</td>
<td>{{ m.old_text }}</td><td>{{ m.new_text }}</td><td>{% if m.regressed %}<span class="fail">{{ m.status }}</span>{% else %}{{ m.status }}{% endif %}{% if m.note %}<br><span class="meta">{{ m.note }}</span>{% endif %}</td></tr>
{% endfor %}</tbody></table></div>
{% else %}
<div class="banner good">Nothing moved: every verdict, every criterion's outcome and definition, and every gated metric match the baseline.</div>
{% endif %}
{% if not_run %}<p class="meta">In the baseline, not run: {{ not_run | join(", ") }}.</p>{% endif %}
{% endmacro %}
{% macro data_table(t) %}<div class="scroll"><table class="data"><thead><tr>{% for col in t.columns %}<th>{{ col }}</th>{% endfor %}</tr></thead><tbody>
{% for row in t.rows %}<tr>{% for v in row %}<td>{{ fmt(v) }}</td>{% endfor %}</tr>{% endfor %}</tbody></table></div>
{% if t.truncated %}<p class="meta">{{ t.truncated }} more rows in results.json.</p>{% endif %}{% endmacro %}
"""

_TEMPLATE = r"""{% from "macros" import badge, moves_table, data_table %}<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>attention-claims report — {{ run.profile }}{% if attention %} — {{ attention.name }}{% endif %}</title>
<style>{{ css | safe }}</style></head>
<body><div class="layout">
<nav class="contents" id="contents" aria-label="Contents"><p class="title"><a href="#summary">Contents</a></p><ol>
<li><a href="#summary">Summary</a></li>
{% if moves is not none %}<li><a href="#against-baseline">Against the baseline ({{ moves | length }} moved)</a></li>{% endif %}
<li><a href="#bearing">Bearing on the record</a></li>
<li class="group">Claims</li>
{% for c in claims %}<li><a href="#{{ c.anchor }}"><span class="cid">{{ c.id }}</span> {{ badge(c.verdict, c.badge) }}</a></li>{% endfor %}
{% if benchmarks or sensitivity %}<li class="group">Suite</li>{% endif %}
{% if benchmarks %}<li><a href="#benchmarks">R3 benchmarks</a></li>{% endif %}
{% if sensitivity %}<li><a href="#sensitivity">Fault injection</a></li>{% endif %}
<li><a href="#run">Run</a></li>
</ol></nav>
<main>
<h1>attention-claims: <i>Attention Is All You Need</i>, checked{% if attention %} on <code>{{ attention.name }}</code>{% endif %}</h1>
{% if attention %}<div class="banner info">Attention on trial: <code>{{ attention.name }}</code> ({{ attention.convention }} convention, dtypes {{ attention.dtypes | join(", ") }}{% if attention.rejected_dtypes %}; rejected at pre-flight: {{ attention.rejected_dtypes | join(", ") }}{% endif %}{% if attention.source_sha256 %}; source sha256 {{ attention.source_sha256[:12] }}{% endif %}). M0, R1, R2 and R3 judged this kernel; the other claims judge this project's model with its dot-product attention calling it.</div>{% endif %}
<p class="sub">Claims, recommendations and open questions of NOTE-011, each measured in this run against criteria written before the measurement.
Profile <b>{{ run.profile }}</b> on <b>{{ run.device }}</b>, seeds {{ fmt(run.seeds) }}, started {{ run.started_at }}, {{ fmt(run.duration_s) }} s.</p>
{% if not run.complete %}<div class="banner bad">INCOMPLETE RUN: interrupted or stopped early{% if run.stopped %} ({{ run.stopped }}){% endif %}. Claims that did not finish are missing or marked as errors.</div>{% endif %}
{% if run.inject_fault %}<div class="banner warn">FAULT INJECTED: <code>{{ run.inject_fault }}</code>. The model was deliberately broken for this run; verdicts measure the suite's sensitivity, not the paper.</div>{% endif %}
{% if run.fast %}<div class="banner info">Fast mode: only each claim's fast criteria were run and judged.</div>{% endif %}
{% if run.dry_run %}<div class="banner warn">DRY RUN: no verdicts. Every config of profile {{ run.profile }} was built at its real sizes and trained for a few steps on two seeds, to prove the code paths; the verdicts and numbers below mean nothing.</div>{% endif %}
{% if run.baseline %}<div class="banner info">Gated against baseline <code>{{ run.baseline }}</code> (profile {{ run.baseline_profile }}{% if run.baseline_git_commit %}, commit {{ run.baseline_git_commit[:10] }}{% endif %}): <a href="#against-baseline">{% if moves %}{{ moves | length }} moved{% if moves_regressed %}, {{ moves_regressed }} regressed{% endif %}{% if moves_unstable %}, {{ moves_unstable }} unstable (shown, not gated){% endif %}{% else %}nothing moved{% endif %}</a>.{% if other_path %} {{ other_path[:1] | upper }}{{ other_path[1:] }}.{% endif %}</div>{% endif %}

<section id="summary">
<h2>Summary</h2>
<div class="scroll"><table class="summary"><thead><tr><th>id</th><th>statement</th><th>strength</th><th>verdict</th><th>firmness</th><th>the effect that decided it</th>{% if gated %}<th>vs baseline</th>{% endif %}<th>time</th></tr></thead><tbody>
{% for c in claims %}<tr><td class="id"><a href="#{{ c.anchor }}">{{ c.id }}</a></td><td class="text">{{ c.statement or c.title }}</td><td>{{ c.strength }}</td>
<td>{{ badge(c.verdict, c.badge) }}</td><td>{% if c.fragile %}<span class="fragile">{{ c.firmness_text }}</span>{% else %}{{ c.firmness_text }}{% endif %}</td><td class="effect">{{ c.effect_text }}</td>
{% if gated %}<td>{% if c.regression %}{% if c.regression.regressed %}<span class="fail">REGRESSED</span>{% else %}{{ c.regression.status }}{% endif %}{% endif %}</td>{% endif %}
<td class="num">{{ fmt(c.duration_s) }} s{% if c.budget_s %}<br><span class="meta{% if c.duration_s > c.budget_s %} fail{% endif %}">of {{ fmt(c.budget_s) }} s</span>{% endif %}</td></tr>
{% else %}<tr><td colspan="8">No claim was recorded in this run.</td></tr>{% endfor %}
</tbody></table></div>
<h3 id="how-decided">How verdicts are decided</h3>
<ol class="how">{% for p in how_decided %}<li>{{ p }}</li>{% endfor %}</ol>
{% if not_run %}<p class="meta">Not run in this session: {% for cid, text in not_run %}<b>{{ cid }}</b> ({{ text }}){% if not loop.last %}; {% endif %}{% endfor %}.</p>{% endif %}
{% if run.skipped %}<p class="meta">Skipped: {% for s in run.skipped %}{{ s.nodeid }} — {{ s.reason }}{% if not loop.last %}; {% endif %}{% endfor %}</p>{% endif %}
</section>

{% if moves is not none %}<section id="against-baseline">
<h2>Against the baseline</h2>
<p class="meta">Every verdict, criterion outcome or definition (its fingerprint: kind, metric, arms, margin, alpha, counts) and gated metric (beyond its tolerance) that differs from <code>{{ run.baseline }}</code>, old beside new; the same comparison as the gate's, and as <code>python -m harness.report compare OLD NEW</code> prints.</p>
{{ moves_table(moves, true, run.baseline_not_run) }}
<p class="back"><a href="#summary">↑ summary</a></p>
</section>{% endif %}

<section id="bearing">
<h2>Bearing on the record</h2>
<p class="meta">The practice this note is the source for, with its disposition as this run's verdicts give it: confirmed if every deciding claim is supported, not confirmed if any is refuted, open otherwise.</p>
<table><thead><tr><th>practice</th><th>the note says</th><th>deciding claims (this run)</th><th>this run</th></tr></thead><tbody>
{% for p in practices %}<tr><td><b>{{ p.id }}</b> {{ p.practice }}</td><td>{{ p.note_disposition }}</td>
<td>{% for cid, v in p.verdicts.items() %}{{ cid }} {{ badge(v, p.badge_verdicts[cid]) }}{% if not loop.last %}&nbsp; {% endif %}{% endfor %}</td>
<td><b>{{ p.disposition }}</b></td></tr>{% endfor %}
</tbody></table>
</section>

{% for c in claims %}
<section class="claim" id="{{ c.anchor }}">
<h2>{{ c.id }} — {{ c.title or c.statement }} {{ badge(c.verdict, c.badge) }}</h2>
<div class="verdict {{ c.badge }}">
<p><b>Verdict: {{ c.verdict }}</b>, {% if c.fragile %}<span class="fragile">{{ c.firmness_text }}</span>{% else %}{{ c.firmness_text }}{% endif %}.</p>
{% if c.error %}<p>The module crashed; the error is below.</p>
{% elif c.deciding %}<p>{{ c.deciding_lead }}</p><ul>
{% for k in c.deciding %}<li><b>{{ k.name }}</b>: {% if k.recorded is defined and not k.recorded %}never recorded{% else %}{{ k.outcome or "not judged" }}{% if k.short_of_margin %} (smaller than the margin){% endif %}{% endif %}: {{ k.effect_text }}; δ = {{ fmt(k.measured) }}{% if k.ci %}, interval {{ fmt(k.ci) }}{% endif %} against {{ k.kind }} {{ fmt(k.threshold) }}{% if k.p_value is not none %}, Holm p = {{ fmt(k.p_value) }}{% endif %}{% if k.firmness is not none %}, firmness {{ fmt(k.firmness) }}{% endif %}.</li>
{% endfor %}</ul>{% if c.deciding_more %}<p class="meta">and {{ c.deciding_more }} more in the criteria table below.</p>{% endif %}
{% else %}<p>No counted criterion: nothing can support this claim.</p>{% endif %}
{% if c.scope %}<p><b>Scope</b> (where its parts disagree): {{ c.scope }}</p>{% endif %}
{% if c.regression and c.regression.regressed %}<div class="banner bad">Regressed against the baseline:<ul>{% for r in c.regression.reasons %}<li>{{ r }}</li>{% endfor %}</ul></div>{% endif %}
</div>
<table class="objections"><thead><tr><th>a reviewer asks</th><th>here</th><th>how</th></tr></thead><tbody>
{% for o in c.objections %}<tr><td>{{ o.question }}</td><td class="obj-{{ o.status | replace(' ', '-') }}">{{ o.status }}</td><td>{{ o.how }}</td></tr>{% endfor %}
</tbody></table>
<blockquote>{{ c.statement }}</blockquote>
<p class="meta">{{ c.kind or "claim" }} · strength in the note: <b>{{ c.strength }}</b> · {{ fmt(c.duration_s) }} s{% if c.device %} · {{ c.device }}{% endif %}{% if c.seeds %} · seeds {{ fmt(c.seeds) }}{% endif %}{% if c.module %} · <code>{{ c.module }}</code>{% endif %}{% if c.headline %} · headline metric <code>{{ c.headline_text }}</code>{% endif %}</p>
{% if c.error %}<div class="banner bad">Error: <pre>{{ c.error }}</pre></div>{% endif %}
<h3>Criteria (stated before measuring)</h3>
{% set ncol = 8 if c.regression else 7 %}
<div class="scroll"><table class="criteria"><thead><tr><th>criterion</th><th>rule</th><th>δ measured</th><th>90% interval</th><th>p (support / Holm refute)</th><th>outcome</th><th>firmness</th>{% if c.regression %}<th class="base">baseline</th>{% endif %}</tr></thead>
{% for k in c.criteria %}<tbody><tr class="head"><td class="name">{{ k.name }}{% if k.counts is defined and not k.counts %}<br><span class="meta">(reported, not counted)</span>{% endif %}{% if k.fast %}<br><span class="meta">(fast)</span>{% endif %}</td>
<td class="rule"><b>{{ k.kind }}</b>: {{ fmt(k.threshold) }}</td><td class="val">{{ fmt(k.measured) }}{% if k.deciding_part %}<br><span class="meta">at {{ k.deciding_part }}</span>{% endif %}</td>
<td class="num">{{ fmt(k.ci) }}{% if k.refute_level %}<br><span class="meta">refutation at α_i = {{ fmt(k.refute_level) }}</span>{% endif %}</td><td class="num">{{ fmt(k.p_value) }}</td>
<td>{% if k.recorded is defined and not k.recorded %}<span class="unk">never recorded</span>{% elif k.refuted %}<span class="fail">refuted</span>{% elif k.passed %}<span class="pass">passed</span>{% else %}<span class="unk">inconclusive{% if k.short_of_margin %} (smaller than the margin){% endif %}</span>{% endif %}{% if k.parts %}<br><span class="meta">{% for p in k.parts %}{{ p.label }}: {{ p.outcome }}{% if not loop.last %}; {% endif %}{% endfor %}</span>{% endif %}</td>
<td class="num">{{ fmt(k.firmness) }}{% if k.firmness is none and k.firmness_reason %}<br><span class="meta">{{ k.firmness_reason }}</span>{% endif %}{% if k.seeds_for_firm %}<br><span class="meta">firm at ~{{ k.seeds_for_firm }} seeds</span>{% endif %}</td>
{% if c.regression %}{% set g = c.regression.criteria | selectattr("name", "equalto", k.name) | first %}<td class="base">{% if g %}{{ g.baseline_outcome or "—" }} ({{ g.status }}){% endif %}</td>{% endif %}</tr>
<tr class="text"><td colspan="{{ ncol }}">{{ k.prediction }}{% if k.arms %}<br><span class="meta">a − b: {{ k.arms | join(" − ") }}; metric: {{ k.metric }}</span>{% elif k.metric %}<br><span class="meta">metric: {{ k.metric }}</span>{% endif %}{% if k.detail %}<br><span class="meta">{{ k.detail }}</span>{% endif %}{% if k.decision_note %}<br><span class="meta">{{ k.decision_note }}</span>{% endif %}{% if k.margin_reason %}<br><span class="meta">margin: {{ k.margin_reason }}</span>{% endif %}{% if k.test %}<br><span class="test"><b>test:</b> {{ k.test }}</span>{% endif %}</td></tr></tbody>
{% else %}<tbody><tr><td colspan="{{ ncol }}">No criterion was declared.</td></tr></tbody>{% endfor %}
</table></div>
{% for f in c.figures_embedded %}<figure>{% if f.uri %}<img src="{{ f.uri }}" alt="{{ f.path }}">{% else %}<div class="banner warn">figure missing: {{ f.path }}</div>{% endif %}<figcaption>{{ f.path }}</figcaption></figure>{% endfor %}
{% if c.notes %}<h3>Notes</h3><ul>{% for n in c.notes %}<li>{{ n }}</li>{% endfor %}</ul>{% endif %}
{% if c.limitation %}<div class="limitation"><b>The note's limitation that bears on it:</b> {{ c.limitation }}</div>{% endif %}
{% if c.metrics_sorted %}<details class="evidence"><summary>Metrics ({{ c.metrics_sorted | length }})</summary><div class="scroll"><table><thead><tr><th>metric</th><th>value</th>{% if c.regression %}<th>baseline</th><th>gate</th>{% endif %}</tr></thead><tbody>
{% for name, value in c.metrics_sorted %}<tr><td><code>{{ name }}</code></td><td class="num">{{ fmt(value) }}</td>
{% if c.regression %}{% set g = c.regression.metrics | selectattr("metric", "equalto", name) | first %}<td class="num">{{ fmt(g.baseline) if g else "" }}</td><td>{% if g %}{{ g.status }} ({{ g.direction }}, ±{{ fmt(g.tolerance) }}{% if g.relative %} rel{% endif %}){% endif %}</td>{% endif %}</tr>{% endfor %}
</tbody></table></div></details>{% endif %}
{% for name, t in c.tables_view.items() %}<details class="evidence"><summary>Table: {{ name }} ({{ t.n_rows }} rows × {{ t.columns | length }} columns)</summary>
{{ data_table(t) }}</details>
{% endfor %}
<p class="back"><a href="#summary">↑ summary</a> · <a href="#contents">contents</a></p>
</section>
{% endfor %}

{% if benchmarks %}<section id="benchmarks"><h2>R3 benchmarks (pytest-benchmark)</h2>
{% for b in benchmarks %}<h3>{{ b.file }}</h3>
{% if b.error %}<div class="banner warn">{{ b.error }}</div>{% else %}
<p class="meta">{% if b.datetime %}{{ b.datetime }}{% endif %}{% if b.machine %} · {{ b.machine }}{% endif %}</p>
{% if b.plot %}<figure><img src="{{ b.plot }}" alt="time against n"><figcaption>mean time per call against n (log-log)</figcaption></figure>{% endif %}
<details class="evidence"><summary>Benchmarks ({{ b.rows | length }})</summary><div class="scroll"><table class="data"><thead><tr><th>benchmark</th><th>n</th><th>mean (s)</th><th>stddev (s)</th><th>median (s)</th><th>min (s)</th><th>rounds</th></tr></thead><tbody>
{% for r in b.rows %}<tr><td>{{ r.name }}</td><td>{{ fmt(r.n) }}</td><td>{{ fmt(r.mean) }}</td><td>{{ fmt(r.stddev) }}</td><td>{{ fmt(r.median) }}</td><td>{{ fmt(r.min) }}</td><td>{{ fmt(r.rounds) }}</td></tr>{% endfor %}
</tbody></table></div></details>{% endif %}{% endfor %}
<p class="back"><a href="#summary">↑ summary</a></p></section>{% endif %}

{% if sensitivity %}<section id="sensitivity"><h2>Fault-injection sensitivity and specificity</h2>
{% if sensitivity.error %}<div class="banner warn">{{ sensitivity.error }}</div>{% else %}
<p>Each fault breaks the model in one documented way. Every claim's fast criteria run under every fault: the claims about a fault must be <b>refuted</b> by it, the others must keep their no-fault verdict.
<b>sensitivity = {{ fmt(sensitivity.computed) }}</b> (refuted / expected cells{% if sensitivity.counts %}: {{ sensitivity.counts.caught }} / {{ sensitivity.counts.expected }}{% endif %}){% if sensitivity.mismatch %} <span class="fail">— the file states {{ fmt(sensitivity.stored) }}</span>{% endif %};
<b>specificity = {{ fmt(sensitivity.specificity) }}</b> (off-target cells that kept their verdict{% if sensitivity.counts %}: {{ sensitivity.counts.kept }} / {{ sensitivity.counts.off_target }}{% endif %}).</p>
<div class="scroll"><table><thead><tr><th>fault</th>{% for cid in sensitivity.columns %}<th>{{ cid }}</th>{% endfor %}</tr></thead><tbody>
<tr><td><i>no fault</i></td>{% for cid in sensitivity.columns %}<td class="cell-">{{ sensitivity.no_fault.get(cid, "") }}</td>{% endfor %}</tr>
{% for r in sensitivity.rows %}<tr><td><code>{{ r.fault }}</code>{% if r.description %}<br><span class="meta">{{ r.description }}</span>{% endif %}</td>
{% for cell in r.cells %}<td class="cell-{{ cell.state | replace(' ', '-') }}" title="{{ cell.verdict or '' }}{% if cell.reason %}: {{ cell.reason }}{% endif %}">{% if cell.state == "caught" %}caught{% elif cell.state == "weak" %}WEAK{% elif cell.state == "missed" %}MISSED{% elif cell.state == "moved" %}MOVED{% elif cell.state == "side effect" %}side effect{% elif cell.state == "kept" %}·{% endif %}<br><span class="meta">{{ cell.verdict or "" }}</span></td>{% endfor %}</tr>{% endfor %}
</tbody></table></div>
<p class="meta">caught: expected and refuted; WEAK: expected, only inconclusive (not counted); MISSED: expected, not red; ·: off-target, kept its no-fault verdict; MOVED: off-target and changed without a stated reason; side effect: off-target, changed for a listed reason.{% if sensitivity.not_in_matrix %} Not in the matrix (no fast criteria): {{ sensitivity.not_in_matrix | join(", ") }}.{% endif %}</p>
{% if sensitivity.flaky %}<div class="banner warn">Flaky cells (firmness below 0.9 in their run: the outcome may flip on another machine's floating-point path):<ul>{% for f in sensitivity.flaky %}<li><code>{{ f.fault or "no fault" }}</code> &times; {{ f.claim }} (master seed {{ f.master_seed }}, {{ f.cell }}): {{ f.why }}{% if f.declared %} (declared: {{ f.declared }}){% endif %}</li>{% endfor %}</ul></div>{% endif %}
{% if sensitivity.stability %}<h3>No-fault stability across master seeds</h3><table><tbody>{% for k, v in sensitivity.stability.items() %}<tr><td>{{ k }}</td><td>{{ fmt(v) }}</td></tr>{% endfor %}</tbody></table>{% endif %}
{% endif %}<p class="back"><a href="#summary">↑ summary</a></p></section>{% endif %}

<section id="run"><h2>Run</h2>
<dl class="run">{% for k, v in run_items %}<dt>{{ k }}</dt><dd>{{ fmt(v) }}</dd>{% endfor %}</dl>
<p class="back"><a href="#summary">↑ summary</a></p></section>
</main></div></body></html>
"""

_COMPARE_TEMPLATE = r"""{% from "macros" import moves_table %}<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>attention-claims: {{ new_label }} against {{ old_label }}</title>
<style>{{ css | safe }}</style></head>
<body><main>
<h1>Against the baseline</h1>
<p class="sub"><b>{{ new_label }}</b> against <b>{{ old_label }}</b>: every verdict, criterion outcome or definition (fingerprint) and gated metric (beyond its tolerance) that moved, old beside new.</p>
{% for w in warnings %}<div class="banner warn">{{ w }}</div>{% endfor %}
{{ moves_table(moves, false, not_run) }}
</main></body></html>
"""

_ENV = jinja2.Environment(loader=jinja2.DictLoader({"macros": _MACROS}), autoescape=True,
                          undefined=jinja2.ChainableUndefined, trim_blocks=True, lstrip_blocks=True)
_ENV.globals.update(fmt=fmt, slug=slug)


def render_html(results: Mapping[str, Any], report_dir: Path) -> str:
    """The page for a results dict; figures are read from ``report_dir``."""
    return _ENV.from_string(_TEMPLATE).render(css=_CSS, **build_context(results, Path(report_dir)))


def write_report(results: Mapping[str, Any], report_dir: Path) -> Path:
    out = Path(report_dir) / "index.html"
    results_io.write_text_atomic(out, render_html(results, report_dir))
    return out


def times_table(results: Mapping[str, Any]) -> str:
    """Per module: measured wall time against the profile's expected time (issue 18), as plain text."""
    run = results["run"]
    lines = [f"profile {run.get('profile')}, {run.get('workers') or 0} workers, run {fmt(run.get('duration_s'))} s",
             f"{'claim':<6} {'measured s':>11} {'budget s':>9}  status"]
    for cid, c in results["claims"].items():
        took, budget = c.get("duration_s") or 0.0, c.get("budget_s")
        status = "no budget stated" if not budget else ("OVER" if took > budget else "ok")
        lines.append(f"{cid:<6} {took:>11.1f} {fmt(budget):>9}  {status}")
    return "\n".join(lines)


def _label(path: Path, results: Mapping[str, Any]) -> str:
    run = results["run"]
    commit = f", commit {run['git_commit'][:10]}" if run.get("git_commit") else ""
    return f"{path} (profile {run.get('profile')}{commit}, {run.get('started_at')})"


def compare(old: Mapping[str, Any], new: Mapping[str, Any]) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """What moved from ``old`` to ``new`` (two results files): the gate's comparison (``baseline.compare_results``)
    read by ``baseline.moves``, as display rows; the claims of ``old`` that ``new`` did not run; and warnings
    where the two runs are not like for like."""
    regressions = baseline_gate.compare_results(new["claims"], old["claims"])
    claims = {cid: {**c, "regression": regressions[cid]} for cid, c in new["claims"].items()}
    rows = [move_view(m) for m in baseline_gate.moves(claims)]
    o, n = old["run"], new["run"]
    warnings = []
    if o.get("profile") != n.get("profile"):
        warnings.append(f"different profiles: {o.get('profile')} against {n.get('profile')}; numbers are not comparable")
    for key, what in (("fast", "a --fast run (fast criteria only)"), ("dry_run", "a dry run (no verdicts)"),
                      ("inject_fault", "run with a fault injected")):
        for side, run in (("old", o), ("new", n)):
            if run.get(key):
                warnings.append(f"the {side} file is {what}")
    for side, run in (("old", o), ("new", n)):
        if not run.get("complete", True):
            warnings.append(f"the {side} file is an incomplete run")
    judged = [(r.get("attention") or {}).get("name") for r in (old, new)]
    if judged[0] != judged[1]:
        warnings.append("different attentions judged: " + " against ".join(
            name or "this project's own MultiHeadAttention" for name in judged) + "; verdicts are not comparable")
    other_path = fp_path.mismatch(n, o)
    if other_path:
        warnings.append(other_path)
    not_run = sorted(set(old["claims"]) - set(new["claims"]), key=results_io.claim_sort_key)
    return rows, not_run, warnings


def moves_text(rows: list[dict[str, Any]], not_run: list[str] = ()) -> str:
    """The comparison as a plain-text table (a CI log)."""
    tail = [f"in the baseline, not run: {', '.join(not_run)}"] if not_run else []
    if not rows:
        return "\n".join(["nothing moved: every verdict, every criterion's outcome and definition, and every gated "
                          "metric match the baseline"] + tail)
    head = ("claim", "what", "name", "baseline", "this run", "status")
    table = [head] + [(r["claim"], r["what"], r["name"], r["old_text"], r["new_text"],
                       r["status"].upper() if r["regressed"] else r["status"]) for r in rows]
    widths = [max(len(str(line[i])) for line in table) for i in range(len(head))]
    lines = ["  ".join(str(v).ljust(w) for v, w in zip(line, widths)).rstrip() for line in table]
    for r, line in zip(rows, range(1, len(lines))):
        if r["note"]:
            lines[line] += f"  ({r['note']})"
    regressed = sum(1 for r in rows if r["regressed"])
    unstable = sum(1 for r in rows if r["status"] == "unstable")
    lines.append(f"{len(rows)} moved, {regressed} regressed" + (f", {unstable} unstable (shown, not gated)"
                                                                 if unstable else ""))
    return "\n".join(lines + tail)


def compare_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m harness.report compare",
        description="What moved from OLD to NEW (two results.json files): every verdict, criterion outcome or "
                    "definition, and gated metric beyond its tolerance, old beside new; the gate's comparison. "
                    "Exit 0 when nothing regressed, 1 when something did, 2 when a file cannot be read.")
    parser.add_argument("old", type=Path, help="the baseline: a results.json or reports/baseline.json")
    parser.add_argument("new", type=Path, help="the run to compare with it: a results.json")
    parser.add_argument("-o", "--output", type=Path, default=None, help="also write the comparison as an HTML page")
    args = parser.parse_args(argv)
    try:
        old = baseline_gate.load_baseline(args.old)
        new = results_io.load(args.new)
    except (baseline_gate.BaselineError, results_io.ResultsFormatError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    rows, not_run, warnings = compare(old, new)
    old_label, new_label = _label(args.old, old), _label(args.new, new)
    print(f"{new_label}\n  against {old_label}")
    for w in warnings:
        print(f"WARNING: {w}")
    print(moves_text(rows, not_run))
    if args.output is not None:
        results_io.write_text_atomic(args.output, _ENV.from_string(_COMPARE_TEMPLATE).render(
            css=_CSS, moves=rows, not_run=not_run, warnings=warnings, old_label=old_label, new_label=new_label))
        print(f"wrote {args.output}")
    return 1 if any(r["regressed"] for r in rows) else 0


def findings_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m harness.report findings",
        description="The findings table (per claim: the verdict with its firmness and the effect that decided it, "
                    "in words) as Markdown. Exit 1 when --write's file lacks the markers, 2 when RESULTS cannot be read.")
    parser.add_argument("results", type=Path, help="a results.json or reports/baseline.json")
    parser.add_argument("--write", type=Path, default=None, metavar="FILE",
                        help=f"replace the text between {findings.BEGIN} and {findings.END} in FILE (e.g. README.md)")
    parser.add_argument("--marker", default="findings", metavar="NAME",
                        help="with --write: the markers' name, <!-- NAME:begin --> ... <!-- NAME:end --> (default "
                             "findings; the README's standard-profile table is findings-standard)")
    args = parser.parse_args(argv)
    try:
        table = findings.findings_markdown(results_io.load(args.results))
    except results_io.ResultsFormatError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.write is None:
        print(table, end="")
        return 0
    try:
        text = findings.replace_between_markers(args.write.read_text(encoding="utf-8"), table, args.marker)
    except (OSError, findings.MarkersMissing) as exc:
        print(f"error: {args.write}: {exc}", file=sys.stderr)
        return 1
    results_io.write_text_atomic(args.write, text)
    print(f"wrote the findings of {args.results} into {args.write}")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["compare"]:
        return compare_main(argv[1:])
    if argv[:1] == ["findings"]:
        return findings_main(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m harness.report",
                                     description="Rebuild index.html from a results.json without rerunning. "
                                                 "`python -m harness.report compare OLD NEW`: what moved between "
                                                 "two results files (see `compare --help`); "
                                                 "`python -m harness.report findings RESULTS [--write README.md]`: "
                                                 "the findings table as Markdown (see `findings --help`).")
    parser.add_argument("results", type=Path, help="path to results.json (figures are read beside it)")
    parser.add_argument("-o", "--output", type=Path, default=None, help="output file (default: index.html beside it)")
    parser.add_argument("--times", action="store_true",
                        help="print each module's measured wall time against its budget instead of writing HTML")
    args = parser.parse_args(argv)
    try:
        results = results_io.load(args.results)
    except results_io.ResultsFormatError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.times:
        print(times_table(results))
        return 0
    report_dir = args.results.resolve().parent
    if args.output is None:
        out = write_report(results, report_dir)
    else:
        out = args.output
        results_io.write_text_atomic(out, render_html(results, report_dir))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
