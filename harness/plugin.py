"""The suite's pytest plugin: options, fixtures, claim outcomes, results.json, the report and the gate (issue 4).

A ``pytest11`` entry point named ``harness.plugin``, so its options exist whatever the rootdir; an uninstalled clone
registers it through the root ``conftest.py`` (pytest dedups plugins by that name). ``--attention pkg.module:callable`` puts a user's kernel on trial
(issue 27, ``harness.kernel``): M0, R1, R2, R3 judge it, and the model's dot-product attention calls it. A *claim test* is a test that uses the ``evidence`` fixture
(its id comes from ``ev.claim(...)`` or ``pytest.mark.claim("C4")``). For each claim test the plugin:

1. judges the recorded criteria (``harness.record.verdict``) and, with ``--baseline``, compares against the
   baseline (``harness.record.baseline``);
2. sets the pytest outcome: without a baseline a claim passes iff supported (a question unless it
   errored); with one, it fails iff it regressed;
3. ships the claim record in ``report.user_properties`` (JSON), which is how a record travels from an
   xdist worker to the controller; ``pytest_runtest_logreport`` collects records on whichever process
   writes the output, so a serial and a ``-n 2`` run merge the same records the same way.

At session end (also after failures, crashes, Ctrl-C and SIGTERM, then ``complete: false``) the controller
writes ``<report-dir>/results.json`` and ``index.html`` atomically, and ``--update-baseline`` writes
the baseline.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import importlib
import importlib.metadata
import json
import os
import platform
import re
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest

from harness.record import baseline as baseline_gate
from harness import fp_path
from harness.record import results as results_io
from harness.record import verdict as verdicts
from harness.record.evidence import Evidence
from harness.profiles import KERNEL_NOT_YET, KERNEL_TRIAL_CLAIMS, PROFILE_NAMES, Profile, get_profile, wall_budget
from harness.schedule import PlannedGroupScheduling, first_test_carries

PART_PROPERTY = "attention_claims.part"
SKIP_PROPERTY = "attention_claims.skipped"
DEVICE_CHOICES = "auto, cpu, cuda, cuda:N"
SEED_STRIDE = 1000  # master seed m uses seeds m*1000 + 0..n-1: disjoint sets for different master seeds
MAX_SEEDS = SEED_STRIDE
DRY_RUN_STEPS = 2   # --dry-run: training steps of every run (issue 18: every path, at real sizes, in minutes)
DRY_RUN_SEEDS = 2   # and seeds: the fewest a t interval can be computed on
PROGRESS_BURST, PROGRESS_PER_S = 5, 2.0  # progress lines: bursts of 5, then 2 a second
_DEVICE_RE = re.compile(r"auto|cpu|cuda(?::(\d+))?")

EVIDENCE_KEY = pytest.StashKey[Evidence]()
ORDER_KEY = pytest.StashKey[int]()
SETUP_S_KEY = pytest.StashKey[float]()
STATE_KEY = pytest.StashKey["ClaimsSession"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("attention-claims", "attention-claims: claim verification for NOTE-011")
    group.addoption("--profile", default=None, metavar="NAME",
                    help=f"budget profile: {', '.join(PROFILE_NAMES)} (default smoke)")
    group.addoption("--device", default="auto", metavar="DEV",
                    help=f"{DEVICE_CHOICES}; auto takes CUDA where available, and each xdist worker "
                         "its own GPU (gwN -> cuda:N)")
    group.addoption("--seeds", default=None, metavar="N", help="number of seeds, overriding the profile")
    group.addoption("--master-seed", default="0", metavar="N",
                    help=f"derive the seeds from N (seeds N*{SEED_STRIDE} + 0..n-1; default 0)")
    group.addoption("--report-dir", default=None, metavar="PATH",
                    help="where results.json, index.html and figures go (default reports/)")
    group.addoption("--baseline", default=None, metavar="PATH",
                    help="gate on regressions against this baseline results file (e.g. reports/baseline.json)")
    group.addoption("--update-baseline", action="store_true", default=False,
                    help="write this run's results as the baseline (to --baseline PATH, or "
                         "<report-dir>/baseline.json) instead of gating")
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


@dataclass(frozen=True)
class Settings:
    profile: str
    device: str
    n_seeds: int | None
    master_seed: int
    report_dir: Path
    baseline: Path | None
    update_baseline: bool
    inject_fault: str | None
    fast: bool
    dry_run: bool = False
    attention: str | None = None            # --attention pkg.module:callable (issue 27)
    attention_path: str | None = None
    attention_factory: bool = False
    attention_convention: str | None = None
    attention_dtypes: str = "float32"

    @property
    def gate_active(self) -> bool:
        return self.baseline is not None and not self.update_baseline

    @property
    def baseline_target(self) -> Path:
        return self.baseline or self.report_dir / "baseline.json"


def _int_option(name: str, raw: str, minimum: int, maximum: int | None = None) -> int:
    try:
        value = int(str(raw))
    except ValueError:
        value = None
    if value is None or value < minimum or (maximum is not None and value > maximum):
        bound = f"between {minimum} and {maximum}" if maximum is not None else f"at least {minimum}"
        raise pytest.UsageError(f"{name} {raw!r} is not valid; it must be an integer {bound}")
    return value


def validate_device(spec: str) -> str:
    """Check --device; a CUDA device on a machine without CUDA is a usage error that says so."""
    m = _DEVICE_RE.fullmatch(spec)
    if not m:
        raise pytest.UsageError(f"--device {spec!r} is not valid; valid choices: {DEVICE_CHOICES}")
    if spec.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            build = "a CPU-only torch build" if torch.version.cuda is None else "no GPU visible"
            raise pytest.UsageError(f"--device {spec}: CUDA is not available on this machine (torch "
                                    f"{torch.__version__}, {build}); use --device cpu or --device auto")
        if m.group(1) is not None and int(m.group(1)) >= torch.cuda.device_count():
            raise pytest.UsageError(f"--device {spec}: only {torch.cuda.device_count()} CUDA device(s) "
                                    f"visible (cuda:0 to cuda:{torch.cuda.device_count() - 1})")
    return spec


def _faults_module():
    """model/faults.py, imported only when --inject-fault is used."""
    try:
        return importlib.import_module("model.faults")
    except ImportError as exc:
        raise pytest.UsageError(f"--inject-fault needs model/faults.py, which cannot be imported: {exc}") from None


def parse_settings(config: pytest.Config) -> Settings:
    """Every option checked up front: a bad value is a usage error (exit 4) naming the valid choices."""
    opt = config.option
    fast = bool(opt.fast)
    profile = opt.profile or "smoke"
    if profile not in PROFILE_NAMES:
        raise pytest.UsageError(f"--profile {profile!r} is not valid; valid choices: {', '.join(PROFILE_NAMES)}")
    if fast and profile != "smoke":
        raise pytest.UsageError(f"--fast runs at smoke budgets; it cannot be combined with --profile {profile}")
    dry_run = bool(opt.dry_run)
    for flag, used in (("--fast", fast), ("--baseline", opt.baseline), ("--update-baseline", opt.update_baseline)):
        if dry_run and used:
            raise pytest.UsageError(f"--dry-run cannot be combined with {flag}: a dry run decides nothing to gate")
    device = validate_device(str(opt.device))
    n_seeds = None if opt.seeds is None else _int_option("--seeds", opt.seeds, 1, MAX_SEEDS)
    master_seed = _int_option("--master-seed", opt.master_seed, 0, 10**6)
    invocation_dir = Path(config.invocation_params.dir)
    report_dir = (invocation_dir / opt.report_dir) if opt.report_dir else (config.rootpath / "reports")
    if report_dir.exists() and not report_dir.is_dir():
        raise pytest.UsageError(f"--report-dir {report_dir} exists and is not a directory")
    if not hasattr(config, "workerinput"):      # the controller writes there: find out now, not after training
        problem = _unwritable(report_dir)
        if problem:
            raise pytest.UsageError(f"--report-dir {report_dir} is not writable ({problem})")
    baseline = (invocation_dir / opt.baseline) if opt.baseline else None
    fault = opt.inject_fault
    if fault is not None:
        faults = _faults_module()
        if fault not in faults.FAULTS:
            raise pytest.UsageError(f"--inject-fault {fault!r} is not a known fault; valid choices: "
                                    f"{', '.join(faults.FAULTS)}")
    return Settings(profile=profile, device=device, n_seeds=n_seeds, master_seed=master_seed,
                    report_dir=report_dir.resolve(), baseline=baseline.resolve() if baseline else None,
                    update_baseline=bool(opt.update_baseline), inject_fault=fault, fast=fast, dry_run=dry_run,
                    attention=getattr(opt, "attention", None), attention_path=getattr(opt, "attention_path", None),
                    attention_factory=bool(getattr(opt, "attention_factory", False)),
                    attention_convention=getattr(opt, "attention_convention", None),
                    attention_dtypes=getattr(opt, "attention_dtypes", "float32") or "float32")


def _unwritable(path: Path) -> str | None:
    """Why ``path`` cannot hold the report (None when it can), without creating it (a run with no claim test
    leaves the report dir alone): the folder, or its nearest existing ancestor, must be a writable folder."""
    probe = path
    while not probe.exists():
        if probe.parent == probe:
            return "no existing parent folder"
        probe = probe.parent
    if not probe.is_dir():
        return f"{probe} is not a directory"
    import tempfile

    try:                        # a real probe (root passes os.access everywhere, /proc included), removed at once
        os.rmdir(tempfile.mkdtemp(prefix=".write-probe-", dir=probe))
    except OSError as exc:
        return f"cannot create anything in {probe}: {exc.strerror or type(exc).__name__}"
    return None


def longest_first(items: list[pytest.Item], expected_s: Callable[[str], float | None]) -> list[pytest.Item]:
    """Claim items in the order of their expected wall time, longest first (issue 18): xdist hands the next unit to
    whichever worker is free, so the longest units must start first or one of them ends the run alone (the
    smallest-first tail balances the two workers). An ``xdist_group`` is one unit: its items keep their order and
    count their summed time; a claim's time is its first test's (``harness.schedule.first_test_carries``). Unit
    tests and claims without a budget keep their places after the budgeted ones."""
    def unit(item: pytest.Item) -> str:
        group = item.get_closest_marker("xdist_group")
        if group is not None:
            return "group:" + str(group.args[0] if group.args else group.kwargs.get("name", "default"))
        return item.nodeid

    claims = [_claim_marker_id(item) for item in items]
    totals: dict[str, float] = {}
    for item, t in zip(items, first_test_carries(claims, expected_s)):
        if t is not None:   # a claim's time is its first test's (C1's corpus test skips outside full)
            totals[unit(item)] = totals.get(unit(item), 0.0) + t
    first_seen = {u: i for i, u in reversed(list(enumerate(unit(it) for it in items)))}
    return sorted(items, key=lambda it: (-totals.get(unit(it), -1.0), first_seen[unit(it)]))


def derive_seeds(master_seed: int, n: int) -> list[int]:
    """The seeds of a run: readable (master 0 gives 0, 1, 2, ...), and disjoint across master seeds."""
    return [master_seed * SEED_STRIDE + i for i in range(n)]


def pick_device(spec: str, worker_id: str | None, cuda_available: bool, n_gpus: int) -> str:
    """auto/cuda -> a concrete device; under xdist, worker gwN takes cuda:N (mod the GPU count)."""
    if spec == "cpu" or (spec == "auto" and not cuda_available):
        return "cpu"
    if spec in ("auto", "cuda"):
        index = int(worker_id[2:]) if worker_id and worker_id[2:].isdigit() else 0
        return f"cuda:{index % max(1, n_gpus)}"
    return spec


def resolve_device(spec: str, worker_id: str | None = None) -> str:
    """``pick_device`` on this machine's CUDA devices."""
    if spec == "cpu":
        return "cpu"
    import torch

    available = torch.cuda.is_available()
    return pick_device(spec, worker_id, available, torch.cuda.device_count() if available else 0)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "claim(id): a claim-verification test for the note's item <id>")
    if config.getoption("native_fp", False):
        fp_path.unpin()  # before any torch operation: ATen reads its path once, at the first
    os.environ["MPLBACKEND"] = "Agg"  # plots are rendered headless, on every machine (issue 4)
    settings = parse_settings(config)
    baseline = None
    if settings.gate_active:
        try:
            baseline = baseline_gate.load_baseline(settings.baseline)
        except baseline_gate.BaselineError as exc:
            raise pytest.UsageError(str(exc)) from None
    if settings.inject_fault:
        _faults_module().set_fault(settings.inject_fault)
    state = ClaimsSession(config, settings, baseline)
    state.kernel = load_kernel(settings, state.worker_id)
    config.stash[STATE_KEY] = state
    config.pluginmanager.register(state, "attention_claims_session")
    state.previous_sigterm = _sigterm_as_interrupt()
    if state.worker_id is not None:
        import torch

        torch.set_num_threads(worker_threads(os.cpu_count(), getattr(config, "workerinput", {})))


