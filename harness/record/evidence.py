"""What a claim module writes: the claim, its criteria (declared first), then measurements (issue 4).

Measurement records only. The verdict is ``harness.record.verdict``'s job and the page is
``harness.report``'s; the plugin hands an ``Evidence`` to each claim test as the ``evidence``
fixture and turns it into a results.json record with ``to_record()``.

Order is enforced because it is the point: a criterion declared after a measurement could have been
written to fit it (DEVELOPERS.md: "every criterion is stated in the module before the measurement").
"""
from __future__ import annotations

import inspect
import math
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from harness.record import decision, lock
from harness.record.results import to_jsonable
from harness.record.objections import OBJECTION_STATUSES, OBJECTIONS
from harness.record.verdict import COUNTED, KINDS, PREMISE, REPORTED, ROLES

GATE_DIRECTIONS = ("higher", "lower", "both")
_FILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_CLAIM_ID = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
#: the keyword arguments of ``Evidence.criterion`` a ``CRITERIA`` entry may give (``Evidence.declare``)
_CRITERION_FIELDS = frozenset({"rule", "prediction", "metric", "arms", "how", "role", "fast",
                               "falsified_by", "quote", "unquoted", "answers", "better"})
#: ``better``: which way of a two-arm comparison's metric is better ("none": a difference that is no quality, read
#: by its sign alone, like a lag or a slope's growth)
BETTER = ("lower", "higher", "none")
#: the text fields ``Evidence.declare`` formats with its run-time values
_FILLED_TEXT = ("prediction", "metric")


class EvidenceError(ValueError):
    """Misuse of the evidence API (wrong order, bad value); the message says what and where."""


