"""One digest of promptspec's own code, for caches whose entries another version would make differently.

The history cache and the cache of imported Codex releases both key on it, so a
change anywhere in the package makes both miss; read once per process, so one
run sees one version even if the files change under it.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """sha256 over every .py file of the package (its path, then its bytes)."""
    h = hashlib.sha256()
    for path in sorted(PACKAGE.rglob("*.py")):
        h.update(path.relative_to(PACKAGE).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()
