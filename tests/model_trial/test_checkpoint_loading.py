"""Reading a user's checkpoint (issue 55, items 2, 3, 9 and 11): planted checkpoints of a tiny Llama (hidden 32,
4 layers), each with a known answer. Saved tensors the built model does not use are refused by name unless
``--model-weights-allow-unused``; ``--model-config`` reads the file it names; an empty probe file is one line;
training scripts' saves (nanoGPT's ``{'model': ...}``, torch.compile's ``_orig_mod.``, DDP's ``module.``) load."""
from __future__ import annotations

import importlib.util
import json

import pytest
import torch

from harness.trial import checkpoint, model as models
from tests.conftest import REPO, run_pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("transformers") is None,
                                reason="the loading tests build a transformers Llama (.[models])")

TINY = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=4, num_attention_heads=2, num_key_value_heads=2,
            vocab_size=50, max_position_embeddings=64)
#: the tensors of one Llama layer: 2 norms, 4 attention projections, 3 MLP projections
PER_LAYER = 9


def _llama(head: bool = False, seed: int = 0, **over):
    import transformers

    torch.manual_seed(seed)
    config = transformers.LlamaConfig(**{**TINY, **over})
    return (transformers.LlamaForCausalLM if head else transformers.LlamaModel)(config).eval()


def _trial(**over):
    return models.preflight(models.resolve(config="LlamaConfig",
                                           overrides=[f"{k}={v}" for k, v in {**TINY, **over}.items()]),
                            cut_vocab=False)


@pytest.fixture(scope="module")
def trial():
    return _trial()


def _refused(trial, path, **kw) -> str:
    with pytest.raises(models.ModelError) as err:
        checkpoint.prepare(trial, str(path), **kw)
    assert "\n" not in str(err.value)
    return str(err.value)


def _loads_as(trial, path, model, prefix: str, **kw):
    ckpt = checkpoint.prepare(trial, str(path), **kw)
    assert ckpt.prefix == prefix
    loaded = checkpoint.load(trial, ckpt).state_dict()
    assert all(torch.equal(loaded[k], t) for k, t in model.state_dict().items())
    return ckpt


# ------------------------------------------------------------------------------------------- item 2: unused tensors
def test_a_six_layer_checkpoint_in_a_four_layer_config_is_refused_naming_its_extra_layers(trial, tmp_path):
    six = _llama(head=True, num_hidden_layers=6)
    six.save_pretrained(tmp_path / "six")
    msg = _refused(trial, tmp_path / "six")
    assert msg == (f"--model-weights {tmp_path / 'six'}: {2 * PER_LAYER} saved tensors the model built by config "
                   "LlamaConfig does not use (model.layers.4.input_layernorm.weight, model.layers.4.mlp.down_proj."
                   "weight, ...): another config's checkpoint? --model-weights-allow-unused reads it without them")
    # allowed: the first four layers load, and the two others and the head are counted unused
    ckpt = checkpoint.prepare(trial, str(tmp_path / "six"), allow_unused=True)
    assert len(ckpt.unused) == 2 * PER_LAYER + 1 and "lm_head.weight" in ckpt.unused
    # issue 65, item 7: what was left out is named by layer (the terminal's line and the note), the head is exempt
    assert len(ckpt.dropped) == 2 * PER_LAYER and "lm_head.weight" not in ckpt.dropped
    words = f"model.layers.4 ({PER_LAYER} tensors), model.layers.5 ({PER_LAYER} tensors)"
    assert checkpoint.dropped_words(ckpt.dropped) == words and words in ckpt.note
    assert checkpoint.dropped_words(["q_bias", "model.layers.0.x.weight"]) == "q_bias, model.layers.0 (1 tensor)"
    loaded = checkpoint.load(trial, ckpt).state_dict()
    assert all(torch.equal(loaded[k], six.model.state_dict()[k]) for k in loaded)


def test_q_and_k_biases_the_config_lacks_are_refused(trial, tmp_path):
    state = dict(_llama().state_dict())
    for i in range(TINY["num_hidden_layers"]):
        for p in ("q_proj", "k_proj"):
            state[f"layers.{i}.self_attn.{p}.bias"] = torch.ones(TINY["hidden_size"])
    torch.save(state, tmp_path / "biased.pt")
    msg = _refused(trial, tmp_path / "biased.pt")
    assert "8 saved tensors" in msg and "(layers.0.self_attn.k_proj.bias, layers.0.self_attn.q_proj.bias, ...)" in msg


