"""`when` conditions an imported spec is reviewed by: catalog fields where the
captures show a field decides, not lists of model slugs.

A set of captured cells is first cut into axis rectangles (a `when` is one
conjunction).  In each rectangle a list of models is then replaced by the
`models.json` field whose values pick exactly those models among the spec's:
`web_search_tool_type: text_and_image` says why, and a model added to the
catalog with that value is covered without an edit.  The list of all models
is dropped.  Among several fields that fit, the one sharing a word with what
the condition is about (a tool's or parameter's name) is preferred, then the
one needing fewest values; fields that tell every model apart (slugs, names,
priorities) are never used.
"""

from __future__ import annotations

import json
import re
from typing import Any, Mapping, Sequence

IDENTITY = ("slug", "display_name", "description")


def rectangles(keys: set[tuple[str, ...]], axes: Sequence[str]) -> list[dict[str, list[str]]]:
    """A set of axis-value tuples as a union of products (each a `when`)."""
    if not axes:
        return [{}]
    by_rest: dict[frozenset, list[str]] = {}
    for first in sorted({k[0] for k in keys}):
        rest = frozenset(k[1:] for k in keys if k[0] == first)
        by_rest.setdefault(rest, []).append(first)
    out = []
    for rest, firsts in by_rest.items():
        for sub in rectangles(set(rest), axes[1:]):
            out.append({axes[0]: firsts, **sub})
    return out


def _spelling(value: Any) -> str:
    """A catalog value as `when:` compares it (Model.field_value)."""
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def words(name: str) -> set[str]:
    return {w for w in re.split(r"[^a-z0-9]+", name.lower()) if len(w) > 2}


class Catalog:
    """The spec's models as `when` sees them: per scalar field, each model's value."""

    def __init__(self, catalog: Mapping[str, Any], models: Sequence[str]):
        self.models = list(models)
        entries = {m["slug"]: m for m in catalog.get("models", []) if m.get("slug") in set(models)}
        fields: dict[str, dict[str, str]] = {}
        for name in sorted({k for m in entries.values() for k in m}):
            if name in IDENTITY:
                continue
            values = {}
            for slug in self.models:
                v = entries.get(slug, {}).get(name)
                if isinstance(v, (dict, list)) or (isinstance(v, str) and len(v) > 60):
                    break
                values[slug] = _spelling(v)
            else:
                if len(set(values.values())) < len(self.models):  # a field telling every model apart says nothing
                    fields[name] = values
        self.fields = fields

    def field_for(self, chosen: Sequence[str], about: str = "") -> tuple[str, list[str]] | None:
        """(field, values) picking exactly `chosen` among the spec's models, or None."""
        want = set(chosen)
        best = None
        for name, values in self.fields.items():
            picked = {values[m] for m in want}
            if {m for m in self.models if values[m] in picked} != want:
                continue
            shared = len(words(name) & words(about))
            if len(want) == 1 and not shared:
                continue  # one model picked by a field unrelated to the condition: a coincidence, not a reason
            rank = (-shared, len(picked), name)
            if best is None or rank < best[0]:
                best = (rank, name, sorted(picked))
        return None if best is None else (best[1], best[2])

    def when(self, rect: Mapping[str, list[str]], about: str = "") -> dict[str, Any]:
        """One rectangle as a reviewed `when`: models by field, single values unbracketed."""
        out: dict[str, Any] = {}
        for axis, values in rect.items():
            if axis == "model":
                if set(values) == set(self.models):
                    continue
                found = self.field_for(values, about)
                if found is not None:
                    out[found[0]] = found[1]
                    continue
            out[axis] = list(values)
        return {k: (v[0] if isinstance(v, list) and len(v) == 1 else v) for k, v in out.items()}

    def whens(self, cells: set[tuple[str, ...]], axes: Sequence[str], about: str = "") -> list[dict[str, Any]]:
        """The cells as reviewed `when`s (one per rectangle; [{}] for every cell)."""
        if not axes:
            return [{}]
        return [self.when(rect, about) for rect in rectangles(cells, axes)]
