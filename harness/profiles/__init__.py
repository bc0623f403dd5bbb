"""Every budget of the suite, as data: one file per claim (``c1.py`` ... ``m0.py``), read here.

A claim module asks ``profile.claim("C4")`` for its block and never hard-codes a step count, a seed count or a sweep
grid. ``smoke`` is CI (whole suite under 10 min on 2 CPU cores), ``standard`` gives statistically firm verdicts on
CPU (under 45 min), ``full`` is paper-scale on a GPU. The three share one code path: only these numbers change.

A claim's profile file holds every number the suite reads about it, each with its reason: ``BUDGETS`` (smoke as
the base, standard and full as ``overrides`` of it), ``WALL_BUDGET_S`` and ``DRY_RUN_WALL_BUDGET_S`` (expected
module times, which the scheduler orders by), ``REFUTED_BY_FAULTS``, ``SIDE_EFFECTS``, ``FLAKY_DECLARED`` and
``FAST_CELLS`` (the fault matrix), ``KERNEL_TRIAL`` (True, or why the claim skips a kernel trial) and its
``KERNEL_TRIAL_WALL_BUDGET_S``, and optionally ``DRY_RUN_CAPS``. A file here named like a claim id is found without registering it. Numbers only:
this package imports nothing else of the harness (an import-linter contract).
"""
from __future__ import annotations

import copy
import importlib
import pkgutil
import re
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

PROFILE_NAMES = ("smoke", "standard", "full")

# Seeds per claim unless a block says otherwise (``--seeds N`` overrides both).
DEFAULT_SEEDS = {"smoke": 3, "standard": 5, "full": 5}

#: why a claim with no reason of its own skips a kernel trial (--attention)
KERNEL_NOT_YET_DEFAULT = ("its measurements read the logits/weights taps inside the attention, which a black-box "
                          "kernel does not expose, or train arms the kernel is not part of (docs/attention-trial.md)")
#: budget blocks that are not a claim's: the kernel trial's and the model trial's, read by the claims that judge a
#: kernel or a model, and the shared tuned sweep (sweep.py) that C3 merges into its block and others name
SHARED_BLOCKS = ("kernel_trial", "model_trial", "sweep")
CLAIM_FILE = re.compile(r"[a-z]\d+")


def claim_files() -> dict[str, ModuleType]:
    """Claim id -> its profile file (this package's modules named like a claim id: ``c1`` -> ``C1``)."""
    return {name.upper(): importlib.import_module(f"{__name__}.{name}")
            for _, name, _ in sorted(pkgutil.iter_modules(__path__)) if CLAIM_FILE.fullmatch(name)}


_FILES = claim_files()
#: claim id (or shared block) -> profile name -> budget block
CLAIMS: dict[str, dict[str, dict[str, Any]]] = {
    **{cid: f.BUDGETS for cid, f in _FILES.items()},
    **{name: importlib.import_module(f"{__name__}.{name}").BUDGETS for name in SHARED_BLOCKS}}
WALL_BUDGET_S = {p: {c: f.WALL_BUDGET_S[p] for c, f in _FILES.items() if p in f.WALL_BUDGET_S} for p in PROFILE_NAMES}
DRY_RUN_WALL_BUDGET_S = {p: {c: f.DRY_RUN_WALL_BUDGET_S[p] for c, f in _FILES.items()
                             if p in f.DRY_RUN_WALL_BUDGET_S} for p in PROFILE_NAMES}
KERNEL_TRIAL_WALL_BUDGET_S = {p: {c: f.KERNEL_TRIAL_WALL_BUDGET_S[p] for c, f in _FILES.items()
                                  if p in getattr(f, "KERNEL_TRIAL_WALL_BUDGET_S", {})} for p in PROFILE_NAMES}
DRY_RUN_CLAIM_CAPS: dict[str, dict[str, int]] = {c: f.DRY_RUN_CAPS for c, f in _FILES.items()
                                                 if hasattr(f, "DRY_RUN_CAPS")}
#: the claims that judge a kernel under --attention (issue 27); every other claim module is skipped with its reason,
#: so a user reads one table of which claims ran on their kernel
KERNEL_TRIAL_CLAIMS = tuple(c for c, f in _FILES.items() if f.KERNEL_TRIAL is True)
KERNEL_NOT_YET = {**{c: f.KERNEL_TRIAL for c, f in _FILES.items() if isinstance(f.KERNEL_TRIAL, str)},
                  "*": KERNEL_NOT_YET_DEFAULT}
