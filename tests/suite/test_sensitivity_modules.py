"""The real claim modules under each fault (issue 20): a catch and an off-target cell per fault, at smoke budgets.

For every fault in ``model.faults.FAULTS`` one pytest subprocess runs two claim modules with the suite's own
command for a cell of the matrix (``harness.suite.sensitivity.run_fast``: ``--fast --profile smoke --inject-fault NAME``,
master seed 0), and the test reads its results.json:

* the **catch**: a claim the fault is about (``EXPECTED_CATCHERS``) must come out ``refuted``, and the refutation
  must come from the fast, counted criterion named in ``CELLS`` (the one that exists for this fault; ``CELLS`` is
  read from each catcher's profile file, ``FAST_CELLS``);
* the **off-target cell**: a claim the fault is not about, and not a listed side effect, must keep its no-fault
  verdict, ``supported`` (the no-fault verdict of every claim in the matrix: ``python -m harness.suite.sensitivity``
  fails unless each is supported at master seeds 0, 1 and 2).

Each of the three outcomes is asserted firm too (``assert_firm``, issue 36: firmness >= 0.95, or an exact check's
outcome, which has none): at master seed 0 the trained ones are C1's ``generalises/reverse`` under uniform_attention
(0.994 on ATen's DEFAULT path, 0.996 on the pinned AVX2) and C2's ``attention_learns`` under local_window; the rest
are M0's and R1's exact checks.

So a module that loses its fast criterion, marks the wrong one fast, stops counting it or stops feeding it from
the faulty model fails here, in ``pytest tests``, at the budgets the suite really runs. The cells are cheap ones
(M0 and R1 run in seconds; R1 catches both scale faults: since issue 38 R2's and C4's fast criteria are
reported, identities at init that count for neither claim, and since issue 47 C3's too, so they catch nothing,
skip under --fast and are off the list), except that uniform_attention is caught by C1 and local_window by C2:
these are their claims' own faults, and the cells replace private, smaller budgets the claims' unit tests would
train at. An off-target claim must count a fast criterion and be neither a catcher nor a declared side effect of
its fault (R1 is a side effect of four): C1 and C5, which train, stand where C3 stood. Times are in the README.
The full matrix (every claim under every fault) is ``python -m harness.suite.sensitivity --jobs 2``, run by CI.

The runs go two at a time (each trains on one thread), the longest first; ``-m "not subprocess"`` leaves them
out of a local run.
"""
from __future__ import annotations

import concurrent.futures

import pytest

from harness import profiles
from harness.suite import sensitivity
from model.faults import FAULTS
from tests.conftest import assert_firm

#: fault -> (catcher, its fast criterion the fault refutes, off-target claim); longest runs first. Generated from the
#: claims' profile files (FAST_CELLS beside REFUTED_BY_FAULTS), as docs/fault-matrix.md's table of them is.
CELLS: dict[str, tuple[str, str, str]] = sensitivity.FAST_CELLS
NO_FAULT_VERDICT = "supported"
JOBS = 2


def test_every_fault_has_a_catch_and_an_off_target_cell():
    """Every fault a fast criterion catches; the others (additive_no_tanh) are training criteria's falsifiers,
    proven by ``--criteria`` (tests/suite/test_falsifiers.py)."""
    from harness.record.verdict import COUNTED, role_of

    assert set(CELLS) == {f for f in FAULTS if sensitivity.EXPECTED_CATCHERS[f]}
    assert len(CELLS) == len(profiles.FAST_CELLS), "two profile files declare a cell for the same fault"
    for fault, (catcher, criterion, off_target) in CELLS.items():
        assert catcher in sensitivity.EXPECTED_CATCHERS[fault], fault
        assert off_target not in sensitivity.EXPECTED_CATCHERS[fault] and off_target != catcher, fault
        assert (fault, off_target) not in sensitivity.SIDE_EFFECTS, fault
        declared = sensitivity.claim_criteria(catcher, sensitivity.ROOT / "claims")
        spec = declared.get(criterion, declared.get(criterion.split("/")[0]))    # generalises/<task>: generalises
        assert spec is not None and role_of(spec) == COUNTED, (fault, catcher, criterion)
        assert fault in spec.get("falsified_by", ()), (fault, catcher, criterion)


@pytest.fixture(scope="module")
def fault_runs(request, tmp_path_factory):
    """{fault: future of results.json's claim records} for the faults whose test is selected, JOBS at a time."""
    selected = {getattr(item, "callspec", None) and item.callspec.params.get("fault")
                for item in request.session.items if item.path == request.path}
    with concurrent.futures.ThreadPoolExecutor(JOBS) as pool:
        runs = {fault: pool.submit(sensitivity.run_fast, [catcher, off_target], fault=fault, master_seed=0,
                                   report_dir=tmp_path_factory.mktemp(fault), claims_dir=sensitivity.ROOT / "claims")
                for fault, (catcher, _, off_target) in CELLS.items() if fault in selected}
        concurrent.futures.wait(runs.values())
    return runs


@pytest.mark.subprocess
@pytest.mark.parametrize("fault", list(CELLS))
def test_the_claim_about_the_fault_is_refuted_and_an_other_keeps_its_verdict(fault, fault_runs):
    catcher, criterion, off_target = CELLS[fault]
    claims = fault_runs[fault].result()
    caught = claims.get(catcher, {})
    assert caught.get("verdict") == "refuted", (catcher, caught.get("verdict"), _outcomes(caught))
    assert_firm(caught, "refuted")
    by_name = {c["name"]: c for c in caught["criteria"]}
    assert criterion in by_name, (catcher, sorted(by_name))
    assert by_name[criterion]["outcome"] == "refuted", _outcomes(caught)
    assert_firm(by_name[criterion], "refuted")
    assert by_name[criterion]["fast"] and by_name[criterion]["counts"], by_name[criterion]
    kept = claims.get(off_target, {})
    assert kept.get("verdict") == NO_FAULT_VERDICT, (off_target, kept.get("verdict"), _outcomes(kept))
    assert_firm(kept, NO_FAULT_VERDICT)


def _outcomes(record):
    return {c["name"]: (c.get("outcome"), c.get("detail")) for c in record.get("criteria", [])}
