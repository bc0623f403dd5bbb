"""The plugin starts the longest claim modules first (issue 18): xdist hands the next unit to whichever worker is
free, so a long module collected last would end the run alone on one worker."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from harness.session import longest_first


def _item(nodeid: str, claim: str | None = None, group: str | None = None):
    marks = {"claim": pytest.mark.claim(claim).mark if claim else None,
             "xdist_group": pytest.mark.xdist_group(group).mark if group else None}
    return SimpleNamespace(nodeid=nodeid, get_closest_marker=lambda name: marks.get(name))


def test_longest_first_with_a_group_as_one_unit_and_unbudgeted_items_last():
    budgets = {"C1": 100.0, "C2": 50.0, "C3": 30.0, "C4": 40.0, "R1": 1.0, "M0": 5.0}
    items = [_item("claims/test_c1.py::t", "C1"), _item("claims/test_c2.py::t", "C2"),
             _item("claims/test_c3.py::t", "C3", "sweep"), _item("claims/test_c4.py::t", "C4", "sweep"),
             _item("claims/test_m0.py::t", "M0"), _item("tests/test_x.py::t"),
             _item("claims/test_r1.py::t", "R1", "sweep"), _item("claims/test_q9.py::t", "Q9")]
    order = [it.nodeid for it in longest_first(items, budgets.get)]
    # the sweep group (30 + 40 + 1 = 71 s) is one unit, kept in its own order, between C1 (100) and C2 (50)
    assert order == ["claims/test_c1.py::t", "claims/test_c3.py::t", "claims/test_c4.py::t", "claims/test_r1.py::t",
                     "claims/test_c2.py::t", "claims/test_m0.py::t", "tests/test_x.py::t", "claims/test_q9.py::t"]


def test_a_claim_with_two_tests_puts_its_time_on_the_first():
    # C1's second test (corpus BLEU) skips unless the full profile has a corpus. Split evenly, C1's main test (the
    # module's whole time) counted half: the kernel trial of e3f5c13 planned it beside R1 (156 + 74 s on one worker,
    # C5's 94 s on the other)
    budgets = {"C1": 100.0, "C5": 60.0}
    items = [_item("claims/test_c1.py::main", "C1"), _item("claims/test_c1.py::corpus", "C1"),
             _item("claims/test_c5.py::t", "C5")]
    order = [it.nodeid for it in longest_first(items, budgets.get)]
    assert order == ["claims/test_c1.py::main", "claims/test_c5.py::t", "claims/test_c1.py::corpus"]


def test_without_budgets_the_collection_order_stands():
    items = [_item(f"claims/test_{c}.py::t", c) for c in ("C1", "C2", "R3")]
    assert longest_first(items, lambda cid: None) == items
