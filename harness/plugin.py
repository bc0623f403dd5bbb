"""The suite's pytest plugin: options, fixtures, claim outcomes, results.json, the report and the gate (issue 4).

A ``pytest11`` entry point named ``harness.plugin``, so its options exist whatever the rootdir; an uninstalled clone
registers it through the root ``conftest.py`` (pytest dedups plugins by that name). ``--attention pkg.module:callable`` puts a user's kernel on trial
(issue 27, ``harness.trial.kernel``): M0, R1, R2, R3 judge it, and the model's dot-product attention calls it. A *claim test* is a test that uses the ``evidence`` fixture
(its id comes from ``ev.claim(...)`` or ``pytest.mark.claim("C4")``). For each claim test the plugin:

1. ships the part it recorded, unjudged, in ``report.user_properties`` (JSON), which is how a record travels
   from an xdist worker to the controller; ``pytest_runtest_logreport`` collects records on whichever process
   writes the output, so a serial and a ``-n 2`` run merge the same records the same way;
2. there judges the claim once, merged from its parts so far (``harness.record.verdict``) and, with
   ``--baseline``, compares it against the baseline (``harness.record.baseline``);
3. sets the pytest outcome from that record: without a baseline a claim passes iff supported (a question unless
   it errored); with one, it fails iff it regressed.

At session end (also after failures, crashes, Ctrl-C and SIGTERM, then ``complete: false``) the controller
writes ``<report-dir>/results.json`` and ``index.html`` atomically, and ``--update-baseline`` writes
the baseline.

This module is the pytest11 entry only: the options (``pytest_addoption``), the configure/unconfigure hooks, the
xdist scheduler hook and the fixtures. The options are validated into ``harness.settings.Settings``; the per-run
state and the hooks above (outcome, records, xdist shipping, results.json, the gate, the terminal summary,
SIGTERM) are ``harness.session.ClaimsSession``, which ``pytest_configure`` registers.
"""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from harness.record import baseline as baseline_gate
from harness import fp_path
from harness.record.evidence import Evidence
from harness.profiles import PROFILE_NAMES, Profile, get_profile, wall_budget
from harness.schedule import PlannedGroupScheduling
from harness.session import (EVIDENCE_KEY, STATE_KEY, ClaimsSession, Progress, claim_marker_id,
                             sigterm_as_interrupt)
