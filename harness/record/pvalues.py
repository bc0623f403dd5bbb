"""What a judged criterion's ``p_value`` is, and how to print it (issue 63, item 4).

``harness.record.decision.judge`` stores one p per criterion as ``p_value``, and it is not always the same p:

* **passed**: the support p, ``p_support``: the one-sided p of "δ in the pass region" (for equivalence the larger
  TOST half), of the criterion's weakest part, unadjusted (support is an intersection-union test: no correction);
* **refuted**: the refutation p, Holm-adjusted: for a counted criterion over every part of every counted criterion
  of the claim (``p_refute``, the smallest adjusted p of its parts); for a premise or a reported criterion, decided
  alone, over its own parts only;
* **inconclusive** (leaning refuted included): the smaller of those two, ``min(p_support, p_refute)``: the
  refutation p where the interval leans towards refutation, the support p otherwise (on a tie, the support p).

``label`` names which one a record holds (results.json keeps it as ``p_label``; a file written before that field
is read by deriving it the same way), and ``text`` prints a p with as many significant digits as it takes to tell
it from its level, so that 0.049998 never reads as 0.05. The report, the terminal and the findings print both.
"""
from __future__ import annotations

import math
from typing import Any, Mapping

#: the three things a criterion's ``p_value`` can be (``label``)
SUPPORT = "support p (one-sided, unadjusted)"
REFUTATION_FAMILY = "refutation p (one-sided, Holm-adjusted over the claim's counted criteria)"
REFUTATION_ALONE = "refutation p (one-sided, Holm-adjusted over the criterion's own parts)"
LABELS = (SUPPORT, REFUTATION_FAMILY, REFUTATION_ALONE)

#: the significant digits a p is printed with at least (the report's ``fmt`` prints numbers to 4), and at most
DIGITS, MAX_DIGITS = 4, 9


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def label(criterion: Mapping[str, Any], counted: bool | None = None) -> str | None:
    """What ``criterion['p_value']`` is: one of ``LABELS``, None where it holds no p (an exact check, an unmeasured
    or unjudged criterion). The stored ``p_label`` where there is one; otherwise derived from the outcome and the
    stored ``p_support`` as ``decision.judge`` chose it. ``counted``: whether the criterion was in the claim's
    Holm family; None reads it from its role (a record without one is counted unless ``counts`` is false)."""
    if criterion.get("p_label"):
        return str(criterion["p_label"])
    p = criterion.get("p_value")
    if not _number(p):
        return None
    if counted is None:
        role = criterion.get("role")
        counted = role == "counted" if role else bool(criterion.get("counts", True))
    refutation = REFUTATION_FAMILY if counted else REFUTATION_ALONE
    outcome = criterion.get("outcome")
    if outcome == "passed":
        return SUPPORT
    if outcome == "refuted":
        return refutation
    support = criterion.get("p_support")        # inconclusive: min(p_support, p_refute), the support p on a tie
    return SUPPORT if not _number(support) or p == support else refutation


def text(p: Any, level: Any = None, digits: int = DIGITS) -> str:
    """``p`` to ``digits`` significant digits, or as many more (up to ``MAX_DIGITS``) as it takes for the printed
    number to differ from ``level``: 0.0499982 against 0.05 prints 0.049998, never 0.05. '—' for no number."""
    if not _number(p):
        return "—"
    p = float(p)
    if not _number(level):
        return f"{p:.{digits}g}"
    n = next((n for n in range(digits, MAX_DIGITS + 1) if float(f"{p:.{n}g}") != float(level)), MAX_DIGITS)
    return f"{p:.{n}g}"


def shown(criterion: Mapping[str, Any], digits: int = DIGITS) -> str:
    """'<label> = <p>' for a judged criterion's p, told from its level (``text``); '' where it holds none."""
    what = label(criterion)
    if what is None:
        return ""
    return f"{what} = {text(criterion.get('p_value'), criterion.get('level'), digits)}"
