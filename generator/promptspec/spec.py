"""The spec: what a prompt is made of, loaded and validated.

A spec folder holds `spec.yaml` (axes, layout, scenario), a Codex-style
`models.json`, fragment definitions under `fragments/*.yaml`, and the template
files they name.  Loading turns it into plain frozen dataclasses; nothing past
this module touches YAML, JSON or raw dicts.  Validation errors name the file
and line and say what to do, because a spec is edited by hand.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterable, Mapping

from .errors import SpecError
from .sources import LineFinder, Located, load_json, load_yaml
from .templating import Limits, Renderer, SpecFS

SPEC_FILE = "spec.yaml"
ROLES = ("developer", "user")
ENGINES = ("jinja", "codex")
BUILTIN_AXES = ("model", "personality", "mode")

# Codex's order of sections (see docs/spec-format.md for the sources).
DEFAULT_LAYOUT: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "developer": (
            "model_switch",
            "permissions",
            "developer_instructions",
            "collaboration_mode",
            "realtime",
            "personality",
            "apps",
            "skills",
            "plugins",
            "developer_extensions",
            "token_budget",
        ),
        "separate_developer": ("separate_developer",),
        "user": ("user_extensions", "agents_md", "environment_context"),
    }
)
SLOT_ROLE = {"developer": "developer", "separate_developer": "developer", "user": "user"}

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
"""Names that become file names and URLs: no separators, no '..', no spaces."""

DEFAULT_PERSONALITIES = ("default", "none", "friendly", "pragmatic")
DEFAULT_MODES = ("default", "plan", "execute", "pair_programming")


@dataclass(frozen=True)
class Model:
    slug: str
    display_name: str
    description: str
    context_window: int | None
    max_context_window: int | None
    effective_context_window_percent: int
    auto_compact_token_limit: int | None
    base_instructions: str | None
    instructions_template: str | None
    instructions_variables: Mapping[str, str | None]
    extra: Mapping[str, Any] = field(repr=False, compare=False)
    line: int | None = None

    @property
    def usable_window(self) -> int | None:
        if not self.context_window:
            return None
        return self.context_window * self.effective_context_window_percent // 100

    @property
    def compact_limit(self) -> int | None:
        """Where Codex starts auto-compaction: the configured limit, else 90 %."""
        if self.auto_compact_token_limit:
            return self.auto_compact_token_limit
        if self.context_window:
            return self.context_window * 9 // 10
        return None


@dataclass(frozen=True)
class Choice:
    """A personality or a mode: a named value of an axis, optionally with text."""

    name: str
    display_name: str
    description: str
    template: str | None
    engine: str
    line: int | None = None


@dataclass(frozen=True)
class Fragment:
    name: str
    role: str
    slot: str
    start: str
    end: str
    body: str | None
    body_file: str | None
    engine: str
    when: Mapping[str, tuple[str, ...]]
    requires: tuple[str, ...]
    description: str
    owner: str
    variables: Mapping[str, Any]
    order: int
    source: str
    line: int | None = None
    glue_ok: bool = False

    @property
    def template_ref(self) -> str:
        return self.body_file or f"{self.source} (inline)"


@dataclass(frozen=True)
class Rule:
    """One include/exclude rule: axis -> accepted values (fnmatch patterns)."""

    match: Mapping[str, tuple[str, ...]]
    line: int | None = None


@dataclass(frozen=True)
class AgentsConfig:
    tree: str | None
    project_root: str
    user_instructions: str | None
    max_bytes: int
    fallback_filenames: tuple[str, ...]


@dataclass(frozen=True)
class Spec:
    root: Path
    name: str
    models_file: str
    models: tuple[Model, ...]
    personalities: tuple[Choice, ...]
    modes: tuple[Choice, ...]
    extra_axes: tuple[tuple[str, tuple[str, ...]], ...]
    include: tuple[Rule, ...]
    exclude: tuple[Rule, ...]
    layout: Mapping[str, tuple[str, ...]]
    fragments: tuple[Fragment, ...]
    scenario: Mapping[str, Any]
    agents: AgentsConfig
    encodings: tuple[tuple[str, str], ...]
    token_budget: int | None
    instructions_override: str | None
    fs: SpecFS = field(repr=False, compare=False)
    renderer: Renderer = field(repr=False, compare=False)
    raw: Mapping[str, Any] = field(repr=False, compare=False, default_factory=dict)

    def model(self, slug: str) -> Model:
        for m in self.models:
            if m.slug == slug:
                return m
        raise KeyError(slug)

    def mode(self, name: str) -> Choice:
        return next(m for m in self.modes if m.name == name)

    def personality(self, name: str) -> Choice:
        return next(p for p in self.personalities if p.name == name)

    @property
    def axes(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """Every axis in matrix order: model, personality, mode, then extras."""
        return (
            ("model", tuple(m.slug for m in self.models)),
            ("personality", tuple(p.name for p in self.personalities)),
            ("mode", tuple(m.name for m in self.modes)),
            *self.extra_axes,
        )

    def slot_message(self, slot: str) -> str:
        for group, slots in self.layout.items():
            if slot in slots:
                return group
        raise KeyError(slot)


# ---------------------------------------------------------------------------
# Small validation helpers: each raises a SpecError with file and line.


class _Reader:
    def __init__(self, data: Any, where: str, what: str):
        self.where = where
        if not isinstance(data, dict):
            raise SpecError(
                f"{what} must be a mapping, found {_typename(data)}",
                where,
                line=getattr(data, "line", None),
            )
        self.data = data

    def line(self, key: str | None = None) -> int | None:
        if isinstance(self.data, Located):
            return self.data.line_of(key) if key is not None else self.data.line
        return None

    def err(self, key: str | None, message: str, hint: str | None = None) -> SpecError:
        return SpecError(message, self.where, line=self.line(key), hint=hint)

    def get(self, key: str, types: type | tuple[type, ...], default: Any = None, *, required: bool = False) -> Any:
        if key not in self.data or self.data[key] is None:
            if required:
                raise self.err(None, f"missing required key '{key}'", hint=f"add '{key}:'")
            return default
        value = self.data[key]
        if isinstance(value, bool) and bool not in (types if isinstance(types, tuple) else (types,)):
            raise self.err(key, f"'{key}' must be {_names(types)}, found a boolean")
        if not isinstance(value, types):
            raise self.err(key, f"'{key}' must be {_names(types)}, found {_typename(value)}")
        return value

    def text(self, key: str, default: str | None = None, *, required: bool = False) -> Any:
        return self.get(key, str, default, required=required)

    def str_list(self, key: str, default: Iterable[str] = ()) -> tuple[str, ...]:
        value = self.get(key, (list, str), None)
        if value is None:
            return tuple(default)
        if isinstance(value, str):
            value = [value]
        for item in value:
            if not isinstance(item, str) or isinstance(item, bool):
                raise self.err(key, f"'{key}' must be a list of strings, found {_typename(item)} in it")
        return tuple(value)

    def unknown(self, allowed: Iterable[str], what: str) -> None:
        extra = sorted(set(map(str, self.data)) - set(allowed))
        if extra:
            raise self.err(
                extra[0],
                f"unknown key '{extra[0]}' in {what}",
                hint=f"allowed keys: {', '.join(sorted(allowed))}",
            )


def _typename(value: Any) -> str:
    if value is None:
        return "nothing"
    return {dict: "a mapping", Located: "a mapping", list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def _names(types: type | tuple[type, ...]) -> str:
    types = types if isinstance(types, tuple) else (types,)
    return " or ".join(_typename(t()) if t is not type(None) else "null" for t in types)


def check_name(name: Any, where: str, line: int | None, what: str) -> str:
    if not isinstance(name, str) or not NAME_RE.match(name) or ".." in name:
        raise SpecError(
            f"{what} name {name!r} is not a safe name",
            where,
            line=line,
            hint="use letters, digits, '.', '_' or '-' only (it becomes a file name and URL)",
        )
    return name


def check_unique_slugs(names: Iterable[tuple[str, int | None]], where: str, what: str) -> None:
    """Names become URLs on case-insensitive file systems too: `A` and `a` clash."""
    seen: dict[str, str] = {}
    for name, line in names:
        key = name.lower()
        if key in seen:
            raise SpecError(
                f"{what} {name!r} clashes with {seen[key]!r} (names must differ in more than letter case)",
                where,
                line=line,
                hint="rename one of them",
            )
        seen[key] = name


# ---------------------------------------------------------------------------
# models.json


MODEL_KEYS = {
    "slug",
    "display_name",
    "description",
    "context_window",
    "max_context_window",
    "effective_context_window_percent",
    "auto_compact_token_limit",
    "base_instructions",
    "model_messages",
}


def parse_models(data: Any, path: Path, shown: str) -> tuple[Model, ...]:
    if isinstance(data, list):
        raise SpecError("models.json must be {\"models\": [...]}, found a bare list", shown, line=1, hint="wrap it as {\"models\": [...]}")
    top = _Reader(data, shown, "models.json")
    items = top.get("models", list, required=True)
    if not items:
        raise SpecError("models.json lists no models", shown, hint="add at least one model")
    models = []
    lines = LineFinder(path)
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise SpecError(f"model #{index + 1} must be an object, found {_typename(item)}", shown)
        slug = item.get("slug")
        line = lines.line_of(f'"{slug}"') if isinstance(slug, str) else None
        where_model = f"model #{index + 1}" + (f" ({slug})" if isinstance(slug, str) else "")
        if not isinstance(slug, str) or not slug:
            raise SpecError(f"{where_model} has no 'slug'", shown, line=line, hint="give every model a slug")
        check_name(slug, shown, line, "model")

        def num(key: str, default: int | None = None) -> int | None:
            value = item.get(key)
            if value is None:
                return default
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise SpecError(f"{where_model}: '{key}' must be a non-negative whole number, found {value!r}", shown, line=line)
            return value

        def txt(key: str, obj: Mapping[str, Any] = item) -> str | None:
            value = obj.get(key)
            if value is not None and not isinstance(value, str):
                raise SpecError(f"{where_model}: '{key}' must be a string, found {_typename(value)}", shown, line=line)
            return value

        messages = item.get("model_messages")
        template = None
        variables: dict[str, str | None] = {}
        if messages is not None:
            if not isinstance(messages, dict):
                raise SpecError(f"{where_model}: 'model_messages' must be an object or null", shown, line=line)
            template = txt("instructions_template", messages)
            raw_vars = messages.get("instructions_variables") or {}
            if not isinstance(raw_vars, dict):
                raise SpecError(f"{where_model}: 'instructions_variables' must be an object", shown, line=line)
            for key, value in raw_vars.items():
                if value is not None and not isinstance(value, str):
                    raise SpecError(f"{where_model}: instructions variable '{key}' must be a string or null", shown, line=line)
                variables[key] = value
        base = txt("base_instructions")
        if base is None and template is None:
            raise SpecError(
                f"model {slug!r} has no instructions",
                shown,
                line=line,
                hint="give it 'base_instructions' or 'model_messages.instructions_template'",
            )
        percent = num("effective_context_window_percent", 95)
        if percent is not None and not 1 <= percent <= 100:
            raise SpecError(f"{where_model}: 'effective_context_window_percent' must be 1..100, found {percent}", shown, line=line)
        models.append(
            Model(
                slug=slug,
                display_name=txt("display_name") or slug,
                description=txt("description") or "",
                context_window=num("context_window"),
                max_context_window=num("max_context_window"),
                effective_context_window_percent=percent or 95,
                auto_compact_token_limit=num("auto_compact_token_limit"),
                base_instructions=base,
                instructions_template=template,
                instructions_variables=MappingProxyType(variables),
                extra=MappingProxyType({k: v for k, v in item.items() if k not in MODEL_KEYS}),
                line=line,
            )
        )
    check_unique_slugs(((m.slug, m.line) for m in models), shown, "model slug")
    return tuple(models)


# ---------------------------------------------------------------------------
# spec.yaml


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
}


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
    top = _Reader(data, shown, SPEC_FILE)
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

    limits_cfg = _Reader(top.get("limits", dict, {}), shown, "limits")
    limits_cfg.unknown(LIMIT_CEILINGS.keys(), "limits")
    limits = Limits(
        **{
            key: _limit(limits_cfg, key, getattr(Limits, key), ceiling)
            for key, ceiling in LIMIT_CEILINGS.items()
        }
    )
    renderer = Renderer(fs, limits)

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
    matrix = _Reader(top.get("matrix", dict, {}), shown, "matrix")
    matrix.unknown({"include", "exclude"}, "matrix")
    include = _rules(matrix, "include", axis_names)
    exclude = _rules(matrix, "exclude", axis_names)

    layout = dict(DEFAULT_LAYOUT)
    raw_layout = top.get("layout", dict)
    if raw_layout is not None:
        lr = _Reader(raw_layout, shown, "layout")
        lr.unknown(DEFAULT_LAYOUT.keys(), "layout")
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

    scenario = top.get("scenario", dict, {}) or {}
    for key in scenario:
        if not isinstance(key, str) or not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", key):
            raise top.err("scenario", f"scenario key {key!r} is not a valid variable name", hint="use letters, digits and _")

    agents = _agents(top, fs)

    tokens = _Reader(top.get("tokens", dict, {}), shown, "tokens")
    tokens.unknown({"encodings", "fragment_budget"}, "tokens")
    encodings: list[tuple[str, str]] = []
    raw_enc = tokens.get("encodings", dict, {}) or {}
    for pattern, enc in raw_enc.items():
        if not isinstance(enc, str):
            raise tokens.err("encodings", f"encoding for {pattern!r} must be a name such as o200k_base")
        encodings.append((str(pattern), enc))

    fragments = _fragments(top, root, fs, layout, shown)

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
        renderer=renderer,
        raw=data,
    )


LIMIT_CEILINGS: Mapping[str, int | float] = MappingProxyType(
    {"max_output_chars": 16 * 1024 * 1024, "max_iterations": 10_000_000, "max_seconds": 60, "max_items": 1_000_000}
)
"""A spec may tighten the render budgets, or loosen them only this far: a
hostile spec must not be able to switch the sandbox's limits off."""

