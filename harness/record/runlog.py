"""The replicates' run log, ``reports/runlog.jsonl`` (issue 64, item 2): append-only, one JSON object a line.

Every run of ``pytest --profile standard --replicate k`` appends a **start** line before its first claim runs and
an **end** line when it ends (``harness.session.replicate``):

* start: ``{"event": "start", "run", "lock", "replicate", "K", "seed", "claims", "part", "file", "commit", "dirty",
  "vendor", "at", "dry_run"}``; ``run`` is the run's id, ``file`` its record under the report folder
  (``replicates/<lock[:12]>/r<k>-<claims>.json``), ``vendor`` the CPU's (GenuineIntel, AuthenticAMD);
* end: ``{"event": "end", "run", "at", "duration_s", "outcome"}``: ``outcome`` is ``{claim: verdict}`` for a run
  that completed, ``"aborted"`` for one cut short (Ctrl-C, SIGTERM, a crash; a run killed outright leaves no end
  line, and reads as aborted).

**The record.** A claim's replicate k is *complete* in a run that completed (not dry) with a verdict other than
error for it. The record of (claim, k) at a lock is its **first** complete run in the log: a later run of the same
part is refused before it trains (``complete``), and a record that holds another run fails ``problems``. An
abandoned lock, one with complete runs whose record was never committed, stays in the log (``locks``).

API: ``LOG_NAME``, ``RECORDS_DIR``, ``read``, ``append``, ``runs``, ``complete``, ``first_complete``, ``locks``,
``select``, ``problems``.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

#: the log's file name in the report folder (``reports/runlog.jsonl``)
LOG_NAME = "runlog.jsonl"
#: the replicate records' folder in the report folder: ``replicates/<lock hash[:12]>/r<k>-<claims>.json``
RECORDS_DIR = "replicates"
ABORTED = "aborted"
ERROR = "error"


def read(path: Path) -> list[dict[str, Any]]:
    """The log's entries in order ([] where there is no log); a line that is not a JSON object is an error that
    names its line."""
    path = Path(path)
    if not path.is_file():
        return []
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError as exc:
            raise ValueError(f"{path}:{n}: not a JSON line ({exc})") from None
        if not isinstance(entry, dict) or entry.get("event") not in ("start", "end") or not entry.get("run"):
            raise ValueError(f"{path}:{n}: not a run log entry (event start or end, with its run)")
        out.append(entry)
    return out


def append(path: Path, entry: Mapping[str, Any]) -> None:
    """One line at the end of the log, written in one ``write`` on a file opened for appending, then synced: two
    runs that end together never interleave their lines, and a line once written stays."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    line = (json.dumps(dict(entry), sort_keys=True, ensure_ascii=True, allow_nan=False) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)


def runs(entries: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """{run id: {"start": its start line, "end": its end line or None}} in the order the runs started."""
    out: dict[str, dict[str, Any]] = {}
    for e in entries:
        if e["event"] == "start":
            out.setdefault(e["run"], {"start": dict(e), "end": None})
        elif e["run"] in out:
            out[e["run"]]["end"] = dict(e)
    return out


def complete(run: Mapping[str, Any]) -> dict[str, str]:
    """{claim: verdict} of the claims a run completed (not dry, ended with an outcome, verdict not error)."""
    start, end = run["start"], run.get("end")
    if start.get("dry_run") or not end or not isinstance(end.get("outcome"), dict):
        return {}
    return {cid: v for cid, v in end["outcome"].items() if v and v != ERROR}


def first_complete(entries: Iterable[Mapping[str, Any]], lock: str) -> dict[tuple[str, int], str]:
    """{(claim, k): run id} of the first complete run of each claim's replicate k at ``lock``."""
    out: dict[tuple[str, int], str] = {}
    for rid, run in runs(entries).items():
        if run["start"].get("lock") != lock:
            continue
        for cid in complete(run):
            out.setdefault((cid, int(run["start"]["replicate"])), rid)
    return out


def locks(entries: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, list[int]]]:
    """{lock: {claim: replicates complete at it}}: every lock the log has complete runs at, abandoned ones too."""
    out: dict[str, dict[str, list[int]]] = {}
    entries = list(entries)
    for lock in dict.fromkeys(r["start"].get("lock") for r in runs(entries).values()):
        for (cid, k) in first_complete(entries, lock):
            out.setdefault(lock, {}).setdefault(cid, []).append(k)
    return {lk: {c: sorted(ks) for c, ks in v.items()} for lk, v in out.items()}


