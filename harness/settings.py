"""Options -> validated settings: the ``attention-claims`` command-line options checked up front (issue 4).

``harness.plugin`` declares the options (``pytest_addoption``) and calls ``parse_settings`` from its
``pytest_configure``; every bad value is a ``pytest.UsageError`` (exit 4, one line) that names the valid choices,
raised before anything trains.

API:

* ``Settings`` — the validated options (frozen): profile, device spec, seed count and master seed, report dir,
  baseline and ``--update-baseline``, the injected fault, ``--fast``, ``--dry-run`` and the ``--attention*`` options;
  ``gate_active`` and ``baseline_target`` derived from them;
* ``parse_settings(config)`` — a pytest config's options as ``Settings`` (the report dir's writability is probed on
  the controller; ``--inject-fault`` is checked against ``model/faults.py``);
* ``validate_device(spec)``, ``pick_device(spec, worker_id, cuda_available, n_gpus)``, ``resolve_device(spec,
  worker_id)`` — ``--device`` (``DEVICE_CHOICES``) checked, and turned into a concrete device (xdist worker gwN
  takes cuda:N);
* ``lock_master_seed(profile, given)`` — the master seed and where it came from: ``--master-seed`` when given, else
  the headline profile's from the criteria lock's hash (``harness.record.lock``; issue 47), else 0;
* ``replicate_seed(opt, profile, dry_run)`` — ``--replicate k`` checked against the criteria lock's pre-registered
  replication (issue 64, ``harness.record.replication``): k, the lock's hash and replicate k's master seed;
* ``derive_seeds(master_seed, n)`` — a run's seeds, ``master_seed * SEED_STRIDE + 0..n-1`` (at most ``MAX_SEEDS``);
* ``DRY_RUN_STEPS``, ``DRY_RUN_SEEDS`` — what ``--dry-run`` trains (issue 18);
* ``load_kernel(settings, worker_id)`` — ``--attention`` resolved, pre-flighted and set as the model's kernel
  (issue 27, ``harness.trial.kernel``), or None; the ``--attention-*`` options without it are usage errors;
* ``faults_module()`` — ``model.faults``, imported only when ``--inject-fault`` is used (issue 10);
* ``worker_threads(cpu_count, workerinput)`` — torch threads for one xdist worker;
* ``check_path_options(config)`` — a path option written with a space (``--model-path DIR``) that pytest also read
  as a test path when it chose its rootdir (it chooses before any plugin's options are known): a usage error that
  shows the ``--model-path=DIR`` form (issue 48); harmless where the rootdir comes out the same;
* ``choose_fp_path(config)`` — ``--native-fp``: the CPU's native floating-point path instead of the pinned one
  (``harness.fp_path``); called first in ``pytest_configure``, before any torch operation.
"""
from __future__ import annotations

import importlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from harness import fp_path
from harness.profiles import PROFILE_NAMES
from harness.record import lock, replication

DEVICE_CHOICES = "auto, cpu, cuda, cuda:N"
SEED_STRIDE = 1000  # master seed m uses seeds m*1000 + 0..n-1: disjoint sets for different master seeds
MAX_SEEDS = SEED_STRIDE
DRY_RUN_STEPS = 2   # --dry-run: training steps of every run (issue 18: every path, at real sizes, in minutes)
DRY_RUN_SEEDS = 2   # and seeds: the fewest a t interval can be computed on
_DEVICE_RE = re.compile(r"auto|cpu|cuda(?::(\d+))?")
#: the options whose value is a path (``harness.plugin``): written ``--opt PATH``, pytest's first pass over the command
#: line, made before this plugin's options exist, takes an existing PATH for a test path when it picks the rootdir
PATH_OPTIONS = ("--report-dir", "--baseline", "--model-path", "--model-config", "--attention-path", "--model-weights",
                "--model-init-weights", "--probe-tokens", "--probe-text")


