"""Live examples in hand-written docs: markers expanded from the real spec.

A guide that pastes prompt text goes stale the day someone edits a fragment.
Instead the guide writes a marker on a line of its own, e.g.

    <!-- promptspec:example fragment=environment_context variant=harbor-5/default/default/workspace-write -->

and the site build replaces it with the text the spec renders today.  The
marker is an HTML comment, so an unexpanded page (GitHub's preview, a plain
Markdown viewer) still reads cleanly.  Markers inside fenced code blocks are
left alone, so the guide can show the syntax itself.

Kinds (every argument is `key=value` or `key="value with spaces"`):

* ``example fragment=NAME [variant=ID] [part=section|body]`` — the fragment's
  section exactly as sent (markers included), or only its body.  Without a
  variant: the first variant of the matrix that sends the fragment.
* ``layout [variant=ID]`` — the Codex-style layout of the request: one line
  per message, one label per section.
* ``sections [variant=ID]`` — a table of the request's sections in send order,
  with their slot, fragment and tokens.
* ``source path=REL`` — a spec file's text as written (e.g. a fragment's yaml).
* ``rules`` — the table of lint rules, IDs linking to their sections.
* ``assembly`` — the layout diagram (slots and the fragments filling them),
  the same diagram as the site's generated assembly overview page.
* ``ordering [variant=ID]`` — the send-order diagram of one request.

Output is raw HTML with every piece of prompt text passed through
`html.escape`: prompt text is data and must never become markup.

A marker that is well formed but names something this spec lacks (a
variant, a fragment, a spec file, a fragment a variant does not send) is
replaced by a visible note instead of failing the build: the same pages
then serve any spec (`promptspec site init`), and a reader sees which
example does not apply.  A malformed marker is still an error: that is a
mistake in the page, not a difference between specs.  `missed` (if given)
collects the one-line reason of every note.
"""

from __future__ import annotations

import html
import re
from typing import Any, Callable, Mapping

from ...errors import SpecError
from ...spec.files import read_text_file

MARKER = re.compile(r"^ {0,3}<!--\s*promptspec:(?P<kind>[a-z-]+)(?P<args>(?:\s+[^\s]+?=(?:\"[^\"]*\"|[^\s\"]+))*)\s*-->\s*$")
LOOSE = re.compile(r"^ {0,3}<!--\s*promptspec:")
ARG = re.compile(r"(?P<key>[A-Za-z_]+)=(?:\"(?P<q>[^\"]*)\"|(?P<v>[^\s\"]+))")
FENCE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})")

KINDS: Mapping[str, tuple[str, ...]] = {
    "example": ("fragment", "variant", "part"),
    "layout": ("variant",),
    "sections": ("variant",),
    "source": ("path",),
    "rules": (),
    "assembly": (),
    "ordering": ("variant",),
}


class Absent(SpecError):
    """A marker names something this spec does not have (shown as a note)."""


def expand_examples(
    markdown: str, result: Any, page: str = "the docs page", *, diagrams: str = "html", missed: list[str] | None = None,
) -> str:
    """Replace every promptspec marker in `markdown` with HTML rendered from
    `result` (a `pipeline.Result`).  A malformed marker raises SpecError
    naming `page` and the marker's line; one naming something the spec does
    not have becomes a note (module docstring).  `diagrams`: "html" or
    "mermaid" (index.DIAGRAMS)."""
    out: list[str] = []
    fence: str | None = None
    for number, line in enumerate(markdown.splitlines(keepends=True), 1):
        m = FENCE.match(line)
        if m:
            mark = m.group("fence")
            if fence is None:
                fence = mark
            elif mark[0] == fence[0] and len(mark) >= len(fence) and not line.strip()[len(mark):].strip():
                fence = None
            out.append(line)
            continue
        if fence is not None or not LOOSE.match(line):
            out.append(line)
            continue
        try:
            out.append(_expand(line, result, page, number, diagrams))
        except Absent as exc:
            if missed is not None:
                missed.append(exc.oneline())
            out.append("\n" + _note(exc) + "\n\n")
    return "".join(out)


def _note(exc: SpecError) -> str:
    return (
        '<div class="admonition note ps-missing">'
        '<p class="admonition-title">Example not shown for this spec</p>'
        f"<p>{html.escape(exc.message)}{': ' + html.escape(exc.hint) if exc.hint else ''}. "
        "The page was written for another spec; the rest of it still applies.</p></div>"
    )


