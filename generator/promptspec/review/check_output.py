"""`promptspec check`'s formats: a lock comparison (lockfile.compare, a
change.Diff whose base is the lock) as the short text report, the JSON
document, and -- with budget breaches -- annotations on the file and line
that caused them (`--format github|sarif`).

A section that changed since the lock is annotated on the source that really
changed (from the lock's recorded digests): one annotation per source, listing
how many variants and which conversation threads (review/conversation_lock.py)
it reached; a budget breach is annotated on its entry in spec.yaml.
"""

from __future__ import annotations

from typing import Any, Sequence

from ..errors import escape_controls
from ..util.annotations import Annotation, RuleDoc, github, join_path, sarif
from .change import LINE_RANGE, Diff, signed, source_path
from .lockfile import part_refs

RULES = (
    RuleDoc("lock-out-of-date", "lock-out-of-date", "the spec matches prompts.lock.json (run `promptspec lock` and commit it)", "error"),
    RuleDoc("budget", "budget", "every variant stays within the spec's budgets: (spec.yaml)", "error"),
)


def thread_reach(by_source: Any) -> dict[tuple[str, int], str]:
    """Per changed source (`conversation_lock.changed_sources`), the conversation
    threads it reaches, as the words of its annotation."""
    out = {}
    for (path, line), keys in sorted((by_source or {}).items()):
        names = sorted(set(keys))
        out[(path, line)] = f"{len(names)} conversation thread{'s' if len(names) != 1 else ''} ({', '.join(names)})"
    return out


def _lock_note(path: str, line: int, reach: Sequence[str]) -> Annotation:
    return Annotation(path, line, "error", "lock-out-of-date", "prompts.lock.json is out of date",
                      f"this change reaches {' and '.join(reach)}; run `promptspec lock` and commit the lock")


def annotations_for(diff: Diff, breaches: Sequence[Any], lock_path: str, result: Any, *, prefix: str = "",
                    threads: Sequence[str] = (), thread_sources: Any = None) -> list[Annotation]:
    """One annotation per changed source, naming the variants and the
    conversation threads it reaches (`threads`: conversation_lock.changes;
    `thread_sources`: conversation_lock.changed_sources); what no source
    explains is annotated on the lock file."""
    refs: dict[str, Any] = {}
    for req in result.requests:
        for obj in (req.base, *(s for _, _, s in req.sections)):
            for r in getattr(obj, "sources", ()):
                refs.setdefault(str(r.key), r)
        for extra in part_refs(req).values():
            for r in extra:
                refs.setdefault(str(r.key), r)
    by_source: dict[tuple[str, int], dict[str, set[str]]] = {}
    unattributed: list[str] = []
    for c in diff.changed:
        for s in c.all_changes:
            if not s.changed_sources:
                unattributed.append(f"{c.id} {s.fragment} ({s.kind})")
            for key in s.changed_sources:
                ref = refs.get(LINE_RANGE.sub("", key))
                path = ref.path if ref is not None else source_path(key)
                line = ref.first_line if ref is not None else 0
                entry = by_source.setdefault((path, line), {"variants": set(), "sections": set()})
                entry["variants"].add(c.id)
                entry["sections"].add(s.fragment)
    reach: dict[tuple[str, int], list[str]] = {}
    for (path, line), entry in by_source.items():
        n = len(entry["variants"])
        reach.setdefault((path, line), []).append(f"{n} variant{'s' if n != 1 else ''} (sections: {', '.join(sorted(entry['sections']))})")
    if threads:
        for where, words in thread_reach(thread_sources).items():
            reach.setdefault(where, []).append(words)
    out = [_lock_note(join_path(prefix, path), line, words) for (path, line), words in sorted(reach.items())]
    if threads and not thread_sources:
        out.append(Annotation(lock_path, 0, "error", "lock-out-of-date", "prompts.lock.json is out of date",
                              f"the conversations differ from the lock ({'; '.join(threads)}); run `promptspec lock`"))
    stale = len(diff.added) + len(diff.removed) + (len(unattributed) if not by_source else 0)
    if stale or (not diff.matches and not by_source):
        out.append(Annotation(lock_path, 0, "error", "lock-out-of-date", "prompts.lock.json is out of date",
                              f"{len(diff.changed)} changed, {len(diff.added)} added, {len(diff.removed)} removed variants; run `promptspec lock`"))
    for b in breaches:
        out.append(Annotation(join_path(prefix, "spec.yaml"), b.line or 0, "error", "budget", "over budget", b.message()))
    return out


