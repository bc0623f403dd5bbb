"""How many replicates decide? The power and wall-time plan behind ``harness.record.replication.K`` (issue 64).

    python -m harness.suite.replication_plan                          # prints the plan (Markdown)
    python -m harness.suite.replication_plan --write docs/replication.md   # refreshes its generated block

**Power.** The ten development runs at standard budgets (master seeds 301-310,
``reports/development/calibration-standard-*.md``) point each of C1, C3, C4, C5 and R1 one way (their most common
verdict). For each K in 5..10 this draws K replicates' effects on every premise and counted part of the claim,
pools them by the rule (``replication.pool_criterion``: the mean of the K effects, a t over them, Holm over the
claim's counted parts, premises first) and counts how often the pooled verdict is the one the ten runs point to.
A part's replicate effect is drawn from the ten runs' own effects where a calibration lists them (C4's deciding
part, resampled with replacement), else from the committed standard run (``reports/standard.json``): its effect
plus its standard error times a normal draw, so the spread between replicates is the within-run standard error (for
C4's deciding part the ten runs' spread, 0.074 nats, is that part's standard-run standard error, 0.068, within
noise); ``--spread 1.5`` shows the same with 1.5 times that spread, for rate choices that move replicates more.
Exact checks hold, as in all ten runs. Parts are drawn independently.

**r of K.** Beside it, the chance that the pooled verdict is marked fragile (r / K < 0.8) if each replicate repeats
the ten runs' majority verdict at the ten runs' rate (binomial). Pooling decides the ten runs' way from K = 5 on, so
what K buys beyond that is a fragile mark that tells a firm claim (replicates repeating at 0.95) from a fragile one
(0.6): K must keep both of its errors under ``MARK_ERROR``.

**Wall time.** One replicate is the standard suite, unchanged, in one run of ``-n 2 --dist loadgroup``: its units
(the shared sweep's group, each other claim) are planned on the two workers as the plugin plans them
(``harness.schedule.plan``) from the committed standard run's claim times, and the set is K such runs, each with a
``SLACK`` for a slow day of the box. K is the smallest K in 5..10 at which every claim reaches ``POWER`` under both
spreads, the fragile mark's errors stay under ``MARK_ERROR``, and the set fits ``SET_BUDGET_S``, each run under ``PART_BUDGET_S``.
"""
from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from harness.record import decision, replication
from harness.record import results as results_io
from harness.record import verdict as verdicts
from harness.record.family import stat
from harness.schedule import claim_of, plan
from harness.suite import USAGE_EXIT, OneLineParser

REPO = Path(__file__).resolve().parents[2]
CALIBRATIONS = "reports/development/calibration-standard-*.md"
STANDARD = "reports/standard.json"
KS = range(5, 11)
POWER = 0.95                 # the share of pooled sets that must decide the way the ten runs point, every claim
SPREADS = (1.0, 1.5)
N_SIM = 300
SEED = 64
#: the fragile mark (r / K < 0.8) must tell a firm claim from a fragile one: marked fragile at most MARK_ERROR of
#: the time where each replicate repeats the pooled verdict at MARK_FIRM, left unmarked at most MARK_ERROR of the time
#: at MARK_FRAGILE (the single runs' firmness of C4 and C5, 0.59 and 0.64)
MARK_FIRM, MARK_FRAGILE, MARK_ERROR = 0.95, 0.6, 0.15
SLACK = 1.2                  # a slow day of the box: the wall budgets' own ~20%
SET_BUDGET_S = 6 * 3600      # the whole set on the 2-core box
PART_BUDGET_S = 90 * 60      # one run: a session's commands end with it
WORKERS = 2
MARKER = "replication-plan"
_VERDICT_ROW = re.compile(r"^\| (\w+) \(verdict\) \| [^|]+ \| [^|]+ \| (\d+) \| ([^|]+) \|", re.M)
_EFFECT_ROW = re.compile(r"^\| (\d{3}) \| [a-z ,]+\([\d.]+\) \| ([^|]+?) \| (-?[\d.]+) \[", re.M)


