"""The served site rebuilt in place (site/served_output.py): MkDocs' clean
skipped under `mkdocs serve`, and what a rebuild did not write removed, so
the folder is what a clean build gives -- without deleting and rewriting
every file on each reload."""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _helpers import TEMPLATES, mkdocs_build, mkdocs_config, mkdocs_serve, poll, subprocess_env  # noqa: E402

from promptspec.site.serve import served_output  # noqa: E402

pytestmark = pytest.mark.skipif(not served_output.supported(), reason="in-place rebuilds need POSIX ctime")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _tick_past(path: Path) -> None:
    """Wait until the file system clock has moved on from `path`'s ctime (it
    is coarse: a few milliseconds), as it has between two real builds."""
    probe = path.parent / ".probe"
    while True:
        probe.write_text("x")
        if probe.stat().st_ctime_ns > path.stat().st_ctime_ns:
            probe.unlink()
            return
        time.sleep(0.005)


def _tree(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() + ("/" if p.is_dir() else "") for p in root.rglob("*")}


def _clean(site: Path) -> None:
    """What MkDocs' clean_directory does: every top-level entry but hidden ones."""
    for entry in site.iterdir():
        if entry.name.startswith("."):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def test_a_rebuild_in_place_leaves_what_a_clean_rebuild_leaves(tmp_path: Path) -> None:
    site = tmp_path / "site"
    for rel in ("index.html", "a/index.html", "a/kept.json", "a/b/gone.html", "c/gone.html", "d/old-empty/.keep"):
        _write(site / rel, "old")
    (site / "d" / "old-empty" / ".keep").unlink()
    _write(site / ".hidden" / "x", "mine")
    _tick_past(site / "a" / "kept.json")
    inode = (site / "a" / "index.html").stat().st_ino

    aside = served_output.set_aside(site)
    assert aside is not None and sorted(aside.moved) == ["a", "c", "d"]
    assert _tree(site) >= {"index.html", ".hidden/", ".hidden/x", served_output.HOLDER + "/"}
    assert not (site / "a").exists()
    _clean(site)  # MkDocs' clean: the held folders are hidden, so only index.html goes
    served_output.put_back(aside)
    _write(site / "index.html", "new")
    _write(site / "a" / "index.html", "new")  # written over in place
    _write(site / "a" / "kept.json", "old")  # the same bytes, still written by this build
    _write(site / "e" / "new.html", "new")
    (site / "a" / "new-empty").mkdir()
    removed = served_output.sweep(aside)

    assert _tree(site) == {
        "index.html", ".hidden/", ".hidden/x",
        "a/", "a/index.html", "a/kept.json", "a/new-empty/",
        "e/", "e/new.html",
    }
    assert removed == 6  # a/b/gone.html, a/b/, c/gone.html, c/, d/old-empty/, d/
    assert (site / "a" / "index.html").read_text() == "new"
    assert (site / "a" / "index.html").stat().st_ino == inode  # not deleted and made again


def test_a_holder_left_by_a_stopped_build_is_not_served(tmp_path: Path) -> None:
    site = tmp_path / "site"
    _write(site / served_output.HOLDER / "a" / "index.html", "stale")
    _write(site / "a" / "index.html", "old")
    aside = served_output.set_aside(site)
    assert aside is not None
    assert sorted(os.listdir(site / served_output.HOLDER)) == ["a"]
    assert (site / served_output.HOLDER / "a" / "index.html").read_text() == "old"
    served_output.put_back(aside)
    assert not (site / served_output.HOLDER).exists()
    assert (site / "a" / "index.html").read_text() == "old"


def test_a_folder_made_meanwhile_wins_over_the_held_one(tmp_path: Path) -> None:
    site = tmp_path / "site"
    _write(site / "a" / "old.html", "old")
    aside = served_output.set_aside(site)
    assert aside is not None
    _write(site / "a" / "made.html", "new")  # e.g. another plugin's on_pre_build
    served_output.put_back(aside)
    assert _tree(site) == {"a/", "a/made.html"}


def test_nothing_to_hold(tmp_path: Path) -> None:
    assert served_output.set_aside(tmp_path / "missing") is None
    _write(tmp_path / "site" / "index.html", "x")
    (tmp_path / "site" / "link").symlink_to(tmp_path)
    assert served_output.set_aside(tmp_path / "site") is None  # top-level files and links are MkDocs' to clean


