"""nanoGPT's own ``GPT``, unmodified, read from a ``{'model': ...}`` save (issue 65, item 5).

Its ``forward(idx, targets=None)`` was called with ``input_ids=`` and failed; a wrapper module that renamed it
renamed every tensor too. The trial now calls a model as its signature asks (``model_probes.by_keyword``), and
nanoGPT's logits of the last position alone fall back to the random direction for |dL/dlogits|, said in
``grad_loss``. ``tests/model_trial/nanogpt_upstream`` is nanoGPT's model code as upstream writes it (MIT)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from harness.trial import checkpoint, checkpoint_probes as readings, model as models, model_probes
from tests.model_trial.nanogpt_upstream import GPT, GPTConfig

SHAPE = dict(n_layer=2, n_head=4, n_embd=64, block_size=64, vocab_size=64, bias=False)


@pytest.fixture(scope="module")
def trial():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return models.preflight(models.resolve("tests.model_trial.nanogpt_upstream:build_model",
                                               overrides=[f"{k}={v}" for k, v in SHAPE.items()]))
    finally:
        torch.set_num_threads(threads)


def test_the_model_is_called_as_its_signature_asks():
    assert not model_probes.by_keyword(GPT(GPTConfig(**SHAPE)), ["input_ids"])     # forward(idx, targets=None)
    from examples.models.llama import build_model
    assert model_probes.by_keyword(build_model(), ["input_ids"])


def test_nanogpts_own_save_is_read_into_its_own_model(trial, tmp_path):
    model = trial.build(7)
    torch.save({"model": model.state_dict(), "optimizer": {"state": {}, "param_groups": []},
                "model_args": dict(SHAPE), "iter_num": 300, "best_val_loss": torch.tensor(2.5),
                "config": {"batch_size": 12}}, tmp_path / "ckpt.pt")
    ckpt = checkpoint.prepare(trial, str(tmp_path / "ckpt.pt"))
    assert ckpt.prefix == "" and ckpt.ids.shape == (checkpoint.PROBE_COUNT, 64)
    assert ckpt.ids_note.endswith("; sequences of at most 64 tokens, the model's positions")
    ids = ckpt.ids[:2, :32]
    df = checkpoint.read(trial, ckpt, ids)
    mine = df[df.which == "checkpoint"].reset_index(drop=True)
    direct = readings.readings(model.eval(), trial.backend, ids, "checkpoint")
    assert len(mine) == 2 * 2 * 4 and trial.causal is True
    cols = ["independence_ratio", "logit_std", "entropy_ratio", "q_var", "k_var"]
    assert np.allclose(mine[cols].to_numpy(), direct[cols].to_numpy(), rtol=1e-5, atol=1e-7)
    assert set(df.grad_loss) == {"random direction"}               # no get_input_embeddings: no head to read
    assert np.allclose(mine.scale, 1 / np.sqrt(16))


def test_the_own_loss_reads_logits_as_they_are_and_falls_back_where_they_cover_one_position():
    """A model whose output is its logits gets its next-token loss from them; nanoGPT's, of the last position
    alone, gets None (the random direction), and ``used`` says so."""
    g = torch.Generator().manual_seed(0)
    ids, head = torch.randint(0, 10, (1, 6), generator=g), torch.randn(10, 4, generator=g)
    used = {"own": True}
    loss_of = readings.next_token_loss(head, ids, used)
    logits = torch.randn(1, 6, 10, generator=g)
    want = torch.nn.functional.cross_entropy(logits[0, :-1], ids[0, 1:])
    assert torch.allclose(loss_of(logits), want) and used["own"]
    hidden = torch.randn(1, 6, 4, generator=g)
    assert torch.allclose(loss_of(hidden), torch.nn.functional.cross_entropy((hidden @ head.T)[0, :-1], ids[0, 1:]))
    assert loss_of(logits[:, [-1]]) is None and not used["own"]
