"""`promptspec site init DIR [--spec SPEC]`: a minimal MkDocs site for one's own spec;
`promptspec init DIR`: a team's start, its own copy of the example spec with that site.

The repository's mkdocs.yml is the site of the embedded example, with guide
pages written for it.  A team with its own spec (or an imported Codex
release) wants the generated pages and nothing else to start from: an
mkdocs.yml with the theme settings that keep the site offline (system
fonts, promptspec's own diagrams), dark mode, the plugin pointed at the spec,
and a nav listing the overview pages in reading order; and a docs folder
with a home page that shows the spec's layout live.

Nothing is overwritten: a file that already exists stops the command before
anything is written, and the files are written only after the spec loaded.

`init` puts the spec where every command looks for a repository's spec
(`templates/` at its top), so the guides' commands work in the team's own
repository as they do in promptspec's checkout; the whole folder is made
aside and moved into place, so a failure leaves nothing behind.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import yaml

from ...errors import UsageError
from ...util import atomic

PALETTE = [
    {"media": "(prefers-color-scheme: light)", "scheme": "default",
     "toggle": {"icon": "material/weather-night", "name": "Switch to dark mode"}},
    {"media": "(prefers-color-scheme: dark)", "scheme": "slate",
     "toggle": {"icon": "material/weather-sunny", "name": "Switch to light mode"}},
]

MARKDOWN_EXTENSIONS = ["attr_list", "md_in_html", "tables", "admonition", {"toc": {"permalink": True}}, "pymdownx.details"]


def config(spec_ref: str, site_name: str, extra_axes: list[str], *, prefix: str = "prompts") -> dict:
    """The mkdocs.yml of a new site, as data (written with yaml.safe_dump)."""
    from ..build import overview_pages

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
    "# Material for MkDocs prints a notice about MkDocs 2 on every build; NO_MKDOCS_2_WARNING=1 hides it.\n"
    "# The promptspec plugin generates every page under {prefix}/ from the spec at build time;\n"
    "# docs/ holds only hand-written pages. Plugin options: see the promptspec README.\n"
)


def home_page(site_name: str, prefix: str = "prompts") -> str:
    from ..html.markup import md_inline

    return (
        f"# {md_inline(site_name)}\n\n"
        "Every variant of this prompt spec, assembled exactly as sent, with token counts.\n\n"
        f"- [Matrix]({prefix}/index.md): every variant's total tokens\n"
        f"- [Explorer]({prefix}/explorer/index.md): any variant, its text, and a search over all prompt text\n"
        f"- [Fragments]({prefix}/fragments/index.md): the parts a request is made of\n\n"
        "## How a request is assembled\n\n"
        "<!-- promptspec:assembly -->\n"
    )


def init_site(out: Path, spec: Path | None = None, *, conformance: Path | None = None,
              history: Sequence[str] = ()) -> list[Path]:
    """Write DIR/mkdocs.yml and DIR/docs/index.md for the spec at `spec`
    (default: DIR itself when it holds a spec.yaml).  The spec (and a
    `conformance` report) is loaded first, so a broken one fails here with its
    own one-line error; `conformance` and `history` (sides as on the command
    line, relative to the current folder) become plugin options and nav entries."""
    from ...review.sides import parse_side
    from ...spec import load_spec
    from ..pages.conformance import load as load_conformance

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
    if conformance is not None:
        load_conformance(conformance)
    sides = [parse_side(text) for text in history]
    targets = [out / "mkdocs.yml", out / "docs" / "index.md"]
    for path in targets:
        if path.exists():
            raise UsageError(f"{path} already exists; choose an empty DIR or remove it")
    extra = [axis for axis, _ in loaded.axes[3:]]
    cfg = config(_from(out, spec), loaded.name, extra)
    options = cfg["plugins"][1]["promptspec"]
    pages = cfg["nav"][1]["Prompts"]
    if conformance is not None:
        options["conformance"] = _from(out, conformance)
        pages.append({"Conformance": "prompts/conformance.md"})
    if sides:
        options["history"] = [_side_entry(side, out) for side in sides]
        pages.append({"History": "prompts/history/index.md"})
    text = HEADER.format(prefix="prompts") + yaml.safe_dump(cfg, sort_keys=False, allow_unicode=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / "docs").mkdir(exist_ok=True)
    atomic.write_text(targets[0], text)
    atomic.write_text(targets[1], home_page(loaded.name))
    return targets


def _from(out: Path, path: Path) -> str:
    """`path` as mkdocs.yml in `out` names it (relative to that folder)."""
    return Path(os.path.relpath(os.path.abspath(path), os.path.abspath(out))).as_posix()  # links kept as written


def _side_entry(side, out: Path) -> dict | str:
    """A history side for the plugin: a folder or lock file given relative to
    the current folder is named relative to mkdocs.yml, as the plugin reads it."""
    ref = side.ref
    if side.kind in ("dir", "lock") and not Path(os.path.expanduser(ref)).is_absolute():
        ref = _from(out, Path(ref))
    entry: dict = {"side": f"{side.kind}:{ref}" if side.kind != "rev" or side.explicit else ref}
    if side.label:
        entry["label"] = side.label
    if side.date:
        entry["date"] = side.date
    return entry if len(entry) > 1 else entry["side"]


def init_team(out: Path) -> list[Path]:
    """`promptspec init DIR`: DIR/templates/ (a copy of the example spec, to
    edit), DIR/mkdocs.yml and DIR/docs/index.md for it, and a .gitignore for
    the built site.  DIR must be new or empty; everything is made in a folder
    beside it and moved into place, so a failure leaves nothing behind."""
    import shutil
    import tempfile

    from ...spec.embedded import embedded_spec

    out = Path(out).absolute()
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(f"{out} is not empty; give a new or empty folder")
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{out.name}.init-", dir=out.parent))
    try:
        mask = os.umask(0)
        os.umask(mask)
        work.chmod(0o777 & ~mask)  # a folder like any other, not mkdtemp's private one
        shutil.copytree(embedded_spec(), work / "templates", ignore=shutil.ignore_patterns("__pycache__", ".*"))
        init_site(work, work / "templates")
        atomic.write_text(work / ".gitignore", "# the site `mkdocs build` writes\n/site/\n")
        if out.exists():
            out.rmdir()  # empty: checked above
        work.rename(out)
    finally:
        if work.exists():
            shutil.rmtree(work)
    return [out / "templates", out / "mkdocs.yml", out / "docs" / "index.md", out / ".gitignore"]


def preview_command(out: Path) -> str:
    """The command to preview a site in `out`, without a `cd .`."""
    here = Path(out).resolve() == Path.cwd().resolve()
    return "mkdocs serve" if here else f"cd {out} && mkdocs serve"


def team_next_steps(out: Path) -> str:
    """The commands that start working in a team's new folder `out`: `git
    init` unless it is in a repository already, then `mkdocs serve`."""
    repo = any((p / ".git").exists() for p in (out, *out.parents))
    steps = [] if repo else ["git init"]
    steps.append("mkdocs serve")
    lead = [] if out == Path.cwd().resolve() else [f"cd {out}"]
    return " && ".join(lead + steps)
