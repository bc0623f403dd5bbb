"""The model trial's tap, pre-flight and frame (issue 40, harness/trial/model_probes.py, harness/trial/model.py),
in-process on the small example builders."""
from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from harness.trial import model as models, model_reads as reads
from harness.trial import model_probes

transformers = pytest.importorskip("transformers", reason="the transformers examples need .[models]")


def trial(name: str) -> models.ModelUnderTrial:
    return models.preflight(models.resolve(f"examples.models.{name}:build_model"))


@pytest.mark.parametrize("name, backend", [("llama", "transformers"), ("t5", "transformers"),
                                           ("gpt_neo", "functions"), ("tiny_decoder", "functions")])
def test_the_tap_leaves_the_output_as_it_was(name, backend):
    t = trial(name)
    assert t.backend == backend and t.calls >= 2 and t.preflight_diff <= model_probes.PREFLIGHT_RTOL


def test_registered_in_the_attention_interface_only_a_llama_loses_its_mask():
    """The feasibility study's trap: a recording function in transformers' AttentionInterface alone gets no mask,
    and Llama then attends to future tokens. The trial registers the mask interface too, and its pre-flight would
    refuse the model otherwise; here the trap is shown to exist."""
    from transformers import AttentionInterface

    model = trial("llama").build(0)
    inputs = model_probes.model_inputs(model, 2, 12, 0)
    with torch.no_grad():
        ref = model_probes.forward(model, inputs)
        AttentionInterface.register("attention_interface_only", model_probes._transformers_tap)
        model.set_attn_implementation("attention_interface_only")
        leaky = model_probes.forward(model, inputs)
        model.set_attn_implementation("eager")
    assert float((leaky - ref).abs().max()) > 1e-2


def test_a_model_with_no_attention_is_refused_in_one_line_naming_what_was_tried():
    t = models.ModelUnderTrial("mlp", lambda **_: nn.Sequential(nn.Embedding(16, 8), nn.Linear(8, 8)))
    t.builder().vocab_size = 16
    with pytest.raises(models.ModelError, match="no vocab_size"):
        models.preflight(t)

    class MLP(nn.Module):
        vocab_size = 16

        def __init__(self):
            super().__init__()
            self.embed, self.out = nn.Embedding(16, 8), nn.Linear(8, 8)

        def forward(self, input_ids):
            return self.out(self.embed(input_ids))

    with pytest.raises(models.ModelError) as info:
        models.preflight(models.ModelUnderTrial("mlp", lambda **_: MLP()))
    assert "functions: no attention call captured" in str(info.value) and "\n" not in str(info.value)


def test_the_frame_reads_the_scale_the_law_and_the_mask():
    t = trial("llama")
    df = reads.frame(t, [0], 2, 16)
    assert set(model_probes.COLUMNS) <= set(df.columns) and len(df) == 2 * 4       # 2 layers x 4 heads
    assert (df.scale * df.d_k.pow(0.5) - 1).abs().max() < 1e-9
    assert df.law_ratio.between(0.7, 1.4).all() and (df.future_weight_max == 0).all()
    leaky = trial("tiny_decoder_no_causal")
    assert reads.future_dependency(leaky, [0], 2, 16)[0] > 1e-3


def test_a_sweep_holds_the_rest_of_the_shape():
    t = trial("mistral")
    base = t.base.config
    assert models._transformers_sweep(base, "width", 128) == {
        "hidden_size": 128, "num_attention_heads": 8, "num_key_value_heads": 4, "intermediate_size": 256}
    assert models._transformers_sweep(trial("gpt2").base.config, "head_dim", 32) == {"num_attention_heads": 2}
    assert models._transformers_sweep(trial("t5").base.config, "head_dim", 32) == {"d_kv": 32}
    fam, why = reads.sweep(t, "head_dim", [8, 32], [0], 2, 16)
    assert why == "" and sorted(fam.d_k) == [8, 32] and math.isclose(fam.scale.iloc[0], 8 ** -0.5)


def test_a_builder_without_the_keyword_is_not_swept_and_says_why():
    from examples.models.tiny_decoder import TinyDecoder

    t = models.preflight(models.ModelUnderTrial("fixed", lambda: TinyDecoder()))
    fam, why = reads.sweep(t, "width", [64, 128], [0], 2, 8)
    assert fam is None and why == "the builder fixed takes no width= keyword"


