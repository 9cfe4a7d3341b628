"""What each request of a conversation costs, and a readable transcript.

Every later request re-sends the ones before it, so the figure that matters
is per request: its total, its share of the usable window, what it adds, and
what a compaction takes away.  One function makes the rows the CLI's text
transcript and the site's conversation pages both show.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Sequence

from ..assemble.conversation import ThreadRequest
from .figures import Measure


@dataclass(frozen=True)
class RequestFigures:
    index: int  # 1-based position in the thread
    step: int
    kind: str  # "turn" | "compaction"
    reason: str
    model: str
    total: int
    added: int  # tokens of the messages this request adds
    percent: float | None  # of the model's usable window
    change: int  # total minus the previous request's total (negative after a compaction)


def figures(thread: Sequence[ThreadRequest], measures: Sequence[Measure]) -> list[RequestFigures]:
    out = []
    previous = None
    for i, (treq, m) in enumerate(zip(thread, measures), 1):
        added = sum(m.messages[treq.new:])
        out.append(RequestFigures(i, treq.step, treq.kind, treq.reason, treq.request.model, m.total, added,
                                  m.percent_of_usable, m.total - (previous if previous is not None else 0)))
        previous = m.total
    return out


def _label(treq: ThreadRequest) -> str:
    if treq.kind == "compaction":
        return f"compaction ({treq.reason})"
    return "turn, history rebuilt after compaction" if treq.rebuilt else "turn"


def transcript(thread: Sequence[ThreadRequest], measures: Sequence[Measure]) -> str:
    """Each request: a header with its figures, then only the items it adds
    (everything after a rebuild), bodies exactly as sent."""
    out = []
    for treq, m, fig in zip(thread, measures, figures(thread, measures)):
        pct = "" if fig.percent is None else f", {fig.percent:.1f} % of the usable window"
        out.append(f"=== request {fig.index} (step {fig.step}, {_label(treq)}): model {fig.model}, "
                   f"{fig.total} tokens{pct}; adds {fig.added}")
        req = treq.request
        if fig.index == 1 or treq.rebuilt:
            where = "the instructions field" if req.instructions_field else "a section"
            out.append(f"--- base instructions in {where} (rule {req.base.rule}): {len(req.base.text)} characters")
        changed = [(k, v) for k, v in req.params if k in ("tool_choice", "parallel_tool_calls")]
        if treq.kind == "compaction":
            out.append(f"--- tools: {len(req.tools)}; " + ", ".join(f"{k}: {json.dumps(v)}" for k, v in changed))
        if treq.new:
            out.append(f"--- {treq.new} earlier items re-sent")
        for i, message in enumerate(treq.new_messages, treq.new):
            out.append(f"+++ {i:02} message/{message.role}")
            for j, s in enumerate(message.sections, 1):
                out.append(f"--- [{j:02}] {s.fragment}")
                out.append(s.text if s.text.endswith("\n") else s.text + "\n")
    return "\n".join(out).rstrip("\n") + "\n"


@dataclass(frozen=True)
class Run:
    """One of the spec's conversations (`conversations:`) started from one variant, measured."""

    name: str
    description: str
    variant: Any  # assemble.request.Variant: the thread's start
    thread: tuple[ThreadRequest, ...]
    measures: tuple[Measure, ...]

    @property
    def figures(self) -> list[RequestFigures]:
        return figures(self.thread, self.measures)


def runs(spec: Any, variants: Sequence[Any], counter: Any, asm: Any = None) -> list[Run]:
    """Every conversation of the spec, once per model: from the first variant
    of the matrix with that model (a page per model by default)."""
    from ..assemble.conversation import conversation
    from ..spec.readers.scripts import read_script
    from .figures import measure_all

    starts: dict[str, Any] = {}
    for v in variants:
        starts.setdefault(v.model, v)
    out = []
    for name, ref in spec.conversations:
        path = spec.fs.resolve(ref, origin="spec.yaml")
        script = read_script(path, spec.fs.display(path))
        for model, variant in starts.items():
            # A script that does not fit the spec (a model a model_filter leaves out, a mode
            # it lacks) stops the command with check_script's one line: never a silent gap.
            thread = conversation(spec, variant, script, asm)
            measures = measure_all(spec, [t.request for t in thread], counter)
            out.append(Run(name, script.description, variant, tuple(thread), tuple(measures)))
    return out
