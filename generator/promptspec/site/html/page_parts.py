"""Small pieces every overview page is built from: front matter, headings,
paragraphs, axis titles.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from ..index import AXIS_TITLES
from .markup import (
    front_matter,
    h,
    md_inline,
)

HEAT_BUCKETS = 6
PLACEHOLDER = h("{{ personality }}")


def page_head(title: str, heading: str | None = None, *, extra: dict | None = None) -> list[str]:
    meta = {"title": title, **(extra or {})}
    return [front_matter(meta).rstrip("\n"), "", f"# {md_inline(heading or title)}", ""]


def join_blocks(parts: Sequence[str]) -> str:
    return "\n".join(parts).rstrip("\n") + "\n"


def para(html_: str) -> str:
    return f"<p>{html_}</p>"


def axis_title(axis: str) -> str:
    return AXIS_TITLES.get(axis, axis)


def conditions(when: Mapping[str, Sequence[str]], *extra: str) -> str:
    """A `when` as HTML (`mode ∈ plan; …`), the same on every page kind; "always" when empty."""
    parts = [f"{h(k)} ∈ " + ", ".join(f"<code>{h(p)}</code>" for p in pats) for k, pats in when.items()]
    return "; ".join([*parts, *extra]) or "always"


