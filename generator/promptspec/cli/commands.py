"""What each `promptspec` subcommand does: read its arguments, call the library,
print the result.  Shared helpers (the spec folder, the token counter, progress
bars, timings) come first."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from .. import __version__

if TYPE_CHECKING:
    from ..review.gate import Outcome
    from ..util.project_config import Applied


def default_spec() -> Path:
    """The embedded example spec (spec/embedded.py: inside the package when
    installed from a wheel, templates/ in a checkout)."""
    from ..spec.embedded import embedded_spec

    return embedded_spec()


GATES = frozenset({"check", "diff", "lint", "history", "verify"})
"""Commands a workflow uses to decide about a pull request: they take no
defaults from the pyproject.toml the pull request brings, unless told with
--project-config (SECURITY.md, R1)."""


def fill_defaults(args: argparse.Namespace, *, trusted: bool = True, work_tree: Path | None = None) -> "Applied":
    """[tool.promptspec] values for the options `args` left unset (None),
    set on `args`; what util.project_config.apply_defaults found."""
    from ..util.project_config import KEYS, apply_defaults

    unset = [key for key in KEYS if getattr(args, key, 0) is None]
    applied = apply_defaults(unset, command=getattr(args, "command", None), trusted=trusted, work_tree=work_tree)
    for key, value in applied.values.items():
        setattr(args, key, value)
    return applied


def settle_defaults(args: argparse.Namespace) -> None:
    """[tool.promptspec] defaults for this command, by the gate rule; the
    spec it names is kept for the spec rule (spec_choice)."""
    from ..errors import UsageError
    from ..spec.locate import repository_top
    trusted = args.command not in GATES or getattr(args, "project_config", False)
    applied = fill_defaults(args, trusted=trusted, work_tree=repository_top())
    args.configured_spec = (applied.spec, applied.config.path)
    if not applied.ignored:
        return
    where = applied.config.path
    if "spec" in applied.ignored:
        raise UsageError(
            f"{where} names spec = {str(applied.config.get('spec'))!r} in [tool.promptspec], which `promptspec {args.command}` "
            "does not take from a file the pull request controls; pass --spec DIR (or --project-config to trust the file)"
        )
    print(f"promptspec: note: {args.command} ignores [tool.promptspec] {', '.join(applied.ignored)} in {where} "
          "(gates take options only from the command line; --project-config trusts the file)", file=sys.stderr)


def spec_choice(args: argparse.Namespace):
    """The command's spec by the one rule (spec/locate.py), said once with -v."""
    choice = getattr(args, "spec_choice", None)
    if choice is None:
        from ..spec.locate import locate

        configured, where = getattr(args, "configured_spec", (None, None))
        choice = args.spec_choice = locate(getattr(args, "spec", None), configured=configured, configured_in=where)
        if getattr(args, "verbose", False):
            print(f"promptspec: spec: {choice.describe()}", file=sys.stderr)
    return choice


def _say_pool(args: argparse.Namespace, stats) -> None:
    """-v: how many captures the cache gave and how many Codex worlds ran (oracle/pool/)."""
    if stats is not None and getattr(args, "verbose", False):
        why = f"; not cached: {stats.not_cached}" if stats.not_cached else ""
        quiet = "".join(f"; {kind}: {how}" for kind, how in sorted(stats.quiet.items()))
        print(f"promptspec: captures: {stats.from_cache} from the cache, {stats.captured} by Codex in {stats.worlds} scratch"
              f" world(s){why}{quiet}", file=sys.stderr)


def _check_jobs(args: argparse.Namespace) -> None:
    from ..errors import UsageError

    if args.jobs < 0:
        raise UsageError("--jobs must be 0 (one per core) or more")


def _world(args: argparse.Namespace):
    """The world the flags give (None: none given); a credential file of the home is named and skipped."""
    from ..oracle.world import make_world

    world = make_world(args.cwd, args.codex_home, args.config or (), args.enable or (), args.disable or ())
    for name in world.skipped:
        print(f"note: {world.codex_home}/{name}: holds credentials; skipped, not copied", file=sys.stderr)
    return None if world.empty else world


