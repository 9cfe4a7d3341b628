"""The spec: what a prompt is made of, as plain frozen dataclasses.

A spec folder holds `spec.yaml` (axes, layout, scenario), a Codex-style
`models.json`, fragment definitions under `fragments/*.yaml`, and the template
files they name.  Loading (load.py) turns it into these dataclasses; nothing
past the spec stage touches YAML, JSON or raw dicts.
"""

from __future__ import annotations

import fnmatch
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Iterator, Mapping, Protocol

from .files import SpecFS
from .limits import Limits

SPEC_FILE = "spec.yaml"
ROLES = ("developer", "user")
ENGINES = ("jinja", "codex")
BUILTIN_AXES = ("model", "personality", "mode")
BUILTIN_NAMES = ("model", "personality", "mode", "agents_md", "variant", "base", "model_base", "tools", "thread")
"""Names every template can read without the scenario defining them (assemble's
context provides them); a derived value or scenario key may not hide them."""

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
# The Responses body keys in the order Codex 0.125.0 sends them.  `model`,
# `instructions`, `input` and `tools` are filled by assembly; the others come
# from defaults (request.py in assemble/) and the spec's `request:` settings.
# A key without a value (prompt_cache_key and client_metadata have none by
# default: they are session-specific) is not sent.
DEFAULT_BODY_ORDER = (
    "model",
    "instructions",
    "input",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "reasoning",
    "store",
    "stream",
    "include",
    "prompt_cache_key",
    "text",
    "client_metadata",
)
COMPUTED_BODY_KEYS = ("model", "instructions", "input", "tools")
TOOL_PLACES = ("field", "input")
MODEL_FIELDS = (
    "slug",
    "display_name",
    "description",
    "context_window",
    "max_context_window",
    "effective_context_window_percent",
    "auto_compact_token_limit",
)
"""Model fields read into `Model` attributes; every other catalog field is in `Model.extra`."""
DEFAULT_DESCRIPTION_BUDGET = 65536
"""The most characters one sent tool description may have (`tools.description_budget`)."""

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
    messages: Mapping[str, Any] = field(repr=False, compare=False, default_factory=dict)
    """The catalog's `model_messages` as given: per-model texts templates may read (`model.messages`)."""

    def field_value(self, name: str) -> str:
        """A catalog field as `when:` compares it: strings as they are, anything
        else (true, 12, null for a missing field) in its JSON spelling."""
        value = getattr(self, name) if name in MODEL_FIELDS else self.extra.get(name)
        return value if isinstance(value, str) else json.dumps(value, sort_keys=True)

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
    fills: str | None = None
    """Personalities: the instructions variable that fills `{{ personality }}`
    (`pragmatic` -> `personality_pragmatic`, "" -> the empty string); None: the name rule."""
    removes_section: str | None = None
    """Personalities: a heading line whose section is removed from templates without the placeholder."""

    @property
    def filled(self) -> str:
        """The instructions variable's suffix this personality fills (`personality.fills` in templates)."""
        return self.name if self.fills is None else self.fills


class _Cell(Protocol):
    """What a `When` reads from a variant (assemble's Variant has it)."""

    def value(self, axis: str) -> str: ...


_WILDCARD = re.compile(r"[*?\[]")
"""What makes an fnmatch pattern more than the text itself."""


