"""F4 (and F12's `tokens /dev/zero`): files nobody references are still
hashed (diff's file list, the plugin's change detection, the lock), so every
read goes through spec/files.py's bounded, non-blocking reader.  Each attack
runs in a child with 1 GB of memory and a time limit: on the old code a
`/dev/zero` symlink ran out of memory and a FIFO hung."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from _attack import cli, one_error_line, python, small_spec
from promptspec.errors import SpecError

pytestmark = pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero and FIFOs (POSIX)")


def _pair(tmp_path: Path) -> tuple[Path, Path]:
    base = small_spec(tmp_path / "base")
    head = tmp_path / "head"
    shutil.copytree(base, head)
    (head / "fragments" / "greeting.md").write_text("Hello {{ who }}, again.\n")
    return base, head


@pytest.mark.parametrize("attack", ["zero", "fifo", "big"])
def test_diff_survives_special_files_nobody_references(tmp_path: Path, attack: str) -> None:
    base, head = _pair(tmp_path)
    target = head / "fragments" / "x.md"
    if attack == "zero":
        target.symlink_to("/dev/zero")
    elif attack == "fifo":
        os.mkfifo(target)
    else:
        with open(target, "wb") as fh:  # sparse: costs no disk
            fh.truncate(4 * 1024 * 1024 * 1024)
    proc = cli("diff", str(base), str(head), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert '"fragments/x.md"' in proc.stdout  # listed as an added file, not read


@pytest.mark.parametrize("attack", ["zero", "fifo"])
def test_the_plugin_session_survives_special_files(tmp_path: Path, attack: str) -> None:
    """`mkdocs build`/`serve` go through pipeline.Session, which hashes every file."""
    spec = small_spec(tmp_path / "s")
    target = spec / "fragments" / "x.md"
    target.symlink_to("/dev/zero") if attack == "zero" else os.mkfifo(target)
    proc = python(
        "from promptspec.pipeline import Session; s = Session(%r); s.run(); s.run(); print('ok', len(s.run().variants))" % str(spec)
    )
    assert proc.returncode == 0 and proc.stdout.startswith("ok 1"), proc.stderr[-2000:]


@pytest.mark.parametrize("attack", ["zero", "fifo"])
def test_lock_and_check_with_a_special_lock_file(tmp_path: Path, attack: str) -> None:
    spec = small_spec(tmp_path / "s")
    lock = spec / "prompts.lock.json"
    lock.symlink_to("/dev/zero") if attack == "zero" else os.mkfifo(lock)
    assert "lock file" in one_error_line(cli("check", "--spec", str(spec)))
    proc = cli("lock", "--spec", str(spec))  # replaces the link/FIFO by a real lock, never reads it
    assert proc.returncode == 0, proc.stderr
    assert lock.is_file() and not lock.is_symlink()
    assert cli("check", "--spec", str(spec)).returncode == 0


def test_check_with_a_deeply_nested_lock(tmp_path: Path) -> None:
    """F12: `[` x 200,000 was a RecursionError (exit 3)."""
    spec = small_spec(tmp_path / "s")
    (spec / "prompts.lock.json").write_text("[" * 200_000)
    assert "lock file" in one_error_line(cli("check", "--spec", str(spec)))


@pytest.mark.parametrize("target", ["/dev/zero", "fifo"])
def test_tokens_of_a_device_or_fifo(tmp_path: Path, target: str) -> None:
    """F12: `promptspec tokens /dev/zero` was a MemoryError, a FIFO a hang."""
    if target == "fifo":
        target = str(tmp_path / "pipe")
        os.mkfifo(target)
    assert "not a regular file" in one_error_line(cli("tokens", target))


def test_the_reader_checks_what_it_opened(tmp_path: Path) -> None:
    """The mechanism itself: fstat on the open descriptor, a bounded read."""
    from promptspec.spec.files import MAX_FILE_BYTES, file_digest, read_regular_bytes

    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "zero").symlink_to("/dev/zero")
    for name in ("fifo", "zero"):
        with pytest.raises(SpecError, match="not a regular file"):
            read_regular_bytes(tmp_path / name)
        assert file_digest(tmp_path / name).startswith("special:")
    with open(tmp_path / "big", "wb") as fh:
        fh.truncate(MAX_FILE_BYTES + 1)
    with pytest.raises(SpecError, match="over the"):
        read_regular_bytes(tmp_path / "big")
    assert file_digest(tmp_path / "big").startswith("regular:")
    assert file_digest(tmp_path / "missing") is None