def test_one_extra_key_in_a_state_dict_is_refused_by_name(trial, tmp_path):
    model = _llama()
    torch.save({**model.state_dict(), "logit_scale": torch.tensor(2.0)}, tmp_path / "extra.pt")
    assert _refused(trial, tmp_path / "extra.pt").endswith(
        ": 1 saved tensor the model built by config LlamaConfig does not use (logit_scale): another config's "
        "checkpoint? --model-weights-allow-unused reads it without them")
    ckpt = _loads_as(trial, tmp_path / "extra.pt", model, "", allow_unused=True)
    assert ckpt.unused == ["logit_scale"] and "1 saved tensors unused (e.g. logit_scale)" in ckpt.note


def test_an_output_head_and_declared_buffers_are_not_refused(trial, tmp_path):
    """A ``*ForCausalLM`` folder's lm_head is the head the note names; GPT-2's old saves hold its causal-mask buffers,
    which its class declares harmless (``_keys_to_ignore_on_load_unexpected``)."""
    import transformers

    with_head = _llama(head=True)
    with_head.save_pretrained(tmp_path / "hf")
    assert checkpoint.prepare(trial, str(tmp_path / "hf")).unused == ["lm_head.weight"]
    gpt2 = models.preflight(models.resolve(config="GPT2Config", overrides=[
        "n_embd=32", "n_layer=2", "n_head=2", "vocab_size=50", "n_positions=64"]), cut_vocab=False)
    base = transformers.GPT2Model(gpt2.base.config)
    torch.save({**base.state_dict(), "h.0.attn.bias": torch.ones(1, 1, 64, 64)}, tmp_path / "gpt2.pt")
    assert checkpoint.prepare(gpt2, str(tmp_path / "gpt2.pt")).unused == ["h.0.attn.bias"]


# ----------------------------------------------------------------------------- item 11: training scripts' saves
def test_nanogpt_style_saves_of_a_compiled_model_load_with_the_wrapper_prefix_taken_off(trial, tmp_path):
    """nanoGPT's checkpoint: ``{'model': state_dict, 'optimizer': ..., 'model_args': ..., 'iter_num': ...}``, its
    names under ``_orig_mod.`` when the model was compiled."""
    model = _llama(seed=3)
    opt = torch.optim.AdamW(model.parameters())
    model(torch.zeros(1, 4, dtype=torch.long)).last_hidden_state.sum().backward()
    opt.step()
    torch.save({"model": {f"_orig_mod.{k}": v for k, v in model.state_dict().items()},
                "optimizer": opt.state_dict(), "model_args": {"n_layer": 4}, "iter_num": 5,
                "best_val_loss": torch.tensor(1.5), "config": {"compile": True}}, tmp_path / "ckpt.pt")
    ckpt = _loads_as(trial, tmp_path / "ckpt.pt", model, "_orig_mod.")
    assert "prefix '_orig_mod.' taken off" in ckpt.note


@pytest.mark.parametrize("wrapper", ["module.", "module._orig_mod.", "_orig_mod.module."])
def test_ddp_and_compiled_ddp_names_load_with_the_wrapper_prefix_taken_off(trial, tmp_path, wrapper):
    model = _llama(head=True, seed=4)
    (tmp_path / "run").mkdir()
    torch.save({"state_dict": {f"{wrapper}{k}": v for k, v in model.state_dict().items()}, "epoch": 2},
               tmp_path / "run" / "pytorch_model.bin")
    ckpt = _loads_as(trial, tmp_path / "run", model.model, wrapper + "model.")
    assert ckpt.unused == [f"{wrapper}lm_head.weight"]
    # the saved head is found under the wrapper's prefix too: |dL/dlogits| reads the checkpoint's own head
    head, name = checkpoint.head_weight(checkpoint.load(trial, ckpt), ckpt)
    assert name == f"the checkpoint's {wrapper}lm_head.weight"
    assert torch.equal(head, model.lm_head.weight.detach())


def test_saves_that_hold_no_state_dict_say_why_in_one_line(trial, tmp_path):
    from tests.model_trial.nanogpt import GPT

    torch.save(GPT(), tmp_path / "whole.pt")
    assert "holds pickled objects (tests.model_trial.nanogpt.GPT)" in _refused(trial, tmp_path / "whole.pt")
    assert "save model.state_dict()" in _refused(trial, tmp_path / "whole.pt")
    torch.save({"optimizer": {"state": {}}, "iter_num": 5}, tmp_path / "opt.pt")
    assert _refused(trial, tmp_path / "opt.pt").endswith(
        "not a state dict (a mapping of names to tensors): 'optimizer' holds a dict, and no entry "
        "model/state_dict/model_state_dict/module holds one")
    torch.save([torch.zeros(2)], tmp_path / "list.pt")
    assert _refused(trial, tmp_path / "list.pt").endswith("not a state dict (a mapping of names to tensors): a list")


