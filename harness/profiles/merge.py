"""How a claim's profile file states standard and full: as overrides of its smoke block (``overrides``), so a
number that does not change between profiles is written once. ``DROP`` removes a key the base has."""
from __future__ import annotations

import copy
from typing import Any

#: an override value that removes the key from the base
DROP = type("Drop", (), {"__repr__": lambda self: "DROP"})()


def overrides(base: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of ``base`` with ``changes`` merged in: dicts merge key by key, any other value (lists included)
    replaces the base's, ``DROP`` removes the key."""
    out = copy.deepcopy(base)
    for key, value in changes.items():
        if value is DROP:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = overrides(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out