def test_serve_rebuilds_in_place_to_what_a_build_makes(tmp_path: Path) -> None:
    """Under `mkdocs serve`: a rebuild after a config edit that drops most
    variant pages serves exactly the files `mkdocs build` makes of the new
    config (the dropped pages and their folders are gone), and a page both
    builds write was written over in place, not deleted and made again."""
    spec = tmp_path / "spec"
    shutil.copytree(TEMPLATES, spec)
    config = mkdocs_config(tmp_path, spec, base="none")
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**subprocess_env(), "TMPDIR": str(temp)}  # where mkdocs serve puts the site it serves
    log = tmp_path / "serve.log"
    plan = "prompts/variants/harbor-5--friendly--plan--workspace-write"
    other = "prompts/variants/harbor-5--friendly--pair_programming--workspace-write"
    with mkdocs_serve(config, log, env=env) as server:
        poll(f"{server}/{other}/", lambda b: "<article" in b)
        (served,) = [p for p in temp.iterdir() if p.is_dir()]
        inode = (served / plan / "index.html").stat().st_ino
        data = yaml.safe_load(config.read_text(encoding="utf-8"))
        next(p for p in data["plugins"] if isinstance(p, dict) and "promptspec" in p)["promptspec"]["variant_pages"] = {"mode": "plan"}
        config.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        deadline = time.monotonic() + 120
        while log.read_text(encoding="utf-8").count("Documentation built") < 2:
            assert time.monotonic() < deadline, log.read_text(encoding="utf-8")
            time.sleep(0.2)
        poll(f"{server}/{plan}/", lambda b: "<article" in b)
        # A page both builds write is a new file: the old one was moved out of
        # the way (not truncated) and is deleted by a thread after the build.
        assert (served / plan / "index.html").stat().st_ino != inode
        while any(p.name.startswith(served_output.TRASH) for p in served.iterdir()):
            assert time.monotonic() < deadline
            time.sleep(0.1)
        got = _tree(served)
    built = tmp_path / "built"
    proc = mkdocs_build(config, "-d", str(built))
    assert proc.returncode == 0, proc.stderr
    assert got == _tree(built)
    assert f"{other}/" not in got and f"{plan}/index.html" in got


def test_a_download_that_holds_its_bytes_is_touched_not_written(tmp_path: Path) -> None:
    """mkdocs_pages.ProducedFile.copy_file: a destination this plugin wrote
    with the same bytes (same inode, size and mtime since) is only touched,
    so the sweep keeps it; one changed since is written again."""
    from mkdocs.config import load_config

    from promptspec.site.serve.mkdocs_pages import Digests, ProducedFile

    (tmp_path / "docs").mkdir()
    (tmp_path / "mkdocs.yml").write_text("site_name: t\n", encoding="utf-8")
    config = load_config(str(tmp_path / "mkdocs.yml"))
    config.plugins._current_plugin = "promptspec"  # as while MkDocs runs the plugin's on_files
    digests = Digests()
    text = '{"id": "v"}\n'
    f = ProducedFile.make(config, "prompts/v.json", lambda: text, digests)
    dest = Path(f.abs_dest_path)
    f.copy_file()
    assert dest.read_text() == text
    before = dest.stat()
    _tick_past(dest)

    # Other bytes of the same size, the mtime put back: copy_file trusts its record.
    dest.write_text('{"id": "w"}\n')
    os.utime(dest, ns=(before.st_atime_ns, before.st_mtime_ns))
    f.copy_file()
    assert dest.read_text() == '{"id": "w"}\n'
    assert dest.stat().st_ctime_ns > before.st_ctime_ns  # touched: this build's, for the sweep

    _tick_past(dest)
    dest.write_text('{"id": "w"}\n')  # a new mtime: not what the plugin wrote
    f.copy_file()
    assert dest.read_text() == text
    dest.unlink()  # MkDocs' clean
    f.copy_file()
    assert dest.read_text() == text


def test_a_folder_that_cannot_be_moved_leaves_the_clean_to_mkdocs(tmp_path: Path) -> None:
    """A rename that fails halfway (here an immutable folder, which not even
    root may move) puts back what was moved and hands the clean back to MkDocs."""
    import subprocess

    site = tmp_path / "site"
    for name in ("a", "b", "c"):
        _write(site / name / "index.html", name)
    if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(site / "b")], capture_output=True).returncode != 0:
        # Not a requirement CI can install: a container's root lacks CAP_LINUX_IMMUTABLE by default.
        pytest.skip("needs chattr +i (e2fsprogs, a file system with the immutable flag, and the right to set it)")
    try:
        assert served_output.set_aside(site) is None
        assert _tree(site) == {"a/", "a/index.html", "b/", "b/index.html", "c/", "c/index.html"}
    finally:
        subprocess.run(["chattr", "-i", str(site / "b")], check=True)


def test_files_written_again_are_moved_away_and_deleted_later(tmp_path: Path) -> None:
    """served_output.Trash: a file about to be written again is moved into a
    hidden folder of the site (its path is free for a new file at once), and
    the folder goes in a thread of its own; a path that is not there is no error."""
    site = tmp_path / "site"
    _write(site / "a" / "index.html", "old")
    trash = served_output.Trash(site)
    trash.move(site / "a" / "index.html")
    trash.move(site / "a" / "missing.html")
    assert not (site / "a" / "index.html").exists()
    (held,) = [p for p in site.iterdir() if p.name.startswith(served_output.TRASH)]
    assert [f.read_text() for f in held.iterdir()] == ["old"]
    trash.empty_later()
    deadline = time.monotonic() + 30
    while held.exists():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert sorted(p.name for p in site.iterdir()) == ["a"]
