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
from ..oracle.scratch import PROMPT, make_scratch, remove_scratch


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
           port: int = 0, threads: int = 0, world: Any = RECORDED) -> Report:
    """The first request of `sample` variants (all by default), and the
    standard threads (oracle/thread.py) of the first `threads` of them.
    Codex runs in `world` (oracle/world.py): by default the one the spec was
    imported in (its provenance.json), so a spec of the user's own project
    and config is compared there; None: the scratch project."""
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
    scratch = make_scratch(world=world)
    try:
        warmed = list(_harvest.capture(codex, scratch, [chosen[0]], timeout, port))  # settle skills and project trust, as the import did
        hidden = check_mcp(world, [c.body for c in warmed], codex.release)
        machine = spec_for_machine(spec, scratch.values())
        from ..assemble import Assembler, responses_payload

        asm = Assembler(machine)
        not_modelled: list[str] = [f"MCP server {n}'s tools (the compared model keeps them behind its exec tool)" for n in hidden]
        for cap in _harvest.capture(codex, scratch, chosen, timeout, port):
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
            _verify_threads(report, codex, scratch, machine, spec, [c for c in chosen][:threads], by_config, timeout, port)
            if not spec.turns.defined:
                not_modelled.append("later turns (the spec has no turns:, so its threads do not gate)")
        report.not_modelled = not_modelled
    finally:
        remove_scratch(scratch)
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


def _verify_threads(report: Report, codex: Any, scratch: Any, machine: Any, spec: Any, configs: list[Any],
                    by_config: dict[Any, Any], timeout: float, port: int) -> None:
    from ..oracle import thread as _thread
    from ..oracle.thread_compare import compare_thread

    catalog = _harvest.debug_models(codex, scratch, timeout)
    skill = _thread.bundled_skill(scratch)
    for cfg in configs:
        threads = _thread.standard_threads(cfg, catalog, skill, str(scratch.cwd), models_in=[m.slug for m in spec.models])
        for cap in _thread.capture_threads(codex, scratch, threads, timeout, port):
            report.threads.append(compare_thread(machine, by_config[cfg], cap, models_tools(spec)))
    report.threads_gate = bool(spec.turns.defined)
