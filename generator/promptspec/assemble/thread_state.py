"""Where in a thread a request is, as templates see it (`thread`).

Kept apart from the builder, which reads it for every context, and from the
conversation builder, which makes it for later requests: a first request
gets `first_thread` (turn 1, nothing changed), so templates that read
`thread` render the same in `render` and in a conversation's first request.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..spec.model import Spec
from .request import Variant


def state_values(spec: Spec, variant: Variant, scalars: Mapping[str, Any]) -> dict[str, Any]:
    """A thread's state as templates and `turns.updates` compare it: every
    axis value, then each setting a step may change (spec.turns.settings)."""
    values: dict[str, Any] = dict(variant.values)
    turns = spec.turns
    for name in (turns.settings if turns is not None else ()):
        if name not in values:
            values[name] = scalars.get(name)
    return values


def first_thread(spec: Spec, variant: Variant, scalars: Mapping[str, Any]) -> dict[str, Any]:
    """`thread` in a first request: turn 1, nothing changed, start = now."""
    values = state_values(spec, variant, scalars)
    return {"request": "first", "turn": 1, "start": values, "previous": values, "changed": [], "compacted": False, "switched": []}
