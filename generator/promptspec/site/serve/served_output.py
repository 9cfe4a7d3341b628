"""The served site rebuilt in place: `mkdocs serve` without MkDocs' clean.

Before every rebuild that is not `--dirty`, MkDocs empties the site folder it
serves (`utils.clean_directory`) and writes the whole site again.  On a disk
that discards freed blocks (ext4 mounted with `discard`, as on many VMs),
deleting the last build's few thousand files and writing new ones in their
place stalls the writes: at 2,400 variants (~4,900 files, 150 MB) that was
1.3-4.3 s of each reload, where writing over the same files in place takes
~0.6 s (`bench/bench.py`, and a plain file loop on the same disk).

So under serve the plugin moves the site's folders out of the way before the
clean (clean_directory leaves hidden entries alone), puts them back after it
(on_files, the first event after the clean and before MkDocs writes
anything), and once the build is written removes what the build did not
write: every file whose inode change time (ctime: any write, any utime)
predates the build.  The result is the folder a clean build gives; only the
top-level files (a handful) are left to MkDocs' clean.

Writing over a file is not free either on such a disk: opening it for
writing truncates it, which frees its blocks (~2 ms a 30 KB file there,
against 0.05 ms for a new one).  So a file the rebuild is about to write
again is first moved into a hidden folder of the site (`Trash`: a rename),
MkDocs writes a new one in its place, and the moved files are deleted by a
thread once the build is served -- off the path of the reload.  (Hidden
entries are left alone by MkDocs' clean and by set_aside; MkDocs removes the
whole temp site when serve stops.)

POSIX only: there a file's ctime changes whenever it is written.  On Windows
`st_ctime` is the creation time, so MkDocs' own clean is kept there.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

HOLDER = ".promptspec-previous"
"""The hidden folder the site's folders wait in while MkDocs cleans."""


@dataclass
class SetAside:
    site_dir: Path
    since_ns: int
    """The holder's ctime when made: the build's start on the disk's own clock."""
    moved: list[str] = field(default_factory=list)
    back: bool = False


def supported() -> bool:
    return os.name == "posix"


def set_aside(site_dir: str | os.PathLike[str]) -> SetAside | None:
    """Moves the site folder's top-level folders into a hidden holder (a
    rename each).  None where there is nothing to keep, ctime cannot tell
    what a build wrote, or the folder cannot be renamed in (MkDocs' own
    clean runs then)."""
    site = Path(site_dir)
    if not supported() or not site.is_dir():
        return None
    holder = site / HOLDER
    if holder.exists() or holder.is_symlink():
        _remove(holder)  # left by a build that stopped between set_aside and put_back
    entries = [e for e in os.scandir(site) if not e.name.startswith(".") and e.is_dir(follow_symlinks=False)]
    if not entries:
        return None
    try:
        holder.mkdir()
        aside = SetAside(site, holder.stat().st_ctime_ns)
    except OSError:
        return None  # MkDocs' own clean, then
    try:
        for entry in entries:
            os.rename(entry.path, holder / entry.name)
            aside.moved.append(entry.name)
    except OSError:
        put_back(aside)  # what was moved goes back; MkDocs cleans as usual
        return None
    return aside


def put_back(aside: SetAside) -> None:
    """The folders back where they were, for the build to write over.  A
    folder something else made there meanwhile wins (ours is removed)."""
    if aside.back:
        return
    aside.back = True
    holder = aside.site_dir / HOLDER
    for name in aside.moved:
        target = aside.site_dir / name
        if target.exists() or target.is_symlink():
            _remove(holder / name)
        else:
            os.rename(holder / name, target)
    _remove(holder)


def sweep(aside: SetAside, keep: Iterable[str] = ()) -> int:
    """Removes, in the folders put back, every file the build did not write
    nor `keep` names (its outputs left as they were: served_pages), and every
    folder left empty; returns how many entries went."""
    put_back(aside)
    removed = 0
    kept = {os.path.abspath(p) for p in keep}
    for name in aside.moved:
        top = aside.site_dir / name
        if top.is_dir() and not top.is_symlink():
            removed += _sweep_dir(top, aside.since_ns, kept)
            if _empty(top):
                top.rmdir()
                removed += 1
    return removed


def _sweep_dir(folder: Path, since_ns: int, kept: set[str]) -> int:
    """How many entries (files and folders) went."""
    removed = 0
    with os.scandir(folder) as entries:
        listed = list(entries)
    for entry in listed:
        if entry.is_dir(follow_symlinks=False):
            inner = _sweep_dir(Path(entry.path), since_ns, kept)
            removed += inner
            # A folder the sweep emptied, or an old empty one; a new empty one is kept.
            if _empty(entry.path) and (inner or entry.stat(follow_symlinks=False).st_ctime_ns < since_ns):
                os.rmdir(entry.path)
                removed += 1
        elif entry.path not in kept and entry.stat(follow_symlinks=False).st_ctime_ns < since_ns:  # kept: no stat
            os.unlink(entry.path)
            removed += 1
    return removed


def _empty(folder: str | os.PathLike[str]) -> bool:
    with os.scandir(folder) as entries:
        return next(entries, None) is None


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


TRASH = ".promptspec-written-over"
"""The hidden folder of a site where Trash puts the files a build writes again."""


class Trash:
    """Files about to be written again, moved out of the way and deleted
    later in a thread of their own (see the module's docstring)."""

    def __init__(self, site_dir: str | os.PathLike[str]) -> None:
        self.site_dir = Path(site_dir)
        self._folder: Path | None = None
        self._count = 0

    def move(self, path: str | os.PathLike[str]) -> None:
        """Move `path` (a regular file) out of the way, if it is there."""
        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix=TRASH + "-", dir=self.site_dir))
        self._count += 1
        try:
            os.rename(path, self._folder / str(self._count))
        except OSError:
            pass  # not there (a new file), or not movable: written over as usual

    def empty_later(self) -> None:
        """Delete what was moved, in a daemon thread (the reload does not wait)."""
        folder, self._folder = self._folder, None
        if folder is not None:
            threading.Thread(target=shutil.rmtree, args=(folder,), kwargs={"ignore_errors": True},
                             name="promptspec-trash", daemon=True).start()
