"""Review: the one model of what changed between two sides.

A *side* is a live pipeline Result or a lock's data (prompts.lock.json).  Both
comparisons produce the same `Diff` -- `diff.compare(base, head)` for two
Results, `lockfile.compare(lock, result)` for a lock and a Result -- and every
consumer reads that one type: `promptspec diff` (report.py: text, markdown,
JSON), `promptspec check` (check_output.py: text, JSON, GitHub, SARIF), the
site's Changes page and badges (site/pages/changes.py), and every step of a
`promptspec history` (history/compare.py: two Releases, which may differ in
their axes).

Variants are matched by id when both sides have the same axes; when an axis
or its values change (a release adds a model, or a whole axis), by their
values on the axes both sides share (`match_variants`).  `Diff.matched` holds
every matched pair (base id, head id) in the comparer's order, and the axes'
changes are in `Diff.axis_changes`.  A part present on one side only may be
matched to one on the other side under another name or in another place (the
history does this: base instructions moving from the `instructions` field
into a developer message); its ChangeGroup is then of kind "moved" (another
place) or "renamed" (same place), with `fragment_before` and `how`.

A lock records hashes and token counts, not text, so a Diff whose base is a
lock (`base_kind == "lock"`) has no texts: its ChangeGroups carry
`before_text`/`after_text`/`diff` None, its section states no text.  A lock
cannot tell a move from a change either way, so it records a moved section as
a SectionChange of kind "moved" in send order (and a section whose tokens
alone differ as "retokenized"); a live Diff has the full Move beside it.

Plain frozen dataclasses and pure rules; nothing here imports another module
of review/ at module level, so every comparer and formatter can import it.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from ..spec.provenance import SourceRef

INSTRUCTIONS = "(instructions)"
"""Key used for base instructions wherever sections are listed by fragment name."""
TOOL_PREFIX = "tool:"
"""Tools are listed beside sections as `tool:NAME` (NAME: the tool file's stem);
a fragment name cannot contain ':', so the two never clash."""
GROUP_ORDER = {"developer": 0, "separate_developer": 1, "user": 2, "tools": 3}
"""The order of a request's parts by group (instructions first, then these)."""

PARAMETERS = "(parameters)"
"""The body's request parameters (reasoning, tool_choice, ...), compared as one part."""

# ---------------------------------------------------------------------------
# Data


@dataclass(frozen=True)
class SectionState:
    """One section (or the base instructions, a tool, the parameters) on one side.

    From a lock: `text` is None and `sha256` holds the lock's digest; `tokens`
    is what the lock records (None when it records none)."""

    fragment: str  # fragment name, or INSTRUCTIONS
    group: str  # developer | separate_developer | user | instructions
    role: str
    position: int  # 1-based within its group, in send order (0 for instructions)
    text: str | None
    tokens: int
    estimate: int
    source: str  # the fragment's own template (compatibility; see `sources`)
    sources: tuple[SourceRef, ...] = ()  # everything the text was built from
    label: str = ""  # how the section reads: its start marker, else its first line
    sha256: str = ""  # a lock side's recorded digest (a live side has the text)


@dataclass(frozen=True)
class SectionChange:
    """A section whose text changed, or which appeared/disappeared, in one variant."""

    fragment: str
    kind: str  # "changed" | "added" | "removed"; from a lock also "moved" | "retokenized"
    before: SectionState | None
    after: SectionState | None
    group_id: str = ""  # the ChangeGroup holding its diff
    changed_sources: tuple[str, ...] = ()  # the sources whose content differs between the sides

    @property
    def tokens_before(self) -> int:
        return (self.before.tokens or 0) if self.before else 0

    @property
    def tokens_after(self) -> int:
        return (self.after.tokens or 0) if self.after else 0

    @property
    def delta(self) -> int:
        return self.tokens_after - self.tokens_before


@dataclass(frozen=True)
class Move:
    """A section present on both sides whose place in the send order changed."""

    fragment: str
    group_before: str
    group_after: str
    position_before: int
    position_after: int
    order_before: tuple[str, ...]  # the fragments of its group, base side
    order_after: tuple[str, ...]
    group_id: str = ""
    changed_sources: tuple[str, ...] = ()


@dataclass(frozen=True)
class VariantTotals:
    """An added or removed variant: just its figures."""

    id: str
    total: int
    estimate: int | None  # None: a lock that records none
    headroom: int | None


def signed(n: int) -> str:
    """A token count with its sign, as every review output writes a change ("+12", "±0", "-3")."""
    return f"+{n}" if n > 0 else ("±0" if n == 0 else str(n))


def text_digest(text: str | None) -> str:
    """A text's sha256 ("-" for none): what groups identical changes, and the JSON's `sha256`."""
    return "-" if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()


def percent_change(before: int, after: int) -> float | None:
    """Growth in percent of `before`; None when there was nothing before."""
    return None if not before else 100.0 * (after - before) / before


def crosses_headroom(before: int | None, after: int | None) -> bool:
    """True when a variant fit under the auto-compaction limit before and no longer does."""
    return before is not None and after is not None and before >= 0 > after


def largest_increases(changed: Iterable[Any], n: int = 10) -> list[Any]:
    """The `n` changed variants (anything with `.id` and `.delta`) that grew most, ties by id."""
    return sorted((c for c in changed if c.delta > 0), key=lambda c: (-c.delta, c.id))[:n]


def headroom_crossings(changed: Iterable[Any], added: Iterable[tuple[str, int | None]]) -> list[tuple[str, int | None, int]]:
    """(variant, headroom before or None if added, headroom after) for the
    variants that now go past auto-compaction: `changed` holds anything with
    `.id` and `.crosses_headroom` (and the two headrooms), `added` (id,
    headroom) pairs.  The one rule for a diff and the site's Changes page."""
    out = [(c.id, c.headroom_before, c.headroom_after) for c in changed if c.crosses_headroom]
    out += [(vid, None, hr) for vid, hr in added if hr is not None and hr < 0]
    return sorted(out, key=lambda r: r[0])


@dataclass(frozen=True)
class VariantChange:
    """One variant present on both sides whose request differs."""

    id: str
    total_before: int
    total_after: int
    estimate_before: int | None  # None: a lock that records none
    estimate_after: int | None  # None: a side that records none (a history's release)
    encoding_before: str | None
    encoding_after: str
    headroom_before: int | None
    headroom_after: int | None
    instructions: SectionChange | None
    sections: tuple[SectionChange, ...]
    moves: tuple[Move, ...]

    @property
    def delta(self) -> int:
        return self.total_after - self.total_before

    @property
    def percent(self) -> float | None:
        return percent_change(self.total_before, self.total_after)

    @property
    def crosses_headroom(self) -> bool:
        """True when the variant fit under the auto-compaction limit before and no longer does."""
        return crosses_headroom(self.headroom_before, self.headroom_after)

    @property
    def all_changes(self) -> tuple[SectionChange, ...]:
        """The base instructions' change, then the sections', in send order."""
        return ((self.instructions,) if self.instructions else ()) + self.sections


@dataclass(frozen=True)
class ChangeGroup:
    """One distinct change, and every variant it appears in.

    For text changes the key is (fragment, before text, after text); for moves
    it is (fragment, group before, group after).  A comparer that matches
    parts across names and places (a history step) keys by both names, both
    texts and both places, and sets `fragment_before`, `place_before`,
    `place_after` and `how`."""

    id: str  # "c1", "c2", ... in report order
    fragment: str  # the head side's name (the base side's for "removed")
    kind: str  # "changed" | "added" | "removed" | "moved"; from a history also "renamed"; from a lock also "retokenized"
    sources: tuple[str, ...]  # keys of everything the section was built from, either side ("path" or "path#field")
    before_text: str | None
    after_text: str | None
    variants: tuple[str, ...]
    tokens: tuple[tuple[str, int, int], ...]  # (variant, before, after) — counts depend on each model's encoding
    diff: str | None  # unified diff of the text ("" for moves; None when the base is a lock, which has no text)
    moves: tuple[Move, ...] = ()
    changed_sources: tuple[str, ...] = ()  # of `sources`, those whose content changed: what the edit was
    section: str = ""  # the section as it reads (start marker or first line)
    refs: tuple[SourceRef, ...] = ()  # the sources with line ranges and digests (head side, else base)
    fragment_before: str = ""  # the base side's name when it differs (a part matched under another name)
    place_before: str | None = None  # where the part sits on each side (instructions, developer, user, tools, ...),
    place_after: str | None = None  # when the comparer groups by place; None: absent on that side, or not grouped by place
    how: str = ""
    """How a part was matched to its counterpart: "place" or "order" (a move),
    "base instructions", "same text", "same marker", "similar text" (under
    another name); "" when matched by name."""

    @property
    def name_before(self) -> str | None:
        """The part's name on the base side (None: added)."""
        return None if self.kind == "added" else (self.fragment_before or self.fragment)

    @property
    def name_after(self) -> str | None:
        """The part's name on the head side (None: removed)."""
        return None if self.kind == "removed" else self.fragment

    @property
    def files(self) -> tuple[str, ...]:
        """The spec files behind the section."""
        return tuple(sorted({source_path(s) for s in self.sources}))

    @property
    def changed_files(self) -> tuple[str, ...]:
        return tuple(sorted({source_path(s) for s in self.changed_sources}))

    @property
    def delta_range(self) -> tuple[int, int]:
        deltas = [after - before for _, before, after in self.tokens] or [0]
        return min(deltas), max(deltas)

    @property
    def label(self) -> str:
        if self.fragment in (INSTRUCTIONS, PARAMETERS) or self.fragment.startswith(TOOL_PREFIX):
            return part_label(self.fragment)
        return f"section {self.fragment}" + (f" {self.section}" if self.section and self.section != f"({self.fragment})" else "")


def part_label(name: str) -> str:
    """How a report names a part: base instructions, a fragment, a tool, the parameters."""
    if name == INSTRUCTIONS:
        return "base instructions"
    if name == PARAMETERS:
        return "request parameters"
    if name.startswith(TOOL_PREFIX):
        return f"tool {name[len(TOOL_PREFIX):]}"
    return f"fragment {name}"


LINE_RANGE = re.compile(r":\d+(?:-\d+)?$")
"""The `:N` or `:N-M` a source string ends in when it names lines of its file."""


def source_path(ref: str) -> str:
    """The file of a source string ("models.json#harbor-5.context_window:4" ->
    "models.json", "fragments/a.md:3-5" -> "fragments/a.md"); the one parser
    for a live side's sources and a lock's (whose keys come from a pull request:
    a tail that is not a line range stays part of the name)."""
    if "#" in ref:
        return ref.split("#", 1)[0]
    return LINE_RANGE.sub("", ref)


@dataclass(frozen=True)
class FileChange:
    path: str
    status: str  # "added" | "removed" | "modified"


@dataclass(frozen=True)
class AxisChange:
    """An axis whose values differ between the sides (or which one side lacks)."""

    axis: str
    added: tuple[str, ...]
    removed: tuple[str, ...]
    refused: tuple[tuple[str, str], ...] = ()  # (value, message): values the head side refuses and the base did not
    axis_added: bool = False
    axis_removed: bool = False


def axis_changes(base_axes: Sequence[tuple[str, Sequence[str]]], head_axes: Sequence[tuple[str, Sequence[str]]],
                 base_refused: Mapping[str, Mapping[str, str]] | None = None,
                 head_refused: Mapping[str, Mapping[str, str]] | None = None) -> tuple[AxisChange, ...]:
    """The axes (in base order, then the head's new ones) whose values came, went or are newly refused."""
    out = []
    ba, ha = dict(base_axes), dict(head_axes)
    for axis in list(dict.fromkeys([*ba, *ha])):
        before, after = ba.get(axis, ()), ha.get(axis, ())
        added = tuple(v for v in after if v not in before)
        removed = tuple(v for v in before if v not in after)
        refused_now = (head_refused or {}).get(axis, {})
        refused_before = (base_refused or {}).get(axis, {})
        refused = tuple((v, refused_now[v]) for v in refused_now if v not in refused_before)
        if added or removed or refused or (axis in ba) != (axis in ha):
            out.append(AxisChange(axis, added, removed, refused, axis not in ba, axis not in ha))
    return tuple(out)


def match_variants(base_axes: Sequence[str], base: Mapping[str, Iterable[tuple[str, str]]], head_axes: Sequence[str],
                   head: Mapping[str, Iterable[tuple[str, str]]]) -> tuple[list[tuple[str, str]], list[str], list[str]]:
    """(pairs (base id, head id) in head order, head ids with no counterpart, base ids with no counterpart).

    `base`/`head`: variant id -> its (axis, value) pairs.  With the same axes
    on both sides a variant is matched by id; otherwise by its values on the
    axes both sides have.  One base variant may pair with several head
    variants (an axis appeared); several base variants for one key (an axis
    disappeared) pair with nothing."""
    shared = [a for a in base_axes if a in head_axes]
    if tuple(shared) == tuple(base_axes) == tuple(head_axes):
        pairs = [(vid, vid) for vid in head if vid in base]
        return pairs, [v for v in head if v not in base], [v for v in base if v not in head]

    def key(values: Iterable[tuple[str, str]]) -> tuple[str | None, ...]:
        found = dict(values)
        return tuple(found.get(a) for a in shared)

    by_key: dict[tuple, list[str]] = {}
    for vid, values in base.items():
        by_key.setdefault(key(values), []).append(vid)
    pairs, added = [], []
    used: set[str] = set()
    for vid, values in head.items():
        candidates = by_key.get(key(values), [])
        if len(candidates) == 1:
            pairs.append((candidates[0], vid))
            used.add(candidates[0])
        else:
            added.append(vid)
    return pairs, added, [vid for vid in base if vid not in used]


@dataclass(frozen=True)
class Diff:
    """Everything a review needs; see the module docstring."""

    base_label: str
    head_label: str
    added: tuple[VariantTotals, ...]
    removed: tuple[VariantTotals, ...]
    changed: tuple[VariantChange, ...]
    unchanged: tuple[str, ...]
    groups: tuple[ChangeGroup, ...]
    files: tuple[FileChange, ...] = ()
    budget: int | None = None
    _status: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)
    reach: Mapping[str, tuple[str, ...]] = field(default_factory=dict, compare=False)
    """Spec file -> the changed variants whose change it caused (by content digests)."""
    axes: tuple[tuple[str, tuple[str, ...]], ...] = ()
    universe: tuple[str, ...] = ()
    """Every variant id on either side: what an axis summary counts against."""
    breaches: tuple[Any, ...] = ()
    """Budget breaches (review/budgets.py) of the head side, set by the caller."""
    conversations: tuple[Any, ...] = ()
    """review/conversations.py ConversationChange per later-turn change (set by the caller)."""
    base_kind: str = "result"
    """"result" (a pipeline Result: texts known) or "lock" (a lock's data: hashes and counts)."""
    other: tuple[str, ...] = ()
    """A lock base: its top-level keys (sources, axes, ...) that differ from what the spec gives."""
    new_files: frozenset[str] = frozenset()
    """A lock base: changed source files the lock never recorded (added since)."""
    matched: tuple[tuple[str, str], ...] = ()
    """(base id, head id) of every variant on both sides, changed or not, in
    the comparer's order (by id for diff and lock; a history's in head order,
    where an id may differ when the axes do).  `changed` and `unchanged` hold
    head ids."""
    axis_changes: tuple[AxisChange, ...] = ()
    """The axes whose values differ between the sides (see `match_variants`)."""
    head_kind: str = "result"
    """As `base_kind`, for the head side (a history may end in a lock file)."""

    def base_id(self, head_id: str) -> str:
        """The base side's id of a matched variant (the same id unless the axes changed)."""
        return self._by_id[2].get(head_id, head_id)

    @property
    def matches(self) -> bool:
        """Nothing differs (a lock base: nor its top-level records): `check` passes."""
        return not (self.added or self.removed or self.changed or self.other)

    def describe(self, ids: Sequence[str]) -> str:
        """'24 of 88 variants — mode = plan (all models)', or the ids no axis rule covers (reach.py)."""
        from .reach import describe

        return describe(list(ids), self.universe, self.axes)

    def headline(self) -> str:
        """How many changed, the Δ per variant and the largest; never a sum over
        variants, which are never sent together."""
        if not self.changed:
            return ""
        top = max(self.changed, key=lambda c: (abs(c.delta), c.delta, c.id))
        lo, hi = min(c.delta for c in self.changed), max(c.delta for c in self.changed)
        per = signed(lo) if lo == hi else f"{signed(lo)}…{signed(hi)}"
        return (f"{len(self.changed)} of {len(self.universe)} variants changed; Δ per variant {per} tokens; "
                f"largest Δ {signed(top.delta)} tokens ({top.id})")

    @property
    def is_empty(self) -> bool:
        return not (self.added or self.removed or self.changed or self.conversations)

    def status_of(self, variant_id: str) -> str:
        """"added" | "removed" | "changed" | "unchanged" | "unknown": for a per-variant badge."""
        return self._status.get(variant_id, "unknown")

    def variant(self, variant_id: str) -> VariantChange | None:
        return self._by_id[0].get(variant_id)

    def group(self, group_id: str) -> ChangeGroup:
        return self._by_id[1][group_id]

    @functools.cached_property
    def _by_id(self) -> tuple[dict[str, VariantChange], dict[str, ChangeGroup], dict[str, str]]:
        """Changed variants and groups by id (every variant page of a site looks its own up), base ids by head id."""
        return {c.id: c for c in self.changed}, {g.id: g for g in self.groups}, {h: b for b, h in self.matched}

    def largest_increases(self, n: int = 10) -> list[VariantChange]:
        return largest_increases(self.changed, n)

    def headroom_crossings(self) -> list[tuple[str, int | None, int]]:
        """(variant, headroom before or None if added, headroom after) for variants that now go past auto-compaction."""
        return headroom_crossings(self.changed, ((a.id, a.headroom) for a in self.added))

    def budget_crossings(self) -> list[tuple[str, int | None, int]]:
        """(variant, total before or None, total after) for variants now over --budget that were not before."""
        if self.budget is None:
            return []
        out = [(c.id, c.total_before, c.total_after) for c in self.changed if c.total_before <= self.budget < c.total_after]
        out += [(a.id, None, a.total) for a in self.added if a.total > self.budget]
        return sorted(out, key=lambda r: r[0])

    def files_to_variants(self) -> dict[str, tuple[str, ...]]:
        """Changed file -> the variants its change reached (a changed section built from it)."""
        return {f.path: self.reach.get(f.path, ()) for f in self.files}


def status_map(unchanged: Iterable[str], added: Iterable[str], removed: Iterable[str], changed: Iterable[str]) -> dict[str, str]:
    """variant id -> "unchanged" | "added" | "removed" | "changed": what `Diff.status_of` reads."""
    status = {v: "unchanged" for v in unchanged}
    status.update({v: "added" for v in added})
    status.update({v: "removed" for v in removed})
    status.update({v: "changed" for v in changed})
    return status
