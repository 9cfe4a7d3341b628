"""Writing a spec folder from a release's harvest.

The spec is a real one: the catalog as Codex prints it, one fragment per kind
of part with its markers, each distinct text once under `texts/`, chosen by the
axes it was seen to depend on, with the scratch world's values turned back into
placeholders.  Nothing here knows a release: the layout, the dependencies and
the personality rules come from what was captured.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, Mapping

import yaml

from ...oracle import parts
from ...oracle.capture import AXES, MODES, PERSONALITIES, Config, Harvest
from ...oracle.scratch import PROMPT
from ...render.codex import CODEX_PLACEHOLDER, escape_braces
from . import learn, world_spec
from .conditions import Catalog, rectangles
from .tools_spec import ToolsProblem, build_tools, deferred_files

SCENARIO_DEFAULTS = {
    "cwd": "/home/user/project",
    "home": "/home/user",
    "shell": "bash",
    "current_date": "2026-01-01",
    "timezone": "Etc/UTC",
}
"""What an imported spec renders with when no machine is given; verify passes the scratch values."""

ENV_NAMES = ("cwd", "home", "current_date", "timezone", "shell")

# Known parts: (start marker, end marker) split off as the fragment's markers.
MARKED = {
    "skills": ("<skills_instructions>", "</skills_instructions>"),
    "collaboration_mode": ("<collaboration_mode>", "</collaboration_mode>"),
    "environment_context": ("<environment_context>", "</environment_context>"),
    "multi_agent_mode": ("<multi_agent_mode>", "</multi_agent_mode>"),
    "multi_agent_role": ("<multi_agent_role>", "</multi_agent_role>"),
    "deferred_tools": ("<tools>", "</tools>"),
}

DESCRIPTIONS = {
    "base_instructions": "The model's base instructions, sent as a developer message of their own.",
    "permissions": "Sandbox sentence, approval block and writable roots, joined as Codex joins them.",
    "skills": "The skills Codex found (bundled system skills unpacked into CODEX_HOME).",
    "collaboration_mode": "The collaboration mode's instructions, sent only when the release sends them.",
    "agents_md": "The project's AGENTS.md files, from the repository root down to the working directory.",
    "environment_context": "Where the agent runs: working directory, shell, date, time zone (and file system, in newer releases).",
    "multi_agent_mode": "How this model may work with sub-agents.",
    "multi_agent_role": "This model's role in a team of agents.",
    "multi_agent_usage": "How to use sub-agents.",
    "deferred_tools": "Tool namespaces the model can load on demand.",
}


class _Dumper(yaml.SafeDumper):
    """Plain YAML: a repeated `when` is written out again, not as an anchor and alias."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


class ImportProblem(Exception):
    """Something in the captures the spec format cannot express (named in one line)."""


@dataclass
class Built:
    files: dict[str, str] = field(default_factory=dict)
    not_modelled: list[str] = field(default_factory=list)


