"""A user's parallel corpus for C1 (d): where it comes from, whether the run uses it, and its BLEU.

The paper's base configuration is trained on a corpus the user gives through the environment (a TSV of
source<TAB>target lines, or two aligned files), never one the suite downloads. ``corpus_status`` says whether
(d) runs and why not; a dry run without a corpus runs on ``harness.data.language.generated_parallel_corpus`` so that the
loader, tokenisation, decoding and BLEU paths still run. ``measure_corpus_bleu`` trains one seed and scores
greedy translations of held-out pairs (sacrebleu 13a), with a bootstrap standard error over test sentences.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch

from model import ModelConfig, param_count

from harness.measure.probes import corpus_bleu, greedy_texts
from harness.profiles import DRY_RUN_CORPUS_PAIRS
from harness.data.language import ParallelCorpus, generated_parallel_corpus
from harness.train.loop import TrainConfig, build_for_task, train

CORPUS_ENV_TSV = "ATTN_CLAIMS_CORPUS_TSV"
CORPUS_ENV_SRC = "ATTN_CLAIMS_CORPUS_SRC"
CORPUS_ENV_TGT = "ATTN_CLAIMS_CORPUS_TGT"
CORPUS_HELP = (f"give a parallel corpus with {CORPUS_ENV_TSV}=pairs.tsv (source<TAB>target per line) or "
               f"{CORPUS_ENV_SRC}=train.en {CORPUS_ENV_TGT}=train.de (aligned lines), and run "
               f"`pytest claims/test_c1_attention_suffices.py --profile full` (a GPU: --device cuda)")


def corpus_paths(env: dict[str, str] | None = None) -> dict[str, Path] | None:
    """The user's corpus from the environment: {"tsv": path} or {"src": path, "tgt": path}; None if unset.
    A half-given or missing path is a ValueError naming the variable."""
    env = os.environ if env is None else env
    tsv, src, tgt = env.get(CORPUS_ENV_TSV), env.get(CORPUS_ENV_SRC), env.get(CORPUS_ENV_TGT)
    if tsv:
        paths = {"tsv": Path(tsv)}
    elif src or tgt:
        if not (src and tgt):
            raise ValueError(f"{CORPUS_ENV_SRC} and {CORPUS_ENV_TGT} go together; got only "
                             f"{CORPUS_ENV_SRC if src else CORPUS_ENV_TGT}")
        paths = {"src": Path(src), "tgt": Path(tgt)}
    else:
        return None
    for key, p in paths.items():
        if not p.is_file():
            var = {"tsv": CORPUS_ENV_TSV, "src": CORPUS_ENV_SRC, "tgt": CORPUS_ENV_TGT}[key]
            raise ValueError(f"{var}={p}: no such file")
    return paths


def corpus_status(block: dict[str, Any], dry: bool = False) -> tuple[bool, str]:
    """(whether (d) runs, why / why not). A dry run without a user's corpus runs on a generated one."""
    if not block.get("corpus"):
        return False, f"not run: it belongs to the full profile (--profile full); {CORPUS_HELP}"
    paths = corpus_paths()
    if paths is None and dry:
        return True, (f"dry run on {DRY_RUN_CORPUS_PAIRS} generated sentence pairs (the loader, tokenisation and "
                      f"BLEU; no user corpus given); {CORPUS_HELP}")
    if paths is None:
        return False, f"not run: no corpus given; {CORPUS_HELP}"
    return True, f"run on {', '.join(str(p) for p in paths.values())}"


def cpu_has_native_bf16() -> bool:
    """Whether this CPU runs bf16 natively (PyTorch's dispatch level AVX512 or above); else bf16 is emulated."""
    return torch.backends.cpu.get_cpu_capability() not in ("DEFAULT", "NO AVX", "AVX2")


def load_corpus(paths: dict[str, Path], spec: dict[str, Any]) -> ParallelCorpus:
    kw = {k: spec[k] for k in ("heldout_fraction", "max_len", "lowercase", "min_freq", "max_vocab", "shared_vocab")
          if k in spec}
    if "tsv" in paths:
        return ParallelCorpus.from_tsv(paths["tsv"], **kw)
    return ParallelCorpus.from_files(paths["src"], paths["tgt"], **kw)


def measure_corpus_bleu(task: ParallelCorpus, mcfg: ModelConfig, tcfg: TrainConfig, seed: int, test_size: int,
                        progress: Callable[[str], Any] | None = None) -> dict[str, Any]:
    """Train ``mcfg`` on the corpus and score greedy translations of up to ``test_size`` held-out pairs against
    their raw target lines (sacrebleu's 13a tokenisation, detokenised hypotheses), with its standard error over
    200 resamples of the test sentences (the interval of a single seed)."""
    if progress:
        progress(f"corpus seed {seed}: {task.params()}", force=True)
    model = build_for_task("transformer", task, mcfg, seed)
    run = train(model, task, tcfg, seed, progress=progress)
    test = task.heldout(min(test_size, len(task.heldout_index)))
    hyps = greedy_texts(model, test, task.detokenize, max_len=task.max_tgt_len, device=tcfg.device, chunk=128)
    refs = task.references(test)
    boot = [corpus_bleu([hyps[i] for i in ix], [refs[i] for i in ix])
            for ix in np.random.default_rng(seed).integers(0, len(hyps), (200, len(hyps)))]
    return {"seed": seed, "bleu": corpus_bleu(hyps, refs), "bleu_se_bootstrap": float(np.std(boot, ddof=1)),
            "test_pairs": len(test), "steps_run": run.steps_run, "train_time_s": run.train_time_s,
            "params": param_count(model), **task.params(), "example": f"{hyps[0]!r} (ref {refs[0]!r})"}


def write_generated_corpus(path: Path, n_pairs: int = DRY_RUN_CORPUS_PAIRS) -> dict[str, Path]:
    """A dry run's stand-in corpus: ``n_pairs`` generated pairs written in the user's TSV format to ``path``, so
    that they go through the user's loader; returns its ``corpus_paths``."""
    path.write_text("".join(f"{src}\t{tgt}\n" for src, tgt in generated_parallel_corpus(n_pairs)), encoding="utf-8")
    return {"tsv": path}
