"""What a test needs from its surroundings, and what happens when it is missing.

Some tests need more than Python: a released Codex CLI, Chromium and its
driver, a local Mermaid, the `../shared/` data beside the checkout, a test
extra.  On a developer's machine a missing one is a skip that says what is
missing and how to get it.  In CI (the `CI` environment variable set, as
`.ci/run` and every hosted runner set it) the same test FAILS with that
reason: CI installs everything the suite needs, so a missing requirement is
a broken job, not a quieter green one.

Every place a test checks a requirement goes through `missing()` (or one of
the helpers below built on it), never a bare `pytest.skip`, so the rule is
in one place.  Skips that are not about a requirement (a platform without a
feature, a privilege the job cannot have) stay `pytest.skip` and say why.
"""

from __future__ import annotations

import importlib
import os
import shutil
from pathlib import Path
from types import ModuleType
from typing import NoReturn

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


def in_ci() -> bool:
    """True when the `CI` variable is set to anything but empty, 0 or false."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def missing(reason: str) -> NoReturn:
    """The requirement described by `reason` is absent: skip, or fail in CI."""
    if in_ci():
        pytest.fail(f"required in CI (CI is set), but missing: {reason}", pytrace=False)
    # Reported at the test (as a skip marker is), not at this line.
    raise pytest.skip.Exception(reason, allow_module_level=True, _use_item_location=True)


def require(condition: object, reason: str) -> None:
    """`missing(reason)` unless `condition` holds."""
    if not condition:
        missing(reason)


def require_module(name: str, reason: str) -> ModuleType:
    """`pytest.importorskip`, but a failure in CI: the module, imported."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        missing(f"{reason} ({exc})")


def require_program(name: str, how: str) -> str:
    """The path of `name` on PATH, else missing (`how` says how to install it)."""
    found = shutil.which(name)
    require(found, f"`{name}` is not on PATH ({how})")
    return found  # type: ignore[return-value]


def require_shared(path: Path) -> Path:
    """A file or folder of the `../shared/` data beside the checkout."""
    require(path.exists(), f"{path} is absent: the `../shared/` data beside the repository (see ../shared/README.md)")
    return path


def browser() -> tuple[str, str]:
    """(chromium, chromedriver) as found on PATH, the same way `.ci/run` looks
    for them, so an install anywhere on PATH counts (not one fixed path)."""
    how = "apt-get install chromium chromium-driver"
    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    require(chromium, f"no Chromium on PATH ({how})")
    driver = require_program("chromedriver", how)
    require_module("selenium", "selenium is a test extra: pip install -e '.[test]'")
    return chromium, driver  # type: ignore[return-value]


def needs(condition: object, reason: str) -> pytest.MarkDecorator:
    """A marker for a module or test that needs `condition` (evaluated at import):
    nothing when it holds, else `missing(reason)` when each test sets up
    (conftest.py's pytest_runtest_setup), the marker form of `require`."""
    if condition:
        return pytest.mark.skipif(False, reason=reason)
    return pytest.mark.missing_requirement(reason)


def check_marked(item: pytest.Item) -> None:
    """For pytest_runtest_setup: `missing()` for the first missing_requirement marker."""
    for mark in item.iter_markers("missing_requirement"):
        missing(mark.args[0])


def refusing_folder(tmp_path: Path) -> Path:
    """A folder nothing may be created in, for the "the system says no" paths:
    a read-only (0500) folder, or for root, whom modes do not stop (CI jobs
    often run as root), sysfs, where mkdir is refused even to root (EPERM).
    The mode is left as is: pytest's tmp cleanup copes with 0500."""
    if os.geteuid() != 0:
        locked = tmp_path / "read-only"
        locked.mkdir()
        locked.chmod(0o500)
        return locked
    require(Path("/sys/kernel").is_dir(), "no sysfs at /sys, the folder root cannot write in")
    return Path("/sys")
