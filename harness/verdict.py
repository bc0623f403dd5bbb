"""Criteria -> verdict, and nothing else (issue 4).

Works on criterion *records* (the dicts in results.json), not on live Evidence objects, so the same
rule judges a fresh run, a merged xdist run and a stored baseline. Measurement lives in
``harness.evidence``, rendering in ``harness.report``.

The rule (docs/ARCHITECTURE.md): ``supported`` if every counted criterion passed; ``refuted`` if a
counted criterion was recorded ``refuted=True`` (its prediction contradicted with significance);
``inconclusive`` otherwise, including a criterion declared but never recorded and a claim with no
counted criterion at all (a check that cannot fail supports nothing); ``error`` if the test crashed.
Questions (Q1-Q3) read ``answered yes`` / ``answered no`` / ``inconclusive at this scale``.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

KINDS = ("claim", "recommendation", "question")
SUPPORTED, INCONCLUSIVE, REFUTED, ERROR = "supported", "inconclusive", "refuted", "error"
CLAIM_VERDICTS = (SUPPORTED, INCONCLUSIVE, REFUTED, ERROR)
QUESTION_LABELS = {SUPPORTED: "answered yes", INCONCLUSIVE: "inconclusive at this scale",
                   REFUTED: "answered no", ERROR: ERROR}
ALL_VERDICTS = CLAIM_VERDICTS + tuple(v for v in QUESTION_LABELS.values() if v != ERROR)
_CANONICAL = {**{v: v for v in CLAIM_VERDICTS}, **{label: v for v, label in QUESTION_LABELS.items()}}
# Worse is lower: the order the regression gate uses (supported > inconclusive > refuted > error).
_RANK = {SUPPORTED: 3, INCONCLUSIVE: 2, REFUTED: 1, ERROR: 0}


def counted(criteria: Iterable[Mapping[str, Any]], fast_only: bool = False) -> list[Mapping[str, Any]]:
    """The criteria that enter the verdict: ``counts`` true, and in a --fast run only the fast ones."""
    return [c for c in criteria if c.get("counts", True) and (c.get("fast", False) or not fast_only)]


def decide(criteria: Sequence[Mapping[str, Any]], *, kind: str = "claim", errored: bool = False,
           fast_only: bool = False) -> str:
    """The verdict for a claim's criteria records (see the module docstring for the rule)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    if errored:
        outcome = ERROR
    else:
        judged = counted(criteria, fast_only)
        if any(c.get("refuted") and c.get("recorded", True) for c in judged):
            outcome = REFUTED
        elif judged and all(c.get("recorded", True) and c.get("passed") is True for c in judged):
            outcome = SUPPORTED
        else:
            outcome = INCONCLUSIVE
    return QUESTION_LABELS[outcome] if kind == "question" else outcome


def canonical(verdict: str | None) -> str | None:
    """supported/inconclusive/refuted/error for any verdict label (a question's included); None stays None."""
    if verdict is None:
        return None
    try:
        return _CANONICAL[verdict]
    except KeyError:
        raise ValueError(f"unknown verdict {verdict!r}; valid: {', '.join(ALL_VERDICTS)}") from None


def rank(verdict: str) -> int:
    return _RANK[canonical(verdict)]


def test_passes(verdict: str, kind: str) -> bool:
    """The pytest outcome without a baseline: a claim passes iff supported; a question unless it errored."""
    if kind == "question":
        return canonical(verdict) != ERROR
    return canonical(verdict) == SUPPORTED


test_passes.__test__ = False  # a helper, not a pytest test


def is_worse(now: str, base: str, kind: str) -> bool:
    """True when ``now`` is a worse verdict than ``base``.

    For a question, yes and no are both answers, so only an error counts as worse (a changed answer
    is reported, not gated).
    """
    if kind == "question":
        return canonical(now) == ERROR and canonical(base) != ERROR
    return rank(now) < rank(base)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_fmt(v) for v in value) + "]"
    return str(value)


def explain(record: Mapping[str, Any]) -> str:
    """A few lines that say why a claim got its verdict (the pytest failure text, the terminal)."""
    fast_only = bool(record.get("fast"))
    judged = {id(c) for c in counted(record.get("criteria", []), fast_only)}
    lines = [f"{record.get('id')} {record.get('verdict')}: {record.get('statement') or record.get('title') or ''}".rstrip()]
    for c in record.get("criteria", []):
        if not c.get("recorded", True):
            state = "NEVER RECORDED"
        elif c.get("refuted"):
            state = "REFUTED"
        else:
            state = "passed" if c.get("passed") else "not passed"
        extra = [f"measured {_fmt(c.get('measured'))}", f"threshold {_fmt(c.get('threshold'))}"]
        if c.get("ci") is not None:
            extra.append(f"CI {_fmt(c['ci'])}")
        if c.get("p_value") is not None:
            extra.append(f"p={_fmt(c['p_value'])}")
        counts = "" if id(c) in judged else " (not counted)"
        lines.append(f"  - {c.get('name')}: {state}{counts}; " + ", ".join(extra))
        if c.get("detail"):
            lines.append(f"      {c['detail']}")
    if not judged:
        lines.append("  (no counted criterion: nothing can support this claim)")
    if record.get("error"):
        lines.append(f"  error: {record['error']}")
    return "\n".join(lines)


# Practices in the record that this note bears on, and the claims whose verdicts decide them.
PRACTICES = (
    {"id": "SOTA-050", "practice": "scale attention weights by 1/sqrt(head_dim)",
     "claims": ("C3", "C4", "R1"), "note_disposition": "confirmed — C3, C4"},
)


def practice_disposition(claim_ids: Sequence[str], verdicts: Mapping[str, str | None]) -> str:
    """confirmed if every deciding claim is supported; not confirmed if any is refuted; else open.

    'not run' when none of them ran in this session.
    """
    found = [canonical(verdicts.get(cid)) for cid in claim_ids]
    if all(v is None for v in found):
        return "not run"
    if any(v == REFUTED for v in found):
        return "not confirmed"
    if all(v == SUPPORTED for v in found):
        return "confirmed"
    return "open"


def practice_dispositions(verdicts: Mapping[str, str | None]) -> list[dict[str, Any]]:
    """One row per practice: the note's disposition beside this run's, with the deciding verdicts."""
    rows = []
    for p in PRACTICES:
        rows.append({**p, "verdicts": {cid: verdicts.get(cid) or "not run" for cid in p["claims"]},
                     "disposition": practice_disposition(p["claims"], verdicts)})
    return rows
