"""One release's harvest: its catalog, the first request of every configuration
of its matrix, and the probe that asks whether it sorts the writable roots.

What `import-codex --cli` learns a spec from (importers/codex_cli).  The
captures come through a CapturePool (oracle/pool/worlds.py): several Codex worlds at
once, and the capture cache.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from ...util.atomic import interrupts_as_exceptions
from ..binary import CodexBinary, CodexError
from ..capture import MAX_CONFIGS, Config, Harvest, check_only, full_matrix, restrict, sample
from .worlds import CapturePool

if TYPE_CHECKING:
    from ..world import World


PROBE_ROOT = "zz-promptspec-probe"
"""A configured writable root whose path sorts after the scratch cwd: a release
that sorts the roots lists it last, one that keeps configured roots first lists it first."""


def _probe_root_order(pool: CapturePool, h: Harvest) -> bool | None:
    from ..parts import parse

    ok = [c.config for c in h.captures if c.body is not None and c.config.sandbox_mode == "workspace-write"]
    if not ok:
        return None
    probe = pool.scratch.base / PROBE_ROOT
    probe.mkdir(exist_ok=True)
    base = ok[0]
    cfg = Config(base.model, base.personality, base.mode, base.sandbox_mode, base.approval_policy,
                 (("sandbox_workspace_write", json.dumps({"writable_roots": [str(probe)]})),))
    got = pool.first_requests([cfg])
    if not got or got[0].body is None:
        return None
    text = next((t for it in parse(got[0].body).items for n, t in it.parts if n == "permissions"), "")
    roots = ROOTS.findall(text.rsplit(" The writable root", 1)[-1]) if " The writable root" in text else []
    if str(probe) not in roots or len(roots) < 2:
        return None
    return roots == sorted(roots)


ROOTS = re.compile(r"`([^`]*)`")


@interrupts_as_exceptions()  # SIGTERM (a CI cancel, `timeout`) still runs the finally that removes the scratch worlds
def harvest(binary: CodexBinary, models: Iterable[str] = (), n: int | None = None, timeout: float = 60.0,
            port: int = 0, world: "World | None" = None, jobs: int = 0, cache: bool = True,
            only: "Mapping[str, Sequence[str]] | None" = None) -> Harvest:
    """Catalog + the first request of every (or `n` sampled) configuration(s) of
    the catalog's models (or of `models`; with `only`, of those axis values), in the scratch world or the user's
    (`world`); in up to `jobs` Codex worlds at once, through the capture cache
    (oracle/pool/worlds.py)."""
    from ..mcp import deferred_definitions
    from ..world import check_mcp

    kept = check_only(only or {})
    with CapturePool(binary, world, timeout, port, jobs, cache) as pool:
        catalog = pool.catalog()
        known = [m["slug"] for m in catalog["models"]]
        wanted = list(models)
        for slug in wanted:
            if slug not in known:
                raise CodexError(f"the catalog has no model {slug!r}", release=binary.release,
                                 hint=f"known: {', '.join(known)}")
        warmed = pool.warm(Config(wanted[0] if wanted else known[0]))  # bundled skills unpacked, project trusted first
        check_mcp(world, [c.body for c in warmed], binary.release)  # fails fast where the first model shows MCP tools
        configs = restrict([c for c in full_matrix(catalog) if not wanted or c.model in wanted], kept)
        configs = sample(configs, n)
        if len(configs) > MAX_CONFIGS:
            raise CodexError(f"{len(configs)} configurations to capture (at most {MAX_CONFIGS})", release=binary.release,
                             hint="pick models with --model")
        scratch = pool.scratch
        h = Harvest(binary.release, {**scratch.values(), **(world.text_values() if world else {})}, catalog,
                    commands=["codex --version", "codex debug models",
                              "codex app-server (thread/start config={model, personality?, sandbox_mode, approval_policy};"
                              " turn/start collaborationMode?)"])
        h.captures = pool.first_requests(configs)
        h.models = wanted
        h.only = kept
        h.world = world
        firsts: dict[str, Any] = {}  # one body per model tells which MCP servers it names
        for c in h.captures:
            if c.body is not None:
                firsts.setdefault(c.config.model, c.body)
        h.mcp_deferred = deferred_definitions(binary, scratch, world, list(firsts.items()), timeout, port)
        h.mcp_hidden = check_mcp(world, [c.body for c in h.captures], binary.release)
        h.roots_sorted = _probe_root_order(pool, h)
        h.pool = pool.stats
        h.memo = pool.memo()
        if scratch.values()["current_date"] != h.sentinels["current_date"]:
            raise CodexError("the date changed during the run", release=binary.release, hint="rerun")
        return h
