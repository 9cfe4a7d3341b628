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
from ..importers.codex_cli import binary as _binary
from ..importers.codex_cli import harvest as _harvest
from ..importers.codex_cli.harvest import AXES, Config
from ..importers.codex_cli.scratch import PROMPT, make_scratch, remove_scratch
from .compare import Outcome, compare


@dataclass
class VariantResult:
    id: str
    config: dict[str, str]
    identical: bool
    part: str | None = None
    diff: str | None = None
    refused: str | None = None


@dataclass
class Report:
    release: str
    spec: str
    date: str
    variants: list[VariantResult] = field(default_factory=list)
    matrix_size: int = 0
    not_modelled: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def compared(self) -> int:
        return len(self.variants)

    @property
    def identical(self) -> int:
        return sum(v.identical for v in self.variants)

    @property
    def ok(self) -> bool:
        return self.compared > 0 and self.identical == self.compared

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "promptspec-verify-report",
            "version": 1,
            "codex_release": self.release,
            "spec": self.spec,
            "date": self.date,
            "matrix_size": self.matrix_size,
            "compared": self.compared,
            "identical": self.identical,
            "not_modelled": self.not_modelled,
            "volatile_fields_removed": ["input[].id", "prompt_cache_key", "client_metadata",
                                        "internal_chat_message_metadata_passthrough.create_time",
                                        "internal_chat_message_metadata_passthrough.turn_id",
                                        "the turn's prompt (last user message)"],
            "variants": [dataclasses.asdict(v) for v in self.variants],
        }


def spec_for_machine(spec, values: dict[str, str]):
    """The spec with its environment values replaced by this machine's (the scratch world's)."""
    scenario = {**spec.scenario, **{k: v for k, v in values.items() if k in spec.scenario}}
    agents = spec.agents
    if "cwd" in values and agents.tree is not None:
        agents = dataclasses.replace(agents, project_root=values["cwd"])
    return dataclasses.replace(spec, scenario=scenario, agents=agents)


def configs_of(spec) -> list[tuple[Any, Config]]:
    from ..assemble import matrix

    names = [a for a, _ in spec.axes]
    missing = [a for a in AXES if a not in names]
    if missing:
        raise SpecError(f"the spec has no {missing[0]!r} axis, so it cannot say which Codex configuration a variant is",
                        "spec.yaml", hint="verify a spec written by `promptspec import-codex --cli`, or add the axis with Codex's values")
    return [(v, Config(**{a: v.value(a) for a in AXES})) for v in matrix(spec)]


def ours_body(spec, variant) -> dict[str, Any]:
    from ..assemble import Assembler
    from ..export import responses_payload

    return responses_payload(Assembler(spec).assemble(variant))


def verify(cli: str | Path, spec_dir: str | Path, sample: int | None = None) -> Report:
    from ..spec import load_spec

    t0 = time.monotonic()
    codex = _binary.identify(cli)
    spec = load_spec(spec_dir)
    pairs = configs_of(spec)
    chosen = _harvest.sample([c for _, c in pairs], sample)
    by_config = {c: v for v, c in pairs}
    report = Report(codex.release, str(spec_dir), _dt.date.today().isoformat(), matrix_size=len(pairs))
    scratch = make_scratch()
    try:
        list(_harvest.capture(codex, scratch, [chosen[0]]))  # settle skills and project trust, as the import did
        machine = spec_for_machine(spec, scratch.values())
        from ..assemble import Assembler
        from ..export import responses_payload

        asm = Assembler(machine)
        not_modelled: list[str] = []
        for cap in _harvest.capture(codex, scratch, chosen):
            v = by_config[cap.config]
            if cap.refused:
                report.variants.append(VariantResult(v.id, cap.config.values, False, "configuration",
                                                     f"Codex {codex.release} refused it: {cap.refused}", cap.refused))
                continue
            outcome: Outcome = compare(cap.body, responses_payload(asm.assemble(v)), PROMPT)  # type: ignore[arg-type]
            for n in outcome.not_modelled:
                if n not in not_modelled:
                    not_modelled.append(n)
            first = outcome.first
            report.variants.append(VariantResult(v.id, cap.config.values, outcome.identical,
                                                 first.part if first else None, first.diff if first else None))
        report.not_modelled = not_modelled
    finally:
        remove_scratch(scratch)
    report.seconds = time.monotonic() - t0
    return report