@pytest.mark.parametrize("items, expected", [(["a=2", "b=x", "c=[1, 2]"], {"a": 2, "b": "x", "c": [1, 2]})])
def test_overrides_read_as_literals(items, expected):
    assert models.parse_overrides(items) == expected
    with pytest.raises(models.ModelError, match="not key=value"):
        models.parse_overrides(["nokey"])


def test_unscaled_arm_sets_every_scale_to_one_and_a_read_only_softmax_refuses():
    for name in ("llama", "tiny_decoder"):
        df = reads.frame(trial(name), [0], 2, 16, unscaled=True)
        assert (df.scale == 1.0).all()
    with pytest.raises(model_probes.TapError, match="cannot be unscaled"):
        reads.frame(trial("gpt_neo"), [0], 2, 16, unscaled=True)


def test_a_short_training_learns_is_shared_and_refuses_what_it_cannot_train():
    block = {"batch": 2, "length": 16, "train": {"steps": 30, "lr": 3e-3, "batch": 8, "length": 16}}
    t = trial("tiny_decoder")
    df, losses, why = reads.trained(t, [0], block)
    assert why == "" and losses[0][1] < losses[0][0] and len(df) == 2 * 4
    again = reads.train_lm(t, 0, steps=30, lr=3e-3, batch=8, length=16, probe_batch=2)
    assert again[0] is next(v for k, v in t.cache.items() if k[0] == "train")[0]
    # only the readings are kept: no trained model stays in the trial's cache (issue 48: 10-24 GB at released widths)
    assert not any(isinstance(x, torch.nn.Module) for v in t.cache.values()
                   for x in (v if isinstance(v, tuple) else (v,)))
    assert reads.trained(trial("bert"), [0], block)[2].startswith("next-token training needs a causal model")
    assert "encoder-decoder" in reads.trained(trial("t5"), [0], block)[2]


def test_a_config_class_or_a_config_json_builds_the_model(tmp_path):
    small = ["hidden_size=32", "intermediate_size=64", "num_hidden_layers=1", "num_attention_heads=2",
             "vocab_size=64"]
    t = models.preflight(models.resolve(config="LlamaConfig", overrides=small))
    assert t.model_class.endswith("LlamaModel") and t.backend == "transformers" and t.config_sha256
    transformers.LlamaConfig(**models.parse_overrides(small)).save_pretrained(tmp_path)
    from_file = models.preflight(models.resolve(config=str(tmp_path / "config.json")))
    assert from_file.config_sha256 and from_file.base.config.hidden_size == 32
    with pytest.raises(models.ModelError, match="neither a transformers config class"):
        models.resolve(config="NoSuchConfig")


def test_a_model_whose_tapped_output_differs_is_refused_in_one_line():
    """The pre-flight compares before anything is measured: here the module calls SDPA with dropout even in eval,
    so its own output is random and the written-out tap's is not."""
    import torch.nn.functional as F

    class Noisy(nn.Module):
        vocab_size = 16

        def __init__(self):
            super().__init__()
            self.embed, self.qkv = nn.Embedding(16, 8), nn.Linear(8, 24)

        def forward(self, input_ids):
            q, k, v = self.qkv(self.embed(input_ids))[:, None].chunk(3, dim=-1)
            return F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)

    with pytest.raises(models.ModelError) as info:
        models.preflight(models.ModelUnderTrial("noisy", lambda **_: Noisy()))
    message = str(info.value)
    assert "functions: tapped output differs from the default by" in message and "\n" not in message


def test_a_builder_that_ignores_the_override_is_not_swept_and_says_why():
    """A sweep over identical models would read a flat slope whatever the scale: a check that could not fail."""
    from examples.models.tiny_decoder import TinyDecoder

    t = models.preflight(models.ModelUnderTrial("deaf", lambda **_: TinyDecoder()))
    for dim in ("head_dim", "width"):
        fam, why = reads.sweep(t, dim, [16, 32], [0], 2, 8)
        assert fam is None and why.startswith(f"the builder ignored {dim}=")
