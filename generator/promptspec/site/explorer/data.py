"""The variant explorer: one page for the whole matrix, whatever its size.

A page per variant makes the site grow with the product of the axes, and
MkDocs costs tens of milliseconds a page, so 10,000 variants cost minutes
before anyone reads anything.  The explorer is one page instead: <select>s
pick the variant, and a small script shows its assembled prompt from a data
file that grows with the *distinct text* of the spec, not with the number of
variants.

How the data file stays small (see `build`):

* Every distinct text (base instructions or section) is stored once, in
  ``texts``; token counts are stored once per (text, encoding) in ``tokens``.
  A text that shares a long prefix and suffix with an earlier one (the same
  template with another personality filled in, a model copied with one
  sentence added) is stored as the difference: ``[earlier id, prefix length,
  suffix length, middle]``.
* A variant is never listed.  Each thing a variant is made of -- its base
  instructions, its message skeleton (which fragments, grouped into which
  messages), its notes, and the section of each fragment -- is a *column*: a
  function from the variant's axis values to an id.  Each column is stored as
  a table over only the axes it actually depends on (found by trying to drop
  each axis), so a fragment that only varies with the sandbox mode costs one
  entry per sandbox mode, however many models there are, and an axis that
  changes no text costs nothing but its value names.
* Which cells of the axis product are variants (include/exclude rules) is a
  list of runs over the product index.

The format (``format: promptspec-explorer/1``; all ids index the named list):

    axes       [[axis, [value, ...]], ...]       model first, spec order
    present    [start, length, ...]               runs of variant cells; a cell's
                                                  index is row-major over axes
    variants   number of variants
    models     [[encoding id|null, display name, context window, usable window,
                 auto-compact limit], ...]        one per model axis value
    texts      [text | [earlier id, prefix, suffix, middle], ...]
    tokens     [[count|null per text], ...]       one list per encoding
    encodings, roles, strings                     small lookup lists
    fragments  [[name, slot, source, description], ...]
    sections   [[text id, start marker length, end marker length], ...]
    bases      [[text id, rule, detail, source (string ids)], ...]
    skeletons  [[[role id, fragment id, ...], ...], ...]   messages in order
    notes      [[note, ...], ...]
    tools      [[name, sent name, kind, source, text id], ...]   one per tool
                                                  definition; the text is its
                                                  JSON as sent (compact)
    toolsets   [[placement, [tool id, ...], [list tokens|null per encoding],
                 [deferred tool id, ...]], ...]   id 0: no tools
    columns    {base, skeleton, notes, tools: [deps, table], sections: [[deps,
                table] per fragment]}; value = table[row-major index over the
                deps axes] (a list, or {index: id} when sparse); -1: none
    conversations  (with `conversations:`) [[name, description, column], ...]:
                per script, a column of thread ids (-1: not run from there)
    threads    [[[kind, reason, [[role id, [text id, ...]], ...]], ...], ...]:
                a thread's requests and the items each adds (`_conversations`)

A variant's total is its base instructions, sections and tool list (the
list's JSON as serialised in the request, counted offline).

Every length counts UTF-16 code units, JavaScript's string length, so the
browser cuts texts exactly where Python did, emoji included.  The browser
code (assets/explorer.js) and `Reader` below read the format the same way;
`Reader` is the reference the tests check against real requests.  Text is
shown with ``textContent`` only, never parsed as HTML.
"""

from __future__ import annotations

import json
import math
from typing import Any, Iterable, Mapping, Sequence

from ...pipeline import Result

FORMAT = "promptspec-explorer/1"
DATA_FILE = "explorer-data.json"
DATA_SCRIPT = "explorer-data.js"
"""The same data as a script, for the standalone folder opened from disk
(browsers refuse fetch() on file:// URLs, but load <script src>)."""
ASSETS = ("explorer.js", "explorer.css")
SPARSE_FACTOR = 2
"""A column table is stored sparse ({index: id}) when the dense table would be
more than this many times larger than the cells actually used."""



# ---------------------------------------------------------------------------
# Building the data


class _Interner:
    """Assigns ids in first-seen order (deterministic for a deterministic input)."""

    def __init__(self) -> None:
        self.ids: dict[Any, int] = {}
        self.items: list[Any] = []

    def __call__(self, item: Any) -> int:
        found = self.ids.get(item)
        if found is None:
            found = self.ids[item] = len(self.items)
            self.items.append(item)
        return found