def _spec_dir(args: argparse.Namespace) -> Path:
    return spec_choice(args).path


def _counter(args: argparse.Namespace, *, verify: bool = False):
    # verify: the gates (diff, check) never take counts from the disk cache.
    from ..measure.counter import TokenCounter

    return TokenCounter(getattr(args, "cache_dir", None), verify=verify)


def _progress(label: str):
    """A progress bar on stderr when it is a terminal and not CI (progress.py)."""
    from ..util.progress import Progress

    return Progress(label)


def _timings(args: argparse.Namespace, result, label: str | None = None) -> None:
    """With -v: the pipeline's stage timings on stderr."""
    if getattr(args, "verbose", False):
        from ..pipeline import format_timings

        print(f"promptspec: {label + ': ' if label else ''}{format_timings(result.timings)}", file=sys.stderr)


# ---------------------------------------------------------------------------
# list


def cmd_list(args: argparse.Namespace) -> int:
    from .. import pipeline

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
    from ..errors import UsageError

    out = {}
    for item in values or ():
        name, sep, value = item.partition("=")
        if not sep:
            raise UsageError(f"--axis expects NAME=VALUE, got {item!r}")
        out[name] = value
    return out


def cmd_render(args: argparse.Namespace) -> int:
    from .. import pipeline
    from ..assemble import export

    axes = (args.model, args.personality, args.mode, _extra_axes(args.axis))
    if getattr(args, "conversation", None) is not None:
        picked = pipeline.run_one(_spec_dir(args), *axes, upto="load")
        return _render_conversation(args, picked.spec, picked.variants[0])
    upto = "measure" if args.format == "json" else "assemble"  # only JSON shows the counts
    result = pipeline.run_one(_spec_dir(args), *axes, counter=_counter(args) if upto == "measure" else None, upto=upto)
    request = result.requests[0]
    for note in request.notes:
        print(f"note: {note}", file=sys.stderr)
    if args.format == "json":
        sys.stdout.write(export.dumps(export.with_tokens(request, result.measures[0].summary())))
    elif args.format == "layout":
        sys.stdout.write(export.layout(request))
    else:
        sys.stdout.write(export.text_view(request))
    return 0


def _render_conversation(args: argparse.Namespace, spec, variant) -> int:
    """`render --conversation FILE`: every request of the thread, each body as
    `render --format json` gives a first request (plus its tokens)."""
    from ..assemble import export
    from ..assemble.conversation import conversation
    from ..measure.conversation import transcript
    from ..errors import UsageError
    from ..measure.figures import measure_all
    from ..spec.readers.scripts import read_script

    if args.format == "layout":
        raise UsageError("--conversation prints json or text, not layout (use --format json or --format text)")
    script = read_script(args.conversation)
    thread = conversation(spec, variant, script)
    measures = measure_all(spec, [r.request for r in thread], _counter(args))
    if args.format == "json":
        sys.stdout.write(export.dumps({"requests": [export.with_tokens(r.request, m.summary()) for r, m in zip(thread, measures)]}))
    else:
        sys.stdout.write(transcript(thread, measures))
    return 0


# ---------------------------------------------------------------------------
# tokens


def cmd_tokens(args: argparse.Namespace) -> int:
    from ..measure.counter import count_files, format_token_lines

    results = count_files(args.files, args.encoding, args.errors, counter=_counter(args))
    sys.stdout.write(format_token_lines(results))
    return 0


# ---------------------------------------------------------------------------
# build (site/build.py: the site's pages as a plain folder)