class When(Mapping[str, tuple[str, ...]]):
    """Which variants a rule applies to: every name must match one of its
    fnmatch patterns.  A name is an axis, else a models.json field of the
    variant's model (compared in its JSON spelling when it is not a string).

    One type for fragments, tools, layouts, request rules, placements and
    matrix include/exclude, so the grammar and the matching cannot drift apart
    (they once had four parsers and six matchers).  Read it with
    `spec.reader.read_when`, which checks every name at load."""

    __slots__ = ("_terms", "_fields", "_tests")

    def __init__(self, terms: Mapping[str, tuple[str, ...]] | None = None, fields: frozenset[str] = frozenset()):
        self._terms: dict[str, tuple[str, ...]] = {str(k): tuple(v) for k, v in (terms or {}).items()}
        self._fields = frozenset(fields) & set(self._terms)
        # Per name: its patterns without a wildcard (fnmatch reads them as the
        # value itself) and the others compiled, as fnmatchcase would -- a
        # condition is tested for every fragment and variant of a build.
        self._tests: dict[str, tuple[frozenset[str], tuple[Callable[[str], Any], ...]]] = {
            name: (frozenset(p for p in patterns if not _WILDCARD.search(p)),
                   tuple(re.compile(fnmatch.translate(p)).match for p in patterns if _WILDCARD.search(p)))
            for name, patterns in self._terms.items()
        }

    @property
    def fields(self) -> frozenset[str]:
        """The names that are model fields (all others are axes)."""
        return self._fields

    def __getitem__(self, name: str) -> tuple[str, ...]:
        return self._terms[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._terms)

    def __len__(self) -> int:
        return len(self._terms)

    def __hash__(self) -> int:
        return hash((tuple(self._terms.items()), self._fields))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, When):
            return self._terms == other._terms and self._fields == other._fields
        return isinstance(other, Mapping) and self._terms == dict(other.items())

    def __repr__(self) -> str:
        return f"When({self._terms!r})"

    def matches(self, variant: _Cell, model: "Model | None" = None) -> bool:
        """True when every name matches; `model` is needed only for field names."""
        for name, patterns in self._terms.items():
            if name in self._fields:
                if model is None:
                    raise ValueError(f"'when' names the model field {name!r}: pass the variant's model")
                value = model.field_value(name)
            else:
                value = variant.value(name)
            literal, compiled = self._tests[name]
            if value not in literal and not any(match(value) for match in compiled):
                return False
        return True


ALWAYS = When()
"""The empty condition: matches every variant."""


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
    when: When
    requires: tuple[str, ...]
    description: str
    owner: str
    variables: Mapping[str, Any]
    order: int
    source: str
    line: int | None = None
    glue_ok: bool = False
    later: bool = False
    """Sent only where `turns:` names it (a context update, a skill message, the
    compaction prompt or summary), never as part of a first request."""

    @property
    def template_ref(self) -> str:
        return self.body_file or f"{self.source} (inline)"


@dataclass(frozen=True)
class Tool:
    """One tool definition, stored as sent: `definition` is the JSON object
    exactly as written in its file (key order kept), `serialized` the compact
    JSON the request carries, which is also what is counted."""

    name: str  # the file's stem: the tool's name in the spec, on pages and in `tools.order`
    tool_name: str  # the name as sent (`definition.name`, else its `type`, e.g. web_search)
    kind: str  # `definition.type`: function, custom, namespace, web_search, ...
    definition: Any = field(hash=False)
    serialized: str
    when: When = field(hash=False)
    deferred: bool
    description: str
    owner: str
    source: str
    line: int | None = None
    accept_lint: tuple[str, ...] = ()
    """Tool lint rules (PS501, PS502) this definition is exempt from: it is
    another agent's, kept verbatim, so its missing descriptions are a fact to record, not to fix."""

    @property
    def sent_description(self) -> str:
        """The description the model reads (empty when the definition has none)."""
        value = self.definition.get("description") if isinstance(self.definition, dict) else None
        return value if isinstance(value, str) else ""


@dataclass(frozen=True)
class Placement:
    """Where a variant's tools go: the request's `tools` field or an input item."""

    place: str  # "field" | "input"
    when: When = field(hash=False)
    line: int | None = None


@dataclass(frozen=True)
class ParamRule:
    """Request parameters for the variants a `when` matches, merged over the defaults."""

    when: When = field(hash=False)
    params: Mapping[str, Any] = field(hash=False)
    order: tuple[str, ...] | None = None
    line: int | None = None


@dataclass(frozen=True)
class RequestConfig:
    """The Responses body around instructions and input: its key order and the
    parameters, so a spec (or an importer) can say exactly what is sent."""

    order: tuple[str, ...] = DEFAULT_BODY_ORDER
    rules: tuple[ParamRule, ...] = ()  # the top-level `params` first (matching every variant), then `rules`
    placements: tuple[Placement, ...] = ()  # first match wins; none matching: "field"
    tools_order: tuple[str, ...] = ()
    description_budget: int = 0
    tools_folder: str = "tools"


