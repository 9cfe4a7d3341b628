"""The explorer as a site page: the picker and the script, reading
explorer-data.json beside it (no CDN, no other request).  The widget and its
data file are `site/explorer/`; this module only places them in the site."""

from __future__ import annotations

import json

from .. import explorer
from ..html.markup import block, front_matter, h, link
from ..index import ASSET_DIR, SiteIndex


def explorer_page(idx: SiteIndex) -> str:
    """The explorer as a site page: the picker and the script, reading
    explorer-data.json beside it (no CDN, no other request)."""
    page = idx.explorer_page
    n = len(idx.variants)
    with_pages = idx.variant_page_count
    if with_pages == n:
        pages_note = "Every variant also has a page of its own (linked from the matrix)."
    elif with_pages == 0:
        pages_note = "The variants have no pages of their own on this site: links to a variant open it here."
    else:
        pages_note = f"{with_pages:,} of them also have a page of their own; links to the others open them here."
    intro = (
        f"<p>Pick a value on every axis to see that variant of {h(idx.spec.name)} ({n:,} variants) exactly as sent: "
        "the base instructions and every message and section in order, with token counts. "
        f"{pages_note} The address of the page names the variant, so it can be shared. "
        f"Back to the {link(idx.href(page, idx.matrix_page), 'Matrix')}.</p>"
    )
    widget = explorer.page_html(
        explorer.DATA_FILE,  # beside the page
        idx.axes,
        js_url=idx.href(page, f"{ASSET_DIR}/explorer.js"),
        css_url=idx.href(page, f"{ASSET_DIR}/explorer.css"),
        extra=_explorer_links(idx),
    )
    return (
        front_matter({"title": "Explorer", "hide": ["toc"]})
        + "# Variant explorer\n\n"
        + block(intro, cls="ps-intro")
        + "\n\n"
        + widget
    )


def _explorer_links(idx: SiteIndex) -> dict[str, str]:
    """Where the explorer links a picked variant: its page and JSON download,
    as URL templates with `{slug}` (Variant.slug), and which variants have
    them ("all", "none" or a JSON list of ids)."""
    page = idx.explorer_page
    slug = "{slug}"
    if idx.pages is None or len(idx.pages) == len(idx.variants):
        paged = "all"
    elif not idx.pages:
        paged = "none"
    else:
        paged = json.dumps(sorted(v.id for v in idx.pages), separators=(",", ":"))
    return {
        "data-page-url": idx.href(page, idx.page_path("variants", slug + ".md")),
        "data-json-url": idx.href(page, idx.page_path("variants", slug + ".json")),
        "data-paged": paged,
    }
