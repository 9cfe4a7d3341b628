"""`turns:` in spec.yaml: what an agent sends after the first request of a thread.

A later request is the previous request's input, the assistant's answer item,
one context-update message per kind of change, the new user message and any
skill messages; a compaction is a request of its own followed by a rebuilt
history.  Every text involved is a fragment (usually one marked `later: true`,
so it is never part of a first request), so pages, diffs, the lock and the
provenance of first requests hold for these texts too.  This module only
reads and validates the settings; assemble/conversation.py applies them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

from ...errors import SpecError
from ..model import ALWAYS, BUILTIN_AXES, COMPUTED_BODY_KEYS, Fragment, Model, When
from .reader import Reader, read_when
from .tools import to_json

TURNS_KEYS = {"settings", "instructions", "reply", "updates", "join", "skills", "compaction", "max_steps", "session"}
SESSION_KEYS = {"layout", "tools", "base", "slots"}
SESSION_TOOL_RULES = ("first", "both")
UPDATE_KEYS = {"changed", "role", "fragments", "when", "if_different", "partial", "emptied"}
PARTIAL_KEYS = {"always", "with"}
REPLY_KEYS = {"item", "content"}
SKILLS_KEYS = {"fragment", "files", "mention"}
COMPACTION_KEYS = {"prompt", "summary", "params", "switch_params", "switch_when", "history", "leave_out", "limit_setting", "percent", "on_model_switch",
                   "input_tools"}
INPUT_TOOLS = ("keep", "params", "none")
HISTORY_PIECES = ("user_messages", "last_user_message", "earlier_user_messages", "summary", "initial_context", "initial_base",
                  "initial_rest")
DEFAULT_SETTINGS = ("sandbox_mode", "approval_policy", "cwd")
DEFAULT_HISTORY = ("user_messages", "summary", "initial_context")
DEFAULT_MAX_STEPS = 200
MAX_STEPS_CEILING = 1000
"""A conversation is rendered whole, each request re-sending the ones before:
its size grows with the square of its length, so scripts are bounded."""


@dataclass(frozen=True)
class Update:
    """One context-update message: sent after the reply when any name in `changed:` changed."""

    on: tuple[str, ...]
    fragments: tuple[str, ...]
    role: str
    when: When = field(default=ALWAYS, hash=False)
    line: int | None = None
    if_different: tuple[str, ...] = ()
    """The changes (of `on`) after which it is sent only when its text differs from
    what the state before renders (a release that diffs its context, e.g. permissions
    re-sent because a new folder changed the writable roots); `true` in spec.yaml is all of `on`."""
    partial: "Partial | None" = None
    """Send only the lines that changed (a release that sends a partial environment context)."""
    emptied: bool = False
    """A section the state before renders and this one renders empty is sent as its markers alone (Codex 0.153.2's
    `<collaboration_mode></collaboration_mode>` after a switch to a model with no text for the unset mode)."""


@dataclass(frozen=True)
class Partial:
    """Which lines of a section a partial update sends: a line is named by the
    XML tag it opens with (`  <cwd>...` is `cwd`); it is sent when its text
    differs from the state before, when `always` names it, or when the line
    `with_` ties it to is sent.  Lines that open with no tag are always sent,
    and so are the markers: the update stays one well-formed block."""

    always: tuple[str, ...] = ()
    with_: tuple[tuple[str, str], ...] = ()  # (line, the line it goes with)


@dataclass(frozen=True)
class HistoryPiece:
    """One entry of the rebuilt history: a kind, and for `initial_context` a slice of its items."""

    kind: str
    start: int | None = None
    stop: int | None = None


@dataclass(frozen=True)
class Compaction:
    prompt: str | None = None
    """The fragment whose text is the compaction request's last user message (None: no compaction)."""
    summary: str | None = None
    """The fragment rendered with `summary` (the model's answer) that opens the rebuilt history."""
    params: Mapping[str, Any] = field(default_factory=dict, hash=False)
    """Body keys merged over the compaction request's (`tools: []`, `parallel_tool_calls: false`); null removes one."""
    history: tuple[HistoryPiece, ...] = tuple(HistoryPiece(k) for k in DEFAULT_HISTORY)
    limit_setting: str = "model_auto_compact_token_limit"
    """The scenario key or setting that, when set, replaces the catalog's auto-compaction limit."""
    percent: int = 90
    """Without a catalog `auto_compact_token_limit`: this share of `context_window`."""
    on_model_switch: str | None = None
    """A catalog field: a model switch between models whose values differ compacts first."""
    line: int | None = None
    leave_out: tuple[str, ...] = ()
    """Fragments of the initial context a rebuilt history does not re-inject."""
    switch_params: Mapping[str, Any] = field(default_factory=dict, hash=False)
    """Merged over `params` for the compaction a model switch causes (a release may send it with other settings)."""
    switch_when: When = field(default=ALWAYS, hash=False)
    """`switch_params` apply when the model before the switch matches (a release whose families compact differently)."""
    input_tools: str = "keep"
    """A tool list the layout places in the input (the history's `additional_tools` item): `keep` it in the
    compaction request, let `params.tools` replace it (`params`: the item goes with an empty list), or leave
    the item out (`none`)."""


