"""Writing files and whole folders so a reader never sees half of them.

Every command that writes (build, import-codex, lock, new, explorer...) must
leave either the old output or the new one, never a mix, even when the disk
fills up, a template fails halfway, or the user presses Ctrl-C.  So:

* `write_text` / `write_bytes`: the data goes to a temporary file in the same
  folder, is flushed and fsynced, then `os.replace`d over the target (a rename
  within one file system is atomic).
* `replace_tree`: a context manager that hands out an empty staging folder
  beside the target; when the block ends normally the staging folder takes
  the target's place (an atomic exchange where the kernel offers one, else two
  renames with the old folder kept until the new one is in place); when it
  raises, the staging folder is removed and the target is untouched.

While either runs, SIGINT and SIGTERM raise `Interrupted` (a
`KeyboardInterrupt`) instead of killing the process outright, so the cleanup
above runs; during the final renames they are held back until the swap is
complete.  A process killed with SIGKILL cannot clean up: its staging folders
are named after its pid and removed by the next `replace_tree` beside them.

Temporary names start with a dot and end in ``.tmp``/``.old`` so that globbing
the output folder's parent for visible files never picks them up.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import re
import secrets
import shutil
import signal
import threading
from pathlib import Path
from typing import Iterator

from ..errors import SpecError

__all__ = [
    "Interrupted",
    "cleanup_stale",
    "interrupts_as_exceptions",
    "replace_tree",
    "write_bytes",
    "write_text",
]


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived during a write; `signum` says which."""

    def __init__(self, signum: int):
        super().__init__(f"interrupted by {signal.Signals(signum).name}")
        self.signum = signum

    @property
    def exit_code(self) -> int:
        """The shell's convention for death by signal: 128 + its number."""
        return 128 + self.signum


# ---------------------------------------------------------------------------
# Signals


_SIGNALS = tuple(s for s in (getattr(signal, "SIGINT", None), getattr(signal, "SIGTERM", None)) if s is not None)
_depth = 0  # nesting of interrupts_as_exceptions() in the main thread
_previous: dict[int, object] = {}
_deferring = 0  # nesting of _deferred()
_pending: int | None = None


def _handler(signum: int, _frame: object) -> None:
    global _pending
    if _deferring:
        if _pending is None:
            _pending = signum
        return
    raise Interrupted(signum)


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def interrupts_as_exceptions() -> Iterator[None]:
    """Inside the block, SIGINT/SIGTERM raise `Interrupted`, so `finally`
    clauses (removing temporary files) run before the process exits.

    Python lets only the main thread install handlers; elsewhere (MkDocs
    serve's builder thread) this does nothing, and the process keeps its
    default behaviour.  Nested use is fine.
    """
    global _depth
    if not _in_main_thread():
        yield
        return
    if _depth == 0:
        for sig in _SIGNALS:
            _previous[sig] = signal.signal(sig, _handler)
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0:
            for sig, old in _previous.items():
                signal.signal(sig, old)  # type: ignore[arg-type]
            _previous.clear()


@contextlib.contextmanager
def _deferred() -> Iterator[None]:
    """Hold signals back until the block ends: a swap is never left half done."""
    global _deferring, _pending
    if not _in_main_thread():
        yield
        return
    _deferring += 1
    try:
        yield
    finally:
        _deferring -= 1
        if _deferring == 0 and _pending is not None:
            signum, _pending = _pending, None
            raise Interrupted(signum)


# ---------------------------------------------------------------------------
# Files


def _temp_name(target: Path, kind: str) -> Path:
    return target.parent / f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.{kind}"


def _fsync(path: str | Path, flags: int = os.O_RDONLY) -> None:
    """Best-effort fsync of one file or folder: where it cannot be opened or
    synced (folders on Windows) the renames are still atomic, just less durable."""
    try:
        fd = os.open(path, flags)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _fsync_dir(folder: Path) -> None:
    """Make a rename durable: fsync the folder that holds the entry."""
    _fsync(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))


