"""What the other claims say beside a checkpoint read (issue 55, items 5, 8 and 12), on a planted checkpoint.

The planted ``x8`` checkpoint of ``test_checkpoint_reading`` (a 2-layer Llama, hidden 64, 4 heads of d_k 16, W_Q
and W_K redrawn with unit-variance components, every W_Q then multiplied by 8). C4, R1, R2 and M0 read the architecture at a random init, never the weights: their readings are
the same with the checkpoint attached as without it (the known answer), and every line of theirs says "at init".
Q3's record of the read shows only what ran: the weights, the probe sequences, no seeds, and its per-layer table
as lines the report keeps. R2 on a model counts nothing and says in words where its growth would saturate.
"""
from __future__ import annotations

import importlib.util

import numpy as np
import pandas as pd
import pytest
import torch

from harness.record import results as R
from harness.record import verdict as verdicts
from harness.record.evidence import Evidence
from harness.trial import checkpoint, model as models
from tests.model_trial.test_checkpoint_reading import SHAPE, planted  # noqa: F401 (the planted saves' fixture)

pytestmark = pytest.mark.skipif(importlib.util.find_spec("transformers") is None,
                                reason="the checkpoint tests build a transformers Llama (.[models])")

#: the smoke block, cut down: three points a family, two seeds, short probes
BLOCK = {"batch": 2, "length": 16, "head_dims": [8, 16, 32], "widths": [32, 64, 128], "min_slope": 0.1}
SEEDS = [0, 1]


@pytest.fixture(scope="module")
def x8(planted):
    """(the planted trial with its x8 checkpoint attached, the same architecture without weights, the save)."""
    weighted, root, ids = planted
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        bare = models.preflight(models.resolve(config="LlamaConfig",
                                               overrides=[f"{k}={v}" for k, v in SHAPE.items()]))
        ckpt = checkpoint.prepare(weighted, str(root / "x8.pt"))
        ckpt.ids, ckpt.in_distribution = ids, True
        yield weighted, bare, root / "x8.pt"
    finally:
        torch.set_num_threads(threads)


def _record(module, trial, tmp_path, said):
    cid = module.__name__.split("_")[1].upper()
    ev = Evidence(tmp_path / cid, cid)
    ev.claim(cid, title="t", statement="s", strength="strong", kind="recommendation" if cid[0] == "R" else "claim")
    module.model_trial(ev, trial, BLOCK, SEEDS, progress=lambda msg, force=False: said.append(msg))
    part = {**ev.to_record(), "nodeid": f"claims/{cid}::t", "seeds": None if ev.seedless else SEEDS}
    return R.merge_claim([part])


def test_c4_r1_r2_and_m0_read_the_init_beside_a_checkpoint_and_every_line_says_so(x8, tmp_path):
    from claims import test_c4_scaling as c4, test_m0_model_checks as m0
    from claims import test_r1_scale_by_sqrt_dk as r1, test_r2_saturation_check as r2
    from markupsafe import escape

    from harness.report import findings, html
    from harness.session.summary import _summary_line

    weighted, bare, path = x8
    for module in (c4, r1, r2, m0):
        said, plain = [], []
        got = _record(module, weighted, tmp_path / "w", said)
        ref = _record(module, bare, tmp_path / "b", plain)
        cid = got["id"]
        assert got["metrics"] == ref["metrics"], cid                  # the init is read, whatever the weights
        assert got["verdict"] == ref["verdict"] and "at_init" not in ref, cid
        assert got["at_init"].endswith(f"not on the weights of --model-weights {path.name}: Q3 alone reads the "
                                       "checkpoint") and "at a random init" in got["at_init"], cid
        assert said and all(m.startswith("at init (not the checkpoint): ") for m in said), (cid, said)
        assert not any(m.startswith("at init") for m in plain)
        assert verdicts.verdict_shown(got) == f"{got['verdict']} at init"
        assert f"{got['verdict']} at init" in _summary_line(cid, got, type("S", (), {"gate_active": False})(), 2)
        shown = "not tested here" if got["verdict"] == verdicts.NOT_TESTED else got["verdict"]
        assert findings.verdict_text(got).startswith(f"{shown} at init")
        page = html.render_html({"schema_version": R.SCHEMA_VERSION, "claims": {cid: got}, "run": {
            "profile": "smoke", "device": "cpu", "seeds": SEEDS, "complete": True}}, tmp_path)
        assert f">{got['verdict']} at init</span>" in page and f"<b>At init:</b> {escape(got['at_init'])}" in page


