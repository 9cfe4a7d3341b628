"""A history of three released Codex CLIs (0.125.0 → 0.150.0 → 0.169.0).

Uses bench/history_codex.py, which imports each release with
`promptspec import-codex --cli` and runs `history` over the imported folders
(or, with $PROMPTSPEC_CODEX_SPECS, over specs imported earlier as
$PROMPTSPEC_CODEX_SPECS/<version>).  The releases come from tests/codex_release.py
(installed from npm when absent; a skip saying why, a failure in CI).
Every per-variant Δ is checked against a fresh pipeline run of both sides.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from _helpers import REPO, subprocess_env
from codex_release import codex_install

RELEASES = ("0.125.0", "0.150.0", "0.169.0")
MODEL = "codex-auto-review"  # in all three; its base instructions move into a developer message in 0.150.0
SCRIPT = REPO / "bench" / "history_codex.py"

pytestmark = pytest.mark.slow


def test_history_of_three_codex_releases(tmp_path: Path) -> None:
    imported = os.environ.get("PROMPTSPEC_CODEX_SPECS")
    env = subprocess_env()
    if imported:
        specs, extra = Path(imported), ["--imported", imported]
    else:
        # Each release from codex_release (installed from npm when absent; missing is a failure in CI),
        # shown to the script as one cache folder of <release> links, the layout it reads.
        cache = tmp_path / "codex-cache"
        cache.mkdir()
        for v in RELEASES:
            (cache / v).symlink_to(codex_install(v), target_is_directory=True)
        env["PROMPTSPEC_CODEX_CACHE"] = str(cache)
        # One model keeps the three imports to minutes (all of them: about five minutes per release on 2 cores);
        # its unset personality and mode to seconds: what the history is checked for is on the sandbox and approval
        # axes and in the base instructions (12 of the model's 144 configurations per release).
        specs, extra = tmp_path, ["--model", MODEL, "--only", "personality=unset", "--only", "mode=unset"]
    proc = subprocess.run([sys.executable, str(SCRIPT), "--releases", ",".join(RELEASES), "--out", str(tmp_path), "--format", "json", *extra],
                          capture_output=True, text=True, env=env, timeout=3000)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [r["label"] for r in doc["releases"]] == list(RELEASES)
    from promptspec import pipeline
    from promptspec.measure.counter import TokenCounter

    counter = TokenCounter(persist=False)
    totals = {v: {m.request.variant.id: m.total for m in pipeline.run(specs / v, counter=counter).measures} for v in RELEASES}
    for step, (a, b) in zip(doc["steps"], zip(RELEASES, RELEASES[1:])):
        assert step["tokens"]["per_variant"], f"{a} → {b}: no variant matched"
        for d in step["tokens"]["per_variant"]:
            assert (d["before"], d["after"]) == (totals[a][d["base_id"]], totals[b][d["id"]])
        assert step["changes"] or step["axes"], f"{a} → {b}: nothing reported"
    first = doc["steps"][0]
    # 0.150.0 refuses approval_policy = untrusted and moves codex-auto-review's base instructions into a developer message.
    approval = next(x for x in first["axes"] if x["axis"] == "approval_policy")
    assert "untrusted" in approval["removed"] and [r["value"] for r in approval["refused"]] == ["untrusted"]
    assert any(c["kind"] == "moved" and c["name_before"] == "(instructions)" and c["place_after"] == "developer" for c in first["changes"])