def _runs(indices: Iterable[int]) -> list[int]:
    """Sorted indices -> flat [start, length, start, length, ...]."""
    out: list[int] = []
    for i in indices:
        if out and out[-2] + out[-1] == i:
            out[-1] += 1
        else:
            out += [i, 1]
    return out


def _factor(coords: Sequence[Sequence[int]], sizes: Sequence[int], values: Sequence[int]) -> list[Any]:
    """Store `values` (one per row; `coords[axis][row]`) as a table over
    the fewest axes that still determine it.

    An axis is dropped when, without it, no two rows that agree on the
    remaining axes have different values.  Greedy, last axis first; the result
    is always exact for every row given, because that is what each drop checks.
    """
    deps = list(range(len(sizes)))
    if len(set(values)) <= 1:
        deps = []
    else:
        for axis in reversed(range(len(sizes))):
            trial = [d for d in deps if d != axis]
            keys = list(zip(*(coords[d] for d in trial))) if trial else [()] * len(values)
            if len(set(keys)) == len(set(zip(keys, values))):
                deps = trial
    size = math.prod(sizes[d] for d in deps)
    cells: dict[int, int] = {}
    for n, value in enumerate(values):
        k = 0
        for d in deps:
            k = k * sizes[d] + coords[d][n]
        cells[k] = value
    if size <= SPARSE_FACTOR * len(cells) + 16:
        table: Any = [-1] * size
        for k, value in cells.items():
            table[k] = value
    else:
        table = {str(k): cells[k] for k in sorted(cells)}
    return [deps, table]


DELTA_MIN_SAVED = 64
"""A text is stored as a difference only when that saves this many characters
and more than half of it."""
_DELTA_KEY = 32
_DELTA_CANDIDATES = 8


