"""The note's words (issue 47, mechanism 1): every quote a claim module gives is the research note's, verbatim.

The note is committed as docs/NOTE-011.txt, so a clean clone can check it. A quote is any substring of the note once
runs of whitespace are one space (a line break in the module's string is not a change of words); nothing else is
forgiven: the note's curly quotes (“ ” ’) and symbols (√, ᵀ, Σᵢ) stay as the note writes them.

Issue 54: a criterion that no words of the note state gives why instead (``unquoted``; exactly one of the two,
tests/claims/test_criteria.py). A reason is the module's words, not the note's: one that is a passage of the note
is a quote and is declared as one.
"""
from __future__ import annotations

import importlib

import pytest

from tests.claims.test_criteria import MODULES, TABLES
from tests.conftest import REPO

NOTE = REPO / "docs" / "NOTE-011.txt"
SEED = REPO.parent / "shared" / "seed" / "NOTE-011-attention-is-all-you-need.txt"


def words(text: str) -> str:
    return " ".join(text.split())


def not_in_note(quotes: dict[str, str], note: str) -> list[str]:
    """The names whose quote is not a substring of ``note`` (whitespace normalised on both sides)."""
    text = words(note)
    return [name for name, q in quotes.items() if not words(q) or words(q) not in text]


def quotes_of(stem: str) -> dict[str, str]:
    module = importlib.import_module(f"claims.{stem}")
    return {f"{table}/{name}": spec["quote"] for table in TABLES for name, spec in getattr(module, table, {}).items()
            if spec.get("quote")}


@pytest.mark.parametrize("stem", MODULES)
def test_every_quote_is_the_notes_words(stem):
    wrong = not_in_note(quotes_of(stem), NOTE.read_text(encoding="utf-8"))
    assert wrong == [], f"{stem}: not the note's words (docs/NOTE-011.txt): " + ", ".join(
        f"{n}: {quotes_of(stem)[n]!r}" for n in wrong)


@pytest.mark.parametrize("stem", MODULES)
def test_a_reason_given_for_no_quote_is_not_the_notes_words(stem):
    module = importlib.import_module(f"claims.{stem}")
    reasons = {f"{table}/{name}": spec["unquoted"] for table in TABLES
               for name, spec in getattr(module, table, {}).items() if spec.get("unquoted")}
    passages = set(reasons) - set(not_in_note(reasons, NOTE.read_text(encoding="utf-8")))
    assert not passages, f"{stem}: give these as quote=, not unquoted=: " + ", ".join(sorted(passages))


def test_the_check_sees_a_paraphrase():
    """A check that cannot fail is a defect: a paraphrase, straight quotes for curly ones, or a word changed is not
    the note's; a line break is."""
    note = NOTE.read_text(encoding="utf-8")
    ok = "Additive attention outperforms unscaled dot-product attention\n   at larger d_k."
    bad = {"paraphrase": "Additive attention beats unscaled dot-product attention at larger d_k.",
           "straight": "the paper's footnote", "word": "Scaling by 1/√d_k returns it to unit norm.", "empty": " "}
    assert not_in_note({"ok": ok, **bad}, note) == list(bad)


def test_the_committed_note_is_the_seed_byte_for_byte():
    if not SEED.exists():
        pytest.skip("the seed note is not beside this checkout (a clean clone has only docs/NOTE-011.txt)")
    assert NOTE.read_bytes() == SEED.read_bytes()
