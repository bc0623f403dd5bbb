"""One margin per quantity (issue 38, finding 9), each argued once here; a claim module names it, never restates it.

A margin is the smallest effect a claim cares about (``harness.record.decision``'s rules take it with its reason).
Two criteria that read the same quantity on comparable runs read it against the same margin, so that one number
cannot pass under one claim and fall short under another.
"""
from __future__ import annotations

#: held-out cross-entropy (nats per target) between two trained arms. Argued once: 0.1 nats is exp(-0.1) = 0.905 of
#: the probability on the right target, the smallest quality gap the suite calls one; C3, R1 and C2 already judge
#: trained arms by it, and on key-value lookup it is 3.6% of the chance loss ln 16 (4.8% of ln 8)
HELD_OUT_LOSS = 0.1
HELD_OUT_LOSS_REASON = ("0.1 nats of held-out cross-entropy per target (exp(-0.1) = 0.905 of the probability on the "
                        "right target): the suite's smallest quality gap between trained arms "
                        "(harness.record.margins)")
