"""The prior architectures: their path length between positions is what C2 measures, so the
dependency structure (receptive field, recurrence window) is checked exactly with Jacobians."""
import pytest
import torch
from torch import nn

from model import (MODEL_NAMES, TAGGER_NAMES, ConvStack, DilatedConvStack, LSTMSeq2Seq, LSTMTagger,
                   ModelConfig, build, capture, greedy_decode, param_count)

torch.set_num_threads(1)
CFG = ModelConfig.tiny(n_encoder_layers=3)
T = 12


def _dependency(model, n_layers=None, **kw):
    """dep[i, j] = |d (r . features_i) / d input_j| summed over input dims, for a random r, on a
    float64 input (1, T, d): one backward per output position (structural zeros stay exact)."""
    torch.manual_seed(1)
    h = torch.randn(1, T, CFG.d_model, dtype=torch.float64, requires_grad=True)
    y = model.features(h, n_layers=n_layers, **kw)[0]
    r = torch.randn_like(y)
    rows = [torch.autograd.grad((y[i] * r[i]).sum(), h, retain_graph=True)[0][0].abs().sum(-1)
            for i in range(T)]
    return torch.stack(rows)


def _reach(dep):
    """Set of distances i - j with a nonzero dependency (negative = future)."""
    i, j = torch.nonzero(dep > 0, as_tuple=True)
    return set((i - j).tolist())


@pytest.mark.parametrize("n_layers", [1, 2, 3])
def test_conv_stack_path_length_is_linear_in_distance(n_layers):
    torch.manual_seed(0)
    model = ConvStack(CFG, 4, kernel_size=3).double()
    assert _reach(_dependency(model, n_layers)) == set(range(0, 2 * n_layers + 1))
    assert model.receptive_field(n_layers) == 2 * n_layers + 1


@pytest.mark.parametrize("n_layers", [1, 2, 3])
def test_dilated_conv_stack_path_length_is_logarithmic(n_layers):
    torch.manual_seed(0)
    model = DilatedConvStack(CFG, 4).double()
    assert model.dilations == [1, 2, 4]
    assert _reach(_dependency(model, n_layers)) == set(range(0, 2 ** n_layers))


def test_non_causal_conv_sees_both_sides():
    torch.manual_seed(0)
    model = ConvStack(CFG, 4, kernel_size=3, causal=False).double()
    assert _reach(_dependency(model, 1)) == {-1, 0, 1}


def test_dilation_cycle():
    assert DilatedConvStack(CFG.replace(n_encoder_layers=5), 4, dilation_cycle=2).dilations == [1, 2, 1, 2, 1]


@pytest.mark.parametrize("window", [1, 3, 5])
def test_lstm_window_truncates_recurrence(window):
    torch.manual_seed(0)
    model = LSTMTagger(CFG, 4).double()
    assert _reach(_dependency(model, window=window)) == set(range(0, window))
    h = torch.randn(2, T, CFG.d_model, dtype=torch.float64)
    torch.testing.assert_close(model.features(h, window=T), model.features(h))
    torch.testing.assert_close(model.features(h, window=window)[:, : window], model.features(h)[:, : window])


def test_lstm_full_recurrence_reaches_every_earlier_position():
    torch.manual_seed(0)
    assert _reach(_dependency(LSTMTagger(CFG, 4).double())) == set(range(0, T))


def test_lstm_window_rejects_bidirectional_and_bad_values():
    bi = LSTMTagger(CFG, 4, bidirectional=True)
    h = torch.randn(1, T, CFG.d_model)
    with pytest.raises(ValueError, match="unidirectional"):
        bi.features(h, window=3)
    with pytest.raises(ValueError, match="window"):
        LSTMTagger(CFG, 4).features(h, window=0)


def test_lstm_tagger_padding_does_not_leak_into_real_positions():
    torch.manual_seed(0)
    model = LSTMTagger(CFG, 4, bidirectional=True).eval()
    x = torch.randint(3, 16, (2, 8))
    pad = torch.zeros(2, 8, dtype=torch.bool)
    pad[1, 5:] = True
    x2 = x.masked_fill(pad, 0)
    torch.testing.assert_close(model(x, pad)[~pad], model(x2, pad)[~pad])


def test_lstm_seq2seq_interface_padding_and_attention_taps():
    torch.manual_seed(0)
    model = LSTMSeq2Seq(CFG.replace(n_decoder_layers=1)).eval()          # layer counts differ: bridged
    src, tgt = torch.randint(3, 16, (2, 7)), torch.randint(3, 16, (2, 4))
    pad = torch.zeros(2, 7, dtype=torch.bool)
    pad[0, 4:] = True
    with capture(model, "cross_attn.weights") as cache:
        out = model(src, tgt, src_pad_mask=pad)
    assert out.shape == (2, 4, 16)
    assert torch.all(cache["cross_attn.weights"][0, :, 4:] == 0)
    out2 = model(src.masked_fill(pad, 0), tgt, src_pad_mask=pad)
    torch.testing.assert_close(out, out2)
    assert greedy_decode(model, src, 1, 5, src_pad_mask=pad).shape == (2, 5)
    assert isinstance(LSTMSeq2Seq(CFG, attention="dot").cross_attn.w_a, type(None))


def test_registry_builds_every_name_with_one_interface():
    x = torch.randint(3, 16, (2, 6))
    for name in MODEL_NAMES:
        kw = {"n_classes": 5} if name in TAGGER_NAMES else {}
        model = build(name, CFG, **kw)
        assert param_count(model) > 0
        if name in TAGGER_NAMES:
            assert model(x).shape == (2, 6, 5)
            assert model.features(model.embed(x)).shape == (2, 6, CFG.d_model)
        else:
            assert model(x, x[:, :3]).shape == (2, 3, 16)
    with pytest.raises(ValueError, match="transformer.*lstm_seq2seq"):
        build("rnn", CFG)


def test_param_count_counts_tied_weights_once():
    tied = build("transformer", CFG.replace(tie_embeddings=True))
    untied = build("transformer", CFG)
    assert param_count(untied) - param_count(tied) == 2 * CFG.src_vocab * CFG.d_model


@pytest.mark.parametrize("name", ["conv", "dilated_conv", "lstm_tagger", "lstm_seq2seq"])
def test_module_walk_finds_recurrence_and_convolution_in_baselines(name):
    """The C1 structural check (no recurrent/conv module in the Transformer) would catch them."""
    forbidden = (nn.RNNBase, nn.modules.conv._ConvNd)
    model = build(name, CFG, **({"n_classes": 3} if name in TAGGER_NAMES else {}))
    assert any(isinstance(m, forbidden) for m in model.modules())
