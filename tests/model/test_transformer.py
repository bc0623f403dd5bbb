"""Transformer / EncoderTagger / DecoderLM: structure (C1: no recurrence, no convolution), taps,
the tagger interface the probes use, and decoding."""
import pytest
import torch
from torch import nn

from model import (DecoderLM, EncoderTagger, ModelConfig, Transformer, capture, greedy_decode,
                   tap_names)

torch.set_num_threads(1)
CFG = ModelConfig.tiny()


def _ids(B=2, T=7, vocab=16, seed=0):
    return torch.randint(3, vocab, (B, T), generator=torch.Generator().manual_seed(seed))


def test_transformer_has_no_recurrent_or_convolutional_module():
    forbidden = (nn.RNNBase, nn.RNNCellBase, nn.modules.conv._ConvNd)
    model = Transformer(ModelConfig.paper_base(src_vocab=100, n_encoder_layers=2, n_decoder_layers=2))
    found = [name for name, m in model.named_modules() if isinstance(m, forbidden)]
    assert found == []
    assert sum(isinstance(m, nn.Linear) for m in model.modules()) > 0      # the walk does see modules


def test_shapes_and_tap_names():
    model = Transformer(CFG).eval()
    src, tgt = _ids(T=7), _ids(T=5, seed=1)
    assert model(src, tgt).shape == (2, 5, 16)
    with capture(model) as cache:
        model(src, tgt)
    assert cache["encoder.layers.1.self_attn.logits"].shape == (2, 4, 7, 7)
    assert cache["decoder.layers.0.self_attn.weights"].shape == (2, 4, 5, 5)
    assert cache["decoder.layers.1.cross_attn.logits"].shape == (2, 4, 5, 7)
    assert cache["decoder.layers.1.cross_attn.v"].shape == (2, 4, 7, 8)
    assert cache["decoder.layers.1.cross_attn.out"].shape == (2, 4, 5, 8)
    assert len(cache) == 6 * (2 + 2 * 2)
    assert set(cache) == set(tap_names(model))
    with capture(model, "encoder.layers.0.self_attn.q", "*.cross_attn.logits") as few:
        model(src, tgt)
    assert sorted(few) == ["decoder.layers.0.cross_attn.logits", "decoder.layers.1.cross_attn.logits",
                           "encoder.layers.0.self_attn.q"]
    with pytest.raises(ValueError, match="no tap matches"):
        with capture(model, "*.logit"):
            pass


@pytest.mark.parametrize("cfg", [CFG, CFG.replace(score="additive"), CFG.replace(qk_norm="l2", norm_first=True)],
                         ids=["dot", "additive", "l2-preln"])
def test_taps_on_and_off_give_identical_outputs_and_retained_grads(cfg):
    torch.manual_seed(0)
    model = Transformer(cfg).double()
    src, tgt = _ids(T=7), _ids(T=5, seed=1)
    pad = torch.zeros(2, 7, dtype=torch.bool)
    pad[1, 5:] = True
    off = model(src, tgt, src_pad_mask=pad)
    with capture(model, "*.logits", retain_grad=True, detach=False) as cache:
        on = model(src, tgt, src_pad_mask=pad)
        torch.testing.assert_close(on, off, atol=1e-12, rtol=0)
        name = "encoder.layers.0.self_attn.logits"
        expected = torch.autograd.grad(on.pow(2).sum(), cache[name], retain_graph=True)[0]
        on.pow(2).sum().backward()
    assert len(cache.grads) == 6 and all(g.abs().sum() > 0 for g in cache.grads.values())
    torch.testing.assert_close(cache.grad(name), expected, atol=1e-12, rtol=0)
    assert not any(t._sinks for t in model.modules() if hasattr(t, "_sinks"))    # taps switched off again


def test_cache_grad_needs_retain_grad():
    model = EncoderTagger(CFG, 3)
    with capture(model, "*.logits") as cache:
        model(_ids()).sum().backward()
    with pytest.raises(RuntimeError, match="retain_grad"):
        cache.grad("encoder.layers.0.self_attn.logits")


