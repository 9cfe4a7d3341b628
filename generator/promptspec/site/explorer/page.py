"""The explorer as a page: its HTML (inside the site or standalone) and its
assets (explorer.js, explorer.css).
"""

from __future__ import annotations

import html
import os
import time
from importlib import resources
from pathlib import Path
from typing import Any, Iterable, Sequence

from ...errors import UsageError
from ...pipeline import Result
from ...util.atomic import replace_tree
from .data import ASSETS, DATA_FILE, DATA_SCRIPT, build, data_bytes

# ---------------------------------------------------------------------------
# The page


def asset_bytes(name: str) -> bytes:
    """The packaged explorer.js / explorer.css."""
    if name not in ASSETS:
        raise ValueError(f"unknown explorer asset {name!r}; known: {', '.join(ASSETS)}")
    return (resources.files("promptspec.site") / "assets" / name).read_bytes()


def _sibling(url: str, name: str) -> str:
    head, sep, _ = url.rpartition("/")
    return f"{head}{sep}{name}"


def page_html(
    data_url: str,
    axes: Iterable[tuple[str, Sequence[str]]] | Iterable[Sequence[Any]],
    *,
    js_url: str | None = None,
    css_url: str | None = None,
    data_js_url: str | None = None,
) -> str:
    """The explorer as an HTML fragment for a Markdown page (one raw HTML block).

    `data_url` is where the page fetches the data (relative to the page);
    the script and stylesheet default to siblings of it.  The <select>s are
    rendered here from `axes` (e.g. `spec.axes`), so the controls appear before
    the data arrives; the script fills in the rest.  Everything sits inside
    one <div> with no blank lines, so Markdown passes it through untouched.
    """
    js_url = js_url or _sibling(data_url, "explorer.js")
    css_url = css_url or _sibling(data_url, "explorer.css")
    esc = lambda s: html.escape(str(s), quote=True)  # noqa: E731
    attrs = f' data-src="{esc(data_url)}"'
    if data_js_url:
        attrs += f' data-src-js="{esc(data_js_url)}"'
    parts = [f'<div class="promptspec-explorer"{attrs}>', f'<link rel="stylesheet" href="{esc(css_url)}">']
    parts.append('<form class="pse-picker">')
    for axis in axes:
        name, values = axis[0], axis[1]
        options = "".join(f'<option value="{esc(v)}">{esc(v)}</option>' for v in values)
        parts.append(f'<label class="pse-axis"><span>{esc(name)}</span> <select data-axis="{esc(name)}">{options}</select></label>')
    parts.append("</form>")
    parts.append('<p class="pse-status" role="status">Loading the variant explorer…</p>')
    parts.append("<noscript><p>The variant explorer needs JavaScript.</p></noscript>")
    parts.append(f'<script src="{esc(js_url)}" defer></script>')
    parts.append("</div>")
    return "\n".join(parts) + "\n"


def _standalone_html(title: str, fragment: str) -> str:
    return (
        "<!doctype html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<link rel="icon" href="data:,">\n'
        f"<title>{html.escape(title)} — variant explorer</title>\n"
        "</head>\n<body>\n"
        '<main class="pse-standalone">\n'
        f"<h1>{html.escape(title)}</h1>\n"
        f"{fragment}"
        "</main>\n</body>\n</html>\n"
    )


def write_assets(folder: str | os.PathLike[str]) -> list[Path]:
    """Copy explorer.js and explorer.css into `folder` (for site generators)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name in ASSETS:
        path = folder / name
        path.write_bytes(asset_bytes(name))
        written.append(path)
    return written


def standalone_files(result: Result) -> dict[str, bytes]:
    """The standalone explorer as {file name: content}."""
    data = build(result)
    blob = data_bytes(data)
    fragment = page_html(DATA_FILE, data["axes"], data_js_url=DATA_SCRIPT)
    return {
        "index.html": _standalone_html(result.spec.name, fragment).encode("utf-8"),
        DATA_FILE: blob,
        DATA_SCRIPT: b"window.PROMPTSPEC_EXPLORER_DATA=" + blob + b";\n",
        **{name: asset_bytes(name) for name in ASSETS},
    }


def write_standalone(result: Result, out_dir: str | os.PathLike[str]) -> Path:
    """Write the explorer as a self-contained folder: index.html, the data
    (as JSON for web servers and as a script for file:// use), explorer.js and
    explorer.css.  No MkDocs, no network.

    The folder is staged beside the target and swapped in
    (atomic.replace_tree), so a failure or Ctrl-C leaves no half-written
    output; an existing folder is replaced only if it holds nothing but
    explorer files.  Adds `result.timings["explorer"]`.
    """
    started = time.perf_counter()
    out = Path(out_dir)
    files = standalone_files(result)
    if out.exists():
        if not out.is_dir():
            raise UsageError(f"{out} exists and is not a folder")
        foreign = sorted(p.name for p in out.iterdir() if p.name not in files)
        if foreign:
            raise UsageError(f"{out} holds other files ({foreign[0]}...); choose an empty or new folder")
    with replace_tree(out) as staging:
        for name, content in sorted(files.items()):
            (staging / name).write_bytes(content)
    result.timings["explorer"] = time.perf_counter() - started
    return out
