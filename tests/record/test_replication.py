"""The replicated verdict (issue 64): replicate seeds from the lock's hash, the pooled rule on synthetic records whose
answer is known, r of K with its Wilson interval, and rejudge reproducing a pooled record."""
import json
import math
from pathlib import Path

import pytest
from scipy import stats as sps

from harness.record import decision, replication
from harness.record import results as R

from tests.record.synthetic import around

H = "dd7489db4db701d64ac40095628c0c609e078215e30e337aa258ebbb60f6c1cc"


def test_replicate_seeds_derive_from_the_hash_and_are_stable():
    # the rule's own words, computed here independently of the module
    import hashlib
    want = [int(hashlib.sha256(f"{H}:replicate:{k}".encode()).hexdigest()[:12], 16) % 10 ** 6 + 1 for k in (1, 2, 3)]
    assert [replication.replicate_seed(H, k) for k in (1, 2, 3)] == want
    assert replication.replicate_seed(H, 2) == 440067          # stable across checkouts: a change re-draws them
    seeds = replication.replicate_seeds(H)
    assert len(seeds) == replication.K == len(set(seeds)) and all(1 <= s <= 10 ** 6 for s in seeds)
    assert replication.replicate_seeds("0" + H[1:]) != seeds   # another lock, other seeds
    with pytest.raises(ValueError):
        replication.replicate_seed(H, 0)


def test_the_lock_section_pre_registers_k_seeds_and_the_rule():
    section = replication.lock_section(H)
    assert section["K"] == replication.K >= 5 and section["seeds"] == replication.replicate_seeds(H)
    assert section["rule"] == replication.RULE and "Holm" in section["rule"] and "Wilson" in section["rule"]
    assert section["profile"] == "standard" and json.loads(json.dumps(section)) == section


@pytest.mark.parametrize("r,n", [(0, 5), (3, 5), (5, 5), (7, 8), (8, 8), (4, 10)])
def test_wilson_interval(r, n):
    z = sps.norm.isf(0.05)
    p = r / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    lo, hi = replication.wilson(r, n, 0.9)
    assert lo == pytest.approx(max(0, centre - half)) and hi == pytest.approx(min(1, centre + half))
    assert replication.wilson(n - r, n)[0] == pytest.approx(1 - hi)           # symmetric
    assert replication.wilson(5, 5, 0.9)[0] == pytest.approx(0.6489, abs=1e-4)


# ------------------------------------------------------------------------------------------- synthetic records
def crit(name, rule, measurements=None, role="counted", holds=None):
    return {"name": name, "kind": rule.kind, "margin": rule.margin, "rule": rule.as_dict(), "role": role,
            "counts": role == "counted", "measurements": measurements or [], "exact_holds": holds, "recorded": True,
            "threshold": decision.threshold_text(rule), "prediction": "p", "fingerprint": f"fp-{name}",
            "measured": None, "passed": False, "refuted": False, "outcome": None, "firmness": None,
            "seeds_for_firm": None, "fast": False}


def replicate(k, criteria, cid="F1", lock=H):
    claim = {"id": cid, "title": "t", "statement": "s", "strength": "strong", "kind": "claim", "criteria": criteria,
             "metrics": {"score": float(k)}, "figures": [], "duration_s": 10.0, "seeds": [k * 1000, k * 1000 + 1],
             "parts": [f"test_{cid.lower()}.py::t"]}
    R.judge_claim(claim, errored=False)
    run = {"profile": "standard", "device": "cpu", "seeds": [k * 1000 + i for i in range(6)], "torch_version": "x",
           "git_commit": "abc", "started_at": f"2026-12-0{k}T00:00:00+00:00", "duration_s": 100.0, "complete": True,
           "replicate": {"k": k, "K": 5, "seed": k, "lock": lock, "run": f"run{k}", "vendor": "AuthenticAMD",
                         "file": f"r{k}-{cid}.json"}}
    return {"schema_version": 2, "run": run, "claims": {cid: claim}}


SUP = decision.superiority(0.05, "test", paired=True)
DELTAS = [0.1, 0.2, 0.3, 0.4, 0.5]


def paired_replicates(deltas=DELTAS, sd=0.05, rule=SUP):
    return [replicate(k, [crit("gain", rule, [decision.samples(around(d, sd, 6, seed=k) + 1.0,
                                                               [1.0] * 3 + [1.0 + 1e-9] * 3, paired=True,
                                                               label="task")])])
            for k, d in enumerate(deltas, 1)]