@dataclass(frozen=True)
class Turns:
    settings: tuple[str, ...] = ()
    """What a step's `set:` may change besides model, personality and mode."""
    instructions: str = "first"  # "first": the `instructions` field keeps the thread's first text; "current": follows the model
    reply_item: tuple[tuple[str, Any], ...] = (("type", "message"), ("role", "assistant"))
    """The assistant item's keys before `content`, in send order."""
    reply_content: tuple[tuple[str, Any], ...] = ()
    """Keys after `text` in the item's one output_text part."""
    updates: tuple[Update, ...] = ()
    join: tuple[str, ...] = ()
    """Roles whose consecutive context-update messages go as one message (its parts in order)."""
    skill_fragment: str | None = None
    skill_files: Mapping[str, str] = field(default_factory=dict, hash=False)
    """skill name -> its SKILL.md (a spec file)."""
    skill_mention: str = "$"
    compaction: Compaction = field(default_factory=Compaction)
    max_steps: int = DEFAULT_MAX_STEPS
    session_layout: bool = False
    """`session.layout`: a rebuilt initial context is laid out as the thread's first model lays out its first request."""
    session_tools: Mapping[str, str] = field(default_factory=dict, hash=False)
    """`session.tools`: tool -> `first` (sent, or not, in every request of a thread as its first model's
    requests send it) or `both` (sent only when the first model's and the current model's requests both would)."""
    session_slots: tuple[str, ...] = ()
    """`session.slots`: after a model switch, the sections of these slots are rendered for the thread's first model."""
    session_base: When | None = None
    """`session.base`: the thread keeps its first model's base instructions (`instructions: first`) only
    when its first model matches; otherwise they follow the current model (None: always, as `instructions` says)."""
    defined: bool = False
    """False when spec.yaml has no `turns:` (later requests then carry only history and user messages)."""


