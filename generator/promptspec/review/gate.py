"""The gates of `promptspec diff` and `promptspec check`, once the sides are
loaded: typed options in, the report, the gate messages and the exit status
out.  Nothing here prints or reads argparse; `cli/` does both.

Gates are applied in one place: the spec's budgets always, `fail_on_budget`
for budget/headroom crossings, `fail_on_increase` for growth.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

from ..errors import UsageError
from ..util.annotations import repo_relative
from .budgets import diff_breaches, format_breaches, increases_over, parse_increase, result_breaches
from .report import COMMENT_CHARS, MIN_MARKDOWN_CHARS


@dataclass(frozen=True)
class DiffOptions:
    """What `diff` compares and how it reports.  `base`/`head`: sides as
    `promptspec diff` takes them (a git revision, `dir:PATH`, ...; head None:
    the working tree); `max_chars`: the Markdown report's cap;
    `fail_on_increase`: e.g. "5%" or "200" (budgets.parse_increase).
    Checked when made: a bad value is a UsageError naming the flag."""

    base: str
    head: str | None = None
    format: str = "text"
    max_chars: int = COMMENT_CHARS
    budget: int | None = None
    fail_on_budget: bool = False
    fail_on_increase: str | None = None

    def __post_init__(self) -> None:
        self.gate  # parse now: a bad value is refused before any side is loaded
        if self.format == "markdown" and self.max_chars < MIN_MARKDOWN_CHARS:
            raise UsageError(f"--max-chars must be at least {MIN_MARKDOWN_CHARS}")
        if self.budget is not None and self.budget < 0:
            raise UsageError("--budget must not be negative")

    @property
    def gate(self) -> tuple[float, bool] | None:
        if self.fail_on_increase is None:
            return None
        try:
            return parse_increase(self.fail_on_increase)
        except ValueError as exc:
            raise UsageError(str(exc)) from None

    @property
    def command(self) -> str:
        """The command line a report names."""
        return " ".join(["promptspec diff", self.base, *([self.head] if self.head else [])])


@dataclass(frozen=True)
class Outcome:
    """What a command produced: the report (standard output), the gates'
    messages (standard error, in order) and the exit status."""

    report: str
    messages: str
    status: int
    diff: Any = None  # the review.Diff (diff) or lock comparison (check) behind the report


def run_diff(options: DiffOptions, spec_dir: Path, counter: Any, progress: Callable[[str], Any],
             timings: Callable[[Any, str], None]) -> Outcome:
    """`promptspec diff`: load both sides (git revision or folder), compare, report, gate."""
    import tempfile

    from .. import pipeline
    from .diff import compare, file_changes
    from .gitspec import digest_tree, load_side, open_side

    with tempfile.TemporaryDirectory(prefix="promptspec-diff-") as tmp:
        sides = []
        for side, ref in (("base", options.base), ("head", options.head)):
            try:
                source = open_side(ref, spec_dir=spec_dir, workdir=Path(tmp) / side)
            except UsageError as exc:
                raise UsageError(f"{side}: {exc}") from None
            with progress(f"assembling {side}") as bar:
                result = load_side(side, source, lambda path: pipeline.run(path, counter=counter, progress=bar))
            timings(result, side)
            sides.append((source, result, digest_tree(source.path)))
        (bsrc, bres, bfiles), (hsrc, hres, hfiles) = sides
        diff = compare(bres, hres, base_label=bsrc.title, head_label=hsrc.title, budget=options.budget, files=file_changes(bfiles, hfiles))
        diff = replace(diff, conversations=conversation_changes(bres, hres, counter))
    return finish_diff(diff, hres, options)


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


def finish_diff(diff: Any, head_result: Any, options: DiffOptions) -> Outcome:
    """The report in `options.format`, then the gates' messages; the exit status."""
    from .report import format_diff

    diff = replace(diff, breaches=tuple(diff_breaches(diff, head_result)))
    report = format_diff(diff, options.format, max_chars=options.max_chars, command=options.command)
    messages: list[str] = []
    status = 0
    if diff.breaches:
        messages.append(format_breaches(list(diff.breaches), diff.describe))
        status = 1
    if options.fail_on_budget:
        crossings = [(v, "its auto-compaction limit (headroom, by Codex's ⌈bytes/4⌉ estimate)") for v, _, _ in diff.headroom_crossings()]
        crossings += [(v, f"--budget {diff.budget} tokens") for v, _, _ in diff.budget_crossings()]
        messages += [f"promptspec: {vid} now goes over {what}\n" for vid, what in crossings[:20]]
        if crossings:
            status = 1
    gate = options.gate
    if gate is not None:
        over = increases_over(diff, *gate)
        if over:
            top = over[0]
            messages.append(
                f"promptspec: {len(over)} variant(s) grew by more than {options.fail_on_increase} "
                f"(largest: {top.id} {top.total_before} -> {top.total_after}, +{top.delta})\n"
            )
            status = 1
    return Outcome(report, "".join(messages), status, diff)


def finish_check(lock_data: Any, result: Any, lock_path: Path, spec_dir: Path, fmt: str, version: str) -> Outcome:
    """Compare with the lock and the budgets, the report in `fmt`; status 0 when both hold, else 1."""
    from . import lockfile
    from .check_output import check_data, check_output, format_check

    diff = lockfile.compare(lock_data, result)
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
        data = dict(check_data(diff), budget_breaches=[b.to_data() for b in breaches], conversations=threads)
        report = json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True) + "\n"
    elif fmt in ("github", "sarif"):
        report = check_output(fmt, diff, breaches, repo_relative(lock_path), result, prefix=repo_relative(spec_dir), version=version,
                              threads=threads, thread_sources=thread_sources)
    else:
        report = format_check(diff, str(lock_path), axes=result.spec.axes)
        if threads:
            report += (f"{lock_path}: the conversations differ from the lock (run `promptspec lock`):\n"
                       + "".join(f"  {line}\n" for line in threads))
        from .reach import describe

        universe = [m.request.variant.id for m in result.measures]
        report += format_breaches(breaches, lambda ids: describe(list(ids), universe, result.spec.axes))
    return Outcome(report, "", 0 if diff.matches and not breaches and not threads else 1, diff)
