"""R5, R6 (second red-team pass): the capture world is sealed.

Machine-wide Codex configuration under /etc/codex (a fixed path Codex reads
whatever HOME says) is refused with one line; a capture by the real release
makes no network attempt (no `git ls-remote`, no DNS lookup), checked with
strace on the binary."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from promptspec.oracle import binary, scratch
from promptspec.oracle.pool.harvest import harvest
from promptspec.oracle.binary import CodexError

from required import require_program
from test_import_output import fake


@pytest.mark.parametrize("name", ["config.toml", "managed_config.toml", "requirements.toml"])
def test_machine_wide_codex_configuration_is_refused(tmp_path: Path, monkeypatch, name: str) -> None:
    etc = tmp_path / "etc-codex"
    etc.mkdir()
    (etc / name).write_text('developer_instructions = "MACHINE-POLICY"\n')
    monkeypatch.setattr(scratch, "SYSTEM_CONFIG_DIR", etc, raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    with pytest.raises(CodexError) as exc:
        harvest(binary.identify(fake(tmp_path / "bin")), n=1, timeout=30)
    assert str(etc / name) in exc.value.oneline() and "\n" not in exc.value.oneline()
    assert list((tmp_path / "tmp").iterdir()) == []


def _traced(codex: Path, tmp_path: Path) -> Path:
    """A stand-in for `codex` that runs the real binary under strace, a trace
    file per Codex process (trace.PID, its children's calls in it)."""
    strace = require_program("strace", "apt-get install strace; .ci/run installs it")  # to watch the binary's system calls
    real = binary.identify(codex).path
    wrap = tmp_path / "codex"
    wrap.write_text(f'#!/bin/bash\n[ "$1" = "--version" ] && exec "{real}" --version\n'
                    f'exec "{strace}" -f -qq -s 200 -e trace=execve,connect,sendto,sendmmsg -o "{tmp_path}/trace.$$" "{real}" "$@"\n')
    wrap.chmod(0o755)
    probe = subprocess.run([strace, "-o", "/dev/null", "true"], capture_output=True)
    if probe.returncode != 0:
        # Not a requirement CI can install: the container may forbid ptrace.
        pytest.skip(f"strace cannot trace here: {probe.stderr.decode(errors='replace').strip()[:100]}")
    return wrap


@pytest.mark.slow
def test_a_capture_by_the_real_release_makes_no_network_attempt(codex, tmp_path: Path) -> None:
    wrap = _traced(codex, tmp_path)
    h = harvest(binary.identify(wrap), models=["gpt-5.4"], n=1, timeout=60, cache=False)
    assert any(c.body for c in h.captures)
    trace = "".join(p.read_text(errors="replace") for p in tmp_path.glob("trace.*"))
    assert "execve" in trace
    assert "ls-remote" not in trace
    assert "\\7chatgpt\\3com" not in trace and "\\6github\\3com" not in trace
    remote = [ln for ln in trace.splitlines() if "connect(" in ln and "AF_INET" in ln and "127.0.0.1" not in ln]
    assert remote == []


@pytest.mark.slow
def test_a_quiet_world_runs_no_shell_snapshot_and_no_lsb_release(codex, tmp_path: Path) -> None:
    """What the quiet world turns off (oracle/scratch.py) is what the release
    runs in a loud one: the login-shell snapshot and `lsb_release`."""
    wrap = _traced(codex, tmp_path)
    h = harvest(binary.identify(wrap), models=["gpt-5.4"], n=16, timeout=60, cache=False, jobs=2)
    assert h.pool.quiet == {"first": "quiet"} and sum(c.body is not None for c in h.captures) >= 12
    traces = {"quiet": [], "loud": []}
    for path in tmp_path.glob("trace.*"):
        text = path.read_text(errors="replace")
        if '"app-server"' in text.split("\n", 1)[0]:
            traces["quiet" if "features.shell_snapshot=false" in text.split("\n", 1)[0] else "loud"].append(text)
    assert traces["quiet"] and traces["loud"]  # the primary's warm start and the probe's loud side are loud

    def ran(texts: list[str], program: str) -> bool:
        return any(f'execve("{program}"' in ln and ln.rstrip().endswith("= 0") for t in texts for ln in t.splitlines())

    def login_shell(texts: list[str]) -> bool:
        return any("execve(" in ln and '"-lc"' in ln and ln.rstrip().endswith("= 0") for t in texts for ln in t.splitlines())

    lsb = shutil.which("lsb_release", path="/usr/local/bin:/usr/bin:/bin")  # not on every machine
    assert login_shell(traces["loud"]) and (lsb is None or ran(traces["loud"], lsb))
    assert not login_shell(traces["quiet"]) and not (lsb and ran(traces["quiet"], lsb))
    everything = "".join(traces["quiet"] + traces["loud"])  # and neither world reaches out (as in the test above)
    assert "ls-remote" not in everything
    assert [ln for ln in everything.splitlines() if "connect(" in ln and "AF_INET" in ln and "127.0.0.1" not in ln] == []