def cmd_build(args: argparse.Namespace) -> int:
    import time

    from .. import pipeline
    from ..errors import UsageError
    from ..site.output import out_folder
    from ..site import select as site_select
    from ..site.base import BaseLoader
    from ..assemble.conversation import forget_threads
    from ..site.build import build_site

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
    history = None
    if args.history:  # the plugin's `history` option, for sites built without MkDocs
        from ..review.history import compare as review_history
        from ..review import sides
        from ..review.history import series

        t = time.perf_counter()
        with _progress("reading releases") as bar:
            releases = series.load_series(sides.parse_sides(args.history), spec_dir=Path(spec_dir), counter=counter, progress=bar)
        history = review_history.build_history(releases)
        result.timings["history"] = time.perf_counter() - t
    conformance = None
    if args.conformance is not None:
        from ..site.pages import conformance as site_conformance

        conformance = site_conformance.load(args.conformance)
    site = build_site(result, prefix=args.path, changes=changes, variant_pages=option, list_limit=args.list_limit,
                      history=history, history_chart=tuple(args.history_chart or ()), conformance=conformance)
    forget_threads()  # made into pages: not held while the site is written (as the plugin's one-off build)
    t = time.perf_counter()
    with _progress("pages") as bar:  # the variant pages are made as they are written
        docs, how = out_folder.write_out(site, result, args.out, docs=args.docs, in_place=args.in_place, progress=bar)
    result.timings["write"] = time.perf_counter() - t
    print(f"wrote {len(site.pages)} pages ({site.variant_page_count} of {len(result.variants)} variants with a page, "
          f"every one in the explorer){f', {docs} hand-written files' if docs else ''} and {len(site.files)} data files to {args.out}{how}")
    _timings(args, result)
    return 0


# ---------------------------------------------------------------------------
# explore (site/explorer/: the variant explorer as a standalone folder)


def cmd_explore(args: argparse.Namespace) -> int:
    from .. import pipeline
    from ..site import explorer

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
    from ..errors import UsageError

    if (args.codex_dir is None) == (args.cli is None):
        raise UsageError("give a Codex checkout folder or --cli PATH (a released Codex CLI), not both")
    if args.cli is None:
        if (args.model or args.only or args.port or args.timeout != DEFAULT_CODEX_TIMEOUT or args.cwd or args.codex_home or args.config
                or args.enable or args.disable or getattr(args, "later_turns", False) or args.jobs or not args.cache):
            raise UsageError("--model, --only, --port, --timeout, --jobs, --no-cache, --cwd, --codex-home, -c, --enable, --disable and"
                             " --later-turns go with --cli")
        from ..importers.codex_source import CANNOT_KNOW, import_codex

        written = import_codex(args.codex_dir, args.out, force=args.force)
        print(f"wrote a spec to {written}")
        print(f"note: {CANNOT_KNOW}")
        return 0
    from ..importers.codex_cli import import_cli

    _check_jobs(args)
    written, stats = import_cli(args.cli, args.out, force=args.force, models=tuple(args.model or ()),
                                timeout=args.timeout, port=args.port, world=_world(args),
                                later_turns=getattr(args, "later_turns", False), jobs=args.jobs, cache=args.cache,
                                only=_only(args.only or ()))
    print(f"wrote a spec of Codex {stats['release']} to {written}: {stats['reproduced']} of {stats['compared']}"
          f" captured first requests reproduced ({stats['seconds']:.1f} s)")
    if "threads" in stats:
        print(f"later turns: {stats['threads']} standard threads ({stats['thread_requests']} requests) reproduced")
    for part in stats["not_modelled"]:
        print(f"not modelled: {part}")
    _say_pool(args, stats.get("pool"))
    if stats.get("spec_from_cache") and getattr(args, "verbose", False):
        print("promptspec: the spec from the cache: an earlier import wrote and checked it from the same answers",
              file=sys.stderr)
    return 0