@dataclass
class Criterion:
    """One pre-registered criterion: its rule declared first (``harness.record.decision``), then measured exactly once.

    The module hands over what it measured (per-seed samples, a fitted slope, or a deterministic check); the
    decision (interval, Holm level, outcome, firmness) is ``harness.record.verdict``'s, over the whole claim."""

    name: str
    prediction: str
    rule: decision.Rule
    metric: str
    arms: tuple[str, ...] = ()
    how: str = ""
    fast: bool = False
    claim_id: str = ""
    #: counted, premise or reported (``harness.record.verdict.ROLES``); the record's ``counts`` derives from it
    role: str = COUNTED
    #: the named faults (``model.faults.FAULTS``) under which this criterion must come out refuted (issue 38):
    #: not part of the fingerprint; ``harness.suite.sensitivity --criteria`` records whether it does
    falsified_by: tuple[str, ...] = ()
    #: the research note's own words that this criterion tests, verbatim (docs/NOTE-011.txt; issue 47): not part of
    #: the fingerprint; ``tests/claims/test_quotes.py`` finds each in the note
    quote: str = ""
    #: where no words of the note say what this criterion tests, why (issue 54: "an implementation check the note does
    #: not state"); given instead of ``quote``, never with it; not part of the fingerprint
    unquoted: str = ""
    #: a question's counted criterion: the case it answers for ("l2"); the record then gives one answer per case
    #: (``harness.record.verdict.answers``); not part of the fingerprint
    answers: str = ""
    #: which way of the metric is better for a two-arm comparison (``BETTER``; issue 54): what the findings read to
    #: say which arm is behind, never the metric's name; not part of the fingerprint (it names, it decides nothing)
    better: str = ""
    recorded: bool = False
    measurements: list[dict[str, Any]] = field(default_factory=list)
    exact_holds: bool | None = None
    exact_measured: Any = None
    unmeasured_reason: str = ""
    detail: str = ""
    #: what a kernel on trial breaks when this fails (issue 39: masks, head layout, scale, precision, tiling), and
    #: the smallest case that shows it; set with ``about``, shown first in the trial's summary
    kernel_property: str = ""
    counterexample: str = ""
    _on_record: Any = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise EvidenceError(f"{self.where}: role must be one of {', '.join(ROLES)}, got {self.role!r}")

    @property
    def counts(self) -> bool:
        """Whether the criterion decides the verdict (its role is counted): results.json's ``counts`` field."""
        return self.role == COUNTED

    @property
    def where(self) -> str:
        return f"criterion {self.name!r} of {self.claim_id or 'the claim'}"

    # -- recording: exactly one of these, once ------------------------------------------------------------------
    def compare(self, a: Any, b: Any, *, detail: str = "", invalid: str = "") -> "Criterion":
        """Two arms' per-seed values (paired when the rule says so): δ = mean(a - b). ``invalid``: why the
        comparison cannot be trusted (the criterion is then inconclusive, saying so)."""
        return self.compare_each({"": (a, b)}, detail=detail, invalid={"": invalid} if invalid else None)

    def compare_each(self, parts: Mapping[str, tuple[Any, Any]], *, detail: str = "",
                     invalid: Mapping[str, str] | None = None) -> "Criterion":
        """Several (a, b) comparisons that must each hold (e.g. at every d_k), keyed by a label; ``invalid``
        maps a label to why that part cannot be trusted."""
        invalid = invalid or {}
        return self._measured([decision.samples(a, b, paired=self.rule.paired, label=str(k),
                                                invalid=invalid.get(k, "")) for k, (a, b) in parts.items()], detail)

    def sample(self, x: Any, *, detail: str = "", over: str = "") -> "Criterion":
        """One quantity's per-seed values: δ = mean(x). ``over``: what a sample is where it is not a seed."""
        return self.sample_each({"": x}, detail=detail, over=over)

    def sample_each(self, parts: Mapping[str, Any], *, detail: str = "", over: str = "") -> "Criterion":
        return self._measured([decision.samples(x, label=str(k), over=over) for k, x in parts.items()], detail)

    def fit(self, fit: Any, *, detail: str = "") -> "Criterion":
        """A ``harness.measure.stats.SlopeFit`` (slope, stderr, df) as the quantity."""
        return self.fit_each({"": fit}, detail=detail)

    def fit_each(self, parts: Mapping[str, Any], *, detail: str = "", n_seeds: int | None = None) -> "Criterion":
        return self._measured([decision.from_fit(f, label=str(k), n=n_seeds) for k, f in parts.items()], detail)

    def measure(self, measurements: list[dict[str, Any]], *, detail: str = "") -> "Criterion":
        """Measurements built with ``harness.record.decision.samples`` / ``estimate`` / ``from_fit`` (mixed sources)."""
        return self._measured(list(measurements), detail)

    def unmeasured(self, reason: str) -> "Criterion":
        """Record that the criterion could not be measured in this run, and why (fewer than 2 usable seeds, a
        measure that never varied): it is inconclusive, and the report says why."""
        if not isinstance(reason, str) or not reason.strip():
            raise EvidenceError(f"{self.where}: unmeasured() needs the reason")
        self._start()
        self.measurements, self.unmeasured_reason = [], reason
        return self._finish(f"not measured: {reason}")

    def check(self, holds: bool, *, measured: Any = None, detail: str = "") -> "Criterion":
        """An ``exact`` criterion's deterministic outcome."""
        if self.rule.kind != "exact":
            raise EvidenceError(f"{self.where}: check() is for exact rules; a {self.rule.kind} criterion is "
                                "measured with compare/sample/fit")
        self._start()
        self.exact_holds = _as_bool(holds, f"{self.where}: holds")
        self.exact_measured = to_jsonable(measured)
        return self._finish(detail)

    def about(self, property: str, counterexample: str = "") -> "Criterion":
        """The property of a kernel this criterion checks and, where it fails, its smallest counterexample (neither
        enters the fingerprint nor the decision: they name what failed)."""
        self.kernel_property, self.counterexample = str(property), str(counterexample)
        return self

    def _measured(self, measurements: list[dict[str, Any]], detail: str) -> "Criterion":
        if self.rule.kind == "exact":
            raise EvidenceError(f"{self.where}: an exact criterion is recorded with check(holds)")
        self._start()
        if not measurements:
            raise EvidenceError(f"{self.where}: no measurement handed over")
        self.measurements = to_jsonable(measurements)
        return self._finish(detail)

    def _start(self) -> None:
        if self.recorded:
            raise EvidenceError(f"{self.where} is already recorded; record each criterion once")

    def _finish(self, detail: str) -> "Criterion":
        self.detail, self.recorded = str(detail), True
        if self._on_record is not None:
            self._on_record(self)
        return self

    # -- output ---------------------------------------------------------------------------------------------------
    def definition(self) -> dict[str, Any]:
        """What the fingerprint covers: changing any of it is a new criterion, not a new measurement. The role
        enters only as ``counts`` (true for a counted criterion), plus ``role`` for a premise, so that a counted
        or reported criterion's definition, and its fingerprint, are what they were before roles existed."""
        r = self.rule
        return {"name": self.name, "kind": r.kind, "metric": self.metric, "arms": list(self.arms), "lo": r.lo,
                "hi": r.hi, "margin": r.margin, "paired": r.paired, "alpha": decision.ALPHA,
                "counts": self.counts, "fast": self.fast,
                **({"role": PREMISE} if self.role == PREMISE else {}),
                **({"refute_below": r.refute_below, "refute_above": r.refute_above} if r.has_gap else {})}

    def to_dict(self) -> dict[str, Any]:
        """The record before judging; ``harness.record.verdict.judge_record`` adds outcome, ci, p_value, firmness."""
        test = decision.test_text(self.rule, self.measurements)
        return {"name": self.name, "prediction": self.prediction, "kind": self.rule.kind,
                "margin": self.rule.margin, "margin_reason": self.rule.reason,
                "threshold": decision.threshold_text(self.rule), "metric": self.metric, "arms": list(self.arms),
                "test": f"{self.how}; {test}" if self.how else test, "rule": self.rule.as_dict(),
                "measurements": self.measurements, "exact_holds": self.exact_holds,
                "unmeasured": self.unmeasured_reason or None,
                "measured": self.exact_measured, "passed": False, "refuted": False, "outcome": None,
                "recorded": self.recorded, "counts": self.counts, "role": self.role, "fast": self.fast,
                "falsified_by": list(self.falsified_by), "detail": self.detail,
                **({"quote": self.quote} if self.quote else {}),
                **({"unquoted": self.unquoted} if self.unquoted else {}),
                **({"answers": self.answers} if self.answers else {}),
                **({"better": self.better} if self.better else {}),
                **({"property": self.kernel_property} if self.kernel_property else {}),
                **({"counterexample": self.counterexample} if self.counterexample else {}),
                "fingerprint": decision.fingerprint(self.definition())}


