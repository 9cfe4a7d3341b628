"""Build step that pyproject.toml cannot express: the embedded example spec.

`templates/` at the top of the repository is the one editable copy of the
example spec (the site, the docs and the tests all read it there). A wheel
has no repository around it, so the build copies the folder into the package
as `promptspec/example/`, where `promptspec.spec.embedded_spec()` finds it
after a plain `pip install`. An editable install reads `templates/` directly.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
EXAMPLE = ROOT / "templates"
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", ".*")


class BuildWithExample(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # the editable install reads templates/ in the checkout
        if not (EXAMPLE / "spec.yaml").is_file():
            raise SystemExit(f"setup.py: the example spec is missing: {EXAMPLE / 'spec.yaml'}")
        target = Path(self.build_lib) / "promptspec" / "example"
        if target.exists():
            shutil.rmtree(target)  # a stale copy must not keep deleted files
        shutil.copytree(EXAMPLE, target, ignore=SKIP)


setup(cmdclass={"build_py": BuildWithExample})