def _only(items: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """`--only AXIS=VALUE[,VALUE...]` (repeated) as {axis: values}; the axes and
    values themselves are checked by the harvest (oracle/capture.check_only)."""
    from ..errors import UsageError
    from ..site.select import axis_items

    out: dict[str, tuple[str, ...]] = {}
    for axis, values in axis_items(items, "--only").items():
        if not values:
            raise UsageError(f"--only: {axis} has no value; expected AXIS=VALUE[,VALUE...], e.g. --only sandbox_mode=workspace-write")
        out[axis] = tuple(v.strip() for v in values)
    return out


def cmd_verify(args: argparse.Namespace) -> int:
    from ..errors import UsageError
    from ..util.atomic import write_text
    from ..verify import verify
    from ..verify.report import as_json, render

    if args.sample is not None and args.sample < 1:
        raise UsageError("--sample must be at least 1")
    if args.threads < 0:
        raise UsageError("--threads must be 0 or more")
    from ..verify.run import RECORDED

    _check_jobs(args)
    world = _world(args)
    report = verify(args.cli, _spec_dir(args), sample=args.sample, timeout=args.timeout, port=args.port, threads=args.threads,
                    world=RECORDED if world is None else world, jobs=args.jobs, cache=args.cache)
    if args.out is not None:
        write_text(args.out, as_json(report))
    sys.stdout.write(render(report, args.format))
    _say_pool(args, report.pool)
    return 0 if report.ok else 1


# ---------------------------------------------------------------------------
# lint


def _write_findings(args: argparse.Namespace, findings) -> None:
    from ..authoring.findings import render_findings
    from ..util.annotations import repo_relative

    sys.stdout.write(render_findings(findings, args.format, strict=args.strict, prefix=repo_relative(_spec_dir(args)), version=__version__))


def cmd_site_init(args: argparse.Namespace) -> int:
    from ..site.output.starter import init_site, preview_command

    for path in init_site(args.dir, args.spec, conformance=args.conformance, history=args.history):
        print(f"wrote {path.absolute()}")
    print(f"next: {preview_command(args.dir)}   (or mkdocs build --strict)")
    return 0


def cmd_init(args: argparse.Namespace) -> int:
    from ..site.output.starter import init_team, team_next_steps

    spec, *files = init_team(args.dir)
    print(f"created {spec}/ (your spec: a copy of the example, to edit)")
    for path in files:
        print(f"created {path}")
    print(f"next: {team_next_steps(spec.parent)}   (commands in this repository use templates/; see the guide 'Add a fragment')")
    return 0


def cmd_lint(args: argparse.Namespace) -> int:
    import time

    from .. import pipeline
    from ..authoring import lint
    from ..errors import SpecError
    from ..spec.readers.load import load_spec

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
    from ..authoring import scaffold

    choice = spec_choice(args)
    choice.check_writable(f"promptspec new {args.kind}")
    spec_dir = choice.path
    lint = f"{scaffold.LINT} --spec {spec_dir}" if choice.reason == "--spec" else scaffold.LINT
    if args.kind == "fragment":
        created = scaffold.new_fragment(spec_dir, args.name, args.role, args.slot, args.description, lint)
    elif args.kind == "mode":
        created = scaffold.new_mode(spec_dir, args.name, args.description, lint)
    else:
        created = scaffold.new_personality(spec_dir, args.name, args.description, lint)
    for path in created.files:
        print(f"created {_full(spec_dir, path)}")
    for path in created.edited:
        print(f"edited {_full(spec_dir, path)}")
    for note in created.notes:
        print(note)
    return 0


# ---------------------------------------------------------------------------
# diff / lock / check (review/: diff.py, report.py, lockfile.py, gitspec.py; docs/review.md)


def _lock_path(args: argparse.Namespace) -> Path:
    from ..review.lockfile import default_path

    return args.lock if args.lock is not None else default_path(_spec_dir(args))


def cmd_diff(args: argparse.Namespace) -> int:
    from ..review.gate import DiffOptions, run_diff

    spec_dir = _spec_dir(args)
    options = DiffOptions(args.base, args.head, format=args.format, max_chars=args.max_chars, budget=args.budget,
                          fail_on_budget=args.fail_on_budget, fail_on_increase=args.fail_on_increase)
    return _emit(run_diff(options, spec_dir, _counter(args, verify=True), _progress, lambda result, side: _timings(args, result, side)))


def _emit(outcome: "Outcome") -> int:
    """Print a library Outcome (review/gate.py): the report, then the gates' messages; its exit status."""
    sys.stdout.write(outcome.report)
    sys.stderr.write(outcome.messages)
    return outcome.status


def cmd_compare(args: argparse.Namespace) -> int:
    from .. import pipeline
    from ..review.pair import compare_command

    with _progress("assembling") as bar:
        result = pipeline.run(_spec_dir(args), counter=_counter(args), progress=bar)
    _timings(args, result)
    sys.stdout.write(compare_command(result, args.a, args.b, args.format))
    return 0


def _full(spec_dir: Path, path: str | Path) -> Path:
    """A path `new` wrote, in full: "created fragments/x.yaml" did not say which spec got it."""
    p = Path(path)
    return p if p.is_absolute() else (spec_dir / p).resolve()


def cmd_lock(args: argparse.Namespace) -> int:
    from .. import pipeline
    from ..review import lockfile

    if args.lock is None:
        spec_choice(args).check_writable("promptspec lock")
    with _progress("assembling") as bar:
        result = pipeline.run(_spec_dir(args), counter=_counter(args), progress=bar)
    _timings(args, result)
    path = _lock_path(args)
    data = lockfile.build(result)
    if result.spec.conversations:
        from ..measure.conversation import runs
        from ..review import conversation_lock

        threads = runs(result.spec, result.variants, _counter(args))
        data[conversation_lock.KEY] = conversation_lock.entries(threads)
        data[conversation_lock.SOURCES_KEY] = conversation_lock.sources(threads)
    written = lockfile.write(path, data)
    print(f"{'wrote' if written else 'up to date:'} {path} ({len(result.measures)} variants)")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from .. import pipeline
    from ..errors import UsageError
    from ..review import lockfile

    path = _lock_path(args)
    if not path.is_file():
        raise UsageError(f"no lock file at {path}; run `promptspec lock` to create it, then commit it")
    data = lockfile.read(path)
    result = pipeline.run(_spec_dir(args), counter=_counter(args, verify=True))
    _timings(args, result)
    from ..review.gate import finish_check

    return _emit(finish_check(data, result, path, _spec_dir(args), getattr(args, "format", "text"), __version__))


def cmd_history(args: argparse.Namespace) -> int:
    from ..errors import UsageError
    from ..review import sides
    from ..review.history import compare as history
    from ..review.history import report as history_report
    from ..review.history import series
    from ..review.report import COMMENT_CHARS, MIN_MARKDOWN_CHARS
    from ..util.atomic import write_text

    # A comment on standard output is cut to fit GitHub; a file is whole unless a cap is asked for.
    max_chars = args.max_chars if args.max_chars is not None else (None if args.out is not None else COMMENT_CHARS)
    if args.format == "markdown" and max_chars is not None and max_chars < MIN_MARKDOWN_CHARS:
        raise UsageError(f"--max-chars must be at least {MIN_MARKDOWN_CHARS}")
    parsed = sides.parse_sides(args.sides)
    codex_spec = None
    if any(s.kind == "codex" for s in parsed):
        from ..importers.codex_cli.releases import codex_side
        from ..measure.counter import default_cache_dir

        def codex_spec(ref: str):
            return codex_side(ref, default_cache_dir())

    with _progress("reading releases") as bar:
        releases = series.load_series(parsed, spec_dir=_spec_dir(args), counter=_counter(args), progress=bar, codex_spec=codex_spec)
    command = " ".join(["promptspec history", *args.sides])
    text = history_report.format_history(history.build_history(releases), args.format, max_chars=max_chars, command=command)
    if args.out is not None:
        write_text(args.out, text)
        print(f"wrote {Path(args.out).absolute()}")
    else:
        sys.stdout.write(text)
    return 0


# ---------------------------------------------------------------------------