def _u16(text: str) -> int:
    """Length in UTF-16 code units: the browser's string length.  Every length
    stored in the data counts these, so JavaScript's slice() cuts where
    Python did even around emoji."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _cut16(text: str, start: int, end: int | None = None) -> str:
    """text[start:end] with both ends counted in UTF-16 code units."""
    if text.isascii():
        return text[start:end]
    units = text.encode("utf-16-le", "surrogatepass")
    return units[2 * start : None if end is None else 2 * end].decode("utf-16-le", "surrogatepass")


def _common_prefix(a: str, b: str, limit: int) -> int:
    lo, hi = 0, min(len(a), len(b), limit)
    while lo < hi:  # binary search with slice compares: C speed on long texts
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_suffix(a: str, b: str, limit: int) -> int:
    lo, hi = 0, min(len(a), len(b), limit)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[len(a) - mid :] == b[len(b) - mid :]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _pack(texts: Sequence[str]) -> list[Any]:
    """Texts as stored: a string, or [earlier id, prefix, suffix, middle] when
    an earlier text with the same first or last characters shares enough.
    Candidates are the last few texts with the same first or last 32
    characters, so packing stays linear in the text."""
    out: list[Any] = []
    by_head: dict[str, list[int]] = {}
    by_tail: dict[str, list[int]] = {}
    for i, text in enumerate(texts):
        head, tail = text[:_DELTA_KEY], text[-_DELTA_KEY:]
        best = (0, -1, 0, 0)
        if len(text) >= DELTA_MIN_SAVED:
            candidates = sorted(set(by_head.get(head, [])[-_DELTA_CANDIDATES:] + by_tail.get(tail, [])[-_DELTA_CANDIDATES:]))
            for j in candidates:
                other = texts[j]
                p = _common_prefix(other, text, len(text))
                q = _common_suffix(other, text, min(len(other), len(text)) - p)
                if p + q > best[0]:
                    best = (p + q, j, p, q)
        saved, j, p, q = best
        if saved >= DELTA_MIN_SAVED and 2 * saved > len(text):
            out.append([j, _u16(text[:p]), _u16(text[len(text) - q :]), text[p : len(text) - q]])
        else:
            out.append(text)
        by_head.setdefault(head, []).append(i)
        by_tail.setdefault(tail, []).append(i)
    return out


def unpack_texts(packed: Sequence[Any]) -> list[str]:
    """The stored texts back as plain strings (what the browser does on load)."""
    out: list[str] = []
    for item in packed:
        if isinstance(item, str):
            out.append(item)
        else:
            ref, prefix, suffix, middle = item
            other = out[ref]
            size = _u16(other)
            out.append(_cut16(other, 0, prefix) + middle + (_cut16(other, size - suffix) if suffix else ""))
    return out


def build(result: Result) -> dict[str, Any]:
    """The explorer's data for a pipeline result (JSON-ready, deterministic)."""
    spec = result.spec
    axes = [(name, list(values)) for name, values in spec.axes]
    sizes = [len(values) for _, values in axes]
    position = [{v: i for i, v in enumerate(values)} for _, values in axes]
    fragments = list(spec.fragments)
    frag_index = {f.name: i for i, f in enumerate(fragments)}

    texts = _Interner()
    roles = _Interner()
    sections = _Interner()
    bases = _Interner()
    strings = _Interner()  # rules, details and sources of base instructions
    skeletons = _Interner()
    notes = _Interner()
    notes(())  # id 0: no notes
    toolsets = _Interner()
    toolsets(("field", (), (), ()))  # id 0: no tools
    tool_index = {t.name: i for i, t in enumerate(spec.tools)}
    set_tokens: dict[int, dict[int, int]] = {}
    encodings = sorted({m.encoding for m in result.measures})
    enc_index = {e: i for i, e in enumerate(encodings)}
    counts: dict[tuple[int, int], int] = {}

    n_variants = len(result.measures)
    # Coordinates of every variant on every axis (column-wise, for _factor).
    coords: list[list[int]] = [[0] * n_variants for _ in axes]
    flat_ids: list[int] = []
    base_col: list[int] = []
    skel_col: list[int] = []
    note_col: list[int] = []
    tool_col: list[int] = []
    frag_rows: list[list[int]] = [[] for _ in fragments]
    frag_vals: list[list[int]] = [[] for _ in fragments]
    section_ids: dict[int, int] = {}  # id(Section) -> section id: Sections are shared objects
    keep_alive: list[Any] = []

    for n, measure in enumerate(result.measures):
        req = measure.request
        flat = 0
        for a, (axis, value) in enumerate(req.variant.values):
            i = position[a][value]
            coords[a][n] = i
            flat = flat * sizes[a] + i
        flat_ids.append(flat)
        enc = enc_index[measure.encoding]
        base_text = texts(req.base.text)
        counts[(enc, base_text)] = measure.base
        base_col.append(bases((base_text, strings(req.base.rule), strings(req.base.detail), strings(req.base.source))))
        skeleton = []
        for message, message_counts in zip(req.messages, measure.sections):
            entry = [roles(message.role)]
            for section, count in zip(message.sections, message_counts):
                f = frag_index[section.fragment]
                entry.append(f)
                sid = section_ids.get(id(section))
                if sid is None:
                    tid = texts(section.text)
                    sid = sections((tid, _u16(section.start), _u16(section.end)))
                    section_ids[id(section)] = sid
                    keep_alive.append(section)
                    counts.setdefault((enc, tid), count)
                else:
                    counts.setdefault((enc, sections.items[sid][0]), count)
                frag_rows[f].append(n)
                frag_vals[f].append(sid)
            skeleton.append(tuple(entry))
        skel_col.append(skeletons(tuple(skeleton)))
        note_col.append(notes(tuple(req.notes)))
        if req.tools or req.deferred:
            ts = toolsets((req.tool_placement, tuple(tool_index[t.name] for t in req.tools), (), tuple(tool_index[t.name] for t in req.deferred)))
            set_tokens.setdefault(ts, {})[enc] = measure.tools
            for t, count in zip(req.tools, measure.tool_counts):
                counts.setdefault((enc, texts(t.serialized)), count)
        else:
            ts = 0
        tool_col.append(ts)

    def column(rows: list[int] | None, values: list[int]) -> list[Any]:
        cols = coords if rows is None else [[c[n] for n in rows] for c in coords]
        return _factor(cols, sizes, values)

    tool_rows = [[t.name, t.tool_name, t.kind, t.source, texts(t.serialized)] for t in spec.tools]
    tokens: list[list[int | None]] = [[None] * len(texts.items) for _ in encodings]
    for (enc, tid), count in counts.items():
        tokens[enc][tid] = count

    model_encoding = {m.request.model: m.encoding for m in result.measures}
    models = []
    for slug in axes[0][1]:
        model = spec.model(slug)
        enc = model_encoding.get(slug)
        models.append(
            [
                None if enc is None else enc_index[enc],
                model.display_name,
                model.context_window,
                model.usable_window,
                model.compact_limit,
            ]
        )
    out = {
        "format": FORMAT,
        "spec": spec.name,
        "axes": [[name, values] for name, values in axes],
        "present": _runs(sorted(flat_ids)),
        "variants": n_variants,
        "roles": roles.items,
        "encodings": encodings,
        "models": models,
        "texts": _pack(texts.items),
        "tokens": tokens,
        "fragments": [
            [f.name, f.slot, f.body_file and spec.fs.display(spec.fs.resolve(f.body_file)) or f.source, f.description]
            for f in fragments
        ],
        "sections": [list(s) for s in sections.items],
        "bases": [list(b) for b in bases.items],
        "strings": strings.items,
        "skeletons": [[list(m) for m in s] for s in skeletons.items],
        "notes": [list(n) for n in notes.items],
        "tools": tool_rows,
        "toolsets": [
            [place, list(ids), [set_tokens.get(i, {}).get(e, 0 if not ids else None) for e in range(len(encodings))], list(deferred)]
            for i, (place, ids, _, deferred) in enumerate(toolsets.items)
        ],
        "columns": {
            "base": column(None, base_col),
            "skeleton": column(None, skel_col),
            "notes": column(None, note_col),
            "tools": column(None, tool_col),
            "sections": [column(frag_rows[f], frag_vals[f]) for f in range(len(fragments))],
        },
    }
    if spec.conversations:
        threads = _Interner()
        out["conversations"] = [[name, description, column(rows, values)]
                                for name, description, rows, values in _conversations(result, texts, roles, threads)]
        out["threads"] = [[[kind, reason, [[role, list(ids)] for role, ids in items]] for kind, reason, items in t] for t in threads.items]
        out["texts"] = _pack(texts.items)  # the conversations' texts joined the list (uncounted: null tokens)
        out["roles"] = roles.items
        for row in tokens:
            row.extend([None] * (len(texts.items) - len(row)))
    return out


