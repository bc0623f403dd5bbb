"""The criteria lock, ``reports/criteria.lock`` (issue 47, mechanism 2: frozen criteria, fresh seeds).

The lock holds, for every premise and counted criterion of every claim module, what decides it: its fingerprint
(``harness.record.decision.fingerprint`` of its definition: kind, metric, arms, bounds, margin, alpha, counts, fast,
role), per profile where the profile's numbers enter it, plus its role, the faults that must refute it
(``falsified_by``) and the note's words it tests (``quote``).

It also holds the conditions they are tested under (issue 54): for each seeded profile (``SEEDED_PROFILES``:
standard and full), the fingerprint of every budget block of ``harness/profiles/`` (steps, tasks, d_k, learning-rate
grids and their extension, seed and tuning-seed counts, model sizes; ``block_fingerprints``) and the profile's
default seed count. A seeded profile's master seed derives from the sha256 of the criteria and that profile's blocks
(``profile_seed``), so that the seeds that decide the criteria are seeds nobody had seen when the criteria *and*
their budgets were chosen: changing a counted criterion or a standard budget draws new standard seeds. The file's
``hash`` covers everything in it.

The code's criteria are collected by running each claim module up to its ``ev.declare`` and no further (the
environment variable ``DECLARE_ONLY_ENV`` names a directory, ``Evidence.declare`` writes the declared rows there and
skips the test): ``python -m harness.report lock`` (``--write`` to refresh the file).

API: ``row``, ``build``, ``block_fingerprints``, ``criteria_hash``, ``document``, ``dumps``, ``load``, ``master_seed``,
``profile_seed``, ``differences``, ``block_differences``, ``check_run`` (a run against the lock), ``check_headline``
(the committed standard run against the lock), ``summary``.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterable, Mapping

from harness.record import replication
from harness.record.verdict import COUNTED, PREMISE, role_of

#: where the lock lives, relative to the repository root
LOCK_FILE = Path("reports") / "criteria.lock"
#: the profiles whose criteria the lock holds: the headline profile (standard) and the one the baseline is at (smoke)
LOCKED_PROFILES = ("smoke", "standard")
#: the profile whose master seed derives from the lock's hash
HEADLINE_PROFILE = "standard"
#: the profiles whose budget blocks the lock holds and whose master seeds derive from it (criteria and their blocks)
SEEDED_PROFILES = ("standard", "full")
#: the key in a profile's block fingerprints that holds its default seed count (a claim's own ``seeds`` is in its block)
DEFAULT_SEEDS_KEY = "*seeds"
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
    return json.dumps(criteria, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=repr)


def block_fingerprints(blocks: Mapping[str, Any], n_seeds: int) -> dict[str, str]:
    """One profile's conditions as the lock holds them: per budget block (a claim's or a shared one), the first 12
    hex digits of the sha256 of its canonical JSON, and under ``DEFAULT_SEEDS_KEY`` the profile's default seed
    count. Any number in a block (a step, a grid rate, a seed count, a model size) changes its fingerprint."""
    out = {str(cid): hashlib.sha256(canonical(block).encode()).hexdigest()[:12] for cid, block in blocks.items()}
    out[DEFAULT_SEEDS_KEY] = str(int(n_seeds))
    return dict(sorted(out.items()))


def criteria_hash(criteria: Mapping[str, Any], blocks: Mapping[str, Any] | None = None,
                  rules: Mapping[str, str] | None = None) -> str:
    """The sha256 of the lock's canonical content (sorted JSON): the criteria, and the blocks and the decision rules
    (``harness.record.rules``, issue 63) where it holds them."""
    content: Any = criteria if blocks is None else {"blocks": blocks, "criteria": criteria}
    if rules is not None:
        content = {**({"criteria": criteria} if blocks is None else content), "rules": dict(rules)}
    return hashlib.sha256(canonical(content).encode()).hexdigest()


def master_seed(lock_hash: str) -> int:
    """A master seed from a hash: in 1..MAX_MASTER_SEED, never 0 (smoke's)."""
    return int(lock_hash[:12], 16) % MAX_MASTER_SEED + 1


def profile_seed(doc: Mapping[str, Any], profile: str = HEADLINE_PROFILE) -> int | None:
    """A seeded profile's master seed from a lock document: of the sha256 of its criteria and that profile's block
    fingerprints (a lock without blocks: of its hash). None for a profile the lock seeds not."""
    blocks = doc.get("blocks")
    if blocks is None:
        return master_seed(doc["hash"]) if profile == HEADLINE_PROFILE else None
    if profile not in blocks:
        return None
    return master_seed(criteria_hash(doc["criteria"], blocks[profile], doc.get("rules")))


def document(criteria: Mapping[str, Any], blocks: Mapping[str, Mapping[str, str]] | None = None,
             rules: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The lock file's content: the criteria, the seeded profiles' block fingerprints (``block_fingerprints``), the
    hash of both, and each seeded profile's master seed (``profile_seed``)."""
    doc: dict[str, Any] = {"about": "issues 47, 54: every premise and counted criterion, and the standard and full "
                                    "profiles' budget blocks, frozen; each of those profiles' master seed derives "
                                    f"from the criteria and its blocks. Refresh: {REFRESH}",
                           "criteria": dict(criteria)}
    if blocks is not None:
        doc["blocks"] = {p: dict(sorted(b.items())) for p, b in sorted(blocks.items())}
    if rules is not None:
        doc["rules"] = dict(sorted(rules.items()))
    doc["hash"] = criteria_hash(doc["criteria"], doc.get("blocks"), doc.get("rules"))
    if rules is not None:   # the replicates that decide the record (issue 64): seeds from the hash, rule in ``rules``
        doc["replication"] = replication.lock_section(doc["hash"])
    doc["standard_master_seed"] = profile_seed(doc, HEADLINE_PROFILE)
    if blocks is not None:
        doc["master_seeds"] = {p: profile_seed(doc, p) for p in sorted(blocks)}
    return doc


def dumps(doc: Mapping[str, Any]) -> str:
    """The lock as text: sorted JSON, one criterion per line (a change reads as a one-line diff)."""
    head = [f"  {json.dumps(k)}: {json.dumps(doc[k], sort_keys=True, ensure_ascii=True)}"
            for k in sorted(doc) if k not in ("criteria", "blocks", "rules", "replication")]
    crits = doc["criteria"]
    lines = [f"    {json.dumps(k)}: {json.dumps(crits[k], sort_keys=True, ensure_ascii=True)}" for k in sorted(crits)]
    body = head + ['  "criteria": {\n' + ",\n".join(lines) + "\n  }"]
    if "blocks" in doc:     # one profile a line per block: a changed budget reads as a one-line diff
        per = [f'    {json.dumps(p)}: {{\n' + ",\n".join(f"      {json.dumps(k)}: {json.dumps(v)}"
                                                    for k, v in sorted(b.items())) + "\n    }"
               for p, b in sorted(doc["blocks"].items())]
        body.append('  "blocks": {\n' + ",\n".join(per) + "\n  }")
    if "replication" in doc:
        body.append('  "replication": ' + json.dumps(doc["replication"], sort_keys=True, ensure_ascii=True))
    if "rules" in doc:      # one rule a line
        body.append('  "rules": {\n' + ",\n".join(f"    {json.dumps(k)}: {json.dumps(v, ensure_ascii=True)}"
                                                 for k, v in sorted(doc["rules"].items())) + "\n  }")
    return "{\n" + ",\n".join(body) + "\n}\n"


def load(path: Path) -> dict[str, Any]:
    """A lock file, its hash checked against its content."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise LockError(f"{path}: cannot read the criteria lock ({exc}); refresh it with {REFRESH}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("criteria"), dict) or "hash" not in doc:
        raise LockError(f"{path}: not a criteria lock (no hash or criteria); refresh it with {REFRESH}")
    if criteria_hash(doc["criteria"], doc.get("blocks"), doc.get("rules")) != doc["hash"]:
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


def block_differences(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> list[str]:
    """One line per seeded profile's budget block that was added, removed or changed between two locks' blocks."""
    old, new = old or {}, new or {}
    out = []
    for profile in sorted(set(old) | set(new)):
        a, b = old.get(profile) or {}, new.get(profile) or {}
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                what = "default seed count" if key == DEFAULT_SEEDS_KEY else f"{key}'s block"
                out.append(f"~ {profile}: {what} {a.get(key, '(none)')} -> {b.get(key, '(none)')}")
    return out


def rule_differences(old: Mapping[str, str] | None, new: Mapping[str, str] | None) -> list[str]:
    """One line per decision rule (``harness.record.rules``) added, removed or reworded between two locks."""
    old, new = old or {}, new or {}
    return [f"{'+' if k not in old else '-' if k not in new else '~'} rule {k}"
            for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]


def _at(entry: Mapping[str, Any], field: str, profile: str) -> Any:
    value = entry.get(field)
    return value.get(profile) if isinstance(value, dict) else value


def check_run(claims: Mapping[str, Mapping[str, Any]], lock: Mapping[str, Any], profile: str,
              fast: bool = False, blocks: Mapping[str, str] | None = None) -> list[str]:
    """How a run's premise and counted criteria differ from the lock at its profile ([] when they equal it), over the
    claims the run recorded. A ``--fast`` run declares a subset: only its criteria are compared. ``blocks``: the
    run's block fingerprints (``block_fingerprints``) where the lock holds its profile's; each claim's block, every
    shared block and the default seed count are compared."""
    crits = lock["criteria"]
    out = []
    locked_blocks = (lock.get("blocks") or {}).get(profile)
    if blocks is not None and locked_blocks is not None:
        for key in sorted(set(locked_blocks) | set(blocks)):
            if key in claims or not key[:1].isupper() or key == DEFAULT_SEEDS_KEY:
                if locked_blocks.get(key) != blocks.get(key):
                    what = "the default seed count" if key == DEFAULT_SEEDS_KEY else f"{key}'s budget block"
                    out.append(f"{what} at {profile} differs from the lock")
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
    seed = profile_seed(lock_doc, HEADLINE_PROFILE)
    if run.get("master_seed") != seed:
        out.append(f"master seed {run.get('master_seed')}, not the lock's {seed} (lock {lock_doc['hash'][:12]})")
    if lock_doc.get("blocks") and run.get("blocks") is None:
        out.append("the run records no budget blocks to hold against the lock's")
    claims = results.get("claims", {})
    held = sorted({k.split("/")[0] for k, e in lock_doc["criteria"].items()
                   if _at(e, "fingerprint", HEADLINE_PROFILE) is not None})
    out += [f"{cid} is in the lock but not in the run" for cid in held if cid not in claims]
    return out + check_run(claims, lock_doc, HEADLINE_PROFILE, blocks=run.get("blocks"))