def test_pooling_a_known_set_gives_the_known_interval():
    pooled = replication.pool(paired_replicates(), 5)
    c = pooled["claims"]["F1"]["criteria"][0]
    m = c["measurements"][0]
    assert m["over"] == "replicates" and m.get("b") is None and m["a"] == pytest.approx(DELTAS, abs=1e-8)
    se = 0.1581139 / math.sqrt(5)
    q = sps.t.isf(0.05, 4)
    assert c["measured"] == pytest.approx(0.3, abs=1e-8)
    assert c["ci"] == pytest.approx([0.3 - q * se, 0.3 + q * se], abs=1e-6)
    assert c["outcome"] == "passed" and "one-sample t over replicates" in c["test"]
    assert pooled["claims"]["F1"]["verdict"] == "supported" and pooled["run"]["complete"]


@pytest.mark.parametrize("m,effect", [
    (decision.samples([1.0, 2.0, 3.0], [0.5, 0.5, 1.0], paired=False), 2.0 - 2 / 3),
    (decision.samples([1.0, 2.0, 4.0]), 7 / 3),
    (decision.samples([1.0, 2.0, 4.0], [0.0, 1.0, 1.0], paired=True), 5 / 3),
    (decision.estimate(0.7, 0.1, 5, 6), 0.7),
])
def test_a_replicates_effect_is_its_cluster_summary(m, effect):
    assert replication.cluster_effect(m) == pytest.approx(effect)


def test_an_exact_check_holds_pooled_only_if_it_holds_in_every_replicate():
    ex = decision.exact("deterministic")
    recs = [replicate(k, [crit("check", ex, holds=True)]) for k in range(1, 6)]
    assert replication.pool(recs, 5)["claims"]["F1"]["verdict"] == "supported"
    recs[3] = replicate(4, [crit("check", ex, holds=False)])
    pooled = replication.pool(recs, 5)["claims"]["F1"]
    assert pooled["verdict"] == "refuted" and "fails in replicate 4" in pooled["criteria"][0]["detail"]
    assert pooled["replication"]["r"] == 1 and pooled["replication"]["outcomes"][3] == "refuted"


def test_an_invalid_part_in_one_replicate_is_invalid_pooled():
    recs = paired_replicates()
    recs[1]["claims"]["F1"]["criteria"][0]["measurements"][0]["invalid"] = "an arm at its grid's edge"
    c = replication.pool(recs, 5)["claims"]["F1"]["criteria"][0]
    assert c["outcome"] == "inconclusive" and "replicate 2: an arm at its grid's edge" in c["measurements"][0]["invalid"]


def test_the_pooled_verdict_can_differ_from_most_replicates_and_says_so():
    """Each replicate alone is inconclusive (its interval, over 6 noisy seeds, reaches below the margin), but their
    five effects all lie near 0.3: pooled, the gain is shown. r = 0 of 5: fragile, and flagged."""
    recs = paired_replicates(deltas=[0.28, 0.3, 0.32, 0.29, 0.31], sd=0.5)
    assert all(r["claims"]["F1"]["verdict"] == "inconclusive" for r in recs)
    claim = replication.pool(recs, 5)["claims"]["F1"]
    rep = claim["replication"]
    assert claim["verdict"] == "supported"
    assert rep["r"] == 0 and rep["K"] == 5 and rep["fragile"] and rep["pooled_differs_from_most"]
    assert rep["outcomes"] == ["inconclusive"] * 5 and rep["wilson"][0] == 0.0
    assert rep["vendors"] == ["AuthenticAMD"] * 5 and rep["runs"] == [f"run{k}" for k in range(1, 6)]


def test_r_of_k_counts_the_replicates_that_give_the_pooled_verdict():
    s = replication.summary("supported", ["supported"] * 4 + ["inconclusive"])
    assert (s["r"], s["K"], s["fragile"], s["pooled_differs_from_most"]) == (4, 5, False, False)
    s = replication.summary("refuted", ["refuted"] * 3 + ["inconclusive"] * 2)
    assert (s["r"], s["fragile"], s["pooled_differs_from_most"]) == (3, True, False)
    assert replication.summary("refuted", ["refuted"] * 2 + ["inconclusive"] * 3)["pooled_differs_from_most"]


def test_rejudge_reproduces_the_pooled_record_byte_for_byte():
    pooled = replication.pool(paired_replicates(), 5)
    text = json.dumps(R.to_jsonable(pooled), indent=2, allow_nan=False)
    R.validate(json.loads(text))
    assert json.dumps(R.rejudge(json.loads(text)), indent=2, allow_nan=False) == text


