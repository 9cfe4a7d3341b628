"""What `promptspec diff` and `promptspec check` print and how they exit,
once the sides are loaded: kept here so the CLI stays a thin parser.

Gates are applied in one place: the spec's budgets always, `--fail-on-budget`
for --budget/headroom crossings, `--fail-on-increase` for growth.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..util.annotations import repo_relative
from .budgets import diff_breaches, format_breaches, increases_over, result_breaches


def diff_command(args: Any, spec_dir: Path, counter: Any, progress: Any, timings: Any) -> int:
    """`promptspec diff`: check the options, load both sides (git revision or folder), compare, report, gate."""
    import tempfile

    from .. import pipeline
    from ..errors import UsageError
    from .budgets import parse_increase
    from .diff import compare, file_changes
    from .gitspec import digest_tree, load_side, open_side
    from .report import MIN_MARKDOWN_CHARS

    gate = None
    if args.fail_on_increase is not None:
        try:
            gate = parse_increase(args.fail_on_increase)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    if args.format == "markdown" and args.max_chars < MIN_MARKDOWN_CHARS:
        raise UsageError(f"--max-chars must be at least {MIN_MARKDOWN_CHARS}")
    if args.budget is not None and args.budget < 0:
        raise UsageError("--budget must not be negative")
    with tempfile.TemporaryDirectory(prefix="promptspec-diff-") as tmp:
        sides = []
        for side, ref in (("base", args.base), ("head", args.head)):
            try:
                source = open_side(ref, spec_dir=spec_dir, workdir=Path(tmp) / side)
            except UsageError as exc:
                raise UsageError(f"{side}: {exc}") from None
            with progress(f"assembling {side}") as bar:
                result = load_side(side, source, lambda path: pipeline.run(path, counter=counter, progress=bar))
            timings(result, side)
            sides.append((source, result, digest_tree(source.path)))
        (bsrc, bres, bfiles), (hsrc, hres, hfiles) = sides
        diff = compare(bres, hres, base_label=bsrc.title, head_label=hsrc.title, budget=args.budget, files=file_changes(bfiles, hfiles))
        diff = replace(diff, conversations=conversation_changes(bres, hres, counter))
    return finish_diff(diff, hres, args, gate)


def conversation_changes(base_result: Any, head_result: Any, counter: Any) -> tuple[Any, ...]:
    """Each side's conversations, run and compared (review/conversations.py)."""
    if not (base_result.spec.conversations or head_result.spec.conversations):
        return ()
    from ..errors import SpecError
    from ..measure.conversation import runs
    from .conversations import compare_conversations

    try:
        base = runs(base_result.spec, base_result.variants, counter)
    except SpecError:  # the base's scripts do not run: the head's still must (below)
        base = []
    return compare_conversations(base, runs(head_result.spec, head_result.variants, counter))


def finish_diff(diff: Any, head_result: Any, args: Any, gate: tuple[float, bool] | None) -> int:
    """Print the report in `args.format`, then the gates on stderr; the exit status."""
    from .report import format_diff

    diff = replace(diff, breaches=tuple(diff_breaches(diff, head_result)))
    command = " ".join(["promptspec diff", args.base, *([args.head] if args.head else [])])
    sys.stdout.write(format_diff(diff, args.format, max_chars=args.max_chars, command=command))
    status = 0
    if diff.breaches:
        sys.stderr.write(format_breaches(list(diff.breaches), diff.describe))
        status = 1
    if getattr(args, "fail_on_budget", False):
        crossings = [(v, "its auto-compaction limit (headroom, by Codex's ⌈bytes/4⌉ estimate)") for v, _, _ in diff.headroom_crossings()]
        crossings += [(v, f"--budget {diff.budget} tokens") for v, _, _ in diff.budget_crossings()]
        for vid, what in crossings[:20]:
            print(f"promptspec: {vid} now goes over {what}", file=sys.stderr)
        if crossings:
            status = 1
    if gate is not None:
        over = increases_over(diff, *gate)
        if over:
            top = over[0]
            print(
                f"promptspec: {len(over)} variant(s) grew by more than {args.fail_on_increase} "
                f"(largest: {top.id} {top.total_before} -> {top.total_after}, +{top.delta})",
                file=sys.stderr,
            )
            return 1
    return status


def finish_check(lock_data: Any, result: Any, lock_path: Path, spec_dir: Path, fmt: str, version: str) -> int:
    """Compare with the lock and the budgets, print in `fmt`; 0 when both hold, else 1."""
    from . import lockfile
    from .check_output import check_output
    from .diff import compare_to_lock

    diff = compare_to_lock(lock_data, result)
    breaches = result_breaches(result)
    threads: list[str] = []
    thread_sources: Any = None
    if result.spec.conversations or lock_data.get("conversations"):
        from ..measure.conversation import runs
        from ..measure.counter import TokenCounter
        from .conversation_lock import changed_sources, changes

        ran = runs(result.spec, result.variants, TokenCounter(verify=True))
        threads = changes(lock_data, ran)
        thread_sources = changed_sources(lock_data, ran) if threads else None
    if fmt == "json":
        data = dict(diff.to_data(), budget_breaches=[b.to_data() for b in breaches], conversations=threads)  # a LockDiff
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True) + "\n")
    elif fmt in ("github", "sarif"):
        sys.stdout.write(check_output(fmt, diff, breaches, repo_relative(lock_path), result, prefix=repo_relative(spec_dir), version=version,
                                      threads=threads, thread_sources=thread_sources))
    else:
        sys.stdout.write(lockfile.format_check(diff, str(lock_path), axes=result.spec.axes))
        if threads:
            sys.stdout.write(f"{lock_path}: the conversations differ from the lock (run `promptspec lock`):\n"
                             + "".join(f"  {line}\n" for line in threads))
        from .reach import describe

        universe = [m.request.variant.id for m in result.measures]
        sys.stdout.write(format_breaches(breaches, lambda ids: describe(list(ids), universe, result.spec.axes)))
    return 0 if diff.matches and not breaches and not threads else 1
