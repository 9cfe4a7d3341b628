"""Spec file access: the only place that opens a file a spec names.

Spec folders arrive in pull requests from anyone, so every read goes through
`SpecFS`, which confines references to the spec folder and the roots its
`spec.yaml` declares, and through `read_text_file`, which reads one bounded,
regular, strictly encoded text file.  Nothing here knows about templates.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path
from typing import Mapping

from ..errors import SpecError
from .provenance import ReadLog, SourceRef, file_ref

MAX_FILE_BYTES = 8 * 1024 * 1024
"""Largest spec file we read: a prompt text bigger than this is a mistake."""

MAX_SPEC_BYTES = 64 * 1024 * 1024
"""Total of all files one spec reads: each file may be 8 MB, but sixty of
them (comment-only bodies compress to nothing in git) would still cost a
gigabyte of memory.  Codex's whole prompt set is well under 1 MB."""
# Files


class SpecFS:
    """Read-only access to the spec folder and its declared extra roots.

    A reference is either a path relative to the spec folder, or
    ``@root/path`` for a root declared in ``spec.yaml`` (used by specs imported
    from a Codex checkout, which refer to the checkout instead of copying it).
    Absolute paths, ``..`` and symlinks leading outside the root are refused:
    the spec must not be able to publish ``/etc/passwd`` on a website.
    """

    def __init__(self, root: Path, roots: Mapping[str, Path] | None = None):
        self.root = root.resolve()
        self.roots = {name: p.resolve() for name, p in (roots or {}).items()}
        self._cache: dict[Path, str] = {}
        self.read_paths: set[Path] = set()
        self.bytes_read = 0
        self.log = ReadLog()
        """Provenance: every read made while a frame is open is noted in it."""
        self._refs: dict[Path, tuple[str, SourceRef]] = {}

    def resolve(self, ref: str, *, origin: str | Path | None = None) -> Path:
        where = origin if origin is not None else self.root
        if not isinstance(ref, str) or not ref.strip():
            raise SpecError("empty file reference", where, hint="name a file inside the spec folder")
        if "\x00" in ref:
            raise SpecError("file reference contains a NUL byte", where)
        base = self.root
        rel = ref
        if ref.startswith("@"):
            name, _, rel = ref[1:].partition("/")
            if name not in self.roots:
                known = ", ".join(sorted(self.roots)) or "none declared"
                raise SpecError(
                    f"unknown root '@{name}' in file reference {ref!r}",
                    where,
                    hint=f"declare it under 'roots:' in spec.yaml (known: {known})",
                )
            base = self.roots[name]
        posix = rel.replace("\\", "/")
        if posix.startswith("/") or re.match(r"^[A-Za-z]:", posix):
            raise SpecError(
                f"absolute path {ref!r} is not allowed",
                where,
                hint="use a path relative to the spec folder",
            )
        if any(part == ".." for part in posix.split("/")):
            raise SpecError(
                f"path {ref!r} leaves the spec folder",
                where,
                hint="spec files may only refer to files inside the spec folder",
            )
        parts = [part for part in posix.split("/") if part]
        if any(len(part.encode("utf-8", "surrogatepass")) > 255 for part in parts) or len(posix) > 4096:
            raise SpecError(f"file reference {ref[:80]!r}... is too long", where, hint="use a shorter path")
        if any(part.startswith(".") and part != "." for part in parts):
            raise SpecError(
                f"{ref!r} names a hidden file or folder" + (" under a root" if base != self.root else ""),
                where,
                hint="spec files may not read hidden files (such as .git/)",
            )
        candidate = base / posix
        try:
            real = candidate.resolve()
        except RuntimeError:  # pathlib's "Symlink loop from ..."
            raise SpecError(f"cannot resolve {ref!r}: a symlink loop", where, hint="replace the symlink by a real file") from None
        except OSError as exc:
            raise SpecError(f"cannot resolve {ref!r}: {exc.strerror or exc}", where) from None
        if real != base and base not in real.parents:
            raise SpecError(
                f"{ref!r} is a symlink pointing outside the spec folder",
                where,
                hint="replace the symlink by a real file",
            )
        # The rules hold for the file actually opened, not the name written:
        # `x.md -> ../.git/config` inside a root is as hidden as `.git/config`.
        hidden = [part for part in real.relative_to(base).parts if part.startswith(".")]
        if hidden:
            raise SpecError(
                f"{ref!r} is a symlink to a hidden file or folder ({hidden[0]})",
                where,
                hint="spec files may not read hidden files (such as .git/); replace the symlink by a real file",
            )
        return candidate

    def read_text(self, ref: str, *, origin: str | Path | None = None) -> tuple[str, Path]:
        path = self.resolve(ref, origin=origin)
        try:
            fresh = path not in self._cache
            text = read_text_file(path, cache=self._cache, seen=self.read_paths)
            if fresh:
                self.bytes_read += len(text)
                if self.bytes_read > MAX_SPEC_BYTES:
                    raise SpecError(
                        f"the spec reads more than {MAX_SPEC_BYTES} bytes of files in total",
                        path,
                        hint="a spec this large is almost certainly a mistake; remove unused or generated files",
                    )
        except SpecError as exc:
            if exc.path == path:  # name the file as the spec does, not by its absolute path
                raise SpecError(exc.message, self.display(path), line=exc.line, column=exc.column, hint=exc.hint) from None
            raise
        if self.log.active:
            self.log.note(self.source_ref(path, text))
        return text, path

    def source_ref(self, path: Path, text: str) -> SourceRef:
        """The provenance record of a file read (memoised: display() resolves the path)."""
        hit = self._refs.get(path)
        if hit is None or hit[0] is not text:
            hit = self._refs[path] = (text, file_ref(self.display(path), text))
        return hit[1]

    def ref_of(self, ref: str) -> SourceRef:
        """The provenance record of a spec file named by reference (reads it)."""
        text, path = self.read_text(ref)
        return self.source_ref(path, text)

    def display(self, path: Path) -> str:
        """A stable, machine-independent name for a file (for pages and locks)."""
        real = path.resolve()
        if real == self.root or self.root in real.parents:
            return real.relative_to(self.root).as_posix()
        for name, base in sorted(self.roots.items()):
            if real == base or base in real.parents:
                return f"@{name}/{real.relative_to(base).as_posix()}"
        return path.as_posix()


