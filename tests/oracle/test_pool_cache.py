"""The capture cache's files and key (oracle/pool/cache.py): what is stored
reads back as it was, a broken file is a miss, a changed binary gets a new
digest even when its size and mtime are put back, old days are removed."""

from __future__ import annotations

import datetime as _dt
import gzip
import os
from pathlib import Path

from promptspec.oracle.pool import cache as cc
from promptspec.oracle.binary import CodexBinary
from promptspec.oracle.capture import Config
from promptspec.oracle.thread import Thread, ThreadStep

TODAY = _dt.date.today().isoformat()


def test_entries_read_back_as_stored_long_strings_once(tmp_path):
    long = "instructions " * 300  # longer than a piece (CHUNK)
    odd = "\x00 a short string that starts like a reference"
    value = {"body": {"instructions": long, "input": [{"text": long}, {"text": odd}, {"n": 3, "ok": True, "x": None}]},
             "refused": None}
    store = cc.Store(tmp_path, TODAY)
    store.put("first", {"a": value, "b": {"body": {"instructions": long}}})
    again = cc.Store(tmp_path, TODAY)
    assert again.get("first", "a") == value and again.get("first", "b") == {"body": {"instructions": long}}
    assert again.get("first", "c") is None
    raw = gzip.decompress((tmp_path / "first.json.gz").read_bytes()).decode()
    assert raw.count(long) == 1  # the long text is in the table once
    assert again.get("first", "a", "/elsewhere") == value  # no folder in it: nothing to put back


def test_a_broken_or_foreign_file_is_a_miss(tmp_path):
    (tmp_path / "first.json.gz").write_bytes(b"not gzip")
    assert cc.Store(tmp_path, TODAY).get("first", "a") is None
    (tmp_path / "first.json.gz").write_bytes(gzip.compress(b'{"format": 999, "chunks": ["1"], "entries": {"a": ["j", 0]}}'))
    assert cc.Store(tmp_path, TODAY).get("first", "a") is None
    for node in (b'["j", 7]', b'["x", 0]', b'"j"', b'["d", [["k"]]]'):
        (tmp_path / "first.json.gz").write_bytes(gzip.compress(b'{"format": %d, "chunks": ["1"], "entries": {"a": %s}}'
                                                               % (cc.FORMAT, node)))
        assert cc.Store(tmp_path, TODAY).get("first", "a") is None, node  # a piece past the table, a node of no kind


def test_the_scratch_folder_is_stored_as_a_token_and_read_back_as_the_readers(tmp_path):
    value = {"body": {"input": [{"text": "cwd /tmp/ps-a/repo " + "x" * 3000}], "/tmp/ps-a/home": 1}}
    store = cc.Store(tmp_path, TODAY)
    store.put("first", {"a": value, "b": {"body": "already " + cc.TOKEN}}, "/tmp/ps-a")
    raw = gzip.decompress((tmp_path / "first.json.gz").read_bytes()).decode()
    assert "/tmp/ps-a" not in raw and cc.TOKEN in raw
    got = cc.Store(tmp_path, TODAY).get("first", "a", "/tmp/ps-b")
    assert got == {"body": {"input": [{"text": "cwd /tmp/ps-b/repo " + "x" * 3000}], "/tmp/ps-b/home": 1}}
    assert cc.Store(tmp_path, TODAY).get("first", "b", "/tmp/ps-b") is None  # held the token already: not stored


def test_nothing_is_stored_under_a_day_that_is_over(tmp_path):
    store = cc.Store(tmp_path, "2000-01-01")
    store.put("first", {"a": {"body": None}})
    assert not (tmp_path / "first.json.gz").exists()


def _binary(tmp_path: Path) -> CodexBinary:
    folder = tmp_path / "vendor" / "codex"
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / "codex"
    if not exe.exists():
        exe.write_bytes(b"\x7fELF one build")
    return CodexBinary(exe, "0.125.0")


def test_a_changed_binary_gets_a_new_digest_even_with_its_size_and_mtime_put_back(tmp_path):
    b = _binary(tmp_path)
    memo = tmp_path / "memo.json"
    first = cc.binary_digest(b, memo)
    assert first and cc.binary_digest(b, memo) == first and memo.exists()
    st = os.stat(b.path)
    b.path.write_bytes(b"\x7fELF two build")  # same size
    os.utime(b.path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert cc.binary_digest(b, memo) != first
    (b.path.parent / "beside.json").write_text("{}")  # a file a stand-in binary may read
    assert cc.binary_digest(b, memo) not in (first, None)


def test_a_memo_for_another_file_state_is_not_used(tmp_path):
    b = _binary(tmp_path)
    memo = tmp_path / "memo.json"
    cc.binary_digest(b, memo)
    memo.write_text(memo.read_text().replace('"digest":"', '"digest":"forged'))
    assert cc.binary_digest(b, memo).startswith("forged")  # the memo is trusted for the same file state...
    os.utime(b.path, ns=(1, 1))
    assert not cc.binary_digest(b, memo).startswith("forged")  # ...and only for it


def test_old_days_are_removed_and_recent_ones_kept(tmp_path):
    b = _binary(tmp_path)
    root = tmp_path / "cache"
    for day in ("2001-01-01", (_dt.date.today() - _dt.timedelta(days=1)).isoformat()):
        (root / f"{day}-abc").mkdir(parents=True)
    store, why = cc.open_store(b, None, tmp_path / "home", TODAY, root)
    assert why is None and store is not None and store.folder.name.startswith(TODAY)
    names = sorted(p.name[:10] for p in root.iterdir() if p.name[:2] == "20")
    assert "2001-01-01" not in names and len(names) == 2


def test_relocation_reaches_configs_threads_and_keys(tmp_path):
    cfg = Config("m1", extra=(("sandbox_workspace_write", '{"writable_roots": ["/tmp/ps-x/probe"]}'),))
    t = Thread("cwd", cfg, (ThreadStep("again", (("cwd", '"/tmp/ps-x/repo/pkg"'),)),))
    moved = cc.relocate(t, "/tmp/ps-x", "/tmp/ps-y")
    assert moved.steps[0].overrides == (("cwd", '"/tmp/ps-y/repo/pkg"'),)
    assert moved.config.extra[0][1] == '{"writable_roots": ["/tmp/ps-y/probe"]}'
    assert cc.relocate(moved, "/tmp/ps-y", "/tmp/ps-x") == t
    assert cc.relocate({"/tmp/ps-x/a": ["/tmp/ps-x"]}, "/tmp/ps-x", "B") == {"B/a": ["B"]}
    assert cc.holds(t, "ps-x/repo") and not cc.holds(t, "ps-y")
    assert not cc.plain(Path('/tmp/we"ird')) and cc.plain(Path("/tmp/promptspec-codex-ab_12"))