@dataclass(frozen=True)
class Settings:
    """The run's options, validated (``parse_settings``)."""
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
    model: str | None = None                # --model pkg.module:builder (issue 40)
    model_config: str | None = None         # --model-config ConfigClass or path/to/config.json
    model_overrides: tuple[str, ...] = ()   # --model-override key=value (repeatable)
    model_path: str | None = None
    #: where the master seed came from: "lock" (the standard profile's, from reports/criteria.lock's hash),
    #: "--master-seed" (given), "default" (0)
    seeds_from: str = lock.SEEDS_DEFAULT
    model_weights: str | None = None        # --model-weights: trained weights for the model (issue 49)
    probe_tokens: str | None = None         # --probe-tokens FILE: the checkpoint's probe inputs as token ids
    probe_text: str | None = None           # --probe-text FILE: ... as text, tokenised beside the weights
    #: --model-weights-allow-unused: saved tensors the built model does not use are left out, not refused (issue 55)
    model_weights_allow_unused: bool = False
    #: --model-init-weights PATH: the run's own saved init, read as the "at init" half in place of the random draw
    model_init_weights: str | None = None
    #: --replicate k: replicate k of the pre-registered replication (issue 64), its master seed the lock's k-th;
    #: ``replicate_lock`` the criteria lock's hash it is at
    replicate: int | None = None
    replicate_lock: str | None = None

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


def faults_module():
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
    on_trial = [flag for flag, used in (("--attention", getattr(opt, "attention", None)),
                                        ("--model", getattr(opt, "model", None) or getattr(opt, "model_config", None)))
                if used]
    if len(on_trial) > 1:
        raise pytest.UsageError("--attention and --model put different things on trial; give one of them")
    if (getattr(opt, "model_override", None) or getattr(opt, "model_path", None)) and not (
            getattr(opt, "model", None) or getattr(opt, "model_config", None)):
        raise pytest.UsageError("--model-override and --model-path need --model or --model-config")
    if getattr(opt, "model_weights", None) and not (getattr(opt, "model", None) or getattr(opt, "model_config", None)):
        raise pytest.UsageError("--model-weights needs --model or --model-config (the architecture to load it into)")
    if (getattr(opt, "probe_tokens", None) or getattr(opt, "probe_text", None)) and not getattr(opt, "model_weights",
                                                                                                  None):
        raise pytest.UsageError("--probe-tokens and --probe-text need --model-weights")
    if getattr(opt, "model_weights_allow_unused", False) and not getattr(opt, "model_weights", None):
        raise pytest.UsageError("--model-weights-allow-unused needs --model-weights")
    if getattr(opt, "model_init_weights", None) and not getattr(opt, "model_weights", None):
        raise pytest.UsageError("--model-init-weights needs --model-weights (the trained save read beside it)")
    for flag, used in (("--fast", fast), ("--baseline", opt.baseline), ("--update-baseline", opt.update_baseline)):
        if dry_run and used:
            raise pytest.UsageError(f"--dry-run cannot be combined with {flag}: a dry run decides nothing to gate")
    device = validate_device(str(opt.device))
    n_seeds = None if opt.seeds is None else _int_option("--seeds", opt.seeds, 1, MAX_SEEDS)
    master_seed, seeds_from = lock_master_seed(profile, opt.master_seed)
    replicate, replicate_lock = None, None
    if getattr(opt, "replicate", None) is not None:
        replicate, replicate_lock, master_seed = replicate_seed(opt, profile, dry_run)
        seeds_from = lock.SEEDS_FROM_LOCK
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
        faults = faults_module()
        if fault not in faults.FAULTS:
            raise pytest.UsageError(f"--inject-fault {fault!r} is not a known fault; valid choices: "
                                    f"{', '.join(faults.FAULTS)}")
    return Settings(profile=profile, device=device, n_seeds=n_seeds, master_seed=master_seed,
                    report_dir=report_dir.resolve(), baseline=baseline.resolve() if baseline else None,
                    update_baseline=bool(opt.update_baseline), inject_fault=fault, fast=fast, dry_run=dry_run,
                    attention=getattr(opt, "attention", None), attention_path=getattr(opt, "attention_path", None),
                    attention_factory=bool(getattr(opt, "attention_factory", False)),
                    attention_convention=getattr(opt, "attention_convention", None),
                    attention_dtypes=getattr(opt, "attention_dtypes", "float32") or "float32",
                    model=getattr(opt, "model", None), model_config=getattr(opt, "model_config", None),
                    model_overrides=tuple(getattr(opt, "model_override", None) or ()),
                    model_path=getattr(opt, "model_path", None), seeds_from=seeds_from,
                    model_weights=getattr(opt, "model_weights", None),
                    probe_tokens=getattr(opt, "probe_tokens", None), probe_text=getattr(opt, "probe_text", None),
                    model_weights_allow_unused=bool(getattr(opt, "model_weights_allow_unused", False)),
                    model_init_weights=getattr(opt, "model_init_weights", None), replicate=replicate,
                    replicate_lock=replicate_lock)


