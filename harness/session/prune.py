"""One run a report folder (issue 65, item 4): the figures of an earlier run are removed when a run writes its
results, so that a failed run never shows the last run's pictures beside its own index.html.

Only what the harness writes is touched: ``figures/<claim id>/*.png`` (``Evidence.figure``'s paths) that no claim of
the new results.json names, and a claim's ``benchmark_<claim id>.json`` where the new run holds no such claim. Anything else in the folder (a baseline, a lock, a user's own files) is left as it is.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Mapping

#: a claim's figure folder as ``Evidence.figure`` names it: figures/<ID>/
_CLAIM_FOLDER = re.compile(r"^[A-Z][A-Z0-9]*\d+$")


def stale_figures(report_dir: Path, results: Mapping[str, Any]) -> list[Path]:
    """The ``figures/<ID>/*.png`` files under ``report_dir`` that no claim of ``results`` names."""
    root = Path(report_dir) / "figures"
    if not root.is_dir():
        return []
    keep = {str(f) for c in (results.get("claims") or {}).values() for f in (c.get("figures") or [])}
    return [p for folder in sorted(root.iterdir()) if folder.is_dir() and _CLAIM_FOLDER.match(folder.name)
            for p in sorted(folder.glob("*.png")) if p.relative_to(report_dir).as_posix() not in keep]


def stale_benchmarks(report_dir: Path, results: Mapping[str, Any]) -> list[Path]:
    """A claim's own timing file, ``benchmark_<claim id>.json`` (R3's ``benchmark_r3.json``, which the report
    renders), left by an earlier run of a claim that ``results`` does not hold."""
    claims = {str(c).upper() for c in (results.get("claims") or {})}
    return [p for p in sorted(Path(report_dir).glob("benchmark_*.json"))
            if _CLAIM_FOLDER.match(p.stem.removeprefix("benchmark_").upper())
            and p.stem.removeprefix("benchmark_").upper() not in claims]


def prune_figures(report_dir: Path, results: Mapping[str, Any]) -> list[str]:
    """``stale_figures`` and ``stale_benchmarks`` removed, and the claim folders they leave empty; returns what was
    removed (relative)."""
    removed = []
    for p in stale_figures(report_dir, results) + stale_benchmarks(report_dir, results):
        p.unlink(missing_ok=True)
        removed.append(p.relative_to(report_dir).as_posix())
        if p.parent.is_dir() and not any(p.parent.iterdir()):
            p.parent.rmdir()
    return removed
