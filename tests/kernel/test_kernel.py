"""Taking the user's kernel (issue 27): resolving it, its convention, the pre-flight, one call form, the probes'
failing well, and the model switch giving the built-in path's numbers.

Pre-flight errors run ``pytest --attention ...`` in a subprocess: a user's mistake is one line, exit 4, no traceback.
"""
from __future__ import annotations

import json
import math
import textwrap

import pytest
import torch
import torch.nn.functional as F

from harness.trial import kernel as kernels
from harness.trial import kernel_probes
from harness.report import html as report
from model import ModelConfig, MultiHeadAttention, capture, inject
from model.kernels import active_kernel, use_kernel
from tests.conftest import REPO, run_pytest

torch.set_num_threads(1)

BAD_KERNELS = textwrap.dedent('''
    import torch
    import torch.nn.functional as F

    def one_arg(x):
        return x

    def wrong_shape(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
        return query.transpose(1, 2)

    def wrong_dtype(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
        return F.scaled_dot_product_attention(query, key, value).double()

    def hf_not_transposed(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
        return F.scaled_dot_product_attention(query, key, value), None

    def build():
        return lambda query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None: \\
            F.scaled_dot_product_attention(query, key, value, attn_mask=attn_mask, is_causal=is_causal, scale=scale)

    def self_only(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
        if query.shape[-2] != key.shape[-2]:
            raise ValueError("self-attention only")
        return F.scaled_dot_product_attention(query, key, value, attn_mask=attn_mask, is_causal=is_causal,
                                              scale=scale)

    class Opaque(torch.nn.Module):
        """A module whose forward takes anything: its convention cannot be read."""
        def __init__(self):
            super().__init__()
            self.proj = torch.nn.Linear(4, 4)

        def forward(self, *args, **kwargs):
            return F.scaled_dot_product_attention(*args, **kwargs)

    opaque_module = Opaque()

    not_callable = 3
    ''')


@pytest.fixture(scope="module")
def user_pkg(tmp_path_factory):
    """A folder outside the checkout holding the user's kernels (``--attention-path``)."""
    root = tmp_path_factory.mktemp("user_repo")
    (root / "userkern.py").write_text(BAD_KERNELS)
    return root


# ---------------------------------------------------------------------------------------------- conventions
def test_conventions_are_read_off_the_signature():
    from examples.attention import hf_eager, sdpa_wrapper

    assert kernels.detect_convention(sdpa_wrapper.attention) == "sdpa"
    assert kernels.detect_convention(hf_eager.attention) == "hf"
    assert kernels.detect_convention(F.scaled_dot_product_attention) == "sdpa"     # a builtin: no signature
    assert kernels.detect_convention(lambda q, k, v, **kw: q) == "sdpa"
    with pytest.raises(kernels.KernelError, match="fits no convention; expected sdpa fn\\(query, key, value"):
        kernels.detect_convention(lambda x: x)


def test_resolve_by_name_factory_and_override(user_pkg):
    k = kernels.resolve("examples.attention.hf_eager:attention")
    assert (k.convention, k.factory, k.dtypes) == ("hf", False, ("float32",)) and len(k.source_sha256) == 64
    built = kernels.resolve("userkern:build", path=str(user_pkg), factory=True)
    assert built.convention == "sdpa" and built.factory
    forced = kernels.resolve("examples.attention.sdpa_wrapper:attention", convention="sdpa", dtypes="float32,bfloat16")
    assert forced.dtypes == ("float32", "bfloat16")
    assert forced.describe() == {"name": "examples.attention.sdpa_wrapper:attention", "convention": "sdpa",
                                 "source_sha256": forced.source_sha256, "factory": False,
                                 "dtypes": ["float32", "bfloat16"], "rejected_dtypes": {}, "unsupported": {}, "gqa": False,
                                 "dv": False, "window": False, "softcap": False, "hf_is_causal": False,
                                 "dropout": False}
    for name, match in (("nope.nowhere:fn", "cannot be resolved"), ("userkern:not_callable", "not callable")):
        with pytest.raises(kernels.KernelError, match=match):
            kernels.resolve(name, path=str(user_pkg))
    with pytest.raises(kernels.KernelError, match="expected a comma-separated list"):
        kernels.resolve("examples.attention.sdpa_wrapper:attention", dtypes="float33")


