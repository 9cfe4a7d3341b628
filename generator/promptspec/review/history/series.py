"""Reading a release series from disk: the I/O half of `promptspec history`.

Each side (sides.py) becomes a Release (releases.py): a git revision is
materialised from git (gitspec.materialise) and run through the pipeline, a
spec folder is run where it is, a lock file is read.  Counting goes through
one TokenCounter, so every text shared between releases -- nearly all of them
-- is counted once and then comes from the token cache; a revision, which
cannot change, is assembled once and then read back from release_cache.py; a
lock-file side costs no assembly and no counting at all.  A revision's date
defaults to its commit date.

`SeriesCache` keeps Releases between calls in one process (`mkdocs serve`),
keyed by commit id (a revision cannot change) or by the digests of a folder's
files or the lock file's bytes.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any, Callable, Sequence

from ...errors import UsageError
from ...spec.model import SPEC_FILE
from .. import gitspec, lockfile
from . import release_cache
from .releases import Release, from_lock, from_result
from ..sides import Side, check_unambiguous


class SeriesCache:
    def __init__(self) -> None:
        self._releases: dict[tuple, Release] = {}

    def get(self, key: tuple) -> Release | None:
        return self._releases.get(key)

    def put(self, key: tuple, release: Release) -> None:
        self._releases[key] = release


def _commit_date(repo: Path, commit: str) -> str | None:
    proc = gitspec._git(repo, "show", "-s", "--format=%cs", commit)
    text = proc.stdout.decode("utf-8", "replace").strip()
    return text or None


def load_series(sides: Sequence[Side], *, spec_dir: Path, counter: Any = None, root: Path | None = None,
                cache: SeriesCache | None = None, progress: Callable[[int, int], None] | None = None,
                codex_spec: Callable[[str], tuple[Path, str, str | None]] | None = None) -> list[Release]:
    """Releases for `sides`, in the given order.

    `spec_dir`: the spec folder whose repository revisions are read from (and
    whose path inside it is used at every revision); `root`: the folder
    relative `dir:` and `lock:` paths are taken from (default: the current
    folder); `codex_spec`: turns a `codex:` side's reference into (imported
    spec folder, release, publish date) -- the command line passes the
    importer's, which this stage may not import."""
    from ... import pipeline

    if len(sides) < 2:
        raise UsageError("a history needs at least two sides (releases)")
    from ...measure.counter import TokenCounter

    root = Path(root) if root is not None else Path.cwd()
    counter = counter if counter is not None else TokenCounter()
    # Releases of revisions are kept beside the token cache (release_cache.py); none when counting is not persisted.
    disk = Path(counter.cache_path).parent if getattr(counter, "cache_path", None) else None
    out: list[Release] = []
    pending_locks: list[tuple[int, Side, Path, bytes]] = []
    with tempfile.TemporaryDirectory(prefix="promptspec-history-") as tmp:
        for i, side in enumerate(sides):
            if progress is not None:
                progress(i, len(sides))
            where = f"side {i + 1} ({side.written()})"
            check_unambiguous(side, root)
            if side.kind == "lock":
                path = _under(root, side.ref)
                data = _read_bytes(path, where)
                pending_locks.append((i, side, path, data))
                out.append(None)  # type: ignore[arg-type]  # filled below, once axis names are known
                continue
            if side.kind == "codex":
                if codex_spec is None:
                    raise UsageError(f"{where}: a codex: side is read by `promptspec history` only")
                folder, release, published = codex_spec(side.ref)
                side = dataclasses.replace(side, label=side.label or release, date=side.date or published)
            if side.kind in ("dir", "codex"):
                if side.kind == "dir":
                    folder = _under(root, os.path.expanduser(side.ref))
                if not folder.is_dir() or not (folder / SPEC_FILE).is_file():
                    raise UsageError(f"{where}: {side.ref} is not a spec folder (no {SPEC_FILE} in it)")
                files = gitspec.digest_tree(folder)
                key = ("dir", str(folder.resolve()), tuple(sorted(files.items())), side.label, side.date)
                source = gitspec.SpecSource(side.ref, folder)
                date = side.date
            else:
                repo, rel = gitspec.repo_of(Path(spec_dir))
                try:
                    commit = gitspec.resolve_commit(repo, side.ref)
                except UsageError as exc:
                    raise UsageError(f"{where}: {exc.oneline()}") from None
                key = ("rev", str(repo), rel, commit, side.label, side.date)
                date = side.date or _commit_date(repo, commit)
                source = None
            found = cache.get(key) if cache is not None else None
            # Not from a cache folder inside the repository: a pull request could commit one.
            disk_key = release_cache.key(commit, rel) if source is None and not _inside(disk, repo) else None
            if found is None and disk_key is not None:
                found = release_cache.load(disk, disk_key, label=side.name, date=date, written=side.written())
            if found is None:
                if source is None:
                    work = Path(tmp) / str(i)
                    work.mkdir()
                    path = gitspec.materialise(repo, commit, rel, work)
                    if not (path / SPEC_FILE).is_file():
                        raise UsageError(f"{where}: {rel!r} at {side.ref} ({commit[:7]}) is not a spec folder (no {SPEC_FILE})")
                    source = gitspec.SpecSource(side.ref, path, commit)
                result = gitspec.load_side(f"side {i + 1}", source, lambda p: pipeline.run(p, counter=counter))
                found = from_result(result, label=side.name, date=date, written=side.written(), commit=source.commit)
                if disk_key is not None:
                    release_cache.store(disk, disk_key, found, result)
            if cache is not None:
                cache.put(key, found)
            out.append(found)
    for i, side, path, data in pending_locks:
        hint = _axis_hint(out, i)
        key = ("lock", hashlib.sha256(data).hexdigest(), side.name, side.date, hint)
        found = cache.get(key) if cache is not None else None
        if found is None:
            lock = lockfile.read(path)
            found = from_lock(lock, label=side.name, date=side.date, written=side.written(), axis_names=hint)
            if cache is not None:
                cache.put(key, found)
        out[i] = found
    if progress is not None:
        progress(len(sides), len(sides))
    return out


def _inside(folder: Path | None, repo: Path) -> bool:
    if folder is None:
        return True
    f, r = Path(os.path.abspath(folder)).resolve(), Path(repo).resolve()
    return f == r or r in f.parents


def _axis_hint(releases: list[Release | None], i: int) -> tuple[str, ...] | None:
    """Axis names for a lock side: those of the nearest spec release (later first, then earlier)."""
    order = list(range(i + 1, len(releases))) + list(range(i - 1, -1, -1))
    for j in order:
        r = releases[j]
        if r is not None and r.kind == "spec":
            return r.axis_names
    return None


def _under(root: Path, ref: str) -> Path:
    path = Path(ref)
    return path if path.is_absolute() else root / path


MAX_LOCK_BYTES = 64 * 1024 * 1024


def _read_bytes(path: Path, where: str) -> bytes:
    """A lock side's bytes (bounded, regular files only), for its cache key."""
    try:
        st = os.stat(path)
    except OSError:
        raise UsageError(f"{where}: no lock file at {path}") from None
    import stat

    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{where}: {path} is not a regular file")
    if st.st_size > MAX_LOCK_BYTES:
        raise UsageError(f"{where}: {path} is larger than {MAX_LOCK_BYTES // (1024 * 1024)} MiB")
    with open(path, "rb") as fh:
        return fh.read(MAX_LOCK_BYTES + 1)


__all__ = ["SeriesCache", "load_series"]