_NOT_TEXT = re.compile("[\x00\r\x1b\ud800-\udfff]")
"""Not prompt text: NUL, CR, ESC (terminal escape sequences: they can hide
lines of a diff from a reviewer) and lone surrogates (which no file can hold
and no encoder accepts).  Other controls (bell, form feed...) pass through
as Codex would send them."""


def not_text(text: str) -> tuple[str, int] | None:
    """(what, line) of the first character prompt text may not hold, or None."""
    m = _NOT_TEXT.search(text)
    if m is None:
        return None
    char = m.group()
    what = {"\x00": "a NUL character", "\r": "a CR (carriage return) character", "\x1b": "an ESC (terminal escape) character"}.get(
        char, f"a lone surrogate U+{ord(char):04X}" if "\ud800" <= char <= "\udfff" else f"the control character U+{ord(char):04X}"
    )
    return what, text.count("\n", 0, m.start()) + 1


def check_text(text: str, where: str | Path, *, line: int | None = None, what: str = "text") -> str:
    """One rule for prompt text wherever it comes from (a file, a JSON or
    YAML escape such as "\\u0000", a template literal): plain LF text."""
    found = not_text(text)
    if found is not None:
        raise SpecError(
            f"{what} contains {found[0]}",
            where,
            line=line if line is not None else found[1],
            hint="prompt text must be plain LF-terminated text; remove it (escapes such as \\u001b count too)",
        )
    return text


