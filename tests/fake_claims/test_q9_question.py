"""Q9: an open question answered yes."""
import pytest

from harness.record import decision

pytestmark = pytest.mark.claim("Q9")


def test_q9_question(evidence, seeds):
    ev = evidence
    ev.claim("Q9", title="A fake open question", statement="Does the fake thing happen?", strength="open",
             kind="question")
    crit = ev.criterion("happens", rule=decision.exact(), prediction="it happens", metric="happens")
    crit.check(True, measured=len(seeds))
    ev.metric("n_seeds", len(seeds))
