"""`promptspec verify --cli PATH`: drive a released Codex and compare its first
requests with the spec's, variant by variant.

The spec is rendered with the scratch world's own values (cwd, home, date,
time zone, shell), so the comparison needs no tolerance beyond the documented
volatile fields.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import SpecError
from ..oracle import binary as _binary
from ..oracle import capture as _harvest
from ..oracle.compare import Outcome, compare
from ..oracle.machine import configs_of, models_tools, spec_for_machine
from ..oracle.scratch import PROMPT


COVERED = ("the instructions field", "every input message, content part by content part, and every other input item",
           "the tool list, tool by tool, and its order", "the request parameters", "the order of the body's keys")
"""What "identical" means, said in the report and on the Conformance page (less what `not_modelled` lists)."""


@dataclass
class VariantResult:
    id: str
    config: dict[str, str]
    identical: bool
    part: str | None = None  # the first difference, as version 1 reports had it
    diff: str | None = None
    refused: str | None = None
    differences: list[dict[str, str]] = field(default_factory=list)  # every one: {"name", "part", "diff"}


@dataclass
class Report:
    release: str
    spec: str
    date: str
    variants: list[VariantResult] = field(default_factory=list)
    matrix_size: int = 0
    not_modelled: list[str] = field(default_factory=list)
    seconds: float = 0.0
    threads: list[Any] = field(default_factory=list)
    """oracle/thread_compare.py ThreadResult per standard thread compared."""
    world: dict[str, Any] = field(default_factory=dict)
    """The user's world Codex ran in (oracle/world.py World.record); empty: the scratch project."""
    threads_gate: bool = False
    """Whether the threads count for `ok`: the spec says what later turns send (`turns:`)."""
    pool: Any = None
    """oracle/pool/worlds.py PoolStats: captures from the cache, worlds Codex ran in (not part of the stored report)."""

    @property
    def compared(self) -> int:
        return len(self.variants)

    @property
    def identical(self) -> int:
        return sum(v.identical for v in self.variants)

    @property
    def ok(self) -> bool:
        threads_ok = not self.threads_gate or all(t.identical for t in self.threads)
        return self.compared > 0 and self.identical == self.compared and threads_ok

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "promptspec-verify-report",
            "version": 2,
            "codex_release": self.release,
            "spec": self.spec,
            "date": self.date,
            "matrix_size": self.matrix_size,
            "compared": self.compared,
            "identical": self.identical,
            "not_modelled": self.not_modelled,
            **({"world": self.world} if self.world else {}),
            "volatile_fields_removed": ["input[].id", "prompt_cache_key", "client_metadata",
                                        "internal_chat_message_metadata_passthrough.create_time",
                                        "internal_chat_message_metadata_passthrough.turn_id",
                                        "the turn's prompt (last user message)"],
            "covered": list(COVERED),
            "variants": [dataclasses.asdict(v) for v in self.variants],
            "threads": [dataclasses.asdict(t) for t in self.threads],
            "threads_identical": sum(t.identical for t in self.threads),
        }


RECORDED = object()
"""verify's default world: the one the spec's provenance.json records."""


