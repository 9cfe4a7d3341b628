"""Loading a spec folder: `spec.yaml` and everything it names, validated.

Validation errors name the file and line and say what to do.  Reads go
through `files.SpecFS`; roots (extra folders a spec may read) are checked here
because they widen the trust boundary.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

from ...errors import SpecError
from .catalog import parse_models
from ..files import SpecFS, not_text
from ..limits import Limits
from ..model import (
    BUILTIN_AXES,
    DEFAULT_LAYOUT,
    DEFAULT_MODES,
    DEFAULT_PERSONALITIES,
    ENGINES,
    ROLES,
    SPEC_FILE,
    AgentsConfig,
    Budget,
    Choice,
    Fragment,
    Model,
    Rule,
    Spec,
)
from . import shaping
from .reader import Reader, check_name, check_unique_slugs, parse_when, read_when
from .sources import Located, load_json, load_yaml
from .exact import load_exact
from .tools import load_placements, load_request, load_tools
from .turns import load_turns

SPEC_KEYS = {
    "name",
    "models",
    "model_filter",
    "roots",
    "personalities",
    "modes",
    "axes",
    "matrix",
    "layout",
    "fragments",
    "scenario",
    "agents_md",
    "tokens",
    "instructions_override",
    "limits",
    "budgets",
    "layouts",
    "refuse",
    "derived",
    "aliases",
    "tools",
    "request",
    "exact",
    "turns",
    "conversations",
}

BUDGET_KEYS = {"max_tokens", "max_percent", "max_delta"}


def load_spec(root: str | Path) -> Spec:
    """Load and validate the spec folder `root` (raises SpecError)."""
    root = Path(root)
    spec_path = root / SPEC_FILE
    if not root.is_dir():
        raise SpecError("spec folder not found", root, hint="pass --spec DIR pointing at a folder with spec.yaml")
    if not spec_path.is_file():
        raise SpecError(f"no {SPEC_FILE} in the spec folder", root, hint=f"create {SPEC_FILE} (see docs/spec-format.md)")
    shown = SPEC_FILE
    SpecFS(root).resolve(SPEC_FILE, origin=shown)  # refuses a spec.yaml symlinked out of the folder
    data = load_yaml(spec_path, shown)
    if data is None:
        raise SpecError(f"{SPEC_FILE} is empty", shown, line=1, hint="see docs/spec-format.md for the required keys")
    top = Reader(data, shown, SPEC_FILE)
    top.unknown(SPEC_KEYS, SPEC_FILE)

    roots: dict[str, Path] = {}
    for name, value in (top.get("roots", dict, {}) or {}).items():
        check_name(name, shown, top.line("roots"), "root")
        if not isinstance(value, str):
            raise top.err("roots", f"root '{name}' must be a path string")
        path = Path(value)
        path = path if path.is_absolute() else (root / path)
        if not path.is_dir():
            raise top.err("roots", f"root '{name}' is not a folder: {value}", hint="fix the path (relative paths start at the spec folder)")
        _check_root(path, top, name)
        roots[name] = path
    fs = SpecFS(root, roots)

    limits_cfg = Reader(top.get("limits", dict, {}), shown, "limits")
    limits_cfg.unknown(LIMIT_CEILINGS.keys(), "limits")
    limits = Limits(
        **{
            key: _limit(limits_cfg, key, getattr(Limits, key), ceiling)
            for key, ceiling in LIMIT_CEILINGS.items()
        }
    )

    models_ref = top.text("models", "models.json")
    models_path = fs.resolve(models_ref, origin=shown)
    models_shown = fs.display(models_path) if models_path.exists() else models_ref
    models = parse_models(load_json(models_path, models_shown), models_path, models_shown)
    model_filter = top.str_list("model_filter")
    if model_filter:
        known = {m.slug for m in models}
        for slug in model_filter:
            if slug not in known:
                raise top.err("model_filter", f"model_filter names unknown model {slug!r}", hint=f"known: {', '.join(sorted(known))}")
        models = tuple(m for m in models if m.slug in model_filter)

    personalities = _choices(top, "personalities", DEFAULT_PERSONALITIES, fs)
    modes = _choices(top, "modes", DEFAULT_MODES, fs)

    extra_axes: list[tuple[str, tuple[str, ...]]] = []
    for name, values in (top.get("axes", dict, {}) or {}).items():
        line = top.data["axes"].line_of(name) if isinstance(top.data["axes"], Located) else None
        check_name(name, shown, line, "axis")
        if name in BUILTIN_AXES:
            raise SpecError(f"axis '{name}' is built in", shown, line=line, hint=f"declare '{name}' values under '{name}s:'/models.json instead")
        if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
            raise SpecError(f"axis '{name}' must list its values as strings", shown, line=line)
        for v in values:
            check_name(v, shown, line, f"value of axis '{name}'")
        check_unique_slugs(((v, line) for v in values), shown, f"value of axis '{name}'")
        extra_axes.append((name, tuple(values)))
    check_unique_slugs(((name, top.line("axes")) for name in (*BUILTIN_AXES, *(n for n, _ in extra_axes))), shown, "axis")

    axis_names = set(BUILTIN_AXES) | {name for name, _ in extra_axes}
    matrix = Reader(top.get("matrix", dict, {}), shown, "matrix")
    matrix.unknown({"include", "exclude"}, "matrix")
    include = _rules(matrix, "include", axis_names, models)
    exclude = _rules(matrix, "exclude", axis_names, models)

    layout = dict(DEFAULT_LAYOUT)
    raw_layout = top.get("layout", dict)
    if raw_layout is not None:
        lr = Reader(raw_layout, shown, "layout")
        lr.unknown((*DEFAULT_LAYOUT.keys(), "tools"), "layout")
        for group in DEFAULT_LAYOUT:
            if group in raw_layout:
                slots = lr.str_list(group)
                for slot in slots:
                    check_name(slot, shown, lr.line(group), "slot")
                layout[group] = slots
        all_slots = [s for slots in layout.values() for s in slots]
        dup = sorted({s for s in all_slots if all_slots.count(s) > 1})
        if dup:
            raise top.err("layout", f"slot '{dup[0]}' appears twice in the layout", hint="each slot has one place")

    layouts = shaping.layouts(top, axis_names, models)
    if layouts:
        if raw_layout is not None and any(group in raw_layout for group in DEFAULT_LAYOUT):
            raise top.err("layouts", "give either 'layout' groups or 'layouts', not both", hint="'layout: {tools: ...}' may stay")
        layout = shaping.layouts_as_groups(layouts, top)
    refuse = shaping.refuse(top, dict(extra_axes))

    scenario = top.get("scenario", dict, {}) or {}
    for key in scenario:
        if not isinstance(key, str) or not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", key):
            raise top.err("scenario", f"scenario key {key!r} is not a valid variable name", hint="use letters, digits and _")
    derived = shaping.derived(top, set(scenario) | axis_names)
    aliases = shaping.aliases(top, dict(extra_axes))

    agents = _agents(top, fs)

    tokens = Reader(top.get("tokens", dict, {}), shown, "tokens")
    tokens.unknown({"encodings", "fragment_budget"}, "tokens")
    encodings: list[tuple[str, str]] = []
    raw_enc = tokens.get("encodings", dict, {}) or {}
    for pattern, enc in raw_enc.items():
        if not isinstance(enc, str):
            raise tokens.err("encodings", f"encoding for {pattern!r} must be a name such as o200k_base")
        encodings.append((str(pattern), enc))

    fragments = _fragments(top, root, fs, layout, shown, axis_names, models)

    tool_defs, *tools_cfg = load_tools(top, fs, axis_names, models)
    placements = load_placements(
        raw_layout.get("tools") if isinstance(raw_layout, dict) else None, shown,
        raw_layout.line_of("tools") if isinstance(raw_layout, Located) else None, axis_names, models,
    )
    request = load_request(top, placements, tuple(tools_cfg), axis_names, models)  # type: ignore[arg-type]

    exact = load_exact(top, fs, axis_names, models, fragments, tool_defs, request)
    turns = load_turns(top, fragments, axis_names, scenario, models, fs, {t.name for t in tool_defs})
    conversations = _conversations(top, fs)

    override = top.text("instructions_override")
    if override is not None:
        fs.resolve(override, origin=shown)

    return Spec(
        root=root,
        name=top.text("name", root.resolve().name),
        models_file=models_shown,
        models=models,
        personalities=personalities,
        modes=modes,
        extra_axes=tuple(extra_axes),
        include=include,
        exclude=exclude,
        layout=MappingProxyType(layout),
        fragments=fragments,
        scenario=MappingProxyType(dict(scenario)),
        agents=agents,
        encodings=tuple(encodings),
        token_budget=tokens.get("fragment_budget", int),
        instructions_override=override,
        fs=fs,
        limits=limits,
        raw=data,
        budgets=_budgets(top, shown, {m.slug for m in models}),
        layouts=layouts,
        refuse=MappingProxyType(refuse),
        derived=MappingProxyType(derived),
        aliases=MappingProxyType(aliases),
        tools=tool_defs,
        request=request,
        exact=exact,
        turns=turns,
        conversations=conversations,
    )


def _conversations(top: Reader, fs: SpecFS) -> tuple[tuple[str, str], ...]:
    """`conversations: {NAME: FILE}`: the scripts the site, the lock and the reviews cover."""
    raw = top.get("conversations", dict, {}) or {}
    out = []
    for name, path in raw.items():
        check_name(name, top.where, top.data["conversations"].line_of(name) if isinstance(top.data["conversations"], Located) else None, "conversation")
        if not isinstance(path, str):
            raise top.err("conversations", f"conversation {name!r} must name a script file", hint="give NAME: conversations/FILE.yaml")
        if not fs.resolve(path, origin=top.where).is_file():
            raise top.err("conversations", f"conversation script {path!r} not found", hint="create it or fix the path")
        out.append((str(name), path))
    check_unique_slugs(((n, top.line("conversations")) for n, _ in out), top.where, "conversation")
    return tuple(out)


def _budgets(top: Reader, shown: str, slugs: set[str]) -> tuple[Budget, ...]:
    """`budgets: {MODEL-or-pattern-or-all: {max_tokens, max_percent, max_delta}}`."""
    import fnmatch

    raw = top.get("budgets", dict, {}) or {}
    br = Reader(raw, shown, "budgets")
    out = []
    for key in raw:
        pattern = "*" if str(key) == "all" else str(key)
        line = br.line(key)
        if not any(fnmatch.fnmatchcase(s, pattern) for s in slugs):
            raise SpecError(f"budget for {key!r} matches no model", shown, line=line, hint=f"use 'all' or a model slug: {', '.join(sorted(slugs))}")
        r = Reader(raw[key], shown, f"budget for {key!r}")
        r.unknown(BUDGET_KEYS, f"budgets.{key}")
        if not r.data:
            raise r.err(None, f"budget for {key!r} sets no limit", hint="set max_tokens, max_percent or max_delta")
        max_tokens = r.get("max_tokens", int)
        max_percent = r.get("max_percent", (int, float))
        delta = r.get("max_delta", (int, str))
        max_delta = max_delta_percent = None
        if isinstance(delta, str):
            text = delta.strip()
            try:
                max_delta_percent = float(text[:-1]) if text.endswith("%") else None
            except ValueError:
                max_delta_percent = None
            if max_delta_percent is None:
                raise r.err("max_delta", f"max_delta must be a number of tokens or a percentage such as 5%, found {delta!r}")
        else:
            max_delta = delta
        for name, value in (("max_tokens", max_tokens), ("max_percent", max_percent), ("max_delta", max_delta), ("max_delta", max_delta_percent)):
            if value is not None and value < 0:
                raise r.err(name, f"{name} must not be negative, found {value}")
        if max_percent is not None and max_percent > 100:
            raise r.err("max_percent", f"max_percent is a share of the usable window (0-100), found {max_percent}")
        out.append(Budget(pattern, max_tokens, None if max_percent is None else float(max_percent), max_delta, max_delta_percent, line, str(key)))
    return tuple(out)


LIMIT_CEILINGS: Mapping[str, int | float] = MappingProxyType(
    {"max_output_chars": 16 * 1024 * 1024, "max_iterations": 10_000_000, "max_seconds": 60, "max_items": 1_000_000}
)
"""A spec may tighten the render budgets, or loosen them only this far: a
hostile spec must not be able to switch the sandbox's limits off."""

