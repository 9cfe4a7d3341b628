"""Escaping and small HTML builders for the generated site pages.

Every string from a spec is data, so nothing here trusts its input.  Pages are
Markdown files, but almost everything in them is emitted as raw HTML blocks,
because Python-Markdown passes a raw HTML block through untouched — except for
its preprocessors, which run on the whole source first: whitespace
normalisation (tabs expanded, space-only lines emptied, CR dropped), fenced
code (``` and ~~~ lines), and macro or critic plugins that look for braces.
`prompt_html` therefore writes those characters as character references, so
the text a browser shows is byte for byte the text that would be sent.

`build --out` pages are also read by CommonMark renderers (marked, as
Docsify uses; markdown-it), where a raw HTML block ends at the first blank
line and the rest is Markdown again.  So spec text never brings a newline
into the page source (`\n` is written `&#10;`, which HTML shows as the same
newline), and never the brackets a Markdown link needs: prompt text stays
text in any renderer (tests/security/test_markdown.py checks with markdown-it).
"""

from __future__ import annotations

import functools
import html
import json
import re
from typing import Iterable, Mapping, Sequence

from ...errors import reveal_invisible

# Characters a Markdown preprocessor might rewrite inside a raw HTML block.
_PRE_REFS = {
    "\t": "&#9;",
    "\r": "&#13;",
    "\x00": "&#0;",
    "\x02": "&#2;",
    "\x03": "&#3;",
    "`": "&#96;",
    "~": "&#126;",
    "{": "&#123;",
    "}": "&#125;",
    "\n": "&#10;",
    "[": "&#91;",
    "]": "&#93;",
}
_PRE_RE = re.compile("[" + re.escape("".join(_PRE_REFS)) + "]")


def h(text: object) -> str:
    """HTML-escape a value for element content or a quoted attribute.

    Braces and backticks become references too, so a raw block stays inert
    even if a macros-style plugin scans the Markdown source."""
    s = text if type(text) is str else str(text)
    if len(s) <= 200:  # names, ids, labels: the same few thousand strings on every page
        return _h_short(s)
    return _escape(s)


def _escape(s: str) -> str:
    # Invisible characters (zero-width, bidi, tag characters) become visible
    # `\u200b` escapes: a page must not show a prompt line the model reads differently.
    return _PRE_RE.sub(lambda m: _PRE_REFS[m.group()], html.escape(reveal_invisible(s), quote=True))


@functools.lru_cache(maxsize=16384)
def _h_short(s: str) -> str:
    return _escape(s)


_BREAK = re.compile(r"([_/-])(?=[^\s])")


def ident(text: object) -> str:
    """A long identifier (fragment, slot, variant id) escaped, with a line
    break opportunity (`<wbr>`) after every `_`, `-` and `/`, so a narrow
    column wraps it between its words, never in the middle of one."""
    s = h(text)
    return _BREAK.sub(r"\1<wbr>", s) if len(s) > 12 else s


def prompt_html(text: str) -> str:
    """Prompt text for a `<pre><code>`: escaped, with every character that a
    Markdown preprocessor would touch written as a reference (newlines too,
    so the text is one source line and no blank line can end the block)."""
    return h(text)


def pre(text: str, *, cls: str = "ps-prompt", attrs: Mapping[str, str] | None = None) -> str:
    """A `<pre>` that shows `text` exactly (whitespace, markers, blank lines),
    kept out of the search index.

    The text starts right after `<code>`: a newline straight after `<pre>`
    would be dropped by HTML parsers, one after `<code>` is kept.  The
    exclusion sits on the `<pre>` itself: Material's indexer matches excluded
    elements by tag name, so an exclusion on a wrapper `<div>` ends at the
    first nested `</div>`."""
    return f"<pre class=\"{h(cls)}\"{attributes(attrs or {})} data-search-exclude><code>{prompt_html(text)}</code></pre>"


def attributes(attrs: Mapping[str, str | None]) -> str:
    """` k="v"` pairs in the given order; a None value writes a bare attribute."""
    if not attrs:  # most cells and links: nothing to write
        return ""
    parts = []
    for key, value in attrs.items():
        parts.append(f" {key}" if value is None else f' {key}="{h(value)}"')
    return "".join(parts)


_MD_SAFE = re.compile(r"[A-Za-z0-9 \-.,]")


