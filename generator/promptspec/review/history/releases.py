"""One release of a spec, reduced to what a history compares.

A history reads many releases, some as full pipeline Results (a git revision
or a spec folder: text and counts) and some as lock files (hashes and counts,
no text).  Both become a `Release`: the axes and their values, the values the
agent refuses, and per variant its total and its *parts* -- the base
instructions (when sent in the `instructions` field), every section, every
tool and the request parameters, each with where it sits, a hash of its text
and its tokens.  Holding only that
keeps a ten-release history of a large matrix small: texts are shared between
variants, and a lock-file release holds no text at all.

Pure: Results and lock data in, frozen dataclasses out.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Mapping

from ...assemble.export import dumps as pretty_json
from ..change import GROUP_ORDER, INSTRUCTIONS, PARAMETERS, TOOL_PREFIX
from ..lockfile import request_hash, section_group

BUILTIN_AXES = ("model", "personality", "mode")


@dataclass(frozen=True)
class Part:
    """One part of one request: a section, or the base instructions."""

    name: str  # fragment name, or INSTRUCTIONS
    place: str  # developer | separate_developer | user | instructions
    position: int  # 1-based within its place, in send order (0 for the instructions field)
    sha: str
    tokens: int
    marker: str = ""  # the section's start marker (first line), "" when unknown
    text: str | None = None  # None for a lock-file release
    source: str = ""
    is_base: bool = False  # carries the variant's base instructions (the field, or a section whose text is exactly them)


@dataclass(frozen=True)
class VariantSnap:
    id: str
    values: tuple[tuple[str, str], ...]  # (axis, value) in axis order
    model: str
    encoding: str
    total: int
    headroom: int | None
    sha: str  # of the exact request
    parts: tuple[Part, ...]

    def value(self, axis: str) -> str | None:
        for a, v in self.values:
            if a == axis:
                return v
        return None


@dataclass(frozen=True)
class Release:
    """A side of a history, reduced (see the module docstring)."""

    label: str
    date: str | None
    written: str  # the side as written (`v1.2`, `dir:specs/a`, `lock:old.lock.json`)
    commit: str | None
    kind: str  # "spec" (a Result: text and counts) | "lock" (counts and hashes only)
    axes: tuple[tuple[str, tuple[str, ...]], ...]
    refused: Mapping[str, Mapping[str, str]]
    budget: int | None  # tokens.fragment_budget (None for a lock or no budget)
    variants: Mapping[str, VariantSnap] = field(repr=False)
    threads: Mapping[str, Any] = field(default_factory=dict, repr=False)
    """The conversations' requests (review/conversation_lock.py entries): kind, sha256 and tokens per request."""

    @property
    def has_text(self) -> bool:
        return self.kind == "spec"

    @property
    def axis_names(self) -> tuple[str, ...]:
        return tuple(a for a, _ in self.axes)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _marker(start: str) -> str:
    return start.strip("\n").split("\n", 1)[0].strip()


def _instructions_sent(request: Any) -> bool:
    """Layouts that place the base instructions in a message (`instructions:
    section`) do not send the field (`Request.instructions_field`, where the
    request has it); older requests always do."""
    return bool(request.base.text) and getattr(request, "instructions_field", True) is not False


def from_result(result: Any, *, label: str, date: str | None = None, written: str = "", commit: str | None = None) -> Release:
    """A Release from a pipeline Result (text and counts)."""
    spec = result.spec
    shas: dict[str, str] = {}  # text -> sha, texts repeat across variants

    def sha(text: str) -> str:
        found = shas.get(text)
        if found is None:
            found = shas[text] = _sha(text)
        return found

    variants: dict[str, VariantSnap] = {}
    for m in result.measures:
        req = m.request
        parts: list[Part] = []
        base_text = req.base.text
        if _instructions_sent(req):
            parts.append(Part(INSTRUCTIONS, "instructions", 0, sha(base_text), m.base, "", base_text, req.base.source, True))
        positions: dict[str, int] = {}
        for (_, _, section), (_, _, tokens, _) in zip(req.sections, m.section_tokens()):
            group = section_group(spec, section)
            positions[group] = positions.get(group, 0) + 1
            text = section.text
            carries = bool(base_text) and (section.body == base_text or section.body.strip() == base_text.strip())
            parts.append(Part(section.fragment, group, positions[group], sha(text), tokens, _marker(section.start), text, section.source, carries))
        # Tools are parts like sections (as in diff.py): matched by file name, then by the name they are sent under.
        place = "tools" if getattr(req, "tool_placement", "field") == "field" else "tools_input"
        for i, (tool, tokens) in enumerate(zip(getattr(req, "tools", ()), getattr(m, "tool_counts", ())), 1):
            shown = pretty_json(tool.definition)
            parts.append(Part(TOOL_PREFIX + tool.name, place, i, sha(tool.serialized), tokens, tool.tool_name, shown, tool.source))
        if getattr(req, "params", ()):
            shown = pretty_json(dict(req.params))
            parts.append(Part(PARAMETERS, "parameters", 0, sha(shown), 0, "", shown, "spec.yaml"))
        v = req.variant
        variants[v.id] = VariantSnap(v.id, v.values, req.model, m.encoding, m.total, m.headroom, request_hash(req), tuple(parts))
    refused = getattr(spec, "refuse", None) or {}
    return Release(
        label=label,
        date=date,
        written=written or label,
        commit=commit,
        kind="spec",
        axes=tuple((a, tuple(vals)) for a, vals in spec.axes),
        refused={a: dict(vals) for a, vals in sorted(refused.items())},
        budget=spec.token_budget,
        variants=variants,
        threads=_threads(result),
    )


