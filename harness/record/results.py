"""The results.json contract: JSON-safe values, claim ordering, merging parts, validation, atomic writes.

One place for the schema that the plugin writes, the report reads and the baseline gate compares
(issue 4), so that the three cannot drift apart. Required keys are the contract; everything else
(``kind``, ``notes``, ``tables``, ``headline``, ``limitation``, ``gates``, ...) is an extra that a
reader must not require. Among the extras (issue 38): each criterion's ``role`` (counted, premise or reported;
a reader without it takes it from ``counts``: ``harness.record.verdict.role_of``) and each claim's
``not_testable`` (why a premise makes it inconclusive, '' when none does). Issue 47: each criterion's ``quote``
(the note's words it tests), and a claim's ``nothing_counted`` (its module's reason for counting nothing) and
``not_tested`` (why its verdict is "not tested": nothing counted in the run), present only when non-empty. Issue 55:
a claim's ``at_init`` (what it read at random init while trained weights were on trial, ``--model-weights``;
``at_init_label`` its verdict's label where not "at init", e.g. "trained from init") and
``seedless`` (why it used none of the run's seeds, what its samples are instead), present only when non-empty.
"""
from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterable, Mapping

from harness.record import verdict as verdicts
from harness.record import objections as objections_of
from harness.record import replication

# 2 (issue 16): criteria carry kind, margin, rule, measurements, outcome, firmness, seeds_for_firm and a
# fingerprint; claims carry firmness and seeds_for_firm. Files of schema 1 are rejected with a clear error.
SCHEMA_VERSION = 2
RUN_KEYS = ("profile", "device", "seeds", "torch_version", "git_commit", "started_at", "duration_s", "complete")
CLAIM_KEYS = ("id", "title", "statement", "strength", "verdict", "criteria", "metrics", "figures", "duration_s",
              "firmness", "seeds_for_firm")
CRITERION_KEYS = ("name", "prediction", "threshold", "measured", "passed", "kind", "margin", "firmness",
                  "seeds_for_firm", "fingerprint")

# C before R before Q (the note's order), then the suite's own model checks, then anything else.
_ID_PREFIX_ORDER = {"C": 0, "R": 1, "Q": 2, "M": 3}


class ResultsFormatError(ValueError):
    """A results/baseline file that does not follow the schema; the message names the file and the field."""


class OldSchemaError(ResultsFormatError):
    """A results file of an older schema_version than this suite reads."""


def git(root: Path, *args: str) -> str | None:
    """``git -C root ARGS``'s output, or None where there is no git, no checkout or an error: what a run records
    of the checkout it ran from (``git_commit``, ``git_dirty``)."""
    try:
        out = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def clean_commit(root: Path) -> str | None:
    """The checkout's commit, or None when tracked files have uncommitted changes (a run there is of no commit)."""
    return git(root, "rev-parse", "HEAD") if git(root, "status", "--porcelain", "--untracked-files=no") == "" else None


def claim_sort_key(claim_id: str) -> tuple:
    """C1 < C2 < ... < C10 < R1 < Q1 < M0 < anything else (alphabetical): one order everywhere."""
    m = re.fullmatch(r"([A-Za-z]+)(\d+)(.*)", claim_id)
    if not m:
        return (9, claim_id, 0, "")
    prefix, num, rest = m.groups()
    return (_ID_PREFIX_ORDER.get(prefix.upper(), 8), prefix.upper(), int(num), rest)


def to_jsonable(value: Any) -> Any:
    """Plain JSON types from numpy/torch/pandas values; non-finite floats become None (JSON has no NaN)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "tolist"):  # numpy arrays and scalars, torch tensors
        return to_jsonable(value.tolist())
    if hasattr(value, "item"):
        return to_jsonable(value.item())
    if hasattr(value, "isoformat"):  # datetime, pandas Timestamp
        return value.isoformat()
    try:
        return to_jsonable(float(value))
    except (TypeError, ValueError):
        return str(value)


def write_text_atomic(path: Path, text: str) -> None:
    """Write to a temp file in the same folder, then rename: a reader never sees a truncated file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_json_atomic(path: Path, data: Mapping[str, Any]) -> None:
    write_text_atomic(path, json.dumps(to_jsonable(data), indent=2, allow_nan=False) + "\n")


def merge_parts(parts: Iterable[Mapping[str, Any]], judged: Mapping[str, Mapping[str, Any]] | None = None
                ) -> dict[str, dict[str, Any]]:
    """Claim records from test parts (one per test function), in one deterministic order.

    A claim is usually one test; a module may split it over several (or parametrize), each writing
    the same claim id. Parts are merged in collection order, whatever order xdist finished them in,
    so a serial and a ``-n 2`` run give the same record. The verdict is decided over the merged
    criteria (error if any part errored). ``judged``: claim records already merged and judged
    (``merge_claim``, as the session does when each part arrives), by id; one made of exactly these
    parts is taken as it is (a copy), not judged again.
    """
    by_id: dict[str, list[Mapping[str, Any]]] = {}
    for part in parts:
        by_id.setdefault(part["id"], []).append(part)
    merged: dict[str, dict[str, Any]] = {}
    for cid in sorted(by_id, key=claim_sort_key):
        ordered = _in_order(by_id[cid])
        done = (judged or {}).get(cid)
        if done is not None and done.get("parts") == [p.get("nodeid") for p in ordered]:
            merged[cid] = dict(done)
        else:
            merged[cid] = _merge_one(cid, ordered)
    return merged