def select(records: Mapping[str, Mapping[str, Any]], entries: Sequence[Mapping[str, Any]], lock: str
           ) -> list[dict[str, Any]]:
    """The record of each claim's replicate at ``lock``: from the stored records ({file: results}), each claim of
    each the one whose run is that (claim, k)'s first complete run in the log; a record's other claims are left out
    of it. What ``replication.pool`` pools."""
    first = first_complete(entries, lock)
    out = []
    for name in sorted(records):
        rec = records[name]
        rep = rec["run"].get("replicate") or {}
        if rep.get("lock") != lock:
            continue
        keep = {cid: c for cid, c in rec["claims"].items() if first.get((cid, int(rep.get("k") or 0))) == rep.get("run")}
        if keep:
            out.append({**rec, "claims": keep})
    return out


def problems(records: Mapping[str, Mapping[str, Any]], entries: Sequence[Mapping[str, Any]],
             pooled: Mapping[str, Any] | None = None) -> list[str]:
    """Why the stored replicate records and the pooled record do not stand on the log ([] when they do):

    * each record ({file: results}) needs its run's start and end lines, at its lock, replicate, seed and claims,
      an end that is not aborted, and the verdicts the record holds;
    * each (claim, k) a record holds must be that claim's first complete run of k at the lock;
    * the pooled record must use, for every claim and replicate, the first complete run at its lock, and must
      hold every claim whose set of K the log shows complete there."""
    out = []
    by_run = runs(entries)
    for name in sorted(records):
        rec = records[name]
        rep = rec["run"].get("replicate") or {}
        run = by_run.get(rep.get("run"))
        if run is None:
            out.append(f"{name}: its run {rep.get('run')} has no start line in the run log")
            continue
        start, end = run["start"], run["end"]
        for key, mine in (("lock", rep.get("lock")), ("replicate", rep.get("k")), ("seed", rep.get("seed"))):
            if start.get(key) != mine:
                out.append(f"{name}: the log's start line says {key} {start.get(key)!r}, the record {mine!r}")
        if not set(rec["claims"]) <= set(start.get("claims") or ()):
            out.append(f"{name}: claims {sorted(set(rec['claims']) - set(start.get('claims') or ()))} are not in "
                       "its run's start line")
        if end is None or not isinstance(end.get("outcome"), dict):
            out.append(f"{name}: its run {rep.get('run')} has no end line with an outcome in the run log (aborted)")
            continue
        for cid, claim in rec["claims"].items():
            if end["outcome"].get(cid) != claim.get("verdict"):
                out.append(f"{name}: {cid} reads {claim.get('verdict')!r}, its run's end line "
                           f"{end['outcome'].get(cid)!r}")
        first = first_complete(entries, rep.get("lock"))
        for cid in rec["claims"]:
            if rec["claims"][cid].get("verdict") == ERROR:
                continue
            if first.get((cid, int(rep.get("k") or 0))) != rep.get("run"):
                out.append(f"{name}: {cid} replicate {rep.get('k')} is run {rep.get('run')}, but its first complete "
                           f"run at lock {str(rep.get('lock'))[:12]} is {first.get((cid, int(rep.get('k') or 0)))}")
    if pooled is not None:
        out += _pooled_problems(pooled, entries)
    return out


def _pooled_problems(pooled: Mapping[str, Any], entries: Sequence[Mapping[str, Any]]) -> list[str]:
    rep = pooled.get("replication") or {}
    lock, K = rep.get("lock"), rep.get("K")
    first = first_complete(entries, lock)
    out = []
    for cid, claim in pooled.get("claims", {}).items():
        r = claim.get("replication") or {}
        for k, rid in zip(r.get("replicates") or (), r.get("runs") or ()):
            if first.get((cid, int(k))) != rid:
                out.append(f"pooled {cid}: replicate {k} is run {rid}, but its first complete run at lock "
                           f"{str(lock)[:12]} is {first.get((cid, int(k)))}")
    done = locks(entries).get(lock, {})
    for cid, ks in done.items():
        if K and len([k for k in ks if k <= K]) >= K and cid not in pooled.get("claims", {}):
            out.append(f"the log shows {cid}'s {K} replicates complete at lock {str(lock)[:12]}, and the pooled "
                       "record does not use them")
    return out
