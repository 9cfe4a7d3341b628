"""Spec file access: the only place that opens a file a spec names.

Spec folders arrive in pull requests from anyone, so every read goes through
`SpecFS`, which confines references to the spec folder and the roots its
`spec.yaml` declares, and through `read_text_file`, which reads one bounded,
regular, strictly encoded text file.  Nothing here knows about templates.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Mapping

from ..errors import SpecError
from .provenance import ReadLog, SourceRef, file_ref

MAX_FILE_BYTES = 8 * 1024 * 1024
"""Largest spec file we read: a prompt text bigger than this is a mistake."""
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
        if base != self.root and any(part.startswith(".") for part in parts):
            raise SpecError(
                f"{ref!r} names a hidden file or folder under a root",
                where,
                hint="spec files may not read hidden files (such as .git/) of a declared root",
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
        return candidate

    def read_text(self, ref: str, *, origin: str | Path | None = None) -> tuple[str, Path]:
        path = self.resolve(ref, origin=origin)
        try:
            text = read_text_file(path, cache=self._cache, seen=self.read_paths)
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


def read_text_file(path: Path, *, cache: dict[Path, str] | None = None, seen: set[Path] | None = None) -> str:
    """Read a spec text file strictly: UTF-8, no BOM, no NULs, LF line endings.

    Prompt text goes to the model byte for byte, so a stray BOM or a CRLF from a
    Windows checkout would silently change every request; we refuse them.
    """
    if cache is not None and path in cache:
        return cache[path]
    try:
        if path.is_dir():
            raise SpecError("is a directory, expected a file", path)
        # Open first, then check what was opened: a FIFO or device (or a
        # /proc file that reports size 0) must not be read without a bound.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
        with os.fdopen(fd, "rb", buffering=0) as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise SpecError("is not a regular file", path, hint="spec files must be plain text files")
            if st.st_size > MAX_FILE_BYTES:
                raise SpecError(
                    f"file is {st.st_size} bytes, over the {MAX_FILE_BYTES} byte limit",
                    path,
                    hint="prompt texts this large are almost certainly a mistake",
                )
            data = fh.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise SpecError(
                f"file is over the {MAX_FILE_BYTES} byte limit",
                path,
                hint="prompt texts this large are almost certainly a mistake",
            )
    except FileNotFoundError:
        raise SpecError("file not found", path, hint="create it or fix the reference") from None
    except PermissionError:
        raise SpecError("file is not readable", path, hint="check its permissions") from None
    except OSError as exc:
        raise SpecError(f"cannot read file: {exc.strerror or exc}", path) from None
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
    if cache is not None:
        cache[path] = text
    if seen is not None:
        seen.add(path.resolve())
    return text


