"""Decision rules the criteria's fingerprints do not hold, frozen in the criteria lock (issue 63, items 5 and 6).

A criterion's fingerprint holds its kind, metric, arms, bounds and margin (``decision.fingerprint``). Some rules
that decide a claim live in how its measurement is built instead: which foil voids a comparison, how a censored run
enters it, how a tied rate is chosen, whether a control counts. Each is stated here once, in words, and
``harness.record.lock`` hashes this table with the criteria and budgets, so a rule changed after an outcome was seen
means a new lock and new seeds, like a changed margin. The code that applies each rule names its key.

Every rule here was decided after the committed standard run at lock 157b2b70e7a6 (master seed 675646) was seen;
docs/revisions.md lists it with that outcome, and the replicated run decides on the lock that holds it.
"""
from __future__ import annotations

from harness.record import replication

#: C2 (f): the live-foil rule for the LSTM interaction (``harness.study.path_length.interaction_measurements``)
C2_LIVE_FOIL = (
    "A comparison of attention's advantage over the LSTM at a long distance against the advantage at the short "
    "distance (4) is never testable, and holds no slot in Holm's family, only where the LSTM is dead at the short "
    "distance (at chance, on every seed and at every rate tried): the control that it learns at all is missing. An "
    "LSTM alive at the short distance and at chance at the long one is a live comparison: that is what the claim "
    "predicts.")

#: C2 (d), (d'): unreached runs (``decision.censor_bound``, ``path_length.censored_part``)
C2_CENSORED = (
    "A run that never reaches 0.95 accuracy within the budget is censored: its steps are at least the budget + 1, "
    "not equal to it. A part whose per-seed values hold a censored run entering with a minus sign reads them as "
    "upper bounds (it can refute a growing lag, never support one); with a plus sign, as lower bounds (it can "
    "support, never refute); censored on both sides, it is not testable.")

#: C2 (d): the rate of each (architecture, distance) cell (``path_length.DEEP_BY``)
C2_TIE = (
    "Each cell's learning rate is the one with the fewest mean steps to 0.95 validation accuracy on its two tuning "
    "seeds; a tie goes to the lower rate (the validation loss at the stop no longer breaks it: every tied run stops "
    "at the same accuracy).")

#: C2 (d'): the contiguous-conv control (``contiguous_conv_lag_grows``)
C2_CONTROL = (
    "The contiguous convolution's growing lag (kernel 5 at distances 4 and 8) stays a premise, not a counted "
    "criterion: at distances 4 and 8 it shows that the steps-to-0.95 instrument sees a lag that grows with the "
    "path, which a positive control is for; a control can void the claim and never support it. The ConvS2S words "
    "are tested at long range by the dilated stack's counted comparison.")

#: Q1's counted criteria (``claims/test_q1_qk_norm.py``: ``ANSWER_RULE``)
Q1_ANSWER = (
    "Q1 answers yes where the interval of (held-out loss without 1/sqrt(d_k) minus with it) lies above the 0.05-nat "
    "margin, and no where it lies wholly below the margin: the scale is shown to earn less than the smallest gap "
    "the suite calls one (equivalent within the margin, or worse); otherwise inconclusive.")

#: the replicated record (issue 64; ``harness.record.replication``): K, the pooled rule, r of K's interval
REPLICATION = (f"K = {replication.K}. {replication.RULE} Wilson level {replication.LEVEL}; fragile below "
               f"{replication.FRAGILE_BELOW}.")

#: the frozen table: key -> rule, in words
RULES = {"C2/live_foil": C2_LIVE_FOIL, "C2/censored_runs": C2_CENSORED, "C2/rate_ties": C2_TIE,
         "C2/contiguous_control": C2_CONTROL, "Q1/answer": Q1_ANSWER, "replication/pooled": REPLICATION}
