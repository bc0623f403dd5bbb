"""The paper's words for what a results record names in the suite's own (issue 63): arms, tasks, quantities, units.

One table each, read by ``harness.report.sentences``; nothing here decides. An arm, a task or a part label the
tables do not know is said as it is, with its underscores turned into spaces, so that a user's kernel or model
still reads; ``tests/report/test_sentences.py`` holds every committed record's rows free of internal ids.
"""
from __future__ import annotations

import re
from typing import Any, Mapping

from harness.record import replication
from harness.record import verdict as verdicts

#: arms as the paper (and the note) names them; "alpha = x" is the scale 1/d_k^x of C4's family
ARMS = {
    "scaled": "1/√d_k", "default": "1/√d_k", "alpha = 0.5": "1/√d_k", "alpha = 0.5 (1/sqrt(d_k))": "1/√d_k",
    "unscaled": "no scaling", "alpha = 0": "no scaling", "alpha = 0 (unscaled)": "no scaling",
    "alpha = 1": "1/d_k", "alpha = 1 (1/d_k)": "1/d_k", "alpha = 0.75 (d_k^-0.75)": "1/d_k^0.75",
    "alpha = 0.75": "1/d_k^0.75", "alpha = 0.25": "1/d_k^0.25",
    "the other alpha": "the best other scale",
    "additive": "additive attention", "additive_chunked": "chunked additive attention",
    "dot_matmul": "matmul dot-product attention", "dot_sdpa": "PyTorch's fused dot-product attention",
    "h = 1": "one head", "h = 2": "two heads", "h = 4": "four heads", "h = 8": "eight heads",
    "h = too_many_heads": "too many heads",
    "lstm": "the LSTM", "recurrent": "the LSTM", "transformer": "the Transformer",
    "self_attention": "self-attention", "deep conv": "the dilated convolution",
    "l2_scaled": "L2 QK-norm with 1/√d_k", "l2_unscaled": "L2 QK-norm without 1/√d_k",
    "rmsnorm_scaled": "RMSNorm QK-norm with 1/√d_k", "rmsnorm_unscaled": "RMSNorm QK-norm without 1/√d_k",
    "layernorm_scaled": "LayerNorm QK-norm with 1/√d_k", "layernorm_unscaled": "LayerNorm QK-norm without 1/√d_k",
    "l2_gain_sqrt_dk_unscaled": "L2 QK-norm with its gain started at √d_k, without 1/√d_k",
    "at large d_k": "at large d_k", "at small d_k": "at small d_k",
}

#: tasks and part-label words
TASKS = {
    "kv_lookup": "key-value lookup", "delayed_copy": "delayed copy", "reverse": "string reversal",
    "number_words_de": "English number words into German", "dilated_conv_k2": "the dilated convolution",
    "conv_k3": "the kernel-3 convolution", "conv_k5": "the kernel-5 convolution", "self_attention": "self-attention",
    "recurrent": "the LSTM", "position": "the position binding", "token": "the token binding",
    "torch_default": "PyTorch's default init", "xavier": "Xavier init", "fixed d_model": "a fixed d_model",
}

#: Q1's cases (``answers``) in words
CASES = {"l2": "L2 QK-norm", "rmsnorm": "RMSNorm QK-norm", "layernorm": "LayerNorm QK-norm"}

#: the quantity a metric measures, by the first pattern its text matches: (pattern, words, unit); the unit says how a
#: value is written: "nats", "steps", "x" (a ratio, the metric a natural log of it), "x2" (a log2 of it), "" (none)
QUANTITIES = (
    (r"^\(deep conv minus self-attention steps", "the dilated convolution's lag behind self-attention in steps to "
     "95% accuracy", "steps"),
    (r"^\(contiguous conv minus self-attention steps", "the contiguous convolution's lag behind self-attention in "
     "steps to 95% accuracy", "steps"),
    (r"^held-out loss \(nats\): unscaled - additive", "additive attention's advantage over no scaling in held-out "
     "loss", "nats"),
    (r"^ln training wall time", "training wall time to 95% exact match", "x"),
    (r"^ln held-out test cross-entropy", "held-out loss", "x"),
    (r"^speed of convergence", "held-out loss averaged over the learning curve", "nats"),
    (r"log seconds per call", "time per forward and backward call", "x"),
    (r"peak-memory ratio", "peak memory", ""),
    (r"steps to 0\.95|steps to target", "steps to 95% accuracy", "steps"),
    (r"^log2 independence ratio", "Var(q·k) against what independent q and k components give", "x2"),
    (r"^log2 of \(Var q_i", "the q and k components' variance against init", "x2"),
    (r"^\(LSTM minus self-attention held-out loss", "attention's advantage over the LSTM in held-out loss", "nats"),
    (r"held-out (test )?cross-entropy|held-out loss|held-out cross-entropy", "held-out loss", "nats"),
    (r"effective resolution", "effective resolution (the share of bound slots told apart)", ""),
    (r"query-row entropy", "attention entropy per query", "nats"),
    (r"held-out exact match", "held-out exact match", ""),
    (r"held-out accuracy minus chance", "held-out accuracy above chance", ""),
    (r"log-log slope of \|dy_t/dx", "the log-log slope of the gradient signal against distance at init", ""),
    (r"log-log slope of Var\(logits", "the log-log slope of the scaled logits' variance against d_k", ""),
    (r"log-log slope of Var\(q\.?k\)", "the log-log slope of Var(q·k) against d_k", ""),
    (r"log-log slope of the (init )?logit std", "the log-log slope of the logit spread against d_k", ""),
    (r"log-log slope against d_k", "the log-log slope against d_k of the softmax's entropy and gradient", ""),
    (r"^ln mean \|dL/dlogits\|", "the softmax's gradient early in training, as a log ratio", "x"),
    (r"saturated-row fraction", "the slope of the share of saturated softmax rows against ln d_k", ""),
    (r"fraction of h = 4 seeds", "the share of four-head models whose heads cover three or more slots", ""),
    (r"slope of effective resolution against log2 h", "the slope of effective resolution against log2 h", ""),
    (r"max relative error against SDPA", "the largest relative error against PyTorch's SDPA", ""),
    (r"Spearman rho\(entropy", "the rank correlation of entropy with resolution", ""),
    (r"Spearman rho\(sink", "the rank correlation of the attention sink with resolution", ""),
    (r"entropy / ln n", "entropy as a share of its maximum", ""),
    (r"Var\(q\.k / sqrt\(d_k\)\)", "Var(q·k/√d_k)", ""),
)

