"""R4, R14, R15, R18 (second red-team pass): importing a binary's output.

The binary is a stand-in (`_fake_codex.py`) whose catalog, output and
behaviour the test chooses: names from it are checked before anything is
written and nothing lands outside --out; what it prints and how many models
it lists are bounded; the scratch world goes away on every exit, SIGTERM
included; --force replaces only an earlier import; provenance.json names no
temp folder of the caller's and is the same for two imports."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from _attack import cli
from promptspec.errors import SpecError

FAKE = Path(__file__).resolve().parent / "_fake_codex.py"


def fake(folder: Path, **behaviour) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(FAKE, folder / "codex")
    (folder / "codex").chmod(0o755)
    (folder / "behaviour.json").write_text(json.dumps(behaviour))
    return folder / "codex"


def _import(tmp_path: Path, codex: Path, out: Path, *extra: str, tmpdir: Path | None = None, timeout: float = 120):
    scratch = tmpdir or tmp_path / "tmp"
    scratch.mkdir(parents=True, exist_ok=True)
    return cli("import-codex", "--cli", str(codex), "--out", str(out), *extra, cwd=tmp_path, timeout=timeout,
               env={"TMPDIR": str(scratch)})


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def test_a_catalog_slug_cannot_place_a_file_outside_out(tmp_path: Path) -> None:
    codex = fake(tmp_path / "bin", slug="../" * 12 + str(tmp_path / "ESCAPED" / "pwned").lstrip("/"),
                 instr="A text the catalog does not explain: stored as texts/base_instructions/SLUG--PERSONALITY.md\n")
    before = _files(tmp_path)
    proc = _import(tmp_path, codex, tmp_path / "out")
    assert proc.returncode == 2 and "not a safe name" in proc.stderr, proc.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "ESCAPED").exists()
    assert _files(tmp_path) == before


@pytest.mark.parametrize("name", ["../x.md", "/etc/x", "texts/a\\b.md", "texts/../../x", "texts//x", ".hidden/x", ""])
def test_every_file_name_is_checked_before_the_first_write(tmp_path: Path, name: str) -> None:
    from promptspec.importers.output import checked_files

    with pytest.raises(SpecError, match="not a safe file name"):
        checked_files({"spec.yaml": "x", name: "y"}, tmp_path)
    checked_files({"spec.yaml": "x", "texts/base_instructions/m1--friendly.md": "y"}, tmp_path)


def test_output_the_binary_floods_is_bounded(tmp_path: Path) -> None:
    proc = _import(tmp_path, fake(tmp_path / "bin", flood_mb=200), tmp_path / "out")
    assert proc.returncode == 2 and "printed more than 64 MB" in proc.stderr, proc.stderr[-500:]
    assert "Traceback" not in proc.stderr and not (tmp_path / "out").exists()
    assert list((tmp_path / "tmp").iterdir()) == []  # the scratch world is gone


def test_a_huge_catalog_is_refused_before_capturing(tmp_path: Path) -> None:
    t0 = time.monotonic()
    proc = _import(tmp_path, fake(tmp_path / "bin", extra_models=2000), tmp_path / "out", timeout=60)
    assert proc.returncode == 2 and "at most 200" in proc.stderr, proc.stderr[-500:]
    assert time.monotonic() - t0 < 30
    assert list((tmp_path / "tmp").iterdir()) == []


def test_sigterm_still_removes_the_scratch_world(tmp_path: Path) -> None:
    codex = fake(tmp_path / "bin", hang=True)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    proc = subprocess.Popen([sys.executable, "-c", "import sys; from promptspec.cli import main; sys.exit(main(sys.argv[1:]))",
                             "import-codex", "--cli", str(codex), "--out", str(tmp_path / "out")],
                            env={**os.environ, "TMPDIR": str(scratch)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        for _ in range(200):
            if any(scratch.iterdir()):
                break
            time.sleep(0.05)
        assert any(scratch.iterdir())
        time.sleep(0.5)  # inside the capture, waiting on the hung app-server
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    leftover = list(scratch.iterdir())
    for p in leftover:
        shutil.rmtree(p, ignore_errors=True)
    assert leftover == []


def test_force_replaces_only_an_earlier_import(tmp_path: Path) -> None:
    codex = fake(tmp_path / "bin")
    release = tmp_path / "release"
    (release / "notes").mkdir(parents=True)
    (release / "provenance.json").write_text('{"_type": "https://in-toto.io/Statement/v1"}')
    (release / "KEYS").write_text("signing key id\n")
    (release / "notes" / "todo.txt").write_text("my notes\n")
    proc = _import(tmp_path, codex, release, "--force")
    assert proc.returncode == 2 and "not an earlier import" in proc.stderr, proc.stderr
    assert (release / "KEYS").read_text() == "signing key id\n" and (release / "notes" / "todo.txt").exists()
    assert "in-toto" in (release / "provenance.json").read_text()
    out = tmp_path / "spec"
    assert _import(tmp_path, codex, out).returncode == 0
    (out / "prompts.lock.json").write_text("{}")  # promptspec's own later file
    again = _import(tmp_path, codex, out, "--force")
    assert again.returncode == 0, again.stderr


def test_provenance_names_no_temp_folder_and_is_reproducible(tmp_path: Path) -> None:
    codex = fake(tmp_path / "bin")
    a = tmp_path / "home-alice" / "tmp"
    b = tmp_path / "elsewhere"
    assert _import(tmp_path, codex, tmp_path / "one", tmpdir=a).returncode == 0
    assert _import(tmp_path, codex, tmp_path / "two", tmpdir=b).returncode == 0
    one, two = ((tmp_path / n / "provenance.json").read_text() for n in ("one", "two"))
    assert one == two
    assert "alice" not in one and str(tmp_path) not in one
