"""`promptspec check --format github|sarif`: a stale lock and budget breaches
as annotations on the file and line that caused them.

A section that changed since the lock is annotated on the source that really
changed (from the lock's recorded digests): one annotation per source, listing
how many variants and which conversation threads (review/conversation_lock.py)
it reached; a budget breach is annotated on its entry in spec.yaml.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from ..util.annotations import Annotation, RuleDoc, github, join_path, sarif

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


def annotations_for(diff: Any, breaches: Sequence[Any], lock_path: str, result: Any, *, prefix: str = "",
                    threads: Sequence[str] = (), thread_sources: Any = None) -> list[Annotation]:
    """One annotation per changed source, naming the variants and the
    conversation threads it reaches (`threads`: conversation_lock.changes;
    `thread_sources`: conversation_lock.changed_sources); what no source
    explains is annotated on the lock file."""
    from .lockfile import _file_of, part_refs

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
        for s in c.sections:
            if not s.changed_sources:
                unattributed.append(f"{c.id} {s.fragment} ({s.kind})")
            for key in s.changed_sources:
                ref = refs.get(re.sub(r":\d+(-\d+)?$", "", key))
                path = ref.path if ref is not None else _file_of(key)
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


def check_output(fmt: str, diff: Any, breaches: Sequence[Any], lock_path: str, result: Any, *, prefix: str = "", version: str = "",
                 threads: Sequence[str] = (), thread_sources: Any = None) -> str:
    """`threads`: conversation_lock.changes; `thread_sources`: conversation_lock.changed_sources."""
    notes = annotations_for(diff, breaches, lock_path, result, prefix=prefix, threads=threads, thread_sources=thread_sources)
    return github(notes) if fmt == "github" else sarif(notes, RULES, version=version)
