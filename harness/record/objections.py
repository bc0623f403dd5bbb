"""A reviewer's first objections to a verdict, and the claim's answer to each (``objections``): what the module
declared (``ev.objection``), and what the harness answers itself: whether each counted criterion tests the note's
words (from its quote, or its reason for quoting none), firmness, and a ceiling re-opened by a constant arm."""
from __future__ import annotations

from typing import Any, Mapping

from harness.record import decision
from harness.record.verdict import (COUNTED, firmness_text, fragile, role_of, tuned, tuned_rates)


def _tests_claim(record: Mapping[str, Any]) -> tuple[str, str]:
    """The harness's answer to ``tests_claim`` where the module gives none: each counted criterion quotes the note's
    words it tests (answered), or says why it quotes none (open: a reader judges the reason)."""
    counted = [c for c in record.get("criteria", []) if role_of(c) == COUNTED]
    if not counted:
        return "not applicable", "no counted criterion"
    bare = [c["name"] for c in counted if not c.get("quote")]
    if not bare:
        return "answered", (f"each of the {len(counted)} counted criteria quotes the note's words it tests, beside "
                            "its prediction in the report")
    reasons = "; ".join(f"{c['name']}: {c.get('unquoted') or 'no quote and no reason'}" for c in counted
                        if not c.get("quote"))
    return "open", f"{len(bare)} of {len(counted)} counted criteria quote no words of the note ({reasons})"


#: The first objections a careful reviewer raises against a verdict (DEVELOPERS.md), in the order the report shows
#: them. A claim module answers each that bears on it with ``ev.objection``; ``firmness`` is answered by the harness
#: from the simulated firmness, and a degenerate (constant) arm in a counted criterion re-opens ``ceiling``.
OBJECTIONS = {
    "tests_claim": "Does each counted criterion test what the note's claim says?",
    "tuned_lr": "Was each trained arm at its own tuned learning rate?",
    "ceiling": "Is a deciding metric at a ceiling (or floor)?",
    "selection": "Was a 'best' arm or setting chosen on the seeds it is tested on?",
    "second_task": "Does it hold on a second task?",
    "firmness": "Would fresh seeds give the same outcome?",
}
#: answered: the design meets the objection (``how`` says how); open: it does not, and the verdict carries that
#: caveat; not applicable: the claim has nothing the objection can bite on (say why)
OBJECTION_STATUSES = ("answered", "open", "not applicable")


def objections(record: Mapping[str, Any]) -> list[dict[str, str]]:
    """The claim's objection rows ``{key, question, status, how}`` in ``OBJECTIONS`` order: what the module
    declared (``record["objection_answers"]``, from ``ev.objection``), the harness's firmness row (over the samples
    a seedless claim names, ``seedless``: a checkpoint read's probe sequences), a ceiling row
    re-opened by any counted criterion the decision found constant across seeds (``decision.CONSTANT_ARM``), and
    'open: not addressed' where the module is silent."""
    declared = record.get("objection_answers") or {}
    rows = []
    for key, question in OBJECTIONS.items():
        d = declared.get(key) or {}
        status, how = d.get("status", "open"), d.get("how", "not addressed by the module")
        if key == "tests_claim" and not d:
            status, how = _tests_claim(record)
        if key == "firmness":
            f = record.get("firmness")
            if f is None:
                why = record.get("firmness_reason") or "no counted statistical criterion, or an error"
                status = "not applicable" if why.startswith("deterministic") else "open"
                how = f"firmness not estimated: {why}"
            else:
                status = "open" if fragile(f) else "answered"
                samples = (f"its samples, not seeds ({record['seedless']})" if record.get("seedless") else
                           "this run's seeds")
                how = (firmness_text(record) + f": the replication probability, estimated from {samples} "
                       "(predictive simulation)" + (", conditional on the tuned rates" if tuned(record) else
                                                    (", the tuned arms' rates chosen afresh in every simulated run"
                                                     if tuned_rates(record) else "")))
        if key == "ceiling":
            flat = [c["name"] for c in record.get("criteria", []) if role_of(c) == COUNTED
                    and decision.CONSTANT_ARM in str(c.get("decision_note") or "")]
            if flat:
                status = "open"
                how = f"constant across seeds in {', '.join(flat)} (inconclusive there)" + (f"; {how}" if d else "")
        rows.append({"key": key, "question": question, "status": status, "how": how})
    return rows


