"""The keys of spec.yaml that shape a request beyond one fixed layout:
`layouts` (messages per variant, where the base instructions go), `refuse`
(values the agent rejects), `derived` (values computed from other values) and
`aliases` (a value that stands for another), plus the personality keys
`fills` and `removes_section`.

Real agents need them: Codex sends several developer messages whose order
differs per model and release, refuses some settings, and computes network
access from the sandbox mode.  Each is a general feature a hand-written spec
can use (docs/spec-format.md).
"""

from __future__ import annotations

import re
from types import MappingProxyType
from typing import Mapping

from ...errors import SpecError
from ..model import BUILTIN_NAMES, ROLES, Layout, Model
from .reader import Reader, check_name, read_when


LAYOUT_KEYS = {"when", "messages", "instructions"}
VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
HEADING = re.compile(r"^#{1,6} \S[^\n]*$")


def fills(r: Reader) -> str | None:
    value: str | None = r.get("fills", str)
    if value:
        check_name(value, r.where, r.line("fills"), "personality variable")
    return value


def heading(r: Reader, key: str) -> str | None:
    value: str | None = r.get(key, str)
    if value is not None and not HEADING.match(value):
        raise r.err(key, f"'{key}' must be one Markdown heading line such as '# Personality', found {value!r}")
    return value


def layouts(top: Reader, axis_names: set[str], models: tuple[Model, ...]) -> tuple[Layout, ...]:
    raw = top.get("layouts", list)
    if raw is None:
        return ()
    if not raw:
        raise top.err("layouts", "'layouts' is empty", hint="give at least one layout, or remove the key")
    out = []
    for item in raw:
        line = getattr(item, "line", top.line("layouts"))
        if not isinstance(item, dict):
            raise SpecError("each layout must be a mapping with 'messages' (and optionally 'when', 'instructions')",
                            top.where, line=line)
        r = Reader(item, top.where, "layout")
        r.unknown(LAYOUT_KEYS, "a layout")
        when = read_when(r, axes=axis_names, models=models, what="layout 'when'")
        instructions = r.text("instructions", "field")
        if instructions not in ("field", "section"):
            raise r.err("instructions", f"instructions must be 'field' or 'section', found {instructions!r}")
        messages = []
        seen: set[str] = set()
        for msg in r.get("messages", list, []) or []:
            mline = getattr(msg, "line", line)
            if not isinstance(msg, dict):
                raise SpecError("each layout message must be a mapping with 'role' and 'slots'", top.where, line=mline)
            mr = Reader(msg, top.where, "layout message")
            mr.unknown({"role", "slots"}, "a layout message")
            role = mr.text("role", required=True)
            if role not in ROLES:
                raise mr.err("role", f"message role must be 'developer' or 'user', found {role!r}")
            slots = mr.str_list("slots")
            for slot in slots:
                check_name(slot, top.where, mline, "slot")
                if slot in seen:
                    raise SpecError(f"slot '{slot}' appears twice in one layout", top.where, line=mline,
                                    hint="each slot has one place")
                seen.add(slot)
            messages.append((role, slots))
        if not messages:
            raise SpecError("a layout needs at least one message", top.where, line=line, hint="add 'messages:'")
        out.append(Layout(when, tuple(messages), instructions, line))
    return tuple(out)


def layouts_as_groups(found: tuple[Layout, ...], top: Reader) -> dict[str, tuple[str, ...]]:
    """The slots of all layouts as the classic groups, for the views that show
    one list of slots; a slot keeps one role in every layout."""
    groups: dict[str, list[str]] = {"developer": [], "separate_developer": [], "user": []}
    role_of: dict[str, str] = {}
    for lay in found:
        for role, slots in lay.messages:
            for slot in slots:
                if role_of.setdefault(slot, role) != role:
                    raise SpecError(f"slot '{slot}' is a {role_of[slot]} slot in one layout and a {role} slot in another",
                                    top.where, line=lay.line, hint="give a slot one role")
                if slot not in groups[role]:
                    groups[role].append(slot)
    return {g: tuple(s) for g, s in groups.items()}


def refuse(top: Reader, axes: Mapping[str, tuple[str, ...]]) -> dict[str, Mapping[str, str]]:
    raw = top.get("refuse", dict, {}) or {}
    out: dict[str, Mapping[str, str]] = {}
    for axis, values in raw.items():
        if axis not in axes:
            raise top.err("refuse", f"'refuse' names unknown axis {axis!r}", hint=f"axes: {', '.join(sorted(axes))}")
        if not isinstance(values, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in values.items()):
            raise top.err("refuse", f"refuse.{axis} must map each refused value to the message to show")
        clash = [v for v in values if v in axes[axis]]
        if clash:
            raise top.err("refuse", f"refuse.{axis} lists {clash[0]!r}, which is also a value of the axis",
                          hint="a value is either in the matrix or refused")
        out[str(axis)] = MappingProxyType({str(k): " ".join(v.split()) for k, v in values.items()})
    return out


def derived(top: Reader, taken: set[str]) -> dict[str, str]:
    raw = top.get("derived", dict, {}) or {}
    out: dict[str, str] = {}
    for name, source in raw.items():
        if not isinstance(name, str) or not VARIABLE.match(name):
            raise top.err("derived", f"derived name {name!r} is not a valid variable name", hint="use letters, digits and _")
        if name in taken or name in BUILTIN_NAMES:
            raise top.err("derived", f"derived value {name!r} would hide a scenario key, an axis or a built-in name",
                          hint="rename it")
        if not isinstance(source, str):
            raise top.err("derived", f"derived value {name!r} must be a template string",
                          hint="e.g. \"{{ 'enabled' if sandbox_mode == 'danger-full-access' else 'restricted' }}\"")
        for char, what in (("\x00", "a NUL character"), ("\r", "a CR character")):
            if char in source:
                raise top.err("derived", f"derived value {name!r} contains {what}")
        out[name] = source
    return out


def aliases(top: Reader, axes: Mapping[str, tuple[str, ...]]) -> dict[str, Mapping[str, str]]:
    raw = top.get("aliases", dict, {}) or {}
    out: dict[str, Mapping[str, str]] = {}
    for axis, values in raw.items():
        if axis not in axes:
            raise top.err("aliases", f"'aliases' names {axis!r}, which is not an extra axis",
                          hint=f"extra axes: {', '.join(axes) or 'none'}")
        if not isinstance(values, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in values.items()):
            raise top.err("aliases", f"aliases.{axis} must map a value to the value it stands for")
        for k in values:
            if k not in axes[axis]:
                raise top.err("aliases", f"aliases.{axis} names {k!r}, which is not a value of the axis",
                              hint=f"values: {', '.join(axes[axis])}")
        out[str(axis)] = MappingProxyType({str(k): str(v) for k, v in values.items()})
    return out