def ten_runs(root: Path = REPO) -> dict[str, dict[str, Any]]:
    """{claim: {"outcomes": Counter of verdicts, "effects": {part: [effect per run]}, "source": file}} from the
    development calibrations: each "(verdict)" row, and a per-run table of the deciding part's effects where one is
    listed."""
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(root.glob(CALIBRATIONS)):
        text = path.read_text(encoding="utf-8")
        for cid, _n, outcomes in _VERDICT_ROW.findall(text):
            counts = Counter({v.strip(): int(n) for n, v in
                              (re.match(r"\s*(.+?) (\d+)\s*$", o).groups()[::-1] for o in outcomes.split(","))})
            out[cid] = {"outcomes": counts, "effects": {}, "source": path.relative_to(root).as_posix()}
        rows = _EFFECT_ROW.findall(text)
        claims = [cid for cid, _n, _o in _VERDICT_ROW.findall(text)]
        if rows and len(claims) == 1:
            for _seed, part, effect in rows:
                out[claims[0]]["effects"].setdefault(part.strip(), []).append(float(effect))
    return out


def _parts(claim: Mapping[str, Any]) -> list[tuple[int, int, str, float, float]]:
    """(criterion index, part index, label, effect, standard error) of each premise and counted part of a claim
    record; an exact point or a degenerate part has standard error 0 (it is held where it is)."""
    out = []
    for i, c in enumerate(claim["criteria"]):
        if verdicts.role_of(c) == verdicts.REPORTED or (c.get("rule") or {}).get("kind") in (None, "exact"):
            continue
        for q, m in enumerate(c.get("measurements") or ()):
            s = stat(m)
            out.append((i, q, m.get("label") or "", replication.cluster_effect(m),
                        0.0 if s.exact or s.degenerate else float(s.se)))
    return out


def simulate(claim: Mapping[str, Any], effects: Mapping[str, Sequence[float]], K: int, spread: float,
             rng: np.random.Generator, n_sim: int = N_SIM) -> Counter:
    """The pooled verdicts of ``n_sim`` sets of K replicates of ``claim`` (a standard run's record): each part's
    replicate effects drawn (``effects``: a part's listed effects, resampled; else normal about the run's effect
    with ``spread`` times its standard error), pooled and judged by the rule."""
    parts = _parts(claim)
    base = [dict(c, measurements=list(c.get("measurements") or ())) for c in claim["criteria"]]
    out: Counter = Counter()
    for _ in range(n_sim):
        draws = {}
        for i, q, label, delta, se in parts:
            listed = effects.get(label) if label else None
            if listed and _deciding(claim["criteria"][i], label):
                draws[(i, q)] = rng.choice(np.asarray(listed, float), K, replace=True)
            else:
                draws[(i, q)] = delta + spread * se * rng.standard_normal(K)
        pooled = []
        for i, c in enumerate(base):
            if not any(k[0] == i for k in draws):
                pooled.append(c)
                continue
            reps = [dict(c, measurements=[_replicate_part(m, float(draws[(i, q)][k]))
                                          for q, m in enumerate(c["measurements"])]) for k in range(K)]
            pooled.append(replication.pool_criterion(reps, list(range(1, K + 1))))
        out[verdicts.judge_record(pooled, kind=claim.get("kind") or "claim", firmness=False)["verdict"]] += 1
    return out


def _replicate_part(m: Mapping[str, Any], effect: float) -> dict[str, Any]:
    """A drawn replicate's measurement of a part: its effect as an estimate (``cluster_effect`` reads its value);
    an exact point or a degenerate part as the standard run measured it (held where it is)."""
    s = stat(m)
    if s.exact or s.degenerate:
        return dict(m)
    return decision.estimate(effect, 1.0, 5, 6, label=m.get("label") or "")


def _deciding(criterion: Mapping[str, Any], label: str) -> bool:
    """Whether the calibration's listed effects are this criterion's: the counted criterion whose deciding part the
    standard run names with that label."""
    return verdicts.role_of(criterion) == verdicts.COUNTED and criterion.get("deciding_part") == label


def fragile_chance(share: float, K: int) -> float:
    """P(r / K < FRAGILE_BELOW) when each of K replicates gives the pooled verdict with probability ``share``."""
    from scipy import stats as sps

    need = int(np.ceil(replication.FRAGILE_BELOW * K - 1e-9))
    return float(sps.binom.cdf(need - 1, K, share))


