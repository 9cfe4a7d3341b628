"""What assembly produces: a variant (one point of the matrix) and its request
(base instructions plus messages of sections), as plain frozen dataclasses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

from ..spec.model import DEFAULT_BODY_ORDER, Tool

from ..spec.provenance import SourceRef, paths_of

# ---------------------------------------------------------------------------
# The data model handed to everything downstream.


@dataclass(frozen=True, order=True)
class Variant:
    """One cell of the matrix: a value for every axis."""

    model: str
    personality: str
    mode: str
    extra: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        # A variant is asked for its values hundreds of thousands of times a
        # build (a site of 2,400 variants), an extra axis's by a dict made from
        # `extra` each time: they are worked out once.  (Not the hash: the
        # dataclass's own, of the fields, is faster than one kept in Python.)
        values = (("model", self.model), ("personality", self.personality), ("mode", self.mode), *self.extra)
        object.__setattr__(self, "_values", values)
        object.__setattr__(self, "_by_axis", dict(values))

    def value(self, axis: str) -> str:
        value: str = self.__dict__["_by_axis"][axis]
        return value

    @property
    def values(self) -> tuple[tuple[str, str], ...]:
        values: tuple[tuple[str, str], ...] = self.__dict__["_values"]
        return values

    @property
    def id(self) -> str:
        return "/".join(v for _, v in self.values)

    @property
    def slug(self) -> str:
        """File-name form; axis values are validated safe names, so '--' joins them unambiguously."""
        return "--".join(v for _, v in self.values)


@dataclass(frozen=True)
class Section:
    fragment: str
    slot: str
    role: str
    start: str
    body: str
    end: str
    source: str
    """The fragment's own template (body file, else its yaml): kept for compatibility."""
    sources: tuple[SourceRef, ...] = ()
    """Everything the text was built from (spec/provenance.py), in key order."""

    @property
    def text(self) -> str:
        return self.start + self.body + self.end

    @property
    def files(self) -> tuple[str, ...]:
        """The spec files behind the text."""
        return paths_of(self.sources) or (self.source,)

    @property
    def label(self) -> str:
        """How the layout view names a section: its start marker, else its first line."""
        head = self.start or self.text
        first = head.strip("\n").split("\n", 1)[0].strip()
        return first[:60] if first else f"({self.fragment})"


@dataclass(frozen=True)
class Message:
    role: str
    sections: tuple[Section, ...]
    fields: tuple[tuple[str, Any], ...] = field(default=(), hash=False)
    """The item's keys before `content`, in send order (default: type, role);
    an assistant answer re-sent in a later request echoes what the model returned."""
    part_fields: tuple[tuple[str, Any], ...] = field(default=(), hash=False)
    """Keys after `text` in each content part (`annotations: []` on an answer)."""

    @property
    def text(self) -> str:
        return "".join(s.text for s in self.sections)


@dataclass(frozen=True)
class BaseInstructions:
    text: str
    rule: str  # "override" | "template" | "base_instructions" | "exact" (a spec.yaml `exact:` entry)
    detail: str  # e.g. "personality_friendly" or the override file
    source: str
    sources: tuple[SourceRef, ...] = ()


@dataclass(frozen=True)
class Request:
    variant: Variant
    model: str
    base: BaseInstructions
    messages: tuple[Message, ...]
    notes: tuple[str, ...] = ()
    instructions_field: bool = True
    """False when the variant's layout sends the base instructions as a section instead."""
    tools: tuple[Tool, ...] = ()
    """The tools sent, in send order (deferred ones are only listed, see `deferred`)."""
    tool_placement: str = "field"  # "field": the body's `tools`; "input": an additional_tools input item
    empty_tools_item: bool = False
    """With `input` placement and no tools: the additional_tools item is sent with an empty
    list (a compaction request whose `tools: []` empties the history's tool list)."""
    deferred: tuple[Tool, ...] = ()
    body_order: tuple[str, ...] = DEFAULT_BODY_ORDER
    params: tuple[tuple[str, Any], ...] = field(default=(), hash=False)
    """The body's other keys with their values, in body order."""

    @property
    def sections(self) -> Iterator[tuple[int, Message, Section]]:
        for i, message in enumerate(self.messages):
            for section in message.sections:
                yield i, message, section


# ---------------------------------------------------------------------------
# The matrix