def test_nanogpts_linear_weights_against_gpt2s_conv1d_are_named_as_transposed(tmp_path):
    gpt2 = models.preflight(models.resolve(config="GPT2Config", overrides=[
        "n_embd=32", "n_layer=1", "n_head=2", "vocab_size=50", "n_positions=64"]), cut_vocab=False)
    state = {k: (v.T.contiguous() if k.endswith("c_attn.weight") else v) for k, v in gpt2.base.state_dict().items()}
    torch.save({"model": {f"transformer.{k}": v for k, v in state.items()}}, tmp_path / "nano.pt")
    msg = _refused(gpt2, tmp_path / "nano.pt")
    assert "transformer.h.0.attn.c_attn.weight is [96, 32] in the weights, [32, 96]" in msg and "transpose" in msg


# ------------------------------------------------------------------------------------ item 3: --model-config FILE
def test_model_config_reads_the_json_file_it_names_and_refuses_what_is_not_one(tmp_path):
    _llama(num_hidden_layers=3).config.save_pretrained(tmp_path)
    other = _llama(num_hidden_layers=1).config.to_dict()
    (tmp_path / "other.json").write_text(json.dumps(other))
    built = models.preflight(models.resolve(config=str(tmp_path / "other.json")), cut_vocab=False)
    assert built.base.config.num_hidden_layers == 1
    assert models.preflight(models.resolve(config=str(tmp_path)),
                            cut_vocab=False).base.config.num_hidden_layers == 3
    _llama().save_pretrained(tmp_path / "w")
    for path, why in ((tmp_path / "w" / "model.safetensors", "a .safetensors file, not a .json; weights go to "
                                                             "--model-weights"),
                      (tmp_path / "nokind.json", "no model_type in it, which names the architecture"),
                      (tmp_path / "bad.json", "Expecting value")):
        if path.suffix == ".json":
            path.write_text("{\"hidden_size\": 32}" if path.stem == "nokind" else "not json")
        with pytest.raises(models.ModelError) as err:
            models.resolve(config=str(path))
        assert str(err.value).startswith(f"--model-config {path}: not a transformers config (") and why in str(
            err.value)


# ------------------------------------------------------------------------------------------ item 9: probe files
def test_an_empty_probe_file_and_a_one_token_sequence_are_one_line(trial, tmp_path):
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "one.txt").write_text("3\n4\n")
    _llama().save_pretrained(tmp_path / "w")
    assert _refused(trial, tmp_path / "w", tokens=str(tmp_path / "empty.txt")) == (
        f"--probe-tokens {tmp_path / 'empty.txt'}: no tokens in the file; the probe needs sequences of at least 2")
    assert _refused(trial, tmp_path / "w", tokens=str(tmp_path / "one.txt")).endswith(
        "a sequence of 1 token; the probe needs at least 2")


@pytest.mark.subprocess
def test_from_the_command_line_each_is_exit_4_in_one_line(tmp_path):
    """The plugin's pre-flight turns each into a usage error: unused tensors (naming the option), an empty probe
    file, a weights file given as the config; and the option lets the six-layer checkpoint through the pre-flight."""
    _llama(head=True, num_hidden_layers=6).save_pretrained(tmp_path / "six")
    _llama(head=True).save_pretrained(tmp_path / "four")
    (tmp_path / "empty.txt").write_text("")
    overrides = [f"--model-override={k}={v}" for k, v in TINY.items()]
    common = ["claims/test_q3_variance_after_training.py", "--collect-only", f"--report-dir={tmp_path / 'r'}"]
    llama = ["--model-config", "LlamaConfig", *overrides]
    for args, start in (([*llama, f"--model-weights={tmp_path / 'six'}"], "--model-weights-allow-unused reads it"),
                        ([*llama, f"--model-weights={tmp_path / 'four'}", f"--probe-tokens={tmp_path / 'empty.txt'}"],
                         "no tokens in the file"),
                        ([f"--model-config={tmp_path / 'four' / 'model.safetensors'}"], "not a transformers config")):
        proc = run_pytest(REPO, *common, *args)
        lines = [ln for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()]
        assert proc.returncode == 4 and len(lines) == 1 and lines[0].startswith("ERROR: --") and start in lines[0], (
            proc.returncode, lines[:30])
    ok = run_pytest(REPO, *common, *llama, f"--model-weights={tmp_path / 'six'}", "--model-weights-allow-unused")
    assert ok.returncode == 0, ok.stdout[-2000:] + ok.stderr[-2000:]