def test_one_call_form_for_both_conventions():
    """hf's (B, L, H, D) output comes back (B, H, L, D); its masks are built as transformers builds them, so a bool
    mask, an additive mask and is_causal give SDPA's numbers (L = S: both alignments agree)."""
    sdpa = kernels.resolve("examples.attention.sdpa_wrapper:attention")
    hf = kernels.resolve("examples.attention.hf_eager:attention")
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 3, 5, 8, generator=g) for _ in range(3))
    pad = (torch.arange(5)[None, :] < torch.tensor([5, 2])[:, None])[:, None, None, :]
    additive = torch.zeros(1, 1, 5, 5).masked_fill(torch.rand(1, 1, 5, 5, generator=g) < 0.3, -math.inf)
    additive[..., 0] = 0.0
    for kw in ({}, {"mask": pad}, {"mask": additive}, {"is_causal": True}, {"scale": 0.3},
               {"mask": pad, "is_causal": True}):
        (a, _), (b, w) = sdpa(q, k, v, **kw), hf(q, k, v, **kw)
        assert b.shape == a.shape == q.shape and w.shape == (2, 3, 5, 5)
        torch.testing.assert_close(a, b, atol=1e-6, rtol=1e-5)


# ---------------------------------------------------------------------------------------------- pre-flight
@pytest.mark.parametrize("args, expected", [
    (["--attention", "nope.nowhere:fn"], "cannot be resolved"),
    (["--attention", "userkern:one_arg"], "fits no convention; expected sdpa fn(query, key, value"),
    (["--attention", "userkern:wrong_shape"], "expected (B, H, L, D) = (1, 2, 3, 16)"),
    (["--attention", "userkern:wrong_dtype"], "returned torch.float64 for float32 inputs; expected float32"),
    (["--attention", "userkern:hf_not_transposed", "--attention-convention", "hf"], "expected (B, L, H, D)"),
    (["--attention", "userkern:build"], "fits no convention"),         # a factory named without --attention-factory
    (["--attention", "userkern:opaque_module"], "Opaque.forward(*args, **kwargs) fits no convention; expected sdpa"),
    (["--attention-path", "somewhere"], "--attention-path needs --attention"),
])
def test_preflight_errors_are_one_line_exit_4(user_pkg, args, expected):
    extra = ["--attention-path", str(user_pkg)] if "--attention" in args else []
    proc = run_pytest(user_pkg, "--co", "-q", *extra, *args, timeout=120)
    err = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert len(err) == 1 and err[0].startswith("ERROR: ") and expected in err[0], proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr


@pytest.mark.subprocess
def test_a_kernel_on_trial_is_recorded_in_results_json(tmp_path):
    """M0 on the SDPA wrapper, through the plugin: supported, and results.json names the attention judged."""
    proc = run_pytest(REPO, "claims/test_m0_model_checks.py", "-q", "--fast", "--report-dir", str(tmp_path),
                      "--attention", "examples.attention.sdpa_wrapper:attention", timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    res = json.loads((tmp_path / "results.json").read_text())
    assert res["attention"]["name"] == "examples.attention.sdpa_wrapper:attention"
    assert res["attention"]["convention"] == "sdpa" and res["attention"]["dtypes"] == ["float32"]
    assert {c["name"] for c in res["claims"]["M0"]["criteria"]} == {"kernel_masks", "kernel_heads_independent"}
    assert "attention on trial: examples.attention.sdpa_wrapper:attention" in proc.stdout
    assert proc.stdout.index("no property of the kernel fails") < proc.stdout.index("M0  supported")
    assert active_kernel() is None
    html = (tmp_path / "index.html").read_text()
    assert "Attention on trial: <code>examples.attention.sdpa_wrapper:attention</code>" in html
    ours = {**res, "attention": None}
    assert any("different attentions judged: this project's own MultiHeadAttention against "
               "examples.attention.sdpa_wrapper:attention" in w for w in report.compare(ours, res)[2])
    assert not any("different attentions" in w for w in report.compare(res, res)[2])


def test_a_dtype_the_kernel_rejects_is_dropped_at_preflight_and_said():
    def no_float64(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
        if query.dtype == torch.float64:
            raise TypeError("float64 is not supported")
        return F.scaled_dot_product_attention(query, key, value, attn_mask=attn_mask, is_causal=is_causal, scale=scale)

    k = kernels.Kernel(fn=no_float64, name="no_float64", convention="sdpa", dtypes=("float32", "float64"))
    kernels.preflight(k)
    assert k.dtypes == ("float32",) and k.rejected_dtypes == {"float64": "TypeError: float64 is not supported"}
    only = kernels.Kernel(fn=no_float64, name="no_float64", convention="sdpa", dtypes=("float64",))
    with pytest.raises(kernels.KernelError, match="raised TypeError: float64 is not supported on the pre-flight"):
        kernels.preflight(only)


def test_a_module_is_read_off_its_forward_and_hashed_by_its_class(user_pkg):
    """An nn.Module instance, or a class built by --attention-factory: the convention comes from ``forward`` (not
    ``Module.__call__``'s ``(*args, **kwargs)``), the module is put in eval mode, and source_sha256 is its class's."""
    from examples.attention import sdpa_module

    inst = kernels.resolve("examples.attention.sdpa_module:attention")
    built = kernels.resolve("examples.attention.sdpa_module:SDPAttention", factory=True)
    assert inst.convention == built.convention == "sdpa" and not inst.fn.training
    assert inst.source_sha256 == built.source_sha256 == kernels.source_hash(sdpa_module.SDPAttention)
    with pytest.raises(kernels.KernelError) as err:
        kernels.resolve("userkern:opaque_module", path=str(user_pkg))
    message = str(err.value)
    assert "\n" not in message and "Linear" not in message                  # one line, no module repr
    assert message.endswith("or name its convention with --attention-convention {sdpa,hf}")
    forced = kernels.resolve("userkern:opaque_module", path=str(user_pkg), convention="sdpa")
    kernels.preflight(forced)
    assert forced.source_sha256 is not None


def test_a_self_attention_only_kernel_is_tried_on_what_it_accepts(user_pkg):
    """A kernel that raises on L != S passes the pre-flight on the square input; the cross-attention cases are
    recorded as not supported by this kernel, the others judged (here: it holds)."""
    k = kernels.resolve("userkern:self_only", path=str(user_pkg), dtypes="float32,bfloat16")
    kernels.preflight(k)
    assert k.dtypes == ("float32", "bfloat16") and k.self_attention_only
    assert k.describe()["unsupported"][kernels.CROSS_ATTENTION] == "ValueError: self-attention only"
    report = kernel_probes.exactness(k, cases=30, max_len=9, long_len=40)
    assert report.holds and report.measured and report.rejected, report.detail()
    assert all(r.case.L == r.case.S for r in report.measured)
    assert all(r.case.L != r.case.S and r.rejected == "ValueError: self-attention only" for r in report.rejected)
    assert "not supported by this kernel" in report.detail()
    assert kernel_probes.causal_alignment(k).startswith("not applicable")
    assert kernel_probes.scale_law(k, [8, 16, 32], [0]).exponent is not None


def test_gqa_is_drawn_for_a_kernel_that_takes_it_and_said_for_one_that_does_not():
    """A kernel that takes fewer key/value heads (sdpa: enable_gqa; hf: module.num_key_value_groups) is drawn GQA and
    MQA cases and holds; one that does not (SDPA called without enable_gqa) says so in ``unsupported`` and is
    drawn none; the wrong head-group mapping is shrunk to the smallest GQA case."""
    takes = {}
    for name in ("gqa", "hf_eager", "sdpa_wrapper"):
        k = kernels.resolve(f"examples.attention.{name}:attention")
        kernels.preflight(k)
        report = kernel_probes.exactness(k, cases=30)
        takes[name] = {r.case.kv_groups for r in report.measured}
        assert report.holds, report.detail()
        assert k.describe()["gqa"] == k.gqa and (k.gqa or kernels.GQA in k.unsupported)
    assert takes["gqa"] == takes["hf_eager"] == set(kernel_probes.KV_GROUPS) and takes["sdpa_wrapper"] == {1}
    bug = kernels.resolve("examples.attention.gqa_wrong_groups:attention")
    kernels.preflight(bug)
    assert kernel_probes.exactness(bug, cases=30).counterexample.startswith(
        "differs at B=1, H=4, H_kv=2, L=1, S=1, d_k=8, no mask, scale=None: max error")


def test_a_value_head_dim_other_than_d_k_is_drawn_where_taken():
    """d_v != d_k (MLA's 128 against 192) is drawn for a kernel that took it at pre-flight; the scale taken from d_v
    is exact at d_v = d_k and refuted at the smallest case with d_v != d_k."""
    k = kernels.resolve("examples.attention.sdpa_wrapper:attention")
    kernels.preflight(k)
    report = kernel_probes.exactness(k, cases=30)
    assert k.dv and report.holds and {r.case.d_v > 0 for r in report.measured} == {True, False}, report.detail()
    bug = kernels.resolve("examples.attention.scale_from_dv:attention")
    kernels.preflight(bug)
    assert kernel_probes.exactness(bug, cases=30, dv=False).holds
    assert kernel_probes.exactness(bug, cases=30).counterexample.startswith(
        "differs at B=1, H=1, L=1, S=2, d_k=8, d_v=4, no mask, scale=None: max error")


def test_a_self_attention_only_kernel_is_no_usage_error(user_pkg):
    proc = run_pytest(user_pkg, "--co", "-q", "--attention-path", str(user_pkg), "--attention", "userkern:self_only",
                      timeout=120)
    assert proc.returncode == 5 and "ERROR" not in proc.stderr, proc.stdout + proc.stderr   # 5: no tests there


# ---------------------------------------------------------------------------------------------- failing well
def test_a_kernel_that_raises_or_returns_nan_on_some_cells_is_recorded_there():
    """A head dim the kernel rejects and a shape where it returns NaN are recorded on those cases with the kernel's
    own message; the other cases are measured and judged."""
    def picky(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
        if query.shape[-1] == 256:
            raise ValueError("head dim 256 is not supported by this kernel")
        out = F.scaled_dot_product_attention(query, key, value, attn_mask=attn_mask, is_causal=is_causal, scale=scale)
        return out * float("nan") if query.shape[-2] >= 5 else out

    k = kernels.Kernel(fn=picky, name="picky", convention="sdpa")
    report = kernel_probes.exactness(k, cases=40)
    messages = {r.rejected for r in report.rejected}
    assert "ValueError: head dim 256 is not supported by this kernel" in messages
    assert "returned NaN or inf on inputs whose reference is finite" in messages
    assert report.measured and report.holds, report.detail()
    assert "not supported e.g. at" in report.detail()


def test_a_shrunk_counterexample_names_the_smallest_case():
    k = kernels.resolve("examples.attention.hardcoded_sqrt64:attention")
    report = kernel_probes.exactness(k, cases=40)
    assert report.counterexample.startswith("differs at B=1, H=1, L=1, S=2, d_k=8, no mask, scale=None: max error")
    again = kernel_probes.exactness(k, cases=40)
    assert again.counterexample == report.counterexample               # derandomised: the same run twice


def test_a_counterexample_drawn_at_a_tile_edge_is_shortened():
    """Hypothesis leaves a causal off-by-one at S = 63 (the tile-edge branch); ``shorten`` finds S = 3, the shortest
    where query 0 of one sees neither key 0 alone (top-left) nor every key (bottom-right)."""
    k = kernels.resolve("examples.attention.causal_off_by_one:attention")
    report = kernel_probes.exactness(k, cases=60, long_len=300)
    assert report.counterexample.startswith("differs at B=1, H=1, L=1, S=3, d_k=8, causal, scale=None"), \
        report.counterexample


# ---------------------------------------------------------------------------------------------- the model switch
def _mha(causal: bool, **overrides) -> MultiHeadAttention:
    torch.manual_seed(0)
    cfg = ModelConfig(d_model=32, n_heads=4, src_vocab=8, n_encoder_layers=0, n_decoder_layers=0, **overrides)
    return MultiHeadAttention(cfg, causal=causal).eval()


@pytest.mark.parametrize("name", ["sdpa_wrapper", "hf_eager"])
def test_the_model_switch_gives_the_built_in_numbers(name):
    """MultiHeadAttention with the SDPA wrapper (or the HF eager function) as its kernel: the same output as its own
    path, for self/cross attention, causal and padding masks, and under a scale fault (the fault changes the scale
    passed); a kernel returning weights fills the weights tap."""
    kernel = kernels.resolve(f"examples.attention.{name}:attention")
    g = torch.Generator().manual_seed(1)
    x, mem = torch.randn(2, 6, 32, generator=g), torch.randn(2, 5, 32, generator=g)
    pad = torch.tensor([[False] * 5, [False, False, False, True, True]])
    pad_self = torch.tensor([[False] * 6, [False] * 4 + [True] * 2])
    for causal, memory, kpm, fault in ((False, None, None, None), (True, None, None, None), (False, mem, pad, None),
                                       (True, None, pad_self, "no_scale"), (False, mem, pad, "scale_by_dk")):
        mha = _mha(causal)
        with torch.no_grad(), inject(fault):
            ours = mha(x, memory, key_padding_mask=kpm)
            with use_kernel(kernel):
                theirs = mha(x, memory, key_padding_mask=kpm)
                with capture(mha, "weights", "out") as cache:
                    mha(x, memory, key_padding_mask=kpm)
        torch.testing.assert_close(theirs, ours, atol=1e-6, rtol=1e-5)
        assert ("weights" in cache.keys()) == (name == "hf_eager") and "out" in cache.keys()
    assert active_kernel() is None


def test_additive_and_qk_norm_stay_ours():
    calls = []

    def spy(q, k, v, **kw):
        calls.append(1)
        return F.scaled_dot_product_attention(q, k, v), None

    x = torch.randn(1, 4, 32)
    with use_kernel(spy), torch.no_grad():
        _mha(False, score="additive")(x)
        _mha(False, qk_norm="layernorm")(x)
        assert not calls
        _mha(False)(x)
    assert calls == [1]


def test_a_config_kernel_is_that_models_own():
    """``ModelConfig(kernel=name)`` makes that model's attention call the registered kernel, whatever the session's;
    a model without one keeps its own (or the session's); a name nobody registered, or a kernel on a score it does
    not replace, is a ValueError naming the field."""
    from model.kernels import register_kernel

    calls = []

    def spy(q, k, v, **kw):
        calls.append("spy")
        return F.scaled_dot_product_attention(q, k, v), None

    def session(q, k, v, **kw):
        calls.append("session")
        return F.scaled_dot_product_attention(q, k, v), None

    register_kernel("test spy", spy)
    x = torch.randn(1, 4, 32)
    with torch.no_grad():
        _mha(False)(x)
        _mha(False, kernel="test spy")(x)
        assert calls == ["spy"]
        with use_kernel(session):
            _mha(False, kernel="test spy")(x)
            _mha(False)(x)
    assert calls == ["spy", "spy", "session"]
    with pytest.raises(ValueError, match="no kernel registered as 'nobody'"):
        _mha(False, kernel="nobody")
    with pytest.raises(ValueError, match="ModelConfig.kernel: replaces the dot product's"):
        ModelConfig(score="additive", kernel="test spy")


def test_two_kernels_never_share_a_sweep_run():
    """The sweep's memo keys on the config, whose ``kernel`` is the kernel's identity (name, convention, source
    hash): two kernels of one name but different source train their own runs, the same kernel again is memoised,
    and a session kernel (``--attention``) keeps a model without a config kernel from reusing a run made without it."""
    from harness.study.sweeps import attention_sweep, clear_sweep_cache

    def scaled(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
        return F.scaled_dot_product_attention(query, key, value, attn_mask=attn_mask, scale=scale)

    def doubled(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
        return F.scaled_dot_product_attention(query, key, value, attn_mask=attn_mask, scale=2 * scale)

    one, other = (kernels.Kernel(fn=f, name="user.attention:attention", convention="sdpa",
                                 source_sha256=kernels.source_hash(f)) for f in (scaled, doubled))
    assert one.identity != other.identity and "sha256:" in one.identity
    block = {"task": {"name": "delayed_copy", "d": 2, "vocab": 4, "n_out": 2},
              "model": {"d_model": 16, "n_heads": 1, "d_v": 16, "d_ff": 16},
              "train": {"steps": 2, "batch_size": 8, "eval_every": 0, "eval_size": 16, "num_threads": 1},
              "probe_size": 8, "test_size": 16}
    clear_sweep_cache()

    def cached(arms):
        return attention_sweep(arms, [4], block, [0]).set_index("arm")["cached"].to_dict()

    arms = {"reference": {}, "one": {"kernel": kernels.register(one)}, "other": {"kernel": kernels.register(other)}}
    assert cached(arms) == {"reference": False, "one": False, "other": False}
    assert cached(arms) == {"reference": True, "one": True, "other": True}
    with use_kernel(one):
        assert cached({"reference": {}}) == {"reference": False}
    clear_sweep_cache()


def test_a_kernel_that_raises_in_a_model_says_so_in_its_own_words():
    """``harness.trial.kernel.register``'s binding turns what the kernel raises inside a model into ``KernelRaised``
    with the kernel's own message (R1's training arm records it, unmeasured), never the harness's own error."""
    def picky(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
        raise ValueError("head dim 8 is not supported by this kernel\nsecond line")

    kernel = kernels.Kernel(fn=picky, name="user:picky", convention="sdpa")
    mha = _mha(False, kernel=kernels.register(kernel))
    with pytest.raises(kernels.KernelRaised, match="^user:picky raised ValueError: head dim 8 is not supported by "
                                                   "this kernel$"):
        mha(torch.randn(1, 4, 32))


def kernel_criteria_named(reason: str) -> set[str]:
    """The ``kernel_*`` criterion names a skip reason points to."""
    import re

    return set(re.findall(r"\bkernel_[a-z_]+", reason))


def declared_kernel_criteria() -> set[str]:
    """Every criterion name declared in a ``*CRITERIA`` dict of a claim module that judges a kernel."""
    import importlib

    from harness.profiles import KERNEL_TRIAL_CLAIMS

    names = set()
    for cid in KERNEL_TRIAL_CLAIMS:
        (path,) = (REPO / "claims").glob(f"test_{cid.lower()}_*.py")
        module = importlib.import_module(f"claims.{path.stem}")
        names |= {name for attr in dir(module) if attr.endswith("CRITERIA")
                  and isinstance(getattr(module, attr), dict) for name in getattr(module, attr)}
    return names


def test_every_claim_that_skips_a_kernel_says_why_and_names_criteria_that_exist():
    """Under --attention a claim module either judges the kernel or is skipped with its reason. Every explicit
    reason belongs to a claim that exists and is skipped (a reason left on a claim that now judges the kernel would
    say the opposite of what runs), and every criterion a reason points to (C3, C4: where their kernel-level part
    runs instead) is really declared by a claim that judges the kernel."""
    from harness.profiles import KERNEL_NOT_YET, KERNEL_TRIAL_CLAIMS

    ids = {p.name.split("_")[1].upper() for p in (REPO / "claims").glob("test_*.py")}
    assert set(KERNEL_TRIAL_CLAIMS) <= ids
    explicit = {cid: why for cid, why in KERNEL_NOT_YET.items() if cid != "*"}
    assert set(explicit) <= ids - set(KERNEL_TRIAL_CLAIMS), set(explicit) - (ids - set(KERNEL_TRIAL_CLAIMS))
    declared = declared_kernel_criteria()
    pointing = {cid: kernel_criteria_named(why) for cid, why in explicit.items() if kernel_criteria_named(why)}
    assert {"C3", "C4"} <= set(pointing), pointing
    for cid, named in pointing.items():
        assert named <= declared, (cid, named - declared)


def test_the_skip_reason_check_sees_a_reason_pointing_nowhere():
    """The check above can fail: a reason naming a criterion no kernel-judging claim declares is caught, and so is
    one that names a real one under a misspelling."""
    declared = declared_kernel_criteria()
    assert "kernel_trains_as_reference" in declared
    assert not kernel_criteria_named("its part runs in R1's kernel_trains_as_referance") <= declared
    assert not kernel_criteria_named("see kernel_made_up_criterion") <= declared


def test_what_real_kernels_do_is_drawn_where_the_kernel_takes_it():
    """Issue 39.8: causal with L > S and decode (L = 1, long S) for every kernel; a sliding window, a logit soft-cap
    and transformers' mask-less is_causal path only for a kernel that takes them at pre-flight (it runs with the
    keyword and its output moves); what it does not take is recorded in ``unsupported``, never a failure."""
    from harness.trial import kernel_probes

    def drawn(name):
        k = kernels.resolve(name)
        kernels.preflight(k)
        report = kernel_probes.exactness(k, cases=60, d_ks=[8, 64], max_len=9, long_len=300)
        cases = [r.case for r in report.measured]
        return k, report, cases

    k, report, cases = drawn("examples.attention.sdpa_wrapper:attention")
    assert report.holds and not (k.window or k.softcap or k.hf_is_causal)
    assert {kernels.WINDOW, kernels.SOFTCAP} <= set(k.unsupported) and kernels.HF_IS_CAUSAL not in k.unsupported
    assert any(c.mask == "causal" and c.L > c.S for c in cases) and any(c.L == 1 and c.S > 9 for c in cases)
    assert not any(c.window or c.softcap or c.mask == "is_causal" for c in cases)
    k, report, cases = drawn("examples.attention.sliding_window:attention")
    assert report.holds and k.window and any(c.window and c.window < c.S for c in cases)
    k, report, cases = drawn("examples.attention.softcap:attention")
    assert report.holds and k.softcap and any(c.softcap for c in cases)
    k, report, cases = drawn("examples.attention.hf_eager:attention")    # eager reads the mask it is given only
    assert report.holds and k.window and "ignored" in k.unsupported[kernels.HF_IS_CAUSAL]


def test_the_mask_less_is_causal_path_is_judged_where_an_hf_kernel_takes_it():
    """An hf kernel that reads module.is_causal when no mask is passed (transformers' sdpa_attention_forward) is
    drawn that path, and a kernel that reads it wrong is refuted there."""
    import math

    import torch

    from harness.trial import kernel_probes

    def reads_is_causal(module, query, key, value, attention_mask, scaling=None, dropout=0.0, is_causal=None,
                        **kwargs):
        causal = attention_mask is None and bool(is_causal if is_causal is not None else module.is_causal)
        out = torch.nn.functional.scaled_dot_product_attention(query, key, value, attn_mask=attention_mask,
                                                               is_causal=causal and query.shape[2] > 1, scale=scaling)
        return out.transpose(1, 2), None

    def off_by_one(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
        if attention_mask is None and module.is_causal:     # the diagonal left out of the causal mask
            L, S = query.shape[-2], key.shape[-2]
            attention_mask = torch.zeros(L, S, dtype=query.dtype).masked_fill(
                torch.ones(L, S, dtype=torch.bool).tril(-1).logical_not(), -math.inf)
            attention_mask[:, 0] = 0
        return reads_is_causal(module, query, key, value, attention_mask, scaling)

    for fn, holds in ((reads_is_causal, True), (off_by_one, False)):
        k = kernels.Kernel(fn=fn, name=fn.__name__, convention="hf")
        kernels.preflight(k)
        report = kernel_probes.exactness(k, cases=60, d_ks=[8, 64], max_len=9, long_len=300)
        assert k.hf_is_causal and report.holds == holds, report.detail()
        assert holds or "is_causal" in report.counterexample, report.counterexample