def load_turns(top: Reader, fragments: tuple[Fragment, ...], axis_names: set[str], scenario: Mapping[str, Any],
               models: tuple[Model, ...], fs: Any, tool_names: set[str] | None = None) -> Turns:
    raw = top.get("turns", dict)
    if raw is None:
        settable = tuple(s for s in DEFAULT_SETTINGS if s in scenario or s in axis_names)
        return Turns(settings=settable)
    r = Reader(raw, top.where, "turns")
    r.unknown(TURNS_KEYS, "turns")
    names = {f.name for f in fragments}

    def fragment(reader: Reader, key: str, value: Any) -> str:
        if not isinstance(value, str) or value not in names:
            raise reader.err(key, f"turns: {key} names {value!r}, which is not a fragment",
                             hint="name a file in the fragments folder (without .yaml)")
        return value

    default_settings = tuple(s for s in DEFAULT_SETTINGS if s in scenario or s in axis_names)
    settings = r.str_list("settings", default_settings)
    for name in settings:
        if name in BUILTIN_AXES:
            raise r.err("settings", f"turns.settings lists {name!r}, which a step may always set", hint="list only axes and scenario keys")
        if name not in scenario and name not in axis_names:
            raise r.err("settings", f"turns.settings lists {name!r}, which is neither an axis nor a scenario key",
                        hint="add it to scenario: (or axes:) first")
    instructions = r.text("instructions", "first")
    if instructions not in ("first", "current"):
        raise r.err("instructions", f"turns.instructions must be 'first' or 'current', found {instructions!r}")
    changeable = {*BUILTIN_AXES, *settings}

    updates = []
    for item in r.get("updates", list, []) or []:
        line = getattr(item, "line", r.line("updates"))
        ur = Reader(item, top.where, "a turns update")
        ur.unknown(UPDATE_KEYS, "a turns update")
        on = ur.str_list("changed")
        if not on:
            raise ur.err(None, "a turns update needs 'changed:' (what change sends it)", hint=f"one or more of: {', '.join(sorted(changeable))}")
        for name in on:
            if name not in changeable:
                raise ur.err("changed", f"'changed' names {name!r}, which a step cannot change", hint=f"use: {', '.join(sorted(changeable))}")
        frags = tuple(fragment(ur, "fragments", f) for f in ur.str_list("fragments"))
        if not frags:
            raise ur.err(None, "a turns update needs 'fragments:' (the texts it sends)")
        by_name = {f.name: f for f in fragments}
        role = ur.text("role", by_name[frags[0]].role)
        if role not in ("developer", "user"):
            raise ur.err("role", f"role must be 'developer' or 'user', found {role!r}")
        when = read_when(ur, axes=axis_names, models=models, what="a turns update's 'when'")
        updates.append(Update(on, frags, role, when, line, _if_different(ur, on), _partial(ur), ur.get("emptied", bool, False) is True))

    join = r.str_list("join")
    for role in join:
        if role not in ("developer", "user"):
            raise r.err("join", f"turns.join lists {role!r}, which is not a role", hint="list developer and/or user")
    reply = Reader(r.get("reply", dict, {}) or {}, top.where, "turns.reply")
    reply.unknown(REPLY_KEYS, "turns.reply")
    item = to_json(reply.get("item", dict, {"type": "message", "role": "assistant"}), top.where, reply.line("item"), "turns.reply.item")
    for key in ("content",):
        if key in item:
            raise reply.err("item", "turns.reply.item must not set 'content' (it holds the reply)")
    content = to_json(reply.get("content", dict, {}), top.where, reply.line("content"), "turns.reply.content")
    for key in ("type", "text"):
        if key in content:
            raise reply.err("content", f"turns.reply.content must not set {key!r} (the reply fills it)")

    skills = Reader(r.get("skills", dict, {}) or {}, top.where, "turns.skills")
    skills.unknown(SKILLS_KEYS, "turns.skills")
    skill_fragment = fragment(skills, "fragment", skills.data["fragment"]) if skills.data.get("fragment") is not None else None
    files: dict[str, str] = {}
    for name, path in (skills.get("files", dict, {}) or {}).items():
        if not isinstance(path, str):
            raise skills.err("files", f"turns.skills.files.{name} must be a file path")
        fs.resolve(path, origin=top.where)
        files[str(name)] = path
    if files and skill_fragment is None:
        raise skills.err("files", "turns.skills.files needs turns.skills.fragment (the message a mention adds)")

    compaction = _compaction(r, fragment, axis_names, scenario, settings, models)
    session = Reader(r.get("session", dict, {}) or {}, top.where, "turns.session")
    session.unknown(SESSION_KEYS, "turns.session")
    session_layout = session.get("layout", bool, False)
    raw_tools = session.data.get("tools") or []
    if isinstance(raw_tools, list):
        session_tools = {name: "first" for name in session.str_list("tools")}
    elif isinstance(raw_tools, dict):
        session_tools = {str(k): v for k, v in raw_tools.items()}
    else:
        raise session.err("tools", "turns.session.tools must be a list of tool names or a mapping of tool name to first/both")
    for name, rule in session_tools.items():
        if rule not in SESSION_TOOL_RULES:
            raise session.err("tools", f"turns.session.tools.{name} must be one of {', '.join(SESSION_TOOL_RULES)}, found {rule!r}",
                              hint="first: the first model decides; both: the first and the current model must both send it")
        if tool_names is not None and name not in tool_names:
            raise session.err("tools", f"turns.session.tools names {name!r}, which is not a tool of the spec",
                              hint="name a file in the tools folder (without .json)")
    max_steps = r.get("max_steps", int, DEFAULT_MAX_STEPS)
    if not 0 < max_steps <= MAX_STEPS_CEILING:
        raise r.err("max_steps", f"turns.max_steps must be above 0 and at most {MAX_STEPS_CEILING}, found {max_steps}")
    return Turns(
        settings=settings,
        instructions=instructions,
        reply_item=tuple(item.items()),
        reply_content=tuple(content.items()),
        updates=tuple(updates),
        join=join,
        skill_fragment=skill_fragment,
        skill_files=MappingProxyType(files),
        skill_mention=skills.text("mention", "$"),
        compaction=compaction,
        max_steps=max_steps,
        session_layout=bool(session_layout),
        session_tools=MappingProxyType(session_tools),
        session_slots=tuple(session.str_list("slots")),
        session_base=read_when(session, "base", axes=axis_names, models=models, what="turns.session.base")
        if session.data.get("base") is not None else None,
        defined=True,
    )


def _if_different(ur: Reader, on: tuple[str, ...]) -> tuple[str, ...]:
    """`if_different: true` (after any change of `changed`), false, or the changes it holds for."""
    raw = ur.get("if_different", (bool, list), False)
    if isinstance(raw, bool) or raw is None:
        return on if raw else ()
    names = ur.str_list("if_different")
    for name in names:
        if name not in on:
            raise ur.err("if_different", f"if_different names {name!r}, which is not in this update's 'changed'",
                         hint=f"use true, false or some of: {', '.join(on)}")
    return names