def test_rejudge_reads_r_of_k_again_from_a_re_decided_verdict():
    pooled = R.to_jsonable(replication.pool(paired_replicates(), 5))
    pooled["claims"]["F1"]["replication"]["outcomes"] = ["inconclusive"] * 5
    again = R.rejudge(pooled)["claims"]["F1"]["replication"]
    assert again["r"] == 0 and again["pooled_differs_from_most"]


def test_a_claim_short_of_k_replicates_is_listed_not_pooled():
    recs = paired_replicates()[:3]
    pooled = replication.pool(recs, 5)
    assert pooled["claims"] == {} and pooled["replication"]["in"] == {"F1": [1, 2, 3]}
    assert not pooled["run"]["complete"] and not pooled["replication"]["complete"]


def test_two_records_of_one_replicate_or_two_locks_are_refused():
    recs = paired_replicates()
    with pytest.raises(replication.ReplicationError, match="two records of replicate 1"):
        replication.pool(recs + [recs[0]], 5)
    other = replicate(1, recs[0]["claims"]["F1"]["criteria"], lock="f" * 64)
    with pytest.raises(replication.ReplicationError, match="locks"):
        replication.pool(recs[1:] + [other], 5)


def test_replicates_of_another_definition_are_refused():
    recs = paired_replicates()
    recs[2]["claims"]["F1"]["criteria"][0]["fingerprint"] = "changed"
    with pytest.raises(replication.ReplicationError, match="replicate 3's definition"):
        replication.pool(recs, 5)


def test_record_names_list_the_part_in_the_suites_order():
    assert replication.record_name(3, ["R1", "C4", "C3", "R3"]) == "r3-C3-C4-R1-R3.json"


def test_an_arm_each_replicate_picked_for_itself_is_named_with_every_pick():
    """C4's 'best other alpha' is chosen within each replicate: the pooled part names every pick, not the first
    replicate's, and keeps each replicate's pair."""
    def m(other):
        return {"source": "samples", "label": "kv_lookup d_k=512", "a": [0.5, 0.6], "b": [0.2, 0.3], "paired": True,
                "arms": [other, "alpha = 0.5 (1/sqrt(d_k))"]}
    part = replication.pooled_part("kv_lookup d_k=512", [m("alpha = 0.75 (d_k^-0.75)"), m("alpha = 1 (1/d_k)"),
                                                         m("alpha = 0.75 (d_k^-0.75)")], [1, 2, 3])
    assert part["arms"] == [replication.ONE_OF + "alpha = 0.75 (d_k^-0.75) | alpha = 1 (1/d_k)",
                            "alpha = 0.5 (1/sqrt(d_k))"]
    assert [p[0] for p in part["arms_by_replicate"]] == ["alpha = 0.75 (d_k^-0.75)", "alpha = 1 (1/d_k)",
                                                         "alpha = 0.75 (d_k^-0.75)"]
    from harness.report import words
    assert words.arm(part["arms"][0]) == "1/d_k^0.75 or 1/d_k (each replicate's own)"
    same = replication.pooled_part("kv_lookup d_k=512", [m("alpha = 1 (1/d_k)")] * 2, [1, 2])
    assert same["arms"] == ["alpha = 1 (1/d_k)", "alpha = 0.5 (1/sqrt(d_k))"] and "arms_by_replicate" not in same


def test_the_pooled_run_line_names_every_replicate_not_the_first():
    """The pooled record's provenance line names each replicate's seed, vendor and commit, and the summed time; it
    is never one replicate's run block read as if it were the whole record's."""
    from harness.report import findings
    reps = paired_replicates()
    reps[1]["run"]["git_commit"] = "def4567890"
    reps[4]["run"]["replicate"]["vendor"] = "GenuineIntel"
    pooled = replication.pool(reps, 5)
    assert [r["k"] for r in pooled["run"]["replicates"]] == [1, 2, 3, 4, 5]
    line = findings.run_line(pooled)
    assert line.startswith(f"Pooled from 5 replicates of profile **standard** at lock {H[:12]}")
    assert "master seeds 1, 2, 3, 4, 5" in line and "500 s in all" in line and "100-100 s each" in line
    assert "CPU vendor AuthenticAMD (replicates 1, 2, 3, 4), GenuineIntel (5)" in line
    assert "at commit abc (replicates 1, 3, 4, 5), def4567 (2)" in line
    assert "the first started 2026-12-01 00:00 UTC" in line
    from harness.report import html
    page = html.render_html(pooled, Path("/nonexistent-report-dir"))
    assert "Pooled from 5 replicates of profile standard at lock" in page and "measured in this run" not in page
