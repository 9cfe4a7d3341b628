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
import tempfile
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..assemble import export
from ..errors import SpecError
from ..measure.figures import TOOLS_COUNT_RULE
from ..spec.files import read_regular_bytes
from .change import (GROUP_ORDER, INSTRUCTIONS, PARAMETERS, TOOL_PREFIX, ChangeGroup, Diff, SectionChange, SectionState,
                     VariantChange, VariantTotals, source_path, status_map)

LOCK_FILE = "prompts.lock.json"
"""Reserved name in a spec folder: the loader ignores it; lint should not call it an orphan."""
MAX_LOCK_BYTES = 64 * 1024 * 1024
"""A lock holds a few hundred bytes per variant; anything near this is hostile."""

FORMAT = 1
HASH_RULE = "sha256 of the UTF-8 canonical JSON (sorted keys, no spaces) of the Responses API payload"
TOKENS_RULE = f"total = instructions + messages + tools; tools: {TOOLS_COUNT_RULE}"
KIND_RANK = {"changed": 0, "added": 1, "removed": 2, "moved": 3, "retokenized": 4}
"""How a lock comparison orders changes of one part with the same reach."""


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


def part_refs(req, memo: dict[int, tuple[Any, tuple[Any, ...]]] | None = None) -> dict[str, tuple[Any, ...]]:
    """Provenance of a request's parts other than sections: tools (their file,
    by the JSON sent) and the request parameters (spec.yaml's request settings).
    `memo` (id -> (object, refs)), for a walk over many requests: the tools
    and parameters they share are digested once."""
    from ..spec.provenance import SourceRef, digest, field_ref

    def refs(obj: Any, make: Any) -> tuple[Any, ...]:
        hit = memo.get(id(obj)) if memo is not None else None
        if hit is not None and hit[0] is obj:
            return hit[1]
        found = (make(obj),)
        if memo is not None:
            memo[id(obj)] = (obj, found)  # the object is held: its id cannot be reused meanwhile
        return found

    out: dict[str, tuple[Any, ...]] = {}
    for tool in getattr(req, "tools", ()) or ():
        out[TOOL_PREFIX + tool.name] = refs(tool, lambda t: SourceRef(t.source, "", t.line or 0, t.line or 0, digest(t.serialized)))
    params = getattr(req, "params", None)
    if params:
        out[PARAMETERS] = refs(params, lambda p: field_ref("spec.yaml", "request", dict(p)))
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
    shared: dict[int, tuple[Any, tuple[Any, ...]]] = {}
    for req in result.requests:
        for obj in (req.base, *(s for _, _, s in req.sections)):
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            out.update((r.key, r.digest) for r in getattr(obj, "sources", ()))
        for refs in part_refs(req, shared).values():
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
# Compare a lock with a fresh result: the same Diff (change.py) `diff` makes


def _state(fragment: str, entry: Any) -> SectionState | None:
    """A lock entry's part (or the fresh side's, as `build` records it) as a
    SectionState without text; None when absent (or not an object)."""
    if not isinstance(entry, dict):
        return None
    position = entry.get("position")
    group = "instructions" if fragment == INSTRUCTIONS else str(entry.get("group"))
    return SectionState(fragment, group, "", position if isinstance(position, int) else 0, None, entry.get("tokens"), 0, "",
                        sha256=str(entry.get("sha256")))


def _section_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> tuple[SectionChange, ...]:
    """The parts of one variant whose entries differ, base instructions first, then in send order."""
    out = []
    oi, ni = old.get("instructions") or {}, new["instructions"]
    if oi.get("sha256") != ni["sha256"]:
        out.append(SectionChange(INSTRUCTIONS, "changed", _state(INSTRUCTIONS, oi), _state(INSTRUCTIONS, ni)))
    elif oi.get("tokens") != ni["tokens"]:
        out.append(SectionChange(INSTRUCTIONS, "retokenized", _state(INSTRUCTIONS, oi), _state(INSTRUCTIONS, ni)))
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
            kind = "added"
        elif b is None:
            kind = "removed"
        elif a.get("sha256") != b["sha256"]:
            kind = "changed"
        elif frag in moved:
            kind = "moved"
        elif a.get("tokens") != b["tokens"]:
            kind = "retokenized"
        else:
            continue
        out.append(SectionChange(frag, kind, _state(frag, a), _state(frag, b)))
    return tuple(out)


def _total(entry: Mapping[str, Any]) -> int:
    total = (entry.get("tokens") or {}).get("total")
    return total if isinstance(total, int) else 0


def _estimate(entry: Any) -> int | None:
    value = ((entry or {}).get("tokens") or {}).get("codex_estimate")
    return value if isinstance(value, int) else None


def _sha(entry: Any, fragment: str) -> str:
    """A part's recorded digest in a variant entry ("-" when it has none): the key that groups identical changes."""
    if not isinstance(entry, Mapping):
        return "-"
    if fragment == INSTRUCTIONS:
        part = entry.get("instructions")
    elif fragment.startswith(TOOL_PREFIX):  # tools are recorded beside the sections
        part = (entry.get("tools") or {}).get(fragment[len(TOOL_PREFIX):])
    else:
        part = (entry.get("sections") or {}).get(fragment)
    return str(part.get("sha256")) if isinstance(part, Mapping) else "-"


