"""Lint rule PS206: what `promptspec new` left for its author to fill in.

A skeleton passes every other rule by design (`new` refuses to write one that
does not), so its `description: "TODO: ..."` and empty `owner:` could be
merged unnoticed; this rule reports them until they are filled in.
"""

from __future__ import annotations

from typing import Iterator

from ..spec.model import SPEC_FILE, Spec
from .findings import Finding, finding


def _todo(text: str) -> bool:
    return text.lstrip().upper().startswith("TODO")


def _skeletons(spec: Spec) -> Iterator[Finding]:
    """A skeleton passes every other rule by design, so without this a TODO
    description or an empty owner could be merged unnoticed.  An owner is
    asked for only in a spec that names owners (one part with one, the others
    too)."""
    owners = any(x.owner.strip() for x in (*spec.fragments, *spec.tools))
    for kind, items in (("fragment", spec.fragments), ("tool", spec.tools)):
        for x in items:
            if _todo(x.description):
                yield finding("PS206", x.source, x.line, f"{kind} {x.name!r}: the description is still a TODO; say what it is for",
                              fragment=x.name if kind == "fragment" else None)
            if owners and not x.owner.strip():
                yield finding("PS206", x.source, x.line, f"{kind} {x.name!r} has no owner, unlike the rest of the spec; name the team that answers for it",
                              fragment=x.name if kind == "fragment" else None)
    for kind, choices in (("personality", spec.personalities), ("mode", spec.modes)):
        for c in choices:
            if _todo(c.description):
                yield finding("PS206", SPEC_FILE, c.line, f"{kind} {c.name!r}: the description is still a TODO; say what it is for")


SKELETON_RULES = (_skeletons,)
