"""`promptspec build --out`: the site as a folder any site engine can build.

Two things beyond the generated pages (build.py):

* **Hand-written pages** (`--docs DIR`): copied in beside the generated ones,
  with their `<!-- promptspec:... -->` markers expanded from the spec
  (examples.py), so an engine without the MkDocs plugin (Zensical, a plain
  Markdown host) shows the same live examples.  Only regular files are
  copied; symlinks and hidden files are left out, and a page may not sit
  where a generated one goes.
* **In-place updates** (`--in-place`): instead of swapping in a whole new
  folder (which a watcher such as `zensical serve` does not notice as an
  edit), rewrite only the files whose bytes changed, each atomically
  (util/atomic: a reader sees the old file or the new one, never half), and
  remove the files the site no longer has.  Unchanged files keep their
  modification time, so a watcher rebuilds only what changed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from ...errors import SpecError, UsageError
from ...spec.files import read_regular_bytes
from ...util import atomic
from ..build import MARKER_FILE, Site, assets

MAX_DOC_BYTES = 8 * 1024 * 1024
MARKER_TEXT = b"written by promptspec build; the folder is replaced on every build\n"


@dataclass(frozen=True)
class Update:
    """What an in-place update did (paths relative to the folder)."""

    written: tuple[str, ...]
    removed: tuple[str, ...]
    unchanged: int


def hand_written(docs: Path, result: Any, generated: Mapping[str, Any], label: str | None = None) -> dict[str, bytes]:
    """The files of the docs folder, Markdown with its markers expanded."""
    from .examples import expand_examples

    docs = Path(docs)
    if not docs.is_dir():
        raise UsageError(f"--docs {docs} is not a folder")
    label = label or docs.as_posix()
    out: dict[str, bytes] = {}
    for folder, dirs, files in os.walk(docs):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not os.path.islink(os.path.join(folder, d)))
        for name in sorted(files):
            path = Path(folder) / name
            rel = path.relative_to(docs).as_posix()
            if name.startswith(".") or path.is_symlink() or not path.is_file():
                continue
            if rel in generated or rel.split("/")[0] == generated_root(generated):
                raise SpecError(f"{label}/{rel} is where a generated page goes", f"{label}/{rel}",
                                hint="move the page, or build the generated pages into another --path")
            if path.stat().st_size > MAX_DOC_BYTES:
                raise SpecError(f"file is larger than {MAX_DOC_BYTES} bytes", f"{label}/{rel}")
            data = read_regular_bytes(path, limit=MAX_DOC_BYTES)
            if name.endswith(".md") and b"promptspec:" in data:
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError:
                    raise SpecError("page is not UTF-8", f"{label}/{rel}") from None
                data = expand_examples(text, result, page=f"{label}/{rel}").encode("utf-8")
            out[rel] = data
    return out


def generated_root(generated: Mapping[str, Any]) -> str | None:
    """The one top folder the generated pages live in (`prompts`), if any."""
    tops = {rel.split("/")[0] for rel in generated if "/" in rel and not rel.startswith("assets/")}
    return tops.pop() if len(tops) == 1 else None


def site_files(site: Site, extra: Mapping[str, bytes] = {}, progress: Callable[[int, int], None] | None = None) -> dict[str, bytes]:
    """Every file of the output folder, by path: pages, data, assets, the
    hand-written files and the marker that says we wrote the folder.
    `progress(done, total)` follows the pages as they are made."""
    files = {}
    total = len(site.pages) + len(site.files)
    for n, (rel, content) in enumerate([*site.pages.items(), *site.files.items()], 1):
        files[rel] = content.encode("utf-8")
        if progress is not None and (n % 64 == 0 or n == total):
            progress(n, total)
    files.update(assets())
    files.update(extra)
    files[MARKER_FILE] = MARKER_TEXT
    return files


def check_target(out: Path) -> None:
    """Only a folder an earlier build wrote (or an empty one) is ours to rewrite."""
    if out.exists():
        if not out.is_dir():
            raise UsageError(f"{out} exists and is not a folder; choose another --out")
        if any(out.iterdir()) and not (out / MARKER_FILE).is_file():
            raise UsageError(f"{out} is not empty and was not written by 'promptspec build'; choose another --out or empty it")


def write_replace(files: Mapping[str, bytes], out: Path) -> Path:
    """The whole folder swapped in at once: everything is staged beside `out`
    and swapped in at the end (atomic.replace_tree), so a failed or
    interrupted build leaves the previous output untouched."""
    out = Path(out)
    check_target(out)
    with atomic.replace_tree(out) as staging:
        for rel, data in sorted(files.items()):
            target = staging / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    return out


def write_out(site: Site, result: Any, out: Path, *, docs: Path | None = None, in_place: bool = False,
              progress: Callable[[int, int], None] | None = None) -> tuple[int, str]:
    """The whole `build --out`: (hand-written files copied, how it was written)."""
    generated = site_files(site, progress=progress)
    pages = hand_written(docs, result, generated) if docs is not None else {}
    if not in_place:
        write_replace({**generated, **pages}, out)
        return len(pages), ""
    update = write_in_place({**generated, **pages}, out)
    return len(pages), f" in place ({len(update.written)} written, {len(update.removed)} removed, {update.unchanged} unchanged)"


def _existing(out: Path) -> dict[str, Path]:
    found = {}
    for folder, dirs, names in os.walk(out):
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(folder, d))]
        for name in names:
            path = Path(folder) / name
            found[path.relative_to(out).as_posix()] = path
    return found


def write_in_place(files: Mapping[str, bytes], out: Path) -> Update:
    """Rewrite only what changed, each file atomically; remove stale files."""
    out = Path(out)
    check_target(out)
    out.mkdir(parents=True, exist_ok=True)
    existing = _existing(out)
    written, removed, unchanged = [], [], 0
    # The marker last: a folder interrupted before it is complete still holds
    # the old marker (so the next build may rewrite it), never a new one.
    for rel in sorted(files, key=lambda r: (r == MARKER_FILE, r)):
        data, path = files[rel], out / rel
        old = existing.get(rel)
        if old is not None and not old.is_symlink() and old.is_file() and old.stat().st_size == len(data) and old.read_bytes() == data:
            unchanged += 1
            continue
        for parent in reversed(Path(rel).parents[:-1]):  # a file standing where a folder must go
            blocker = out / parent
            if blocker.is_symlink() or blocker.is_file():
                blocker.unlink()
                removed.append(parent.as_posix())
        if path.is_symlink():
            path.unlink()
        elif path.is_dir():
            _remove_tree(path, out, removed)
        atomic.write_bytes(path, data)
        written.append(rel)
    for rel in sorted(set(existing) - set(files)):
        path = out / rel
        if path.is_symlink() or path.is_file():
            path.unlink()
            removed.append(rel)
    _prune_empty(out)
    return Update(tuple(written), tuple(removed), unchanged)


def _remove_tree(path: Path, out: Path, removed: list[str]) -> None:
    for child in sorted(path.rglob("*"), reverse=True):
        if child.is_dir() and not child.is_symlink():
            child.rmdir()
        else:
            child.unlink()
            removed.append(child.relative_to(out).as_posix())
    path.rmdir()


def _prune_empty(out: Path) -> None:
    for folder, dirs, files in os.walk(out, topdown=False):
        path = Path(folder)
        if path != out and not files and not any((path / d).exists() for d in dirs) and not path.is_symlink():
            try:
                path.rmdir()
            except OSError:
                pass
