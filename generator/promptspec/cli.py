"""The `promptspec` command line.

User mistakes print one line and exit 2; lint findings exit 1; a traceback is
only ever shown with --debug.  Commands are thin: they parse arguments, call
the library, and print.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import NoReturn, Sequence

from . import __version__
from .errors import PromptspecError

def default_spec() -> Path:
    """The embedded example spec (spec/embedded.py: inside the package when
    installed from a wheel, templates/ in a checkout)."""
    from .spec.embedded import embedded_spec

    return embedded_spec()


def _spec_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--spec", type=Path, default=None, metavar="DIR", help="spec folder (default: the embedded example spec)")


def _codex_run_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--timeout", type=float, default=DEFAULT_CODEX_TIMEOUT, metavar="SECONDS", help="the longest one Codex step may take (default 60)")
    p.add_argument("--port", type=int, default=0, metavar="N", help="the loopback recorder's port (default: any free one)")


def _spec_dir(args: argparse.Namespace) -> Path:
    return args.spec if args.spec is not None else default_spec()


def _counter(args: argparse.Namespace, *, verify: bool = False):
    # verify: the gates (diff, check) never take counts from the disk cache.
    from .measure.counter import TokenCounter

    return TokenCounter(getattr(args, "cache_dir", None), verify=verify)


def _progress(label: str):
    """A progress bar on stderr when it is a terminal and not CI (progress.py)."""
    from .util.progress import Progress

    return Progress(label)


def _timings(args: argparse.Namespace, result, label: str | None = None) -> None:
    """With -v: the pipeline's stage timings on stderr."""
    if getattr(args, "verbose", False):
        from .pipeline import format_timings

        print(f"promptspec: {label + ': ' if label else ''}{format_timings(result.timings)}", file=sys.stderr)


# ---------------------------------------------------------------------------
# list


