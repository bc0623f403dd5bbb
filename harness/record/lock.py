"""The criteria lock, ``reports/criteria.lock`` (issue 47, mechanism 2: frozen criteria, fresh seeds).

The lock holds, for every premise and counted criterion of every claim module, what decides it: its fingerprint
(``harness.record.decision.fingerprint`` of its definition: kind, metric, arms, bounds, margin, alpha, counts, fast,
role), per profile where the profile's numbers enter it, plus its role, the faults that must refute it
(``falsified_by``) and the note's words it tests (``quote``). Its hash is the sha256 of the canonical content (the
criteria, sorted JSON); the headline profile (standard) derives its master seed from that hash (``master_seed``),
so that the seeds that decide the criteria are seeds nobody had seen when they were chosen. Changing a counted
criterion changes the lock, hence the seeds.

The code's criteria are collected by running each claim module up to its ``ev.declare`` and no further (the
environment variable ``DECLARE_ONLY_ENV`` names a directory, ``Evidence.declare`` writes the declared rows there and
skips the test): ``python -m harness.report lock`` (``--write`` to refresh the file).

API: ``row``, ``build``, ``criteria_hash``, ``dumps``, ``load``, ``master_seed``, ``differences``, ``check_run`` (a
run against the lock), ``check_headline`` (the committed standard run against the lock), ``summary``.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterable, Mapping

from harness.record.verdict import COUNTED, PREMISE, role_of

#: where the lock lives, relative to the repository root
LOCK_FILE = Path("reports") / "criteria.lock"
#: the profiles whose criteria the lock holds: the headline profile (standard) and the one the baseline is at (smoke)
LOCKED_PROFILES = ("smoke", "standard")
#: the profile whose master seed derives from the lock's hash
HEADLINE_PROFILE = "standard"
#: a directory: ``Evidence.declare`` writes each declared premise and counted criterion there, then skips the test
DECLARE_ONLY_ENV = "ATTN_CLAIMS_DECLARE_ONLY"
#: the master seed range of ``--master-seed`` (``harness.settings``); a lock's seed is in 1..MAX, never 0 (smoke's)
MAX_MASTER_SEED = 10 ** 6
#: how a run says where its seeds came from (``run.seeds_from`` in results.json)
SEEDS_FROM_LOCK, SEEDS_FROM_OPTION, SEEDS_DEFAULT = "lock", "--master-seed", "default"
#: the command that refreshes the lock
REFRESH = "python -m harness.report lock --write"


class LockError(ValueError):
    """A lock file that cannot be read; the message names the file."""


def row(criterion: Mapping[str, Any]) -> dict[str, Any]:
    """What the lock holds of one criterion record (``Criterion.to_dict()`` or a results.json criterion). Its
    ``quote`` is the note's words, or for a criterion that quotes none, ``"unquoted: "`` and its reason (issue 54),
    so that the words it stands on are frozen either way."""
    words = criterion.get("quote") or (f"unquoted: {criterion['unquoted']}" if criterion.get("unquoted") else "")
    return {"fingerprint": criterion.get("fingerprint"), "role": criterion.get("role"),
            "falsified_by": sorted(criterion.get("falsified_by") or ()), "quote": words}


def locked(criterion: Mapping[str, Any]) -> bool:
    """Whether a criterion record belongs in the lock: a premise or a counted criterion."""
    return role_of(criterion) in (COUNTED, PREMISE)


def build(per_profile: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """The lock's criteria from {profile: {"<claim>/<criterion>": row}}: one entry per criterion, its fingerprint
    (and its role, where it differs) per profile that declares it."""
    out: dict[str, dict[str, Any]] = {}
    for profile in sorted(per_profile):
        for key, r in per_profile[profile].items():
            entry = out.setdefault(key, {"falsified_by": r["falsified_by"], "quote": r["quote"], "role": {},
                                         "fingerprint": {}})
            entry["fingerprint"][profile] = r["fingerprint"]
            entry["role"][profile] = r["role"]
            for field in ("falsified_by", "quote"):
                if entry[field] != r[field]:
                    raise LockError(f"{key}: its {field} differs between profiles")
    for entry in out.values():
        if len(set(entry["role"].values())) == 1:       # the same at every profile: said once
            entry["role"] = next(iter(entry["role"].values()))
    return {k: out[k] for k in sorted(out)}


def canonical(criteria: Mapping[str, Any]) -> str:
    return json.dumps(criteria, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def criteria_hash(criteria: Mapping[str, Any]) -> str:
    """The sha256 of the criteria's canonical content (sorted JSON)."""
    return hashlib.sha256(canonical(criteria).encode()).hexdigest()


