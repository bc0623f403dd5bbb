"""One margin per quantity (issue 38.9): the smallest effect the claims care about, argued once.

A margin is the smallest difference a criterion calls an effect. Where two claims read the same quantity (held-out
loss on the same sweep runs), they use the same margin, so the same number cannot pass in one claim and be "smaller
than the margin" in another. A claim module takes ``margin.value`` for its rule and ``margin.reason`` for the
rule's reason; a criterion whose margin is not a quantity listed here (steps to a target, slots resolved, a
question's ratio) argues its own beside its rule.
"""
from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Margin:
    value: float
    unit: str
    reason: str


#: held-out cross-entropy, nats per prediction, on every task the claims train (C1, C2, C3, C4, R1, R3, Q1). A
#: model that gives the right answer at least exp(-0.05) = 95% of the probability another gives it is not worse in
#: any way a user of either would notice; a larger gap is one. The tasks' chance losses lie between ln 2 (0.69,
#: C2's binary match) and ln 20 (3.0, C1's transduction), so 0.05 is under a thirteenth of the smallest. The same
#: margin serves both ways: "not worse by more than" (non-inferiority) and "better by more than" (superiority).
HELD_OUT_LOSS = Margin(0.05, "nats", "0.05 nats of held-out cross-entropy per prediction: the model gives the right "
                                     "answer at least exp(-0.05) = 95% of the probability the other does; the "
                                     "smallest quality gap the suite calls one (harness.record.margins)")

#: the log of a ratio of held-out losses: near the loss floor a difference in nats says nothing (two arms at 0.001
#: and 0.02 nats differ by 0.019 < 0.05, yet one is 20x worse), so a quality comparison whose arms can reach the
#: floor is also read on the log of their ratio; ln 2 is "at most twice the loss".
LOSS_RATIO = Margin(math.log(2), "ln of a loss ratio", "ln 2: a held-out loss at most twice the other's (geometric "
                                                       "mean over seeds); near the loss floor, where 0.05 nats cannot "
                                                       "tell a model 20x worse (harness.record.margins)")
