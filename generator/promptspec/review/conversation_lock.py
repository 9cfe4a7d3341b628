"""The lock's record of the conversations: every request of each thread.

`prompts.lock.json` pins each variant's first request; under
`conversations` it also pins, per script and start, each request's kind, the
sha256 of its whole body and its tokens, so `promptspec check` fails when a
later-turn text changes without the lock (and so the reviewer) seeing it;
under `conversation_sources` the digest of every source those requests were
built from, so `check --format github|sarif` can put the failure on the file
and line that changed.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from .lockfile import request_hash

KEY = "conversations"
SOURCES_KEY = "conversation_sources"


def thread_key(run: Any) -> str:
    return f"{run.name} from {run.variant.id}"


def entries(runs: Sequence[Any]) -> dict[str, list[dict[str, Any]]]:
    """Script and start -> one entry per request, in order."""
    return {thread_key(r): [{"kind": t.kind, "sha256": request_hash(t.request), "tokens": m.total}
                            for t, m in zip(r.thread, r.measures)] for r in runs}


def _refs(run: Any) -> dict[str, Any]:
    """Source key -> SourceRef, over every section of every request of one thread."""
    return {str(r.key): r for t in run.thread for m in t.request.messages for s in m.sections for r in s.sources}


def sources(runs: Sequence[Any]) -> dict[str, str]:
    """The lock's `conversation_sources`: key -> digest (sorted by key)."""
    out: dict[str, str] = {}
    for run in runs:
        out.update((key, ref.digest) for key, ref in _refs(run).items())
    return dict(sorted(out.items()))


def changed_sources(lock_data: Mapping[str, Any], runs: Sequence[Any]) -> dict[tuple[str, int], list[str]]:
    """(file, line) of each source whose digest differs from the lock's record
    -> the threads it reaches that differ from the lock; empty when the lock
    records no sources (an older lock) or nothing is attributable."""
    recorded = lock_data.get(SOURCES_KEY)
    if not isinstance(recorded, dict):
        return {}
    old = lock_data.get(KEY) or {}
    out: dict[tuple[str, int], list[str]] = {}
    for run in runs:
        key = thread_key(run)
        if isinstance(old, dict) and old.get(key) == entries([run])[key]:
            continue
        for name, ref in _refs(run).items():
            if recorded.get(name) != ref.digest:
                out.setdefault((ref.path, ref.first_line), []).append(key)
    return out


def changes(lock_data: Mapping[str, Any], runs: Sequence[Any]) -> list[str]:
    """One line per thread whose requests differ from the lock (empty: they match)."""
    return compare_entries(lock_data.get(KEY) or {}, entries(runs))


def compare_entries(old: Any, new: Mapping[str, Any]) -> list[str]:
    """One line per thread whose requests differ between two records (`entries`)."""
    out = []
    if not isinstance(old, dict):
        return ["the lock's conversations are malformed"]
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if a is None:
            out.append(f"{key}: not in the lock ({len(b or [])} requests)")
        elif b is None:
            out.append(f"{key}: in the lock, no longer in the spec")
        elif a != b:
            first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            before = a[first]["tokens"] if first < len(a) and isinstance(a[first], dict) else "-"
            after = b[first]["tokens"] if first < len(b) else "-"
            out.append(f"{key}: request {first + 1} differs ({before} -> {after} tokens; {len(a)} -> {len(b)} requests)")
    return out