#: what ``--replicate`` cannot be combined with: each would change the standard profile a replicate runs unchanged
REPLICATE_EXCLUDES = (("--seeds", "seeds"), ("--master-seed", "master_seed"), ("--fast", "fast"),
                      ("--inject-fault", "inject_fault"), ("--attention", "attention"), ("--model", "model"),
                      ("--model-config", "model_config"), ("--update-baseline", "update_baseline"))


def replicate_seed(opt: Any, profile: str, dry_run: bool) -> tuple[int, str, int]:
    """``--replicate k`` checked: (k, the lock's hash, replicate k's master seed from the lock's pre-registered
    seeds, ``harness.record.replication``). A usage error (exit 4) for k outside 1..K, a profile other than
    standard, an option that changes what a replicate runs, or a lock that pre-registers no replication (a dry run,
    which decides nothing, takes the seeds the lock's hash gives)."""
    k = _int_option("--replicate", opt.replicate, 1, replication.K)
    if profile != replication.PROFILE:
        raise pytest.UsageError(f"--replicate runs the {replication.PROFILE} profile unchanged; give --profile "
                                f"{replication.PROFILE} (got {profile})")
    for flag, name in REPLICATE_EXCLUDES:
        if getattr(opt, name, None):
            raise pytest.UsageError(f"--replicate runs the {replication.PROFILE} profile unchanged at the lock's "
                                    f"seed; it cannot be combined with {flag}")
    doc = read_lock()
    if doc is None:
        raise pytest.UsageError(f"--replicate needs the criteria lock ({lock.LOCK_FILE}), which this checkout lacks")
    section = doc.get("replication")
    if section is None and not dry_run:
        raise pytest.UsageError(f"{lock.LOCK_FILE} pre-registers no replication (no replicate seeds): refresh it with "
                                f"{lock.REFRESH} before any replicate runs")
    if section is not None and section != replication.lock_section(doc["hash"]):
        raise pytest.UsageError(f"{lock.LOCK_FILE}'s replication (K {section.get('K')}) is not this checkout's "
                                f"(K {replication.K}): refresh it with {lock.REFRESH}")
    seeds = section["seeds"] if section is not None else replication.replicate_seeds(doc["hash"])
    return k, doc["hash"], seeds[k - 1]


#: the criteria lock the code's criteria are frozen in (``harness.record.lock``)
LOCK_PATH = Path(__file__).resolve().parents[1] / lock.LOCK_FILE


def read_lock(path: Path = LOCK_PATH) -> dict[str, Any] | None:
    """The criteria lock, or None where the checkout has none (an installed copy); a lock that does not read is a
    usage error."""
    if not path.is_file():
        return None
    try:
        return lock.load(path)
    except lock.LockError as exc:
        raise pytest.UsageError(str(exc)) from None


