"""bench/sweep.py's list of releases: what npm lists is more than what runs."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "sweep.py"


def _sweep():
    spec = importlib.util.spec_from_file_location("sweep", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# npm's list as it is shaped: platform packages of a release beside it, an
# alpha before its release, versions before the first with an app-server.
LISTED = ["0.124.0", "0.125.0-alpha.3", "0.125.0", "0.125.0-linux-x64", "0.128.0", "0.128.0-alpha.1",
          "0.128.0-alpha.1-linux-x64", "0.131.0-rc.2", "0.131.0-beta.1", "0.131.0", "0.162.0-alpha.15", "0.129.0"]


def test_stable_releases_only_by_default_in_version_order():
    assert _sweep().releases_from(LISTED) == ["0.125.0", "0.128.0", "0.129.0", "0.131.0"]


def test_prereleases_come_before_their_release_and_platform_packages_never_count():
    assert _sweep().releases_from(LISTED, prereleases=True) == [
        "0.125.0-alpha.3", "0.125.0", "0.128.0-alpha.1", "0.128.0", "0.129.0",
        "0.131.0-beta.1", "0.131.0-rc.2", "0.131.0", "0.162.0-alpha.15",
    ]