def compare(lock_data: Mapping[str, Any], result, memo: dict[int, tuple[Any, dict[str, Any]]] | None = None) -> Diff:
    """How a fresh pipeline Result differs from lock data (as read): a Diff
    whose base side is the lock (change.py).  Every figure the lock records is
    compared, not just each variant's hash and total: a committed lock is
    pull-request input, and its per-section tokens and hashes, instruction and
    message counts and source digests are what later checks, diffs and the
    site's Changes page explain changes with.  A variant is unchanged only when
    its whole entry is what `lock` would write.  When the lock records its
    sources, each change names the sources that changed behind it.  Identical
    changes (the same part, kind and digests on both sides) are one group.
    Headroom uses today's limits on both sides, with the lock's estimate for
    the base.  `memo`: variant_entries."""
    new = build(result, memo)
    ov, nv = lock_data.get("variants") or {}, new["variants"]
    measures = {m.request.variant.id: m for m in result.measures}
    by_id = {r.variant.id: r for r in result.requests}
    old_pairs = _pairs_of(lock_data) if lock_data.get("sources") else None

    def headroom(vid: str, estimate: int | None) -> int | None:
        limit = getattr(measures.get(vid), "compact_limit", None)
        return None if limit is None or estimate is None else limit - estimate

    def head_estimate(vid: str) -> int | None:
        return getattr(measures.get(vid), "estimate", None)

    added = tuple(VariantTotals(v, _total(nv[v]), head_estimate(v), headroom(v, head_estimate(v))) for v in sorted(set(nv) - set(ov)))
    removed = tuple(VariantTotals(v, _total(ov[v]), _estimate(ov[v]), None) for v in sorted(set(ov) - set(nv)))
    unchanged: list[str] = []
    raw: list[tuple[str, tuple[tuple[SectionChange, tuple[str, ...]], ...]]] = []
    keyed: dict[tuple[str, ...], dict[str, Any]] = {}
    for vid in sorted(set(ov) & set(nv)):
        a, b = ov[vid], nv[vid]
        if a == b:
            unchanged.append(vid)
            continue
        changes = _section_changes(a, b)
        if old_pairs is not None:
            req = by_id[vid]
            refs = {INSTRUCTIONS: req.base.sources, **{s.fragment: s.sources for _, _, s in req.sections}, **part_refs(req)}
            changes = tuple(SectionChange(s.fragment, s.kind, s.before, s.after, "",
                                          tuple(sorted(str(r) for r in refs.get(s.fragment, ()) if (r.key, r.digest) not in old_pairs)))
                            for s in changes)
        parts = []
        for s in changes:
            key = (s.fragment, s.kind, _sha(a, s.fragment), _sha(b, s.fragment))
            g = keyed.setdefault(key, {"variants": [], "tokens": [], "sources": set()})
            g["sources"].update(s.changed_sources)
            g["variants"].append(vid)
            g["tokens"].append((vid, s.tokens_before, s.tokens_after))
            parts.append((s, key))
        raw.append((vid, tuple(parts)))
    ordered = sorted(keyed.items(), key=lambda kv: (-len(kv[1]["variants"]), kv[0][0] != INSTRUCTIONS, kv[0][0], KIND_RANK.get(kv[0][1], 9), kv[0]))
    ids = {key: f"c{i}" for i, (key, _) in enumerate(ordered, 1)}
    groups = tuple(ChangeGroup(ids[k], k[0], k[1], (), None, None, tuple(g["variants"]), tuple(g["tokens"]), None,
                               changed_sources=tuple(sorted(g["sources"]))) for k, g in ordered)
    changed = []
    for vid, parts in raw:
        a, b = ov[vid], nv[vid]
        tagged = [SectionChange(s.fragment, s.kind, s.before, s.after, ids[k], s.changed_sources) for s, k in parts]
        instructions = tagged.pop(0) if tagged and tagged[0].fragment == INSTRUCTIONS else None
        est = head_estimate(vid)
        changed.append(VariantChange(vid, _total(a), _total(b), _estimate(a), est if est is not None else 0, a.get("encoding"), b["encoding"],
                                     headroom(vid, _estimate(a)), headroom(vid, est), instructions, tuple(tagged), ()))
    new_files: frozenset[str] = frozenset()
    if old_pairs is not None:
        known = {source_path(key) for key, _ in old_pairs}
        new_files = frozenset(f for c in changed for s in c.all_changes for src in s.changed_sources if (f := source_path(src)) not in known)
    # `conversations` is compared request by request by review/conversation_lock.py (it needs the threads run).
    other = tuple(k for k in sorted(set(lock_data) | set(new))
                  if k not in ("variants", "conversations", "conversation_sources") and lock_data.get(k) != new.get(k))
    status = status_map(unchanged, (v.id for v in added), (v.id for v in removed), (c.id for c in changed))
    axes = tuple((name, tuple(values)) for name, values in result.spec.axes)
    return Diff(LOCK_FILE, "this spec", added, removed, tuple(changed), tuple(unchanged), groups, _status=status, axes=axes,
                universe=tuple(sorted(set(ov) | set(nv))), base_kind="lock", other=other, new_files=new_files,
                matched=tuple((v, v) for v in sorted(set(ov) & set(nv))))