def load_kernel(settings: Settings, worker_id: str | None = None):
    """--attention resolved and called once on a tiny input (``harness.kernel.preflight``), then set as the model's
    kernel for the session (``model.kernels``); a user's mistake is a usage error (exit 4, one line). None without
    --attention."""
    if not settings.attention:
        for flag, used in (("--attention-path", settings.attention_path),
                           ("--attention-factory", settings.attention_factory),
                           ("--attention-convention", settings.attention_convention)):
            if used:
                raise pytest.UsageError(f"{flag} needs --attention pkg.module:callable")
        return None
    from harness import kernel as kernels
    from model.kernels import set_kernel

    try:
        kernel = kernels.resolve(settings.attention, path=settings.attention_path,
                                 factory=settings.attention_factory, convention=settings.attention_convention,
                                 dtypes=settings.attention_dtypes)
        kernels.preflight(kernel, resolve_device(settings.device, worker_id))
    except kernels.KernelError as exc:
        raise pytest.UsageError(str(exc)) from None
    set_kernel(kernel)
    return kernel


def worker_threads(cpu_count: int | None, workerinput: dict[str, Any]) -> int:
    """Torch threads for one xdist worker: the cores shared out between the workers (at least 1), so that
    ``-n 2`` on a 2-core machine does not run 2 x 2 threads that only contend. A module's own
    ``torch_threads(...)`` still applies inside it."""
    workers = int(workerinput.get("workercount", 1) or 1)
    return max(1, (cpu_count or 1) // max(1, workers))


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt(f"received signal {signal.Signals(signum).name}")


def _sigterm_as_interrupt():
    """Make SIGTERM (``timeout``, a CI runner cancelling a job, ``kill``) take Ctrl-C's path, so a long run
    killed that way still writes results.json, marked incomplete (issue 4). Only where SIGTERM still has its
    default action and only in the main thread; returns the handler to put back, or None."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return None  # somebody (xdist, a runner) handles it already: leave theirs
    signal.signal(signal.SIGTERM, _raise_interrupt)
    return signal.SIG_DFL


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(STATE_KEY, None)
    if state is not None and state.settings.inject_fault:
        _faults_module().set_fault(None)  # an in-process rerun must not inherit the fault
    if state is not None and state.kernel is not None:
        from model.kernels import set_kernel

        set_kernel(None)  # an in-process rerun must not inherit the kernel either
    if state is not None and state.previous_sigterm is not None:
        signal.signal(signal.SIGTERM, state.previous_sigterm)
    if state is not None and state.staging is not None:
        import shutil

        shutil.rmtree(state.staging, ignore_errors=True)


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
                                                                       attention=bool(s.attention)))


def _claim_marker_id(item: pytest.Item) -> str | None:
    marker = item.get_closest_marker("claim")
    if marker is None:
        return None
    if len(marker.args) != 1 or not isinstance(marker.args[0], str):
        raise pytest.UsageError(f"{item.nodeid}: use pytest.mark.claim('C4') with one claim id")
    return marker.args[0]


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
    ``seeds``, else the profile's count; offset by ``--master-seed``."""
    s = _state(request.config).settings
    n = s.n_seeds if s.n_seeds is not None else profile.seed_count(_claim_marker_id(request.node), s.fast)
    return derive_seeds(s.master_seed, min(n, DRY_RUN_SEEDS) if s.dry_run else n)


@pytest.fixture
def fast(pytestconfig: pytest.Config) -> bool:
    """True under ``--fast``: declare and run only the fast criteria (issue 10)."""
    return _state(pytestconfig).settings.fast


@pytest.fixture(scope="session")
def attention(pytestconfig: pytest.Config):
    """The kernel under trial (``harness.kernel.Kernel``, from ``--attention``), or None: the model's own attention."""
    return _state(pytestconfig).kernel


@pytest.fixture
def progress(request: pytest.FixtureRequest) -> Callable[..., None]:
    """``progress(msg, force=False)``: a live line prefixed with the claim id, shown without ``-s``."""
    return Progress(request.config, request.node)


@pytest.fixture
def evidence(request: pytest.FixtureRequest, report_dir: Path) -> Evidence:
    """The claim's evidence record (docs/ARCHITECTURE.md, 'The evidence API')."""
    state = _state(request.config)
    ev = Evidence(report_dir, claim_id=_claim_marker_id(request.node), fast=state.settings.fast)
    request.node.stash[EVIDENCE_KEY] = ev
    state.in_flight[request.node.nodeid] = (request.node, ev, time.monotonic())
    return ev


class Progress:
    """Live progress lines: capture suspended, written through the terminal (stderr on xdist workers).

    Rate-limited by a token bucket (bursts of PROGRESS_BURST lines, then PROGRESS_PER_S a second), so an
    occasional "config X, seed 3" line always shows while a per-step caller cannot flood the terminal;
    ``force=True`` bypasses it. A line after dropped ones says how many were dropped.
    """

    def __init__(self, config: pytest.Config, item: pytest.Item) -> None:
        self.config, self.item = config, item
        self._tokens, self._last, self._dropped = float(PROGRESS_BURST), time.monotonic(), 0

    def _prefix(self) -> str:
        ev = self.item.stash.get(EVIDENCE_KEY, None)
        cid = (ev.id if ev is not None else None) or _claim_marker_id(self.item) or self.item.name
        return f"[{cid}]"

    def __call__(self, msg: str, force: bool = False) -> None:
        now = time.monotonic()
        self._tokens = min(float(PROGRESS_BURST), self._tokens + (now - self._last) * PROGRESS_PER_S)
        self._last = now
        if self._tokens < 1.0 and not force:
            self._dropped += 1
            return
        self._tokens = max(0.0, self._tokens - 1.0)
        dropped, self._dropped = self._dropped, 0
        line = f"{self._prefix()} {msg}" + (f"  (+{dropped} lines not shown)" if dropped else "")
        capman = self.config.pluginmanager.getplugin("capturemanager")
        ctx = capman.global_and_fixture_disabled() if capman is not None else contextlib.nullcontext()
        with ctx:
            worker = _state(self.config).worker_id
            reporter = self.config.pluginmanager.getplugin("terminalreporter")
            if worker is None and reporter is not None:
                reporter.ensure_newline()
                reporter.write_line(line)
            else:
                sys.stderr.write(f"[{worker}] {line}\n" if worker else f"{line}\n")
                sys.stderr.flush()


# -- the session --------------------------------------------------------------------------------
class ClaimsSession:
    """Per-run state and hooks (one instance per pytest config, so in-process reruns don't share it)."""

    def __init__(self, config: pytest.Config, settings: Settings, baseline: dict[str, Any] | None) -> None:
        self.config, self.settings, self.baseline = config, settings, baseline
        workerinput = getattr(config, "workerinput", None)
        self.worker_id: str | None = workerinput["workerid"] if workerinput else None
        self.parts: list[dict[str, Any]] = []
        self.skipped: list[dict[str, Any]] = []
        self.in_flight: dict[str, tuple[pytest.Item, Evidence, float]] = {}
        self.claim_items_collected = False  # so that a Ctrl-C before the first claim finished still writes
        self.started_at = dt.datetime.now(dt.timezone.utc)
        self.started = time.monotonic()
        self.previous_sigterm = None  # set by pytest_configure when it takes over SIGTERM
        self.results: dict[str, Any] | None = None
        self.messages: list[str] = []
        self.kernel = None  # harness.kernel.Kernel under trial (--attention), set by pytest_configure
        # a worker writes claim files to its own staging folder and ships them back (see ship_files)
        self.staging: Path | None = None
        if self.worker_id is not None:
            import tempfile

            self.staging = Path(tempfile.mkdtemp(prefix=f"attention-claims-{self.worker_id}-"))

    @property
    def output_dir(self) -> Path:
        return self.staging if self.staging is not None else self.settings.report_dir

    # collection --------------------------------------------------------------------------------
    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for i, item in enumerate(items):
            item.stash[ORDER_KEY] = i  # the same on every xdist worker: merge order is collection order
            if "evidence" in getattr(item, "fixturenames", ()):
                self.claim_items_collected = True
                cid = _claim_marker_id(item)
                if self.settings.attention and cid and cid not in KERNEL_TRIAL_CLAIMS:
                    item.add_marker(pytest.mark.skip(reason=f"{cid} does not judge an external kernel yet: "
                                                     + KERNEL_NOT_YET.get(cid, KERNEL_NOT_YET["*"])))
        s = self.settings
        if not s.fast:
            items[:] = longest_first(items, lambda cid: wall_budget(s.profile, cid, dry=s.dry_run,
                                                                    attention=bool(s.attention)))

    # outcome -----------------------------------------------------------------------------------
    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        report = yield
        if "evidence" not in getattr(item, "fixturenames", ()):
            return report
        if report.when == "setup":
            item.stash[SETUP_S_KEY] = call.duration
            if report.skipped:
                self._ship_skip(item, report)
            elif report.failed:
                self._ship_part(item, report, errored=True, error=_error_text(call))
        elif report.when == "call":
            if report.skipped:
                self.in_flight.pop(item.nodeid, None)
                self._ship_skip(item, report)
            else:
                duration = item.stash.get(SETUP_S_KEY, 0.0) + call.duration
                part = self._ship_part(item, report, errored=report.failed,
                                       error=_error_text(call) if report.failed else None, duration=duration)
                if part is not None and report.passed and not self._passes(part):
                    report.outcome = "failed"
                    report.longrepr = self._failure_text(part)
        return report

    def _passes(self, part: dict[str, Any]) -> bool:
        if self.settings.dry_run:
            return part["verdict"] != verdicts.ERROR
        if self.settings.gate_active:
            return not part["regression"]["regressed"]
        return verdicts.test_passes(part["verdict"], part["kind"])

    def _failure_text(self, part: dict[str, Any]) -> str:
        if self.settings.gate_active:
            reasons = "; ".join(part["regression"]["reasons"])
            return f"{part['id']} regressed against the baseline: {reasons}\n\n{verdicts.explain(part)}"
        return f"{part['id']} is {part['verdict']}, not supported:\n{verdicts.explain(part)}"

    def _build_part(self, item: pytest.Item, ev: Evidence | None, *, errored: bool, error: str | None,
                    duration: float, interrupted: bool = False) -> dict[str, Any] | None:
        if ev is None:
            ev = Evidence(self.settings.report_dir, claim_id=_claim_marker_id(item), fast=self.settings.fast)
        part = ev.to_record()
        if part["id"] is None:
            self.messages.append(f"{item.nodeid}: uses `evidence` but declared no claim (ev.claim or "
                                 "pytest.mark.claim); nothing recorded")
            return None
        funcargs = getattr(item, "funcargs", None) or {}  # None once an interrupted item is torn down
        try:
            module = str(item.path.relative_to(self.config.rootpath))
        except ValueError:
            module = str(item.path)
        part.update(nodeid=item.nodeid, order=item.stash.get(ORDER_KEY, 0), module=module,
                    duration_s=round(duration, 3), error=error, interrupted=interrupted,
                    device=str(funcargs["device"]) if "device" in funcargs else None,
                    seeds=funcargs.get("seeds"))
        part["fp_capability"] = fp_path.capability()
        verdicts.apply_judgement(part, errored=errored, fast_only=self.settings.fast)
        if self.settings.gate_active:
            part["regression"] = baseline_gate.compare_claim(part, self.baseline["claims"].get(part["id"]))
        return part

    def _ship_part(self, item: pytest.Item, report: pytest.TestReport, *, errored: bool, error: str | None,
                   duration: float | None = None) -> dict[str, Any] | None:
        self.in_flight.pop(item.nodeid, None)
        part = self._build_part(item, item.stash.get(EVIDENCE_KEY, None), errored=errored, error=error,
                                duration=report.duration if duration is None else duration)
        if part is not None:
            if self.staging is not None:
                part["files"] = ship_files(self.staging)
            report.user_properties.append((PART_PROPERTY, json.dumps(results_io.to_jsonable(part))))
            if errored:  # a verdict failure says this in its longrepr; a crash shows it beside the traceback
                report.sections.append((f"claim {part['id']}", verdicts.explain(part)))
        return part

    def _ship_skip(self, item: pytest.Item, report: pytest.TestReport) -> None:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        skip = {"id": _claim_marker_id(item), "nodeid": item.nodeid, "reason": reason}
        report.user_properties.append((SKIP_PROPERTY, json.dumps(skip)))

    # collection of records (serial: this process; xdist: the controller) ----------------------
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for name, value in getattr(report, "user_properties", ()):
            if name == PART_PROPERTY:
                part = json.loads(value)
                for problem in receive_files(part.pop("files", None) or {}, self.settings.report_dir):
                    self.messages.append(f"{part.get('id')}: {problem}")
                self.parts.append(part)
            elif name == SKIP_PROPERTY:
                self.skipped.append(json.loads(value))

    # output ------------------------------------------------------------------------------------
    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.worker_id is not None:
            return  # workers ship records; the controller writes
        interrupted = exitstatus == pytest.ExitCode.INTERRUPTED
        for item, ev, t0 in list(self.in_flight.values()):  # Ctrl-C mid-claim: keep what it recorded
            part = self._build_part(item, ev, errored=True, duration=time.monotonic() - t0, interrupted=True,
                                    error="interrupted before it finished; its evidence is partial")
            if part is not None:
                self.parts.append(part)
        self.in_flight.clear()
        if not (self.parts or self.skipped or (interrupted and self.claim_items_collected)):
            return  # no claim ran (`pytest tests`, --collect-only): leave the last report alone
        # -x / --maxfail stop a serial session through shouldfail (xdist's controller raises Interrupted instead)
        stopped = session.shouldstop or session.shouldfail
        complete = not interrupted and exitstatus != pytest.ExitCode.INTERNAL_ERROR and not stopped
        self.results = self.build_results(complete=complete, exitstatus=int(exitstatus),
                                          stopped=str(stopped or "") or None)
        out = self.settings.report_dir
        results_io.write_json_atomic(out / "results.json", self.results)
        try:
            from harness.report import html as html_report

            html_report.write_report(self.results, out)
        except Exception as exc:  # the results file is the record; a rendering bug must not lose it
            self.messages.append(f"index.html not written ({type(exc).__name__}: {exc}); rebuild with "
                                 f"`python -m harness.report {out / 'results.json'}`")
        if self.settings.update_baseline:
            self._write_baseline(complete)

    def _write_baseline(self, complete: bool) -> None:
        target = self.settings.baseline_target
        if not complete:
            self.messages.append(f"baseline NOT updated: the run is incomplete ({target} left as it was)")
            return
        results_io.write_json_atomic(target, baseline_gate.for_baseline(self.results))
        errored = [cid for cid, c in self.results["claims"].items() if c["verdict"] == verdicts.ERROR]
        self.messages.append(f"baseline written: {target}")
        if errored:
            self.messages.append(f"WARNING: the new baseline holds errored claims ({', '.join(errored)}); "
                                 "an error cannot regress, so they are not gated")

    def build_results(self, *, complete: bool, exitstatus: int, stopped: str | None) -> dict[str, Any]:
        s = self.settings
        claims = results_io.merge_parts(self.parts)
        base_claims = self.baseline["claims"] if self.baseline else {}
        regressions = baseline_gate.compare_results(claims, base_claims) if s.gate_active else {}
        for cid, claim in claims.items():
            claim["budget_s"] = None if s.fast else wall_budget(s.profile, cid, dry=s.dry_run,
                                                                attention=bool(s.attention))
            if cid in regressions:
                claim["regression"] = regressions[cid]
        devices = sorted({p["device"] for p in self.parts if p.get("device")})
        run = {
            "profile": s.profile,
            "device": ", ".join(devices) if devices else _describe_device(s.device),
            "seeds": derive_seeds(s.master_seed, min(s.n_seeds or get_profile(s.profile).n_seeds,
                                                     DRY_RUN_SEEDS if s.dry_run else MAX_SEEDS)),
            "torch_version": _torch_version(),
            "git_commit": results_io.git(self.config.rootpath, "rev-parse", "HEAD"),
            "started_at": self.started_at.isoformat(timespec="seconds"),
            "duration_s": round(time.monotonic() - self.started, 3),
            "complete": complete,
            "master_seed": s.master_seed,
            "inject_fault": s.inject_fault,
            "fast": s.fast,
            "dry_run": s.dry_run,
            "exit_status": exitstatus,
            "stopped": stopped,
            "git_dirty": results_io.git(self.config.rootpath, "status", "--porcelain", "--untracked-files=no") not in (None, ""),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "fp_path": fp_path.describe({p["fp_capability"] for p in self.parts if p.get("fp_capability")}),
            "workers": self.config.getoption("numprocesses", None) or 0,
            "baseline": str(s.baseline) if s.gate_active else None,
            "baseline_profile": self.baseline["run"].get("profile") if self.baseline else None,
            "baseline_git_commit": self.baseline["run"].get("git_commit") if self.baseline else None,
            "baseline_not_run": sorted(set(base_claims) - set(claims), key=results_io.claim_sort_key),
            "skipped": self.skipped,
        }
        if s.gate_active:
            run["baseline_fp_path"] = self.baseline["run"].get("fp_path")
            other_path = fp_path.mismatch(run, self.baseline["run"])
            if other_path and other_path not in self.messages:
                self.messages.append(other_path)
        return {"schema_version": results_io.SCHEMA_VERSION, "run": run, "claims": claims,
                "attention": self.kernel.describe() if self.kernel is not None else None}

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if self.worker_id is not None or self.results is None:
            for msg in self.messages:
                terminalreporter.write_line(msg, yellow=True)
            return
        tr, res, s = terminalreporter, self.results, self.settings
        run = res["run"]
        tr.write_sep("=", f"attention-claims: profile {run['profile']}, device {run['device']}, "
                          f"seeds {run['seeds']}{seed_overrides(res)}"
                          f"{', FAULT ' + s.inject_fault if s.inject_fault else ''}"
                          f"{', DRY RUN: no verdicts (every path ran; numbers mean nothing)' if s.dry_run else ''}")
        if res.get("attention"):
            att = res["attention"]
            tr.write_line(f"attention on trial: {att['name']} ({att['convention']} convention, dtypes "
                          f"{', '.join(att['dtypes'])}); judged by "
                          f"{', '.join(c for c in res['claims'] if c in KERNEL_TRIAL_CLAIMS) or 'no claim'}; the "
                          "other claims do not judge a kernel yet (skipped, each with its reason)")
        width = max([len(c) for c in res["claims"]] + [2])
        for cid, claim in res["claims"].items():
            tr.write_line(_summary_line(cid, claim, s, width), **_verdict_markup(claim["verdict"]))
        if not res["claims"]:
            tr.write_line("no claim recorded in this run")
        unstable = [cid for cid, c in res["claims"].items() if (c.get("regression") or {}).get("status") == "unstable"]
        if unstable:
            tr.write_line(f"unstable against the baseline (worse without a significant move of the evidence; "
                          f"shown, not gated): {', '.join(unstable)}", yellow=True)
        if run["baseline_not_run"]:
            tr.write_line(f"in the baseline but not run: {', '.join(run['baseline_not_run'])}", yellow=True)
        if s.gate_active and run["baseline_profile"] not in (None, run["profile"]):
            tr.write_line(f"WARNING: baseline made with profile {run['baseline_profile']}, this run uses "
                          f"{run['profile']}: gated metrics may not be comparable", yellow=True)
        judged = [((self.baseline or {}).get("attention") or {}).get("name"), (res.get("attention") or {}).get("name")]
        if s.gate_active and judged[0] != judged[1]:
            tr.write_line("WARNING: the baseline judged " + " and this run ".join(
                name or "this project's own attention" for name in judged) + ": verdicts are not comparable",
                yellow=True)
        if not run["complete"]:
            tr.write_line("run INCOMPLETE (interrupted or stopped early): results.json is marked complete=false",
                          red=True)
        for msg in self.messages:
            tr.write_line(msg, yellow=True)
        tr.write_line(f"results: {s.report_dir / 'results.json'}   report: {s.report_dir / 'index.html'}")


def ship_files(staging: Path) -> dict[str, str]:
    """Every file a claim wrote under a worker's staging folder, as {relative path: base64}, then removed: they
    travel to the controller inside the claim's record."""
    import base64

    files = {}
    for path in sorted(p for p in staging.rglob("*") if p.is_file()):
        files[path.relative_to(staging).as_posix()] = base64.b64encode(path.read_bytes()).decode("ascii")
        path.unlink()
    return files


def receive_files(files: dict[str, str], report_dir: Path) -> list[str]:
    """Write shipped files into the controller's report dir; returns problems (a path that would leave it)."""
    import base64

    problems, root = [], report_dir.resolve()
    for rel, data in files.items():
        target = (root / rel).resolve()
        if not target.is_relative_to(root) or rel.startswith("/"):
            problems.append(f"a worker shipped {rel!r}, outside the report dir: not written")
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.part")
        tmp.write_bytes(base64.b64decode(data))
        os.replace(tmp, target)
    return problems


def seed_overrides(res: dict[str, Any]) -> str:
    """' (C3: 5 seeds)' for the claims whose profile block sets another seed count than the run's header shows,
    so that the summary does not read as if every claim ran on the header's seeds; '' when none does."""
    run_seeds = res["run"].get("seeds")
    other = [f"{cid}: {len(c['seeds'])} seeds" for cid, c in res["claims"].items()
             if c.get("seeds") and c["seeds"] != run_seeds]
    return f" ({', '.join(other)})" if other else ""


def _summary_line(cid: str, claim: dict[str, Any], settings: Settings, width: int) -> str:
    head = claim.get("headline")
    value = claim["metrics"].get(head) if head else None
    headline = f"{head} = {_fmt(value)}" if head else "-"
    if settings.gate_active:
        reg = claim.get("regression") or {}
        status = reg.get("status", "?")
        regression = f"REGRESSED ({'; '.join(reg['reasons'])})" if reg.get("regressed") else status
    else:
        regression = "not gated"
    firm = claim.get("firmness")
    firmness = "" if firm is None else f"firm {firm:.2f}" if not verdicts.fragile(firm) else \
        f"FRAGILE {firm:.2f}" + (f" (~{claim['seeds_for_firm']} seeds)" if claim.get("seeds_for_firm") else "")
    budget = claim.get("budget_s")
    took = f"{claim.get('duration_s') or 0:6.1f} s" + (f" / {budget:.0f} s" if budget else "")
    over = " OVER BUDGET" if budget and (claim.get("duration_s") or 0) > budget else ""
    return (f"{cid:<{width}}  {claim['verdict']:<26} {firmness:<24} {headline:<36} "
            f"{took:<17}{over}  {regression}")


def _verdict_markup(verdict: str) -> dict[str, bool]:
    c = verdicts.canonical(verdict)
    return {"green": True} if c == verdicts.SUPPORTED else {"red": True} if c in (verdicts.REFUTED, verdicts.ERROR) \
        else {"yellow": True}


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{value:.4g}" if isinstance(value, float) else str(value)


def _error_text(call: pytest.CallInfo) -> str | None:
    if call.excinfo is None:
        return None
    text = call.excinfo.exconly().strip()
    entry = call.excinfo.traceback[-1] if call.excinfo.traceback else None
    where = f" (at {Path(str(entry.path)).name}:{entry.lineno + 1})" if entry is not None else ""
    return (text[:800] + " ...") if len(text) > 800 else text + where


def _describe_device(spec: str) -> str:
    if spec == "cpu":
        return "cpu"
    try:
        return resolve_device(spec)
    except Exception:  # metadata only: never fail the run over it
        return spec


def _torch_version() -> str | None:
    torch = sys.modules.get("torch")
    if torch is not None:
        return torch.__version__
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return None