def grouped(root: Path = REPO) -> list[str]:
    """The claims whose modules share one xdist group (the shared tuned sweep's: one unit on one worker)."""
    return sorted((claim_of(f"{p.name}::t") for p in (root / "claims").glob("test_*.py")
                   if "pytest.mark.xdist_group(" in p.read_text(encoding="utf-8")), key=results_io.claim_sort_key)


def replicate_wall(standard: Mapping[str, Any], root: Path = REPO
                   ) -> tuple[float, dict[str, float], dict[int, list[str]]]:
    """(planned seconds of one replicate, seconds per unit, the two workers' units) from the standard run's claim
    times: the sweep's claims are one unit (one xdist group), every other claim its own."""
    sweep = grouped(root)
    units: dict[str, float] = {}
    for cid, c in standard["claims"].items():
        unit = "sweep (" + ", ".join(sweep) + ")" if cid in sweep else cid
        units[unit] = units.get(unit, 0.0) + float(c.get("duration_s") or 0.0)
    workers = plan(units, list(range(WORKERS)))
    loads = [sum(units[u] for u in workers[w]) for w in workers]
    return max(loads), units, workers


def mark_errors(K: int) -> tuple[float, float]:
    """(P(marked fragile) at a repeat rate of MARK_FIRM, P(not marked) at MARK_FRAGILE) with K replicates."""
    return fragile_chance(MARK_FIRM, K), 1.0 - fragile_chance(MARK_FRAGILE, K)


def choose(power: Mapping[tuple[str, int, float], float], wall_s: float) -> int:
    """The smallest K in KS at which every claim reaches POWER under every spread, the fragile mark errs at most
    MARK_ERROR either way, and the set fits its budget; else the largest K that fits."""
    fits = [K for K in KS if K * wall_s * SLACK <= SET_BUDGET_S and wall_s * SLACK <= PART_BUDGET_S]
    claims = sorted({c for c, _k, _s in power})
    strong = [K for K in fits if all(power[(c, K, s)] >= POWER for c in claims for s in SPREADS)
              and max(mark_errors(K)) <= MARK_ERROR]
    return strong[0] if strong else max(fits)


def build(root: Path = REPO, n_sim: int = N_SIM) -> dict[str, Any]:
    standard = results_io.load(root / STANDARD)
    runs = ten_runs(root)
    rng = np.random.default_rng(SEED)
    power, rows = {}, []
    for cid in sorted(runs, key=results_io.claim_sort_key):
        majority, n_major = runs[cid]["outcomes"].most_common(1)[0]
        share = n_major / sum(runs[cid]["outcomes"].values())
        for spread in SPREADS:
            for K in KS:
                got = simulate(standard["claims"][cid], runs[cid]["effects"], K, spread, rng, n_sim)
                power[(cid, K, spread)] = got[majority] / n_sim
        rows.append({"claim": cid, "majority": majority, "share": share, "runs": runs[cid]})
    wall_s, units, workers = replicate_wall(standard, root)
    K = choose(power, wall_s)
    return {"power": power, "rows": rows, "wall_s": wall_s, "units": units, "workers": workers, "K": K,
            "measured_s": float(standard["run"]["duration_s"]), "commit": standard["run"].get("git_commit"),
            "n_sim": n_sim}


def _hm(s: float) -> str:
    return f"{int(s // 3600)} h {int(s % 3600 // 60):02d} min" if s >= 3600 else f"{s / 60:.1f} min"


