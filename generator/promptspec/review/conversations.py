"""What a change does to the spec's conversations: every request of each
thread, compared between two sides.

A later-turn text (a switch message, the compaction prompt, the summary
prefix) is in no first request, so comparing variants cannot see an edit of
it.  Here each conversation of `conversations:` runs on both sides from the
same start (measure/conversation.py `runs`), and each fragment whose texts
differ in some request is one change, naming the conversations and starts it
reaches and how many requests it alters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from .change import signed
from .diff import section_diff, diff_labels

TURN_TEXTS = ("(user)", "(reply)")


@dataclass(frozen=True)
class ConversationChange:
    fragment: str
    reaches: tuple[tuple[str, tuple[str, ...]], ...]  # conversation -> the start variants it reaches
    requests: int  # requests (over all threads) whose text of this fragment changed
    delta: int  # tokens the change adds to the largest of those requests, over all threads
    diff: str  # the first changed text, as a unified diff

    @property
    def conversations(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.reaches)


def _texts(thread: Any) -> list[dict[str, list[str]]]:
    out = []
    for treq in thread:
        by: dict[str, list[str]] = {}
        for message in treq.request.messages:
            for s in message.sections:
                if s.fragment not in TURN_TEXTS:
                    by.setdefault(s.fragment, []).append(s.text)
        out.append(by)
    return out


def compare_conversations(base: Sequence[Any], head: Sequence[Any]) -> tuple[ConversationChange, ...]:
    """`base`, `head`: measure.conversation.Run lists of the two sides."""
    before = {(r.name, r.variant.id): r for r in base}
    found: dict[str, dict[str, Any]] = {}
    for run in head:
        old = before.get((run.name, run.variant.id))
        if old is None:
            continue
        a, b = _texts(old.thread), _texts(run.thread)
        for i in range(max(len(a), len(b))):
            ta, tb = (a[i] if i < len(a) else {}), (b[i] if i < len(b) else {})
            for fragment in sorted(set(ta) | set(tb)):
                if ta.get(fragment) == tb.get(fragment):
                    continue
                entry = found.setdefault(fragment, {"reaches": {}, "requests": 0, "delta": 0, "diff": ""})
                entry["reaches"].setdefault(run.name, []).append(run.variant.id)
                entry["requests"] += 1
                if i < len(old.measures) and i < len(run.measures):
                    entry["delta"] = max(entry["delta"], run.measures[i].total - old.measures[i].total, key=abs)
                if not entry["diff"]:
                    x, y = "".join(ta.get(fragment, [])), "".join(tb.get(fragment, []))
                    entry["diff"] = section_diff(x, y, *diff_labels(fragment, "", ()))
    out = []
    for fragment, e in sorted(found.items()):
        reaches = tuple((name, tuple(dict.fromkeys(ids))) for name, ids in e["reaches"].items())
        out.append(ConversationChange(fragment, reaches, e["requests"], e["delta"], e["diff"]))
    return tuple(out)


def describe(change: ConversationChange) -> str:
    """`compact_prompt` changed in 4 requests of long-session (from 3 starts), model-switch (from 3 starts)."""
    reach = ", ".join(f"{name} (from {len(ids)} start{'s' if len(ids) != 1 else ''})" for name, ids in change.reaches)
    return f"{change.fragment} changed in {change.requests} request(s) of {reach}; Δ up to {signed(change.delta)} tokens per request"
