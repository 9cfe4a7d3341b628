"""Budgets that gate: `budgets:` in spec.yaml, enforced by `check` and `diff`.

A budget is a promise about what the spec sends (this model's prompt stays
under 1,200 tokens, under 2 % of its usable window; no single change adds
more than 50 tokens).  A breach names the variant, the figure and the budget,
so a failing CI line says what to fix without opening a report.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from ..spec.model import SPEC_FILE, Budget


@dataclass(frozen=True)
class Breach:
    variant: str
    figure: str  # "tokens" | "% of usable window" | "Δ tokens" | "Δ %"
    value: float
    limit: float
    budget: str  # "budgets.harbor-5" (the spec.yaml entry)
    line: int | None

    @property
    def where(self) -> str:
        return f"{SPEC_FILE}:{self.line}" if self.line else SPEC_FILE

    def message(self) -> str:
        return f"{self.variant}: {_num(self.value)}{_UNIT[self.figure]}, over {self.budget}.{_KEY[self.figure]} = {_num(self.limit)} ({self.where})"

    def to_data(self) -> dict[str, Any]:
        return {"variant": self.variant, "figure": self.figure, "value": self.value, "limit": self.limit, "budget": self.budget, "line": self.line}


_UNIT = {"tokens": " tokens", "% of usable window": " % of the usable window", "Δ tokens": " tokens added", "Δ %": " % growth"}
_KEY = {"tokens": "max_tokens", "% of usable window": "max_percent", "Δ tokens": "max_delta", "Δ %": "max_delta"}


def _num(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".") if isinstance(x, float) and not x.is_integer() else str(int(x))


@dataclass(frozen=True)
class BreachGroup:
    """The breaches of one budget by one figure: a change that adds 91 tokens to
    64 variants is one line naming the variants by axis, not 64 lines."""

    figure: str
    budget: str
    limit: float
    line: int | None
    variants: tuple[str, ...]
    values: tuple[float, ...]

    @property
    def where(self) -> str:
        return f"{SPEC_FILE}:{self.line}" if self.line else SPEC_FILE

    def message(self, describe: Callable[[Sequence[str]], str] | None = None) -> str:
        """`64 of 88 variants — mode ≠ plan (all models): +91 tokens added > budgets.all.max_delta 50 (spec.yaml:114)`;
        `describe` says which variants (default: their ids)."""
        who = describe(self.variants) if describe is not None else ", ".join(self.variants)
        lo, hi = min(self.values), max(self.values)
        sign = "+" if self.figure.startswith("Δ") else ""
        value = f"{sign}{_num(lo)}" if lo == hi else f"{sign}{_num(lo)}…{sign}{_num(hi)}"
        return f"{who}: {value}{_UNIT[self.figure]} > {self.budget}.{_KEY[self.figure]} {_num(self.limit)} ({self.where})"


def group_breaches(breaches: Iterable[Breach]) -> list[BreachGroup]:
    """One group per (budget, figure), most variants first (ties in spec.yaml order)."""
    found: dict[tuple, list[Breach]] = {}
    for b in breaches:
        found.setdefault((b.budget, b.figure, b.limit, b.line), []).append(b)
    groups = [BreachGroup(figure, budget, limit, line, tuple(b.variant for b in bs), tuple(b.value for b in bs))
              for (budget, figure, limit, line), bs in found.items()]
    return sorted(groups, key=lambda g: (-len(g.variants), g.line or 0, g.figure))


def _for(budgets: Iterable[Budget], slug: str) -> list[Budget]:
    return [b for b in budgets if b.applies(slug)]


def measure_breaches(spec, measure) -> list[Breach]:
    """The absolute budgets (max_tokens, max_percent) one variant breaks."""
    out = []
    vid, slug = measure.request.variant.id, measure.request.model
    for b in _for(spec.budgets, slug):
        if b.max_tokens is not None and measure.total > b.max_tokens:
            out.append(Breach(vid, "tokens", measure.total, b.max_tokens, b.where, b.line))
        pct = measure.percent_of_usable
        if b.max_percent is not None and pct is not None and pct > b.max_percent:
            out.append(Breach(vid, "% of usable window", round(pct, 3), b.max_percent, b.where, b.line))
    return out


def result_breaches(result) -> list[Breach]:
    """Every absolute budget breach of a pipeline Result, by variant id."""
    if not result.spec.budgets:
        return []
    out = []
    for m in result.measures:
        out.extend(measure_breaches(result.spec, m))
    return sorted(out, key=lambda b: (b.variant, b.figure))


def delta_breaches(spec, changes: Iterable[Any], models: dict[str, str]) -> list[Breach]:
    """max_delta breaches: `changes` have .id, .delta, .total_before; `models` maps id -> model slug."""
    out = []
    for c in changes:
        for b in _for(spec.budgets, models.get(c.id, "")):
            if b.max_delta is not None and c.delta > b.max_delta:
                out.append(Breach(c.id, "Δ tokens", c.delta, b.max_delta, b.where, b.line))
            if b.max_delta_percent is not None and c.delta > 0 and c.total_before:
                pct = round(100.0 * c.delta / c.total_before, 3)
                if pct > b.max_delta_percent:
                    out.append(Breach(c.id, "Δ %", pct, b.max_delta_percent, b.where, b.line))
    return sorted(out, key=lambda b: (b.variant, b.figure))


def diff_breaches(diff, head_result) -> list[Breach]:
    """What `diff` enforces: the head's absolute budgets and the Δ budgets of its changes."""
    models = {m.request.variant.id: m.request.model for m in head_result.measures}
    return sorted(result_breaches(head_result) + delta_breaches(head_result.spec, diff.changed, models), key=lambda b: (b.variant, b.figure))


def format_breaches(breaches: list[Breach], describe: Callable[[Sequence[str]], str] | None = None, limit: int = 20) -> str:
    """The breaches on a terminal, grouped per budget (`describe` says which variants; default: their ids)."""
    if not breaches:
        return ""
    groups = group_breaches(breaches)
    lines = [f"promptspec: {len(breaches)} budget breach{'es' if len(breaches) != 1 else ''}:"]
    lines += [f"  {g.message(describe)}" for g in groups[:limit]]
    if len(groups) > limit:
        lines.append(f"  ... and {len(groups) - limit} more budgets")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------
# CI gate


def parse_increase(value: str) -> tuple[float, bool]:
    """`--fail-on-increase` value: "200" -> (200, False); "5%" -> (5.0, True)."""
    text = value.strip()
    percent = text.endswith("%")
    number = text[:-1].strip() if percent else text
    try:
        amount = float(number) if percent else int(number)
    except ValueError:
        raise ValueError(f"--fail-on-increase expects a number of tokens or a percentage such as 5%, got {value!r}") from None
    if amount < 0:
        raise ValueError(f"--fail-on-increase must not be negative, got {value!r}")
    return amount, percent


def increases_over(diff: Any, amount: float, percent: bool) -> list[Any]:
    """Changed variants whose total grew by more than the threshold (added variants have no base and are not counted)."""
    out = []
    for c in diff.changed:
        if percent:
            if c.delta > 0 and (c.total_before == 0 or 100.0 * c.delta / c.total_before > amount):
                out.append(c)
        elif c.delta > amount:
            out.append(c)
    return sorted(out, key=lambda c: (-c.delta, c.id))
