"""load → assemble → measure, once, with stage timings.

Every front end (CLI commands, the MkDocs plugin, review, lint) wants the
same three steps; this is the one place they happen, so timings and caching
behave the same everywhere.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from .assemble import Assembler, Request, Variant, matrix
from .measure import Measure, measure_all
from .spec import Spec, load_spec
from .tokens import TokenCounter


@dataclass
class Result:
    spec: Spec
    variants: list[Variant]
    requests: list[Request]
    measures: list[Measure]
    timings: dict[str, float] = field(default_factory=dict)

    def measure_of(self, variant: Variant) -> Measure:
        return self._index()[variant]

    def _index(self) -> dict[Variant, Measure]:
        idx = getattr(self, "_idx", None)
        if idx is None:
            idx = {m.request.variant: m for m in self.measures}
            self._idx = idx
        return idx


def run(spec_dir: str | Path, *, counter: TokenCounter | None = None, progress=None) -> Result:
    timings: dict[str, float] = {}
    t = time.perf_counter()
    spec = load_spec(spec_dir)
    timings["load"] = time.perf_counter() - t
    return run_spec(spec, counter=counter, timings=timings, progress=progress)


def run_spec(spec: Spec, *, counter: TokenCounter | None = None, timings: dict[str, float] | None = None, progress=None) -> Result:
    timings = {} if timings is None else timings
    t = time.perf_counter()
    variants = matrix(spec)
    asm = Assembler(spec)
    requests = []
    for i, v in enumerate(variants):
        requests.append(asm.assemble(v))
        if progress is not None:
            progress(i + 1, len(variants))
    timings["assemble"] = time.perf_counter() - t
    t = time.perf_counter()
    measures = measure_all(spec, requests, counter if counter is not None else TokenCounter())
    timings["count"] = time.perf_counter() - t
    return Result(spec, variants, requests, measures, timings)
