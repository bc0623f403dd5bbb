"""Q2's criteria can answer yes, no or neither (issues 11, 16): hand-made per-head tables through the module's
correlations and its declared rule (``decision.decide_alone``), no training, plus one tiny real run of the
measurement (a 1-layer DecoderLM for a few steps) for the table's shape."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import claims.test_q2_resolution_entropy as q2
from harness.record import decision


def _heads(seed_rows):
    """seed_rows: {seed: [(step, entropy, sink, resolution), ...]} -> heads table (one head per row)."""
    return pd.DataFrame([{"seed": s, "step": st, "layer": 0, "head": i, "entropy": e, "sink": k, "resolution": r}
                         for s, rows in seed_rows.items() for i, (st, e, k, r) in enumerate(rows)])


def _trend(seed, sign, noise=0.02, n=12):
    rng = np.random.default_rng(seed)
    x = np.linspace(0.1, 2.5, n)
    res = 1 - x / 3 + rng.normal(0, noise, n)
    return [(i % 4, x[i], 0.5 - sign * x[i] / 6, res[i]) for i in range(n)]


def outcome(corr, pair):
    return decision.decide_alone(q2.RULE, [decision.samples(corr[pair].dropna())])["outcome"]


def test_strong_negative_passes_and_weak_or_positive_is_refuted():
    # sign=+1: sink falls as entropy rises -> sink rises as resolution rises (positive rho: answered no)
    heads = _heads({s: _trend(s, +1) for s in range(3)})
    corr = q2.correlations(heads)
    assert outcome(corr, "entropy_resolution") == "passed" and corr["entropy_resolution"].mean() < -0.9
    assert outcome(corr, "sink_resolution") == "refuted"
    # sign=-1: sink mass rises with entropy -> falls with resolution (strong negative: yes)
    corr = q2.correlations(_heads({s: _trend(s, -1) for s in range(3)}))
    assert outcome(corr, "sink_resolution") == "passed"
    assert list(corr.columns[:2]) == ["seed", "n_points"] and "entropy_sink_within" in corr


def test_undefined_or_scattered_correlations_are_inconclusive():
    flat = _heads({s: [(i, 1.0 + i, 0.1, 0.5 + 0.01 * i) for i in range(6)] for s in range(3)})   # sink constant
    assert q2.correlations(flat)["sink_resolution"].isna().all()      # no rho: the module leaves it unrecorded
    corr = pd.DataFrame({"seed": [0, 1, 2], "entropy_resolution": [-0.9, 0.2, -0.6]})
    assert outcome(corr, "entropy_resolution") == "inconclusive"


def test_per_checkpoint_counts_sink_heads_above_gu_threshold():
    heads = _heads({0: [(10, 1.0, 0.31, 0.5), (10, 1.0, 0.29, 0.5), (10, 1.0, 0.9, 0.5), (10, 1.0, 0.0, 0.5)]})
    row = q2.per_checkpoint(heads).iloc[0]
    assert row["sink_fraction"] == pytest.approx(0.5) and row["mean_sink_mass"] == pytest.approx(0.375)


def test_measurement_shapes_on_a_tiny_run():
    block = {"task": {"name": "markov_lm", "vocab": 8, "seq_len": 8, "branching": 2, "repeat": True},
              "model": {"d_model": 16, "n_heads": 2, "d_ff": 32, "n_layers": 1},
              "train": {"steps": 6, "batch_size": 8, "schedule": "constant", "lr": 1e-3, "eval_every": 0,
                        "eval_size": 16},
              "checkpoints": [0, 3, 6], "probe": {"n_fit": 16, "n_eval": 16, "fit_seed": 1, "ridge": 1e-3}}
    heads, curve = q2.measure(block, [0])
    assert sorted(heads["step"].unique()) == [0, 3, 6] and len(heads) == 3 * 2
    assert heads["sink"].between(0, 1).all() and (heads["entropy"] >= 0).all()
    assert (heads["entropy"] <= np.log(8) + 1e-9).all() and len(curve) == 1


def test_the_counted_halves_read_heads_at_the_same_checkpoint_not_the_shared_trend():
    """Entropy and resolution both rise over training (an uncentred rho near +1), while at every checkpoint the
    head with more entropy resolves less (centred rho -1): the counted criterion answers yes, the reported
    over-training one no."""
    rng = np.random.default_rng(0)
    rows = [{"seed": s, "step": t, "head": h, "entropy": t + 0.3 * h + rng.normal(0, 0.15),
             "resolution": t - 0.3 * h + rng.normal(0, 0.15), "sink": 0.1 * h}
            for s in range(4) for t in range(5) for h in range(8)]
    corr = q2.correlations(pd.DataFrame(rows))
    decide = {name: decision.decide_alone(q2.CRITERIA[name]["rule"],
                                          [decision.samples(corr[q2.PAIR_OF[name]].dropna())])["outcome"]
              for name in ("entropy_tracks_resolution", "entropy_tracks_resolution_over_training")}
    assert decide == {"entropy_tracks_resolution": "passed", "entropy_tracks_resolution_over_training": "refuted"}