MAX_CONVERSATION_VARIANTS = 2000
"""Past this many variants each conversation is kept from the first variant of
each model only (as its pages are): running every variant's threads would cost minutes."""


def _conversations(result: Result, texts: _Interner, roles: _Interner, threads: _Interner) -> list[Any]:
    """Per script: (name, description, the variants it ran from (indices into
    result.measures), their thread ids).  A thread is its requests, each
    (kind, reason, the items it adds as (role id, text ids)), interned: the
    same thread from many variants is stored once, and the column over the
    axes (like a section's) drops the axes it does not depend on."""
    from ...assemble.conversation import conversation, know_first_requests
    from ...spec.readers.scripts import read_script

    spec = result.spec
    rows = list(range(len(result.measures)))
    if len(rows) > MAX_CONVERSATION_VARIANTS:
        firsts: dict[str, int] = {}
        for n, m in enumerate(result.measures):
            firsts.setdefault(m.request.variant.model, n)
        rows = sorted(firsts.values())
    if spec.conversations:
        know_first_requests(spec, (result.measures[n].request for n in rows))  # the variants the threads start from
    out = []
    for name, ref in spec.conversations:
        path = spec.fs.resolve(ref, origin="spec.yaml")
        script = read_script(path, spec.fs.display(path))
        values = []
        for n in rows:
            thread = conversation(spec, result.measures[n].request.variant, script)  # shares lint's and the pages' threads
            values.append(threads(tuple((t.kind, t.reason, tuple((roles(m.role), tuple(texts(x.text) for x in m.sections))
                                                               for m in t.new_messages)) for t in thread)))
        out.append((name, script.description, rows if len(rows) < len(result.measures) else None, values))
    return out


def data_bytes(result: Result | Mapping[str, Any]) -> bytes:
    """`build(result)` as compact, deterministic JSON (UTF-8, sorted keys).

    Non-ASCII text is written as is; only a text a UTF-8 file cannot hold (a
    lone surrogate from a scenario escape) makes the whole file ASCII-escaped.
    """
    data = result if isinstance(result, Mapping) else build(result)
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(data, ensure_ascii=True, separators=(",", ":"), sort_keys=True).encode("ascii")