def cmd_list(args: argparse.Namespace) -> int:
    from . import pipeline

    result = pipeline.run(_spec_dir(args), counter=_counter(args))
    _timings(args, result)
    axes = [name for name, _ in result.spec.axes]
    rows = []
    for m in result.measures:
        v = m.request.variant
        rows.append(
            {
                "id": v.id,
                **dict(v.values),
                "tokens": m.total,
                "codex_estimate": m.estimate,
                "encoding": m.encoding,
                "percent_of_usable_window": None if m.percent_of_usable is None else round(m.percent_of_usable, 3),
                "headroom_before_auto_compact": m.headroom,
            }
        )
    if args.format == "json":
        sys.stdout.write(json.dumps({"axes": axes, "variants": rows}, indent=2, ensure_ascii=False) + "\n")
        return 0
    headers = [*axes, "tokens", "% usable"]
    table = [[*(r[a] for a in axes), str(r["tokens"]), "-" if r["percent_of_usable_window"] is None else f"{r['percent_of_usable_window']:.2f}%"] for r in rows]
    widths = [max(len(h), *(len(row[i]) for row in table)) if table else len(h) for i, h in enumerate(headers)]
    out = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip()]
    for row in table:
        out.append("  ".join(c.rjust(w) if i >= len(axes) else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip())
    out.append(f"{len(rows)} variants; tokens = instructions + messages + tools (tools: offline count of their serialised JSON); "
               "% usable = tokens / (context_window x effective_context_window_percent / 100)")
    sys.stdout.write("\n".join(out) + "\n")
    return 0


# ---------------------------------------------------------------------------
# render


def _extra_axes(values: Sequence[str]) -> dict[str, str]:
    from .errors import UsageError

    out = {}
    for item in values or ():
        name, sep, value = item.partition("=")
        if not sep:
            raise UsageError(f"--axis expects NAME=VALUE, got {item!r}")
        out[name] = value
    return out


def cmd_render(args: argparse.Namespace) -> int:
    from .assemble import export
    from .assemble.builder import Assembler
    from .assemble.matrix import find_variant
    from .measure.figures import measure_all
    from .spec.load import load_spec

    spec = load_spec(_spec_dir(args))
    variant = find_variant(spec, args.model, args.personality, args.mode, _extra_axes(args.axis))
    request = Assembler(spec).assemble(variant)
    for note in request.notes:
        print(f"note: {note}", file=sys.stderr)
    if args.format == "json":
        measure = measure_all(spec, [request], _counter(args))[0]
        sys.stdout.write(export.dumps(export.with_tokens(request, measure.summary())))
    elif args.format == "layout":
        sys.stdout.write(export.layout(request))
    else:
        sys.stdout.write(export.text_view(request))
    return 0


# ---------------------------------------------------------------------------
# tokens


def cmd_tokens(args: argparse.Namespace) -> int:
    from .measure.counter import count_files, format_token_lines

    results = count_files(args.files, args.encoding, args.errors, counter=_counter(args))
    sys.stdout.write(format_token_lines(results))
    return 0


# ---------------------------------------------------------------------------
# build (site/build.py: the site's pages as a plain folder)


def cmd_build(args: argparse.Namespace) -> int:
    import time

    from . import pipeline
    from .errors import UsageError
    from .site import select as site_select
    from .site import out_folder
    from .site.base import BaseLoader
    from .site.build import build_site

    option = site_select.parse_cli(args.variant_pages)
    if args.list_limit < 1:
        raise UsageError(f"--list-limit must be at least 1, found {args.list_limit}")
    spec_dir = _spec_dir(args)
    counter = _counter(args)
    with _progress("assembling") as bar:
        result = pipeline.run(spec_dir, counter=counter, progress=bar)
    t = time.perf_counter()
    changes = BaseLoader().load(args.base or "lock", Path(spec_dir), result, counter=counter, root=Path.cwd())
    result.timings["base"] = time.perf_counter() - t
    with _progress("pages") as bar:
        site = build_site(result, prefix=args.path, changes=changes, variant_pages=option, list_limit=args.list_limit, progress=bar)
    t = time.perf_counter()
    docs, how = out_folder.write_out(site, result, args.out, docs=args.docs, in_place=args.in_place)
    result.timings["write"] = time.perf_counter() - t
    print(f"wrote {len(site.pages)} pages ({site.variant_page_count} of {len(result.variants)} variants with a page, "
          f"every one in the explorer){f', {docs} hand-written files' if docs else ''} and {len(site.files)} data files to {args.out}{how}")
    _timings(args, result)
    return 0


# ---------------------------------------------------------------------------
# explore (site/explorer/: the variant explorer as a standalone folder)


def cmd_explore(args: argparse.Namespace) -> int:
    from . import pipeline
    from .site import explorer

    with _progress("assembling") as bar:
        result = pipeline.run(_spec_dir(args), counter=_counter(args), progress=bar)
    out = explorer.write_standalone(result, args.out)
    print(f"wrote the variant explorer ({len(result.variants)} variants) to {out}; open {out / 'index.html'}")
    _timings(args, result)
    return 0


# ---------------------------------------------------------------------------
# import-codex


DEFAULT_CODEX_TIMEOUT = 60.0


def cmd_import_codex(args: argparse.Namespace) -> int:
    from .errors import UsageError

    if (args.codex_dir is None) == (args.cli is None):
        raise UsageError("give a Codex checkout folder or --cli PATH (a released Codex CLI), not both")
    if args.cli is None:
        if args.model or args.port or args.timeout != DEFAULT_CODEX_TIMEOUT:
            raise UsageError("--model, --port and --timeout go with --cli")
        from .importers.codex_source import import_codex

        from .importers.codex_source import CANNOT_KNOW

        written = import_codex(args.codex_dir, args.out, force=args.force)
        print(f"wrote a spec to {written}")
        print(f"note: {CANNOT_KNOW}")
        return 0
    from .importers.codex_cli import import_cli

    written, stats = import_cli(args.cli, args.out, force=args.force, models=tuple(args.model or ()),
                                timeout=args.timeout, port=args.port)
    print(f"wrote a spec of Codex {stats['release']} to {written}: {stats['reproduced']} of {stats['compared']}"
          f" captured first requests reproduced ({stats['seconds']:.1f} s)")
    for part in stats["not_modelled"]:
        print(f"not modelled: {part}")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from .errors import UsageError
    from .util.atomic import write_text
    from .verify import verify
    from .verify.report import as_json, render

    if args.sample is not None and args.sample < 1:
        raise UsageError("--sample must be at least 1")
    report = verify(args.cli, _spec_dir(args), sample=args.sample, timeout=args.timeout, port=args.port)
    if args.out is not None:
        write_text(args.out, as_json(report))
    sys.stdout.write(render(report, args.format))
    return 0 if report.ok else 1


# ---------------------------------------------------------------------------
# lint


def _write_findings(args: argparse.Namespace, findings) -> None:
    from . import __version__
    from .authoring.findings import render_findings
    from .util.annotations import repo_relative

    sys.stdout.write(render_findings(findings, args.format, strict=args.strict, prefix=repo_relative(_spec_dir(args)), version=__version__))


def cmd_lint(args: argparse.Namespace) -> int:
    import time

    from . import pipeline
    from .authoring import lint
    from .errors import SpecError
    from .spec.load import load_spec

    t = time.perf_counter()
    spec = load_spec(_spec_dir(args))
    timings = {"load": time.perf_counter() - t}
    try:
        result = pipeline.run_spec(spec, counter=_counter(args), timings=timings)
    except SpecError:
        # The spec loads but does not assemble: the static rules often say why.
        static = lint.check_spec(spec)
        if static:
            _write_findings(args, static)
        raise
    t = time.perf_counter()
    findings = lint.lint(result)
    result.timings["lint"] = time.perf_counter() - t
    _timings(args, result)
    _write_findings(args, findings)
    errors, _ = lint.counts(findings, strict=args.strict)
    return 1 if errors else 0


# ---------------------------------------------------------------------------
# new


def cmd_new(args: argparse.Namespace) -> int:
    from .authoring import scaffold

    spec_dir = _spec_dir(args)
    if args.kind == "fragment":
        created = scaffold.new_fragment(spec_dir, args.name, args.role, args.slot, args.description)
    elif args.kind == "mode":
        created = scaffold.new_mode(spec_dir, args.name, args.description)
    else:
        created = scaffold.new_personality(spec_dir, args.name, args.description)
    for path in created.files:
        print(f"created {path}")
    for path in created.edited:
        print(f"edited {path}")
    for note in created.notes:
        print(note)
    return 0


# ---------------------------------------------------------------------------
# diff / lock / check (review/: diff.py, report.py, lockfile.py, gitspec.py; docs/review.md)


def _review_spec_dir(args: argparse.Namespace) -> Path:
    """--spec, else templates/ at the top of the git repository around the
    current directory, else the embedded spec."""
    if args.spec is not None:
        return args.spec
    from .review.gitspec import current_repo_spec

    found = current_repo_spec()
    return found if found is not None else default_spec()


def _lock_path(args: argparse.Namespace) -> Path:
    from .review.lockfile import default_path

    return args.lock if args.lock is not None else default_path(_review_spec_dir(args))


def cmd_diff(args: argparse.Namespace) -> int:
    from .review.commands import diff_command

    return diff_command(args, _review_spec_dir(args), _counter(args, verify=True), _progress, lambda result, side: _timings(args, result, side))


def cmd_compare(args: argparse.Namespace) -> int:
    from . import pipeline
    from .review.pair import compare_command

    with _progress("assembling") as bar:
        result = pipeline.run(_review_spec_dir(args), counter=_counter(args), progress=bar)
    _timings(args, result)
    sys.stdout.write(compare_command(result, args.a, args.b, args.format))
    return 0


def cmd_lock(args: argparse.Namespace) -> int:
    from . import pipeline
    from .review import lockfile

    with _progress("assembling") as bar:
        result = pipeline.run(_review_spec_dir(args), counter=_counter(args), progress=bar)
    _timings(args, result)
    path = _lock_path(args)
    written = lockfile.write(path, lockfile.build(result))
    print(f"{'wrote' if written else 'up to date:'} {path} ({len(result.measures)} variants)")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from . import pipeline
    from .errors import UsageError
    from .review import lockfile

    path = _lock_path(args)
    if not path.is_file():
        raise UsageError(f"no lock file at {path}; run `promptspec lock` to create it, then commit it")
    data = lockfile.read(path)
    result = pipeline.run(_review_spec_dir(args), counter=_counter(args, verify=True))
    _timings(args, result)
    from . import __version__
    from .review.commands import finish_check

    return finish_check(data, result, path, _review_spec_dir(args), getattr(args, "format", "text"), __version__)


def cmd_history(args: argparse.Namespace) -> int:
    from .review import history, history_report, series, sides

    with _progress("reading releases") as bar:
        releases = series.load_series(sides.parse_sides(args.sides), spec_dir=_review_spec_dir(args), counter=_counter(args), progress=bar)
    sys.stdout.write(history_report.format_history(history.build_history(releases), args.format))
    return 0


# ---------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    """argparse, with the one-line error format of every other mistake
    (argparse's own prints the whole usage block first)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"promptspec: error: {' '.join(message.split())} (see '{self.prog} --help')\n")


TOKENS_EPILOG = (
    "Token counts: base instructions and sections are exact counts with the model's encoding. "
    "Tools are an offline count, with the same encoding, of the tool list's JSON exactly as serialised "
    "in the request (the API's own accounting of tool definitions is not public). Totals, % of the "
    "usable window, headroom before auto-compaction and the lock file include the tools; Codex's "
    "ceil(bytes/4) estimate is shown beside every count."
)


FINDINGS_FORMATS = "github: workflow annotations on file and line; sarif: SARIF 2.1.0 for code scanning"


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="promptspec",
        description="Assemble every variant of an agent prompt spec, count its tokens, publish it.",
        epilog=TOKENS_EPILOG,
    )
    parser.add_argument("--version", action="version", version=f"promptspec {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    parser.add_argument("--cache-dir", type=Path, default=None, help="token cache folder (default: the user cache folder, e.g. ~/.cache/promptspec)")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="print the pipeline's stage timings to stderr (list, build, explore, lock, check, diff, lint)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    # -v also works after the command (`promptspec build -v`).
    verbose = argparse.ArgumentParser(add_help=False)
    verbose.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    sub.required = True

    p = sub.add_parser("list", help="list every variant of the matrix with its tokens (tools included)", parents=[verbose], epilog=TOKENS_EPILOG)
    _spec_arg(p)
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser(
        "render", help="assemble one variant",
        epilog="--format json writes the whole Responses API body (model, instructions, input, tools and the request "
        "parameters, in the order Codex sends them) plus a 'tokens' key. " + TOKENS_EPILOG,
    )
    _spec_arg(p)
    p.add_argument("--model", help="model slug (default: the first model)")
    p.add_argument("--personality", help="personality (default: default)")
    p.add_argument("--mode", help="collaboration mode (default: the first mode)")
    p.add_argument("--axis", action="append", metavar="NAME=VALUE", help="value of an extra axis (repeatable)")
    p.add_argument("--format", choices=("text", "json", "layout"), default="text")
    p.set_defaults(func=cmd_render)

    p = sub.add_parser("tokens", help="count the tokens of files' exact contents")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--encoding", default="o200k_base", help="o200k_base (default) or cl100k_base")
    p.add_argument("--errors", choices=("strict", "replace"), default="strict", help="how to treat bytes that are not UTF-8")
    p.set_defaults(func=cmd_tokens)

    p = sub.add_parser("build", help="write the site's pages as a plain folder of Markdown + assets (for other site engines)", parents=[verbose])
    _spec_arg(p)
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="output folder (replaced only when the build succeeds; see --in-place)")
    p.add_argument("--path", default="prompts", metavar="FOLDER", help="folder of the pages inside DIR (default: prompts)")
    p.add_argument("--docs", type=Path, default=None, metavar="DOCS",
                   help="hand-written pages to copy into DIR, with their <!-- promptspec:... --> examples expanded")
    p.add_argument("--in-place", action="store_true",
                   help="rewrite only changed files (each atomically) and remove stale ones, so watchers such as zensical serve reload")
    p.add_argument("--base", default=None, metavar="BASE",
                   help="what the Changes page compares with: lock (the spec folder's prompts.lock.json, default), none, a git revision or a spec folder (./DIR or dir:DIR)")
    p.add_argument("--variant-pages", action="append", default=None, metavar="WHICH",
                   help="which variants get a page of their own (the others are in the explorer): auto (default: all up to "
                        "1,000 variants, else none), all, none, or AXIS=VALUE[,VALUE...] (globs allowed; repeat for more axes)")
    p.add_argument("--list-limit", type=int, default=200, metavar="N",
                   help="overview pages list variants one by one up to N, and summarise above (default: 200)")
    p.set_defaults(func=cmd_build)

    p = sub.add_parser("explore", help="write the variant explorer as a standalone folder (open index.html; no MkDocs)", parents=[verbose])
    _spec_arg(p)
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="output folder (replaced only when the build succeeds)")
    p.set_defaults(func=cmd_explore)

    p = sub.add_parser("import-codex", help="turn a Codex checkout, or a released Codex CLI (--cli), into a spec folder")
    p.add_argument("codex_dir", type=Path, metavar="CODEX_DIR", nargs="?", default=None)
    p.add_argument("--cli", metavar="PATH", help="a released Codex CLI: its `npm install --prefix` folder or the binary (run offline in a scratch HOME)")
    p.add_argument("--out", type=Path, required=True, metavar="DIR")
    p.add_argument("--force", action="store_true", help="replace DIR if it already holds an imported spec")
    p.add_argument("--model", action="append", metavar="SLUG", help="with --cli: import only this model (repeatable; default: all)")
    _codex_run_args(p)
    p.set_defaults(func=cmd_import_codex)

    p = sub.add_parser("verify", help="drive a released Codex CLI and compare its first requests with the spec's, byte for byte")
    p.add_argument("--cli", metavar="PATH", required=True, help="the Codex CLI: its `npm install --prefix` folder or the binary")
    _spec_arg(p)
    p.add_argument("--sample", type=int, default=None, metavar="N", help="compare N variants spread over the matrix (default: all)")
    p.add_argument("--out", type=Path, default=None, metavar="FILE", help="store the report as JSON (for the site's Conformance page)")
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    _codex_run_args(p)
    p.set_defaults(func=cmd_verify)
    from .site.starter import add_command  # cheap: the site's build is imported only when it runs
    add_command(sub)

    p = sub.add_parser("lint", help="check the spec against the lint rules (docs/guide/lint-rules.md)", parents=[verbose])
    _spec_arg(p)
    p.add_argument("--format", choices=("text", "json", "github", "sarif"), default="text", help=FINDINGS_FORMATS)
    p.add_argument("--strict", action="store_true", help="treat warnings as errors (exit 1)")
    p.set_defaults(func=cmd_lint)

    p = sub.add_parser("new", help="start a fragment, mode or personality from a lint-clean skeleton")
    new_sub = p.add_subparsers(dest="kind", metavar="KIND")
    new_sub.required = True
    q = new_sub.add_parser("fragment", help="write fragments/NAME.yaml and fragments/NAME.md")
    q.add_argument("name", metavar="NAME")
    q.add_argument("--role", choices=("developer", "user"), required=True)
    q.add_argument("--slot", help="layout slot (default: developer_extensions or user_extensions)")
    q.add_argument("--description", help="the fragment's description")
    _spec_arg(q)
    q.set_defaults(func=cmd_new)
    for kind, folder in (("mode", "modes"), ("personality", "personalities")):
        q = new_sub.add_parser(kind, help=f"write {folder}/NAME.md and add NAME to spec.yaml's {folder}:")
        q.add_argument("name", metavar="NAME")
        q.add_argument("--description", help=f"the {kind}'s description")
        _spec_arg(q)
        q.set_defaults(func=cmd_new)

    review_spec_help = "spec folder (default: templates/ of the current git repository, else the embedded spec); for revisions, its path in the repository"
    p = sub.add_parser("diff", help="what a spec change does to every variant (git revisions or spec folders)", parents=[verbose])
    p.add_argument("base", metavar="BASE", help="git revision (origin/main, or rev:NAME) or spec folder written as a path (./DIR, DIR/, or dir:DIR)")
    p.add_argument("head", metavar="HEAD", nargs="?", default=None, help="git revision or spec folder, as for BASE (default: the working tree)")
    p.add_argument("--spec", type=Path, default=None, metavar="DIR", help=review_spec_help)
    p.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    p.add_argument("--budget", type=int, default=None, metavar="N", help="flag variants whose total goes over N tokens")
    p.add_argument("--max-chars", type=int, default=60000, metavar="N", help="markdown size cap (default 60000; GitHub comments hold 65536)")
    p.add_argument("--fail-on-increase", default=None, metavar="N[%]", help="exit 1 if any variant's total grows by more than N tokens (or N%%)")
    p.add_argument("--fail-on-budget", action="store_true",
                   help="exit 1 when a variant newly goes over --budget or past its auto-compaction limit (spec.yaml budgets: always gate)")
    p.set_defaults(func=cmd_diff)

    p = sub.add_parser("compare", help="what one variant sends that another does not, section by section", parents=[verbose])
    p.add_argument("a", metavar="A", help="a variant id, e.g. harbor-5/pragmatic/default/workspace-write")
    p.add_argument("b", metavar="B", help="another variant id, or AXIS=VALUE[,AXIS=VALUE] to change A's values (e.g. personality=friendly)")
    p.add_argument("--spec", type=Path, default=None, metavar="DIR", help=review_spec_help)
    p.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    p.set_defaults(func=cmd_compare)
    p = sub.add_parser("history", help="what each release did to every assembled request (a series of revisions, folders or locks)", parents=[verbose])
    p.add_argument("sides", nargs="+", metavar="SIDE",
                   help="in release order: a git revision or tag, dir:PATH (a spec folder) or lock:PATH (a lock file), "
                        "each optionally followed by ,label=NAME and ,date=YYYY-MM-DD (docs/history.md)")
    p.add_argument("--spec", type=Path, default=None, metavar="DIR", help=review_spec_help)
    p.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    p.set_defaults(func=cmd_history)

    for name, help_text in (("lock", "write prompts.lock.json: a hash and token counts of every variant"), ("check", "exit 1 if the spec no longer matches prompts.lock.json")):
        p = sub.add_parser(name, help=help_text, parents=[verbose])
        p.add_argument("--spec", type=Path, default=None, metavar="DIR", help=review_spec_help)
        p.add_argument("--lock", type=Path, default=None, metavar="PATH", help="lock file (default: prompts.lock.json in the spec folder)")
        if name == "check":
            p.add_argument("--format", choices=("text", "json", "github", "sarif"), default="text", help=FINDINGS_FORMATS)
        p.set_defaults(func=cmd_lock if name == "lock" else cmd_check)

    from .authoring.editor import add_commands

    add_commands(sub, build_parser)  # schema, completion

    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from .util.terminal import escaped_output

    args = build_parser().parse_args(argv)
    with escaped_output(args.command != "render"):  # render's output is the payload, byte for byte
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from .errors import escape_controls
    from .util.terminal import input_error

    try:
        if args.command not in ("schema", "completion"):
            from .util.project_config import apply_defaults

            apply_defaults(args)  # [tool.promptspec] in the nearest pyproject.toml
        return args.func(args)
    except PromptspecError as exc:
        if args.debug:
            raise
        print(f"promptspec: error: {exc.oneline()}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt as exc:
        print("promptspec: interrupted", file=sys.stderr)
        return getattr(exc, "exit_code", 130)  # atomic.Interrupted: 143 for SIGTERM
    except BrokenPipeError:
        return 0
    except Exception as exc:  # noqa: BLE001 - last resort: never a raw traceback for users
        from .measure.encodings import TokenizerError

        if isinstance(exc, TokenizerError):
            if args.debug:
                raise
            print(f"promptspec: error: {escape_controls(str(exc))}", file=sys.stderr)
            return 2
        if args.debug:
            raise
        crash = input_error(exc)  # too big, too deep, unencodable, or the system saying no: exit 2
        if crash is not None:
            print(f"promptspec: error: {crash}", file=sys.stderr)
            return 2
        print(f"promptspec: internal error: {type(exc).__name__}: {escape_controls(str(exc))} (rerun with --debug and report it)", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
