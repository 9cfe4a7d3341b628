"""Shared test fixtures.

* Every test session counts tokens into its own cache folder
  (`PROMPTSPEC_CACHE_DIR`), never the user's ~/.cache.
* `make_spec` writes a small spec folder into tmp_path, so a test states only
  the parts it is about.
* `codex` is the pinned released Codex CLI (codex_release.py), installed
  once per session; the tests that ask for it skip with the reason without it,
  and fail in CI (required.py: what "required" means).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Mapping

import pytest
import yaml

def pytest_runtest_setup(item: pytest.Item) -> None:
    from required import check_marked

    check_marked(item)  # a requirement missing: skip with the reason, fail in CI (required.py)


@pytest.fixture(scope="session")
def codex() -> Path:
    from codex_release import codex_install

    return codex_install()


@pytest.fixture(scope="session")
def codex_import(codex: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """One model of the pinned Codex imported with `import-codex --cli`, once
    per session for the importer and verify tests: (spec folder, stats).
    Read-only: a test that edits it works on a copy."""
    from codex_release import IMPORTED_MODEL
    from promptspec.importers.codex_cli import import_cli

    return import_cli(codex, tmp_path_factory.mktemp("codex-import") / "spec", models=(IMPORTED_MODEL,))


@pytest.fixture(scope="session", autouse=True)
def _token_cache_dir(tmp_path_factory: pytest.TempPathFactory):
    """Keep token caches out of the user's home for the whole session (and the
    tools' banners out of every in-process run)."""
    path = tmp_path_factory.mktemp("token-cache")
    mp = pytest.MonkeyPatch()
    mp.setenv("PROMPTSPEC_CACHE_DIR", str(path))
    # The site tools' maintenance banners off, as _helpers.subprocess_env does for a child:
    # MkDocs builds and the CLI run in this process (_helpers.py).
    mp.setenv("NO_MKDOCS_2_WARNING", "1")
    mp.setenv("DISABLE_MKDOCS_2_WARNING", "true")
    yield path
    mp.undo()


# ---------------------------------------------------------------------------
# A minimal spec, written into tmp_path.

DEFAULT_MODEL: dict[str, Any] = {
    "slug": "m1",
    "display_name": "Model One",
    "context_window": 100000,
    "base_instructions": "Base instructions of m1.\n",
}


def write_spec(
    root: Path,
    *,
    spec: Mapping[str, Any] | None = None,
    models: list[Mapping[str, Any]] | None = None,
    fragments: Mapping[str, Mapping[str, Any]] | None = None,
    files: Mapping[str, str] | None = None,
) -> Path:
    """Write a spec folder at `root` and return it.

    `spec` is the content of spec.yaml (a `name` is added if missing),
    `models` the list for models.json (default: one model `m1` with plain
    base instructions), `fragments` maps a fragment name to its definition
    (written as fragments/NAME.yaml), `files` maps extra relative paths
    (templates, AGENTS.md trees...) to their text.
    """
    root.mkdir(parents=True, exist_ok=True)
    data = {"name": "test spec", **(spec or {})}
    (root / "spec.yaml").write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    catalog = {"models": list(models) if models is not None else [dict(DEFAULT_MODEL)]}
    (root / "models.json").write_text(json.dumps(catalog, indent=2), encoding="utf-8")
    (root / "fragments").mkdir(exist_ok=True)
    for name, definition in (fragments or {}).items():
        (root / "fragments" / f"{name}.yaml").write_text(
            yaml.safe_dump(dict(definition), sort_keys=False, allow_unicode=True), encoding="utf-8"
        )
    for rel, text in (files or {}).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    return root


@pytest.fixture
def make_spec(tmp_path: Path) -> Callable[..., Path]:
    """`make_spec(spec=..., models=..., fragments=..., files=..., name="spec")` -> folder."""

    def make(name: str = "spec", **kwargs: Any) -> Path:
        return write_spec(tmp_path / name, **kwargs)

    return make