def merge_claim(parts: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """One claim's record from its parts (in any order; merged in collection order), judged once."""
    ordered = _in_order(parts)
    return _merge_one(ordered[0]["id"], ordered)


def _in_order(parts: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return sorted(parts, key=lambda p: (p.get("order", 0), p.get("nodeid", "")))


def part_errored(part: Mapping[str, Any]) -> bool:
    """A part whose test crashed (or was cut short): shipped unjudged with ``errored``, or judged as an error."""
    return bool(part.get("errored")) or part.get("verdict") == verdicts.ERROR


def part_record(claim: Mapping[str, Any], parts: Iterable[Mapping[str, Any]], part: Mapping[str, Any]
                ) -> dict[str, Any]:
    """One test part as its claim judged it, for the test's pytest outcome and its gate: the part's own criteria
    (by its own names, which the gate maps to the baseline's copy), their outcomes, levels and firmness taken from
    ``claim`` (``merge_claim`` of ``parts``, which holds ``part``), and the part's verdict read from those outcomes
    (``verdict.part_verdict``: nothing is decided again). For a claim of one part it is the claim's judgement."""
    ordered = _in_order(parts)
    at = next(i for i, p in enumerate(ordered) if p is part)
    start = sum(len(p.get("criteria", [])) for p in ordered[:at])
    own = part.get("criteria", [])
    criteria = [{**c, "name": mine["name"]} for c, mine in zip(claim["criteria"][start:start + len(own)], own)]
    errored = part_errored(part)
    kind = part.get("kind") or claim.get("kind") or "claim"
    record = {k: part.get(k) for k in ("id", "title", "statement", "strength", "kind", "limitation", "nodeid",
                                       "fast", "error", "interrupted")}
    record.update(kind=kind, criteria=criteria, metrics=dict(part.get("metrics", {})),
                  gates=dict(part.get("gates", {})))
    record.update(verdicts.part_verdict(criteria, kind=kind, errored=errored, fast_only=bool(claim.get("fast")),
                                        nothing_counted=claim.get("nothing_counted") or ""))
    return record


def _merge_one(cid: str, parts: list[Mapping[str, Any]]) -> dict[str, Any]:
    first = parts[0]
    claim: dict[str, Any] = {k: first.get(k) for k in ("id", "title", "statement", "strength", "kind", "limitation")}
    for k in ("title", "statement", "strength", "limitation"):
        claim[k] = next((p.get(k) for p in parts if p.get(k)), claim[k])
    claim.update(criteria=[], metrics={}, figures=[], tables={}, notes=[], gates={}, headline=None,
                 duration_s=0.0, parts=[], errors=[], fast=any(p.get("fast") for p in parts))
    seen_criteria: set[str] = set()
    for p in parts:
        test_name = p.get("nodeid", "").split("::")[-1] or "?"
        claim["parts"].append(p.get("nodeid"))
        for c in p.get("criteria", []):
            c = dict(c)
            if c["name"] in seen_criteria:
                c["name"] = f"{c['name']} [{test_name}]"
            seen_criteria.add(c["name"])
            claim["criteria"].append(c)
        for name, value in p.get("metrics", {}).items():
            if name in claim["metrics"] and claim["metrics"][name] != value:
                claim["notes"].append(f"metric {name} recorded by two tests; kept {test_name}'s value {value}")
            claim["metrics"][name] = value
        claim["figures"] += [f for f in p.get("figures", []) if f not in claim["figures"]]
        for name, table in p.get("tables", {}).items():
            claim["tables"][name if name not in claim["tables"] else f"{name} [{test_name}]"] = table
        claim["notes"] += [n for n in p.get("notes", []) if n not in claim["notes"]]
        claim["gates"].update(p.get("gates", {}))
        claim.setdefault("objection_answers", {}).update(p.get("objection_answers") or {})
        claim["headline"] = claim["headline"] or p.get("headline")
        claim["duration_s"] += float(p.get("duration_s") or 0.0)
        if p.get("error"):
            claim["errors"].append(f"{test_name}: {p['error']}" if len(parts) > 1 else p["error"])
        for k in ("device", "seeds", "module"):
            claim.setdefault(k, p.get(k))
        if p.get("interrupted"):
            claim["interrupted"] = True
    why_nothing = next((p["nothing_counted"] for p in parts if p.get("nothing_counted")), "")
    if why_nothing:
        claim["nothing_counted"] = why_nothing
    for key in ("at_init", "at_init_label", "seedless"):
        said = next((p[key] for p in parts if p.get(key)), "")
        if said:
            claim[key] = said
    judge_claim(claim, errored=any(part_errored(p) for p in parts))
    claim["error"] = "; ".join(claim.pop("errors")) or None
    return claim


def judge_claim(claim: dict[str, Any], *, errored: bool) -> dict[str, Any]:
    """Decide a merged claim record in place from its criteria records: verdict, firmness, scope and objections."""
    verdicts.apply_judgement(claim, errored=errored, fast_only=bool(claim.get("fast")))
    claim["objections"] = objections_of.objections(claim)
    return claim


def rejudge(data: Mapping[str, Any]) -> dict[str, Any]:
    """A results file's claims decided again from their recorded criteria (rules and per-seed measurements), under
    this checkout's decision rules, without running anything: a copy of ``data`` with each claim's verdict,
    firmness, criteria outcomes and objections recomputed (and a pooled claim's r of K, ``replication.refresh``). With the rules unchanged it is ``data`` itself (the
    firmness simulation is seeded), so it shows what a change of the rules does to stored runs."""
    out = json.loads(json.dumps(to_jsonable(data), allow_nan=False))
    for claim in out["claims"].values():
        judge_claim(claim, errored=claim.get("verdict") == verdicts.ERROR)
        replication.refresh(claim)      # a pooled claim's r of K, read from its re-decided verdict (issue 64)
    return to_jsonable(out)


def _fail(source: str, where: str, problem: str) -> None:
    raise ResultsFormatError(f"{source}: {where}: {problem}")


def validate(data: Any, source: str = "results") -> dict[str, Any]:
    """Check ``data`` against the results.json contract; raise ResultsFormatError naming the field."""
    if not isinstance(data, dict):
        _fail(source, "top level", f"expected a JSON object, got {type(data).__name__}")
    version = data.get("schema_version")
    if isinstance(version, int) and not isinstance(version, bool) and version < SCHEMA_VERSION:
        raise OldSchemaError(f"{source}: schema_version {version} predates schema {SCHEMA_VERSION} (issue 16's "
                             "decision protocol)")
    if version != SCHEMA_VERSION:
        _fail(source, "schema_version", f"expected {SCHEMA_VERSION}, got {version!r}")
    run = data.get("run")
    if not isinstance(run, dict):
        _fail(source, "run", "missing or not an object")
    for key in RUN_KEYS:
        if key not in run:
            _fail(source, f"run.{key}", "missing")
    claims = data.get("claims")
    if not isinstance(claims, dict):
        _fail(source, "claims", "missing or not an object")
    for cid, claim in claims.items():
        where = f"claims[{cid!r}]"
        if not isinstance(claim, dict):
            _fail(source, where, "not an object")
        for key in CLAIM_KEYS:
            if key not in claim:
                _fail(source, f"{where}.{key}", "missing")
        firmness = claim.get("firmness")
        if firmness is not None and not (isinstance(firmness, (int, float)) and 0 <= firmness <= 1):
            _fail(source, f"{where}.firmness", f"expected a number in [0, 1] or null, got {firmness!r}")
        if claim["verdict"] not in verdicts.ALL_VERDICTS:
            _fail(source, f"{where}.verdict", f"{claim['verdict']!r} is not one of {', '.join(verdicts.ALL_VERDICTS)}")
        if not isinstance(claim["criteria"], list):
            _fail(source, f"{where}.criteria", "not a list")
        for i, crit in enumerate(claim["criteria"]):
            if not isinstance(crit, dict):
                _fail(source, f"{where}.criteria[{i}]", "not an object")
            for key in CRITERION_KEYS:
                if key not in crit:
                    _fail(source, f"{where}.criteria[{i}].{key}", "missing")
        if not isinstance(claim["metrics"], dict):
            _fail(source, f"{where}.metrics", "not an object")
        for name, value in claim["metrics"].items():
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
                _fail(source, f"{where}.metrics[{name!r}]", f"expected a number, got {value!r}")
        if not isinstance(claim["figures"], list):
            _fail(source, f"{where}.figures", "not a list")
    return data


def load_or_say(path: Path) -> dict[str, Any] | None:
    """``load(path)``, or None once the reason it cannot be read is printed to stderr (a command then exits 2)."""
    try:
        return load(path)
    except ResultsFormatError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None


def load(path: Path, what: str = "results file") -> dict[str, Any]:
    """Read and validate a results.json; every failure is a ResultsFormatError with a readable message."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ResultsFormatError(f"{what} not found: {path}") from None
    except OSError as exc:
        raise ResultsFormatError(f"{what} {path} cannot be read: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ResultsFormatError(f"{what} {path} is not valid JSON: {exc.msg} at line {exc.lineno} "
                                 f"column {exc.colno}") from None
    return validate(data, source=f"{what} {path}")