SYSTEM_DIRS = ("/proc", "/sys", "/dev", "/etc", "/boot", "/run")
SECRET_DIRS = frozenset({".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".config", ".git", ".password-store"})


def _limit(r: _Reader, key: str, default: int | float, ceiling: int | float) -> Any:
    value = r.get(key, (int, float) if isinstance(default, float) else int, default)
    if not 0 < value <= ceiling:
        raise r.err(key, f"limits.{key} must be above 0 and at most {ceiling}, found {value}", hint="budgets keep hostile templates finite")
    return float(value) if isinstance(default, float) else value


def _check_root(path: Path, top: _Reader, name: str) -> None:
    """A root widens what templates can read, so it must be a project folder:
    not the file system root, a home folder itself, a credentials folder
    (~/.ssh, .git...), or a system folder (/proc/self/environ would publish the environment)."""
    real = path.resolve()
    try:
        home: Path | None = Path.home().resolve()
    except (RuntimeError, KeyError, OSError):
        home = None
    bad = real == Path(real.anchor) or real == home
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


def _clean_text(r: _Reader, key: str, default: str | None = None) -> Any:
    """Inline prompt text obeys the same rule as text files: no NUL, no CR."""
    value = r.text(key, default)
    if isinstance(value, str):
        for char, what in (("\x00", "a NUL character"), ("\r", "a CR (carriage return) character")):
            if char in value:
                raise r.err(key, f"'{key}' contains {what}", hint="prompt text must be plain LF-terminated text")
    return value


def _choices(top: _Reader, key: str, default: tuple[str, ...], fs: SpecFS) -> tuple[Choice, ...]:
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
        r = _Reader(body, top.where, f"{key}.{name}")
        r.unknown({"display_name", "description", "template", "engine"}, f"{key}.{name}")
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
            )
        )
    check_unique_slugs(((c.name, c.line) for c in out), top.where, "personality" if key == "personalities" else key[:-1])
    return tuple(out)


