"""F1: a claim that holds (score >= 0.8), with a gated metric, a table, a figure and progress lines.

FAKE_F1_SCORE moves the score: 0.9 by default; 0.84 stays supported but drops beyond the gate's 0.05.
"""
import os

import pytest

from harness.record import decision

pytestmark = pytest.mark.claim("F1")


def test_f1_supported(evidence, profile, seeds, progress, report_dir):
    score = float(os.environ.get("FAKE_F1_SCORE", "0.9"))
    ev = evidence
    ev.claim("F1", title="A fake claim that holds", statement="The fake score is at least 0.8",
             strength="strong", limitation="Fake: it measures nothing real.")
    crit = ev.criterion("score_high", rule=decision.band(0.8, None, reason="fake: the score's floor"),
                        prediction="mean score across seeds >= 0.8", metric="score", how="mean over seeds (fake)")
    ev.gate("score", direction="higher", tolerance=0.05)
    rows = []
    for seed in seeds:
        progress(f"profile {profile.name} seed {seed}: step 10/10 loss 0.01", force=True)
        rows.append({"seed": seed, "score": score + 0.001 * (seed % 1000)})
    mean = sum(r["score"] for r in rows) / len(rows)
    crit.sample([r["score"] for r in rows], detail=f"{len(rows)} seeds; report dir ready: {report_dir.is_dir()}")
    ev.metric("score", mean)
    from matplotlib.figure import Figure

    ev.table("per_seed", {"seed": [r["seed"] for r in rows], "score": [r["score"] for r in rows]})
    fig = Figure(figsize=(3, 2))
    ax = fig.add_subplot(1, 1, 1)
    ax.plot([r["seed"] for r in rows], [r["score"] for r in rows], marker="o")
    ev.figure("score_by_seed", fig)
    ev.note("A fake note: <i>not</i> markup.")
    ev.headline("score")