def verify(cli: str | Path, spec_dir: str | Path, sample: int | None = None, timeout: float = 60.0,
           port: int = 0, threads: int = 0, world: Any = RECORDED, jobs: int = 0, cache: bool = True) -> Report:
    """The first request of `sample` variants (all by default), and the
    standard threads (oracle/thread.py) of the first `threads` of them.
    Codex runs in `world` (oracle/world.py): by default the one the spec was
    imported in (its provenance.json), so a spec of the user's own project
    and config is compared there; None: the scratch project.  In up to `jobs`
    Codex worlds at once, through the capture cache (oracle/pool/: what the
    import captured of the same binary and world today is not captured again)."""
    from ..oracle.pool import CapturePool
    from ..oracle.world import check_mcp
    from ..spec import load_spec

    t0 = time.monotonic()
    codex = _binary.identify(cli)
    spec = load_spec(spec_dir)
    pairs = configs_of(spec)
    chosen = _harvest.sample([c for _, c in pairs], sample)
    by_config = {c: v for v, c in pairs}
    if not chosen:
        raise SpecError("the spec's matrix is empty: nothing to verify", "spec.yaml", hint="check matrix include/exclude")
    if world is RECORDED:
        world = recorded_world_of(Path(spec_dir))
    report = Report(codex.release, str(spec_dir), _dt.date.today().isoformat(), matrix_size=len(pairs),
                    world=world.record() if world is not None else {})
    with CapturePool(codex, world, timeout, port, jobs, cache) as pool:
        warmed = pool.warm(chosen[0])  # settle skills and project trust, as the import did
        hidden = check_mcp(world, [c.body for c in warmed], codex.release)
        machine = spec_for_machine(spec, pool.scratch.values())
        from ..assemble import Assembler, responses_payload

        asm = Assembler(machine)
        not_modelled: list[str] = [f"MCP server {n}'s tools (the compared model keeps them behind its exec tool)" for n in hidden]
        for cap in pool.first_requests(chosen):
            v = by_config[cap.config]
            if cap.refused:
                said = f"Codex {codex.release} refused it: {cap.refused}"
                report.variants.append(VariantResult(v.id, cap.config.values, False, "configuration", said, cap.refused,
                                                     [{"name": "configuration", "part": "configuration", "diff": said}]))
                continue
            outcome: Outcome = compare(cap.body, responses_payload(asm.assemble(v)), PROMPT,  # type: ignore[arg-type]
                                       compare_tools=models_tools(spec))
            for n in outcome.not_modelled:
                if n not in not_modelled:
                    not_modelled.append(n)
            first = outcome.first
            report.variants.append(VariantResult(v.id, cap.config.values, outcome.identical,
                                                 first.part if first else None, first.diff if first else None, None,
                                                 [{"name": d.name, "part": d.part, "diff": d.diff} for d in outcome.differences]))
        if threads and world is not None and world.cwd is not None:
            # The standard threads switch into a subfolder they create: never in the user's own project.
            not_modelled.append("later turns (the standard threads would write into the --cwd project, so they are not run there)")
        elif threads:
            _verify_threads(report, pool, machine, spec, thread_starts(chosen, pool.catalog(), threads), by_config)
            if not spec.turns.defined:
                not_modelled.append("later turns (the spec has no turns:, so its threads do not gate)")
        report.not_modelled = not_modelled
        report.pool = pool.stats
    report.seconds = time.monotonic() - t0
    return report


def recorded_world_of(spec_dir: Path) -> Any:
    """The world an imported spec was captured in (provenance.json `world`), or None."""
    import json

    from ..oracle.world import recorded_world
    from ..spec.files import read_regular_bytes

    path = spec_dir / "provenance.json"
    if not path.is_file():
        return None
    try:
        record = json.loads(read_regular_bytes(path, what="provenance file").decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise SpecError("is not JSON", path, hint="restore the file an import wrote, or pass the world flags") from None
    return recorded_world(record.get("world") if isinstance(record, dict) else None, str(path))


def thread_starts(configs: list[Any], catalog: dict[str, Any], n: int) -> list[Any]:
    """The `n` compared configurations the standard threads start from: the
    first, then the first of each other compaction family (oracle.thread.families),
    alike in the other axes where one is, so that each family's own later turns
    (and its switch across families) are exercised as soon as `n` allows; then
    the rest in order."""
    from ..oracle.thread import families

    family = families(catalog)

    def rest(c: Any) -> tuple[Any, ...]:
        return (c.personality, c.mode, c.sandbox_mode, c.approval_policy)

    picked: list[Any] = []
    for cfg in configs:
        if len(picked) >= n:
            break
        if picked and family.get(cfg.model) in {family.get(p.model) for p in picked}:
            continue
        alike = [c for c in configs if picked and family.get(c.model) == family.get(cfg.model) and rest(c) == rest(picked[0])]
        picked.append(alike[0] if alike else cfg)
    return picked + [c for c in configs if c not in picked][:max(0, n - len(picked))]


def _verify_threads(report: Report, pool: Any, machine: Any, spec: Any, configs: list[Any], by_config: dict[Any, Any]) -> None:
    from ..oracle import thread as _thread
    from ..oracle.thread_compare import compare_thread

    catalog = pool.catalog()
    skill = pool.bundled_skill()
    cwd = str(pool.scratch.cwd)
    every = [(cfg, t) for cfg in configs
             for t in _thread.standard_threads(cfg, catalog, skill, cwd, models_in=[m.slug for m in spec.models])]
    for (cfg, _), cap in zip(every, pool.threads([t for _, t in every])):
        report.threads.append(compare_thread(machine, by_config[cfg], cap, models_tools(spec)))
    report.threads_gate = bool(spec.turns.defined)
