"""`promptspec import-codex --cli PATH --out DIR`: a spec from a released Codex binary.

Offline: the catalog from `codex debug models`, every first request from one
`codex app-server` pointed at a loopback recorder.  The folder is staged and
swapped in only after the spec loads and reproduces every captured request
(rendered with the capture's own sentinel values), so a failed import leaves
nothing behind.  A spec that passed is kept in the capture cache under a
digest of the answers it was written from and of promptspec's code
(`_made_from`): a re-import that meets the same answers writes it without
building and checking it again.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from ...util.atomic import replace_tree
from ...util.fingerprint import code_fingerprint
from ...errors import SpecError
from ...oracle import binary as _binary
from ...oracle import capture as _harvest
from ...oracle.pool.harvest import harvest
from ...oracle.binary import CodexError
from ...oracle.world import World
from ..output import checked_files, not_an_import
from .write_spec import IMPORT_HEADER, Built, ImportProblem, build

MARKER_FILE = "provenance.json"


def _check_out(out: Path, force: bool) -> None:
    if out.exists() and not out.is_dir():
        raise SpecError("exists and is not a folder", out, hint="choose another --out")
    if out.is_dir() and any(out.iterdir()):
        if not (out / MARKER_FILE).is_file():
            raise SpecError("folder is not empty and holds no imported spec", out, hint="choose an empty or new --out")
        if not force:
            raise SpecError("already holds an imported spec", out, hint="pass --force to replace it")


def _check_writes(out: Path, files: dict[str, str]) -> None:
    """Before anything is written: every name stays inside --out (slugs and
    tool names come from the binary), and --force replaces only an earlier
    import of a released CLI (nothing in it that an import does not write)."""
    checked_files(files, out)
    if out.is_dir() and any(out.iterdir()):
        why = not_an_import(out, files, IMPORT_HEADER)
        if why:
            raise SpecError(f"refusing to replace a folder that is not an earlier import ({why})", out,
                            hint="--force only replaces a spec folder written by import-codex --cli; choose another --out")


def self_check(staging: Path, h: _harvest.Harvest) -> tuple[int, int, str | None]:
    """Render every captured configuration with the capture's sentinels; (identical, total, first problem)."""
    from ...spec import load_spec
    from ...oracle.compare import compare
    from ...oracle.machine import configs_of, models_tools, spec_for_machine
    from ...oracle.scratch import PROMPT

    spec = spec_for_machine(load_spec(staging), h.sentinels)
    by_config = {c: v for v, c in configs_of(spec)}
    from ...assemble import Assembler, responses_payload

    asm = Assembler(spec)
    same, total, first = 0, 0, None
    for cap in h.captures:
        if cap.body is None:
            continue
        total += 1
        v = by_config.get(cap.config)
        if v is None:
            first = first or f"{cap.config.id}: not a variant of the written spec"
            continue
        outcome = compare(cap.body, responses_payload(asm.assemble(v)), PROMPT, compare_tools=models_tools(spec))
        if outcome.identical:
            same += 1
        elif first is None:
            first = f"{v.id}: {outcome.first.part}" if outcome.first else v.id
    return same, total, first


MEMO_KIND = "imports"
"""The capture cache's file of imported specs (oracle/pool/cache.py Memo)."""


def _made_from(h: _harvest.Harvest) -> Iterator[Any]:
    """Everything the written spec and its check are a function of, piece by
    piece: the harvest's answers (not how they were obtained: h.pool) and the
    code that writes and checks (the store's key holds the binary and the world)."""
    yield {
        "code": code_fingerprint(), "release": h.release, "sentinels": h.sentinels, "catalog": h.catalog,
        "commands": h.commands, "models": h.models, "only": h.only, "roots_sorted": h.roots_sorted,
        "mcp_deferred": h.mcp_deferred, "mcp_hidden": h.mcp_hidden, "captures": len(h.captures),
    }
    for c in h.captures:
        yield [dataclasses.asdict(c.config), c.body, c.refused, c.transient]


def _kept(value: Any) -> tuple[Built, int, int] | None:
    """A memo entry as (spec, reproduced, compared); None for anything else (a miss)."""
    if not isinstance(value, dict):
        return None
    files, notes, same, total = (value.get(k) for k in ("files", "not_modelled", "reproduced", "compared"))
    if (isinstance(files, dict) and files and all(isinstance(k, str) and isinstance(v, str) for k, v in files.items())
            and isinstance(notes, list) and all(isinstance(n, str) for n in notes)
            and isinstance(same, int) and same == total):
        return Built(dict(files), list(notes)), same, total
    return None


def import_cli(cli: str | Path, out: str | Path, force: bool = False, models: tuple[str, ...] = (),
               timeout: float = 60.0, port: int = 0, world: World | None = None,
               later_turns: bool = False, jobs: int = 0, cache: bool = True,
               only: Mapping[str, Sequence[str]] | None = None) -> tuple[Path, dict]:
    """Write a spec of the release at `cli` into `out`; returns the folder and figures.
    With a `world` (oracle/world.py) Codex runs in the user's project, with
    their Codex home's config and their flags; `only` limits axes to some of
    their values (the spec's matrix is that part); `later_turns` also learns the
    standard threads' later requests (importers/codex_cli/later_turns.py).
    Captures run in up to `jobs` Codex worlds at once (0: one per core) and
    come from the capture cache where it holds them (oracle/pool/)."""
    if later_turns and only:
        from ...oracle.capture import check_only
        from .later_turns import check_part

        check_part(check_only(only))  # before any capture: the part must hold what the threads switch to
    out = Path(out).expanduser()
    codex = _binary.identify(cli)
    _check_out(out, force)
    t0 = time.monotonic()
    h = harvest(codex, models=models, timeout=timeout, port=port, world=world, jobs=jobs, cache=cache, only=only)
    key = h.memo.key(_made_from(h)) if h.memo is not None else None  # None: no capture cache
    kept = _kept(h.memo.get(MEMO_KIND, key)) if key is not None else None
    if kept is not None:
        built: Built = kept[0]
    else:
        try:
            built = build(h)
        except ImportProblem as exc:
            raise CodexError(f"cannot express what it sends: {exc}", release=codex.release,
                             hint="report the release; no spec was written") from None
    _check_writes(out, built.files)
    parent = out.absolute().parent
    created = [p for p in (parent, *parent.parents) if not p.exists()]
    stats: dict = {"release": codex.release, "captured": len(h.captures), "not_modelled": built.not_modelled, "pool": h.pool,
                   "spec_from_cache": kept is not None}
    try:
        with replace_tree(out) as staging:
            for rel, content in built.files.items():
                path = staging / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(content, encoding="utf-8", newline="\n")
            same, total, first = (kept[1], kept[2], None) if kept is not None else self_check(staging, h)
            stats.update(reproduced=same, compared=total)
            if same != total:
                raise CodexError(f"the written spec reproduces {same} of {total} captured requests (first: {first})",
                                 release=codex.release, hint="report the release; no spec was written")
            if kept is None and key is not None:
                h.memo.put(MEMO_KIND, key, {"files": built.files, "not_modelled": built.not_modelled,
                                            "reproduced": same, "compared": total})
            if later_turns:
                from .later_turns import import_later_turns

                try:
                    stats.update(import_later_turns(staging, codex, timeout, port, jobs, cache))
                except ImportProblem as exc:
                    raise CodexError(f"later turns: {exc}", release=codex.release, hint="report the release; no spec was written") from None
    except BaseException:
        for folder in created:
            try:
                folder.rmdir()
            except OSError:
                break
        raise
    stats["seconds"] = time.monotonic() - t0
    return out, stats
