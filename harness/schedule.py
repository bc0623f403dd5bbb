"""Which xdist worker runs which claim: a plan made before the run from the profile's wall budgets.

pytest-xdist's ``loadgroup`` scheduler hands a worker the next unit (an ``xdist_group``, or one test) whenever the
worker has two tests or fewer pending. A worker near the end of one long unit therefore takes the next units of the
queue, and they wait behind its long tests while the other worker runs dry. In the standard run of 6c2dc50 the
sweep worker (C3, C4, R1, R3, then Q1, Q2, Q3) was busy 3000 s and the other 2585 s; replaying that run's module
times under xdist's rule gives 3028 s, and under the plan below 2796 s.

``PlannedGroupScheduling`` is ``loadgroup`` with a plan: before the first test, the units in decreasing expected
time each go to the worker with the least planned time (longest processing time first). A worker takes its own
plan's units in order, as xdist would. When its plan is spent and it is about to run dry (one test pending: an xdist
worker holds its last test until it has a second one or is told to stop), it takes the smallest unit left in
another worker's plan, so a misjudged time costs one small unit's wait, not a long one's. The expected times are
the plugin's (``harness.profiles.wall_budget``), a claim's on its first test (``first_test_carries``); a test
without one counts 0.

xdist runs on the controller, which never collects: a test's claim is read from its module's name
(``claims/test_c3_*.py`` -> C3), the convention every claim module follows.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Iterable

from xdist.scheduler import LoadGroupScheduling

_CLAIM_MODULE = re.compile(r"(?:^|/)test_([a-z]\d+)_[^/]*\.py::")


def claim_of(nodeid: str) -> str | None:
    """The claim id of a claim module's test from its node id (``claims/test_c3_x.py::test_y`` -> ``C3``)."""
    m = _CLAIM_MODULE.search(nodeid)
    return m.group(1).upper() if m else None


def first_test_carries(claims: Iterable[str | None], claim_seconds: Callable[[str], float | None]
                       ) -> list[float | None]:
    """Per test (its claim id, in collection order), the expected seconds: a claim's whole time on its first test,
    0 on its others (C1's second test, the corpus BLEU, skips unless the full profile has a corpus), None for a test
    that is no claim's or whose claim has no time."""
    seen: set[str] = set()
    out: list[float | None] = []
    for cid in claims:
        t = claim_seconds(cid) if cid else None
        out.append(None if t is None else (0.0 if cid in seen else float(t)))
        if cid:
            seen.add(cid)
    return out


def expected_seconds(nodeids: Iterable[str], claim_seconds: Callable[[str], float | None]) -> dict[str, float]:
    """Each test's expected seconds (``first_test_carries``; its claim read from its node id), 0 for no time."""
    nodeids = list(nodeids)
    return {n: t or 0.0 for n, t in zip(nodeids, first_test_carries(map(claim_of, nodeids), claim_seconds))}


def plan(units: dict[str, float], workers: list[Any]) -> dict[Any, list[str]]:
    """Longest processing time first: the units (name -> expected seconds; ties keep their order) in decreasing
    time, each to the worker with the least planned time (then the fewest units, then the first), so units without
    a time alternate."""
    loads = {w: 0.0 for w in workers}
    out: dict[Any, list[str]] = {w: [] for w in workers}
    for name in sorted(units, key=lambda u: -units[u]):
        w = min(workers, key=lambda k: (loads[k], len(out[k])))
        out[w].append(name)
        loads[w] += units[name]
    return out


class PlannedGroupScheduling(LoadGroupScheduling):
    """``loadgroup`` following a longest-processing-time plan (module docstring)."""

    def __init__(self, config: Any, log: Any = None, claim_seconds: Callable[[str], float | None] = lambda c: None):
        super().__init__(config, log)
        self.claim_seconds = claim_seconds
        self.plan: dict[Any, list[str]] | None = None
        self.unit_seconds: dict[str, float] = {}

    def _make_plan(self) -> None:
        per_test = expected_seconds(self.collection or [], self.claim_seconds)
        self.unit_seconds = {scope: sum(per_test.get(n, 0.0) for n in tests) for scope, tests in self.workqueue.items()}
        self.plan = plan(self.unit_seconds, list(self.assigned_work))
        self.log("plan:", {str(getattr(w, "gateway", w)): units for w, units in self.plan.items()})

    def _own(self, node: Any) -> list[str]:
        """The units of ``node``'s plan still waiting (the plan is made at the first call, once xdist has queued
        every unit)."""
        if self.plan is None:
            self._make_plan()
        return [s for s in self.plan.get(node, []) if s in self.workqueue]

    def _assign_work_unit(self, node: Any) -> None:
        """xdist's assignment of the queue's first unit, with the planned unit (or, the plan spent, the smallest
        left) moved to the front first."""
        own = self._own(node)
        scope = own[0] if own else min(self.workqueue, key=lambda s: self.unit_seconds.get(s, 0.0))
        self.workqueue.move_to_end(scope, last=False)
        super()._assign_work_unit(node)

    def _reschedule(self, node: Any) -> None:
        if node.shutting_down:
            return
        if not self.workqueue:
            node.shutdown()
            return
        # its own plan: xdist's rule (more work at two pending tests); another's: only when about to run dry
        if self._pending_of(self.assigned_work[node]) > (2 if self._own(node) else 1):
            return
        self._assign_work_unit(node)
