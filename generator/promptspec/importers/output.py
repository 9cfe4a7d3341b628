"""What an importer may write, checked before it writes anything.

Both importers build their spec as a map of relative paths to texts and stage
it in a new folder swapped in at the end (util/atomic.replace_tree).  The
names come from outside: model slugs from a binary's catalog, tool names, a
checkout's file names.  `checked_files` refuses any name that could leave the
staging folder or is not a plain, safe file name, and bounds the count and
size, before the first write; `not_an_import` is the one rule for `--force`:
a folder is replaced only when everything in it is something an import writes
and its spec.yaml carries the importer's header.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import Mapping

from ..errors import SpecError, escape_controls

MAX_FILES = 20_000
MAX_BYTES = 64 * 1024 * 1024
"""A spec is read with a 64 MB budget (spec/files.py); an import never writes more."""

_PART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,199}$")

KEPT = frozenset({"prompts.lock.json"})
"""Files promptspec writes into an imported spec later (`promptspec lock`), which --force may replace too."""


def checked_files(files: Mapping[str, str], where: str | Path) -> None:
    """Raise SpecError naming the first file name that is absolute, climbs
    (`..`), is not safe names joined by `/`, or makes the import too big."""
    if len(files) > MAX_FILES:
        raise SpecError(f"the import would write {len(files)} files (at most {MAX_FILES})", where, hint="import fewer models (--model)")
    total = 0
    for rel, text in files.items():
        parts = PurePosixPath(rel).parts
        if (not parts or PurePosixPath(rel).as_posix() != rel or "\\" in rel
                or not all(_PART.match(p) and ".." not in p for p in parts)):
            raise SpecError(f"refusing to write {escape_controls(rel[:120])!r}: not a safe file name inside --out", where,
                            hint="a model slug or tool name from the source is not a safe name; nothing was written")
        total += len(text.encode("utf-8"))
        if total > MAX_BYTES:
            raise SpecError(f"the import would write more than {MAX_BYTES // (1024 * 1024)} MB", where,
                            hint="import fewer models (--model); nothing was written")


def not_an_import(out: Path, files: Mapping[str, str], header: str) -> str | None:
    """Why `out` is not an earlier import that --force may replace, or None."""
    from ..spec.files import read_regular_bytes

    try:
        head = read_regular_bytes(out / "spec.yaml").decode("utf-8", "replace")
    except SpecError:
        head = ""
    ours = {rel.split("/")[0] for rel in files} | KEPT
    foreign = sorted(p.name for p in out.iterdir() if p.name not in ours)
    if foreign:
        return f"it holds {foreign[0]!r}, which an import does not write"
    if not head.startswith(header):
        return "its spec.yaml was not written by import-codex"
    return None


__all__ = ["KEPT", "MAX_BYTES", "MAX_FILES", "checked_files", "not_an_import"]
