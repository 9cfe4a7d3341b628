"""Tools and request parameters of an imported release, in the spec's tools format.

Each distinct tool definition becomes a tool file whose `when` is the set of
configurations that carried it (split into as few axis rectangles as it takes,
since a `when` is one conjunction; models by catalog field, conditions.py),
named for what sets it apart from the other definitions sent under its name;
one global send order is merged from every request's order; placement
(`tools` field or `additional_tools` item) is learned per model.  Request
parameters are written only where Codex sends something other than the
documented defaults (assemble/body.py), so a reviewer reads the residue.
"""

from __future__ import annotations

import json
import re
from typing import Any, Mapping, Sequence

from pathlib import Path

from ...assemble.body import default_params
from ...oracle import parts
from ...oracle.capture import Config
from ...oracle.world import searchable_servers
from ...spec.model import DEFAULT_BODY_ORDER
from . import learn
from .conditions import Catalog, words

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


def _merge_orders(sequences: list[list[str]], owners: list[str] | None = None) -> list[str]:
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
            a = pending[0]
            b = sorted(after[a] - set(out))[0]
            where = sorted({who for who, seq in zip(owners or [""] * len(sequences), sequences) if a in seq and b in seq})
            raise ToolsProblem(f"part tools ({', '.join(where[:3]) or 'every model'}): {a} and {b} are sent in both orders,"
                               " and a spec has one tool order (tools.order)")
        out.append(ready)
        pending.remove(ready)
    return out


def _variant_names(group: list[Any], stem: str, whens: list[Mapping[str, Any]]) -> list[str]:
    """File stems for the definitions sent under one name: named by the
    top-level keys whose values differ between them
    (`web_search.external_web_access.text-image`, not `web_search-2`).  Short
    values name themselves, an absent key adds nothing; a key whose values
    are long (a description, a schema) is named by where the definition is
    sent when that is one condition (`view_image.supports_image_detail_original`),
    else with a counter.  A lone definition keeps the plain name; what sets
    each apart is said in its description (describe_copy)."""
    if len(group) == 1:
        return [stem]
    keys = sorted({k for d in group if isinstance(d, dict) for k in d})
    differing = [k for k in keys if len({parts.canonical(d.get(k)) if isinstance(d, dict) else "" for d in group}) > 1]
    out = []
    for i, d in enumerate(group):
        tokens: list[str] = []
        for k in differing:
            token = _token(k, d.get(k) if isinstance(d, dict) else None)
            if token is None:
                token = _when_token(whens[i], stem) or f"{k}{i + 1}"
            if token not in tokens:
                tokens.append(token)
        out.append(".".join([stem, *[SAFE.sub("-", t).strip("-.") for t in tokens if t]]))
    seen: dict[str, int] = {}
    for i, name in enumerate(out):  # two definitions the tokens cannot tell apart: numbered
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            out[i] = f"{name}.{seen[name]}"
    return out


def _when_token(when: Mapping[str, Any], stem: str) -> str | None:
    """A name for a one-condition `when` (a true/false field reads as its name),
    when the field is about the tool (shares a word with its name): a field
    that merely happens to pick the same models (`comp_hash: 2911`) names nothing."""
    if len(when) != 1:
        return None
    (key, value), = when.items()
    if isinstance(value, list) or not (words(key) & words(stem)):
        return None
    return _token(key, {"true": True, "false": False}.get(value, value))