def master_seed(lock_hash: str) -> int:
    """The headline profile's master seed from the lock's hash: in 1..MAX_MASTER_SEED, never 0 (smoke's)."""
    return int(lock_hash[:12], 16) % MAX_MASTER_SEED + 1


def document(criteria: Mapping[str, Any]) -> dict[str, Any]:
    h = criteria_hash(criteria)
    return {"about": "issue 47: every premise and counted criterion, frozen; the standard profile's master seed "
                     f"derives from the hash. Refresh: {REFRESH}",
            "hash": h, "standard_master_seed": master_seed(h), "criteria": dict(criteria)}


def dumps(doc: Mapping[str, Any]) -> str:
    """The lock as text: sorted JSON, one criterion per line (a change reads as a one-line diff)."""
    head = [f"  {json.dumps(k)}: {json.dumps(doc[k], sort_keys=True, ensure_ascii=True)}"
            for k in sorted(doc) if k != "criteria"]
    crits = doc["criteria"]
    lines = [f"    {json.dumps(k)}: {json.dumps(crits[k], sort_keys=True, ensure_ascii=True)}" for k in sorted(crits)]
    return "{\n" + ",\n".join(head + ['  "criteria": {\n' + ",\n".join(lines) + "\n  }"]) + "\n}\n"


def load(path: Path) -> dict[str, Any]:
    """A lock file, its hash checked against its content."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise LockError(f"{path}: cannot read the criteria lock ({exc}); refresh it with {REFRESH}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("criteria"), dict) or "hash" not in doc:
        raise LockError(f"{path}: not a criteria lock (no hash or criteria); refresh it with {REFRESH}")
    if criteria_hash(doc["criteria"]) != doc["hash"]:
        raise LockError(f"{path}: its hash {doc['hash'][:12]} is not its criteria's; refresh it with {REFRESH}")
    return doc


def differences(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """One line per criterion that was added, removed or changed between two locks' criteria."""
    out = []
    for key in sorted(set(old) | set(new)):
        if key not in new:
            out.append(f"- {key} (no longer declared)")
        elif key not in old:
            out.append(f"+ {key} {json.dumps(new[key], sort_keys=True)}")
        elif old[key] != new[key]:
            moved = [f"{f} {json.dumps(old[key].get(f), sort_keys=True)} -> {json.dumps(new[key].get(f), sort_keys=True)}"
                     for f in sorted(set(old[key]) | set(new[key])) if old[key].get(f) != new[key].get(f)]
            out.append(f"~ {key}: " + "; ".join(moved))
    return out


def _at(entry: Mapping[str, Any], field: str, profile: str) -> Any:
    value = entry.get(field)
    return value.get(profile) if isinstance(value, dict) else value


