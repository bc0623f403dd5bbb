"""A model at its released width (issue 48, items 4 and 5, and the trial's seed count): the short training runs at a
stated reduced width with its estimate shown first and keeps only readings; the probe claims' budgets grow with
the model; a trial's claims run at the trial block's seeds. Small configs stand in for the released shapes
(benchmarks/model_trial_probe.py times those)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest
from torch import nn

from harness.trial import model as models, model_reads as reads
from harness.plugin import trial_block
from harness.profiles import get_profile, wall_budget

transformers = pytest.importorskip("transformers", reason="the config-class cases need .[models]")

WIDE = ["hidden_size=128", "intermediate_size=256", "num_hidden_layers=1", "num_attention_heads=4",
        "num_key_value_heads=2", "vocab_size=64"]


def _block(width: int | None) -> dict:
    return {"batch": 2, "length": 16,
            "train": {"steps": 3, "lr": 1e-3, "batch": 4, "length": 16, **({"width": width} if width else {})}}


def test_a_wider_model_trains_at_the_stated_width_with_the_estimate_first_and_keeps_no_model():
    t = models.preflight(models.resolve(config="LlamaConfig", overrides=WIDE))
    assert t.width == 128 and next(t.base.parameters()).device.type == "meta"
    said: list[str] = []
    df, losses, why = reads.trained(t, [0, 1], _block(64), progress=lambda msg, force=False: said.append(msg))
    assert why == "" and set(losses) == {0, 1}
    # the estimate, once, before any run: a timed step and the total for the runs still to train
    assert len(said) == 1 and "at width 64, reduced from the model's 128" in said[0], said
    assert "s a step" in said[0] and "3 steps x 2 seeds" in said[0]
    # trained at width 64 with the head dim held: 2 heads of 32 (1 key-value group of 2), not 4
    assert set(df.d_k) == {32} and df.groupby(["seed", "call"])["head"].nunique().max() == 2
    assert not any(isinstance(x, nn.Module) for v in t.cache.values() for x in (v if isinstance(v, tuple) else (v,)))
    note = reads.loss_note(losses, 1.0, _block(64), t)
    assert "at width 64, reduced from the model's 128" in note
    # the runs are shared: asked again, nothing trains and nothing is announced
    reads.trained(t, [0, 1], _block(64), progress=lambda msg, force=False: said.append(msg))
    assert len(said) == 1


def test_a_model_no_wider_than_the_cap_trains_at_its_own_width_and_says_so():
    t = models.preflight(models.resolve(config="LlamaConfig", overrides=WIDE))
    assert reads.train_width(t, _block(256)) is None and reads.train_width(t, _block(None)) is None
    assert "at the model's own width 128" in reads.loss_note({0: (1.0, 0.5)}, 1.0, _block(256), t)
    assert get_profile("smoke").claim("model_trial")["train"]["width"] == 256


def test_the_probe_budgets_grow_with_the_models_parameters():
    small = wall_budget("smoke", "C4", model=True, n_params=1e6)
    assert small == wall_budget("smoke", "C4", model=True)
    big = wall_budget("smoke", "C4", model=True, n_params=4e8)
    assert big > 5 * small
    assert wall_budget("smoke", "C4", model=True, n_params=8e8) > big
    assert wall_budget("smoke", "Q1", model=True, n_params=4e8) == wall_budget("smoke", "Q1", model=True)


@pytest.mark.parametrize("model, kernel, block", [(object(), None, "model_trial"), (None, object(), "kernel_trial"),
                                                  (None, None, None)])
def test_a_trials_claims_take_the_trial_blocks_seed_count(model, kernel, block):
    state = SimpleNamespace(model_trial=model, kernel=kernel, settings=SimpleNamespace(attention=None))
    assert trial_block(state) == block
    smoke = get_profile("smoke")
    if block:
        assert smoke.seed_count(block) == smoke.claim(block)["seeds"]


def test_the_builds_at_init_cut_a_large_vocabulary_keep_the_pad_token_and_never_with_weights():
    """Issue 48, item 5: the probes read only the embedding rows of the ids they draw, so a config's vocabulary
    above PROBE_VOCAB is built at PROBE_VOCAB (the pad token's row kept inside it); with --model-weights
    (``cut_vocab=False``) the config's own; a config at or under it is left alone. Said in the trial's record."""
    big = [o for o in WIDE if not o.startswith("vocab_size")] + ["vocab_size=50000"]
    t = models.preflight(models.resolve(config="LlamaConfig", overrides=big))
    assert t.vocab == (models.PROBE_VOCAB, 50000)
    model = t.build(1)
    assert model.config.vocab_size == models.PROBE_VOCAB
    assert t.describe()["vocab_built"] == models.PROBE_VOCAB and t.describe()["vocab_config"] == 50000
    assert t.base.config.vocab_size == 50000                   # the sweeps and a checkpoint read the config's own
    df = reads.frame(t, [0], batch=2, length=8)
    assert len(df) and df.logit_std.notna().all()
    padded = models.preflight(models.resolve(config="LlamaConfig", overrides=big + ["pad_token_id=9000"]))
    assert padded.vocab == (9001, 50000)
    assert models.preflight(models.resolve(config="LlamaConfig", overrides=big), cut_vocab=False).vocab is None
    small = models.preflight(models.resolve(config="LlamaConfig", overrides=WIDE))
    assert small.vocab is None and "vocab_built" not in small.describe()
    # GPT-2's begin and end id 50256, read only by generation, are dropped from the cut build (transformers warns
    # of an id outside the vocabulary otherwise); a list keeps the ids inside
    gpt2 = models.preflight(models.resolve(config="GPT2Config", overrides=["n_layer=1", "n_embd=64",
                                                                           "n_head=2"]))
    assert gpt2.vocab_cut == {"vocab_size": 4096, "bos_token_id": None, "eos_token_id": None}
    assert gpt2.build(0).config.eos_token_id is None
    listed = models.preflight(models.resolve(config="GPT2Config", overrides=[
        "n_layer=1", "n_embd=64", "n_head=2", "eos_token_id=[1, 50256]"]))
    assert listed.vocab_cut["eos_token_id"] == [1]
