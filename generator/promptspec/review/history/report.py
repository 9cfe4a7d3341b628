"""A history for people and scripts: `history --format text|markdown|json`.

One section per step (release N−1 → N): the axis values that came and went,
the variants added and removed (summarised by axis), the grouped part changes
with the variants they reach, the token Δ over matched variants (min, median,
max and the largest increases), sections over the fragment budget and new
auto-compaction crossings.  Markdown escapes spec text and fences diffs as
report.py does for `diff`, so a template cannot break out of a block.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..change import ChangeGroup, part_label
from .compare import History, Step
from ...util.gh_markdown import fenced, md_escape, md_span, md_text
from ..report import MIN_MARKDOWN_CHARS

FORMATS = ("text", "markdown", "json")
TOP = 10

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x9b]")


def _clean(text: str) -> str:
    """Terminal-safe: control characters (ESC, CR, ...) shown as \\xNN."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _signed(n: float) -> str:
    if isinstance(n, float) and not n.is_integer():
        return f"{n:+.1f}"
    n = int(n)
    return f"+{n}" if n > 0 else ("±0" if n == 0 else str(n))


def _range(lo: int, hi: int) -> str:
    return _signed(lo) if lo == hi else f"{_signed(lo)}…{_signed(hi)}"


PLACES = {"instructions": "instructions field", "tools": "tools field", "tools_input": "additional_tools input item",
          "parameters": "request parameters"}


def _place(p: str | None) -> str:
    return PLACES.get(p or "", f"{p} message" if p else "-")


def change_title(c: ChangeGroup) -> str:
    """`fragment realtime changed`, `base instructions → fragment base_instructions moved (instructions field → developer message)`."""
    if c.name_before and c.name_after and c.name_before != c.name_after:
        what = f"{part_label(c.name_before)} → {part_label(c.name_after)}"
    else:
        what = part_label(c.fragment)
    if c.kind == "moved":
        where = _place(c.place_after) if c.place_before == c.place_after else f"{_place(c.place_before)} → {_place(c.place_after)}"
        extra = " and changed" if c.diff else ""
        return f"{what} moved{extra} ({where}{', new order' if c.how == 'order' else ''})"
    if c.kind == "renamed":
        return f"{what} renamed{' and changed' if c.diff else ''}"
    return f"{what} {c.kind}"