def check_output(fmt: str, diff: Diff, breaches: Sequence[Any], lock_path: str, result: Any, *, prefix: str = "", version: str = "",
                 threads: Sequence[str] = (), thread_sources: Any = None) -> str:
    """`threads`: conversation_lock.changes; `thread_sources`: conversation_lock.changed_sources."""
    notes = annotations_for(diff, breaches, lock_path, result, prefix=prefix, threads=threads, thread_sources=thread_sources)
    return github(notes) if fmt == "github" else sarif(notes, RULES, version=version)



def changed_files(diff: Diff) -> dict[str, tuple[str, ...]]:
    """Changed source file -> the changed variants it reaches (from the lock's digests)."""
    out: dict[str, set[str]] = {}
    for c in diff.changed:
        for s in c.all_changes:
            for src in s.changed_sources:
                out.setdefault(source_path(src), set()).add(c.id)
    return {k: tuple(sorted(v)) for k, v in sorted(out.items())}


def check_data(diff: Diff) -> dict[str, Any]:
    """The `--format json` document (before the caller adds budgets and conversations)."""
    return {
        "matches": diff.matches,
        "added": [{"id": v.id, "total": v.total} for v in diff.added],
        "removed": [{"id": v.id, "total": v.total} for v in diff.removed],
        "changed": [
            {
                "id": c.id,
                "total_before": c.total_before,
                "total_after": c.total_after,
                "delta": c.delta,
                "encoding_before": c.encoding_before,
                "encoding_after": c.encoding_after,
                "sections": [
                    {"fragment": s.fragment, "kind": s.kind, "tokens_before": s.before.tokens if s.before else None,
                     "tokens_after": s.after.tokens if s.after else None, "delta": s.delta, "changed_sources": list(s.changed_sources)}
                    for s in c.all_changes
                ],
            }
            for c in diff.changed
        ],
        "unchanged": len(diff.unchanged),
        "other": list(diff.other),
    }


def format_check(diff: Diff, lock_path: str, *, limit: int = 40, axes: Any = None) -> str:
    """The short report `promptspec check` prints (`axes`: the spec's, to describe variant sets by axis)."""
    if diff.matches:
        return f"{lock_path} matches the spec ({len(diff.unchanged)} variants)\n"
    lines = [
        f"{lock_path} is out of date: {len(diff.changed)} changed, {len(diff.added)} added, "
        f"{len(diff.removed)} removed, {len(diff.unchanged)} unchanged"
    ]
    universe = sorted({c.id for c in diff.changed} | {v.id for v in diff.added} | set(diff.unchanged))  # the spec's variants now
    for path, ids in changed_files(diff).items():
        if axes:
            from .reach import describe

            reach = describe(list(ids), universe, axes)
        else:
            reach = f"{len(ids)} of {len(universe)} variants"
        lines.append(f"  {path} {'added' if path in diff.new_files else 'changed'}: reaches {reach}")
    rows: list[str] = []
    for c in diff.changed:
        parts = []
        for s in c.all_changes:
            files = sorted({source_path(src) for src in s.changed_sources})
            where = f" [{', '.join(files)}]" if files else ""
            if s.kind in ("changed", "retokenized"):
                parts.append(f"{s.fragment} {signed(s.delta)}" + (" (tokens only)" if s.kind == "retokenized" else "") + where)
            else:
                parts.append(f"{s.fragment} ({s.kind}){where}")
        enc = f" [{c.encoding_before} -> {c.encoding_after}]" if c.encoding_before != c.encoding_after else ""
        rows.append(f"  changed {c.id}  {c.total_before} -> {c.total_after} ({signed(c.delta)}){enc}"
                    + (f"  {', '.join(parts)}" if parts else "  (the lock's recorded figures differ from the spec's)"))
    rows += [f"  added   {v.id}  {v.total} tokens" for v in diff.added]
    rows += [f"  removed {v.id}  {v.total} tokens" for v in diff.removed]
    lines += rows[:limit]
    if len(rows) > limit:
        lines.append(f"  ... and {len(rows) - limit} more")
    if diff.other:
        lines.append(f"  the lock's {', '.join(escape_controls(k[:40]) for k in diff.other[:10])} differ from what the spec gives")
    lines.append("run `promptspec lock` to record the new state (and commit the lock with the change)")
    return "\n".join(lines) + "\n"
