"""Q9: an open question answered yes."""
import pytest

pytestmark = pytest.mark.claim("Q9")


def test_q9_question(evidence, seeds):
    ev = evidence
    ev.claim("Q9", title="A fake open question", statement="Does the fake thing happen?", strength="open",
             kind="question")
    crit = ev.criterion("happens", prediction="it happens", threshold="-", test="none")
    crit.record(measured=len(seeds), passed=True)
    ev.metric("n_seeds", len(seeds))