def release_stats(r) -> tuple[int, int, int] | None:
    totals = sorted(v.total for v in r.variants.values())
    if not totals:
        return None
    # The middle variant's total (the lower middle for an even count): a figure
    # some variant sends, never a half token.
    return totals[0], totals[(len(totals) - 1) // 2], totals[-1]


def _fmt_num(x: float) -> str:
    return f"{x:,.1f}" if isinstance(x, float) and not x.is_integer() else f"{int(x):,}"


def axis_lines(step: Step) -> list[str]:
    """`model: added harbor-6 (added in v3)`, `approval_policy: untrusted gone in v3, refused: "..."`."""
    out = []
    for a in step.axes:
        if a.axis_added:
            out.append(f"axis {a.axis} added in {step.head.label}: {', '.join(a.added)}")
            continue
        if a.axis_removed:
            out.append(f"axis {a.axis} gone in {step.head.label} (had {', '.join(a.removed)})")
            continue
        refused = dict(a.refused)
        if a.added:
            out.append(f"{a.axis}: {', '.join(a.added)} added in {step.head.label}")
        for v in a.removed:
            note = f": {refused.pop(v)!s} (refused)" if v in refused else ""
            out.append(f"{a.axis}: {v} gone in {step.head.label}{note}")
        for v, msg in refused.items():
            out.append(f"{a.axis}: {v} refused in {step.head.label}: {msg}")
    return out


# ---------------------------------------------------------------------------
# JSON


def step_data(step: Step) -> dict[str, Any]:
    stats = step.delta_stats()
    diff = step.diff
    return {
        "index": step.index,
        "base": step.base.label,
        "head": step.head.label,
        "axes": [{"axis": a.axis, "added": list(a.added), "removed": list(a.removed), "refused": [{"value": v, "message": m} for v, m in a.refused],
                  "axis_added": a.axis_added, "axis_removed": a.axis_removed} for a in step.axes],
        "variants": {
            "matched": len(diff.matched),
            "changed": len(diff.changed),
            "unchanged": len(diff.unchanged),
            "added": list(step.added),
            "removed": list(step.removed),
            "added_reach": step.added_reach.to_data(),
            "removed_reach": step.removed_reach.to_data(),
        },
        "changes": [
            {"id": c.id, "kind": c.kind, "title": change_title(c), "name_before": c.name_before, "name_after": c.name_after,
             "place_before": c.place_before, "place_after": c.place_after, "how": c.how, "reach": step.reach(c).to_data(),
             "variants": list(c.variants), "delta_min": c.delta_range[0], "delta_max": c.delta_range[1],
             "tokens": [{"variant": v, "before": b, "after": a} for v, b, a in c.tokens], "diff": c.diff}
            for c in step.changes
        ],
        "tokens": {
            "delta_min": stats[0] if stats else None,
            "delta_median": stats[1] if stats else None,
            "delta_max": stats[2] if stats else None,
            "per_variant": [{"id": hid, "base_id": bid, "before": b, "after": a, "delta": a - b} for hid, bid, b, a in step.totals()],
            "largest_increases": [{"id": d.id, "before": d.total_before, "after": d.total_after, "delta": d.delta}
                                  for d in step.largest_increases(TOP)],
        },
        "over_budget": [{"fragment": o.fragment, "budget": o.budget, "max_tokens": o.max_tokens, "variants": o.variants, "new": o.new}
                        for o in step.over_budget],
        "headroom_crossings": [{"id": vid, "headroom_before": before, "headroom_after": after}
                               for vid, before, after in step.headroom_crossings()],
        "conversations": list(step.threads),
    }


def to_data(history: History) -> dict[str, Any]:
    releases = []
    for r in history.releases:
        stats = release_stats(r)
        releases.append({"label": r.label, "date": r.date, "side": r.written, "commit": r.commit, "kind": r.kind,
                         "variants": len(r.variants), "axes": {a: list(v) for a, v in r.axes},
                         "total_min": stats[0] if stats else None, "total_median": stats[1] if stats else None,
                         "total_max": stats[2] if stats else None})
    return {"releases": releases, "steps": [step_data(s) for s in history.steps]}


def to_json(history: History) -> str:
    return json.dumps(to_data(history), indent=2, ensure_ascii=False, sort_keys=True) + "\n"


# ---------------------------------------------------------------------------
# text


def to_text(history: History) -> str:
    out = [f"promptspec history: {' -> '.join(_clean(r.label) for r in history.releases)}"]
    for r in history.releases:
        stats = release_stats(r)
        fig = f"{_fmt_num(stats[0])} / {_fmt_num(stats[1])} / {_fmt_num(stats[2])} tokens (min/median/max)" if stats else "no variants"
        out.append(f"  {_clean(r.label)}{' (' + r.date + ')' if r.date else ''}: {len(r.variants)} variants, {fig}"
                   + ("  [lock file: counts only]" if r.kind == "lock" else ""))
    for step in history.steps:
        out.append("")
        out.append(f"== step {step.index}: {_clean(step.title)}")
        out.append(f"variants: {len(step.diff.matched)} matched ({len(step.diff.changed)} changed, {len(step.diff.unchanged)} unchanged), "
                   f"{len(step.added)} added, {len(step.removed)} removed")
        out += [f"  {_clean(line)}" for line in axis_lines(step)]
        if step.added:
            out.append(f"  added variants: {_clean(step.added_reach.text())}")
        if step.removed:
            out.append(f"  removed variants: {_clean(step.removed_reach.text())}")
        stats = step.delta_stats()
        if stats:
            out.append(f"tokens Δ per variant: min {_signed(stats[0])}, median {_signed(stats[1])}, max {_signed(stats[2])}")
        top = step.largest_increases(TOP)
        if top:
            out.append("largest increases:")
            out += [f"  {_clean(d.id)}  {d.total_before} -> {d.total_after} ({_signed(d.delta)})" for d in top]
        if step.changes:
            out.append("changes:")
            for c in step.changes:
                lo, hi = c.delta_range
                out.append(f"  [{c.id}] {_clean(change_title(c))}  {_range(lo, hi)} tokens  in {_clean(step.reach(c).text())}")
        for o in step.over_budget:
            out.append(f"over budget: {o.fragment} up to {o.max_tokens} tokens > {o.budget} in {o.variants} variants{' (new)' if o.new else ''}")
        for vid, before, after in step.headroom_crossings():
            out.append(f"past auto-compaction: {_clean(vid)} headroom {before} -> {after}")
        if step.threads:
            out.append("conversations:")
            out += [f"  {_clean(line)}" for line in step.threads]
        for c in step.changes:
            if c.diff:
                out.append(f"--- [{c.id}] {_clean(change_title(c))}")
                out.append(_clean(c.diff).rstrip("\n"))
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------
# markdown


def step_markdown(step: Step, *, heading: str = "##", diffs: bool = True, brief: bool = False) -> str:
    """One step as Markdown; `brief`: its heading and counts only."""
    out = [f"{heading} {md_text(step.title)}", ""]
    stats = step.delta_stats()
    out.append(f"**Variants:** {len(step.diff.matched)} matched ({len(step.diff.changed)} changed, {len(step.diff.unchanged)} unchanged), "
               f"{len(step.added)} added, {len(step.removed)} removed.")
    if stats:
        out.append(f"**Tokens Δ per variant:** min {_signed(stats[0])}, median {_signed(stats[1])}, max {_signed(stats[2])}.")
    out.append("")
    if brief:
        return "\n".join(out) + "\n"
    lines = axis_lines(step)
    if lines or step.added or step.removed:
        out.append("**Axis values and variants**")
        out.append("")
        out += [f"- {md_text(line)}" for line in lines]
        if step.added:
            out.append(f"- added variants: {md_text(step.added_reach.text())}")
        if step.removed:
            out.append(f"- removed variants: {md_text(step.removed_reach.text())}")
        out.append("")
    if step.changes:
        out += ["| | change | reaches | tokens Δ |", "|---|---|---|---|"]
        for c in step.changes:
            out.append(f"| {c.id} | {md_text(change_title(c))} | {md_text(step.reach(c).text())} | {_range(*c.delta_range)} |")
        out.append("")
    top = step.largest_increases(TOP)
    if top:
        out += ["**Largest increases**", "", "| variant | before | after | Δ |", "|---|---|---|---|"]
        out += [f"| {md_span(d.id)} | {d.total_before:,} | {d.total_after:,} | {_signed(d.delta)} |" for d in top]
        out.append("")
    if step.over_budget:
        out.append("**Sections over the fragment budget**")
        out.append("")
        out += [f"- {md_span(o.fragment)}: up to {o.max_tokens:,} tokens (budget {o.budget:,}) in {o.variants} variants{' — new' if o.new else ''}"
                for o in step.over_budget]
        out.append("")
    crossings = step.headroom_crossings()
    if crossings:
        out.append("**Now past auto-compaction:** " + ", ".join(f"{md_span(vid)} ({after:,})" for vid, _, after in crossings))
        out.append("")
    if step.threads:
        out += ["**Conversations**", ""] + [f"- {md_text(line)}" for line in step.threads] + [""]
    text = "\n".join(out) + "\n"
    return text + "".join(_diff_block(c) for c in step.changes if c.diff) if diffs else text


def _diff_block(c: ChangeGroup) -> str:
    return f"<details><summary>{c.id}: {md_escape(change_title(c))}</summary>\n\n{fenced(c.diff).rstrip(chr(10))}\n\n</details>\n\n"


CUT_NOTE_RESERVE = 400
"""Characters kept free for the closing note of a cut history."""


def to_markdown(history: History, *, max_chars: int | None = None, command: str | None = None) -> str:
    """The whole history; with `max_chars` (a PR comment: GitHub holds
    65,536), never longer: the release table first, then each step's
    summary in order (its counts alone where the summary does not fit),
    then the diffs, each whole or left out, and a closing note says what
    was cut."""
    if max_chars is not None and max_chars < MIN_MARKDOWN_CHARS:
        raise ValueError(f"--max-chars must be at least {MIN_MARKDOWN_CHARS}")
    out = ["# Prompt history", "", "| release | date | variants | tokens min | median | max |", "|---|---|---|---|---|---|"]
    for r in history.releases:
        stats = release_stats(r)
        cells = [_fmt_num(x) for x in stats] if stats else ["-", "-", "-"]
        out.append(f"| {md_text(r.label)} | {md_text(r.date or '')} | {len(r.variants):,} | " + " | ".join(cells) + " |")
    head = "\n".join(out) + "\n\n"
    steps = [(("\n" if i else "") + step_markdown(step, diffs=False), [_diff_block(c) for c in step.changes if c.diff])
             for i, step in enumerate(history.steps)]
    if max_chars is None:
        return head + "".join(summary + "".join(diffs) for summary, diffs in steps)
    room = max_chars - len(head) - CUT_NOTE_RESERVE
    shown: list[tuple[str, list[str]]] = []
    whole: list[int] = []  # the steps shown with their whole summary: only these get diffs
    cut: list[str] = []
    briefs = [("\n" if i else "") + step_markdown(step, brief=True) for i, step in enumerate(history.steps)]
    for i, (summary, _) in enumerate(steps):
        later = sum(len(b) for b in briefs[i + 1:])  # every later step keeps at least its counts
        if len(summary) + later <= room:
            whole.append(i)
        else:
            summary = briefs[i]
            cut.append(f"the details of step {i + 1}" if len(summary) <= room else f"step {i + 1}")
            summary = summary if len(summary) <= room else ""
        room -= len(summary)
        shown.append((summary, []))
    for i in whole:
        left = 0
        for block in steps[i][1]:
            if len(block) <= room:
                room -= len(block)
                shown[i][1].append(block)
            else:
                left += 1
        if left:
            cut.append(f"{left} diff{'s' if left > 1 else ''} of step {i + 1}")
    text = head + "".join(summary + "".join(diffs) for summary, diffs in shown)
    if cut:
        listed = ", ".join(cut[:8]) + (f" and {len(cut) - 8} more" if len(cut) > 8 else "")
        rerun = md_span(command + " --format markdown --out FILE") if command else "this history with --out FILE"
        note = f"> :scissors: Cut to fit {max_chars} characters: {md_text(listed)}. Run {rerun} for everything (a file is not cut)."
        text += "\n" + note[: max_chars - len(text) - 2] + "\n"
    return text


def format_history(history: History, fmt: str, *, max_chars: int | None = None, command: str | None = None) -> str:
    if fmt == "json":
        return to_json(history)
    if fmt == "markdown":
        return to_markdown(history, max_chars=max_chars, command=command)
    return to_text(history)


__all__ = ["FORMATS", "axis_lines", "change_title", "format_history", "release_stats", "step_data", "step_markdown", "to_data", "to_json",
           "to_markdown", "to_text"]
