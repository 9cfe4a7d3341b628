"""Releases kept on disk, so a history is cheap to rebuild.

A git revision cannot change, so what promptspec makes of it cannot either --
as long as promptspec itself is the same and the spec reads nothing outside
the revision.  Assembling a 2,400-variant matrix takes seconds even when
every count comes from the token cache, and a ten-release history does it
ten times; with this cache a warm history reads ten files instead.

A release is stored as JSON (never pickle: nothing in a cache file is
executed), each distinct text once, under the token cache folder in
`history/`, named by a sha256 of: this module's FORMAT, a fingerprint of
promptspec's own source files, the commit and the spec's path in the
repository.  A spec whose `roots:` point outside its folder is not stored
(its files could change under the same commit).  A file that is missing,
too large, malformed or from another format is ignored and rebuilt; the
stored data also holds its own digest, checked on reading, so a truncated
or edited file is not used.

Like the token cache, this is an optimisation for reports, not a source of
truth for a gate: `promptspec check` and `diff` never read it, and `history`
does not use a cache folder inside the repository it reads (a pull request
could commit one).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ...util import atomic
from ...util.fingerprint import code_fingerprint
from .releases import Part, Release, VariantSnap

FORMAT = 1
MAX_BYTES = 256 * 1024 * 1024
FOLDER = "history"


def key(commit: str, rel: str) -> str:
    return hashlib.sha256(f"{FORMAT}\0{code_fingerprint()}\0{commit}\0{rel}".encode()).hexdigest()


def _path(folder: Path, k: str) -> Path:
    return Path(folder) / FOLDER / f"{k}.json"


def _encode(release: Release) -> dict[str, Any]:
    texts: dict[str, int] = {}
    table: list[str] = []

    def tid(text: str | None) -> int:
        if text is None:
            return -1
        found = texts.get(text)
        if found is None:
            found = texts[text] = len(table)
            table.append(text)
        return found

    parts: dict[Part, int] = {}
    rows: list[list[Any]] = []

    def pid(p: Part) -> int:
        found = parts.get(p)
        if found is None:
            found = parts[p] = len(rows)
            rows.append([p.name, p.place, p.position, p.sha, p.tokens, p.marker, tid(p.text), p.source, p.is_base])
        return found

    variants = [[v.id, [list(x) for x in v.values], v.model, v.encoding, v.total, v.headroom, v.sha, [pid(p) for p in v.parts]]
                for v in release.variants.values()]
    return {
        "format": FORMAT,
        "commit": release.commit,
        "axes": [[a, list(vals)] for a, vals in release.axes],
        "refused": {a: dict(vals) for a, vals in release.refused.items()},
        "budget": release.budget,
        "texts": table,
        "parts": rows,
        "variants": variants,
        "threads": dict(release.threads),
    }


def _decode(data: dict[str, Any], *, label: str, date: str | None, written: str) -> Release:
    texts = data["texts"]
    parts = [Part(str(n), str(pl), int(pos), str(sha), int(tok), str(mk), None if t < 0 else str(texts[t]), str(src), base is True)
             for n, pl, pos, sha, tok, mk, t, src, base in data["parts"]]
    variants = {}
    for vid, values, model, enc, total, headroom, sha, pids in data["variants"]:
        variants[str(vid)] = VariantSnap(str(vid), tuple((str(a), str(v)) for a, v in values), str(model), str(enc), int(total),
                                         None if headroom is None else int(headroom), str(sha), tuple(parts[i] for i in pids))
    return Release(label=label, date=date, written=written, commit=data["commit"], kind="spec",
                   axes=tuple((str(a), tuple(str(v) for v in vals)) for a, vals in data["axes"]),
                   refused={str(a): {str(k): str(m) for k, m in vals.items()} for a, vals in data["refused"].items()},
                   budget=data["budget"], variants=variants, threads=data.get("threads") or {})


def load(folder: Path | None, k: str, *, label: str, date: str | None, written: str) -> Release | None:
    """The stored release, relabelled, or None (absent, unreadable, or not exactly what was stored)."""
    if folder is None:
        return None
    path = _path(folder, k)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        import stat

        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_BYTES:
            return None
        with os.fdopen(fd, "rb", closefd=False) as fh:
            raw = fh.read(MAX_BYTES + 1)
    finally:
        os.close(fd)
    try:
        head, _, body = raw.partition(b"\n")
        if head.decode("ascii") != hashlib.sha256(body).hexdigest():
            return None
        data = json.loads(body)
        if data.get("format") != FORMAT:
            return None
        return _decode(data, label=label, date=date, written=written)
    except (ValueError, KeyError, TypeError, IndexError, UnicodeDecodeError, RecursionError):
        return None


def store(folder: Path | None, k: str, release: Release, result: Any) -> bool:
    """Keep `release` (made from `result`) unless its spec reads outside its own folder; True when written."""
    if folder is None:
        return False
    spec_root = Path(result.spec.root).resolve()
    for root in getattr(result.spec.fs, "roots", {}).values():
        r = Path(root).resolve()
        if r != spec_root and spec_root not in r.parents:
            return False
    body = json.dumps(_encode(release), ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    path = _path(folder, k)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic.write_bytes(path, hashlib.sha256(body).hexdigest().encode() + b"\n" + body, durable=False)
    except OSError:
        return False
    return True


__all__ = ["FORMAT", "key", "load", "store"]
