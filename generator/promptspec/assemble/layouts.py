"""Which of the spec's `layouts` a variant uses.

Agents order their messages differently per model or release (Codex 0.150.0
sends base instructions as a developer message of their own for some models
only), so a spec may give several layouts, each with a `when`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..errors import SpecError
from ..spec.model import Layout, Spec
from .request import Variant


def choose_layout(spec: Spec, variant: Variant, start: Variant | None = None) -> Layout | None:
    """The first layout whose `when` matches the variant; None for a spec with the classic `layout`.
    `start`: a thread's first variant, whose model decides when `turns.session.layout` says so."""
    if not spec.layouts:
        return None
    if start is not None and start.model != variant.model and spec.turns is not None and spec.turns.session_layout:
        # The first model's messages; where the base instructions go stays the current model's.
        own = choose_layout(spec, variant)
        first = choose_layout(spec, dataclasses.replace(variant, model=start.model))
        return dataclasses.replace(first, instructions=own.instructions) if first is not None and own is not None else first
    for lay in spec.layouts:
        if lay.when.matches(variant, spec.model(variant.model)):
            return lay
    raise SpecError(f"no layout matches variant {variant.id}", "spec.yaml", line=spec.layouts[0].line,
                    hint="add a layout without 'when' as the last one, or widen a 'when'")


def session_slots(spec: Spec, variant: Variant, start: Variant | None) -> tuple[tuple[str, ...], Variant]:
    """(`turns.session.slots`, the variant with the thread's first model): after a
    model switch, the sections of those slots are rendered for the first model; ((), variant) otherwise."""
    if start is None or start.model == variant.model or spec.turns is None or not spec.turns.session_slots:
        return (), variant
    return spec.turns.session_slots, dataclasses.replace(variant, model=start.model)


def own_base_message(spec: Spec, variant: Variant, start: Variant | None, chosen: Layout, groups: list[Any],
                     holds_base: Any) -> list[Any]:
    """The first model's layout (turns.session) puts the base instructions in the
    field, the current model's in a section: the current layout's message holding
    them (`holds_base(slots)`) keeps its place among the first layout's `groups`
    (Codex 0.150.0: a gpt-5.5 session switched to a multi-agent v2 model sends the
    held base instructions first)."""
    if start is None or start.model == variant.model or chosen.instructions != "section":
        return groups
    first = choose_layout(spec, dataclasses.replace(variant, model=start.model))
    own = choose_layout(spec, variant)
    if first is None or own is None or first.instructions != "field" or own.messages == chosen.messages:
        return groups
    placed = {slot for _, _, slots in groups for slot in slots}
    for k, (role, slots) in enumerate(own.messages):
        if not placed & set(slots) and holds_base(slots):
            groups = [*groups[:k], ("message", role, slots), *groups[k:]]
    return groups