def test_q3s_record_of_a_checkpoint_read_shows_only_what_ran(x8, tmp_path):
    from claims import test_q3_variance_after_training as q3
    from harness.report import html

    weighted, _, path = x8
    ev = Evidence(tmp_path / "Q3", "Q3")
    ev.claim("Q3", title="t", statement="s", strength="open question", kind="question",
             limitation=q3.checkpoint_limitation(weighted))
    ev.answer_objections(q3.CHECKPOINT_OBJECTIONS)
    q3.checkpoint_trial(ev, weighted)
    part = ev.to_record()
    claim = R.merge_claim([{**part, "nodeid": "claims/q3::t", "seeds": None if part.get("seedless") else SEEDS}])
    said = " ".join([claim["limitation"], *(o["how"] for o in claim["objections"]),
                     *(c["margin_reason"] or "" for c in claim["criteria"])])
    for ghost in ("2-layer encoder", "key-value lookup", "seeds [", "seeds spread", "this run's seeds", "per arm"):
        assert ghost not in said, ghost
    assert claim.get("seeds") is None and "4 probe sequences of 32 tokens of this one checkpoint" in claim["seedless"]
    assert f"the weights {path.name} read into config LlamaConfig, on 4 probe sequences of 32 tokens" in \
        claim["limitation"]
    firm = next(o for o in claim["objections"] if o["key"] == "firmness")["how"]
    assert "estimated from its samples, not seeds (a checkpoint read: its samples are the 4 probe sequences" in firm
    note = next(n for n in claim["notes"] if n.startswith("the footnote per layer:\n"))
    lines = note.split("\n")[1:]
    assert len(lines) == 9 and lines[2].lstrip().startswith("layer") and lines[3].lstrip().startswith("0 ")
    assert [r["layer"] for r in claim["tables"]["checkpoint_footnote"]] == [0, 1]
    assert all(r["why"] == "scale+saturation" and r["scale"] == "above" for r in claim["tables"]["checkpoint_footnote"])
    page = html.render_html({"schema_version": R.SCHEMA_VERSION, "claims": {"Q3": claim}, "run": {
        "profile": "smoke", "device": "cpu", "seeds": SEEDS, "complete": True}}, tmp_path)
    block = page.split('<pre class="lines">')[1].split("</pre>")[0]
    assert block.count("\n") == 8 and "\n    1 " in block                  # one line a layer, columns kept


# ------------------------------------------------------------------------------------- item 12: R2 on a model
def _family(slope: float, widths=(64, 128, 256), at64: float = 0.0256) -> pd.DataFrame:
    return pd.DataFrame([dict(width=w, seed=s, logit_std=at64 * (w / 64) ** slope, grad_mean_abs=0.01,
                              entropy_ratio=0.998) for w in widths for s in (0, 1, 2)])


def test_r2_says_where_a_growth_would_saturate_against_the_configs_own_width():
    """A logit std of 0.0256 at width 64 growing as width^1 reaches 2 at width 64 x 2 / 0.0256 = 5000; the config's
    own width 256 is 19.5 times below it (std 0.102 there, as the issue's Llama read)."""
    from claims import test_r2_saturation_check as r2
    from harness.measure import stats

    fam = _family(1.0)
    assert r2.saturating_width(fam, 1.0) == pytest.approx(5000)
    fit = stats.replicate_slope(fam.width, fam.logit_std, fam.seed)
    grad = stats.replicate_slope(fam.width, fam.grad_mean_abs, fam.seed)
    words = r2.growth_words(fam, fit, grad, [64, 128, 256], 0.1, 256)
    assert words.startswith("the check flags the model: its logit std grows as width^1.000")
    assert "at width 256 the logit std is 0.102, entropy / ln n 0.998" in words
    assert "reaches 2 (the top of the footnote's factor-2 band" in words and "at width 5000;" in words
    assert "the config's own width 256 is 19.5 times below it (logit std 0.102 there, extrapolated)" in words
    assert "is past it" in r2.growth_words(fam, fit, grad, [64, 128, 256], 0.1, 8192)
    flat = _family(0.0)
    fit = stats.replicate_slope(flat.width, flat.logit_std, flat.seed)
    assert r2.saturating_width(flat, fit.slope) is None
    assert r2.growth_words(flat, fit, grad, [64, 128, 256], 0.1, 256).startswith("the check does not flag the model")
    down = _family(-0.5)
    fit = stats.replicate_slope(down.width, down.logit_std, down.seed)
    assert "never reaches saturation" in r2.growth_words(down, fit, grad, [64, 128, 256], 0.1, 256)


