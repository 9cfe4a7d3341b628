"""What the user's world (oracle/world.py) puts into an imported spec.

Values that shape text become spec values a person can change, not baked-in
strings: config texts (`developer_instructions`) are scenario values the
captured texts refer to as `{{ developer_instructions }}`, the AGENTS.md budget
is `agents_md.max_bytes`, the project's AGENTS.md chain is the spec's
`agents_md` tree (its folders kept relative to the project root, so the spec
renders for another machine by editing `scenario.cwd`), and the global
`$CODEX_HOME/AGENTS.md` is `agents_md.user_instructions`.
"""

from __future__ import annotations

import posixpath
from pathlib import Path
from typing import Any, Mapping

from ...oracle.scratch import PROJECT_DOC
from ...oracle.world import World

DOC_NAMES = ("AGENTS.override.md", "AGENTS.md")
MAX_DOC = 1024 * 1024
TREE = "project"
HOME_DOC = "codex_home/AGENTS.md"


def config_value(world: World | None, key: str) -> Any:
    return None if world is None else world.config(key)


def text_values(world: World | None) -> dict[str, str]:
    return {} if world is None else world.text_values()


def agents_files(world: World | None, scenario_cwd: str) -> tuple[dict[str, str], dict[str, Any], str]:
    """(spec files, the `agents_md` section, the scenario cwd) for the world's project."""
    section: dict[str, Any] = {"tree": TREE, "project_root": scenario_cwd}
    files: dict[str, str] = {}
    if world is None or world.cwd is None:
        files[f"{TREE}/AGENTS.md"] = PROJECT_DOC
        cwd = scenario_cwd
    else:
        from ...oracle.world import project_root

        root = project_root(world.cwd)
        rel = world.cwd.relative_to(root).as_posix()
        cwd = scenario_cwd if rel == "." else posixpath.join(scenario_cwd, rel)
        folders = [root] + [root / Path(*world.cwd.relative_to(root).parts[:i + 1]) for i in range(len(world.cwd.relative_to(root).parts))]
        fallbacks = config_value(world, "project_doc_fallback_filenames")
        names = (*DOC_NAMES, *(fallbacks if isinstance(fallbacks, list) else ()))
        for folder in folders:
            for name in names:
                path = folder / name
                if isinstance(name, str) and path.is_file() and not path.is_symlink() and path.stat().st_size <= MAX_DOC:
                    sub = folder.relative_to(root).as_posix()
                    files[posixpath.join(TREE, sub, name) if sub != "." else posixpath.join(TREE, name)] = path.read_text(encoding="utf-8")
        if isinstance(fallbacks, list) and all(isinstance(n, str) for n in fallbacks) and fallbacks:
            section["fallback_filenames"] = list(fallbacks)
        if not files:
            del section["tree"]  # a project without AGENTS.md: no tree to read
    budget = config_value(world, "project_doc_max_bytes")
    if isinstance(budget, int) and not isinstance(budget, bool):
        section["max_bytes"] = budget
    if world is not None and world.codex_home is not None:
        doc = world.codex_home / "AGENTS.md"
        if doc.is_file() and not doc.is_symlink() and doc.stat().st_size <= MAX_DOC:
            files[HOME_DOC] = doc.read_text(encoding="utf-8")
            section["user_instructions"] = HOME_DOC
    return files, section, cwd


def deferred_listing(deferred: Mapping[str, Any], captured: list[str | None]) -> str | None:
    """The lines a release's `<tools>` section lists the deferred MCP servers
    with (`- mcp__NAME`, in name order), when every captured section that
    lists one holds exactly that block: then the section says them from the
    spec's deferred tool files, so a server's file and its line go together.
    None when there is none, or the captures list them otherwise (the
    section then stays as captured)."""
    if not deferred:
        return None
    block = "".join(f"- mcp__{name}\n" for name in sorted(deferred))
    listing = [t for t in captured if t is not None and "- mcp__" in t]
    return block if listing and all(block in t for t in listing) else None


def provenance(world: World | None, copied: Mapping[str, str]) -> dict[str, Any]:
    """What provenance.json records of the world: never a credential."""
    if world is None or world.empty:
        return {}
    return {"world": {**world.record(), "spec_files_from_world": sorted(copied)}}
