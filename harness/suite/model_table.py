"""What the model trial says about each example architecture (issue 40): one pytest run per builder in
``examples/models``, the claims that judge a model, and a table of their verdicts and counted criteria.

    python -m harness.suite.model_table --jobs 2                 # every example; markdown to stdout
    python -m harness.suite.model_table llama t5 --json out.json # some, and the records too

Each run is the user's command (``pytest --model examples.models.<name>:build_model``) in a subprocess, at smoke
budgets, master seed 0. docs/model-trial.md holds the table this prints, and tests/model_trial/test_examples.py
checks the verdicts it reads against what each example is built to show.
"""
from __future__ import annotations

import concurrent.futures
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harness import profiles
from harness.suite import OneLineParser

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES_DIR = ROOT / "examples" / "models"
CLAIMS = profiles.MODEL_TRIAL_CLAIMS


def examples() -> list[str]:
    """The example builders' names (``examples/models/<name>.py``)."""
    return sorted(p.stem for p in EXAMPLES_DIR.glob("*.py") if not p.stem.startswith("_"))


def run(name: str, report_dir: Path, extra_args: tuple[str, ...] = (), claims: tuple[str, ...] = CLAIMS
        ) -> dict[str, Any]:
    """results.json of ``pytest --model examples.models.<name>:build_model`` over ``claims`` (default: every claim
    that judges a model)."""
    modules = [str(p) for cid in claims for p in sorted((ROOT / "claims").glob(f"test_{cid.lower()}_*.py"))]
    cmd = [sys.executable, "-m", "pytest", *modules, "-p", "harness.plugin", "-c", str(ROOT / "pyproject.toml"),
           "--rootdir", str(ROOT), "--profile", "smoke", "--report-dir", str(report_dir),
           "--model", f"examples.models.{name}:build_model", "-q", "-p", "no:cacheprovider", *extra_args]
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    path = report_dir / "results.json"
    if not path.is_file():
        raise RuntimeError(f"{name}: pytest wrote no results.json (exit {proc.returncode}):\n{proc.stdout[-2000:]}"
                           f"\n{proc.stderr[-2000:]}")
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["wall_s"] = round(time.monotonic() - start, 1)
    return doc


def rows(name: str, doc: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per (claim, counted criterion) of one example's run."""
    out = []
    for cid, claim in doc["claims"].items():
        for c in claim["criteria"]:
            if c.get("role") != "counted":
                continue
            out.append({"example": name, "claim": cid, "verdict": claim["verdict"], "criterion": c["name"],
                        "outcome": c.get("outcome"), "measured": c.get("measured"), "detail": c.get("detail", "")})
    return out


def _cell(claim: dict[str, Any] | None) -> str:
    """A claim that counts a criterion: its verdict and headline metric. One that only reports: its reported
    criterion's outcome and the headline (reported readings are never a verdict)."""
    if claim is None:
        return "-"
    head = claim.get("headline")
    value = claim.get("metrics", {}).get(head) if head else None
    shown = f" ({value:.3g})" if isinstance(value, (int, float)) else ""
    counted = [c for c in claim["criteria"] if c.get("role") == "counted"]
    if counted:
        return claim["verdict"] + shown
    reported = [c for c in claim["criteria"] if c.get("role") == "reported"]
    if not reported:
        return "-"
    c = reported[0]
    return (c.get("outcome") or "-") + ("" if c.get("measurements") or c.get("exact_holds") is not None
                                        else " (not measured)") + shown


def markdown(docs: dict[str, dict[str, Any]]) -> str:
    """Two tables: the claims that count a criterion (verdicts) and those that only report (readings), one row per
    example, and the versions they ran on."""
    counted = [c for c in CLAIMS if any(
        any(k.get("role") == "counted" for k in d["claims"].get(c, {}).get("criteria", [])) for d in docs.values())]
    reported = [c for c in CLAIMS if c not in counted]
    lines = []
    for title, cols, wall in (("verdicts", counted, True), ("readings (reported criteria)", reported, False)):
        lines += [f"{title}:", "", "| example | " + " | ".join(cols) + (" | wall (s) |" if wall else " |"),
                  "|---" * (len(cols) + 1 + wall) + "|"]
        for name, doc in docs.items():
            cells = [_cell(doc["claims"].get(cid)) for cid in cols]
            lines.append(f"| `{name}` | " + " | ".join(cells) + (f" | {doc.get('wall_s', '')} |" if wall else " |"))
        lines.append("")
    any_doc = next(iter(docs.values()), {})
    versions = (any_doc.get("model") or {}).get("versions", {})
    lines.append("Versions: " + ", ".join(f"{k} {v}" for k, v in versions.items() if v) +
                 f"; commit {any_doc.get('run', {}).get('git_commit', '?')[:7]}.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m harness.suite.model_table", description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="examples to run (default: every one in examples/models)")
    parser.add_argument("--jobs", type=int, default=1, help="pytest subprocesses side by side (default 1)")
    parser.add_argument("--json", type=Path, default=None, help="also write {example: results.json} here")
    parser.add_argument("--from-json", type=Path, default=None, help="render the tables from such a file, run nothing")
    args = parser.parse_args(argv)
    if args.from_json:
        print(markdown(json.loads(args.from_json.read_text(encoding="utf-8"))))
        return 0
    names = args.names or examples()
    unknown = sorted(set(names) - set(examples()))
    if unknown:
        parser.error(f"no example {', '.join(unknown)} in {EXAMPLES_DIR}; known: {', '.join(examples())}")
    with tempfile.TemporaryDirectory(prefix="model-table-") as tmp:
        with concurrent.futures.ThreadPoolExecutor(max(args.jobs, 1)) as pool:
            futures = {n: pool.submit(run, n, Path(tmp) / n) for n in names}
            docs = {n: f.result() for n, f in futures.items()}
    if args.json:
        args.json.write_text(json.dumps(docs, indent=1, default=str), encoding="utf-8")
    print(markdown(docs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