#: phrases of the suite's own texts (a criterion's prediction) in the paper's words, applied by ``say``
PHRASES = ((r"\bunscaled dot\b", "the dot product with no scaling"), (r"\bscaled dot\b", "the dot product with 1/√d_k"),
           (r"1/sqrt\(d_k\)", "1/√d_k"), (r"\bunscaled\b", "with no scaling"), (r"\bq\.k\b", "q·k"))


def say(text: str) -> str:
    """A suite text in the paper's words (``PHRASES``), identifiers as words."""
    for pattern, said in PHRASES:
        text = re.sub(pattern, said, text)
    return plain(text)


#: a snake_case identifier, the suite's own dialect; ``d_k`` is the paper's
INTERNAL_ID = re.compile(r"\b(?!d_k\b)[a-z][a-z0-9]*_[a-z0-9_]+\b")


def arm(name: str | None) -> str:
    """An arm in the paper's words; an unknown one with its underscores as spaces."""
    text = str(name or "")
    if text in ARMS:
        return ARMS[text]
    if text.startswith(replication.ONE_OF):        # pooled: each replicate picked its own (C4's best other alpha)
        return " or ".join(arm(a) for a in text[len(replication.ONE_OF):].split(" | ")) + " (each replicate's own)"
    m = re.fullmatch(r"alpha = ([0-9.]+)(?: .*)?", text)
    if m:
        return f"1/d_k^{m.group(1)}"
    return plain(text)


def quantity(metric: str | None) -> tuple[str, str]:
    """(words, unit) for a metric's text (``QUANTITIES``); an unknown metric: its first clause, plain, no unit."""
    text = str(metric or "")
    for pattern, words, unit in QUANTITIES:
        if re.search(pattern, text):
            return words, unit
    first = re.split(r"[,;(]", text, 1)[0].strip()
    return plain(first) or "the metric", ("nats" if re.search(r"\bnats?\b", text) else "")


def where(label: str | None) -> str:
    """A part label in words: 'kv_lookup d_k=512' -> 'on key-value lookup at d_k 512'; 'dilated_conv_k2 (7 layers)
    d=64 vs d=4' -> 'for the dilated convolution (7 layers) at distance 64 against distance 4'."""
    text = str(label or "").strip()
    if not text:
        return ""
    if " vs " in text:
        left, _, right = text.partition(" vs ")
        return f"{where(left)} against {where(right).removeprefix('at ')}"
    words, params = [], []
    for tok in re.findall(r"\([^)]*\)|\S+", text):
        if "=" in tok and not tok.startswith("("):
            name, _, value = tok.partition("=")
            params.append(f"{'distance' if name == 'd' else name} {value}")
        else:
            words.append(tok)
    phrase = " ".join(words)
    for key in sorted(TASKS, key=len, reverse=True):
        phrase = re.sub(rf"(?<![\w/]){re.escape(key)}(?![\w])", TASKS[key], phrase)
    phrase = plain(phrase)
    lead = "for" if phrase.startswith("the ") else "on"
    out = f"{lead} {phrase}" if phrase else ""
    if params:
        out += (" at " if out else "at ") + ", ".join(params)
    return out


def plain(text: str) -> str:
    """Underscores to spaces (an identifier said as words)."""
    return INTERNAL_ID.sub(lambda m: m.group(0).replace("_", " "), text)


def leaning(claim: Mapping[str, Any]) -> str:
    """How an inconclusive claim whose interval lies in its refutation region, short of Holm, is labelled: 'leaning
    refuted', or for a question (whose refutation is the answer no) 'leaning no'."""
    return "leaning no" if claim.get("kind") == "question" else verdicts.LEANING_REFUTED


def short_of(claim: Mapping[str, Any]) -> str:
    """What Holm's correction left such a claim short of: 'refutation', or for a question 'answering no'."""
    return "answering no" if claim.get("kind") == "question" else "refutation"
