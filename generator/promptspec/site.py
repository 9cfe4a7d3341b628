"""Result -> the site's pages: a pure mapping of path -> content.

The MkDocs plugin adds these as generated files; `promptspec build --out`
writes them as a plain folder for other site engines.  Nothing here does I/O
except `assets()` (reading package data) and `write_folder()` (the one place
that writes, through atomic.replace_tree).

Layout, under `prefix` (default `prompts/`):

    index.md                     the matrix: every variant, tokens, % usable
    variants/<slug>.md|.json     one page per variant + its Responses-API JSON
    models/ personalities/ modes/ axes/<axis>/   index.md + one page per value
    fragments/index.md, fragments/<name>.md      the fragment catalog
    assembly.md                  the layout diagram
    lint.md                      every lint finding (fragment pages show their own)
    changes.md                   what changed since the base (site_changes.py)
    ../assets/promptspec/        CSS and JS the pages use
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Sequence

from . import export, site_changes, site_lint, site_pages, site_variant
from .atomic import replace_tree
from .errors import UsageError
from .pipeline import Result
from .site_index import ASSET_DIR, CSS, JS, Paths, SiteIndex
from .site_markup import block, front_matter, h, md_inline

MARKER_FILE = ".promptspec-build"
"""Written into `build --out` folders, so a rebuild only ever replaces its own output."""


@dataclass(frozen=True)
class Site:
    pages: dict[str, str]  # Markdown pages (src path -> text)
    files: dict[str, str]  # other generated files (JSON downloads)
    nav: tuple[tuple[str, str], ...]  # overview pages: (title, src path)
    in_nav: frozenset[str] = field(default_factory=frozenset)  # pages that belong in a nav

    def all_files(self) -> dict[str, str]:
        return {**self.pages, **self.files}


def build_site(
    result: Result,
    *,
    prefix: str = "prompts",
    links: str = "md",
    findings: Sequence[Any] | None = None,
    changes: site_changes.Changes | None = None,
    rules_page: str | None = None,
) -> Site:
    """Every page of the site, in a deterministic order.

    `findings`: lint findings of `result` (None: run lint here, timed into
    result.timings); `changes`: the comparison with the base (site_base.py;
    None: no base); `rules_page`: site path of the lint rules reference, if
    the site has one (rule IDs then link to it)."""
    if findings is None:
        findings = site_lint.run(result)
    idx = SiteIndex(result, prefix=prefix, links=links, findings=findings, rules_page=rules_page, changes=changes)
    pages: dict[str, str] = {}
    files: dict[str, str] = {}
    pages[idx.matrix_page] = site_pages.matrix_page(idx)
    for axis, values in idx.axes:
        pages[idx.axis_page(axis)] = site_pages.axis_index_page(idx, axis)
        for value in values:
            pages[idx.axis_page(axis, value)] = site_pages.axis_value_page(idx, axis, value)
    pages[idx.fragment_page()] = site_pages.fragments_index_page(idx)
    for f in sorted(result.spec.fragments, key=lambda f: f.name):
        pages[idx.fragment_page(f.name)] = site_pages.fragment_page(idx, f.name)
    pages[idx.assembly_page] = site_pages.assembly_page(idx)
    pages[idx.lint_page] = site_lint.lint_page(idx)
    pages[idx.changes_page] = site_changes.changes_page(idx)
    for v in idx.variants:
        pages[idx.variant_page(v)] = site_variant.page(idx, v)
        files[idx.variant_json(v)] = export.dumps(export.responses_payload(idx.request[v]))
    nav = overview_pages(prefix)
    return Site(pages, files, nav, frozenset(p for _, p in nav))


def overview_pages(prefix: str = "prompts", extra_axes: Sequence[str] = ()) -> tuple[tuple[str, str], ...]:
    """The overview pages (title, path) a nav lists; every other page is
    reached by links."""
    idx = Paths(prefix)
    return (
        ("Matrix", idx.matrix_page),
        *((site_pages.axis_title(a), idx.axis_page(a)) for a in ("model", "personality", "mode", *extra_axes)),
        ("Fragments", idx.fragment_page()),
        ("Assembly", idx.assembly_page),
        ("Lint", idx.lint_page),
        ("Changes", idx.changes_page),
    )


def assets() -> dict[str, bytes]:
    """The CSS/JS the pages use, by site path."""
    root = resources.files("promptspec") / "assets"
    return {f"{ASSET_DIR}/{name}": (root / name).read_bytes() for name in (Path(CSS).name, Path(JS).name)}


def error_page(title: str, message: str) -> str:
    """A stand-in page shown by `mkdocs serve` when the spec has never built."""
    return (
        front_matter({"title": title})
        + f"# {md_inline(title)}\n\n"
        + block(f"<p>The spec could not be built:</p>\n<pre><code>{h(message)}</code></pre>", cls="ps-error admonition failure")
        + "\n"
    )


def write_folder(site: Site, out: Path) -> Path:
    """Write the site as a plain folder, replacing `out` only when complete.

    Everything is staged in a folder beside `out` and swapped in at the end
    (atomic.replace_tree), so a failed or interrupted build leaves the
    previous output untouched.  An existing `out` is only replaced if an
    earlier `build` wrote it (it holds MARKER_FILE) or it is empty."""
    out = Path(out)
    if out.exists():
        if not out.is_dir():
            raise UsageError(f"{out} exists and is not a folder; choose another --out")
        if any(out.iterdir()) and not (out / MARKER_FILE).is_file():
            raise UsageError(f"{out} is not empty and was not written by 'promptspec build'; choose another --out or empty it")
    with replace_tree(out) as staging:
        for rel, content in sorted(site.all_files().items()):
            target = staging / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content.encode("utf-8"))
        for rel, data in sorted(assets().items()):
            target = staging / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        (staging / MARKER_FILE).write_text("written by promptspec build; the folder is replaced on every build\n", encoding="utf-8")
    return out