def build(h: Harvest) -> Built:
    out = Built(not_modelled=[f"MCP server {n}'s tools: Codex {h.release} shows them in no first request of these models"
                              " (code mode keeps them behind its exec tool)" for n in h.mcp_hidden])
    ok = [c for c in h.captures if c.body is not None]
    if not ok:
        raise ImportProblem("Codex refused every configuration")
    parsed = {c.config: parts.parse(c.body, PROMPT) for c in ok}  # type: ignore[arg-type]
    for cfg, p in parsed.items():
        if p.prompt is None:
            raise ImportProblem(f"{cfg.id}: the request does not end with the turn's prompt")
    configs = list(parsed)

    models = [m["slug"] for m in h.catalog["models"] if not h.models or m["slug"] in h.models]
    approvals = [a for a in _ordered({c.approval_policy for c in configs}, ("untrusted", "on-failure", "on-request", "never"))]
    sandboxes = [s for s in _ordered({c.sandbox_mode for c in configs}, ("read-only", "workspace-write", "danger-full-access"))]
    refused = sorted({(c.config.approval_policy, c.refused) for c in h.captures if c.refused and c.config.approval_policy not in approvals})

    layouts = _layouts(models, configs, parsed)
    cat = Catalog(h.catalog, models)

    # -- base instructions -----------------------------------------------------
    observed: dict[tuple[str, str], str] = {}
    for cfg, p in parsed.items():
        text = p.instructions if p.instructions is not None else _part(p, "base_instructions")
        if text is not None:
            observed[(cfg.model, cfg.personality)] = text
    base = learn.learn_base(h.catalog, observed)

    # -- parts -------------------------------------------------------------------
    names: list[str] = []
    for lay in layouts.values():
        for _, slots in lay:
            names += [s for s in slots if s not in names]
    listing = world_spec.deferred_listing(h.mcp_deferred, [_part(p, "deferred_tools") for p in parsed.values()])
    texts = _Texts({**h.sentinels, **({LISTING: listing} if listing else {})})
    own_texts = catalog_strings(h.catalog)
    fragments: dict[str, dict[str, Any]] = {}
    renamed: dict[str, str] = {}
    for name in names:
        values = {cfg: _part(p, name) for cfg, p in parsed.items()}
        new = _config_part_name(name, values, h.sentinels)
        if new != name:
            renamed[name] = new
        fragments[new] = _fragment(name, values, layouts, texts, base, own_texts, h.roots_sorted)
        fragments[new]["slot"] = new
    if renamed:
        layouts = {m: tuple((role, tuple(renamed.get(s, s) for s in slots)) for role, slots in lay) for m, lay in layouts.items()}

    # -- spec.yaml ------------------------------------------------------------
    agents_docs, agents_section, agents_cwd = world_spec.agents_files(h.world, SCENARIO_DEFAULTS["cwd"])
    spec: dict[str, Any] = {
        "name": f"Codex {h.release}",
        "models": "models.json",
        **({"model_filter": list(models)} if h.models else {}),
        "personalities": _personalities(base, [p for p in PERSONALITIES if any(c.personality == p for c in configs)]),
        "modes": {m: {"description": _MODE_DESCRIPTIONS[m]} for m in MODES if any(c.mode == m for c in configs)},
        "axes": {"sandbox_mode": sandboxes, "approval_policy": approvals},
        "scenario": {**SCENARIO_DEFAULTS, "cwd": agents_cwd, **world_spec.text_values(h.world)},
        "agents_md": agents_section,
        "layouts": _layout_entries(cat, layouts),
    }
    try:
        tool_files, tool_keys = build_tools({c.config: c.body for c in ok}, models, h.catalog)  # type: ignore[misc]
    except ToolsProblem as exc:
        raise ImportProblem(str(exc)) from None
    exact_params = tool_keys.get("request", {}).pop("exact", [])
    if "request" in tool_keys and not tool_keys["request"]:
        del tool_keys["request"]
    spec.update(tool_keys)
    exact = _exact_instructions(base, texts, h.release) + exact_params
    if exact:
        spec["exact"] = exact
    out.files.update(tool_files)
    out.files.update(deferred_files({c.config: c.body for c in ok}, h.mcp_deferred, models, h.catalog))  # type: ignore[misc]
    if refused:
        spec["refuse"] = {"approval_policy": {a: f"Codex {h.release} refuses it ({why})" for a, why in refused}}
    excluded = _refused_cells(h, cat, {"personality": list(spec["personalities"]), "mode": list(spec["modes"]),
                                       "sandbox_mode": sandboxes, "approval_policy": approvals})
    if excluded:
        spec["matrix"] = {"exclude": excluded}
    out.files["spec.yaml"] = _HEADER.format(release=h.release) + yaml.dump(spec, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    out.files["models.json"] = json.dumps(h.catalog, indent=2, ensure_ascii=False) + "\n"
    out.files.update(agents_docs)
    for name, frag in fragments.items():
        out.files[f"fragments/{name}.yaml"] = yaml.dump(frag, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    for path, text in texts.files.items():
        out.files[path] = text
    out.files["provenance.json"] = json.dumps(_provenance(h, texts, out.not_modelled, agents_docs), indent=2, ensure_ascii=False) + "\n"
    return out


_HEADER = "# Imported from the released Codex CLI {release} by `promptspec import-codex --cli`.\n# See provenance.json for the commands run and the sha256 of every captured text.\n"
IMPORT_HEADER = "# Imported from the released Codex CLI "
"""How every spec.yaml this importer writes starts (what --force looks for)."""

_MODE_DESCRIPTIONS = {
    "unset": "No collaboration mode chosen for the turn.",
    "default": "Codex's Default collaboration mode.",
    "plan": "Codex's Plan collaboration mode.",
}

_PERSONALITY_DESCRIPTIONS = {
    "unset": "No personality configured: Codex's own default applies.",
    "none": "personality = \"none\".",
    "friendly": "personality = \"friendly\".",
    "pragmatic": "personality = \"pragmatic\".",
}


def _ordered(values: set[str], order: tuple[str, ...]) -> list[str]:
    return [v for v in order if v in values] + sorted(values - set(order))


def _part(p: parts.Parsed, name: str) -> str | None:
    for item in p.items:
        for n, t in item.parts:
            if n == name:
                return t
    return None


def _shape(p: parts.Parsed) -> tuple:
    """A request's layout: (instructions in the field?, (role, part names) per message)."""
    return (p.instructions is not None,
            tuple((it.role, tuple(n for n, _ in it.parts)) for it in p.items if it.kind == "message"))


def _merge(shapes: list[tuple], what: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """One layout for several requests: per message the union of the part
    names in send order (a part some requests lack is an empty fragment there)."""
    if len({field for field, _ in shapes}) != 1:
        raise ImportProblem(f"{what}: the base instructions go in the instructions field for some configurations and in a message for others")
    shapes = [msgs for _, msgs in shapes]
    count = {len(s) for s in shapes}
    if len(count) != 1:
        raise ImportProblem(f"{what}: the number of input items differs between configurations")
    merged = []
    for i in range(count.pop()):
        roles = {s[i][0] for s in shapes}
        if len(roles) != 1:
            raise ImportProblem(f"{what}: input item {i} changes role between configurations")
        order: list[str] = []
        for s in sorted(shapes, key=lambda s: -len(s[i][1])):
            for n in s[i][1]:
                if n not in order:
                    order.append(n)
        for s in shapes:
            seq = [n for n in order if n in s[i][1]]
            if seq != list(s[i][1]):
                raise ImportProblem(f"{what}: the parts of input item {i} change order between configurations")
        merged.append((roles.pop(), tuple(order)))
    return tuple(merged)


def _layouts(models: list[str], configs: list[Config], parsed: Mapping[Config, parts.Parsed]):
    """Per model one layout (key: the slug); a model whose requests no single
    layout fits gets one per shape, keyed by (slug, the axis values it holds
    for) -- the spec's layouts choose by any axis, so any capture has one."""
    out: dict[Any, tuple[tuple[str, tuple[str, ...]], ...]] = {}
    for model in models:
        mine = [c for c in configs if c.model == model]
        if not mine:
            continue
        try:
            out[model] = _merge([_shape(parsed[c]) for c in mine], f"model {model}")
            continue
        except ImportProblem:
            pass
        table = learn.factor({c: json.dumps(_shape(parsed[c])) for c in mine}, [a for a in AXES if a != "model"])
        by_shape: dict[str, list[tuple[str, ...]]] = {}
        for row, shape in sorted(table.rows.items()):
            by_shape.setdefault(shape, []).append(row)
        for shape, rows in by_shape.items():
            field, msgs = json.loads(shape)
            lay = _merge([(field, tuple((r, tuple(n)) for r, n in msgs))], f"model {model}")
            for rect in rectangles(set(rows), table.axes):
                out[(model, tuple((k, tuple(v)) for k, v in rect.items()))] = lay
    return out


def _invert(layouts):
    inv: dict[Any, list[str]] = {}
    for key, lay in layouts.items():
        if isinstance(key, str):
            inv.setdefault(lay, []).append(key)
    return inv


def _layout_entries(cat: Catalog, layouts) -> list[dict[str, Any]]:
    """One entry per distinct layout; the one most models share last and
    without a `when` (the first matching layout wins), so the file names only
    the models that differ.  Layouts of part of a model's variants come first."""
    split = [_layout_entry({"model": key[0], **{k: (v[0] if len(v) == 1 else list(v)) for k, v in key[1]}}, lay)
             for key, lay in layouts.items() if not isinstance(key, str)]
    groups = sorted(_invert(layouts).items(), key=lambda kv: (len(kv[1]), sorted(kv[1])))
    return split + [_layout_entry({} if i == len(groups) - 1 else cat.when({"model": sorted(models_of)}, about="layout messages instructions"), lay)
                    for i, (lay, models_of) in enumerate(groups)]


def _layout_entry(when: Mapping[str, Any], lay) -> dict[str, Any]:
    entry: dict[str, Any] = {"when": dict(when)} if when else {}
    if any("base_instructions" in slots for _, slots in lay):
        entry["instructions"] = "section"
    entry["messages"] = [{"role": role, "slots": list(slots)} for role, slots in lay]
    return entry


def _config_part_name(name: str, values: Mapping[Config, str | None], sentinels: Mapping[str, str]) -> str:
    """A part the parser could not name (`part_1`) that is exactly a config text
    the user passed (`-c developer_instructions=...`) is named for that key."""
    if not name.startswith("part_"):
        return name
    texts = {v for v in values.values() if v is not None}
    for key, value in sentinels.items():
        if key not in parts.ENVIRONMENT and texts == {value}:
            return key
    return name


def _exact_instructions(base: learn.BaseLearned, texts: "_Texts", release: str) -> list[dict[str, Any]]:
    """`exact:` entries for the (model, personality) cells whose base
    instructions no personality rule derives from the catalog: each distinct
    text once, for the cells that share it (as few `when`s as it takes)."""
    sharing: dict[str, set[tuple[str, str]]] = {}
    for cell, text in sorted(base.exceptions.items()):
        sharing.setdefault(text, set()).add(cell)
    out = []
    for text, cells in sharing.items():
        path = texts.add("instructions", _file_name(sorted(cells)), text)
        for when in rectangles(cells, ("model", "personality")):
            out.append({"part": "instructions", "when": _plain_when(when), "file": path,
                        "why": f"Codex {release} sends this text here; no personality rule gives it from models.json"})
    return out


def _refused_cells(h: Harvest, cat: Catalog, values: Mapping[str, list[str]]) -> list[dict[str, Any]]:
    """Configurations the release refuses while it takes each of their values
    elsewhere (a personality one model does not take): matrix exclusions, as
    few rules as it takes, so the spec has no variant Codex would not run.
    A value refused everywhere is left out of its axis instead (`refuse:`)."""
    cells = {tuple(getattr(c.config, a) for a in AXES) for c in h.captures if c.refused
             and all(getattr(c.config, a) in values[a] for a in AXES if a != "model")}
    if not cells:
        return []
    rects = [{a: v for a, v in rect.items() if a == "model" or set(v) != set(values[a])} for rect in rectangles(cells, AXES)]
    return [cat.when(rect, about="refused") for rect in rects]  # an axis all of whose values are refused there is left out


def _plain_when(when: Mapping[str, list[str]]) -> dict[str, Any]:
    """A `when` as a person writes it: a single value without list brackets."""
    return {k: (v[0] if len(v) == 1 else list(v)) for k, v in when.items()}


def _personalities(base: learn.BaseLearned, names: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in names:
        entry: dict[str, Any] = {"description": _PERSONALITY_DESCRIPTIONS.get(name, "")}
        rule = base.rules.get(name)
        if rule is not None:
            if rule.fills is not None and rule.fills != name:
                entry["fills"] = rule.fills
            if rule.removes_section:
                entry["removes_section"] = rule.removes_section
        out[name] = entry
    return out


def as_template(raw: str, sentinels: Mapping[str, str]) -> str:
    """A captured text as a spec text that gives it back: template syntax it
    holds written as literals (render/codex.py escape_braces), then the
    scratch world's values as placeholders -- so any text can be stored."""
    return parts.to_placeholders(escape_braces(raw), {k: escape_braces(v) for k, v in sentinels.items()})


class _Texts:
    """Every distinct text once, as `texts/PART/NAME.md`, with placeholders for the sentinels."""

    def __init__(self, sentinels: Mapping[str, str]):
        self.sentinels = sentinels
        self.files: dict[str, str] = {}
        self.by_text: dict[tuple[str, str], str] = {}
        self.captured: dict[str, str] = {}  # path -> sha256 of the text as captured

    def add(self, folder: str, name: str, raw: str) -> str:
        key = (folder, raw)
        if key in self.by_text:
            return self.by_text[key]
        text = as_template(raw, self.sentinels)
        path = f"texts/{folder}/{name}.md"
        n = 2
        while path in self.files:
            path = f"texts/{folder}/{name}-{n}.md"
            n += 1
        self.files[path] = text
        self.by_text[key] = path
        self.captured[path] = hashlib.sha256(_fixed(raw, self.sentinels).encode("utf-8")).hexdigest()
        return path

    def placeholders(self, paths) -> list[str]:
        found = set()
        for p in paths:
            found |= set(CODEX_PLACEHOLDER.findall(self.files[p]))
        extra = [n for n in self.sentinels if n not in parts.ENVIRONMENT]  # config texts (-c developer_instructions=...)
        return [n for n in (*ENV_NAMES, *extra) if n in found]


LISTING = "deferred_namespaces"
COMPUTED = {LISTING: '(("- " ~ (tools.deferred | map(attribute="name") | join("\\n- ")) ~ "\\n") if tools.deferred else "")'}
"""Placeholders a text gets from the variant rather than the scenario: the
deferred MCP namespaces listed from the spec's deferred tool files."""

AXIS_EXPR = {"model": "model.slug", "personality": "personality.name", "mode": "mode.name",
             "sandbox_mode": "sandbox_mode", "approval_policy": "approval_policy"}


def _file_name(keys: list[tuple[str, ...]]) -> str:
    """A readable name for a text several keys share: per axis the value(s) they
    have in common (up to three, joined by '+'); an axis with more is left out."""
    if not keys or not keys[0]:
        return "text"
    parts = []
    for i in range(len(keys[0])):
        values = sorted({k[i] for k in keys})
        if len(values) <= 3:
            parts.append("+".join(values))
    return "--".join(parts) or "text"


def catalog_strings(catalog: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """Per model: each longer text in its `model_messages` -> the Jinja path that reads it."""
    out: dict[str, dict[str, str]] = {}

    def walk(obj: Any, path: str, found: dict[str, str]) -> None:
        if isinstance(obj, str) and len(obj) >= CATALOG_TEXT_MIN:
            found.setdefault(obj, path)
        elif isinstance(obj, dict):
            for k, v in obj.items():
                if isinstance(k, str) and k.isidentifier():
                    walk(v, f"{path}.{k}", found)
    for m in catalog["models"]:
        found: dict[str, str] = {}
        walk(m.get("model_messages") or {}, "model.messages", found)
        out[m["slug"]] = found
    return out


CATALOG_TEXT_MIN = 40
"""Shorter catalog strings are not worth a reference (and could match by chance)."""


def _choice(texts: _Texts, folder: str, table: learn.Table,
            catalog: Mapping[str, Mapping[str, str]] | None = None) -> tuple[str, dict[str, Any], list[str]]:
    """A Jinja expression giving the table's text for the variant ('' when absent), its lookup and placeholders.

    Rows whose text is one of the model's own catalog texts (`model_messages`)
    read it from there instead of storing a copy, when they all share one path."""
    from_catalog: dict[str, str] = {}
    if catalog and "model" in table.axes:
        mi = table.axes.index("model")
        hits = {k: catalog.get(k[mi], {}).get(raw) for k, raw in table.rows.items()}
        paths = {p for p in hits.values() if p}
        if len(paths) == 1:
            path = paths.pop()
            from_catalog = {"|".join(k): path for k, p in hits.items() if p == path}
            table = learn.Table(table.axes, {k: v for k, v in table.rows.items() if "|".join(k) not in from_catalog})
    expr, var, names = _stored_choice(texts, folder, table)
    if not from_catalog:
        return expr, var, names
    name = folder.replace("/", "_") + "_from_catalog"
    key = ' ~ "|" ~ '.join(AXIS_EXPR[a] for a in table.axes)
    path = next(iter(from_catalog.values()))
    return f"({path} if ({key}) in {name} else {expr})", {**var, name: sorted(from_catalog)}, names


def _stored_choice(texts: _Texts, folder: str, table: learn.Table) -> tuple[str, dict[str, Any], list[str]]:
    lookup: dict[str, str] = {}
    sharing: dict[str, list[tuple[str, ...]]] = {}
    for key, raw in table.rows.items():
        sharing.setdefault(raw, []).append(key)
    for key, raw in sorted(table.rows.items()):
        lookup["|".join(key)] = texts.add(folder, _file_name(sharing[raw]), raw)
    names = texts.placeholders(lookup.values())
    args = "".join(f", {n}={COMPUTED.get(n, n)}" for n in names)
    var = folder.replace("/", "_")
    if not table.axes:
        if not lookup:
            return '""', {}, []
        return f'text({json.dumps(lookup[""])}{args})', {}, names
    key = ' ~ "|" ~ '.join(AXIS_EXPR[a] for a in table.axes)
    expr = f'(text({var}[{key}]{args}) if ({key}) in {var} else "")'
    return expr, {var: lookup}, names


def _fragment(name: str, values: Mapping[Config, str | None], layouts, texts: _Texts, base: learn.BaseLearned,
              catalog: Mapping[str, Mapping[str, str]] | None = None, roots_sorted: bool | None = None) -> dict[str, Any]:
    role = next(r for lay in layouts.values() for r, slots in lay if name in slots)
    frag: dict[str, Any] = {"description": DESCRIPTIONS.get(name, f"A part Codex sends ({name})."), "owner": "codex",
                            "role": role, "slot": name}
    if name == "base_instructions":
        frag["text"] = "{{ base.text }}"  # cells no personality rule explains: spec.yaml `exact:`
        return frag
    if name == "agents_md":
        sample = next(v for v in values.values() if v is not None)
        head, sep, _ = sample.partition("\n<INSTRUCTIONS>\n")
        if sep and sample.endswith("\n</INSTRUCTIONS>") and all(v is None or v.startswith(head + sep) for v in values.values()):
            frag.update({"start": as_template(head, texts.sentinels) + sep, "end": "\n</INSTRUCTIONS>",
                         "requires": ["agents_md"], "text": "{{ agents_md }}", "glue_ok": True})
            return frag
        # A shape the AGENTS.md rule does not give: the captured texts, chosen by axes, as for any part.
    if name == "permissions":
        split = {cfg: (learn.split_permissions(v) if v is not None else None) for cfg, v in values.items()}
        if all(s is not None for cfg, s in split.items() if values[cfg] is not None):
            exprs, variables = [], {}
            for i, sub in enumerate(("sandbox", "approval", "roots")):
                table = learn.factor({cfg: (s[i] if s is not None else None) for cfg, s in split.items()})
                table.rows = {k: v for k, v in table.rows.items() if v != ""}
                derived = _sorted_roots(table, texts.sentinels) if sub == "roots" and roots_sorted else None
                expr, var, _ = derived if derived else _choice(texts, f"permissions/{sub}", table)
                exprs.append(expr)
                variables.update(var)
            present = learn.factor({cfg: ("yes" if v is not None else None) for cfg, v in values.items()})
            body = "{{ codex_join(" + ", ".join(exprs) + ') or "\\n" }}'
            if present.axes:
                variables["sent_for"] = sorted("|".join(k) for k in present.rows)
                key = ' ~ "|" ~ '.join(AXIS_EXPR[a] for a in present.axes)
                body = "{% if (" + key + ") in sent_for %}" + body + "{% endif %}"
            frag.update({"start": learn.PERMISSIONS_START, "end": learn.PERMISSIONS_END, "text": body, "glue_ok": True})
            if variables:
                frag["variables"] = variables
            return frag
    start, end = MARKED.get(name, ("", ""))
    if start and all(v is None or (v.startswith(start) and v.endswith(end)) for v in values.values()):
        values = {cfg: (v[len(start):len(v) - len(end)] if v is not None else None) for cfg, v in values.items()}
        frag.update({"start": start, "end": end, "glue_ok": True})
    table = learn.factor(values)
    expr, var, _ = _choice(texts, name, table, catalog)
    frag["text"] = "{{ " + expr + " }}"
    if var:
        frag["variables"] = var
    return frag


ROOTS_LINE = re.compile(r"^ The writable roots? (?:is|are) ((?:`[^`]*`, )*`[^`]*`)\.$")


def _sorted_roots(table: learn.Table, sentinels: Mapping[str, str]):
    """For a release that sorts its writable roots: the roots line computed from
    the machine's values (cwd, home) and sorted, instead of a fixed text whose
    order only holds for the machine it was captured on.  None if the rows are
    not one plain roots line."""
    exprs = set()
    for raw in table.rows.values():
        m = ROOTS_LINE.match(raw)
        if not m:
            return None
        items = []
        for root in re.findall(r"`([^`]*)`", m.group(1)):
            text = parts.to_placeholders(root, sentinels)
            found = CODEX_PLACEHOLDER.match(text)
            if found and found.end() == len(text):
                items.append(found.group(1))
            elif found and found.start() == 0:
                items.append(f"({found.group(1)} ~ {json.dumps(text[found.end():])})")
            elif "{{" in text:
                return None
            else:
                items.append(json.dumps(text))
        word = "roots are" if len(items) > 1 else "root is"
        exprs.add(f'(" The writable {word} `" ~ ([{", ".join(items)}] | sort | join("`, `")) ~ "`.")')
    if len(exprs) != 1:
        return None
    key = ' ~ "|" ~ '.join(AXIS_EXPR[a] for a in table.axes) or '""'
    expr = exprs.pop()
    return f"({expr} if ({key}) in roots_sent_for else \"\")", {"roots_sent_for": sorted("|".join(k) for k in table.rows)}, []


SCRATCH = "/scratch"
"""The name provenance.json gives the scratch world's folder, whose real path is
the caller's TMPDIR plus a random name: a committed import names no one's temp
folder, and two imports of one release on one day write the same file."""


def _fixed(text: str, sentinels: Mapping[str, str]) -> str:
    home = sentinels.get("home")
    return text.replace(str(PurePosixPath(home).parent), SCRATCH) if home else text


def _provenance(h: Harvest, texts: _Texts, not_modelled: list[str], world_files=()) -> dict[str, Any]:
    refused = sorted({f"{c.config.approval_policy}: {c.refused}" for c in h.captures if c.refused})
    return {
        "codex_release": h.release,
        "commands": h.commands,
        **({"only": h.only} if h.only else {}),  # the part of the matrix imported (--only)
        "configurations_captured": sum(1 for c in h.captures if c.body is not None),
        "configurations_refused": sum(1 for c in h.captures if c.refused),
        "refused": refused,
        "sentinels": {k: _fixed(v, h.sentinels) for k, v in h.sentinels.items()},
        "not_modelled": not_modelled,
        **world_spec.provenance(h.world, world_files),
        "texts": {path: {"sha256_captured": sha} for path, sha in sorted(texts.captured.items())},
    }