from harness.session.replicate import ReplicateRun
from harness.settings import (DEVICE_CHOICES, DRY_RUN_SEEDS, DRY_RUN_STEPS, SEED_STRIDE, check_path_options,
                              choose_fp_path, derive_seeds, faults_module, load_kernel, load_model, parse_settings,
                              resolve_device, worker_threads)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("attention-claims", "attention-claims: claim verification for NOTE-011")
    group.addoption("--profile", default=None, metavar="NAME",
                    help=f"budget profile: {', '.join(PROFILE_NAMES)} (default smoke)")
    group.addoption("--device", default="auto", metavar="DEV",
                    help=f"{DEVICE_CHOICES}; auto takes CUDA where available, and each xdist worker "
                         "its own GPU (gwN -> cuda:N)")
    group.addoption("--seeds", default=None, metavar="N", help="number of seeds, overriding the profile")
    group.addoption("--master-seed", default=None, metavar="N",
                    help=f"derive the seeds from N (seeds N*{SEED_STRIDE} + 0..n-1; default 0, and at --profile "
                         "standard the criteria lock's: reports/criteria.lock, issue 47)")
    group.addoption("--replicate", default=None, metavar="K",
                    help="run replicate K of the pre-registered replication (issue 64; docs/replication.md): the "
                         "standard profile unchanged at the criteria lock's K-th replicate seed; its record goes to "
                         "<report-dir>/replicates/<lock>/ and its start and end to <report-dir>/runlog.jsonl")
    group.addoption("--report-dir", default=None, metavar="PATH",
                    help="where results.json, index.html and figures go (default reports/)")
    group.addoption("--baseline", default=None, metavar="PATH",
                    help="gate on regressions against this baseline results file (e.g. reports/baseline.json)")
    group.addoption("--update-baseline", action="store_true", default=False,
                    help="merge this run's claims into the baseline (--baseline PATH, or "
                         "<report-dir>/baseline.json) instead of gating; claims not run are kept")
    group.addoption("--inject-fault", default=None, metavar="NAME",
                    help="break the model with one named fault from model/faults.py for the session (issue 10)")
    group.addoption("--fast", action="store_true", default=False,
                    help="run each claim's fast criteria only, at smoke budgets (issue 10)")
    group.addoption("--dry-run", action="store_true", default=False,
                    help="build every config of the profile at its real sizes and train each for a few steps on "
                         f"{DRY_RUN_SEEDS} seeds: every code path runs, no verdict means anything (issue 18)")
    group.addoption("--native-fp", action="store_true", default=False,
                    help="compute on the CPU's native floating-point path (e.g. AVX-512) instead of the pinned "
                         f"{fp_path.PINNED} one: faster on some boxes, but the numbers then differ from another "
                         "box's (harness/fp_path.py)")
    group.addoption("--attention", default=None, metavar="PKG.MODULE:CALLABLE",
                    help="put this attention kernel on trial (issue 27; docs/attention-trial.md): M0, R1, R2 and R3 "
                         "probe it, and the model's dot-product attention calls it")
    group.addoption("--attention-path", default=None, metavar="DIR",
                    help="a directory to prepend to sys.path before resolving --attention")
    group.addoption("--attention-factory", action="store_true", default=False,
                    help="--attention names a factory: call it with no arguments to build the kernel (as uvicorn's "
                         "--factory)")
    group.addoption("--attention-convention", default=None, metavar="NAME",
                    help="sdpa or hf (default: read off the kernel's signature)")
    group.addoption("--attention-dtypes", default="float32", metavar="LIST",
                    help="dtypes the kernel is probed in, comma-separated (default float32; e.g. float32,bfloat16)")
    group.addoption("--model", default=None, metavar="PKG.MODULE:BUILDER",
                    help="put this model on trial (issue 40; docs/model-trial.md): build_model(**overrides) -> "
                         "nn.Module; M0, R1, R2, C3 and C4 probe its own attention, layer by layer")
    group.addoption("--model-config", default=None, metavar="CONFIG",
                    help="a transformers config class (LlamaConfig) or a config.json to build the model on trial from")
    group.addoption("--model-override", action="append", default=None, metavar="KEY=VALUE",
                    help="passed to the builder (or set on the config); repeatable")
    group.addoption("--model-path", default=None, metavar="DIR",
                    help="a directory to prepend to sys.path before resolving --model")
    group.addoption("--model-weights", default=None, metavar="PATH",
                    help="trained weights for the model (a save_pretrained folder, a .safetensors file or a state "
                         "dict): Q3 reads them per layer beside the init (issue 49; docs/checkpoint-trial.md); "
                         "several saves of one run (a comma-separated list, a quoted glob, or a folder of "
                         "checkpoint-<step> saves) are read in step order and drawn over the steps")
    group.addoption("--model-init-weights", default=None, metavar="PATH",
                    help="the run's own saved init, read as the 'at init' half in place of a random draw (loaded as "
                         "--model-weights is)")
    group.addoption("--model-weights-allow-unused", action="store_true", default=False,
                    help="read --model-weights even where it holds tensors the built model does not use (other than "
                         "an output head's), leaving them out; without it they are a usage error")
    group.addoption("--probe-tokens", default=None, metavar="FILE",
                    help="the checkpoint's probe inputs: token ids (.npy, or one sequence a line)")
    group.addoption("--probe-text", default=None, metavar="FILE",
                    help="the checkpoint's probe inputs: text, tokenised with the tokenizer beside the weights")


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    """A path option that moved pytest's rootdir is refused before any conftest of the wrong rootdir is imported."""
    check_path_options(early_config)


def pytest_configure(config: pytest.Config) -> None:
    check_path_options(config)  # again: a clone without the entry point registers this plugin from its conftest
    config.addinivalue_line("markers", "claim(id): a claim-verification test for the note's item <id>")
    choose_fp_path(config)  # first: before any torch operation
    os.environ["MPLBACKEND"] = "Agg"  # plots are rendered headless, on every machine (issue 4)
    settings = parse_settings(config)
    baseline = None
    if settings.gate_active:
        try:
            baseline = baseline_gate.load_baseline(settings.baseline)
        except baseline_gate.BaselineError as exc:
            raise pytest.UsageError(str(exc)) from None
    if settings.inject_fault:
        faults_module().set_fault(settings.inject_fault)
    state = ClaimsSession(config, settings, baseline)
    state.kernel = load_kernel(settings, state.worker_id)
    state.model_trial = load_model(settings)
    config.stash[STATE_KEY] = state
    config.pluginmanager.register(state, "attention_claims_session")
    if settings.replicate is not None and state.worker_id is None:   # the process that writes the record logs it
        config.pluginmanager.register(ReplicateRun(state), "attention_claims_replicate")
    state.previous_sigterm = sigterm_as_interrupt()
    if state.worker_id is not None:
        import torch

        torch.set_num_threads(worker_threads(os.cpu_count(), getattr(config, "workerinput", {})))


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(STATE_KEY, None)
    if state is not None and state.settings.inject_fault:
        faults_module().set_fault(None)  # an in-process rerun must not inherit the fault
    if state is not None and state.kernel is not None:
        from model.kernels import set_kernel

        set_kernel(None)  # an in-process rerun must not inherit the kernel either
    if state is not None and state.previous_sigterm is not None:
        signal.signal(signal.SIGTERM, state.previous_sigterm)
    if state is not None and state.staging is not None:
        import shutil

        shutil.rmtree(state.staging, ignore_errors=True)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """After the controller wrote results.json (``WriteResults``), the earlier run's figures go (issue 65): a report
    folder holds one run, a failed one included."""
    state = session.config.stash.get(STATE_KEY, None)
    if state is None or state.worker_id is not None or state.results is None:
        return
    from harness.session.prune import prune_figures

    prune_figures(state.settings.report_dir, state.results)