def read_regular_bytes(path: str | Path, *, limit: int = MAX_FILE_BYTES, what: str = "file") -> bytes:
    """The one bounded read: open without blocking, check what was opened,
    then read at most `limit` bytes.

    A FIFO would hang `open()` or `read()`, `/dev/zero` (or a symlink to it)
    never ends, and a /proc file reports size 0: so the check is on the open
    descriptor (`fstat`), never on the name, and the read is capped even when
    the size looked fine.  Raises SpecError naming `path`."""
    path = Path(path)
    try:
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
        fd = os.open(path, flags)
        with os.fdopen(fd, "rb", buffering=0) as fh:
            st = os.fstat(fh.fileno())
            if stat.S_ISDIR(st.st_mode):
                raise SpecError("is a directory, expected a file", path)
            if not stat.S_ISREG(st.st_mode):
                raise SpecError(f"is not a regular {what} (a device, FIFO or socket)", path, hint="spec files must be plain text files")
            if st.st_size > limit:
                raise SpecError(
                    f"{what} is {st.st_size} bytes, over the {limit} byte limit",
                    path,
                    hint="prompt texts this large are almost certainly a mistake",
                )
            chunks, size = [], 0
            while size <= limit:
                chunk = fh.read(min(1 << 20, limit + 1 - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
            data = b"".join(chunks)
        if len(data) > limit:
            raise SpecError(
                f"{what} is over the {limit} byte limit",
                path,
                hint="prompt texts this large are almost certainly a mistake",
            )
        return data
    except IsADirectoryError:
        raise SpecError("is a directory, expected a file", path) from None
    except FileNotFoundError:
        raise SpecError(f"{what} not found", path, hint="create it or fix the reference") from None
    except PermissionError:
        raise SpecError(f"{what} is not readable", path, hint="check its permissions") from None
    except OSError as exc:
        raise SpecError(f"cannot read {what}: {exc.strerror or exc}", path) from None


def file_digest(path: str | Path, *, limit: int = MAX_FILE_BYTES) -> str | None:
    """sha256 of a file for change detection, never blocking and never
    reading more than `limit`: a FIFO, device or oversized file gets a marker
    instead of a hash (it changes when what is there changes kind or size),
    a missing or unreadable file gets None."""
    try:
        return hashlib.sha256(read_regular_bytes(path, limit=limit)).hexdigest()
    except SpecError:
        try:
            st = os.stat(path)
        except OSError:
            return None
        kind = "regular" if stat.S_ISREG(st.st_mode) else "special"
        return f"{kind}:{stat.S_IFMT(st.st_mode)}:{st.st_size}:{st.st_mtime_ns}"


def read_text_file(path: Path, *, cache: dict[Path, str] | None = None, seen: set[Path] | None = None) -> str:
    """Read a spec text file strictly: UTF-8, no BOM, no NULs, LF line endings.

    Prompt text goes to the model byte for byte, so a stray BOM or a CRLF from a
    Windows checkout would silently change every request; we refuse them.
    """
    if cache is not None and path in cache:
        return cache[path]
    if Path(path).is_dir():
        raise SpecError("is a directory, expected a file", path)
    data = read_regular_bytes(path)
    if b"\x00" in data:
        raise SpecError("looks like a binary file (contains NUL bytes)", path, hint="spec files must be UTF-8 text")
    if data.startswith(b"\xef\xbb\xbf"):
        raise SpecError("file starts with a UTF-8 byte-order mark", path, line=1, hint="save it as UTF-8 without BOM")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise SpecError(f"not valid UTF-8 (byte {exc.start})", path, line=line, hint="save the file as UTF-8") from None
    if "\r" in text:
        line = text[: text.index("\r")].count("\n") + 1
        raise SpecError(
            "file has CR (Windows) line endings",
            path,
            line=line,
            hint="convert it to LF line endings, e.g. with dos2unix",
        )
    check_text(text, path, what="file")
    if cache is not None:
        cache[path] = text
    if seen is not None:
        seen.add(path.resolve())
    return text
