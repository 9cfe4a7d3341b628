"""The capture pool and cache with the real release (tests/codex_release.py):
captures made in several worlds at once are the serial ones, and an import
and a verify from the cache write what the serial, uncached ones write."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from codex_release import IMPORTED_MODEL
from promptspec.oracle.binary import identify
from promptspec.oracle.capture import full_matrix, sample
from promptspec.oracle.parts import parse
from promptspec.oracle.pool import CapturePool

pytestmark = pytest.mark.slow


def _parsed(caps, base: str):
    out = []
    for c in caps:
        body = None if c.body is None else json.loads(json.dumps(c.body).replace(base, "/BASE"))
        out.append((c.config, None if body is None else parse(body), c.refused))
    return out


def test_captures_in_two_quiet_worlds_are_the_serial_loud_ones(codex, tmp_path):
    binary = identify(codex)
    seen = {}
    for jobs in (1, 2):  # one loud world, as before the quiet world (the reference); two quiet ones
        with CapturePool(binary, None, jobs=jobs, cache=False, quiet=jobs == 2) as p:
            configs = sample([c for c in full_matrix(p.catalog()) if c.model == IMPORTED_MODEL], 52)  # 48 after the probe
            p.warm(configs[0])
            caps = p.first_requests(configs)
            seen[jobs] = (_parsed(caps, str(p.scratch.base)), p.stats.worlds, p.stats.quiet)
    assert seen[1][1] == 1 and seen[2][1] == 2
    assert seen[1][2] == {"first": "loud (not asked)"} and seen[2][2] == {"first": "quiet"}  # the release's probe agreed
    assert seen[2][0] == seen[1][0] and sum(c[1] is not None for c in seen[1][0]) > 40


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_import_and_verify_from_the_cache_write_what_serial_uncached_runs_write(codex, tmp_path, monkeypatch):
    from promptspec.importers.codex_cli import import_cli
    from promptspec.verify import verify
    from promptspec.verify.report import as_json

    monkeypatch.setenv("PROMPTSPEC_CACHE_DIR", str(tmp_path / "cache"))
    models = (IMPORTED_MODEL,)
    # Half the model's matrix (72 configurations): enough for two worlds at once (MIN_CONFIGS_PER_JOB);
    # what the pool and the cache give is per configuration (the whole matrix: tests/verify/).
    part = {"approval_policy": ("on-request", "never")}
    serial, _ = import_cli(codex, tmp_path / "serial", models=models, jobs=1, cache=False, only=part)
    cold, cold_stats = import_cli(codex, tmp_path / "cold", models=models, jobs=2, only=part)
    warm, warm_stats = import_cli(codex, tmp_path / "warm", models=models, jobs=2, only=part)
    assert cold_stats["pool"].captured > 0 and cold_stats["pool"].worlds == 2 and warm_stats["pool"].captured == 0
    assert _tree(serial) == _tree(cold) == _tree(warm)

    def report(spec: Path, **kw) -> tuple[str, object]:
        r = verify(codex, spec, threads=1, **kw)
        data = json.loads(as_json(r))
        data.pop("spec")  # a thread's diff text names the scratch folder of its run, cached or not:
        return re.sub(r"/promptspec-codex-\w{8}", "/SCRATCH", json.dumps(data, sort_keys=True)), r.pool

    uncached, _ = report(serial, jobs=1, cache=False)
    cached, stats = report(cold)
    assert stats.captured > 0  # the thread captures were not in the import's cache...
    again, stats = report(warm)
    assert stats.captured == 0  # ...and are now
    assert uncached == cached == again and '"identical": 72' in cached
