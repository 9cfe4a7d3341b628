"""Token figures for assembled requests.

Counting is by the model's real tokenizer; Codex's own ⌈bytes/4⌉ estimate is
shown beside it because Codex decides when to compact on the estimate, not on
real tokens.  A variant's total is exactly base instructions plus the sum of
its sections plus its tool list — nothing hidden — so a reader can add the
parts up and check.

Tools are counted over the JSON of the tool list exactly as the request
serialises it (compact, see `spec.tools.serialize`).  That is an offline
count of the serialised definitions: how the API itself accounts for tool
definitions is not public, so the figure says what it measures
(`TOOLS_COUNT_RULE`) wherever it is shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from ..assemble.export import tools_json
from ..assemble.request import Request
from ..spec.model import Spec
from .counter import TokenCounter
from .encodings import codex_estimate, encoding_for_model


TOOLS_COUNT_RULE = (
    "offline count of the tool list's JSON exactly as serialised in the request (compact, UTF-8); "
    "the API's own accounting of tool definitions is not public"
)


def tools_text(request: Request) -> str:
    """What a request's tools cost is counted over ('' when it sends none)."""
    return tools_json(request) if request.tools else ""


@dataclass(frozen=True)
class Measure:
    request: Request
    encoding: str
    base: int
    base_estimate: int
    sections: tuple[tuple[int, ...], ...]  # per message, per section
    estimates: tuple[tuple[int, ...], ...]
    context_window: int | None
    usable_window: int | None
    compact_limit: int | None
    compact_limit_source: str  # "auto_compact_token_limit" | "90% of context_window" | "none"
    tools: int = 0  # the whole tool list as serialised (0 when none is sent)
    tools_estimate: int = 0
    tool_counts: tuple[int, ...] = ()  # each sent tool's own serialised definition
    tool_estimates: tuple[int, ...] = ()
    description_counts: tuple[int, ...] = ()
    """Each carried tool's description as sent (`Tool.sent_description`), sent
    ones then deferred ones (`request.tools + request.deferred`): counted here,
    through the counter's cache, so that a page showing it needs no tokenizer."""

    @property
    def messages(self) -> tuple[int, ...]:
        return tuple(sum(m) for m in self.sections)

    @property
    def total(self) -> int:
        return self.base + sum(self.messages) + self.tools

    @property
    def estimate(self) -> int:
        return self.base_estimate + sum(sum(m) for m in self.estimates) + self.tools_estimate

    @property
    def percent_of_usable(self) -> float | None:
        return None if not self.usable_window else 100.0 * self.total / self.usable_window

    @property
    def headroom(self) -> int | None:
        """Tokens left before Codex would auto-compact (negative: over).

        Codex decides on its own ⌈bytes/4⌉ estimate, not on real tokens, so
        that is what is compared with the limit here too."""
        return None if self.compact_limit is None else self.compact_limit - self.estimate

    def section_tokens(self) -> Iterable[tuple[int, int, int, int]]:
        """(message index, section index, tokens, estimate) in send order."""
        for i, (counts, ests) in enumerate(zip(self.sections, self.estimates)):
            for j, (n, e) in enumerate(zip(counts, ests)):
                yield i, j, n, e

    def summary(self) -> dict[str, Any]:
        """The figures as JSON-ready data, each naming its denominator."""
        req = self.request
        return {
            "encoding": self.encoding,
            "instructions": {"tokens": self.base, "codex_estimate": self.base_estimate},
            "messages": [
                {
                    "role": msg.role,
                    "tokens": sum(counts),
                    "sections": [
                        {"fragment": s.fragment, "slot": s.slot, "tokens": n, "codex_estimate": e}
                        for s, n, e in zip(msg.sections, counts, ests)
                    ],
                }
                for msg, counts, ests in zip(req.messages, self.sections, self.estimates)
            ],
            "tools": {
                "tokens": self.tools,
                "codex_estimate": self.tools_estimate,
                "placement": req.tool_placement,
                "rule": TOOLS_COUNT_RULE,
                "tools": [
                    {"tool": t.name, "name": t.tool_name, "tokens": n, "codex_estimate": e}
                    for t, n, e in zip(req.tools, self.tool_counts, self.tool_estimates)
                ],
            },
            "total": self.total,
            "total_includes": "instructions + messages + tools",
            "codex_estimate": self.estimate,
            "estimate_minus_tokens": self.estimate - self.total,
            "usable_window": self.usable_window,
            "percent_of_usable_window": None if self.percent_of_usable is None else round(self.percent_of_usable, 3),
            "usable_window_rule": "context_window x effective_context_window_percent / 100",
            "auto_compact_limit": self.compact_limit,
            "auto_compact_limit_source": self.compact_limit_source,
            "headroom_before_auto_compact": self.headroom,
            "headroom_rule": "auto_compact_limit - codex_estimate (Codex compares its ceil(bytes/4) estimate with the limit)",
        }


def _limits(spec: Spec, slug: str) -> tuple[int | None, int | None, int | None, str]:
    model = spec.model(slug)
    source = "none"
    if model.auto_compact_token_limit:
        source = "auto_compact_token_limit"
    elif model.context_window:
        source = "90% of context_window"
    return model.context_window, model.usable_window, model.compact_limit, source


def measure_all(spec: Spec, requests: Sequence[Request], counter: TokenCounter) -> list[Measure]:
    """Count every distinct text of every request once, then build the figures."""
    encodings = {slug: encoding_for_model(slug, spec.encodings) for slug in {r.model for r in requests}}
    wanted: set[tuple[str, str]] = set()
    for req in requests:
        enc = encodings[req.model]
        wanted.add((enc, req.base.text))
        for _, _, section in req.sections:
            wanted.add((enc, section.text))
        if req.tools:
            wanted.add((enc, tools_text(req)))
            wanted.update((enc, t.serialized) for t in req.tools)
        wanted.update((enc, t.sent_description) for t in (*req.tools, *req.deferred) if t.sent_description)
    counts = counter.count_many(sorted(wanted))
    estimates: dict[str, int] = {}

    def est(text: str) -> int:
        value = estimates.get(text)
        if value is None:
            value = estimates[text] = codex_estimate(text)
        return value

    out = []
    for req in requests:
        enc = encodings[req.model]
        window, usable, compact, source = _limits(spec, req.model)
        out.append(
            Measure(
                request=req,
                encoding=enc,
                # Sent as a section instead (layout `instructions: section`): counted there, once.
                base=counts[(enc, req.base.text)] if req.instructions_field else 0,
                base_estimate=est(req.base.text) if req.instructions_field else 0,
                sections=tuple(tuple(counts[(enc, s.text)] for s in m.sections) for m in req.messages),
                estimates=tuple(tuple(est(s.text) for s in m.sections) for m in req.messages),
                context_window=window,
                usable_window=usable,
                compact_limit=compact,
                compact_limit_source=source,
                tools=counts[(enc, tools_text(req))] if req.tools else 0,
                tools_estimate=est(tools_text(req)) if req.tools else 0,
                tool_counts=tuple(counts[(enc, t.serialized)] for t in req.tools),
                tool_estimates=tuple(est(t.serialized) for t in req.tools),
                description_counts=tuple(counts[(enc, t.sent_description)] if t.sent_description else 0
                                         for t in (*req.tools, *req.deferred)),
            )
        )
    return out