def lock_master_seed(profile: str, given: str | None) -> tuple[int, str]:
    """(master seed, where it came from): ``--master-seed`` wins when given; a seeded profile (standard, full) takes
    the criteria lock's (``harness.record.lock.profile_seed``: of its criteria and that profile's budget blocks), so
    that its seeds were drawn after its criteria and budgets were frozen; every other profile, and a checkout without
    a lock, 0."""
    if given is not None:
        return _int_option("--master-seed", given, 0, lock.MAX_MASTER_SEED), lock.SEEDS_FROM_OPTION
    doc = read_lock() if profile in lock.SEEDED_PROFILES else None
    seed = lock.profile_seed(doc, profile) if doc is not None else None
    if seed is not None:
        return seed, lock.SEEDS_FROM_LOCK
    return 0, lock.SEEDS_DEFAULT


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


def load_model(settings: Settings):
    """--model (or --model-config) resolved, built and tapped once (``harness.trial.model.preflight``); a user's
    mistake, or a model the trial cannot tap, is a usage error (exit 4, one line). None without --model."""
    if not (settings.model or settings.model_config):
        return None
    from harness.trial import model as models

    try:
        trial = models.resolve(settings.model, config=settings.model_config,
                               overrides=list(settings.model_overrides), path=settings.model_path)
        trial = models.preflight(trial, cut_vocab=not settings.model_weights)
        if settings.model_weights:
            from harness.trial import checkpoint_series

            checkpoint_series.prepare(trial, settings.model_weights, init=settings.model_init_weights,
                                      tokens=settings.probe_tokens, text=settings.probe_text,
                                      allow_unused=settings.model_weights_allow_unused)
        return trial
    except models.ModelError as exc:
        raise pytest.UsageError(str(exc)) from None


def load_kernel(settings: Settings, worker_id: str | None = None):
    """--attention resolved and called once on a tiny input (``harness.trial.kernel.preflight``), then set as the
    model's kernel for the session (``model.kernels``); a user's mistake is a usage error (exit 4, one line). None
    without --attention."""
    if not settings.attention:
        for flag, used in (("--attention-path", settings.attention_path),
                           ("--attention-factory", settings.attention_factory),
                           ("--attention-convention", settings.attention_convention)):
            if used:
                raise pytest.UsageError(f"{flag} needs --attention pkg.module:callable")
        return None
    from harness.trial import kernel as kernels
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


def check_path_options(config: pytest.Config) -> None:
    """A usage error (one line, the ``=`` form shown) when a path option written with a space moved pytest's rootdir
    or ini file: pytest picks them from the command line before any plugin's options are known, so ``--model-path
    DIR`` counts DIR as a test path there (DIR becomes the rootdir: the project's ini file, and its testpaths, are never
    read; the report and .pytest_cache go under DIR). Where the rootdir and ini come out the same, both forms work
    and nothing is said. Only the controller checks (a worker's command line is not the user's)."""
    if hasattr(config, "workerinput"):
        return
    args = [str(a) for a in config.invocation_params.args]
    spaced = [(opt, value) for opt, value in zip(args, args[1:]) if opt in PATH_OPTIONS]
    if not spaced:
        return
    ns = config.known_args_namespace
    try:
        from _pytest.config.findpaths import determine_setup

        rootpath, inipath = determine_setup(inifile=ns.inifilename, override_ini=ns.override_ini,
                                            args=list(ns.file_or_dir or []), rootdir_cmd_arg=ns.rootdir or None,
                                            invocation_dir=config.invocation_params.dir)[:2]
    except Exception:       # another pytest's internals: then every spaced path that exists is suspect
        rootpath, inipath = None, None
    if (rootpath, inipath) == (config.rootpath, config.inipath):
        return
    for opt, value in spaced:
        if Path(config.invocation_params.dir, value).exists():
            where = f" (it would be {rootpath})" if rootpath is not None else ""
            raise pytest.UsageError(f"{opt} {value}: pytest read {value} as a test path too and took "
                                    f"{config.rootpath} for its rootdir{where}; write {opt}={value}")


def choose_fp_path(config: pytest.Config) -> None:
    """``--native-fp``: compute on the CPU's native floating-point path (``harness.fp_path.unpin``); without it the
    pinned path stays. Must run before any torch operation: ATen reads its path once, at the first."""
    if config.getoption("native_fp", False):
        fp_path.unpin()  # before any torch operation: ATen reads its path once, at the first