# ---------------------------------------------------------------------------
# Reading the data (the reference for assets/explorer.js)


def _lookup(column: Sequence[Any], idx: Sequence[int], sizes: Sequence[int]) -> int:
    deps, table = column
    k = 0
    for d in deps:
        k = k * sizes[d] + idx[d]
    if isinstance(table, list):
        value = table[k] if k < len(table) else -1
    else:
        value = table.get(str(k), -1)
    return -1 if value is None else value


def _present(runs: Sequence[int], flat: int) -> bool:
    lo, hi = 0, len(runs) // 2
    while lo < hi:  # binary search over runs, as the browser does
        mid = (lo + hi) // 2
        start, length = runs[2 * mid], runs[2 * mid + 1]
        if flat < start:
            hi = mid
        elif flat >= start + length:
            lo = mid + 1
        else:
            return True
    return False


class Reader:
    """Reads variants out of the data; `texts` are unpacked once."""

    def __init__(self, data: Mapping[str, Any]):
        self.data = data
        self.texts = unpack_texts(data["texts"])
        self.sizes = [len(vals) for _, vals in data["axes"]]

    def decode(self, values: Mapping[str, str] | Sequence[str]) -> dict[str, Any] | None:
        """One variant, exactly as the browser shows it; None if the
        combination is not a variant (excluded by the matrix rules)."""
        data, texts, sizes = self.data, self.texts, self.sizes
        axes = data["axes"]
        if isinstance(values, Mapping):
            values = [values[name] for name, _ in axes]
        values = list(values)
        idx = [vals.index(v) for (_, vals), v in zip(axes, values)]
        flat = 0
        for i, size in zip(idx, sizes):
            flat = flat * size + i
        if not _present(data["present"], flat):
            return None
        cols = data["columns"]
        enc = data["models"][idx[0]][0]
        tokens = data["tokens"][enc]
        strings = data["strings"]
        base_text, rule, detail, source = data["bases"][_lookup(cols["base"], idx, sizes)]
        messages = []
        for entry in data["skeletons"][_lookup(cols["skeleton"], idx, sizes)]:
            out = []
            for f in entry[1:]:
                text_id, start_len, end_len = data["sections"][_lookup(cols["sections"][f], idx, sizes)]
                text = texts[text_id]
                name, slot, fsource, _description = data["fragments"][f]
                out.append(
                    {
                        "fragment": name,
                        "slot": slot,
                        "source": fsource,
                        "text": text,
                        "start": _cut16(text, 0, start_len),
                        "end": _cut16(text, _u16(text) - end_len) if end_len else "",
                        "tokens": tokens[text_id],
                    }
                )
            messages.append({"role": data["roles"][entry[0]], "sections": out, "tokens": sum(s["tokens"] for s in out)})
        base = {
            "text": texts[base_text],
            "rule": strings[rule],
            "detail": strings[detail],
            "source": strings[source],
            "tokens": tokens[base_text],
        }
        place, tool_ids, list_tokens, deferred = data["toolsets"][_lookup(cols["tools"], idx, sizes)]
        tools = {
            "placement": place,
            "tokens": list_tokens[enc] or 0,
            "tools": [
                {"tool": name, "name": sent, "kind": kind, "source": tsource, "json": texts[tid], "tokens": tokens[tid]}
                for name, sent, kind, tsource, tid in (data["tools"][i] for i in tool_ids)
            ],
            "deferred": [data["tools"][i][1] for i in deferred],
        }
        return {
            "id": "/".join(values),
            "values": dict(zip((name for name, _ in axes), values)),
            "encoding": data["encodings"][enc],
            "base": base,
            "messages": messages,
            "tools": tools,
            "notes": list(data["notes"][_lookup(cols["notes"], idx, sizes)]),
            "total": base["tokens"] + sum(m["tokens"] for m in messages) + tools["tokens"],
        }


def decode(data: Mapping[str, Any], values: Mapping[str, str] | Sequence[str]) -> dict[str, Any] | None:
    """`Reader(data).decode(values)`, for one-off use."""
    return Reader(data).decode(values)