class _Fail:
    """Makes a marker's errors (with its page and line); `absent` for the
    ones that become a note; carries the site's diagram style."""

    def __init__(self, page: str, line: int, diagrams: str) -> None:
        self.page, self.line, self.diagrams = page, line, diagrams

    def __call__(self, message: str, hint: str | None = None) -> SpecError:
        return SpecError(message, self.page, line=self.line, hint=hint)

    def absent(self, message: str, hint: str | None = None) -> SpecError:
        return Absent(message, self.page, line=self.line, hint=hint)


def _expand(line: str, result: Any, page: str, number: int, diagrams: str = "html") -> str:
    fail = _Fail(page, number, diagrams)

    m = MARKER.match(line.rstrip("\n"))
    if not m:
        raise fail("malformed promptspec marker", 'write <!-- promptspec:KIND key=value key="a value" --> on a line of its own')
    kind = m.group("kind")
    if kind not in KINDS:
        raise fail(f"unknown promptspec marker kind {kind!r}", f"kinds: {', '.join(KINDS)}")
    args: dict[str, str] = {}
    for a in ARG.finditer(m.group("args")):
        key = a.group("key")
        if key not in KINDS[kind]:
            allowed = ", ".join(KINDS[kind]) or "none"
            raise fail(f"promptspec:{kind} does not take {key!r}", f"arguments: {allowed}")
        args[key] = a.group("q") if a.group("q") is not None else a.group("v")
    # Blank lines around the block: Markdown only passes raw HTML through untouched
    # when it stands as a block of its own.
    return "\n" + _RENDER[kind](result, args, fail) + "\n\n"


# ---------------------------------------------------------------------------
# Kinds


def _variant(result: Any, given: str | None, fail: Callable[..., SpecError]) -> Any:
    if given is None:
        if not result.variants:
            raise fail.absent("the spec has no variants to show")
        return result.variants[0]
    for v in result.variants:
        if given in (v.id, v.slug):
            return v
    sample = result.variants[0].id if result.variants else "model/personality/mode"
    raise fail.absent(f"unknown variant {given!r}", f"use a variant id such as {sample} (see `promptspec list`)")


def _request(result: Any, variant: Any) -> Any:
    return next(r for r in result.requests if r.variant == variant)


def _pre(text: str, caption: str, css: str) -> str:
    return (
        f'<div class="promptspec-{css}">\n'
        f'<p class="promptspec-caption">{caption}</p>\n'
        f"<pre><code>{html.escape(text)}</code></pre>\n"
        f"</div>"
    )


def _example(result: Any, args: Mapping[str, str], fail: Callable[..., SpecError]) -> str:
    name = args.get("fragment")
    if not name:
        raise fail("promptspec:example needs fragment=NAME")
    names = [f.name for f in result.spec.fragments]
    if name not in names:
        raise fail.absent(f"unknown fragment {name!r}", f"fragments: {', '.join(sorted(names))}")
    part = args.get("part", "section")
    if part not in ("section", "body"):
        raise fail(f"unknown part {part!r}", "part=section (with markers) or part=body")
    if "variant" in args:
        variants = [_variant(result, args["variant"], fail)]
    else:
        variants = list(result.variants)
    for v in variants:
        for _, _, s in _request(result, v).sections:
            if s.fragment == name:
                text = s.text if part == "section" else s.body
                what = "section" if part == "section" else "body"
                caption = (
                    f"{what} of fragment <code>{html.escape(name)}</code> in variant "
                    f"<code>{html.escape(v.id)}</code>, rendered from the spec"
                )
                return _pre(text, caption, "example")
    where = f"variant {args['variant']!r}" if "variant" in args else "any variant"
    raise fail.absent(f"fragment {name!r} sends no section in {where}", "pick a variant the fragment applies to")


def _layout(result: Any, args: Mapping[str, str], fail: Callable[..., SpecError]) -> str:
    from ...assemble.export import layout

    v = _variant(result, args.get("variant"), fail)
    caption = f"layout of variant <code>{html.escape(v.id)}</code>, rendered from the spec"
    return _pre(layout(_request(result, v)), caption, "layout")


