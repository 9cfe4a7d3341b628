"""Tool definitions and request parameters: the parts of a Responses body
around the instructions and the input.

A tool is one file in the tools folder (`tools/NAME.yaml`, `.yml` or
`.json`) whose `definition` is the object as sent, stored verbatim: its key
order is kept because the request serialises it as written, and the tokens
are counted over exactly that serialisation.  `when:` selects variants by
axis values and by model catalog fields (`shell_type`,
`supports_parallel_tool_calls`...), the way Codex picks its tools.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

from ...errors import SpecError
from ..files import SpecFS
from ..model import (
    COMPUTED_BODY_KEYS,
    DEFAULT_BODY_ORDER,
    DEFAULT_DESCRIPTION_BUDGET,
    TOOL_PLACES,
    Model,
    ALWAYS,
    ParamRule,
    Placement,
    RequestConfig,
    Tool,
)
from .reader import Reader, check_name, check_unique_slugs, read_when, typename
from .sources import Located, find_line, load_json, load_yaml

TOOL_KEYS = {"definition", "when", "deferred", "description", "owner", "accept_lint"}
ACCEPTABLE_LINT = ("PS501", "PS502")
TOOLS_KEYS = {"folder", "order", "description_budget"}
REQUEST_KEYS = {"order", "params", "rules"}
RULE_KEYS = {"when", "params", "order"}
MAX_TOOL_JSON_CHARS = 1024 * 1024
"""One definition, serialised: far above any real tool (Codex's largest is ~10 kB)."""


def serialize(value: Any) -> str:
    """JSON as a Responses request carries it: compact, UTF-8 kept as is,
    key order as written (what serde_json writes for Codex)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def to_json(value: Any, where: str, line: int | None, path: str = "definition") -> Any:
    """Plain JSON data from parsed YAML/JSON, refusing what JSON cannot hold
    (dates, non-string keys, NaN) with the file and line."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise SpecError(f"{path} has a non-string key {key!r}", where, line=line, hint="quote the key: JSON keys are strings")
            sub = value.line_of(key) if isinstance(value, Located) else None
            out[key] = to_json(item, where, sub or line, f"{path}.{key}")
        return out
    if isinstance(value, list):
        return [to_json(item, where, getattr(value, "line", None) or line, f"{path}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, float) and not math.isfinite(value):
        raise SpecError(f"{path} is not a finite number", where, line=line, hint="JSON has no NaN or infinity")
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    raise SpecError(f"{path} is a {type(value).__name__}, which JSON cannot hold", where, line=line, hint="quote it as a string")


def load_tools(top: Reader, fs: SpecFS, axis_names: set[str], models: tuple[Model, ...]) -> tuple[tuple[Tool, ...], tuple[str, ...], int, str]:
    """The tools folder (optional: no folder, no tools), in send order."""
    raw = top.get("tools", dict, {}) or {}
    cfg = Reader(raw, top.where, "tools")
    cfg.unknown(TOOLS_KEYS, "tools")
    budget = cfg.get("description_budget", int, DEFAULT_DESCRIPTION_BUDGET)
    if budget <= 0:
        raise cfg.err("description_budget", "tools.description_budget must be above 0")
    folder_ref = cfg.text("folder", "tools")
    order = cfg.str_list("order")
    folder = fs.resolve(folder_ref, origin=top.where)
    if not folder.is_dir():
        if "folder" in raw or order:
            raise cfg.err("folder" if "folder" in raw else "order", f"tools folder {folder_ref!r} not found", hint="create it, or fix 'tools.folder:'")
        return (), (), budget, folder_ref
    try:
        files = sorted(p for p in folder.iterdir() if p.suffix in (".yaml", ".yml", ".json"))
    except OSError as exc:
        raise cfg.err("folder", f"cannot list the tools folder {folder_ref!r}: {exc.strerror or exc}") from None
    tools = [_tool(fs, folder_ref, path, budget, axis_names, models) for path in files]
    first: dict[str, Tool] = {}
    for t in tools:
        other = first.setdefault(t.name.lower(), t)
        if other is not t:
            raise SpecError(f"tool {t.name!r} clashes with {other.source}", t.source, hint="rename one of the files: tool names must differ in more than letter case")
    by_name = {t.name: t for t in tools}
    check_unique_slugs(((n, cfg.line("order")) for n in order), top.where, "tool in tools.order")
    for name in order:
        if name not in by_name:
            raise cfg.err("order", f"tools.order names tool {name!r}, which has no file in {folder_ref}/", hint=f"add {folder_ref}/{name}.yaml or remove it from the list")
    listed = [by_name[n] for n in order]
    rest = [t for t in tools if t.name not in order]
    return tuple(listed + rest), order, budget, folder_ref


def _tool(fs: SpecFS, folder_ref: str, path: Path, budget: int, axis_names: set[str], models: tuple[Model, ...]) -> Tool:
    fs.resolve(f"{folder_ref.rstrip('/')}/{path.name}", origin=folder_ref)  # no definition symlinked out
    where = fs.display(path)
    name = check_name(path.stem, where, None, "tool")
    data = load_json(path, where) if path.suffix == ".json" else load_yaml(path, where)
    r = Reader(data, where, "tool definition file")
    r.unknown(TOOL_KEYS, "a tool file")
    raw = r.get("definition", dict, required=True)

    dline = r.line("definition") if path.suffix != ".json" else find_line(path, '"definition"')

    def line_of(key: str) -> int | None:
        """The line of a key of the definition (JSON files: its first occurrence)."""
        if isinstance(raw, Located) and raw.line_of(key):
            return raw.line_of(key)
        return find_line(path, f'"{key}"') if path.suffix == ".json" else dline

    definition = to_json(raw, where, dline)
    kind = definition.get("type")
    if not isinstance(kind, str) or not kind:
        raise SpecError("the definition needs a 'type' (function, custom, namespace, web_search...)", where, line=dline, hint="add type: function")
    tool_name = definition.get("name", kind)
    if not isinstance(tool_name, str) or not tool_name:
        raise SpecError("the definition's 'name' must be a non-empty string", where, line=dline)
    if kind == "function":
        params = definition.get("parameters")
        if not isinstance(params, dict):
            raise SpecError(
                f"the parameters schema of function tool {tool_name!r} must be an object, found {typename(params)}",
                where,
                line=line_of("parameters") or dline,
                hint="give 'parameters' as a JSON schema object, e.g. {type: object, properties: {}}",
            )
    if kind == "namespace":
        members = definition.get("tools")
        if not isinstance(members, list) or not all(isinstance(m, dict) for m in members):
            raise SpecError(f"namespace {tool_name!r} needs 'tools': a list of tool objects", where, line=line_of("tools") or dline)
    for what, text in _descriptions(definition):
        if len(text) > budget:
            raise SpecError(
                f"the description of {what} has {len(text)} characters, over the budget of {budget}",
                where,
                line=line_of("description") or dline,
                hint="shorten it, or raise tools.description_budget in spec.yaml",
            )
    serialized = serialize(definition)
    if len(serialized) > MAX_TOOL_JSON_CHARS:
        raise SpecError(f"tool {tool_name!r} serialises to {len(serialized)} characters (at most {MAX_TOOL_JSON_CHARS})", where, line=dline, hint="no model reads a tool this large")
    when = read_when(r, axes=axis_names, models=models)
    accept = r.str_list("accept_lint")
    for rule in accept:
        if rule not in ACCEPTABLE_LINT:
            raise r.err("accept_lint", f"accept_lint lists {rule!r}; a tool file may accept only {', '.join(ACCEPTABLE_LINT)}")
    return Tool(
        name=name,
        tool_name=tool_name,
        kind=kind,
        definition=definition,
        serialized=serialized,
        when=when,
        deferred=bool(r.get("deferred", bool, False)),
        description=r.text("description", ""),
        owner=r.text("owner", ""),
        source=where,
        line=r.line(),
        accept_lint=accept,
    )


def _descriptions(definition: dict[str, Any]) -> list[tuple[str, str]]:
    """Every description the model reads in one definition: the tool's, and
    its members' for a namespace."""
    out = []
    if isinstance(definition.get("description"), str):
        out.append((f"tool {definition.get('name', definition.get('type'))!r}", definition["description"]))
    for member in definition.get("tools") or ():
        if isinstance(member, dict) and isinstance(member.get("description"), str):
            out.append((f"tool {member.get('name', member.get('type'))!r}", member["description"]))
    return out


def load_request(top: Reader, placements: tuple[Placement, ...], tools_cfg: tuple[tuple[str, ...], int, str], axis_names: set[str], models: tuple[Model, ...]) -> RequestConfig:
    raw = top.get("request", dict, {}) or {}
    r = Reader(raw, top.where, "request")
    r.unknown(REQUEST_KEYS, "request")
    order = _order(r) or DEFAULT_BODY_ORDER
    rules: list[ParamRule] = []
    if "params" in raw and raw["params"] is not None:
        rules.append(ParamRule(ALWAYS, _params(r, "params", order), None, r.line("params")))
    for item in r.get("rules", list, []) or []:
        line = getattr(item, "line", r.line("rules"))
        ir = Reader(item, top.where, "a request rule")
        ir.unknown(RULE_KEYS, "a request rule")
        when = read_when(ir, axes=axis_names, models=models)
        rule_order = _order(ir)
        rules.append(ParamRule(when, _params(ir, "params", rule_order or order), rule_order, line))
    tools_order, budget, folder = tools_cfg
    return RequestConfig(order=order, rules=tuple(rules), placements=placements, tools_order=tools_order, description_budget=budget, tools_folder=folder)


def _order(r: Reader) -> tuple[str, ...] | None:
    if r.data.get("order") is None:
        return None
    order = r.str_list("order")
    for key in ("model", "input"):
        if key not in order:
            raise r.err("order", f"the body order must contain {key!r}", hint="list every key of the Responses body in send order")
    if len(set(order)) != len(order):
        raise r.err("order", "the body order lists a key twice")
    return order


def _params(r: Reader, key: str, order: tuple[str, ...]) -> Mapping[str, Any]:
    raw = r.get(key, dict, {}) or {}
    values = to_json(raw, r.where, r.line(key), key)
    for name in values:
        if name in COMPUTED_BODY_KEYS:
            raise r.err(key, f"'{name}' is filled by assembly and cannot be set in {key}", hint="set it through the spec (models, fragments, tools) instead")
        if name not in order:
            raise r.err(key, f"parameter {name!r} is not in the body order", hint="add it to request.order at the place Codex sends it")
    return MappingProxyType(values)


def load_placements(raw: Any, where: str, line: int | None, axis_names: set[str], models: tuple[Model, ...]) -> tuple[Placement, ...]:
    """`layout.tools`: `field`, `input`, or a list of {when:, place:} (first match wins)."""
    if raw is None:
        return ()
    items = [{"place": raw}] if isinstance(raw, str) else raw
    if not isinstance(items, list):
        raise SpecError("layout.tools must be 'field', 'input' or a list of {when:, place:}", where, line=line)
    out = []
    for item in items:
        iline = getattr(item, "line", None) or line
        pr = Reader(item, where, "a layout.tools rule")
        pr.unknown({"when", "place"}, "a layout.tools rule")
        place = pr.text("place", required=True)
        if place not in TOOL_PLACES:
            raise SpecError(f"tool placement must be one of {', '.join(TOOL_PLACES)}, found {place!r}", where, line=iline, hint="field: the request's tools; input: an additional_tools input item")
        when = read_when(pr, axes=axis_names, models=models)
        out.append(Placement(place, when, iline))
    return tuple(out)
