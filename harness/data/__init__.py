"""Synthetic tasks and batches (``tasks``) and the number-word language pair (``language``). The bottom of the
torch stack: it imports nothing else from the harness."""
from __future__ import annotations

from typing import Any, Callable

from harness.data.language import NumberWords
from harness.data.tasks import (DelayedCopy, FirstEqualsLast, KeyValueLookup, MarkovLM, MultiPositionRetrieval,
                                SequenceTransduction, Task)

TASKS: dict[str, Callable[..., Task]] = {
    "copy": lambda **kw: SequenceTransduction("copy", **kw),
    "reverse": lambda **kw: SequenceTransduction("reverse", **kw),
    "sort": lambda **kw: SequenceTransduction("sort", **kw),
    "kv_lookup": KeyValueLookup,
    "multi_retrieval": MultiPositionRetrieval,
    "first_equals_last": FirstEqualsLast,
    "delayed_copy": DelayedCopy,
    "markov_lm": MarkovLM,
    "number_words_en": lambda **kw: NumberWords(source="digits", target="en", **kw),
    "number_words_de": lambda **kw: NumberWords(source="en", target="de", **kw),
}


def make_task(name: str, **kwargs: Any) -> Task:
    """Build a task by name (profile blocks hold ``{"task": name, ...}``). The parallel corpus needs files:
    use ``ParallelCorpus.from_files`` / ``from_tsv``."""
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; valid: {', '.join(sorted(TASKS))}")
    try:
        return TASKS[name](**kwargs)
    except TypeError as e:  # an unknown keyword: say which task and what it got
        raise ValueError(f"task {name!r}: {e}") from None