def markdown(p: Mapping[str, Any]) -> str:
    ks = list(KS)
    lines = [f"Generated by `python -m harness.suite.replication_plan --write docs/replication.md` "
             f"({p['n_sim']} pooled sets per cell, seed {SEED}). **K = {p['K']}.**", "",
             "Share of pooled sets of K replicates that decide each claim the way the ten development runs point "
             "(spread 1: the standard run's standard error; 1.5: half again), and the chance the pooled verdict "
             "is marked fragile (r/K < 0.8) at the ten runs' repeat rate:", "",
             "| claim | ten runs | points to | spread | " + " | ".join(f"K={k}" for k in ks) + " |",
             "|---|---|---|---|" + "---|" * len(ks)]
    for row in p["rows"]:
        ten = ", ".join(f"{v} {n}" for v, n in row["runs"]["outcomes"].most_common())
        for spread in SPREADS:
            cells = [f"{p['power'][(row['claim'], k, spread)]:.3f}" for k in ks]
            lines.append(f"| {row['claim']} | {ten} | {row['majority']} | {spread:g} | " + " | ".join(cells) + " |")
        lines.append(f"| {row['claim']} | | P(fragile) | | " +
                     " | ".join(f"{fragile_chance(row['share'], k):.2f}" for k in ks) + " |")
    lines += ["", f"The fragile mark (r/K < 0.8): the chance it marks a claim whose replicates repeat at "
                  f"{MARK_FIRM} (firm), and the chance it misses one at {MARK_FRAGILE} (the single runs' firmness of "
                  "C4 and C5):", "", "| | " + " | ".join(f"K={k}" for k in ks) + " |", "|---|" + "---|" * len(ks),
              f"| marked at {MARK_FIRM} | " + " | ".join(f"{mark_errors(k)[0]:.3f}" for k in ks) + " |",
              f"| missed at {MARK_FRAGILE} | " + " | ".join(f"{mark_errors(k)[1]:.3f}" for k in ks) + " |"]
    wall, slack = p["wall_s"], p["wall_s"] * SLACK
    lines += ["", f"Wall time, from `reports/standard.json` (commit {str(p['commit'])[:7]}, measured "
                  f"{p['measured_s']:.0f} s on 2 cores): one replicate is one run of the standard suite, "
                  f"`-n 2 --dist loadgroup`, its units planned on the two workers:", "",
              "| worker | units (seconds in the standard run) | planned |", "|---|---|---|"]
    for w, us in p["workers"].items():
        lines.append(f"| {w} | " + ", ".join(f"{u} {p['units'][u]:.0f}" for u in us) +
                     f" | {sum(p['units'][u] for u in us):.0f} s |")
    lines += ["", "| K | set, planned | set, with 20% slack | longest run, with slack |", "|---|---|---|---|"]
    for k in ks:
        lines.append(f"| {k} | {_hm(k * wall)} | {_hm(k * slack)}{' (over 6 h)' if k * slack > SET_BUDGET_S else ''}"
                     f" | {_hm(slack)} |")
    lines += ["", f"Chosen: the smallest K in 5..10 at which every claim decides the ten runs' way in at least "
                  f"{POWER:.0%} of pooled sets at both spreads, the fragile mark errs at most {MARK_ERROR:.0%} of the "
                  f"time either way, and K runs of {_hm(slack)} (with slack) fit 6 hours: "
                  f"**K = {p['K']}**, {_hm(p['K'] * slack)} with slack; no run over 90 minutes (the longest unit, "
                  f"C2, {p['units'].get('C2', 0) / 60:.1f} min)."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m harness.suite.replication_plan",
                           description="The power and wall-time plan that chooses K, the number of replicates "
                                       "(issue 64); prints it, or with --write refreshes its block in a file.")
    parser.add_argument("--write", type=Path, default=None, metavar="FILE",
                        help=f"replace the <!-- {MARKER}:begin/end --> block of FILE (docs/replication.md)")
    parser.add_argument("--n-sim", type=int, default=N_SIM, help=f"pooled sets per cell (default {N_SIM})")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.n_sim < 10:
        parser.error("--n-sim must be at least 10")
    p = build(n_sim=args.n_sim)
    text = markdown(p)
    if args.write is None:
        print(text)
        return 0
    try:
        doc = args.write.read_text(encoding="utf-8")
    except OSError as exc:
        parser.error(f"cannot read {args.write}: {exc.strerror or exc}")
    begin, end = f"<!-- {MARKER}:begin -->", f"<!-- {MARKER}:end -->"
    if begin not in doc or end not in doc:
        parser.error(f"{args.write} has no {begin} ... {end} block")
    head, rest = doc.split(begin, 1)
    results_io.write_text_atomic(args.write, head + begin + "\n" + text + "\n" + end + rest.split(end, 1)[1])
    print(f"wrote {args.write}" + ("" if p["K"] == replication.K else
                                   f"; the plan chooses K = {p['K']}, harness.record.replication.K is {replication.K}"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
