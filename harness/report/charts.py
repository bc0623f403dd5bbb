"""What the page shows besides the records: figures as data URIs, the R3 benchmark chart, the fault matrix.

API (used by ``harness.report.html``):

* ``embed_figure(report_dir, rel)`` — a PNG figure inside the report dir as a ``data:image/png;base64`` URI, or
  None (a path outside the report dir, or not a PNG, is never read);
* ``load_benchmarks(report_dir)`` — every ``benchmark*.json`` (pytest-benchmark JSON, ``--benchmark-json``; R3 /
  issue 9) in the report dir, each as a table of its benchmarks and, where n is known (``params["n"]`` or
  ``extra_info["n"]``), a time-against-n plot rendered with matplotlib's Agg canvas (no pyplot state, no GUI
  backend) and embedded as a data URI;
* ``load_sensitivity(report_dir, claim_ids)`` — ``sensitivity.json`` (written by ``harness.suite.sensitivity``;
  its schema is in ``harness.report.html``'s docstring) as the fault x claim matrix's rows and columns, or None
  without the file, or ``{"error": ...}`` when it cannot be read.

Each loader reports a malformed file in what it returns (the page shows it) instead of raising.

Rendering only: no verdict logic here, and nothing that a claim module draws (its figures are files it wrote).
"""
from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

from harness.record import results as results_io


def _png_data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def embed_figure(report_dir: Path, rel: str) -> str | None:
    """A figure file as a data URI; only PNGs inside the report dir (data never names other files)."""
    root = report_dir.resolve()
    path = (root / rel).resolve()
    if path.suffix.lower() != ".png" or not path.is_relative_to(root) or not path.is_file():
        return None
    return _png_data_uri(path.read_bytes())


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
    """sensitivity.json as a fault x claim matrix (schema in ``harness.report.html``'s docstring)."""
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