def _state(config: pytest.Config) -> "ClaimsSession":
    return config.stash[STATE_KEY]


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup`` follows a plan from the profile's wall budgets (``harness.schedule``), so that no worker
    hoards units behind a long one while the other runs dry; other modes, and --fast runs (whose times the budgets
    are not), keep xdist's own scheduler."""
    s = _state(config).settings
    if config.getvalue("dist") != "loadgroup" or s.fast:
        return None
    return PlannedGroupScheduling(config, log, lambda cid: wall_budget(s.profile, cid, dry=s.dry_run,
                                                                       attention=bool(s.attention),
                                                                       model=bool(s.model or s.model_config)))


# -- fixtures ---------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def report_dir(pytestconfig: pytest.Config) -> Path:
    """Where a claim writes its files (figures, benchmark JSON): ``--report-dir``, or on an xdist worker a local
    staging folder whose files travel back to the controller with the claim's record (issue 18: a worker may be
    another machine, whose disk the controller cannot see)."""
    state = _state(pytestconfig)
    path = state.output_dir
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="session")
def profile(pytestconfig: pytest.Config) -> Profile:
    """The budget profile (``--profile``; ``--seeds`` overrides its seed count)."""
    s = _state(pytestconfig).settings
    p = get_profile(s.profile, n_seeds=s.n_seeds)
    return p.dry_run(steps=DRY_RUN_STEPS, seeds=DRY_RUN_SEEDS) if s.dry_run else p


@pytest.fixture(scope="session")
def device(pytestconfig: pytest.Config):
    """The torch.device this process trains on (each xdist worker its own GPU where there are several)."""
    import torch

    state = _state(pytestconfig)
    return torch.device(resolve_device(state.settings.device, state.worker_id))


@pytest.fixture
def seeds(request: pytest.FixtureRequest, profile: Profile) -> list[int]:
    """Seeds for this claim: ``--seeds``, else (under ``--fast``) the claim's profile block ``fast_seeds``, else its
    ``seeds``, else the profile's count; offset by ``--master-seed``. A trial's claims take the trial's block instead
    of their own: ``model_trial`` under ``--model``, ``kernel_trial`` under ``--attention``."""
    state = _state(request.config)
    s = state.settings
    block = trial_block(state) or claim_marker_id(request.node)
    n = s.n_seeds if s.n_seeds is not None else profile.seed_count(block, s.fast)
    return derive_seeds(s.master_seed, min(n, DRY_RUN_SEEDS) if s.dry_run else n)


def trial_block(state: "ClaimsSession") -> str | None:
    """The profile block whose seed count a trial's claims run at: ``model_trial`` (``--model``), ``kernel_trial``
    (``--attention``), None outside a trial (the claims skipped under a trial never ask)."""
    if state.model_trial is not None:
        return "model_trial"
    if state.kernel is not None or state.settings.attention:
        return "kernel_trial"
    return None


@pytest.fixture
def claim_threads(request: pytest.FixtureRequest, profile: Profile):
    """The claim test runs at its profile block's ``threads`` torch threads (default 1: on tiny models a second
    thread only contends), the worker's count again afterwards. A module asks for it by naming it."""
    from harness.train.loop import torch_threads

    cid = claim_marker_id(request.node)
    with torch_threads(profile.blocks.get(cid, {}).get("threads", 1)):
        yield


@pytest.fixture
def fast(pytestconfig: pytest.Config) -> bool:
    """True under ``--fast``: declare and run only the fast criteria (issue 10)."""
    return _state(pytestconfig).settings.fast


@pytest.fixture(scope="session")
def attention(pytestconfig: pytest.Config):
    """The kernel under trial (``harness.trial.kernel.Kernel``, from ``--attention``), or None: the model's own
    attention."""
    return _state(pytestconfig).kernel


@pytest.fixture
def model_on_trial(pytestconfig: pytest.Config):
    """The user's model under trial (``harness.trial.model.ModelUnderTrial``, from ``--model``), or None."""
    return _state(pytestconfig).model_trial


@pytest.fixture
def progress(request: pytest.FixtureRequest) -> Callable[..., None]:
    """``progress(msg, force=False)``: a live line prefixed with the claim id, shown without ``-s``."""
    return Progress(request.config, request.node)


@pytest.fixture
def evidence(request: pytest.FixtureRequest, report_dir: Path) -> Evidence:
    """The claim's evidence record (docs/ARCHITECTURE.md, 'The evidence contract')."""
    state = _state(request.config)
    ev = Evidence(report_dir, claim_id=claim_marker_id(request.node), fast=state.settings.fast)
    request.node.stash[EVIDENCE_KEY] = ev
    state.in_flight[request.node.nodeid] = (request.node, ev, time.monotonic())
    return ev
