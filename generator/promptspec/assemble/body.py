"""The rest of the Responses body: which tools a variant sends, where, and the
request parameters around them.

Codex picks tools by model fields (`shell_type`, `apply_patch_tool_type`...)
and fills `reasoning`, `text.verbosity` and `parallel_tool_calls` from the
catalog; the defaults here do the same, and a spec's `request:` rules are
merged over them so an importer can state exactly what was sent.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, Mapping

from ..errors import SpecError
from ..spec.readers.exact import first_exact
from ..spec.model import COMPUTED_BODY_KEYS, ExactPart, Model, Spec, Tool
from .request import Variant

INCLUDE_REASONING = "reasoning.encrypted_content"


def exact_for(spec: Spec, kind: str, name: str, variant: Variant, model: Model, first: Model | None = None) -> ExactPart | None:
    """The `exact:` entry that decides this part for the variant, if any; `first`:
    in a thread, its first model, which an entry's `first:` condition is about (default `model`)."""
    if not spec.exact:
        return None
    held = first or model
    return first_exact(spec.exact, kind, name, lambda when: when.matches(variant, model),
                       lambda when: when.matches(dataclasses.replace(variant, model=held.slug), held))


def select_tools(spec: Spec, variant: Variant, model: Model, first: Model | None = None) -> tuple[tuple[Tool, ...], tuple[Tool, ...]]:
    """(tools sent, deferred tools listed) for one variant, in send order.
    An `exact: tool NAME` entry matching the variant decides that tool (its
    definition, or not sent) over the file's own `when`.  Two tools with the
    same sent name in one variant are an error: the API would refuse the request.
    `first`: in a thread, its first model, which decides the tools `turns.session.tools` names."""
    sent: list[Tool] = []
    deferred: list[Tool] = []
    seen: dict[str, Tool] = {}
    kept = dict(spec.turns.session_tools) if first is not None and spec.turns is not None else {}
    for tool in spec.tools:
        rule = kept.get(tool.name)
        if rule == "both" and first is not None and _decided(spec, tool, dataclasses.replace(variant, model=first.slug), first, first) is None:
            continue  # the first model would not send it: neither is it sent now
        v, m = (dataclasses.replace(variant, model=first.slug), first) if first is not None and rule == "first" else (variant, model)
        decided = _decided(spec, tool, v, m, first)
        if decided is None:
            continue
        tool = decided
        other = seen.setdefault(tool.tool_name, tool)
        if other is not tool:
            raise SpecError(
                f"tool name {tool.tool_name!r} is sent twice in variant {variant.id} (also by {other.source})",
                tool.source,
                line=tool.line,
                hint="give the two definitions 'when:' conditions that exclude each other, or rename one",
            )
        (deferred if tool.deferred else sent).append(tool)
    return tuple(sent), tuple(deferred)


def _decided(spec: Spec, tool: Tool, variant: Variant, model: Model, first: Model | None = None) -> Tool | None:
    """The tool a variant sends in this tool file's place (an `exact:` entry's, else its own), None: not sent."""
    stated = exact_for(spec, "tool", tool.name, variant, model, first)
    if stated is not None:
        return stated.tool
    return tool if tool.when.matches(variant, model) else None


def placement(spec: Spec, variant: Variant, model: Model) -> str:
    for rule in spec.request.placements:
        if rule.when.matches(variant, model):
            return rule.place
    return "field"


def default_params(model: Model) -> dict[str, Any]:
    """What Codex sends when nothing is configured, read from the catalog entry."""
    extra = model.extra
    out: dict[str, Any] = {"tool_choice": "auto", "parallel_tool_calls": extra.get("supports_parallel_tool_calls") is True}
    level = extra.get("default_reasoning_level")
    if isinstance(level, str) and level:
        reasoning: dict[str, Any] = {"effort": level}
        summary = extra.get("default_reasoning_summary")
        if extra.get("supports_reasoning_summaries") is True and isinstance(summary, str) and summary not in ("", "none"):
            reasoning["summary"] = summary
        out["reasoning"] = reasoning
    out["store"] = False
    out["stream"] = True
    out["include"] = [INCLUDE_REASONING] if "reasoning" in out else []
    verbosity = extra.get("default_verbosity")
    if isinstance(verbosity, str) and verbosity and extra.get("support_verbosity") is not False:
        out["text"] = {"verbosity": verbosity}
    return out


def merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """`over` on top of `base`: null removes a key, a mapping merges into a
    mapping (new keys after the old ones), anything else replaces."""
    out = dict(base)
    for key, value in over.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def body_params(spec: Spec, variant: Variant, model: Model) -> tuple[tuple[str, ...], tuple[tuple[str, Any], ...]]:
    """(body key order, the parameters sent in that order) for one variant."""
    params = default_params(model)
    order = spec.request.order
    for rule in spec.request.rules:
        if rule.when.matches(variant, model):
            params = merge(params, rule.params)
            if rule.order is not None:
                order = rule.order
    for key in {e.name for e in spec.exact if e.kind == "param"}:
        stated = exact_for(spec, "param", key, variant, model)
        if stated is not None:
            params.pop(key, None)
            if stated.value is not None:
                params[key] = copy.deepcopy(stated.value)
    return order, tuple((k, params[k]) for k in order if k not in COMPUTED_BODY_KEYS and k in params)
