"""A spec seen as Codex configurations, rendered for one machine.

The imported spec's axes carry Codex's names and values, so each variant is a
Codex configuration; its environment values (cwd, home, date...) are replaced
by the machine's, here the scratch world's sentinels.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..errors import SpecError
from .capture import AXES, Config


def spec_for_machine(spec, values: dict[str, str]):
    """The spec with its environment values replaced by this machine's (the scratch world's)."""
    scenario = {**spec.scenario, **{k: v for k, v in values.items() if k in spec.scenario}}
    agents = spec.agents
    if "cwd" in values and agents.tree is not None:
        agents = dataclasses.replace(agents, project_root=values.get("project_root", values["cwd"]))
    return dataclasses.replace(spec, scenario=scenario, agents=agents, memo={})


def configs_of(spec) -> list[tuple[Any, Config]]:
    from ..assemble import matrix

    names = [a for a, _ in spec.axes]
    missing = [a for a in AXES if a not in names]
    if missing:
        raise SpecError(f"the spec has no {missing[0]!r} axis, so it cannot say which Codex configuration a variant is",
                        "spec.yaml", hint="verify a spec written by `promptspec import-codex --cli`, or add the axis with Codex's values")
    return [(v, Config(**{a: v.value(a) for a in AXES})) for v in matrix(spec)]


def models_tools(spec) -> bool:
    """Whether the spec says what tools and parameters are sent (then they are compared too)."""
    return bool(spec.tools or spec.request.rules or spec.request.placements)
