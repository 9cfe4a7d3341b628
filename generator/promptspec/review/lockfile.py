"""`prompts.lock.json`: a committed record of what every variant sends.

The lock pins, per variant, a sha256 of the exact request (the canonical JSON
of the Responses API payload) and its token figures, plus a hash and count per
section.  `promptspec check` recomputes them and fails when they differ, so a
template edit that changes what the model sees cannot land without the lock
(and so the reviewer) showing it.  The file is written with sorted keys, two
spaces and a trailing newline so its own git diff is small and stable.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..assemble import export
from ..errors import SpecError, escape_controls
from ..measure.figures import TOOLS_COUNT_RULE
from ..spec.files import read_regular_bytes

LOCK_FILE = "prompts.lock.json"
"""Reserved name in a spec folder: the loader ignores it; lint should not call it an orphan."""
MAX_LOCK_BYTES = 64 * 1024 * 1024
"""A lock holds a few hundred bytes per variant; anything near this is hostile."""

FORMAT = 1
HASH_RULE = "sha256 of the UTF-8 canonical JSON (sorted keys, no spaces) of the Responses API payload"
TOKENS_RULE = f"total = instructions + messages + tools; tools: {TOOLS_COUNT_RULE}"
GROUP_ORDER = {"developer": 0, "separate_developer": 1, "user": 2, "tools": 3}
INSTRUCTIONS = "(instructions)"
"""Key used for base instructions wherever sections are listed by fragment name."""
TOOL_PREFIX = "tool:"
"""Tools are listed beside sections as `tool:NAME` (NAME: the tool file's stem);
a fragment name cannot contain ':', so the two never clash."""


# ---------------------------------------------------------------------------
# Hashing (shared with diff.py, so a lock and a diff agree on "changed")


def canonical_json(data: Any) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def request_hash(request) -> str:
    """The content hash of an assembled request: what is actually sent."""
    return hashlib.sha256(canonical_json(export.responses_payload(request))).hexdigest()


def section_group(spec, section) -> str:
    """The layout group a section belongs to (developer, separate_developer, user)."""
    try:
        return spec.slot_message(section.slot)
    except KeyError:
        return section.role


def moved_fragments(before: Mapping[str, str], after: Mapping[str, str], order_before: Mapping[str, tuple[str, ...]], order_after: Mapping[str, tuple[str, ...]]) -> set[str]:
    """Sections present on both sides whose place changed: those that changed
    group, and within a group those outside the longest common order.  A
    section inserted or removed shifts the positions of the others without
    moving them, so `check` and `diff` (which both use this) agree."""
    common = set(before) & set(after)
    moved: set[str] = {f for f in common if before[f] != after[f]}
    for group in sorted(set(order_before) & set(order_after)):
        seq_b = [f for f in order_before[group] if f in common and after[f] == group]
        seq_a = [f for f in order_after[group] if f in common and before[f] == group]
        moved |= reordered(seq_b, seq_a)
    return moved


def reordered(before: Sequence[str], after: Sequence[str]) -> set[str]:
    """Of the names in both orders, those outside their longest common order:
    what a reader sees move (an insertion shifts the others without moving them)."""
    if list(before) == list(after):
        return set()
    sm = difflib.SequenceMatcher(None, before, after, autojunk=False)
    kept = {before[i + k] for i, _, n in sm.get_matching_blocks() for k in range(n)}
    return set(before) - kept


def part_refs(req) -> dict[str, tuple[Any, ...]]:
    """Provenance of a request's parts other than sections: tools (their file,
    by the JSON sent) and the request parameters (spec.yaml's request settings)."""
    from ..spec.provenance import SourceRef, digest, field_ref

    out: dict[str, tuple[Any, ...]] = {}
    for tool in getattr(req, "tools", ()) or ():
        out[TOOL_PREFIX + tool.name] = (SourceRef(tool.source, "", tool.line or 0, tool.line or 0, digest(tool.serialized)),)
    params = getattr(req, "params", None)
    if params:
        out["(parameters)"] = (field_ref("spec.yaml", "request", dict(params)),)
    return out


def source_pairs(result) -> set[tuple[str, str]]:
    """Every (source key, content digest) a side's texts were built from, and its layout."""
    from ..spec.provenance import field_ref

    memo = result.spec.memo if hasattr(result, "spec") else {}
    hit = memo.get(("source_pairs", id(result)))
    if hit is not None:
        return hit
    out: set[tuple[str, str]] = set()
    seen: set[int] = set()
    for req in result.requests:
        for obj in (req.base, *(s for _, _, s in req.sections)):
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            out.update((r.key, r.digest) for r in getattr(obj, "sources", ()))
        for refs in part_refs(req).values():
            out.update((r.key, r.digest) for r in refs)
    layout = field_ref("spec.yaml", "layout", {k: list(v) for k, v in result.spec.layout.items()})
    out.add((layout.key, layout.digest))
    memo[("source_pairs", id(result))] = out
    return out


def sources_data(result) -> dict[str, Any]:
    """The lock's `sources`: key -> digest (a sorted list when one key has several)."""
    by_key: dict[str, set[str]] = {}
    for key, dig in source_pairs(result):
        by_key.setdefault(key, set()).add(dig)
    return {k: (sorted(v)[0] if len(v) == 1 else sorted(v)) for k, v in sorted(by_key.items())}


def _pairs_of(data: Mapping[str, Any]) -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    for key, value in (data.get("sources") or {}).items():
        for dig in value if isinstance(value, list) else [value]:
            if isinstance(dig, str):
                out.add((str(key), dig))
    return out


# ---------------------------------------------------------------------------
# Build and serialise


def variant_entry(spec, measure) -> dict[str, Any]:
    req = measure.request
    sections: dict[str, Any] = {}
    positions: dict[str, int] = {}
    for (_, _, section), (_, _, tokens, _) in zip(req.sections, measure.section_tokens()):
        group = section_group(spec, section)
        positions[group] = positions.get(group, 0) + 1
        sections[section.fragment] = {
            "group": group,
            "position": positions[group],
            "sha256": sha256_text(section.text),
            "tokens": tokens,
        }
    entry: dict[str, Any] = {
        "sha256": request_hash(req),
        "model": req.model,
        "encoding": measure.encoding,
        "tokens": {
            "total": measure.total,
            "instructions": measure.base,
            "messages": [{"role": m.role, "tokens": n} for m, n in zip(req.messages, measure.messages)],
            "codex_estimate": measure.estimate,
        },
        "instructions": {"sha256": sha256_text(req.base.text), "tokens": measure.base},
        "sections": sections,
    }
    if req.tools:
        # The total includes the tool list (its serialised JSON, counted offline).
        entry["tokens"]["tools"] = measure.tools
        entry["tools"] = {
            t.name: {"position": i, "placement": req.tool_placement, "sha256": sha256_text(t.serialized), "tokens": n}
            for i, (t, n) in enumerate(zip(req.tools, measure.tool_counts), 1)
        }
    return entry


def variant_entries(result, memo: dict[int, tuple[Any, dict[str, Any]]] | None = None) -> dict[str, dict[str, Any]]:
    """Variant id -> variant_entry.  `memo` (id(measure) -> (measure, entry)),
    kept by a caller across the builds of one `mkdocs serve`, reuses an entry
    while its Measure is the very same object (pipeline.Session keeps the
    objects of the variants an edit cannot change); it ends holding this
    result's entries only."""
    out: dict[str, dict[str, Any]] = {}
    fresh: dict[int, tuple[Any, dict[str, Any]]] = {}
    for m in result.measures:
        hit = memo.get(id(m)) if memo is not None else None
        entry = hit[1] if hit is not None and hit[0] is m else variant_entry(result.spec, m)
        fresh[id(m)] = (m, entry)
        out[m.request.variant.id] = entry
    if memo is not None:
        memo.clear()
        memo.update(fresh)
    return out


def build(result, memo: dict[int, tuple[Any, dict[str, Any]]] | None = None) -> dict[str, Any]:
    """Lock data for a pipeline Result (plain JSON-ready dicts); `memo`: variant_entries."""
    return {
        "format": FORMAT,
        "generator": "promptspec",
        "hash": HASH_RULE,
        "tokens": TOKENS_RULE,
        # Variant ids are the axis values joined by "/": the names say which is which (for `history` over lock files).
        "axes": [{"name": name, "values": list(values)} for name, values in result.spec.axes],
        "variants": variant_entries(result, memo),
        "sources": sources_data(result),
    }


def dumps(data: Mapping[str, Any]) -> str:
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def default_path(spec_dir: str | Path) -> Path:
    return Path(spec_dir) / LOCK_FILE


def write(path: str | Path, data: Mapping[str, Any]) -> bool:
    """Write atomically (temp file beside it, then os.replace).  Returns False
    when the file already held exactly this content (nothing is touched)."""
    path = Path(path)
    text = dumps(data)
    try:
        if read_regular_bytes(path, limit=MAX_LOCK_BYTES, what="lock file") == text.encode("utf-8"):
            return False
    except SpecError:
        pass  # missing, a FIFO or device, or too big: replaced below, never read
    if not path.parent.is_dir():
        raise SpecError("folder for the lock file does not exist", path.parent, hint="create it or pass --lock PATH")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return True


def read(path: str | Path) -> dict[str, Any]:
    """Load and shape-check a lock file; a user error names the file."""
    path = Path(path)
    hint = "regenerate it with `promptspec lock`"
    if not path.exists() and not path.is_symlink():
        error = SpecError("no lock file here", path, hint="run `promptspec lock` to create it, then commit it")
        raise error from None
    try:
        text = read_regular_bytes(path, limit=MAX_LOCK_BYTES, what="lock file").decode("utf-8")
    except SpecError as exc:
        raise SpecError(f"cannot read the lock file: {exc.message}", path, hint=hint) from None
    except UnicodeDecodeError as exc:
        raise SpecError(f"lock file is not valid UTF-8 (byte {exc.start})", path, hint=hint) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SpecError(f"lock file is not valid JSON: {exc.msg}", path, line=exc.lineno, column=exc.colno, hint=hint) from None
    except RecursionError:
        raise SpecError("lock file nests too deeply", path, hint=hint) from None
    except ValueError as exc:  # a number with more than 4,300 digits
        raise SpecError(f"lock file is not valid JSON: {str(exc).splitlines()[0]}", path, hint=hint) from None
    if not isinstance(data, dict) or not isinstance(data.get("variants"), dict):
        raise SpecError("lock file has no 'variants' object", path, hint=hint)
    if data.get("format") != FORMAT:
        raise SpecError(f"lock file format {data.get('format')!r} is not {FORMAT}", path, hint=hint)
    for vid, entry in data["variants"].items():
        if not isinstance(entry, dict) or not isinstance(entry.get("sha256"), str) or not isinstance(entry.get("tokens"), dict):
            raise SpecError(f"lock entry for {vid!r} is malformed", path, hint=hint)
    return data


# ---------------------------------------------------------------------------
# Compare a lock with a fresh result


@dataclass(frozen=True)
class LockSectionChange:
    fragment: str  # or INSTRUCTIONS
    kind: str  # "changed" | "added" | "removed" | "moved" | "retokenized"
    tokens_before: int | None
    tokens_after: int | None
    changed_sources: tuple[str, ...] = ()  # what changed behind it (when the lock records sources)

    @property
    def delta(self) -> int:
        return (self.tokens_after or 0) - (self.tokens_before or 0)


@dataclass(frozen=True)
class LockVariant:
    id: str
    total: int


@dataclass(frozen=True)
class LockVariantChange:
    id: str
    total_before: int
    total_after: int
    encoding_before: str | None
    encoding_after: str
    sections: tuple[LockSectionChange, ...]

    @property
    def delta(self) -> int:
        return self.total_after - self.total_before


@dataclass(frozen=True)
class LockDiff:
    """How the current spec differs from its lock (empty when they match)."""

    added: tuple[LockVariant, ...]
    removed: tuple[LockVariant, ...]
    changed: tuple[LockVariantChange, ...]
    unchanged: tuple[str, ...]
    other: tuple[str, ...] = ()  # top-level keys (sources, axes, ...) that differ from what the spec gives
    new_files: frozenset[str] = frozenset()  # changed source files the lock never recorded: added since

    @property
    def matches(self) -> bool:
        return not (self.added or self.removed or self.changed or self.other)

    def status_of(self, variant_id: str) -> str:
        """"added" | "removed" | "changed" | "unchanged" | "unknown": for a per-variant badge."""
        return self._status().get(variant_id, "unknown")

    def _status(self) -> dict[str, str]:
        out = {v: "unchanged" for v in self.unchanged}
        out.update({v.id: "added" for v in self.added})
        out.update({v.id: "removed" for v in self.removed})
        out.update({v.id: "changed" for v in self.changed})
        return out

    def to_data(self) -> dict[str, Any]:
        return {
            "matches": self.matches,
            "added": [{"id": v.id, "total": v.total} for v in self.added],
            "removed": [{"id": v.id, "total": v.total} for v in self.removed],
            "changed": [
                {
                    "id": c.id,
                    "total_before": c.total_before,
                    "total_after": c.total_after,
                    "delta": c.delta,
                    "encoding_before": c.encoding_before,
                    "encoding_after": c.encoding_after,
                    "sections": [
                        {"fragment": s.fragment, "kind": s.kind, "tokens_before": s.tokens_before, "tokens_after": s.tokens_after, "delta": s.delta,
                         "changed_sources": list(s.changed_sources)}
                        for s in c.sections
                    ],
                }
                for c in self.changed
            ],
            "unchanged": len(self.unchanged),
            "other": list(self.other),
        }


def _section_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> tuple[LockSectionChange, ...]:
    out = []
    oi, ni = old.get("instructions") or {}, new["instructions"]
    if oi.get("sha256") != ni["sha256"]:
        out.append(LockSectionChange(INSTRUCTIONS, "changed", oi.get("tokens"), ni["tokens"]))
    elif oi.get("tokens") != ni["tokens"]:
        out.append(LockSectionChange(INSTRUCTIONS, "retokenized", oi.get("tokens"), ni["tokens"]))
    os_, ns = dict(old.get("sections") or {}), dict(new["sections"])
    for side, entry in ((os_, old), (ns, new)):
        for name, tool in (entry.get("tools") or {}).items():
            if isinstance(tool, dict):
                side[TOOL_PREFIX + name] = {**tool, "group": "tools"}

    def where(frag: str) -> tuple[int, int, str]:
        entry = ns.get(frag) or os_.get(frag) or {}
        position = entry.get("position")
        return (GROUP_ORDER.get(entry.get("group"), 9), position if isinstance(position, int) else 0, frag)

    order = sorted(set(os_) | set(ns), key=where)

    def orders(entries: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
        out: dict[str, list[tuple[int, str]]] = {}
        for frag, e in entries.items():
            if isinstance(e, dict):
                pos = e.get("position")
                out.setdefault(str(e.get("group")), []).append((pos if isinstance(pos, int) else 0, frag))
        return {g: tuple(f for _, f in sorted(v)) for g, v in out.items()}

    old_ok = {f: e for f, e in os_.items() if isinstance(e, dict)}
    moved = moved_fragments({f: str(e.get("group")) for f, e in old_ok.items()}, {f: str(e["group"]) for f, e in ns.items()}, orders(old_ok), orders(ns))
    for frag in order:
        a, b = os_.get(frag), ns.get(frag)
        if not isinstance(a, dict):
            out.append(LockSectionChange(frag, "added", None, b["tokens"]))
        elif b is None:
            out.append(LockSectionChange(frag, "removed", a.get("tokens"), None))
        elif a.get("sha256") != b["sha256"]:
            out.append(LockSectionChange(frag, "changed", a.get("tokens"), b["tokens"]))
        elif frag in moved:
            out.append(LockSectionChange(frag, "moved", a.get("tokens"), b["tokens"]))
        elif a.get("tokens") != b["tokens"]:
            out.append(LockSectionChange(frag, "retokenized", a.get("tokens"), b["tokens"]))
    return tuple(out)


def _total(entry: Mapping[str, Any]) -> int:
    total = (entry.get("tokens") or {}).get("total")
    return total if isinstance(total, int) else 0


def compare(lock_data: Mapping[str, Any], result, memo: dict[int, tuple[Any, dict[str, Any]]] | None = None) -> LockDiff:
    """Compare lock data (as read) with a fresh pipeline Result; when the lock
    records its sources, each change names the sources that changed behind it.
    `memo`: variant_entries."""
    diff = compare_data(lock_data, build(result, memo))
    if not lock_data.get("sources") or not diff.changed:
        return diff
    old = _pairs_of(lock_data)
    by_id = {r.variant.id: r for r in result.requests}
    changed = []
    for c in diff.changed:
        req = by_id[c.id]
        refs = {INSTRUCTIONS: req.base.sources, **{s.fragment: s.sources for _, _, s in req.sections}, **part_refs(req)}
        sections = tuple(
            LockSectionChange(s.fragment, s.kind, s.tokens_before, s.tokens_after,
                              tuple(sorted(str(r) for r in refs.get(s.fragment, ()) if (r.key, r.digest) not in old)))
            for s in c.sections
        )
        changed.append(LockVariantChange(c.id, c.total_before, c.total_after, c.encoding_before, c.encoding_after, sections))
    known = {_file_of(key) for key, _ in old}
    new_files = frozenset(f for c in changed for s in c.sections for src in s.changed_sources if (f := _file_of(src)) not in known)
    return LockDiff(diff.added, diff.removed, tuple(changed), diff.unchanged, diff.other, new_files)


def compare_data(old: Mapping[str, Any], new: Mapping[str, Any]) -> LockDiff:
    """Every figure the lock records is compared, not just each variant's hash
    and total: a committed lock is pull-request input, and its per-section
    tokens and hashes, instruction and message counts and source digests are
    what later checks, diffs and the site's Changes page explain changes with.
    A variant is unchanged only when its whole entry is what `lock` would write."""
    ov, nv = old.get("variants") or {}, new["variants"]
    added = tuple(LockVariant(v, _total(nv[v])) for v in sorted(set(nv) - set(ov)))
    removed = tuple(LockVariant(v, _total(ov[v])) for v in sorted(set(ov) - set(nv)))
    changed, unchanged = [], []
    for vid in sorted(set(ov) & set(nv)):
        a, b = ov[vid], nv[vid]
        if a == b:
            unchanged.append(vid)
            continue
        changed.append(LockVariantChange(vid, _total(a), _total(b), a.get("encoding"), b["encoding"], _section_changes(a, b)))
    # `conversations` is compared request by request by review/conversation_lock.py (it needs the threads run).
    other = tuple(k for k in sorted(set(old) | set(new))
                  if k not in ("variants", "conversations", "conversation_sources") and old.get(k) != new.get(k))
    return LockDiff(added, removed, tuple(changed), tuple(unchanged), other)


def _signed(n: int) -> str:
    return f"+{n}" if n > 0 else ("±0" if n == 0 else str(n))


def _file_of(source: str) -> str:
    return source.split("#", 1)[0] if "#" in source else source.rsplit(":", 1)[0] if re.search(r":\d+(-\d+)?$", source) else source


def changed_files(diff: LockDiff) -> dict[str, tuple[str, ...]]:
    """Changed source file -> the changed variants it reaches (from the lock's digests)."""
    out: dict[str, set[str]] = {}
    for c in diff.changed:
        for s in c.sections:
            for src in s.changed_sources:
                out.setdefault(_file_of(src), set()).add(c.id)
    return {k: tuple(sorted(v)) for k, v in sorted(out.items())}


def format_check(diff: LockDiff, lock_path: str, *, limit: int = 40, axes=None) -> str:
    """The short report `promptspec check` prints (`axes`: the spec's, to describe variant sets by axis)."""
    if diff.matches:
        return f"{lock_path} matches the spec ({len(diff.unchanged)} variants)\n"
    lines = [
        f"{lock_path} is out of date: {len(diff.changed)} changed, {len(diff.added)} added, "
        f"{len(diff.removed)} removed, {len(diff.unchanged)} unchanged"
    ]
    universe = sorted({c.id for c in diff.changed} | {v.id for v in diff.added} | set(diff.unchanged))
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
        for s in c.sections:
            files = sorted({_file_of(src) for src in s.changed_sources})
            where = f" [{', '.join(files)}]" if files else ""
            if s.kind in ("changed", "retokenized"):
                parts.append(f"{s.fragment} {_signed(s.delta)}" + (" (tokens only)" if s.kind == "retokenized" else "") + where)
            else:
                parts.append(f"{s.fragment} ({s.kind}){where}")
        enc = f" [{c.encoding_before} -> {c.encoding_after}]" if c.encoding_before != c.encoding_after else ""
        rows.append(f"  changed {c.id}  {c.total_before} -> {c.total_after} ({_signed(c.delta)}){enc}"
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
