#!/usr/bin/env python3
"""Set up a virtual environment in .venv and run promptspec's main jobs.

    python3 dev.py serve    # install, then `mkdocs serve` the site of the embedded spec
    python3 dev.py build    # install, then `mkdocs build --strict` into site/
    python3 dev.py test     # install with test extras, then run pytest

serve and build take `--engine properdocs` to use ProperDocs (the maintained
continuation of MkDocs 1.x) instead of MkDocs; it is installed with them.

Only the standard library is used here, so it runs on a fresh machine with
nothing but Python 3 (>= 3.10). Extra arguments are passed on to the tool.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")


def _python() -> Path:
    return BIN / ("python.exe" if os.name == "nt" else "python")


def ensure_venv(extras: str) -> Path:
    """Create .venv and install the project once; reinstall when pyproject changes."""
    if sys.version_info < (3, 10):
        sys.exit("promptspec needs Python 3.10 or newer")
    if not _python().exists():
        print(f"creating {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    stamp = VENV / f".installed-{extras or 'base'}"
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if not stamp.exists() or stamp.read_text() != digest:
        target = f"{ROOT}[{extras}]" if extras else str(ROOT)
        subprocess.check_call([str(_python()), "-m", "pip", "install", "--quiet", "--upgrade", "pip"])
        # The distribution was called "promptspec" before it became "promptspec-site".
        subprocess.call([str(_python()), "-m", "pip", "uninstall", "--quiet", "--yes", "promptspec"],
                        stderr=subprocess.DEVNULL)
        subprocess.check_call([str(_python()), "-m", "pip", "install", "--quiet", "-e", target])
        stamp.write_text(digest)
    return _python()


QUIET = {
    "NO_MKDOCS_2_WARNING": "1",  # Material's end-of-life banner under `mkdocs`; we pin mkdocs<2
    "DISABLE_MKDOCS_2_WARNING": "true",  # ProperDocs' notice, should a plugin switch it on
}


def tool_env() -> dict[str, str]:
    """The environment the site tools run in: without the maintenance banners,
    which say nothing about this project and bury its own messages."""
    return {**os.environ, **{k: v for k, v in QUIET.items() if k not in os.environ}}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("serve", "build", "test"):
        print(__doc__.strip())
        return 2
    job, rest = argv[0], argv[1:]
    engine = "mkdocs"
    if rest[:1] == ["--engine"] and len(rest) > 1 and rest[1] in ("mkdocs", "properdocs"):
        engine, rest = rest[1], rest[2:]
    os.chdir(ROOT)
    os.environ.update(tool_env())
    if job == "test":
        py = ensure_venv("test")
        return subprocess.call([str(py), "-m", "pytest", *rest])
    py = ensure_venv("properdocs" if engine == "properdocs" else "")
    if job == "serve":
        return subprocess.call([str(py), "-m", engine, "serve", "-f", "mkdocs.yml", *rest])
    return subprocess.call([str(py), "-m", engine, "build", "--strict", "-f", "mkdocs.yml", *rest])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
