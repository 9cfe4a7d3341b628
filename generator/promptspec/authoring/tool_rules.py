"""Lint rules for tool definitions: what the model reads about a tool is its
description and its parameters' descriptions, so a tool without them is one
the model has to guess at; a tool no variant sends is dead weight to review.
"""

from __future__ import annotations

from typing import Any, Iterator

from ..spec.model import Spec, Tool
from .findings import Finding, finding

DESCRIBED_KINDS = ("function", "custom", "namespace")
"""Kinds the model knows only by their description (hosted tools such as
web_search have none)."""


def _members(tool: Tool) -> Iterator[dict[str, Any]]:
    """The definition itself, then a namespace's member tools."""
    yield tool.definition
    for member in tool.definition.get("tools") or () if tool.kind == "namespace" else ():
        if isinstance(member, dict):
            yield member


def _no_description(spec: Spec) -> Iterator[Finding]:
    for tool in spec.tools:
        if "PS501" in tool.accept_lint:
            continue
        for d in _members(tool):
            if d.get("type") not in DESCRIBED_KINDS:
                continue
            text = d.get("description")
            if not isinstance(text, str) or not text.strip():
                what = "it" if d is tool.definition else f"its member {d.get('name')!r}"
                yield finding(
                    "PS501", tool.source, tool.line,
                    f"tool {tool.tool_name!r}: {what} has no description, so the model has to guess what it does (add 'description')",
                )


def _properties(schema: Any, path: str) -> Iterator[tuple[str, Any]]:
    """Every property of a JSON schema, nested objects and array items included."""
    if not isinstance(schema, dict):
        return
    props = schema.get("properties")
    if isinstance(props, dict):
        for name, sub in props.items():
            yield f"{path}{name}", sub
            yield from _properties(sub, f"{path}{name}.")
    items = schema.get("items")
    if isinstance(items, dict):
        yield from _properties(items, f"{path}[].")


def _parameters_undescribed(spec: Spec) -> Iterator[Finding]:
    for tool in spec.tools:
        if "PS502" in tool.accept_lint:
            continue
        for d in _members(tool):
            if d.get("type") != "function":
                continue
            missing = [p for p, sub in _properties(d.get("parameters"), "") if isinstance(sub, dict) and not str(sub.get("description") or "").strip()]
            if missing:
                yield finding(
                    "PS502", tool.source, tool.line,
                    f"tool {d.get('name')!r}: parameter{'s' if len(missing) > 1 else ''} {', '.join(missing[:5])}"
                    f"{' ...' if len(missing) > 5 else ''} ha{'ve' if len(missing) > 1 else 's'} no description (add 'description' to each property)",
                )


def _never_sent(result: Any) -> Iterator[Finding]:
    spec: Spec = result.spec
    used = {t.name for req in result.requests for t in (*req.tools, *req.deferred)}
    for tool in spec.tools:
        if tool.name not in used:
            yield finding(
                "PS503", tool.source, tool.line,
                f"tool {tool.tool_name!r}: its 'when' matches no variant of the matrix, so it is never sent (fix 'when' or delete the file)",
            )


TOOL_SPEC_RULES = (_no_description, _parameters_undescribed)
TOOL_RESULT_RULES = (_never_sent,)