#: the claims that judge a user's model under --model (issue 40), and why each other claim does not yet
MODEL_TRIAL_CLAIMS = tuple(c for c, f in _FILES.items() if getattr(f, "MODEL_TRIAL", None) is True)
MODEL_NOT_YET_DEFAULT = ("it trains this project's model on its own tasks; the model trial probes a user's model "
                         "at init (docs/model-trial.md)")
MODEL_NOT_YET = {**{c: f.MODEL_TRIAL for c, f in _FILES.items() if isinstance(getattr(f, "MODEL_TRIAL", None), str)},
                 "*": MODEL_NOT_YET_DEFAULT}
#: the fault matrix's facts, by claim: faults that must refute it, and the reasons an off-target or flaky cell is known
REFUTED_BY_FAULTS = {c: tuple(f.REFUTED_BY_FAULTS) for c, f in _FILES.items()}
SIDE_EFFECTS = {c: dict(getattr(f, "SIDE_EFFECTS", {})) for c, f in _FILES.items()}
FLAKY_DECLARED = {c: dict(getattr(f, "FLAKY_DECLARED", {})) for c, f in _FILES.items()}
#: fault -> (claim, its fast criterion the fault refutes, a claim the fault is not about): each claim's FAST_CELLS
FAST_CELLS = {fault: (c, *cell) for c, f in _FILES.items() for fault, cell in getattr(f, "FAST_CELLS", {}).items()}


# --dry-run (issue 18): counts of things, never sizes of configs. Repetitions that are not training steps (R3's
# timing rounds) and the number of examples evaluated, probed or drawn: at full, C1's greedy decoding of 5000 test
# and 1000 validation examples per run (the LSTM re-reads its prefix every token) was 439 of C1's 462 s. 32 examples
# run every evaluation, probe and split path at the real shapes per example; C2's n_test keeps 128 (its
# heldout_slices needs 100 a slice). C4 (b) at full builds encoders of d_model 8 x 1024 (537M parameters): its
# draws (models per seed and d_k) repeat one config, so 1, and its model.batch counts the random sequences read
# (not a training batch), so 2 (538 s of C4's dry run before these two caps). A key "parent.key" caps only there.
# Grids of rates (not configs: the same path at another number) keep their two ends; the shared sweep's tuning grid
# (`tuning.points` rates round the shared one) keeps 3, and grows past an end at most once (`tuning.extend`): at full,
# 7 points and up to 3 extensions trained ~4x the runs the dry run needs to reach every path of the sweep.
# A block's own torch threads (C2's and R3's 2 at full) are capped at 1: under -n 2 on two cores, 2 threads a worker
# only contend, and a thread count is no path of the code.
DRY_RUN_CAPS: dict[str, float] = {"max_iterations": 2, "min_round_s": 0.01,
                                  "eval_size": 32, "test_size": 32, "n_test": 128, "probe_size": 32,
                                  "n_fit": 32, "n_eval": 32, "n_samples": 1024, "draws": 1, "model.batch": 2,
                                  "tuning.points": 3, "tuning.extend": 1, "threads": 1}
DRY_RUN_GRID_ENDS = ("lrs", "lr_factors", "lr_grid")
# A claim's own DRY_RUN_CAPS (its profile file) sets counts lower than DRY_RUN_CAPS would (a key the block lacks is
# added). R3 times its cells
# on `timing_seeds` of its seeds (default: all of them), and at real sizes one forward+backward of additive attention
# is seconds (26 s at n = 512, about 100 s chunked at n = 1024 on the 2-core box, 2026-12-01): on one timing seed a slow
# cell's memory-profiled call is its only call. Those calls were ~60% of the two dry runs' time in CI. One timing seed
# leaves R3's timing criteria unrecorded, which a dry run does not decide anyway; similar_quality keeps both seeds.
# C1 (d) in a dry run without a user corpus: pairs of harness.data.language.generated_parallel_corpus (the full profile
# holds out 1% by hash: ~10 held-out pairs to decode and score with BLEU)
DRY_RUN_CORPUS_PAIRS = 1000


