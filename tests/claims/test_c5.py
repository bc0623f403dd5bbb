"""C5's criteria fail when the model is wrong in the way C5 is about (issue 7, issue 10), and pass when it is not.

* ``resolution_rises`` (the fast criterion): refuted by the real module at smoke budgets under ``single_head``
  (every head uses head 0's projections, so h = 4 is one head again) in ``tests/suite/test_sensitivity_modules.py``, and
  under ``uniform_attention`` too in the fault matrix (``python -m harness.suite.sensitivity``). Here: ``single_head``
  leaves a one-head model exactly as it was (so h = 1 is the reference under the fault).
* under ``uniform_attention`` the entropy criteria cannot pass: every weight is 1 / (keys), whatever the training,
  so the single head is not near ln M and the multi-head model's heads are no sharper.
* each criterion's rule, decided by the harness (``decision.decide_alone``) on the module's measurements of
  hand-made tables: each can pass, fail and be refuted; the primary (``resolution_gain``) fails a gain below its
  margin of one slot, and the mechanism (``distinct_slots``) is refuted when the heads share slots.
* the tuning stage (issue 17) chooses each arm's rate by held-out loss on tuning seeds disjoint from the
  evaluation seeds, and a rate at the grid's edge makes the comparison inconclusive.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch

import claims.test_c5_multihead_resolution as c5
from harness.study import multihead
from harness.study.tuning import val_loss_scores
from harness.record import decision
from harness.measure.resolution import distinct_majority_slots, slot_shares, top_slot_share
from model import QueryTagger, faults
from tests.conftest import assert_firm

# 8 positions, 4 fixed slots (1, 3, 5, 7), 8 tokens, d_model 32: the binding problem at its smallest, for unit tests
# of the module's functions (the catches run at smoke budgets in tests/suite/test_sensitivity_modules.py).
TINY = {"task": {"seq_len": 8, "vocab": 8}, "model": {"d_model": 32, "d_ff": 64, "n_layers": 1},
        "position": {"train": {"steps": 300, "batch_size": 32, "num_threads": 1, "schedule": "warmup_constant",
                               "lr": 5e-3, "warmup": 20, "eval_every": 0, "eval_size": 256}},
        "probe": {"n_fit": 1024, "n_eval": 512, "fit_seed": 1, "ridge": 1e-3}}
SEEDS = [0, 1, 2]
ARMS = [multihead.Arm("position", 4, 1), multihead.Arm("position", 4, 4)]


@pytest.fixture(scope="module")
def uniform():
    """Both arms under uniform_attention; 20 steps, as the weights are uniform whatever the training."""
    block = {**TINY, "position": {"train": {**TINY["position"]["train"], "steps": 20}}}
    with faults.inject("uniform_attention"):
        return multihead.measure(ARMS, block, SEEDS).runs


def _decide(name, measurements):
    return decision.decide_alone(c5.CRITERIA[name]["rule"], measurements)["outcome"]


def _resolution(df, heads=(1, 4), binding="position"):
    return _decide("resolution_rises", [multihead.resolution_slope(df, list(heads), binding)])


def _paired(name, df, binding, h_a, h_b, col):
    return _decide(name, [decision.samples(multihead.by_seed(df, binding, 4, h_a, col),
                                           multihead.by_seed(df, binding, 4, h_b, col), paired=True)])


def _single_entropy(df, M, n_keys, binding="token"):
    entropy = multihead.by_seed(df, binding, M, 1, "entropy")
    return _decide("single_head_entropy", [decision.samples(multihead.entropy_position(entropy, M, n_keys))])


def test_single_head_fault_leaves_a_one_head_model_as_it_was():
    # head 0's slice is the whole projection of a one-head model: h = 1 is the reference under the fault
    task = multihead.make_task(ARMS[0], TINY["task"])
    one = multihead.build_model(ARMS[0], TINY["model"], task, 0).eval()
    x = task.heldout(8).x
    with torch.no_grad(), faults.inject("single_head"):
        under = one(x)
    with torch.no_grad():
        assert torch.equal(under, one(x))


def test_uniform_attention_leaves_the_entropy_criteria_unpassable(uniform):
    assert uniform["entropy"].to_numpy() == pytest.approx(math.log(9), abs=1e-6)    # 8 tokens + the query
    assert _paired("head_sharpness", uniform, "position", 1, 4, "entropy") != "passed"
    assert _single_entropy(uniform, 4, 9, "position") != "passed"


def test_uniform_attention_refutes_resolution_rises_with_an_exact_point(uniform):
    """Under uniform_attention the h arms of a seed are one function: every seed's slope is exactly 0 while
    resolution varies across seeds, so the slope is an exact point at the null, the closed edge of the refutation region (refuted), not
    degenerate."""
    m = multihead.resolution_slope(uniform, [1, 4])
    assert m["value"] == 0.0 and m["se"] == 0.0 and "no arm at a ceiling" in m["exact"]
    assert uniform.groupby("h")["resolution"].nunique().min() > 1
    decided = decision.decide_alone(c5.CRITERIA["resolution_rises"]["rule"], [m], firmness=True)
    assert_firm(decided, "refuted")         # trained, but an exact point: no firmness to ask for (issue 36)


def test_identical_slopes_at_a_ceiling_stay_inconclusive():
    """Every seed at resolution 1 at every h: equal slopes of 0 from a ceiling say nothing (the protocol's guard)."""
    ceiling = _table("token", 4, {1: [(0, 0, 1.0)] * 3, 4: [(0, 0, 1.0)] * 3})
    assert not multihead.resolution_slope(ceiling, [1, 4], "token").get("exact")
    assert _resolution(ceiling, binding="token") == "inconclusive"


@pytest.mark.parametrize("norm_first,n_layers,h", [(False, 1, 1), (False, 1, 4), (True, 1, 4), (False, 2, 4),
                                                    (True, 2, 2)])
def test_query_tagger_is_the_encoder_tagger_at_the_query(norm_first, n_layers, h):
    """C5 trains a QueryTagger (last layer at the query only): the harness's encoder_tagger's weights and, at
    the query, its function, its attention weights and head outputs (the taps the probes read), faults included."""
    arm = multihead.Arm("position", 4, h)
    task = multihead.make_task(arm, TINY["task"])
    cfg = multihead.model_config(arm, {**TINY["model"], "n_layers": n_layers}).replace(norm_first=norm_first)
    base = multihead.build_for_task("encoder_tagger", task, cfg, 0).eval()
    model = QueryTagger(base.cfg, base.n_classes, pool=base.pool).eval()
    model.load_state_dict(base.state_dict())
    built = multihead.build_model(arm, {**TINY["model"], "n_layers": n_layers}, task, 0)
    if not norm_first:
        assert all(torch.equal(a, b) for a, b in zip(built.state_dict().values(), base.state_dict().values()))
    batch = task.heldout(32)
    last = f"encoder.layers.{n_layers - 1}.self_attn."
    for fault in (None, "uniform_attention", "single_head"):
        with faults.inject(fault):
            ref_cache, ref = multihead.run_with_taps(base, batch, [last + "weights", last + "out"])
            cache, got = multihead.run_with_taps(model, batch, [last + "weights", last + "out"])
        assert got.shape == ref.shape == (32, task.out_dim)
        torch.testing.assert_close(got, ref, atol=1e-5, rtol=1e-5)
        for tap in ("weights", "out"):
            assert cache[last + tap].shape[2] == 1
            torch.testing.assert_close(cache[last + tap][:, :, -1], ref_cache[last + tap][:, :, -1],
                                       atol=1e-5, rtol=1e-5)
    with pytest.raises(ValueError, match="pad mask"):
        model(batch.x, pad_mask=batch.x == 0)


# --------------------------------------------------------------------------------- verdict functions
def _table(binding, M, values):
    """values: {h: [(exact_match, entropy, resolution), ...]} -> runs table."""
    rows = [{"binding": binding, "M": M, "h": h, "d_k": 64 // h, "long": False, "seed": i,
             "exact_match": em, "entropy": ent, "resolution": res}
            for h, triples in values.items() for i, (em, ent, res) in enumerate(triples)]
    return pd.DataFrame(rows)


def test_exact_match_passes_fails_and_is_refuted():
    better = _table("token", 4, {1: [(0.4, 1.4, 1), (0.5, 1.4, 1), (0.45, 1.4, 1)],
                                 4: [(0.9, 1, 1), (0.95, 1, 1), (0.92, 1, 1)]})
    worse = _table("token", 4, {4: [(0.4, 1.4, 1), (0.5, 1.4, 1), (0.45, 1.4, 1)],
                                1: [(0.9, 1, 1), (0.95, 1, 1), (0.92, 1, 1)]})
    same = _table("token", 4, {1: [(0.5, 1, 1), (0.6, 1, 1), (0.4, 1, 1)],
                               4: [(0.55, 1, 1), (0.45, 1, 1), (0.5, 1, 1)]})
    for table, outcome in ((better, "passed"), (worse, "refuted"), (same, "inconclusive")):
        assert _paired("exact_match", table, "token", 4, 1, "exact_match") == outcome


def test_single_head_entropy_band():
    assert multihead.entropy_band(4, 17) == pytest.approx((math.log(4) / 2, (math.log(4) + math.log(17)) / 2))
    assert multihead.entropy_position(np.array(multihead.entropy_band(4, 17)), 4, 17) == pytest.approx([0.0, 1.0])
    near = _table("token", 4, {1: [(0, 1.40, 0), (0, 1.45, 0), (0, 1.35, 0)]})
    uniform = _table("token", 4, {1: [(0, 2.83, 0), (0, 2.82, 0), (0, 2.83, 0)]})
    sharp = _table("token", 4, {1: [(0, 0.01, 0), (0, 0.02, 0), (0, 0.0, 0)]})
    assert _single_entropy(near, 4, 17) == "passed"
    for t in (uniform, sharp):
        assert _single_entropy(t, 4, 17) == "refuted"


def test_head_sharpness_and_too_many_heads():
    sharp = _table("position", 4, {1: [(0, 1.4, 0), (0, 1.5, 0), (0, 1.45, 0)],
                                   4: [(0, 0.3, 0), (0, 0.4, 0), (0, 0.36, 0)]})
    assert _paired("head_sharpness", sharp, "position", 1, 4, "entropy") == "passed"
    diffuse = _table("position", 4, {1: [(0, 0.3, 0), (0, 0.4, 0), (0, 0.36, 0)],
                                     4: [(0, 1.4, 0), (0, 1.5, 0), (0, 1.45, 0)]})
    assert _paired("head_sharpness", diffuse, "position", 1, 4, "entropy") == "refuted"
    many = _table("position", 4, {4: [(0.9, 0, 0), (0.95, 0, 0), (0.92, 0, 0)],
                                  16: [(0.3, 0, 0), (0.4, 0, 0), (0.36, 0, 0)]})
    many["loss"] = 1.0 - many["exact_match"]                     # h = 16 loses: higher loss
    assert _paired("too_many_heads", many, "position", 16, 4, "loss") == "passed"


def test_top_slot_share_tells_averaging_from_selecting():
    slots = torch.tensor([[1, 3, 5, 7], [0, 2, 4, 6]])
    w = torch.zeros(2, 2, 9)
    w[:, 0, :8] = 1 / 8                                   # head 0: even over the slots and 4 other positions
    w[0, 1, 3], w[1, 1, 6] = 1.0, 1.0                     # head 1: one slot only
    share = top_slot_share(w, slots)
    assert share.tolist() == pytest.approx([0.25, 1.0])


def test_head_sharpness_counts_selecting_single_heads():
    df = _table("position", 4, {1: [(0, 1.1, 0.27), (0, 0.15, 0.25), (0, 1.05, 0.26)],
                                4: [(0, 0.4, 0.9), (0, 0.5, 0.9), (0, 0.45, 0.9)]})
    df["top_slot_share"] = [0.4, 0.97, 0.35, 0.9, 0.9, 0.9]
    assert c5.describe_single_heads(multihead.select(df, "position", 4, 1)).startswith("1/3 select one slot")
    # one selecting single head sinks the mean entropy: not passed
    assert _paired("head_sharpness", df, "position", 1, 4, "entropy") != "passed"
    assert multihead.selecting_fraction(df[df.h == 1]) == pytest.approx(1 / 3)
    assert math.isnan(multihead.selecting_fraction(df[df.h == 1].drop(columns="top_slot_share")))


def test_primary_arms_take_primary_seeds():
    from harness.profiles import get_profile
    smoke, standard = get_profile("smoke").claim("C5"), get_profile("standard").claim("C5")
    seeds = [2000, 2001, 2002, 2003, 2004]
    assert multihead.arm_seeds(multihead.Arm("position", 4, 1), smoke, seeds[:3]) == list(range(2000, 2008))
    assert multihead.arm_seeds(multihead.Arm("position", 4, 4), smoke, seeds[:3], fast=True) == seeds[:3]
    assert multihead.arm_seeds(multihead.Arm("position", 4, 4), standard, seeds) == list(range(2000, 2016))
    for arm in (multihead.Arm("position", 4, 2), multihead.Arm("position", 4, 16), multihead.Arm("token", 4, 1),
                multihead.Arm("token", 4, 1, steps_factor=5)):
        assert multihead.arm_seeds(arm, standard, seeds) == seeds
    assert multihead.arm_seeds(multihead.Arm("position", 4, 1), standard, seeds, fast=True) == seeds
    assert multihead.arm_seeds(multihead.Arm("position", 4, 1), standard, list(range(30))) == list(range(30))


def test_resolution_trend_can_be_refuted():
    falling = _table("position", 4, {1: [(0, 0, 0.9), (0, 0, 0.92), (0, 0, 0.91)],       # per-seed slopes vary
                                     4: [(0, 0, 0.3), (0, 0, 0.36), (0, 0, 0.28)]})
    assert _resolution(falling) == "refuted"


def test_arms_cover_every_criterion():
    from harness.profiles import get_profile
    for name in ("smoke", "standard", "full"):
        block = get_profile(name).claim("C5")
        arms = multihead.arms_for(block)
        assert multihead.Arm("token", 4, 1) in arms and multihead.Arm("token", 4, 4) in arms
        assert all(multihead.Arm("token", M, 1) in arms for M in block["token"]["single_head_marked"])
        assert all(multihead.Arm("position", 4, h) in arms for h in block["position"]["heads"] + [1, 4])
        assert multihead.Arm("position", 4, block["position"]["too_many_heads"]) in arms
    assert multihead.arms_for(get_profile("smoke").claim("C5"), fast=True) == ARMS


# --------------------------------------------------------------------------------- issue 17: the redesign
def test_counted_family_is_the_resolution_criteria():
    from harness.record.verdict import role_of

    counted = {name for name, spec in c5.CRITERIA.items() if role_of(spec) == "counted"}
    assert counted == {"resolution_gain", "distinct_slots", "resolution_rises"}
    assert [name for name, spec in c5.CRITERIA.items() if role_of(spec) == "premise"] == ["single_head_loses_slots"]
    assert [name for name, spec in c5.CRITERIA.items() if spec.get("fast")] == ["resolution_rises"]
    assert c5.CRITERIA["head_sharpness"]["role"] == "reported"


# --------------------------------------------------------------------------------- issue 47: the premise
def _loses_slots(resolution, name="single_head_loses_slots") -> str:
    return decision.decide_alone(c5.CRITERIA[name]["rule"], [decision.samples(resolution)])["outcome"]


def test_single_head_loses_slots_reads_resolution_and_its_control_can_fail():
    """The premise's band (-inf, 3/4] on the single head's resolution: a head resolving about one slot of four
    (averaging or selecting alike) passes; one resolving every slot, as on the token binding (~0.99), refutes it;
    the control single_head_resolves_token reads the same level the other way."""
    assert c5.LOST_SLOT_LEVEL == 1 - 1 / 4 == 1 - c5.CRITERIA["resolution_gain"]["rule"].margin
    assert c5.CRITERIA["single_head_loses_slots"]["role"] == "premise"
    assert not c5.CRITERIA["single_head_loses_slots"].get("fast")
    assert "single_head_loses_slots" not in c5.WEIGHT_CRITERIA      # resolution needs no weights
    one_slot = [0.24, 0.26, 0.22, 0.25, 0.27, 0.23]
    every_slot = [0.99, 0.98, 0.99, 1.0, 0.97]
    assert _loses_slots(one_slot) == "passed"
    assert _loses_slots(every_slot) == "refuted"
    assert _loses_slots([0.5, 0.95, 0.7, 0.9]) == "inconclusive"
    assert _loses_slots(every_slot, "single_head_resolves_token") == "passed"
    assert _loses_slots(one_slot, "single_head_resolves_token") == "refuted"
    assert c5.CRITERIA["single_head_resolves_token"]["role"] == "reported"


def test_a_single_head_that_resolves_the_slots_leaves_c5_not_testable_whatever_the_gain(tmp_path):
    from harness.record import verdict
    from harness.record.evidence import Evidence

    def judged(res1, tmp):
        ev = Evidence(tmp, claim_id="C5")
        ev.claim("C5", title="t", statement="s", strength="moderate")
        c = ev.declare({k: c5.CRITERIA[k] for k in ("single_head_loses_slots", "resolution_gain")})
        c["single_head_loses_slots"].sample_each({"position": res1})
        c["resolution_gain"].compare([0.85, 0.9, 0.8, 0.95], [0.25, 0.27, 0.26, 0.28])
        return verdict.apply_judgement(ev.to_record())

    losing = judged([0.25, 0.27, 0.26, 0.28], tmp_path)
    assert losing["verdict"] == "supported" and losing["not_testable"] == ""
    resolving = judged([0.99, 1.0, 0.97, 0.98], tmp_path)
    assert resolving["verdict"] == "inconclusive" and resolving["firmness"] is None
    assert resolving["not_testable"].startswith("premise single_head_loses_slots refuted: measured 0.985 at position")
    assert {c["name"]: c["outcome"] for c in resolving["criteria"]}["resolution_gain"] == "passed"


def test_resolution_gain_needs_a_slot_more():
    def table(res1, res4):
        return _table("position", 4, {1: [(0, 0, r) for r in res1], 4: [(0, 0, r) for r in res4]})

    big = table([0.25, 0.27, 0.26, 0.28], [0.85, 0.9, 0.8, 0.95])
    small = table([0.25, 0.27, 0.26, 0.28], [0.44, 0.47, 0.45, 0.49])       # a fifth of the slots: below margin
    worse = table([0.85, 0.9, 0.8, 0.95], [0.25, 0.27, 0.26, 0.28])
    assert _paired("resolution_gain", big, "position", 4, 1, "resolution") == "passed"
    # a fifth of a slot more: smaller than the margin, so not shown, and not contradicted (issue 26)
    assert _paired("resolution_gain", small, "position", 4, 1, "resolution") == "inconclusive"
    assert _paired("resolution_gain", worse, "position", 4, 1, "resolution") == "refuted"
    # the resolution slope passes the small gain: the primary is the stricter test
    assert _resolution(small) == "passed"


def test_slot_shares_and_distinct_majority_slots():
    slots = torch.tensor([[1, 3, 5, 7], [1, 3, 5, 7]])
    w = torch.zeros(2, 4, 9)
    for head, slot in enumerate((1, 3, 5, 5)):                    # heads 2 and 3 share slot 5
        w[:, head, slot] = 0.9
        w[:, head, 8] = 0.1                                         # mass off the slots does not enter the share
    shares = slot_shares(w, slots)
    assert shares.shape == (4, 4)
    assert shares[0].tolist() == pytest.approx([1, 0, 0, 0])
    assert distinct_majority_slots(shares) == 3
    even = torch.full((4, 4), 0.25)                                # four averaging heads: no slot holds most
    assert distinct_majority_slots(even) == 0
    split = torch.tensor([[0.5, 0.5, 0, 0]] * 4)                    # exactly half is not "most"
    assert distinct_majority_slots(split) == 0


@pytest.mark.parametrize("k,n,outcome", [(8, 8, "passed"), (0, 8, "refuted"), (4, 8, "inconclusive"),
                                         (25, 25, "passed"), (3, 3, "inconclusive")])
def test_distinct_slots_decisions(k, n, outcome):
    assert _decide("distinct_slots", [decision.proportion(k, n)]) == outcome


@pytest.mark.parametrize("n", [8, 25])
def test_plus_four_agrees_with_the_exact_binomial_where_the_docs_say(n):
    """The plus-four estimate takes the exact test's decision at alpha, alpha / 2 and alpha / 3 for every k at the
    profiles' seed counts, except k = 8 and 17 of 25 at alpha (docs/c5-resolution.md)."""
    from scipy import stats as sps
    rule = c5.CRITERIA["distinct_slots"]["rule"]
    differ = []
    for level in (decision.ALPHA, decision.ALPHA / 2, decision.ALPHA / 3):
        for k in range(n + 1):
            s = decision.stat(decision.proportion(k, n))
            p_sup, p_ref = decision.criterion_p(rule, [s])
            exact = (sps.binomtest(k, n, 0.5, alternative="greater").pvalue,
                     sps.binomtest(k, n, 0.5, alternative="less").pvalue)
            if (p_sup <= level, p_ref <= level) != (exact[0] <= level, exact[1] <= level):
                differ.append((round(level, 4), k))
    assert differ == ([] if n == 8 else [(0.05, 8), (0.05, 17)])
    assert decision.binomial_p(8, 8)[0] == pytest.approx(1 / 256)


def test_describe_distinct_slots_reports_the_exact_p():
    text = c5.describe_distinct_slots(np.array([4, 4, 3, 2, 4, 4, 4, 3]))
    assert text.startswith("7/8 seeds with >= 3 distinct majority slots")
    assert "exact binomial p (more than half) 0.03516" in text


def test_tuning_picks_by_heldout_loss_on_disjoint_seeds(monkeypatch):
    """tune_arms: every rate of the grid on the tuning seeds only; the lowest mean loss wins, a diverged rate never
    does; an edge is named, and a comparison made with it is inconclusive."""
    block = {**TINY, "position": {**TINY["position"], "tuning": {"lr_grid": [4e-3, 1e-3, 2e-3], "seeds": 2, "extend": 0}}}
    calls = []
    fake = {1e-3: 1.0, 2e-3: 0.5, 4e-3: math.nan}

    def run(arm, block_, seed, lr, device="cpu", progress=None):
        calls.append((arm.h, seed, lr))
        loss = fake[lr] + (0.3 if arm.h == 4 and lr == 2e-3 else 0.0)
        return {**val_loss_scores(loss, math.isnan(fake[lr])), "resolution": 0.5}

    monkeypatch.setattr(multihead, "tuning_run", run)
    table, tuned = multihead.tune_arms(ARMS, block, SEEDS)
    assert {s for _, s, _ in calls}.isdisjoint(SEEDS) and len({s for _, s, _ in calls}) == 2
    assert len(table) == 2 * 3 * 2
    t1, t4 = tuned[ARMS[0]], tuned[ARMS[1]]
    assert t1.lr == 2e-3 and t1.edge is None and t1.edge_reason == ""
    assert t4.lr == 2e-3 and t4.mean_loss[1] == pytest.approx(0.8)
    assert t1.grid == (1e-3, 2e-3, 4e-3) and math.isinf(t1.mean_loss[-1])
    fake[2e-3] = 2.0                                                # now the lowest rate wins: an edge
    _, tuned = multihead.tune_arms(ARMS, block, SEEDS)
    assert tuned[ARMS[0]].edge == "lowest" and "h=1" in tuned[ARMS[0]].edge_reason
    a, b = [0.9, 0.95, 0.92], [0.2, 0.25, 0.22]
    rule = c5.CRITERIA["resolution_gain"]["rule"]
    assert decision.decide_alone(rule, [decision.samples(a, b, paired=True)])["outcome"] == "passed"
    invalid = decision.samples(a, b, paired=True, invalid=tuned[ARMS[0]].edge_reason)
    assert decision.decide_alone(rule, [invalid])["outcome"] == "inconclusive"


def test_a_tuning_run_trains_at_the_given_rate_and_probes_as_the_evaluation_does():
    """tuning_run's validation loss and resolution are train_arm's at the same arm, rate and seed: a rate's tuning
    mean of the resolution is the quantity resolution_gain reads (its rate choice, issue 47)."""
    arm = ARMS[1]
    block = {**TINY, "position": {"train": {**TINY["position"]["train"], "steps": 20}}}
    run = multihead.tuning_run(arm, block, 7, 1e-2)
    assert math.isfinite(run["val_loss"]) and not run["diverged"]
    row, _ = multihead.train_arm(arm, block, 7, lr=1e-2)
    assert run["val_loss"] == row["val_loss"] and run["resolution"] == row["resolution"]
    assert multihead.train_config(arm, TINY, lr=1e-2).lr == 1e-2
    assert multihead.train_config(arm, TINY).lr == TINY["position"]["train"]["lr"]