def _token(key: str, value: Any) -> str | None:
    """A short name for one differing value ("" for an absent one), or None when it has none."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return key if value else f"no-{key}"
    if isinstance(value, str) and len(value) <= 24:
        return value
    if isinstance(value, list) and all(isinstance(x, str) and len(x) <= 12 for x in value) and len(value) <= 4:
        return "+".join(value) or f"no-{key}"
    if isinstance(value, (int, float)):
        return f"{key}-{value}"
    return None


def build_tools(parsed_bodies: Mapping[Config, Mapping[str, Any]], models: list[str],
                catalog: Mapping[str, Any] | None = None) -> tuple[dict[str, str], dict[str, Any]]:
    """(files by path, the spec.yaml keys `tools`, `layout`, `request`) for the captured bodies."""
    files: dict[str, str] = {}
    configs = list(parsed_bodies)
    cat = Catalog(catalog or {"models": [{"slug": m} for m in models]}, models)
    defs: dict[str, dict[Config, bool]] = {}  # canonical definition -> where it was sent
    by_name: dict[str, list[str]] = {}  # sent name -> its distinct definitions, first seen first
    seqs: list[list[str]] = []
    for cfg, body in parsed_bodies.items():
        place, tools = tool_list(body)
        seq = []
        for t in tools:
            key = parts.canonical(t)
            if key not in defs:
                by_name.setdefault(_name(t), []).append(key)
            defs.setdefault(key, {})[cfg] = True
            seq.append(key)
        seqs.append(seq)
    sent_where: dict[str, list[dict[str, Any]]] = {}
    for key, where in defs.items():
        table = learn.factor({c: ("y" if where.get(c) else None) for c in configs})
        sent_where[key] = cat.whens(set(table.rows), table.axes, about=_name(json.loads(key)))
    names: dict[str, str] = {}  # canonical definition -> file stem
    copies: dict[str, list[Any]] = {}  # tool name -> its distinct definitions
    for stem, keys in by_name.items():
        copies[stem] = [json.loads(k) for k in keys]
        names.update(zip(keys, _variant_names(copies[stem], stem, [sent_where[k][0] for k in keys])))
    sequences = [[names[k] for k in seq] for seq in seqs]
    stems: dict[str, int] = {}
    for key, whens in sent_where.items():
        stem = names[key]
        definition = json.loads(key)
        stems[stem] = len(whens)
        for i, when in enumerate(whens):
            file_stem = stem if i == 0 else f"{stem}--{i + 1}"
            cond = {k: (v if isinstance(v, list) else [v]) for k, v in when.items()}
            files[f"tools/{file_stem}.json"] = _tool_file(describe_copy(definition, copies[_name(definition)], cond), when, definition)
    order = []
    for stem in _merge_orders(sequences, [f"model {c.model}" for c in parsed_bodies]):
        order += [stem] + [f"{stem}--{i + 1}" for i in range(1, stems[stem])]
    keys: dict[str, Any] = {"tools": {"order": order}} if order else {}
    places = learn.factor({c: tool_list(b)[0] for c, b in parsed_bodies.items()})
    inputs = {row for row, place in places.rows.items() if place == "input"}
    if inputs:
        whens = cat.whens(inputs, places.axes, about="tools input")
        keys["layout"] = {"tools": "input" if whens == [{}] else [{"when": w, "place": "input"} for w in whens]}
    request = _request(parsed_bodies, cat, catalog)
    if request:
        keys["request"] = request
    return files, keys


def deferred_files(bodies: Mapping[Config, Mapping[str, Any]], deferred: Mapping[str, Any], models: list[str],
                   catalog: Mapping[str, Any] | None = None) -> dict[str, str]:
    """A tool file per MCP server whose tools the release defers (oracle/mcp.py):
    the namespace Codex loads for it, `deferred: true` (not sent in a first
    request, listed in its `<tools>` section), for the cells that list it."""
    cat = Catalog(catalog or {"models": [{"slug": m} for m in models]}, models)
    files: dict[str, str] = {}
    for server, definition in sorted(deferred.items()):
        listed = f"- mcp__{server}"
        table = learn.factor({c: ("y" if listed in json.dumps(b.get("input") or []) or server in searchable_servers(b) else None)
                              for c, b in bodies.items()})
        stem = _name(definition)
        said = f"The tools of the MCP server {server}: deferred (listed, not sent), loaded when the model searches for them (tool_search)."
        for i, when in enumerate(cat.whens(set(table.rows), table.axes, about=stem)):
            files[f"tools/{stem if i == 0 else f'{stem}--{i + 1}'}.json"] = _tool_file(said, when, definition, deferred=True)
    return files


def _tool_file(description: str, when: Mapping[str, Any], definition: Any, deferred: bool = False) -> str:
    """One tool file as the importer writes it (keys in reading order; the lint rules Codex's own definition trips accepted)."""
    entry: dict[str, Any] = {"description": description, "owner": "codex"}
    if when:
        entry["when"] = when
    if deferred:
        entry["deferred"] = True
    accept = _lint_facts(definition)
    if accept:
        entry["accept_lint"] = accept
    entry["definition"] = definition
    return json.dumps(entry, indent=2, ensure_ascii=False) + "\n"


def _request(bodies: Mapping[Config, Mapping[str, Any]], cat: Catalog, catalog: Mapping[str, Any] | None) -> dict[str, Any]:
    """Only what differs from the documented defaults (assemble/body.py:
    `DEFAULT_BODY_ORDER`, `default_params` from the model's catalog entry):
    a body order where Codex's is not the default one, and per parameter a
    rule for the cells where Codex sends something else (the part of a
    mapping that differs; null where it sends nothing).  Where a merge cannot
    give the value (a key to drop inside a mapping) the value is an `exact:`
    entry; those are returned under the key `exact`."""
    defaults = _defaults(catalog, {c.model for c in bodies})
    configs = list(bodies)
    rules: list[dict[str, Any]] = []
    exact: list[dict[str, Any]] = []

    def sent_order(body: Mapping[str, Any]) -> list[str]:
        return [k for k in body if k not in parts.VOLATILE_BODY]

    def default_order(body: Mapping[str, Any]) -> list[str]:
        return [k for k in DEFAULT_BODY_ORDER if k in body and k not in parts.VOLATILE_BODY]

    differs = {c: json.dumps(_with_tools(sent_order(b))) if sent_order(b) != default_order(b) else None for c, b in bodies.items()}
    orders = learn.factor(differs)
    for order, rows in _grouped(orders.rows).items():
        for when in cat.whens(set(rows), orders.axes, about="order"):
            rules.append({**({"when": when} if when else {}), "order": json.loads(order)})
    all_keys = sorted({k for b in bodies.values() for k in b if k not in NOT_PARAMS})
    for k in all_keys:
        patches: dict[Config, str | None] = {}
        for c in configs:
            patches[c] = _patch(defaults[c.model].get(k, _ABSENT), bodies[c].get(k, _ABSENT))
        table = learn.factor(patches)
        for patch, rows in _grouped(table.rows).items():
            kind, value = json.loads(patch)
            for when in cat.whens(set(rows), table.axes, about=k):
                if kind == "merge":
                    rules.append({**({"when": when} if when else {}), "params": {k: value}})
                else:
                    exact.append({"part": f"param {k}", **({"when": when} if when else {}), "value": value,
                                  "why": "a request rule merges into the default mapping; this one drops a key of it"})
    out: dict[str, Any] = {}
    if rules:
        out["rules"] = rules
    if exact:
        out["exact"] = exact
    return out


_ABSENT = object()


def _with_tools(keys: list[str]) -> list[str]:
    """The tools key's place, for variants whose tools go in the field (none sent here)."""
    if "tools" not in keys and "input" in keys:
        keys = [*keys]
        keys.insert(keys.index("input") + 1, "tools")
    return keys


def _grouped(rows: Mapping[tuple[str, ...], str]) -> dict[str, list[tuple[str, ...]]]:
    out: dict[str, list[tuple[str, ...]]] = {}
    for row, value in sorted(rows.items()):
        out.setdefault(value, []).append(row)
    return out


def _defaults(catalog: Mapping[str, Any] | None, slugs: set[str]) -> dict[str, dict[str, Any]]:
    """Per model, the parameters promptspec sends when a spec says nothing."""
    from ...spec.readers.catalog import parse_models

    models = parse_models({"models": [m for m in (catalog or {}).get("models", []) if m.get("slug") in slugs]},
                          Path("models.json"), "models.json") if catalog else ()
    found = {m.slug: default_params(m) for m in models}
    return {s: found.get(s, {}) for s in slugs}


def _patch(default: Any, sent: Any) -> str | None:
    """How one parameter gets from the default to what was sent, as
    JSON [kind, value]: ["merge", v] for a request rule, ["exact", v] where a
    merge cannot do it; None when the default is already right."""
    if sent is _ABSENT:
        return None if default is _ABSENT else json.dumps(["merge", None])
    if default is not _ABSENT and parts.canonical(default) == parts.canonical(sent):
        return None
    if isinstance(default, dict) and isinstance(sent, dict):
        nested_drop = any(isinstance(v, dict) and isinstance(default.get(kk), dict) and set(default[kk]) - set(v)
                          for kk, v in sent.items())
        if set(default) - set(sent) or nested_drop:
            return json.dumps(["exact", sent])
        return json.dumps(["merge", {kk: v for kk, v in sent.items() if parts.canonical(default.get(kk, _NONE)) != parts.canonical(v)}])
    return json.dumps(["merge", sent])


_NONE = {"__absent__": True}
