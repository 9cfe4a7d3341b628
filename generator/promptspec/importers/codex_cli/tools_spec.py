"""Tools and request parameters of an imported release, in the spec's tools format.

Each distinct tool definition becomes a tool file whose `when` is the set of
configurations that carried it (split into as few axis rectangles as it takes,
since a `when` is one conjunction); one global send order is merged from every
request's order; placement (`tools` field or `additional_tools` item) is
learned per model.  Request parameters are written as rules over the axes
they were seen to depend on: first the key removed, then set to what Codex
sent, so catalog defaults never leak in.
"""

from __future__ import annotations

import json
import re
from typing import Any, Mapping, Sequence

from ...oracle import parts
from ...oracle.capture import Config
from . import learn

ADDITIONAL_TOOLS = "additional_tools"
NOT_PARAMS = ("model", "instructions", "input", "tools", *parts.VOLATILE_BODY)
SAFE = re.compile(r"[^A-Za-z0-9._-]+")
AXIS_VALUE_KEYS = ("model", "personality", "mode", "sandbox_mode", "approval_policy")


class ToolsProblem(Exception):
    pass


def tool_list(body: Mapping[str, Any]) -> tuple[str, list[Any]]:
    """(placement, tools) of one captured body."""
    if "tools" in body:
        return "field", list(body.get("tools") or [])
    for item in body.get("input") or []:
        if isinstance(item, dict) and item.get("type") == ADDITIONAL_TOOLS:
            return "input", list(item.get("tools") or [])
    return "field", []


def _name(definition: Any) -> str:
    raw = str(definition.get("name") or definition.get("type") or "tool") if isinstance(definition, dict) else "tool"
    return SAFE.sub("-", raw).strip("-.") or "tool"


MAX_NOTED = 3


def _differences(a: Any, others: Sequence[Any], path: str = "", depth: int = 0) -> list[str]:
    """Where `a` differs from every other copy, as short `path: value` notes."""
    if not others:
        return []
    if isinstance(a, dict) and all(isinstance(o, dict) for o in others) and depth < 3:
        out: list[str] = []
        for k in sorted(set(a) | {k for o in others for k in o}):
            here = f"{path}.{k}" if path else str(k)
            if k not in a:
                out.append(f"no {here}")
            elif all(k not in o for o in others):
                out.append(f"{here}: {_short(a[k])}" if _short(a[k]) else f"with {here}")
            elif any(o.get(k) != a[k] for o in others):
                out += _differences(a[k], [o[k] for o in others if k in o and o[k] != a[k]], here, depth + 1)
        return out
    note = _short(a)
    return [f"{path}: {note}" if note else f"{path} differs"]


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 and not isinstance(value, (dict, list)) else ""


def describe_copy(definition: Any, copies: Sequence[Any], when: Mapping[str, Sequence[str]]) -> str:
    """A tool file's description: the tool, and when Codex sends several
    definitions under one name, what sets this one apart (its differing
    fields and its conditions) -- "A tool Codex sends" four times said nothing."""
    name = _name(definition)
    others = [c for c in copies if c != definition]
    if not others:
        return f"A tool Codex sends ({name})."
    notes = _differences(definition, others)
    shown = "; ".join(notes[:MAX_NOTED]) + (f"; {len(notes) - MAX_NOTED} more" if len(notes) > MAX_NOTED else "")
    cond = "; ".join(f"{axis} = {', '.join(vals)}" for axis, vals in when.items())
    return f"{name}, one of {len(copies)} definitions Codex sends: " + "; ".join(x for x in (shown, f"when {cond}" if cond else "") if x) + "."


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


def _members(definition: Any) -> list[Any]:
    out = [definition]
    if isinstance(definition, dict) and definition.get("type") == "namespace":
        out += [m for m in definition.get("tools") or [] if isinstance(m, dict)]
    return out


