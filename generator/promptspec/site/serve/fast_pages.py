"""A generated page with its raw HTML set aside: the skeleton Markdown renders.

A generated page is Markdown in which nearly everything is raw HTML blocks
(markup.block), between a few Markdown headings and the front matter.
Python-Markdown copies a raw HTML block to its output unchanged, but only
after running an HTML parser over it -- twice under MkDocs (its anchor scan
and `md_in_html`), and Material's search indexer runs a third: together
86 % of a build with a page per variant.  So the plugin hands MkDocs the
*skeleton* of each generated page, every raw block replaced by a comment
(`<!--promptspec:block N-->`), lets the real Markdown with the site's own
extensions render what is left (headings, their ids and permalinks, the
TOC, the title), and puts the blocks back into the HTML afterwards.  The
output is the normal path's (tests/site/test_fast_pages.py compares every
page of a site both ways), only without parsing what promptspec wrote as
HTML in the first place.

Only a block Python-Markdown would copy verbatim is set aside: a chunk
between blank lines that starts at the line start with a block-level tag
and ends with that tag's end tag, with no `markdown` attribute (which
`md_in_html` would act on).  Anything else -- headings, a Mermaid fence, an
inline-level line -- stays in the skeleton, so the worst an unexpected
chunk can cost is speed.  Spec text cannot forge a placeholder: it reaches
the page escaped (`<` as `&lt;`).
"""

from __future__ import annotations

import html
import json
import re
import zlib
from dataclasses import dataclass
from typing import Collection

_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
# Tags Python-Markdown treats as block-level (markdown.Markdown.block_level_elements)
# that the generated pages start raw blocks with.
_BLOCK_TAGS = "div|p|figure|pre|table|details|section|nav|aside|ul|ol|dl|blockquote|h[1-6]|hr|form|header|footer"
_BLOCK = re.compile(rf"<({_BLOCK_TAGS})[\s>]")
_PLACEHOLDER = "<!--promptspec:block {}-->"
_PLACEHOLDER_RE = re.compile(r"<!--promptspec:block (\d+)-->")
_ID = re.compile(r' id="([^"]*)"')
_NAME = re.compile(r'<a [^<>]*? name="([^"]*)"')
"""Anchors in promptspec's own markup (markup.attributes: one space before
each attribute, every value quoted and escaped), where ` id="` cannot occur
in text or inside a value: a literal, so the scan is fast."""


@dataclass(frozen=True)
class Skeleton:
    markdown: str  # the page with each raw block replaced by a placeholder comment
    blocks: tuple[str, ...]  # the raw blocks, in order


def split(markdown: str) -> Skeleton:
    """The page's skeleton and its raw blocks (none: the page as it is).
    Consecutive raw chunks become one block (less for Markdown to parse); a
    page heading is a block of its own (theme_blocks)."""
    head = _FRONT_MATTER.match(markdown)
    start = head.end() if head else 0
    out: list[str] = []
    blocks: list[str] = []
    run: list[str] = []

    def set_aside(text: str, tail: str = "") -> None:
        out.append(_PLACEHOLDER.format(len(blocks)) + tail)
        blocks.append(text)

    for chunk in markdown[start:].split("\n\n"):
        core = chunk.rstrip("\n")  # only the page's last chunk can end with a newline
        tail = chunk[len(core):]
        if not _verbatim(core):
            if run:
                set_aside("\n\n".join(run))
                run = []
            out.append(chunk)
        elif core.startswith("<h1"):
            if run:
                set_aside("\n\n".join(run))
                run = []
            set_aside(core, tail)
        elif tail:
            set_aside("\n\n".join([*run, core]), tail)
            run = []
        else:
            run.append(core)
    if run:
        set_aside("\n\n".join(run))
    if not blocks:
        return Skeleton(markdown, ())
    return Skeleton(markdown[:start] + "\n\n".join(out), tuple(blocks))


def _verbatim(chunk: str) -> bool:
    m = _BLOCK.match(chunk)
    return (
        m is not None
        and chunk.endswith(f"</{m.group(1)}>")
        and ' markdown="' not in chunk
        and "<!--" not in chunk
    )


def without_front_matter(markdown: str) -> str:
    """The page as Markdown renders it (MkDocs reads the front matter itself)."""
    return _FRONT_MATTER.sub("", markdown, count=1)


def _placeholders(rendered: str) -> list[int]:
    return [int(n) for n in _PLACEHOLDER_RE.findall(rendered)]


def intact(rendered: str, count: int) -> bool:
    """Each of the `count` placeholders is in `rendered` once, in order."""
    return _placeholders(rendered) == list(range(count))


def restore(rendered: str, blocks: tuple[str, ...], which: Collection[int] | None = None) -> str | None:
    """`rendered` (the skeleton's HTML) with the placeholders of the blocks
    `which` (default: all) replaced by them; None unless exactly those
    placeholders are there, once each and in order (something between the
    split and here changed them: the caller renders normally or warns)."""
    wanted = list(range(len(blocks))) if which is None else sorted(which)
    if _placeholders(rendered) != wanted:
        return None
    return _PLACEHOLDER_RE.sub(lambda m: blocks[int(m.group(1))], rendered)


def fill(rendered: str, blocks: tuple[str, ...], which: Collection[int]) -> str:
    """`rendered` with only the placeholders of the blocks `which` replaced."""
    return _PLACEHOLDER_RE.sub(lambda m: blocks[int(m.group(1))] if int(m.group(1)) in which else m.group(0), rendered)


def theme_blocks(blocks: tuple[str, ...]) -> frozenset[int]:
    """The blocks a theme looks for in a page's content, which go back
    before the theme runs even when the rest waits: a page heading
    (Material adds a `<h1>` of the page title when the content has none)."""
    return frozenset(n for n, block in enumerate(blocks) if block.startswith("<h1"))


def anchor_ids(blocks: tuple[str, ...]) -> set[str]:
    """The ids the blocks define, as MkDocs' raw-HTML scan would find them
    (links from other pages to `page#id` are checked against these)."""
    found: set[str] = set()
    for block in blocks:
        found.update(_ID.findall(block))
        if " name=" in block:
            found.update(_NAME.findall(block))
    return {html.unescape(m) if "&" in m else m for m in found}


def pack(blocks: tuple[str, ...]) -> bytes:
    """The blocks, compressed, for a page whose HTML is put together only
    when MkDocs writes it: what a page holds meanwhile is a few KB."""
    return zlib.compress(json.dumps(blocks).encode("utf-8"), 1)


def unpack(packed: bytes) -> tuple[str, ...]:
    return tuple(json.loads(zlib.decompress(packed)))