def _threads(result: Any) -> dict[str, Any]:
    spec = result.spec
    if not getattr(spec, "conversations", ()):
        return {}
    from ...errors import SpecError
    from ...measure.conversation import runs
    from ...measure.counter import TokenCounter
    from ..conversation_lock import entries

    try:
        return entries(runs(spec, result.variants, TokenCounter()))
    except SpecError:  # an old release whose scripts no longer fit its spec: compared without them
        return {}


def _lock_axis_names(count: int, hint: tuple[str, ...] | None) -> tuple[str, ...]:
    if hint is not None and len(hint) == count:
        return hint
    names = list(BUILTIN_AXES[:count])
    names += [f"axis{i + 1}" for i in range(len(names), count)]
    return tuple(names)


def _lock_axes(data: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The axis names a lock records (locks written before they did have none)."""
    axes = data.get("axes")
    if not isinstance(axes, list):
        return None
    names = tuple(a.get("name") for a in axes if isinstance(a, dict))
    return names if names and all(isinstance(n, str) and n for n in names) and len(set(names)) == len(names) else None


MAX_AXES = 64
"""More axes than any spec has: the most axis values a lock side's variant gets."""


def from_lock(data: Mapping[str, Any], *, label: str, date: str | None = None, written: str = "",
              axis_names: tuple[str, ...] | None = None) -> Release:
    """A Release from lock data (lockfile.read): counts and hashes, no text.

    A lock names variants by id (`model/personality/mode/...`); the axis names
    are the lock's own `axes`, else `axis_names` (a neighbouring release with
    as many axes), else model, personality, mode, axis4, ..."""
    entries = data.get("variants") or {}
    ids = sorted(entries)
    # A lock is pull-request input: every variant gets `width` axis values, so
    # width is the lock's own axis count (else a neighbour's), never more than
    # MAX_AXES, and an id with more parts keeps the rest in its last value
    # (cost linear in the file, not ids x the most slashes in any id).
    declared = _lock_axes(data) or axis_names
    width = min(len(declared) if declared else max((len(v.split("/", MAX_AXES)) for v in ids), default=3), MAX_AXES)
    names = _lock_axis_names(width, declared)
    values: dict[str, dict[str, None]] = {n: {} for n in names}
    variants: dict[str, VariantSnap] = {}
    parts_seen: dict[tuple, Part] = {}  # the same section in many variants: one Part
    empty = _sha("")
    for vid in ids:
        entry = entries[vid]
        bits = vid.split("/", width - 1)
        pairs = tuple(zip(names, bits + [""] * (width - len(bits))))
        for axis, value in pairs:
            values[axis][value] = None
        rows: list[tuple] = []
        instr = entry.get("instructions") or {}
        if isinstance(instr.get("sha256"), str) and instr["sha256"] != empty and _int(instr.get("tokens")) > 0:  # 0: not sent
            rows.append((-1, 0, INSTRUCTIONS, "instructions", instr["sha256"], _int(instr.get("tokens"))))
        for name, sec in (entry.get("sections") or {}).items():
            if isinstance(sec, dict):
                group = str(sec.get("group", ""))
                rows.append((GROUP_ORDER.get(group, 9), _int(sec.get("position")), name, group, str(sec.get("sha256", "")), _int(sec.get("tokens"))))
        for name, tool in (entry.get("tools") or {}).items():
            if isinstance(tool, dict):
                place = "tools" if tool.get("placement", "field") == "field" else "tools_input"
                rows.append((4, _int(tool.get("position")), TOOL_PREFIX + name, place, str(tool.get("sha256", "")), _int(tool.get("tokens"))))
        rows.sort()
        parts = []
        for _, pos, name, group, sha, tokens in rows:
            key = (name, group, pos, sha, tokens)
            part = parts_seen.get(key)
            if part is None:
                part = parts_seen[key] = Part(name, group, pos, sha, tokens)
            parts.append(part)
        tokens = entry.get("tokens") or {}
        variants[vid] = VariantSnap(vid, pairs, str(entry.get("model", pairs[0][1])), str(entry.get("encoding", "")),
                                    _int(tokens.get("total")), None, str(entry.get("sha256", "")), tuple(parts))
    threads = data.get("conversations")
    return Release(label=label, date=date, written=written or label, commit=None, kind="lock",
                   axes=tuple((n, tuple(values[n])) for n in names), refused={}, budget=None, variants=variants,
                   threads=threads if isinstance(threads, dict) else {})


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


__all__ = ["Part", "Release", "VariantSnap", "from_lock", "from_result"]