def _as_bool(value: Any, where: str) -> bool:
    if hasattr(value, "item"):  # numpy / torch booleans
        value = value.item()
    if not isinstance(value, bool):
        raise EvidenceError(f"{where} must be a bool, got {value!r}")
    return value


class Evidence:
    """The record one claim test writes to; see docs/ARCHITECTURE.md for the calling pattern."""

    def __init__(self, report_dir: Path, claim_id: str | None = None, fast: bool = False) -> None:
        self.report_dir = Path(report_dir)
        self.fast = fast
        self.id: str | None = claim_id
        self.title = self.statement = self.strength = self.limitation = ""
        self.kind = "claim"
        self.declared = False
        self.criteria: list[Criterion] = []
        self.metrics: dict[str, float | int | None] = {}
        self.figures: list[str] = []
        self.tables: dict[str, list[dict[str, Any]]] = {}
        self.notes: list[str] = []
        self.objection_answers: dict[str, dict[str, str]] = {}
        self.gates: dict[str, dict[str, Any]] = {}
        self.headline_metric: str | None = None
        self.seedless = ""              # why this claim used none of the run's seeds ('' when it did)
        self.nothing_counted = ""       # why this claim counts no criterion in this run ('' when it counts some)
        self.at_init = ""               # what this claim read at random init beside trained weights (issue 55)
        self.at_init_label = ""         # its verdict's label where not "at init" (trained here from init)
        self._first_measurement: str | None = None

    # -- declaration -------------------------------------------------------------------------
    def claim(self, id: str, *, title: str, statement: str, strength: str, kind: str = "claim",
              limitation: str = "") -> "Evidence":
        """Declare the claim: id, a short title, the statement quoted from the note, the note's strength."""
        if self.declared:
            raise EvidenceError(f"claim {self.id!r} is already declared in this test")
        if not isinstance(id, str) or not _CLAIM_ID.fullmatch(id):
            raise EvidenceError(f"claim id must look like 'C4' (letters, digits, _ or -), got {id!r}")
        if self.id is not None and id != self.id:
            raise EvidenceError(f"ev.claim({id!r}) in a test marked pytest.mark.claim({self.id!r}); make them agree")
        if kind not in KINDS:
            raise EvidenceError(f"claim {id}: kind must be one of {', '.join(KINDS)}, got {kind!r}")
        for fname, value in (("title", title), ("statement", statement), ("strength", strength)):
            if not isinstance(value, str) or not value.strip():
                raise EvidenceError(f"claim {id}: {fname} must be a non-empty string")
        self.id, self.title, self.statement, self.strength = id, title, statement, strength
        self.kind, self.limitation, self.declared = kind, str(limitation), True
        return self

    def criterion(self, name: str, *, rule: decision.Rule, prediction: str, metric: str,
                  arms: tuple[str, ...] | list[str] = (), how: str = "", role: str = COUNTED, fast: bool = False,
                  falsified_by: tuple[str, ...] | list[str] | str = (), quote: str = "",
                  unquoted: str = "", answers: str = "", better: str = "") -> Criterion:
        """Declare a criterion before measuring: its ``rule`` (``harness.record.decision``: kind, margin and the reason
        for it), what it predicts, the ``metric`` it reads and the ``arms`` it compares (a - b), and optionally
        ``how`` the samples are made. ``fast=True``: one of the criteria a ``--fast`` run keeps (issue 10). Parts
        handed over with ``compare_each`` / ``sample_each`` (the same comparison on two tasks, at several d_k) are
        replications under one rule: passed only if every part passes, refuted if any part is (issue 26).

        ``role`` (issue 38; ``harness.record.verdict.ROLES``), what the criterion does for the verdict:

        * ``"counted"`` (the default): decides the verdict, in the claim's Holm family;
        * ``"premise"``: a condition the test needs (the variance law C4 builds on; "one head averages" for C5).
          Decided alone, outside the Holm family and the claim's firmness, and checked first: if a premise of the
          claim does not pass (in a ``--fast`` run: a fast one), the claim is inconclusive, not testable here, and
          its record says which premise and why (``not_testable``);
        * ``"reported"``: shown and decided alone; never enters the verdict.

        The record's ``counts`` field (results.json's contract) is derived: true for a counted criterion.

        ``falsified_by`` (issue 38): the named faults (``model.faults.FAULTS``) under which a counted criterion
        must come out *refuted*, the fault that shows it can fail; ``"none"`` for a question's criterion that the
        unfaulted model already answers "no". ``tests/claims/test_criteria.py`` requires one for every counted
        criterion of a claim module, and ``python -m harness.suite.sensitivity --criteria`` records the outcome.

        ``quote`` (issue 47): the words of the research note this criterion tests, verbatim (any substring of
        ``docs/NOTE-011.txt``, whitespace aside); every premise and counted criterion of a claim module gives one
        (``tests/claims/test_quotes.py``), or instead ``unquoted``: why no words of the note say what it tests
        (issue 54: "an implementation check the note does not state"), never both. Either is shown above the
        criterion and kept outside the fingerprint; the lock freezes it (``harness.record.lock.row``).

        ``better`` (issue 54): for a comparison of two arms, which way of the metric is better, "lower" (a loss, a
        time) or "higher" (an accuracy), or "none" (a difference that is no quality: read by its sign). The findings
        read it to say which arm trails; ``tests/claims/test_criteria.py`` requires it of every two-arm comparison.

        ``answers`` (issue 47): for a question's counted criterion, the case it answers for (a variant: "l2"). A
        question whose counted criteria name cases gets one answer per case in its record (``answers``: yes, no or
        inconclusive, each with its firmness) beside the pooled verdict; kept outside the fingerprint.
        """
        self._require_claim("ev.criterion")
        if self._first_measurement is not None:
            raise EvidenceError(
                f"claim {self.id}: criterion {name!r} declared after measuring ({self._first_measurement}); "
                "declare every criterion before the first measurement")
        if not isinstance(name, str) or not name.strip():
            raise EvidenceError(f"claim {self.id}: criterion name must be a non-empty string")
        if any(c.name == name for c in self.criteria):
            raise EvidenceError(f"claim {self.id}: criterion {name!r} declared twice")
        if not isinstance(rule, decision.Rule):
            raise EvidenceError(f"claim {self.id}: criterion {name!r}: rule must be a harness.record.decision rule "
                                f"(superiority, non_inferiority, equivalence, band, exact), got {rule!r}")
        for fname, value in (("prediction", prediction), ("metric", metric)):
            if not isinstance(value, str) or not value.strip():
                raise EvidenceError(f"claim {self.id}: criterion {name!r}: {fname} must be a non-empty string")
        if not isinstance(quote, str):
            raise EvidenceError(f"claim {self.id}: criterion {name!r}: quote must be the note's words, a string")
        if not isinstance(unquoted, str) or (quote.strip() and unquoted.strip()):
            raise EvidenceError(f"claim {self.id}: criterion {name!r}: unquoted must be a string, the reason no words "
                                "of the note are quoted, given instead of quote, never with it")
        if better not in ("",) + BETTER:
            raise EvidenceError(f"claim {self.id}: criterion {name!r}: better must be one of {', '.join(BETTER)}, "
                                f"got {better!r}")
        if not isinstance(answers, str):
            raise EvidenceError(f"claim {self.id}: criterion {name!r}: answers must name a case, a string")
        if role not in ROLES:
            raise EvidenceError(f"claim {self.id}: criterion {name!r}: role must be one of {', '.join(ROLES)}, "
                                f"got {role!r}")
        crit = Criterion(name=name, prediction=prediction, rule=rule, metric=metric, arms=tuple(arms), how=how,
                         role=role, fast=bool(fast), claim_id=self.id or "",
                         falsified_by=(falsified_by,) if isinstance(falsified_by, str) else tuple(falsified_by),
                         quote=" ".join(quote.split()), unquoted=" ".join(unquoted.split()), answers=answers.strip(),
                         better=better, _on_record=lambda c: self._measuring(f"criterion {c.name!r} recorded"))
        self.criteria.append(crit)
        return crit

    def declare(self, criteria: Mapping[str, Mapping[str, Any]], *, fast: bool = False,
                how: str | Mapping[str, str] | None = None, skip: Iterable[str] = (),
                **fill: Any) -> dict[str, Criterion]:
        """Declare a claim module's ``CRITERIA`` (name -> ``ev.criterion``'s keyword arguments: ``rule``,
        ``prediction``, ``metric`` and optionally ``arms``, ``how``, ``role`` (or ``counts``), ``fast``), in their
        order, before measuring; returns name -> ``Criterion`` in that order.

        ``fast=True`` (a ``--fast`` run): only the criteria marked ``fast``. ``skip``: names this run does not
        measure (e.g. a part the profile leaves out). ``how``: how the samples are made, known only at run time:
        one text for every criterion, or name -> text (replacing that criterion's own ``how``). ``fill``: values
        known only at run time (the profile's grids): every ``{field}`` in a ``prediction`` or ``metric`` is
        formatted with them (write a literal brace as ``{{``), and a value given as a callable (a rule whose
        margin is a profile number) is called with the ``fill`` values its parameters name.
        """
        names = set(criteria)
        skipped = set(skip)
        hows = how if isinstance(how, Mapping) else {}
        for where, given in (("skip", skipped), ("how", set(hows))):
            if given - names:
                raise EvidenceError(f"claim {self.id}: ev.declare {where} names no declared criterion: "
                                    f"{', '.join(sorted(given - names))}")
        out = {}
        for name, spec in criteria.items():
            if not isinstance(spec, Mapping):
                raise EvidenceError(f"claim {self.id}: criterion {name!r} must be a dict of ev.criterion's keyword "
                                    f"arguments (claims/test_c3_softmax_saturation.py's CRITERIA), got {spec!r}")
            if name in skipped or (fast and not spec.get("fast")):
                continue
            unknown = set(spec) - _CRITERION_FIELDS
            if unknown:
                raise EvidenceError(f"claim {self.id}: criterion {name!r}: unknown field(s) "
                                    f"{', '.join(sorted(unknown))}; a criterion is declared with "
                                    f"{', '.join(sorted(_CRITERION_FIELDS))}")
            kwargs = {k: _filled(self.id, name, k, v, fill) for k, v in spec.items()}
            if isinstance(how, str):
                kwargs["how"] = how
            elif name in hows:
                kwargs["how"] = hows[name]
            out[name] = self.criterion(name, **kwargs)
        rows_dir = os.environ.get(lock.DECLARE_ONLY_ENV)
        if rows_dir:        # collecting the code's criteria for the lock (python -m harness.report lock): stop here
            import pytest

            lock.write_declared(rows_dir, self.id or "", [c.to_dict() for c in out.values()])
            pytest.skip(f"{lock.DECLARE_ONLY_ENV}: criteria declared, nothing measured")
        return out

    def gate(self, metric: str, *, direction: str, tolerance: float, relative: bool = False) -> None:
        """Gate CI on ``metric``: with --baseline, moving beyond ``tolerance`` in the bad direction fails.

        ``direction``: "higher" (higher is better), "lower" (lower is better), or "both" (any move is
        bad). ``tolerance`` is absolute, or a fraction of the baseline's magnitude with ``relative=True``
        (for ratios such as R3's, which vary in scale).
        """
        self._require_claim("ev.gate")
        if direction not in GATE_DIRECTIONS:
            raise EvidenceError(f"claim {self.id}: gate {metric!r}: direction must be one of "
                                f"{', '.join(GATE_DIRECTIONS)}, got {direction!r}")
        tol = to_jsonable(tolerance)
        if isinstance(tol, bool) or not isinstance(tol, (int, float)) or tol < 0:
            raise EvidenceError(f"claim {self.id}: gate {metric!r}: tolerance must be a finite number >= 0, "
                                f"got {tolerance!r}")
        self.gates[metric] = {"direction": direction, "tolerance": float(tol), "relative": bool(relative)}

    # -- measurements ------------------------------------------------------------------------
    def metric(self, name: str, value: Any) -> float | int | None:
        """A named number (the names issues give are a contract). Non-finite values are kept as null."""
        self._require_claim("ev.metric")
        if not isinstance(name, str) or not name.strip():
            raise EvidenceError(f"claim {self.id}: metric name must be a non-empty string")
        if name in self.metrics:
            raise EvidenceError(f"claim {self.id}: metric {name!r} recorded twice")
        v = to_jsonable(value)
        if isinstance(v, bool):
            v = int(v)
        if v is not None and not isinstance(v, (int, float)):
            raise EvidenceError(f"claim {self.id}: metric {name!r} must be a number, got {value!r}")
        if v is None and not (isinstance(value, float) or _is_nonfinite(value)):
            raise EvidenceError(f"claim {self.id}: metric {name!r} must be a number, got {value!r}")
        self._measuring(f"metric {name!r}")
        self.metrics[name] = v
        return v

    def table(self, name: str, data: Any) -> None:
        """A per-run table (pandas DataFrame, list of dicts, or dict of columns), stored as records."""
        self._require_claim("ev.table")
        self._check_file_name("table", name)
        if name in self.tables:
            raise EvidenceError(f"claim {self.id}: table {name!r} recorded twice")
        if hasattr(data, "to_dict") and hasattr(data, "columns"):  # pandas DataFrame
            import pandas as pd

            if not isinstance(data.index, pd.RangeIndex) or data.index.name is not None:
                data = data.reset_index()
            records = data.to_dict(orient="records")
        elif isinstance(data, dict):
            columns = list(data)
            n = len(data[columns[0]]) if columns else 0
            if any(len(data[c]) != n for c in columns):
                raise EvidenceError(f"claim {self.id}: table {name!r}: columns have different lengths")
            records = [{c: data[c][i] for c in columns} for i in range(n)]
        elif isinstance(data, (list, tuple)) and all(isinstance(r, dict) for r in data):
            records = list(data)
        else:
            raise EvidenceError(f"claim {self.id}: table {name!r} must be a DataFrame, a list of dicts "
                                f"or a dict of columns, got {type(data).__name__}")
        self._measuring(f"table {name!r}")
        self.tables[name] = to_jsonable(records)

    def figure(self, name: str, fig: Any) -> str:
        """Save a matplotlib figure as ``<report-dir>/figures/<ID>/<name>.png``; returns the relative path."""
        self._require_claim("ev.figure")
        self._check_file_name("figure", name)
        rel = f"figures/{self.id}/{name}.png"
        if rel in self.figures:
            raise EvidenceError(f"claim {self.id}: figure {name!r} recorded twice")
        path = self.report_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        self._measuring(f"figure {name!r}")
        fig.savefig(path, format="png", dpi=100, bbox_inches="tight")
        if "matplotlib.pyplot" in sys.modules:  # free pyplot's reference, or long runs leak figures
            sys.modules["matplotlib.pyplot"].close(fig)
        self.figures.append(rel)
        return rel

    def note(self, text: str) -> None:
        """Free text shown in the claim's report section (not a measurement: allowed any time)."""
        self.notes.append(str(text))

    def objection(self, key: str, status: str, how: str) -> None:
        """Answer one of a reviewer's first objections (``harness.record.objections.OBJECTIONS``: tests_claim, tuned_lr,
        ceiling, selection, second_task) for this claim: ``status`` answered / open / not applicable, ``how`` one line that
        says how (or why not). Firmness is answered by the harness. The report shows every row."""
        self._require_claim("ev.objection")
        if key not in OBJECTIONS or key == "firmness":
            raise EvidenceError(f"ev.objection: unknown objection {key!r}; one of "
                                f"{', '.join(k for k in OBJECTIONS if k != 'firmness')} (firmness is the harness's)")
        if status not in OBJECTION_STATUSES:
            raise EvidenceError(f"ev.objection({key!r}): status must be one of {', '.join(OBJECTION_STATUSES)}, "
                                f"got {status!r}")
        if not isinstance(how, str) or not how.strip():
            raise EvidenceError(f"ev.objection({key!r}): say how (or why not) in one line")
        self.objection_answers[key] = {"status": status, "how": how.strip()}

    def answer_objections(self, answers: Mapping[str, tuple[str, str]]) -> None:
        """``ev.objection`` for each ``key: (status, how)`` of a module-level table (a claim module keeps its
        answers beside its criteria)."""
        for key, (status, how) in answers.items():
            self.objection(key, status, how)

    def headline(self, metric: str) -> None:
        """Name the metric shown in the summary table and terminal line."""
        self._require_claim("ev.headline")
        self.headline_metric = metric

    def no_seeds(self, why: str) -> None:
        """Say that this claim used none of the run's seeds (deterministic checks; timing rounds), and why: its
        record then lists no seeds (the header and the report show none for it)."""
        if not isinstance(why, str) or not why.strip():
            raise EvidenceError(f"claim {self.id}: no_seeds() needs the reason")
        self.seedless = why

    def counts_nothing(self, why: str) -> None:
        """Say why this claim counts no criterion in this run (its rows are premises and reported ones, or a trial
        keeps only reported ones): it then reads "not tested here" with this reason (``verdict.NOT_TESTED``). A
        claim that counts something in this run is judged as ever; the reason is then unused."""
        if not isinstance(why, str) or not why.strip():
            raise EvidenceError(f"claim {self.id}: counts_nothing() needs the reason")
        self.nothing_counted = " ".join(why.split())

    def read_at_init(self, what: str, label: str = "") -> None:
        """Say that this claim read a model at random init where trained weights were on trial beside it
        (``--model-weights``), and what it read: its record's ``at_init`` carries the sentence, and its verdict
        line in the terminal, the report and the findings says "at init", or ``label`` where given (a claim that
        trained the architecture here from a random init says "trained from init": ``at_init_label``)."""
        if not isinstance(what, str) or not what.strip():
            raise EvidenceError(f"claim {self.id}: read_at_init() needs what was read")
        self.at_init = " ".join(what.split())
        self.at_init_label = " ".join(label.split())

    # -- output ------------------------------------------------------------------------------
    def to_record(self) -> dict[str, Any]:
        """The claim's results.json record, before the plugin adds verdict, duration and regression."""
        notes = list(self.notes)
        if self.headline_metric is not None and self.headline_metric not in self.metrics:
            notes.append(f"headline metric {self.headline_metric!r} was never recorded")
        return {
            "id": self.id, "title": self.title, "statement": self.statement, "strength": self.strength,
            "kind": self.kind, "limitation": self.limitation,
            "criteria": [c.to_dict() for c in self.criteria], "metrics": dict(self.metrics),
            "figures": list(self.figures), "tables": dict(self.tables), "notes": notes,
            "headline": self.headline_metric, "gates": dict(self.gates), "fast": self.fast,
            "objection_answers": dict(self.objection_answers),
            **({"seedless": self.seedless} if self.seedless else {}),
            **({"nothing_counted": self.nothing_counted} if self.nothing_counted else {}),
            **({"at_init": self.at_init} if self.at_init else {}),
            **({"at_init_label": self.at_init_label} if self.at_init and self.at_init_label else {}),
        }

    # -- helpers -----------------------------------------------------------------------------
    def _require_claim(self, what: str) -> None:
        if not self.declared:
            raise EvidenceError(f"{what} before ev.claim(...): declare the claim first")

    def _measuring(self, what: str) -> None:
        if self._first_measurement is None:
            self._first_measurement = what

    def _check_file_name(self, what: str, name: str) -> None:
        if not isinstance(name, str) or not _FILE_NAME.fullmatch(name):
            raise EvidenceError(f"claim {self.id}: {what} name must be letters, digits, '_', '-' or '.' "
                                f"(it becomes a file name), got {name!r}")


def _filled(claim: str | None, name: str, field: str, value: Any, fill: Mapping[str, Any]) -> Any:
    """One field of a ``CRITERIA`` entry with ``Evidence.declare``'s run-time values in: a callable called with the
    values its parameters name, a prediction or metric formatted with them (only when any are given)."""
    where = f"claim {claim}: criterion {name!r}: {field}"
    if callable(value):
        params = inspect.signature(value).parameters.values()
        missing = [p.name for p in params if p.name not in fill and p.default is p.empty
                   and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        if missing:
            raise EvidenceError(f"{where} needs {', '.join(missing)}: pass it to ev.declare")
        return value(**{p.name: fill[p.name] for p in params if p.name in fill
                        and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)})
    if field in _FILLED_TEXT and fill and isinstance(value, str):
        try:
            return value.format(**fill)
        except (KeyError, IndexError) as exc:
            raise EvidenceError(f"{where} names {exc} but ev.declare was given only "
                                f"{', '.join(sorted(fill))}") from None
    return value


def _is_nonfinite(value: Any) -> bool:
    try:
        return not math.isfinite(float(value))
    except (TypeError, ValueError):
        return False