def _sections(result: Any, args: Mapping[str, str], fail: Callable[..., SpecError]) -> str:
    v = _variant(result, args.get("variant"), fail)
    req = _request(result, v)
    measure = result.measure_of(v)
    rows = [
        "<tr><td>0</td><td>instructions</td><td>-</td><td>base instructions "
        f"({html.escape(req.base.rule)})</td><td>{measure.base}</td></tr>"
    ]
    n = 0
    for (i, msg, s), counts in zip(req.sections, (c for cs in measure.sections for c in cs)):
        n += 1
        rows.append(
            f"<tr><td>{n}</td><td>message {i} ({html.escape(msg.role)})</td><td>{html.escape(s.slot)}</td>"
            f"<td><code>{html.escape(s.fragment)}</code></td><td>{counts}</td></tr>"
        )
    return (
        '<div class="promptspec-sections">\n'
        f'<p class="promptspec-caption">request of variant <code>{html.escape(v.id)}</code> in send order '
        f"({measure.total} tokens, {html.escape(measure.encoding)})</p>\n"
        "<table>\n<thead><tr><th>#</th><th>where</th><th>slot</th><th>fragment</th><th>tokens</th></tr></thead>\n<tbody>\n"
        + "\n".join(rows)
        + "\n</tbody>\n</table>\n</div>"
    )


def _source(result: Any, args: Mapping[str, str], fail: Callable[..., SpecError]) -> str:
    ref = args.get("path")
    if not ref:
        raise fail("promptspec:source needs path=REL")
    fs = result.spec.fs
    try:
        path = fs.resolve(ref)
    except SpecError as exc:
        raise fail(f"bad spec file reference {ref!r}: {exc.message}") from None
    if not path.is_file():
        raise fail.absent(f"unknown spec file {ref!r}", "give a path relative to the spec folder, e.g. fragments/environment_context.yaml")
    # Read without recording the file as used: showing a file in the guide must
    # not hide it from the orphan rule.
    text = read_text_file(path)
    return _pre(text, f"<code>{html.escape(fs.display(path))}</code> in the embedded spec", "source")


def _rules(result: Any, args: Mapping[str, str], fail: Callable[..., SpecError]) -> str:
    from ...authoring.findings import RULES

    rows = [
        f'<tr><td><a href="#{r.anchor}">{r.id}</a></td><td>{html.escape(r.name)}</td>'
        f"<td>{r.severity}</td><td>{_code_spans(html.escape(r.summary))}</td></tr>"
        for r in RULES.values()
    ]
    return (
        '<table class="promptspec-rules">\n<thead><tr><th>ID</th><th>name</th><th>severity</th><th>checks that</th></tr></thead>\n<tbody>\n'
        + "\n".join(rows)
        + "\n</tbody>\n</table>"
    )


def _code_spans(escaped: str) -> str:
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", escaped)


def _assembly(result: Any, args: Mapping[str, str], fail: Callable[..., SpecError]) -> str:
    from ..html import diagram
    from ..html import mermaid

    spec = result.spec
    by_slot: dict[str, list[str]] = {}
    for f in sorted(spec.fragments, key=lambda f: (f.order, f.name)):
        by_slot.setdefault(f.slot, []).append(f.name)
    if fail.diagrams == "mermaid":
        return mermaid.fence(mermaid.assembly(spec, by_slot))
    return diagram.assembly(spec, by_slot)


def _ordering(result: Any, args: Mapping[str, str], fail: Callable[..., SpecError]) -> str:
    from ..html import diagram
    from ..html import mermaid

    v = _variant(result, args.get("variant"), fail)
    req, m = _request(result, v), result.measure_of(v)
    if fail.diagrams == "mermaid":
        return mermaid.fence(mermaid.ordering(req, m))
    uses = [
        _Use(i, j + 1, s, m.sections[i][j])
        for i, msg in enumerate(req.messages) for j, s in enumerate(msg.sections)
    ]
    return diagram.ordering(uses, req.base, m.base, m.total, [msg.role for msg in req.messages])


class _Use:
    """The fields of index.SectionUse the send-order diagram reads."""

    __slots__ = ("message", "index", "section", "tokens")

    def __init__(self, message: int, index: int, section: Any, tokens: int) -> None:
        self.message, self.index, self.section, self.tokens = message, index, section, tokens


_RENDER: Mapping[str, Callable[[Any, Mapping[str, str], Callable[..., SpecError]], str]] = {
    "example": _example,
    "layout": _layout,
    "sections": _sections,
    "source": _source,
    "rules": _rules,
    "assembly": _assembly,
    "ordering": _ordering,
}
