"""A history of three released Codex CLIs (0.125.0 → 0.150.0 → 0.169.0).

Uses bench/history_codex.py, which imports each release with
`promptspec import-codex --cli` (the Fidelity work) and runs `history` over
the imported folders.  Skips, saying why, when this promptspec has no
`import-codex --cli` or the releases are not installed under
$PROMPTSPEC_CODEX_CACHE (default /work/cache/codex/<version>).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from _helpers import REPO, subprocess_env

RELEASES = ("0.125.0", "0.150.0", "0.169.0")
SCRIPT = REPO / "bench" / "history_codex.py"

pytestmark = pytest.mark.slow


def _script():
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import history_codex
    finally:
        sys.path.pop(0)
    return history_codex


def test_history_of_three_codex_releases(tmp_path: Path) -> None:
    hc = _script()
    if not hc.has_cli_import([sys.executable, "-m", "promptspec.cli"]):
        pytest.skip("this promptspec has no `import-codex --cli` yet (the Fidelity work is not merged)")
    missing = [v for v in RELEASES if hc.installed(v) is None]
    if missing:
        pytest.skip(f"Codex {', '.join(missing)} not installed under {hc.cache_root()} (npm install --prefix DIR @openai/codex@VERSION)")
    proc = subprocess.run([sys.executable, str(SCRIPT), "--releases", ",".join(RELEASES), "--out", str(tmp_path), "--format", "json"],
                          capture_output=True, text=True, env=subprocess_env(), timeout=3000)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [r["label"] for r in doc["releases"]] == list(RELEASES)
    from promptspec import pipeline
    from promptspec.measure.counter import TokenCounter

    counter = TokenCounter(persist=False)
    totals = {v: {m.request.variant.id: m.total for m in pipeline.run(tmp_path / v, counter=counter).measures} for v in RELEASES}
    for step, (a, b) in zip(doc["steps"], zip(RELEASES, RELEASES[1:])):
        assert step["tokens"]["per_variant"], f"{a} → {b}: no variant matched"
        for d in step["tokens"]["per_variant"]:
            assert (d["before"], d["after"]) == (totals[a][d["base_id"]], totals[b][d["id"]])
        assert step["changes"] or step["axes"], f"{a} → {b}: nothing reported"
