"""`exact:`: the text (or value) a part has for some cells, stated outright.

Rules are the first choice because people read them: a template filled from
the catalog, a fragment chosen by axes, a tool file with a `when`.  But an
agent release can send something no rule of the format derives (a line of
the instructions that differs for one model and two personalities).  Rather
than refuse such a release, a spec may say "for these cells, this part is
exactly this", and every page and diff shows that it does.  One mechanism for
every kind of part, so hand-written specs and importers use the same words:

    exact:
      - part: instructions          # the base instructions (field or section)
        when: {model: m, personality: [friendly, pragmatic]}
        file: exact/instructions/m.md
        why: the release adds a line no catalog field holds

`part` is `instructions`, `fragment NAME` (the body between its markers),
`tool NAME` (the definition sent in place of the tool file's, `value:`; null:
not sent) or `param NAME` (a request parameter, `value:`; null: not sent).
An entry's `first:` is a condition on the thread's first model (a later
request of a thread another model started: Codex fixes some parts when a
session starts); a first request's first model is its own.
The first entry whose `when` (and `first`) matches a variant decides; entries are checked
here against the spec's fragments, tools and body order.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from ..files import SpecFS
from ..model import ALWAYS, COMPUTED_BODY_KEYS, ExactPart, Fragment, Model, RequestConfig, Tool, When
from .reader import Reader, read_when
from .tools import serialize, to_json

EXACT_KEYS = {"part", "when", "first", "file", "value", "why"}
TEXT_KINDS = ("instructions", "fragment")
VALUE_KINDS = ("tool", "param")
KINDS = TEXT_KINDS + VALUE_KINDS


def load_exact(top: Reader, fs: SpecFS, axis_names: set[str], models: tuple[Model, ...],
               fragments: tuple[Fragment, ...], tools: tuple[Tool, ...], request: RequestConfig) -> tuple[ExactPart, ...]:
    """The `exact:` list, each entry checked against what it names."""
    items = top.get("exact", list, []) or []
    out: list[ExactPart] = []
    fragment_names = {f.name for f in fragments}
    by_tool = {t.name: t for t in tools}
    body_keys = {k for r in request.rules if r.order for k in r.order} | set(request.order)
    for i, item in enumerate(items):
        line = getattr(item, "line", None) or top.line("exact")
        r = Reader(item, top.where, f"exact[{i}]")
        r.unknown(EXACT_KEYS, "an exact entry")
        part = r.text("part", required=True).strip()
        kind, _, name = part.partition(" ")
        name = name.strip()
        if kind not in KINDS or (kind == "instructions") != (name == ""):
            raise r.err("part", f"exact[{i}].part is {part!r}; expected 'instructions', 'fragment NAME', 'tool NAME' or 'param NAME'")
        when = read_when(r, axes=axis_names, models=models, what=f"exact[{i}].when")
        first = read_when(r, key="first", axes={"model"}, models=models, what=f"exact[{i}].first") if "first" in item else None
        file, value, tool = None, None, None
        if kind in TEXT_KINDS:
            if "value" in item:
                raise r.err("value", f"exact[{i}] ({part}) takes its text from 'file:', not 'value:'")
            file = r.text("file", required=True)
            if not fs.resolve(file, origin=top.where).is_file():
                raise r.err("file", f"exact[{i}].file {file!r} is not a file in the spec", hint="create it or fix the path")
            fs.read_text(file, origin=top.where)  # confined, bounded, strict text: checked now, not per variant
        else:
            if "file" in item:
                raise r.err("file", f"exact[{i}] ({part}) takes 'value:' (JSON; null: not sent), not 'file:'")
            if "value" not in item:
                raise r.err(None, f"exact[{i}] ({part}) needs 'value:' (null: not sent)")
            value = to_json(item["value"], top.where, r.line("value") or line, "value")
        if kind == "fragment" and name not in fragment_names:
            raise r.err("part", f"exact[{i}] names fragment {name!r}, which the spec does not define",
                        hint=f"fragments: {', '.join(sorted(fragment_names)) or '(none)'}")
        if kind == "tool":
            if name not in by_tool:
                raise r.err("part", f"exact[{i}] names tool {name!r}, which has no file in the tools folder",
                            hint="name a tool file's stem; add a file for a tool no variant sends otherwise")
            if value is not None:
                tool = _tool_as(by_tool[name], value, r, i)
        if kind == "param":
            if name in COMPUTED_BODY_KEYS:
                raise r.err("part", f"exact[{i}]: '{name}' is filled by assembly", hint="use 'part: instructions', a fragment or a tool")
            if name not in body_keys:
                raise r.err("part", f"exact[{i}]: parameter {name!r} is not in the body order", hint="add it to request.order")
        out.append(ExactPart(kind=kind, name=name, when=when, first=first, file=file, value=value, tool=tool,
                             why=r.text("why", ""), index=i, line=line))
    return tuple(out)


def _tool_as(tool: Tool, value: Any, r: Reader, i: int) -> Tool:
    """The tool file's entry with the exact definition in place of its own."""
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        raise r.err("value", f"exact[{i}].value must be a tool definition (an object with a 'type'), or null")
    name = value.get("name", value["type"])
    if not isinstance(name, str) or not name:
        raise r.err("value", f"exact[{i}].value: the definition's 'name' must be a non-empty string")
    return dataclasses.replace(tool, definition=value, serialized=serialize(value), tool_name=name, kind=value["type"],
                               when=ALWAYS, source=r.where, line=r.line("value"))


def first_exact(entries: tuple[ExactPart, ...], kind: str, name: str, matches: Callable[[When], bool],
                first_matches: Callable[[When], bool] | None = None) -> ExactPart | None:
    """The entry deciding part (kind, name) for a variant (`matches(when)` says whether a `when` holds;
    `first_matches(first)` whether an entry's `first` holds for the thread's first model, default `matches`)."""
    for entry in entries:
        if entry.kind == kind and entry.name == name and matches(entry.when) \
                and (entry.first is None or (first_matches or matches)(entry.first)):
            return entry
    return None


def describe(entry: ExactPart) -> str:
    """How pages and exports name the entry: where it is and why."""
    return f"spec.yaml exact[{entry.index}]" + (f": {entry.why}" if entry.why else "")