def _partial(ur: Reader) -> Partial | None:
    raw = ur.get("partial", dict)
    if raw is None:
        return None
    pr = Reader(raw, ur.where, "a turns update's partial")
    pr.unknown(PARTIAL_KEYS, "a turns update's 'partial'")
    ties = pr.get("with", dict, {}) or {}
    for name, other in ties.items():
        if not isinstance(other, str):
            raise pr.err("with", f"partial.with.{name} must name one line (an XML tag), found {other!r}")
    return Partial(tuple(pr.str_list("always")), tuple((str(k), v) for k, v in ties.items()))


def _compaction(r: Reader, fragment: Any, axis_names: set[str], scenario: Mapping[str, Any], settings: tuple[str, ...],
                models: tuple[Model, ...]) -> Compaction:
    raw = r.get("compaction", dict)
    if raw is None:
        return Compaction()
    c = Reader(raw, r.where, "turns.compaction")
    c.unknown(COMPACTION_KEYS, "turns.compaction")
    prompt = fragment(c, "prompt", raw.get("prompt")) if raw.get("prompt") is not None else None
    if prompt is None:
        raise c.err(None, "turns.compaction needs 'prompt:' (the fragment holding the compaction prompt)")
    summary = fragment(c, "summary", raw.get("summary")) if raw.get("summary") is not None else None
    params = to_json(c.get("params", dict, {}) or {}, r.where, c.line("params"), "turns.compaction.params")
    switch_params = to_json(c.get("switch_params", dict, {}) or {}, r.where, c.line("switch_params"), "turns.compaction.switch_params")
    for key, given in (("params", params), ("switch_params", switch_params)):
        for name in given:
            if name in COMPUTED_BODY_KEYS and name != "tools":
                raise c.err(key, f"turns.compaction.{key} cannot set {name!r}", hint="only 'tools' and the request parameters")
    history = []
    for entry in c.get("history", list, list(DEFAULT_HISTORY)):
        piece = _piece(c, entry)
        history.append(piece)
    if not any(p.kind == "summary" for p in history) and summary is not None:
        raise c.err("history", "turns.compaction.history leaves out 'summary' although a summary fragment is given")
    percent = c.get("percent", int, 90)
    if not 0 < percent <= 100:
        raise c.err("percent", f"turns.compaction.percent must be 1-100, found {percent}")
    switch = c.text("on_model_switch")
    if switch is not None:
        known = {k for m in models for k in m.extra}
        if switch not in known:
            raise c.err("on_model_switch", f"turns.compaction.on_model_switch names {switch!r}, which no model in the catalog has",
                        hint="name the catalog field that groups models into compaction families")
    leave_out = tuple(fragment(c, "leave_out", name) for name in c.str_list("leave_out"))
    switch_when = read_when(c, "switch_when", axes=axis_names, models=models, what="turns.compaction.switch_when")
    input_tools = c.text("input_tools", "keep")
    if input_tools not in INPUT_TOOLS:
        raise c.err("input_tools", f"turns.compaction.input_tools must be one of {', '.join(INPUT_TOOLS)}, found {input_tools!r}",
                    hint="keep: a tool list in the input stays; params: params.tools replaces it; none: the compaction request leaves it out")
    return Compaction(prompt, summary, MappingProxyType(params), tuple(history),
                      c.text("limit_setting", "model_auto_compact_token_limit"), percent, switch, r.line("compaction"),
                      leave_out, MappingProxyType(switch_params), switch_when, input_tools)


def _piece(c: Reader, entry: Any) -> HistoryPiece:
    """`initial_context` or `{initial_context: "1:"}` (a Python-style slice of its items), or another kind."""
    if isinstance(entry, str) and entry in HISTORY_PIECES:
        return HistoryPiece(entry)
    if isinstance(entry, dict) and list(entry) == ["initial_context"] and isinstance(entry["initial_context"], str):
        text = entry["initial_context"]
        start, sep, stop = text.partition(":")
        try:
            if not sep:
                raise ValueError
            return HistoryPiece("initial_context", int(start) if start.strip() else None, int(stop) if stop.strip() else None)
        except ValueError:
            pass
    raise SpecError(f"turns.compaction.history entry {entry!r} is not known", c.where, line=c.line("history"),
                    hint=f"use {', '.join(HISTORY_PIECES)} or {{initial_context: 'START:STOP'}}")