def test_decoder_lm_is_causal_and_features_truncate():
    torch.manual_seed(0)
    lm = DecoderLM(CFG).double()
    assert lm(_ids()).shape == (2, 7, 16)
    assert all(n.startswith("decoder.layers.") and ".self_attn." in n for n in tap_names(lm))
    h = lm.embed(_ids(B=1, T=6))
    J = torch.autograd.functional.jacobian(lambda x: lm.features(x)[0], h)[:, :, 0]
    dep = J.abs().sum(dim=(1, 3))
    assert torch.all(dep.triu(1) == 0)
    one = lm.features(h, n_layers=1)
    assert not torch.allclose(one, lm.features(h))
    torch.testing.assert_close(lm.features(h, n_layers=0), h)
    with pytest.raises(ValueError, match="n_layers"):
        lm.features(h, n_layers=3)


@pytest.mark.parametrize("pool, shape", [(None, (2, 7, 5)), ("first", (2, 5)), ("last", (2, 5)), ("mean", (2, 5))])
def test_encoder_tagger_heads(pool, shape):
    tagger = EncoderTagger(CFG, 5, pool=pool)
    pad = torch.zeros(2, 7, dtype=torch.bool)
    pad[0, 4:] = True
    assert tagger(_ids(), pad_mask=pad).shape == shape


def test_encoder_tagger_causal_switch():
    tagger = EncoderTagger(CFG, 5, causal=True).double()
    h = tagger.embed(_ids(B=1, T=5))
    J = torch.autograd.functional.jacobian(lambda x: tagger.features(x)[0], h)[:, :, 0]
    assert torch.all(J.abs().sum(dim=(1, 3)).triu(1) == 0)
    bidir = EncoderTagger(CFG, 5).double()
    J = torch.autograd.functional.jacobian(lambda x: bidir.features(x)[0], h)[:, :, 0]
    assert torch.all(J.abs().sum(dim=(1, 3)) > 0)


def test_embedding_scale_and_init_keep_position_visible():
    cfg = ModelConfig.small()
    model = EncoderTagger(cfg, 3)
    w = model.embedding.tok.weight
    assert abs(w.std().item() - cfg.d_model ** -0.5) < 0.2 * cfg.d_model ** -0.5
    scaled = model.embedding.tok(torch.arange(cfg.src_vocab)) * model.embedding.multiplier
    assert 0.8 < scaled.std().item() < 1.2                    # same magnitude as the sinusoid's


def test_tied_embeddings_and_xavier():
    cfg = CFG.replace(tie_embeddings=True, init="xavier")
    model = Transformer(cfg)
    assert model.generator.weight is model.src_embed.tok.weight is model.tgt_embed.tok.weight
    assert abs(model.src_embed.tok.weight.std().item() - cfg.d_model ** -0.5) < 0.05
    assert torch.all(model.encoder.layers[0].ff.linear1.bias == 0)
    split = Transformer(CFG.replace(tie_embeddings=True, tgt_vocab=20))
    assert split.generator.weight is split.tgt_embed.tok.weight and split.src_embed is not split.tgt_embed


def test_sequence_longer_than_max_len_is_an_error():
    model = EncoderTagger(CFG.replace(max_len=8), 3)
    with pytest.raises(ValueError, match="max_len"):
        model(_ids(T=9))


def test_greedy_decode_matches_teacher_forced_argmax():
    torch.manual_seed(0)
    model = Transformer(CFG).eval()
    src = _ids(T=6)
    out = greedy_decode(model, src, bos_id=1, max_len=5)
    assert out.shape == (2, 5)
    tgt_in = torch.cat([torch.ones(2, 1, dtype=torch.long), out[:, :-1]], 1)
    with torch.no_grad():
        assert torch.equal(model(src, tgt_in).argmax(-1), out)