@dataclass(frozen=True)
class ExactPart:
    """One `exact:` entry: for the variants `when` matches, part (kind, name)
    is exactly `file`'s text (instructions, fragment) or `value` (tool, param;
    None: not sent), in place of what the rules give."""

    kind: str  # "instructions" | "fragment" | "tool" | "param"
    name: str  # the fragment, tool file stem or parameter; "" for instructions
    when: When = field(hash=False)
    first: When | None = field(default=None, hash=False)  # a condition on the thread's first model (None: any)
    file: str | None = None
    value: Any = field(default=None, hash=False)
    tool: "Tool | None" = field(default=None, hash=False)  # kind "tool": the tool as sent (None: not sent)
    why: str = ""
    index: int = 0  # its place in `exact:`
    line: int | None = None


@dataclass(frozen=True)
class Rule:
    """One include/exclude rule: the variants it keeps or drops."""

    when: When
    line: int | None = None


@dataclass(frozen=True)
class Budget:
    """One entry of `budgets:` in spec.yaml: limits for the models matching `models`."""

    models: str  # a model slug or fnmatch pattern; "*" for all
    max_tokens: int | None = None
    max_percent: float | None = None  # of the model's usable window
    max_delta: int | None = None  # tokens one change may add to a variant (diff only)
    max_delta_percent: float | None = None
    line: int | None = None
    key: str = ""  # as written in spec.yaml ("all", "harbor-5", "harbor-4-*")

    def applies(self, slug: str) -> bool:
        import fnmatch

        return fnmatch.fnmatchcase(slug, self.models)

    @property
    def where(self) -> str:
        return f"budgets.{self.key or self.models}"


@dataclass(frozen=True)
class AgentsConfig:
    tree: str | None
    project_root: str
    user_instructions: str | None
    max_bytes: int
    fallback_filenames: tuple[str, ...]


@dataclass(frozen=True)
class Layout:
    """One message layout, for the variants its `when` matches: the messages in
    send order, each a role and its slots, and where the base instructions go."""

    when: When
    messages: tuple[tuple[str, tuple[str, ...]], ...]
    instructions: str = "field"  # "field": the request's `instructions`; "section": a fragment places them
    line: int | None = None


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
    limits: Limits = field(repr=False, compare=False, default_factory=Limits)
    memo: dict[str, Any] = field(repr=False, compare=False, default_factory=dict)
    """What later stages derive from this spec once and reuse (the template
    renderer, lookups by name): a loaded spec never changes, so neither do they."""
    raw: Mapping[str, Any] = field(repr=False, compare=False, default_factory=dict)
    budgets: tuple[Budget, ...] = ()
    layouts: tuple[Layout, ...] = ()
    """When given: the layouts to choose from per variant (`layout` then holds their slots grouped by role)."""
    refuse: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """axis -> value the agent refuses -> the message to show."""
    derived: Mapping[str, str] = field(default_factory=dict)
    """name -> the template computing that value per variant."""
    aliases: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """extra axis -> value -> the value templates see."""
    tools: tuple[Tool, ...] = ()
    """Every tool definition, in send order (`tools.order`, then by file name)."""
    request: RequestConfig = field(default_factory=RequestConfig)
    exact: tuple[ExactPart, ...] = ()
    """Parts stated outright for some cells (spec/exact.py), checked before the rules."""
    turns: Any = None
    """`turns:` (spec/turns.py `Turns`): what later requests of a thread send."""
    conversations: tuple[tuple[str, str], ...] = ()
    """`conversations:` name -> script file (spec-relative), in spec.yaml order."""

    def _lookup(self, kind: str, items: tuple[Any, ...], attr: str) -> dict[str, Any]:
        # One dict per kind, built on first use: a linear scan per variant
        # made measuring 95,000 models take minutes (quadratic).
        table = self.memo.get(f"lookup:{kind}")
        if table is None:
            table = self.memo[f"lookup:{kind}"] = {}
            for item in items:
                table.setdefault(getattr(item, attr), item)
        return table

    def model(self, slug: str) -> Model:
        found: Model = self._lookup("model", self.models, "slug")[slug]
        return found

    def mode(self, name: str) -> Choice:
        found: Choice = self._lookup("mode", self.modes, "name")[name]
        return found

    def personality(self, name: str) -> Choice:
        found: Choice = self._lookup("personality", self.personalities, "name")[name]
        return found

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