def test_r2_on_a_model_counts_nothing_and_its_growing_llama_is_not_refuted(x8, tmp_path):
    """The rule (claims/test_r2_saturation_check.py, MODEL_RULE): the width criterion is reported; a Llama whose
    fixed 0.02 init makes its logits grow with width is flagged (the criterion reads refuted) and R2 reads not
    tested, with the rule as its reason."""
    from claims import test_r2_saturation_check as r2

    _, bare, _ = x8
    got = _record(r2, bare, tmp_path, [])
    (crit,) = got["criteria"]
    assert crit["name"] == "model_width_not_flagged" and crit["role"] == "reported" and crit["outcome"] == "refuted"
    assert got["verdict"] == verdicts.NOT_TESTED and got["not_tested"].startswith("R2 recommends a check")
    assert got["metrics"]["model_logit_std_slope/width"] > 0.9 and got["metrics"]["model_saturating_width"] > 1000
    assert "Along the fitted power law the logit std reaches 2" in crit["detail"]
    assert np.isfinite(got["metrics"]["model_grad_slope/width"])


def test_c5_q1_and_q2_train_the_architecture_from_init_beside_a_checkpoint_and_every_line_says_so(x8, tmp_path):
    """C5, Q1 and Q2 train the architecture briefly from a random init, never the checkpoint: with the checkpoint
    attached their readings equal those without it, and their verdict and terminal lines say "trained from init"."""
    from claims import test_c5_multihead_resolution as c5, test_q1_qk_norm as q1, test_q2_resolution_entropy as q2

    from harness.report import findings
    from harness.trial.model_reads import TRAINED_FROM_INIT

    weighted, bare, path = x8
    block = {**BLOCK, "train": {"steps": 10, "lr": 1e-3, "rate_high": 10.0, "batch": 4, "length": 16, "width": 64}}
    for module in (c5, q1, q2):
        said, plain = [], []
        cid = module.__name__.split("_")[1].upper()
        recs = []
        for trial, sink, where in ((weighted, said, "w"), (bare, plain, "b")):
            ev = Evidence(tmp_path / where / cid, cid)
            ev.claim(cid, title="t", statement="s", strength="strong", kind="claim")
            module.model_trial(ev, trial, block, SEEDS, progress=lambda msg, force=False, s=sink: s.append(msg))
            recs.append(R.merge_claim([{**ev.to_record(), "nodeid": f"claims/{cid}::t", "seeds": SEEDS}]))
        got, ref = recs
        assert got["metrics"] == ref["metrics"], cid                  # the same training, whatever the weights
        assert "at_init" not in ref and got["at_init_label"] == TRAINED_FROM_INIT, cid
        assert "after a short training" in got["at_init"] and got["at_init"].endswith(
            f"--model-weights {path.name}: Q3 alone reads the checkpoint"), cid
        assert said and all(m.startswith(f"{TRAINED_FROM_INIT} (not the checkpoint): ") for m in said), (cid, said)
        assert not any(m.startswith(TRAINED_FROM_INIT) for m in plain)
        assert verdicts.verdict_shown(got) == f"{got['verdict']} {TRAINED_FROM_INIT}"
        assert findings.verdict_text(got).startswith(f"not tested here {TRAINED_FROM_INIT}") or \
            findings.verdict_text(got).startswith(f"{got['verdict']} {TRAINED_FROM_INIT}")