def md_inline(text: str) -> str:
    """Text for a Markdown context (a heading): ASCII punctuation becomes a
    numeric reference, so no emphasis, link, code, HTML or table syntax can
    form; newlines become spaces."""
    text = " ".join(str(text).split("\n"))
    out = []
    for ch in text:
        if ch < "\x80" and not _MD_SAFE.match(ch):
            out.append(f"&#{ord(ch)};")
        else:
            out.append(ch)
    return "".join(out)


def front_matter(meta: Mapping[str, object]) -> str:
    """YAML front matter; values written as JSON, which YAML reads as is."""
    lines = ["---"]
    for key, value in meta.items():
        lines.append(f"{key}: {json.dumps(value, ensure_ascii=False, sort_keys=True)}")
    lines.append("---")
    return "\n".join(lines) + "\n\n"


def block(inner: str | Iterable[str], *, cls: str, attrs: Mapping[str, str | None] | None = None, tag: str = "div") -> str:
    """A raw HTML block, separated by blank lines so Markdown leaves it alone."""
    body = inner if isinstance(inner, str) else "\n".join(inner)
    return f"<{tag} class=\"{h(cls)}\"{attributes(attrs or {})}>\n{body}\n</{tag}>"


def link(href: str, label_html: str, *, cls: str | None = None, title: str | None = None, download: bool = False) -> str:
    if not (cls or title or download):  # the common case, hundreds of thousands a large site
        return f"<a href=\"{h(href)}\">{label_html}</a>"
    extra = {}
    if cls:
        extra["class"] = cls
    if title:
        extra["title"] = title
    if download:
        extra["download"] = None
    return f"<a href=\"{h(href)}\"{attributes(extra)}>{label_html}</a>"


class Cell:
    """A table cell: pre-escaped HTML plus optional class/attributes."""

    __slots__ = ("html", "cls", "attrs", "header")

    def __init__(self, html_: str, cls: str | None = None, attrs: Mapping[str, str | None] | None = None, header: bool = False):
        self.html = html_
        self.cls = cls
        self.attrs = dict(attrs) if attrs else {}
        self.header = header

    def render(self) -> str:
        tag = "th" if self.header else "td"
        if not self.cls and not self.attrs:
            return f"<{tag}>{self.html}</{tag}>"
        attrs = ({"class": self.cls} if self.cls else {}) | self.attrs
        return f"<{tag}{attributes(attrs)}>{self.html}</{tag}>"


def table(headers: Sequence[str | Cell], rows: Iterable[Sequence[str | Cell]], *, cls: str = "ps-table",
          head_rows: Sequence[Sequence[str | Cell]] = (), searchable: bool = True) -> str:
    """A raw HTML table (no class on <table>, so Material styles it).

    Strings are treated as pre-escaped HTML; wrap spec text with `h()` first.
    `searchable=False`: a table of figures (variants, tokens, deltas), kept
    out of the search index -- search finds a page by its title, headings,
    prose and descriptions, and each such table would otherwise put every
    variant and part name of the matrix into the result list of a search
    for one, ahead of the page about it."""

    def cell(c: str | Cell, header: bool) -> str:
        if isinstance(c, Cell):
            if header and not c.header:
                c = Cell(c.html, c.cls, c.attrs, True)
            return c.render()
        return f"<th>{c}</th>" if header else f"<td>{c}</td>"  # Cell(c, header=header).render(), without the object

    out = ["<table>"]
    if head_rows or headers:
        out.append("<thead>")
        for hr in head_rows:
            out.append("<tr>" + "".join(cell(c, True) for c in hr) + "</tr>")
        if headers:
            out.append("<tr>" + "".join(cell(c, True) for c in headers) + "</tr>")
        out.append("</thead>")
    out.append("<tbody>")
    for row in rows:
        out.append("<tr>" + "".join(cell(c, False) for c in row) + "</tr>")
    out.append("</tbody>")
    out.append("</table>")
    return block(out, cls="ps-table" if cls == "ps-table" else f"ps-table {cls}",
                 attrs=None if searchable else {"data-search-exclude": None})


def num(n: int | None) -> str:
    return "–" if n is None else f"{n:,}"


def pct(p: float | None, digits: int = 2) -> str:
    return "–" if p is None else f"{p:.{digits}f}%"


def signed(n: int) -> str:
    return f"+{n:,}" if n > 0 else ("±0" if n == 0 else f"−{-n:,}")


def code(text: str) -> str:
    return f"<code>{h(text)}</code>"


def quoted(text: str) -> str:
    """A marker or other exact string shown as a JSON string literal, so
    leading/trailing spaces and newlines are visible."""
    return code(json.dumps(text, ensure_ascii=False))