@dataclass(frozen=True)
class Profile:
    name: str
    n_seeds: int
    blocks: dict[str, dict[str, Any]] = field(default_factory=dict)
    dry: bool = False   # a dry run's profile (Profile.dry_run): the numbers mean nothing, every path must run

    def dry_run(self, steps: int = 2, seeds: int = 2) -> "Profile":
        """This profile at its real sizes but a few steps and seeds (issue 18's dry run): every ``steps`` value is
        capped at ``steps``, every ``*seeds`` count at ``seeds``, repetition and example counts at ``DRY_RUN_CAPS``
        (and a claim's at ``DRY_RUN_CLAIM_CAPS``),
        learning-rate grids keep their two ends, and ``checkpoints`` keep those below the new step count plus the
        last. Model sizes, sequence lengths, batch sizes, d_k grids, arms and tasks are untouched, so every config
        is built and trained at its real size."""
        caps = {"steps": steps, **DRY_RUN_CAPS}

        def shrink(node: Any, key: str = "", parent: str = "") -> Any:
            if isinstance(node, dict):
                return {k: shrink(v, k, key) for k, v in node.items()}
            if isinstance(node, list) and key == "checkpoints":
                return sorted({c for c in node if isinstance(c, int) and c < steps} | {steps})
            if isinstance(node, list) and key in DRY_RUN_GRID_ENDS and len(node) > 2:
                return [node[0], node[-1]]
            if isinstance(node, list):
                return [shrink(v) for v in node]
            if isinstance(node, (int, float)) and not isinstance(node, bool):
                cap = caps.get(f"{parent}.{key}", caps.get(key))
                if cap is not None:
                    return min(node, cap)
                if key.endswith("seeds") and isinstance(node, int):
                    return min(node, seeds)
            return node
        blocks = {cid: shrink(block) for cid, block in self.blocks.items()}
        for cid, capped in DRY_RUN_CLAIM_CAPS.items():
            for key, cap in capped.items():
                if cid in blocks:
                    blocks[cid][key] = min(int(blocks[cid].get(key, cap)), cap)
        return Profile(name=self.name, n_seeds=min(self.n_seeds, seeds), blocks=blocks, dry=True)

    def seed_count(self, claim_id: str | None, fast: bool = False) -> int:
        """How many seeds ``claim_id`` runs: its block's ``fast_seeds`` under ``--fast`` (a fast criterion that must
        be decided with room on any machine's floating-point path), else its ``seeds``, else the profile's count."""
        block = self.blocks.get(claim_id, {}) if claim_id else {}
        n = block.get("fast_seeds") if fast and "fast_seeds" in block else block.get("seeds")
        return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else self.n_seeds

    def claim(self, claim_id: str) -> dict[str, Any]:
        """The budget block for ``claim_id`` in this profile (a copy: callers may not mutate it)."""
        try:
            return copy.deepcopy(self.blocks[claim_id])
        except KeyError:
            raise KeyError(f"profile {self.name!r} has no budget block for claim {claim_id!r}; "
                           f"add harness/profiles/{claim_id.lower()}.py (known: {sorted(self.blocks)})") from None


def get_profile(name: str, n_seeds: int | None = None) -> Profile:
    if name not in PROFILE_NAMES:
        raise ValueError(f"unknown profile {name!r}; valid choices: {', '.join(PROFILE_NAMES)}")
    if n_seeds is not None and n_seeds < 1:
        raise ValueError(f"--seeds must be at least 1, got {n_seeds}")
    blocks = {cid: per[name] for cid, per in CLAIMS.items() if name in per}
    return Profile(name=name, n_seeds=n_seeds or DEFAULT_SEEDS[name], blocks=blocks)


def wall_budget(profile: str, claim_id: str, dry: bool = False, attention: bool = False,
                model: bool = False, n_params: float | None = None) -> float | None:
    """The expected wall time of ``claim_id`` under ``profile`` (its dry run's when ``dry``; a kernel trial's when
    ``attention``, a model trial's when ``model``, dry or not; None when not stated). A model trial's budget grows
    with the model's parameter count ``n_params`` where the claim's builds do (``model_trial.budget_s``)."""
    if model:
        return None if dry else importlib.import_module(f"{__name__}.model_trial").budget_s(profile, claim_id,
                                                                                             n_params)
    if attention:
        return None if dry else KERNEL_TRIAL_WALL_BUDGET_S.get(profile, {}).get(claim_id)
    return (DRY_RUN_WALL_BUDGET_S if dry else WALL_BUDGET_S).get(profile, {}).get(claim_id)