def write_bytes(path: str | Path, data: bytes, *, durable: bool = True) -> None:
    """Replace `path` by `data` atomically: readers see the old or the new file.

    The file keeps the mode of the file it replaces (a new one gets the usual
    0666 minus umask; `tempfile.mkstemp`'s 0600 would make a published site
    unreadable).  `durable=False` skips the fsyncs, for scratch output.
    """
    path = Path(path)
    if path.is_dir():
        raise SpecError("is a folder, expected a file", path, hint="choose another output path")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o7777
    except OSError:
        mode = None
    with interrupts_as_exceptions():
        tmp = _temp_name(path, "tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                if durable:
                    os.fsync(fh.fileno())
            if mode is not None:
                os.chmod(tmp, mode)
            with _deferred():
                os.replace(tmp, path)
            if durable:
                _fsync_dir(path.parent)
        except BaseException:
            with _deferred():
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
            raise


def write_text(path: str | Path, text: str, *, encoding: str = "utf-8", durable: bool = True) -> None:
    """`write_bytes(path, text.encode(encoding))`: no newline translation, so
    the bytes on disk are exactly the text (deterministic output)."""
    write_bytes(path, text.encode(encoding), durable=durable)


# ---------------------------------------------------------------------------
# Folders


_STALE = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[0-9a-f]{8}\.(?:tmp|old)$")


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # someone else's live process, or we cannot tell
    return True


def cleanup_stale(target: str | Path) -> list[Path]:
    """Remove staging/old folders and temp files beside `target` left by a
    process that no longer runs (killed with SIGKILL, power loss).  Those of
    live processes are left alone.  Returns what was removed."""
    target = Path(target)
    removed: list[Path] = []
    try:
        entries = list(target.parent.iterdir())
    except OSError:
        return removed
    for entry in entries:
        m = _STALE.match(entry.name)
        if not m or m.group("name") != target.name or _pid_alive(int(m.group("pid"))):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                entry.unlink()
        removed.append(entry)
    return removed


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux renameat2 RENAME_EXCHANGE): there is
    no moment at which the target does not exist.  False when unsupported."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError, TypeError):
        return False
    renameat2.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    renameat2.restype = ctypes.c_int
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _fsync_tree(root: Path) -> None:
    for folder, _dirs, files in os.walk(root):
        for name in files:
            _fsync(os.path.join(folder, name))
        _fsync_dir(Path(folder))


def _output_folder(target: str | Path) -> Path:
    """The folder replace_tree may swap out, or a one-line error.

    A symlinked output folder is followed: the folder it points to gets the
    new contents and the link stays as it is (swapping the link itself away
    would leave its target stale).  The current folder or one above it cannot
    be swapped (EBUSY, and it would delete the caller's own tree), and a
    folder holding a git repository is never anyone's output."""
    target = Path(target)
    if target.is_symlink():
        target = Path(os.path.realpath(target))
    if target.exists() and not target.is_dir():
        raise SpecError("is a file, expected an output folder", target, hint="choose another output path")
    real = Path(os.path.realpath(target))
    cwd = Path(os.path.realpath(os.getcwd()))
    if real == cwd or real in cwd.parents or real == Path(real.anchor):
        raise SpecError("is the current folder or one above it; it cannot be replaced", target, hint="choose a new or empty --out folder")
    if os.path.lexists(real / ".git"):
        raise SpecError("holds a git repository (.git); refusing to replace it", target, hint="choose a new or empty --out folder")
    return target


@contextlib.contextmanager
def replace_tree(target: str | Path, *, durable: bool = True) -> Iterator[Path]:
    """Build a folder's new contents in a staging folder, then swap it in.

        with replace_tree(out) as staging:
            (staging / "index.md").write_text(...)   # plain writes are fine here

    The staging folder is a hidden sibling of `target` (same file system, so
    the final rename is atomic).  On normal exit it replaces `target` (created
    if missing); the previous folder is kept until the new one is in place,
    then deleted.  On any exception, Ctrl-C or SIGTERM the staging folder is
    deleted and `target` is left exactly as it was.  Deciding whether
    `target` may be replaced at all (is it our own output?) is the caller's
    job, before entering.  `durable=True` fsyncs every staged file first.
    """
    target = _output_folder(target)
    parent = target.parent
    parent.mkdir(parents=True, exist_ok=True)
    cleanup_stale(target)
    with interrupts_as_exceptions():
        staging = _temp_name(target, "tmp")
        staging.mkdir()  # not mkdtemp: its 0700 mode would stay on the published folder
        try:
            yield staging
            if durable:
                _fsync_tree(staging)
            with _deferred():
                _swap(staging, target)
            if durable:
                _fsync_dir(parent)
        except BaseException:
            with _deferred():
                shutil.rmtree(staging, ignore_errors=True)
            raise


def _swap(staging: Path, target: Path) -> None:
    if not target.exists():
        os.rename(staging, target)
        return
    if _exchange(staging, target):
        shutil.rmtree(staging, ignore_errors=True)  # now holds the old contents
        return
    old = _temp_name(target, "old")
    os.rename(target, old)
    try:
        os.rename(staging, target)
    except BaseException:
        os.rename(old, target)
        raise
    shutil.rmtree(old, ignore_errors=True)