SYSTEM_DIRS = ("/proc", "/sys", "/dev", "/etc", "/boot", "/run")
SECRET_DIRS = frozenset({".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".config", ".git", ".password-store"})


def _limit(r: Reader, key: str, default: int | float, ceiling: int | float) -> Any:
    value = r.get(key, (int, float) if isinstance(default, float) else int, default)
    if not 0 < value <= ceiling:
        raise r.err(key, f"limits.{key} must be above 0 and at most {ceiling}, found {value}", hint="budgets keep hostile templates finite")
    return float(value) if isinstance(default, float) else value


def _check_root(path: Path, top: Reader, name: str) -> None:
    """A root widens what templates can read, so it must be a project folder:
    not the file system root, a home folder itself, a credentials folder
    (~/.ssh, .git...), or a system folder (/proc/self/environ would publish the environment)."""
    real = path.resolve()
    try:
        home: Path | None = Path.home().resolve()
    except (RuntimeError, KeyError, OSError):
        home = None
    # A root above the home folder reaches ~/.ssh through any symlink to it.
    bad = real == Path(real.anchor) or (home is not None and (real == home or real in home.parents))
    # Credential and tool-state folders: a root inside one could publish a
    # private key as "prompt text".
    bad = bad or any(part in SECRET_DIRS for part in real.parts)
    for system in SYSTEM_DIRS:
        sysdir = Path(system)
        bad = bad or real == sysdir or sysdir in real.parents
    if bad:
        raise top.err(
            "roots",
            f"root '{name}' points at {real.as_posix()}, which may not be read by a spec",
            hint="point it at the project folder (such as a Codex checkout) instead",
        )


def _clean_text(r: Reader, key: str, default: str | None = None) -> Any:
    """Inline prompt text obeys the same rule as text files: no NUL, no CR."""
    value = r.text(key, default)
    if isinstance(value, str):
        found = not_text(value)
        if found is not None:
            raise r.err(key, f"'{key}' contains {found[0]}", hint="prompt text must be plain LF-terminated text")
    return value


def _choices(top: Reader, key: str, default: tuple[str, ...], fs: SpecFS) -> tuple[Choice, ...]:
    raw = top.get(key, dict)
    if raw is None:
        return tuple(Choice(n, n.replace("_", " ").title(), "", None, "jinja") for n in default)
    if not raw:
        raise top.err(key, f"'{key}' is empty", hint="define at least one")
    out = []
    for name, body in raw.items():
        line = raw.line_of(name) if isinstance(raw, Located) else None
        check_name(name, top.where, line, key[:-1] if not key.endswith("ies") else "personality")
        body = body or {}
        r = Reader(body, top.where, f"{key}.{name}")
        allowed = {"display_name", "description", "template", "engine"}
        if key == "personalities":
            allowed |= {"fills", "removes_section"}
        r.unknown(allowed, f"{key}.{name}")
        template = r.text("template")
        if template is not None:
            path = fs.resolve(template, origin=top.where)
            if not path.is_file():
                raise SpecError(f"template {template!r} of {key}.{name} not found", top.where, line=line, hint="create the file or fix the path")
        engine = r.text("engine", "jinja")
        if engine not in ENGINES:
            raise r.err("engine", f"engine must be one of {', '.join(ENGINES)}, found {engine!r}")
        out.append(
            Choice(
                name=name,
                display_name=r.text("display_name", name.replace("_", " ").title()),
                description=r.text("description", ""),
                template=template,
                engine=engine,
                line=line,
                fills=shaping.fills(r),
                removes_section=shaping.heading(r, "removes_section"),
            )
        )
    check_unique_slugs(((c.name, c.line) for c in out), top.where, "personality" if key == "personalities" else key[:-1])
    return tuple(out)


def _rules(matrix: Reader, key: str, axis_names: set[str], models: tuple[Model, ...]) -> tuple[Rule, ...]:
    """A matrix rule is a condition written without the `when:` key."""
    raw = matrix.get(key, list, [])
    rules = []
    for item in raw:
        line = getattr(item, "line", matrix.line(key))
        if not isinstance(item, dict) or not item:
            raise SpecError(f"each matrix {key} rule must be a mapping of axis: value(s)", matrix.where, line=line)
        rules.append(Rule(parse_when(item, matrix.where, line, axes=axis_names, models=models, what=f"matrix {key} rule"), line))
    return tuple(rules)


def _agents(top: Reader, fs: SpecFS) -> AgentsConfig:
    r = Reader(top.get("agents_md", dict, {}), top.where, "agents_md")
    r.unknown({"tree", "project_root", "user_instructions", "max_bytes", "fallback_filenames"}, "agents_md")
    tree = r.text("tree")
    if tree is not None and not fs.resolve(tree, origin=top.where).is_dir():
        raise r.err("tree", f"agents_md.tree {tree!r} is not a folder", hint="point it at the sample project folder")
    user = r.text("user_instructions")
    if user is not None:
        fs.resolve(user, origin=top.where)
    max_bytes = r.get("max_bytes", int, 32 * 1024)
    if max_bytes < 0:
        raise r.err("max_bytes", "agents_md.max_bytes must not be negative")
    fallbacks = r.str_list("fallback_filenames")
    for name in fallbacks:
        if "/" in name or name in (".", ".."):
            raise r.err("fallback_filenames", f"fallback file name {name!r} must be a plain file name")
    return AgentsConfig(
        tree=tree,
        project_root=r.text("project_root", "/workspace/project"),
        user_instructions=user,
        max_bytes=max_bytes,
        fallback_filenames=fallbacks,
    )


FRAGMENT_KEYS = {
    "role",
    "slot",
    "start",
    "end",
    "body",
    "text",
    "engine",
    "when",
    "requires",
    "description",
    "owner",
    "variables",
    "order",
    "glue_ok",
    "later",
}


def _fragments(top: Reader, root: Path, fs: SpecFS, layout: Mapping[str, tuple[str, ...]], shown: str,
               axis_names: set[str], models: tuple[Model, ...]) -> tuple[Fragment, ...]:
    folder_ref = top.text("fragments", "fragments")
    folder = fs.resolve(folder_ref, origin=shown)
    if not folder.is_dir():
        raise top.err("fragments", f"fragments folder {folder_ref!r} not found", hint="create it, or set 'fragments:' to the folder holding *.yaml fragment definitions")
    slot_group = {slot: group for group, slots in layout.items() for slot in slots}
    out = []
    try:
        files = sorted(p for p in folder.iterdir() if p.suffix in (".yaml", ".yml"))
    except OSError as exc:
        raise top.err("fragments", f"cannot list the fragments folder {folder_ref!r}: {exc.strerror or exc}") from None
    for path in files:
        # A definition symlinked out of the spec folder is refused like any other reference.
        fs.resolve(f"{folder_ref.rstrip('/')}/{path.name}", origin=fs.display(folder))
        where = fs.display(path)
        name = check_name(path.stem, where, None, "fragment")
        data = load_yaml(path, where)
        r = Reader(data, where, "fragment definition")
        r.unknown(FRAGMENT_KEYS, "a fragment definition")
        role = r.text("role", required=True)
        if role not in ROLES:
            raise r.err("role", f"fragment role must be 'developer' or 'user', found {role!r}", hint="set role: developer or role: user")
        later = bool(r.get("later", bool, False))
        slot = r.text("slot", "" if later else None, required=not later)
        if slot and slot not in slot_group:
            raise r.err("slot", f"unknown slot {slot!r}", hint=f"use one of the layout's slots: {', '.join(slot_group)}")
        body = _clean_text(r, "text")
        body_file = r.text("body")
        if (body is None) == (body_file is None):
            raise r.err(None, "a fragment needs exactly one of 'body' (a template file) or 'text' (inline)")
        if body_file is not None:
            # Relative to the definition's folder: the body sits beside its yaml.
            # (folder_ref, not a path relative to the spec folder: the folder may be under a root.)
            rel = body_file if body_file.startswith("@") else f"{folder_ref.rstrip('/')}/{body_file}"
            target = fs.resolve(rel, origin=where)
            if not target.is_file():
                what = "is not a regular file" if target.exists() else "not found"
                raise SpecError(f"body file {body_file!r} {what}", where, line=r.line("body"), hint="create it or fix 'body:'")
            body_file = rel
        engine = r.text("engine", "jinja")
        if engine not in ENGINES:
            raise r.err("engine", f"engine must be one of {', '.join(ENGINES)}, found {engine!r}")
        when = read_when(r, axes=axis_names, models=models)
        variables = r.get("variables", dict, {})
        for key in variables:
            if not isinstance(key, str) or not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", key):
                raise r.err("variables", f"variable name {key!r} is not valid", hint="use letters, digits and _")
        out.append(
            Fragment(
                name=name,
                role=role,
                slot=slot,
                start=_clean_text(r, "start", ""),
                end=_clean_text(r, "end", ""),
                body=body,
                body_file=body_file,
                engine=engine,
                when=when,
                requires=r.str_list("requires"),
                description=r.text("description", ""),
                owner=r.text("owner", ""),
                variables=MappingProxyType(dict(variables)),
                order=r.get("order", int, 0),
                source=where,
                line=r.line(),
                glue_ok=bool(r.get("glue_ok", bool, False)),
                later=later,
            )
        )
    first: dict[str, Fragment] = {}
    for f in out:  # names become page names: `Note` and `note`, or note.yaml and note.yml, clash
        other = first.setdefault(f.name.lower(), f)
        if other is not f:
            raise SpecError(
                f"fragment {f.name!r} clashes with {other.source}",
                f.source,
                hint="rename one of the files: fragment names must differ in more than letter case",
            )
    return tuple(out)
