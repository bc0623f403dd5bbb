"""Every claim module's declared criteria, scanned (issue 38), including the criteria a given profile or a
``--fast`` run never declares."""
from __future__ import annotations

import importlib
import inspect

import pytest

from harness.record import decision
from tests.conftest import REPO

MODULES = sorted(p.stem for p in (REPO / "claims").glob("test_*_*.py"))
#: the tables a claim module declares its criteria in: the project's model, a kernel on trial (probes, training),
#: a model on trial
TABLES = ("CRITERIA", "KERNEL_CRITERIA", "KERNEL_TRAINING_CRITERIA", "MODEL_CRITERIA")


def declared_rules(module) -> list[tuple[str, decision.Rule]]:
    """(criterion name, rule) for every entry of ``TABLES``; a rule given as a callable of the profile's numbers is
    called with a stand-in for each (0.1, the size of every margin it takes)."""
    out = []
    for table in TABLES:
        for name, spec in getattr(module, table, {}).items():
            rule = spec["rule"]
            if callable(rule) and not isinstance(rule, decision.Rule):
                rule = rule(**{p: 0.1 for p in inspect.signature(rule).parameters})
            out.append((name, rule))
    return out


@pytest.mark.parametrize("stem", MODULES)
def test_every_one_sided_band_says_direction_or_level(stem):
    """Finding 38.4: a one-sided band that predicts a direction with a margin needs its null (only the far side of
    no effect refutes); one that predicts a level says so. A band that says neither would refute an effect in the
    predicted direction that is merely smaller than the margin."""
    module = importlib.import_module(f"claims.{stem}")
    undeclared = [name for name, rule in declared_rules(module) if rule.one_sided_band and rule.level is None]
    assert undeclared == [], f"{stem}: give null= or level=True to " + ", ".join(undeclared)


@pytest.mark.parametrize("stem", MODULES)
def test_a_kernel_criterion_names_gallery_kernels_as_its_falsifiers(stem):
    """A kernel criterion's ``falsified_by`` names kernels of ``examples.attention`` (a kernel on trial has no model
    fault to inject); tests/kernel/test_gallery.py requires each to refute it. (M0's, R1's and R2's kernel criteria
    name none yet: the gallery's bugs refute them claim by claim, ``examples.attention.BUGGY``.)"""
    from examples.attention import BUGGY, CORRECT

    module = importlib.import_module(f"claims.{stem}")
    for name, spec in getattr(module, "KERNEL_CRITERIA", {}).items():
        named = set(spec.get("falsified_by", ()))
        unknown = sorted(named - set(CORRECT) - set(BUGGY))
        assert not unknown, f"{stem}/{name}: falsified_by names {unknown}, not a gallery kernel"


def test_a_directional_band_refutes_only_beyond_its_null():
    falls = decision.band(None, -0.1, null=0.0, reason="slope")
    small = decision.decide_alone(falls, [decision.samples([-0.04, -0.05, -0.06, -0.05])])
    wrong = decision.decide_alone(falls, [decision.samples([0.04, 0.05, 0.06, 0.05])])
    assert small["outcome"] == "inconclusive" and wrong["outcome"] == "refuted"
    level = decision.band(None, -0.1, level=True, reason="a level")
    assert decision.decide_alone(level, [decision.samples([-0.04, -0.05, -0.06, -0.05])])["outcome"] == "refuted"


@pytest.mark.parametrize("stem", MODULES)
def test_every_counted_criterion_names_the_fault_that_refutes_it(stem):
    """Mechanism 2 of issue 38: a counted criterion names in ``falsified_by`` the faults (``model.faults.FAULTS``)
    under which it must come out refuted; "none" (the unfaulted model) only for a question's criterion, whose
    'no' is a reading, not a failure. ``python -m harness.suite.sensitivity --criteria`` records whether it is
    (tests/suite/test_falsifiers.py). A criterion nothing can refute is a premise or reported, never counted."""
    from harness.record.verdict import COUNTED, role_of
    from model.faults import FAULTS

    module = importlib.import_module(f"claims.{stem}")
    question = module.CLAIM_ID.startswith("Q") if hasattr(module, "CLAIM_ID") else stem.startswith("test_q")
    allowed = set(FAULTS) | ({"none"} if question else set())
    for name, spec in module.CRITERIA.items():
        named = tuple(spec.get("falsified_by", ()))
        assert set(named) <= allowed, f"{stem}/{name}: falsified_by names {sorted(set(named) - allowed)}"
        if role_of(spec) == COUNTED:
            assert named, f"{stem}/{name} is counted but names no falsifier"
        else:
            assert not named, f"{stem}/{name} is not counted: a falsifier proves nothing about the verdict"


@pytest.mark.parametrize("stem", MODULES)
def test_every_counted_model_criterion_names_the_planted_bug_that_refutes_it(stem):
    """Issue 40: a model on trial's counted criterion names in ``falsified_by`` the example builders
    (``examples/models``) under which it must come out refuted; tests/model_trial/test_examples.py runs them."""
    from harness.record.verdict import COUNTED, role_of

    examples = {p.stem for p in (REPO / "examples" / "models").glob("*.py") if not p.stem.startswith("_")}
    module = importlib.import_module(f"claims.{stem}")
    for name, spec in getattr(module, "MODEL_CRITERIA", {}).items():
        named = tuple(spec.get("falsified_by", ()))
        assert set(named) <= examples, f"{stem}/{name}: falsified_by names {sorted(set(named) - examples)}"
        assert bool(named) == (role_of(spec) == COUNTED), f"{stem}/{name}: a falsifier iff counted"


@pytest.mark.parametrize("stem", MODULES)
def test_every_premise_and_counted_criterion_quotes_the_note(stem):
    """Mechanism 1 of issue 47: a premise or counted criterion names the words of the research note it tests
    (``quote``), in every table (``TABLES``); tests/claims/test_quotes.py finds each in docs/NOTE-011.txt. Issue 54:
    or, where no words of the note say what it tests, gives why instead (``unquoted``): exactly one of the two."""
    from harness.record.verdict import REPORTED, role_of

    module = importlib.import_module(f"claims.{stem}")
    given = {f"{table}/{name}": [f for f in ("quote", "unquoted") if str(spec.get(f) or "").strip()]
             for table in TABLES for name, spec in getattr(module, table, {}).items() if role_of(spec) != REPORTED}
    wrong = [name for name, fields in given.items() if len(fields) != 1]
    assert wrong == [], f"{stem}: give exactly one of quote= (the note's words it tests) or unquoted= (why none) to " \
        + ", ".join(wrong)


@pytest.mark.parametrize("stem", MODULES)
def test_every_two_arm_comparison_declares_which_way_is_better(stem):
    """Issue 54: the findings say which arm trails from what a criterion declares, never from its metric's name.
    Every comparison of two arms (superiority, non-inferiority, equivalence) in every table declares ``better``:
    "lower", "higher", or "none" (a difference that is no quality, read by its sign)."""
    from harness.record.evidence import BETTER

    module = importlib.import_module(f"claims.{stem}")
    rules = dict((f"{name}", rule) for name, rule in declared_rules(module))
    missing = [f"{table}/{name}" for table in TABLES for name, spec in getattr(module, table, {}).items()
               if len(spec.get("arms") or ()) >= 2
               and rules[name].kind in ("superiority", "non_inferiority", "equivalence")
               and spec.get("better") not in BETTER]
    assert missing == [], f"{stem}: declare better= (one of {', '.join(BETTER)}) on " + ", ".join(missing)
