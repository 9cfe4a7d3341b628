"""`promptspec site init DIR [--spec SPEC]`: a minimal MkDocs site for one's own spec.

The repository's mkdocs.yml is the site of the embedded example, with guide
pages written for it.  A team with its own spec (or an imported Codex
release) wants the generated pages and nothing else to start from: an
mkdocs.yml with the theme settings that keep the site offline (system
fonts, promptspec's own diagrams), dark mode, the plugin pointed at the spec,
and a nav listing the overview pages in reading order; and a docs folder
with a home page that shows the spec's layout live.

Nothing is overwritten: a file that already exists stops the command before
anything is written, and the files are written only after the spec loaded.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import yaml

from ..errors import UsageError
from ..util import atomic

PALETTE = [
    {"media": "(prefers-color-scheme: light)", "scheme": "default",
     "toggle": {"icon": "material/weather-night", "name": "Switch to dark mode"}},
    {"media": "(prefers-color-scheme: dark)", "scheme": "slate",
     "toggle": {"icon": "material/weather-sunny", "name": "Switch to light mode"}},
]

MARKDOWN_EXTENSIONS = ["attr_list", "md_in_html", "tables", "admonition", {"toc": {"permalink": True}}, "pymdownx.details"]


def config(spec_ref: str, site_name: str, extra_axes: list[str], *, prefix: str = "prompts") -> dict:
    """The mkdocs.yml of a new site, as data (written with yaml.safe_dump)."""
    from .build import overview_pages

    pages = [{title: path} for title, path in overview_pages(prefix, extra_axes)]
    return {
        "site_name": site_name,
        "docs_dir": "docs",
        "strict": True,
        "theme": {
            "name": "material",
            "font": False,  # system fonts: no request to a font CDN
            "palette": PALETTE,
            "features": ["navigation.prune", "navigation.sections", "navigation.indexes", "search.highlight", "content.code.copy"],
        },
        "plugins": ["search", {"promptspec": {"spec": spec_ref, "path": prefix}}],
        "markdown_extensions": MARKDOWN_EXTENSIONS,
        "nav": [{"Home": "index.md"}, {"Prompts": pages}],
    }


HEADER = (
    "# A promptspec site, made by `promptspec site init`.\n"
    "# Preview: mkdocs serve    Build: mkdocs build --strict (into site/)\n"
    "# The promptspec plugin generates every page under {prefix}/ from the spec at build time;\n"
    "# docs/ holds only hand-written pages. Plugin options: see the promptspec README.\n"
)


def home_page(site_name: str, prefix: str = "prompts") -> str:
    from .markup import md_inline

    return (
        f"# {md_inline(site_name)}\n\n"
        "Every variant of this prompt spec, assembled exactly as sent, with token counts.\n\n"
        f"- [Matrix]({prefix}/index.md): every variant's total tokens\n"
        f"- [Explorer]({prefix}/explorer/index.md): any variant, its text, and a search over all prompt text\n"
        f"- [Fragments]({prefix}/fragments/index.md): the parts a request is made of\n\n"
        "## How a request is assembled\n\n"
        "<!-- promptspec:assembly -->\n"
    )


def init_site(out: Path, spec: Path | None = None) -> list[Path]:
    """Write DIR/mkdocs.yml and DIR/docs/index.md for the spec at `spec`
    (default: DIR itself when it holds a spec.yaml).  The spec is loaded first,
    so a broken spec fails here with its own one-line error."""
    from ..spec import load_spec

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out} exists and is not a folder; choose another DIR")
    if spec is None:
        if not (out / "spec.yaml").is_file():
            raise UsageError(f"{out} holds no spec.yaml; give the spec folder with --spec SPEC")
        spec = out
    spec = Path(spec)
    if not (spec / "spec.yaml").is_file():
        raise UsageError(f"{spec} holds no spec.yaml; --spec names a spec folder")
    loaded = load_spec(spec)
    targets = [out / "mkdocs.yml", out / "docs" / "index.md"]
    for path in targets:
        if path.exists():
            raise UsageError(f"{path} already exists; choose an empty DIR or remove it")
    ref = Path(os.path.relpath(spec.resolve(), out.resolve())).as_posix()
    extra = [axis for axis, _ in loaded.axes[3:]]
    cfg = config(ref, loaded.name, extra)
    text = HEADER.format(prefix="prompts") + yaml.safe_dump(cfg, sort_keys=False, allow_unicode=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / "docs").mkdir(exist_ok=True)
    atomic.write_text(targets[0], text)
    atomic.write_text(targets[1], home_page(loaded.name))
    return targets


def add_command(sub) -> None:
    """`promptspec site init` on the CLI's subcommands (cli.build_parser)."""
    site_sub = sub.add_parser("site", help="set up an MkDocs site for a spec").add_subparsers(dest="action", metavar="ACTION", required=True)
    q = site_sub.add_parser("init", help="write DIR/mkdocs.yml and DIR/docs/index.md for a spec (nothing is overwritten)")
    q.add_argument("dir", type=Path, metavar="DIR")
    q.add_argument("--spec", type=Path, default=None, metavar="SPEC", help="spec folder (default: DIR itself, if it holds spec.yaml)")
    q.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    for path in init_site(args.dir, args.spec):
        print(f"wrote {path}")
    print(f"next: cd {args.dir} && mkdocs serve   (or mkdocs build --strict)")
    return 0
