"""Conversation scripts: the turns of one thread, as a person writes them.

A script is JSON or YAML, `{turns: [STEP, ...]}` or a bare list of steps.  A
step is a user turn `{user, reply, usage?, set?, skills?, summary?}` or a
manual compaction `{compact: true, reply}`.  Scripts come from pull requests
like the rest of a spec, so every mistake is one line naming the file, the
step and what to do, checked against the spec before anything is assembled.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from ...errors import SpecError
from ..model import BUILTIN_AXES, Spec
from .sources import load_json, load_yaml

USER_KEYS = {"user", "reply", "usage", "set", "skills", "summary"}
COMPACT_KEYS = {"compact", "reply"}
SCRIPT_KEYS = {"turns", "description"}
MAX_TEXT_CHARS = 1_000_000


@dataclass(frozen=True)
class Step:
    kind: str  # "user" | "compact"
    text: str = ""  # the user's message (user turns)
    reply: str = ""  # the assistant's answer, or the summary of a compaction
    usage: int | None = None
    """`total_tokens` the model reported with this reply: what may trigger auto-compaction before the next turn."""
    set: tuple[tuple[str, Any], ...] = ()
    skills: tuple[str, ...] = ()
    summary: str | None = None
    """The summary an automatic compaction before this turn returns (default: a fixed placeholder)."""
    line: int | None = None


@dataclass(frozen=True)
class Script:
    source: str  # as shown in messages
    steps: tuple[Step, ...]
    description: str = ""


def read_script(path: Path, shown: str | None = None) -> Script:
    """Parse a script file (JSON by its `.json` suffix, YAML otherwise); shape only."""
    shown = shown or str(path)
    data = load_json(path, shown) if path.suffix.lower() == ".json" else load_yaml(path, shown)
    return parse_script(data, shown)


def parse_script(data: Any, shown: str) -> Script:
    description = ""
    if isinstance(data, dict):
        extra = sorted(set(map(str, data)) - SCRIPT_KEYS)
        if extra:
            raise SpecError(f"unknown key {extra[0]!r} in the conversation", shown, line=_line(data, extra[0]),
                            hint="a conversation is {turns: [STEP, ...]} (or a bare list of steps)")
        description = data.get("description") or ""
        if not isinstance(description, str):
            raise SpecError("'description' must be text", shown, line=_line(data, "description"))
        data = data.get("turns")
    if not isinstance(data, list) or not data:
        raise SpecError("the conversation has no steps", shown, line=getattr(data, "line", None),
                        hint="give {turns: [{user: TEXT, reply: TEXT}, ...]}")
    steps = tuple(_step(item, shown, n) for n, item in enumerate(data, 1))
    if steps[0].kind != "user":
        raise SpecError("step 1 is a compaction: a thread starts with a user turn", shown, line=steps[0].line,
                        hint="put a {user, reply} step first")
    return Script(shown, steps, description)


def _line(data: Any, key: str | None = None) -> int | None:
    line_of = getattr(data, "line_of", None)
    found: int | None = line_of(key) if key is not None and line_of is not None else getattr(data, "line", None)
    return found


def _err(shown: str, n: int, data: Any, message: str, hint: str, key: str | None = None) -> SpecError:
    return SpecError(f"step {n}: {message}", shown, line=_line(data, key), hint=hint)


def _text(item: Mapping[str, Any], key: str, shown: str, n: int, required: bool = True) -> str:
    value = item.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise _err(shown, n, item, f"'{key}' must be text", f"give {key}: TEXT", key)
    if len(value) > MAX_TEXT_CHARS or "\x00" in value:
        raise _err(shown, n, item, f"'{key}' is too long or holds a NUL character", f"keep it under {MAX_TEXT_CHARS} characters", key)
    return value


def _step(item: Any, shown: str, n: int) -> Step:
    if not isinstance(item, dict):
        raise SpecError(f"step {n} must be a mapping", shown, line=getattr(item, "line", None),
                        hint="a step is {user: TEXT, reply: TEXT} or {compact: true, reply: TEXT}")
    line = _line(item)
    if "compact" in item:
        extra = sorted(set(map(str, item)) - COMPACT_KEYS)
        if extra:
            raise _err(shown, n, item, f"unknown key {extra[0]!r} in a compaction step", "a compaction step is {compact: true, reply: SUMMARY}", extra[0])
        if item["compact"] is not True:
            raise _err(shown, n, item, "'compact' must be true", "write compact: true, or leave the key out for a user turn", "compact")
        return Step("compact", reply=_text(item, "reply", shown, n), line=line)
    extra = sorted(set(map(str, item)) - USER_KEYS)
    if extra:
        raise _err(shown, n, item, f"unknown key {extra[0]!r}", f"a user turn takes: {', '.join(sorted(USER_KEYS))}", extra[0])
    usage = item.get("usage")
    if usage is not None and (isinstance(usage, bool) or not isinstance(usage, int) or usage < 0):
        raise _err(shown, n, item, "'usage' must be a whole number of tokens", "give the total_tokens the model reported", "usage")
    settings = item.get("set") or {}
    if not isinstance(settings, dict):
        raise _err(shown, n, item, "'set' must be a mapping", "give set: {model: SLUG, mode: NAME, ...}", "set")
    for key, value in settings.items():
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise _err(shown, n, settings, f"set.{key} must be a value (text or a number)", "give one value", str(key))
    skills = item.get("skills") or []
    if not isinstance(skills, list) or not all(isinstance(s, str) for s in skills):
        raise _err(shown, n, item, "'skills' must be a list of skill names", "give skills: [NAME, ...]", "skills")
    summary = item.get("summary")
    return Step("user", _text(item, "user", shown, n), _text(item, "reply", shown, n, required=False), usage,
                tuple((str(k), v) for k, v in settings.items()), tuple(skills),
                None if summary is None else _text(item, "summary", shown, n), line)


def check_script(spec: Spec, script: Script, start: Mapping[str, str]) -> None:
    """Every step's settings against the spec: the names `set` may change, the
    values the spec knows, the switches it refuses, the skills it has, the bound."""
    turns = spec.turns
    shown = script.source
    if len(script.steps) > turns.max_steps:
        raise SpecError(f"the conversation has {len(script.steps)} steps, more than turns.max_steps ({turns.max_steps})", shown,
                        hint="split it into shorter conversations, or raise turns.max_steps in spec.yaml (at most 1000)")
    axes = dict(spec.axes)
    allowed = {*BUILTIN_AXES, *turns.settings}
    state = dict(start)
    for n, step in enumerate(script.steps, 1):
        if step.kind == "compact" and turns.compaction.prompt is None:
            raise SpecError(f"step {n}: the spec defines no compaction", shown, line=step.line,
                            hint="add turns.compaction to spec.yaml, or remove the step")
        for key, value in step.set:
            if key not in allowed:
                raise SpecError(f"step {n}: 'set' names {key!r}, which is not a setting of this spec", shown, line=step.line,
                                hint=f"settings: {', '.join(sorted(allowed))}")
            if key in axes and str(value) not in axes[key]:
                what = f"{key} the spec lacks"
                if key == "model":
                    filtered = isinstance(spec.raw, dict) and spec.raw.get("model_filter")
                    what = "model not in the catalog" + (" or left out by model_filter" if filtered else "")
                raise SpecError(f"step {n}: set.{key} = {value!r} is a {what}", shown, line=step.line,
                                hint=f"use one of: {', '.join(axes[key])}")
            refused = spec.refuse.get(key, {}).get(str(value))
            if refused is not None:
                raise SpecError(f"step {n}: the agent refuses {key} = {value!r}: {refused}", shown, line=step.line,
                                hint="choose another value")
            state[key] = str(value)
        for name in step.skills:
            if name not in turns.skill_files:
                known = ", ".join(sorted(turns.skill_files)) or "none (turns.skills.files is empty)"
                raise SpecError(f"step {n}: skill {name!r} is not defined", shown, line=step.line, hint=f"skills: {known}")