def _undescribed_property(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    for sub in (schema.get("properties") or {}).values() if isinstance(schema.get("properties"), dict) else ():
        if isinstance(sub, dict) and (not str(sub.get("description") or "").strip() or _undescribed_property(sub)):
            return True
    return _undescribed_property(schema.get("items"))


def _lint_facts(definition: Any) -> list[str]:
    """The tool lint rules Codex's own definition trips (missing descriptions):
    recorded as accepted, since the definition is kept verbatim."""
    found = []
    if any(isinstance(d, dict) and d.get("type") in ("function", "custom", "namespace")
           and not str(d.get("description") or "").strip() for d in _members(definition)):
        found.append("PS501")
    if any(isinstance(d, dict) and d.get("type") == "function" and _undescribed_property(d.get("parameters"))
           for d in _members(definition)):
        found.append("PS502")
    return found


def _merge_orders(sequences: list[list[str]]) -> list[str]:
    """One order consistent with every observed sequence (stable topological merge)."""
    after: dict[str, set[str]] = {}
    first_seen: dict[str, int] = {}
    for seq in sequences:
        for i, name in enumerate(seq):
            first_seen.setdefault(name, len(first_seen))
            after.setdefault(name, set())
            if i:
                after[name].add(seq[i - 1])
    out: list[str] = []
    pending = sorted(after, key=first_seen.__getitem__)
    while pending:
        ready = next((n for n in pending if after[n] <= set(out)), None)
        if ready is None:
            raise ToolsProblem("the tools are sent in orders that contradict each other")
        out.append(ready)
        pending.remove(ready)
    return out


def build_tools(parsed_bodies: Mapping[Config, Mapping[str, Any]], models: list[str]) -> tuple[dict[str, str], dict[str, Any]]:
    """(files by path, the spec.yaml keys `tools`, `layout`, `request`) for the captured bodies."""
    files: dict[str, str] = {}
    configs = list(parsed_bodies)
    defs: dict[str, dict[Config, bool]] = {}  # canonical definition -> where it was sent
    names: dict[str, str] = {}  # canonical definition -> file stem
    sequences: list[list[str]] = []
    placement: dict[str, set[str]] = {}
    used: set[str] = set()
    for cfg, body in parsed_bodies.items():
        place, tools = tool_list(body)
        placement.setdefault(cfg.model, set()).add(place)
        seq = []
        for t in tools:
            key = parts.canonical(t)
            if key not in names:
                stem, n = _name(t), 2
                while stem in used:
                    stem, n = f"{_name(t)}-{n}", n + 1
                used.add(stem)
                names[key] = stem
            defs.setdefault(key, {})[cfg] = True
            seq.append(names[key])
        sequences.append(seq)
    stems: dict[str, list[dict[str, Any]]] = {}
    copies: dict[str, list[Any]] = {}  # tool name -> its distinct definitions
    for key in defs:
        copies.setdefault(_name(json.loads(key)), []).append(json.loads(key))
    for key, where in defs.items():
        table = learn.factor({c: ("y" if where.get(c) else None) for c in configs})
        whens = rectangles(set(table.rows), table.axes) if table.axes else [{}]
        stems[names[key]] = whens
        for i, when in enumerate(whens):
            stem = names[key] if i == 0 else f"{names[key]}--{i + 1}"
            definition = json.loads(key)
            entry: dict[str, Any] = {"description": describe_copy(definition, copies[_name(definition)], when), "owner": "codex"}
            if when:
                entry["when"] = when
            accept = _lint_facts(definition)
            if accept:
                entry["accept_lint"] = accept
            entry["definition"] = json.loads(key)
            files[f"tools/{stem}.json"] = json.dumps(entry, indent=2, ensure_ascii=False) + "\n"
    order = []
    for stem in _merge_orders(sequences):
        order += [stem] + [f"{stem}--{i + 1}" for i in range(1, len(stems[stem]))]
    mixed = [m for m, p in placement.items() if len(p) > 1]
    if mixed:
        raise ToolsProblem(f"model {mixed[0]} sends its tools in the field for some configurations and as an input item for others")
    inputs = sorted(m for m, p in placement.items() if p == {"input"})
    keys: dict[str, Any] = {"tools": {"order": order}} if order else {}
    if inputs:
        keys["layout"] = {"tools": [{"when": {"model": inputs}, "place": "input"}]}
    keys["request"] = _request(parsed_bodies)
    return files, keys


def _request(bodies: Mapping[Config, Mapping[str, Any]]) -> dict[str, Any]:
    """Body order per model group and every parameter as Codex sent it."""
    configs = list(bodies)
    orders = learn.factor({c: json.dumps([k for k in b if k not in parts.VOLATILE_BODY]) for c, b in bodies.items()})
    rules: list[dict[str, Any]] = []
    for when_key, order in sorted(orders.rows.items()):
        keys = json.loads(order)
        if "tools" not in keys:  # the tools key's place, for variants whose tools go in the field (none sent here)
            keys.insert(keys.index("input") + 1, "tools")
        rule: dict[str, Any] = {"when": dict(zip(orders.axes, ([v] for v in when_key)))} if orders.axes else {}
        rule["order"] = keys
        rules.append(rule)
    all_keys = sorted({k for b in bodies.values() for k in b if k not in NOT_PARAMS})
    for k in all_keys:
        table = learn.factor({c: (parts.canonical(bodies[c][k]) if k in bodies[c] else None) for c in configs})
        groups: dict[str, list[tuple[str, ...]]] = {}
        for row, value in table.rows.items():
            groups.setdefault(value, []).append(row)
        absent = {tuple(getattr(c, a) for a in table.axes) for c in configs} - set(table.rows)
        for value, rows in sorted(groups.items()):
            for when in (rectangles(set(rows), table.axes) if table.axes else [{}]):
                base = {"when": when} if when else {}
                sent = json.loads(value)
                if isinstance(sent, dict):  # a mapping merges into the default: clear it first, so it is exactly Codex's
                    rules.append({**base, "params": {k: None}})
                rules.append({**base, "params": {k: sent}})
        for when in (rectangles(absent, table.axes) if absent and table.axes else []):
            rules.append({"when": when, "params": {k: None}})
    return {"rules": rules}