def _rules(matrix: _Reader, key: str, axis_names: set[str]) -> tuple[Rule, ...]:
    raw = matrix.get(key, list, [])
    rules = []
    for item in raw:
        line = getattr(item, "line", matrix.line(key))
        if not isinstance(item, dict) or not item:
            raise SpecError(f"each matrix {key} rule must be a mapping of axis: value(s)", matrix.where, line=line)
        match: dict[str, tuple[str, ...]] = {}
        for axis, values in item.items():
            if axis not in axis_names:
                raise SpecError(f"matrix {key} rule names unknown axis {axis!r}", matrix.where, line=line, hint=f"axes: {', '.join(sorted(axis_names))}")
            values = [values] if isinstance(values, str) else values
            if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
                raise SpecError(f"matrix {key} rule for {axis!r} must be a string or list of strings", matrix.where, line=line)
            match[axis] = tuple(values)
        rules.append(Rule(MappingProxyType(match), line))
    return tuple(rules)


def _agents(top: _Reader, fs: SpecFS) -> AgentsConfig:
    r = _Reader(top.get("agents_md", dict, {}), top.where, "agents_md")
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
}


def _fragments(top: _Reader, root: Path, fs: SpecFS, layout: Mapping[str, tuple[str, ...]], shown: str) -> tuple[Fragment, ...]:
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
        r = _Reader(data, where, "fragment definition")
        r.unknown(FRAGMENT_KEYS, "a fragment definition")
        role = r.text("role", required=True)
        if role not in ROLES:
            raise r.err("role", f"fragment role must be 'developer' or 'user', found {role!r}", hint="set role: developer or role: user")
        slot = r.text("slot", required=True)
        if slot not in slot_group:
            raise r.err("slot", f"unknown slot {slot!r}", hint=f"use one of the layout's slots: {', '.join(slot_group)}")
        body = _clean_text(r, "text")
        body_file = r.text("body")
        if (body is None) == (body_file is None):
            raise r.err(None, "a fragment needs exactly one of 'body' (a template file) or 'text' (inline)")
        if body_file is not None:
            # Relative to the definition's folder: the body sits beside its yaml.
            rel = body_file if body_file.startswith("@") else (path.parent.relative_to(fs.root) / body_file).as_posix()
            target = fs.resolve(rel, origin=where)
            if not target.is_file():
                what = "is not a regular file" if target.exists() else "not found"
                raise SpecError(f"body file {body_file!r} {what}", where, line=r.line("body"), hint="create it or fix 'body:'")
            body_file = rel
        engine = r.text("engine", "jinja")
        if engine not in ENGINES:
            raise r.err("engine", f"engine must be one of {', '.join(ENGINES)}, found {engine!r}")
        when: dict[str, tuple[str, ...]] = {}
        wr = _Reader(r.get("when", dict, {}), where, "when")
        for axis in wr.data:
            when[str(axis)] = wr.str_list(str(axis))
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
                when=MappingProxyType(when),
                requires=r.str_list("requires"),
                description=r.text("description", ""),
                owner=r.text("owner", ""),
                variables=MappingProxyType(dict(variables)),
                order=r.get("order", int, 0),
                source=where,
                line=r.line(),
                glue_ok=bool(r.get("glue_ok", bool, False)),
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
