"""What Material's search indexer needs to read of a page: its HTML with the
insides of search-excluded elements taken out.

Material's indexer (`material.plugins.search`) runs Python's HTMLParser
over every indexed page at every build, and skips the text of an element
marked `data-search-exclude` only after parsing all of it.  Most of an
overview page is such elements -- the tables of figures, the diagrams --
so at 2,400 variants parsing them was most of the indexer's time, in every
build and every serve rebuild, for nothing.

`for_index` hands it the same page with each excluded element emptied:
the start tag and end tag stay, so the element still separates the text
around it exactly as before, and nothing that was skipped is parsed.  The
index is the same only if the emptied insides could not have changed what
the indexer did, so an element is emptied only when its insides are plain,
properly nested markup after the page's first heading: no heading (the
indexer starts a section even inside an excluded element), no element of
its own tag (the indexer's skip list matches by tag name, so a nested
`</div>` ends the exclusion early), no unbalanced tag, and nothing before
it that HTMLParser reads as other than markup (a comment, CDATA, a script
or style).  An element that fails this is left as it is, and so is the
rest of the page after it (the indexer's state there is not worth
guessing): parsed as before.
tests/site/test_search_input.py holds the result to Material's own parser.
"""

from __future__ import annotations

import re

_ATTR = r"[^>\"']|\"[^\"]*\"|'[^']*'"
"""One piece of a tag after its name: quoted attribute values may hold `>`."""

_EXCLUDED = re.compile(rf"<([a-zA-Z][a-zA-Z0-9-]*)(?=[\s/>])(?:{_ATTR})*?\sdata-search-exclude(?=[\s=/>])(?:{_ATTR})*>")
"""A start tag carrying data-search-exclude."""

_HEADING = re.compile(r"<h[1-6][\s>/]", re.I)

_RAW = ("script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "plaintext")
"""Elements whose insides HTMLParser does not read as markup."""

_NOT_MARKUP = re.compile(rf"<[!?]|<(?:{'|'.join(_RAW)})[\s/>]", re.I)
"""Where HTMLParser may stop reading the page as markup: nothing at or after it is emptied."""

_NAMES = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9-]*)")

_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr"})
"""Tags the indexer never pushes (Material's `void` list): they need no end tag."""

_REFUSED = frozenset({"h1", "h2", "h3", "h4", "h5", "h6", *_RAW})
"""Inside an emptied element: no heading, nothing HTMLParser reads as other than markup."""


def _end_tag(html: str, tag: str, start: int, limit: int) -> tuple[int, int] | None:
    """The span of the end tag of the element `tag` whose start tag ends at
    `start` (before `limit`), if its insides are plain, properly nested
    markup in which every `<` starts a tag; else None.

    No element of its own tag may be inside, so its end tag is the first
    `</tag`; the insides' tag names are read at regex speed and only their
    nesting is checked one by one."""
    close = re.compile(rf"</{re.escape(tag)}\s*>|<{re.escape(tag)}(?=[\s/>])", re.I).search(html, start, limit)
    if close is None or not close.group(0).startswith("</"):
        return None
    names = _NAMES.findall(html, start, close.start())
    if len(names) != html.count("<", start, close.start()):
        return None  # a `<` that starts no tag: a comment, CDATA, stray text
    stack: list[str] = []
    for slash, name in names:
        name = name.lower()
        if slash:
            if not stack or stack.pop() != name:
                return None
        elif name in _VOID:
            continue
        elif name == tag or name in _REFUSED:
            return None
        else:
            stack.append(name)
    return None if stack else close.span()


def for_index(html: str) -> str:
    """`html` with every search-excluded element after the first heading
    emptied where that cannot change Material's index (see the module)."""
    first = _HEADING.search(html)
    if first is None:
        return html
    stop = _NOT_MARKUP.search(html)
    limit = len(html) if stop is None else stop.start()
    out: list[str] = []
    done = pos = 0
    while True:
        m = _EXCLUDED.search(html, pos, limit)
        if m is None:
            break
        tag = m.group(1).lower()
        close = None if tag in _VOID or m.group(0).endswith("/>") else _end_tag(html, tag, m.end(), limit)
        if close is None:
            break  # the indexer's state after it is anybody's guess: the rest is parsed whole
        if m.start() > first.start():
            out.append(html[done:m.end()])
            done = close[0]  # its end tag stays, as written
        pos = close[1]  # an element inside one left whole stays whole too
    if not out:
        return html
    out.append(html[done:])
    return "".join(out)