def check_run(claims: Mapping[str, Mapping[str, Any]], lock: Mapping[str, Any], profile: str,
              fast: bool = False) -> list[str]:
    """How a run's premise and counted criteria differ from the lock at its profile ([] when they equal it), over the
    claims the run recorded. A ``--fast`` run declares a subset: only its criteria are compared."""
    crits = lock["criteria"]
    out = []
    seen = set()
    held = held_claims(lock)
    for cid, claim in claims.items():
        if cid not in held:         # a claim with nothing counted and no premise (Q2) has nothing to lock
            if any(locked(c) for c in claim.get("criteria", [])):
                out.append(f"{cid}: no criterion of it in the lock")
            continue
        for c in claim.get("criteria", []):
            if not locked(c):
                continue
            key = f"{cid}/{c['name']}"
            seen.add(key)
            entry = crits.get(key)
            if entry is None or _at(entry, "fingerprint", profile) is None:
                out.append(f"{key} is not in the lock at {profile}")
                continue
            r = row(c)
            moved = [f for f in ("fingerprint", "role", "falsified_by", "quote") if r[f] != _at(entry, f, profile)]
            if moved:
                out.append(f"{key}: {', '.join(moved)} {'differs' if len(moved) == 1 else 'differ'} from the lock")
    if not fast:
        missing = sorted(k for k, e in crits.items() if k.split("/")[0] in claims and k not in seen
                         and _at(e, "fingerprint", profile) is not None)
        out += [f"{k} is in the lock at {profile} but not in this run" for k in missing]
    return out


def held_claims(lock_doc: Mapping[str, Any]) -> set[str]:
    """The claim ids the lock holds criteria of."""
    return {k.split("/")[0] for k in lock_doc["criteria"]}


def summary(run: Mapping[str, Any]) -> str:
    """One line on a run's criteria and seeds against the lock (the terminal summary and the report say it)."""
    h = run.get("criteria_lock")
    if not h:
        return "criteria: no criteria lock (reports/criteria.lock) to compare with"
    at = run.get("criteria_at_lock")
    seeds = {SEEDS_FROM_LOCK: "seeds from the lock",
             SEEDS_FROM_OPTION: f"seeds from --master-seed {run.get('master_seed')}, not from the lock",
             SEEDS_DEFAULT: f"master seed {run.get('master_seed')}, {run.get('profile', 'this')} profile's default "
                            f"(only the {HEADLINE_PROFILE} profile's seeds come from the lock)"}.get(run.get("seeds_from"), "")
    state = (f"at lock {h[:12]}" if at else f"differ from the lock {h[:12]}" if at is False
             else f"not compared with lock {h[:12]}")
    return f"criteria: {state}" + (f", {seeds}" if seeds else "")


def declared_rows(rows_dir: Path) -> dict[str, dict[str, Any]]:
    """The rows ``Evidence.declare`` wrote under ``DECLARE_ONLY_ENV`` (one JSON object per line)."""
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(Path(rows_dir).glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rec = json.loads(line)
                out[rec["key"]] = rec["row"]
    return out


def write_declared(rows_dir: str, claim_id: str, criteria: Iterable[Mapping[str, Any]]) -> None:
    """Append a claim's declared premise and counted criteria to ``rows_dir`` (``DECLARE_ONLY_ENV``)."""
    path = Path(rows_dir) / f"{claim_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as f:
        for c in criteria:
            if locked(c):
                f.write(json.dumps({"key": f"{claim_id}/{c['name']}", "row": row(c)}, sort_keys=True) + "\n")


def check_headline(results: Mapping[str, Any], lock_doc: Mapping[str, Any]) -> list[str]:
    """Why a committed headline run (``reports/standard.json``) is not at the lock ([] when it is): a complete run at
    the headline profile, not a dry or fast run, on the lock's master seed, its premise and counted criteria equal to
    the lock's at that profile, every claim the lock holds run."""
    run = results.get("run", {})
    out = []
    if run.get("profile") != HEADLINE_PROFILE:
        out.append(f"profile {run.get('profile')!r}, not {HEADLINE_PROFILE}")
    if run.get("dry_run") or run.get("fast") or not run.get("complete"):
        out.append("a dry, fast or incomplete run")
    seed = master_seed(lock_doc["hash"])
    if run.get("master_seed") != seed:
        out.append(f"master seed {run.get('master_seed')}, not the lock's {seed} (lock {lock_doc['hash'][:12]})")
    claims = results.get("claims", {})
    held = sorted({k.split("/")[0] for k, e in lock_doc["criteria"].items()
                   if _at(e, "fingerprint", HEADLINE_PROFILE) is not None})
    out += [f"{cid} is in the lock but not in the run" for cid in held if cid not in claims]
    return out + check_run(claims, lock_doc, HEADLINE_PROFILE)
