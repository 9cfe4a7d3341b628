"""Under `mkdocs serve` the spec's folders are watched through the system's
change notifications (site/serve/native_watch.py), handed to MkDocs' own
watch: MkDocs' real LiveReloadServer and watchdog here, in this process;
the real `mkdocs serve` tests (test_site, test_fast_pages, test_served_pages)
run with it on."""

from __future__ import annotations

import logging
import os
import shutil
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("watchdog")
from mkdocs.livereload import LiveReloadServer  # noqa: E402
from watchdog.observers import Observer  # noqa: E402
from watchdog.observers.polling import PollingObserver  # noqa: E402

from promptspec.site.serve.native_watch import NativeWatch  # noqa: E402

needs_native = pytest.mark.skipif(issubclass(Observer, PollingObserver),
                                  reason="watchdog has no native observer on this platform")


class _Seen(logging.Handler):
    """MkDocs' watch handler logs every event it is handed (at DEBUG) before it
    asks for a rebuild: what reached it, in order."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []
        self.changed = threading.Condition()

    def emit(self, record: logging.LogRecord) -> None:
        with self.changed:
            self.lines.append(record.getMessage())
            self.changed.notify_all()

    def wait_for(self, text: str, timeout: float = 30, times: int = 1) -> list[str]:
        with self.changed:
            assert self.changed.wait_for(lambda: sum(text in line for line in self.lines) >= times, timeout), self.lines
            return list(self.lines)


@pytest.fixture
def served(tmp_path):
    """MkDocs' server as `mkdocs serve` makes it, with docs/ watched first as it
    does; its handler's log captured.  Never bound to a port: only its watches run."""
    (tmp_path / "docs").mkdir()
    spec = tmp_path / "spec"
    (spec / "fragments").mkdir(parents=True)
    (spec / "fragments" / "a.md").write_text("a body\n", encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text("site_name: t\n", encoding="utf-8")
    server = LiveReloadServer(builder=lambda: None, host="127.0.0.1", port=0, root=str(tmp_path / "site"))
    server.watch(str(tmp_path / "docs"))
    server.watch(str(tmp_path / "mkdocs.yml"))  # a file: its watch is handed its own events only
    seen = _Seen()
    logger = logging.getLogger("mkdocs.livereload")
    level = logger.level
    logger.addHandler(seen)
    logger.setLevel(logging.DEBUG)
    watcher = NativeWatch()
    try:
        yield server, watcher, spec, seen
    finally:
        watcher.stop()
        if server.observer.is_alive():
            server.observer.stop()
            server.observer.join()
        logger.removeHandler(seen)
        logger.setLevel(level)


def _spec_emitter(server, spec: Path):
    return next(e for e in server.observer.emitters if e.watch.path == str(spec))


@needs_native
def test_a_change_reaches_mkdocs_watch_natively_and_a_read_does_not(served):
    server, watcher, spec, seen = served
    watcher.watch(server, [spec])
    assert watcher.folders == [str(spec)]
    server.observer.start()
    poll = _spec_emitter(server, spec)
    assert not poll.is_alive()  # MkDocs' poll of the spec folder ended as it started
    assert watcher.observer is not None and watcher.observer.is_alive()

    # What a build does to a spec file (open, read, close) is no change ...
    (spec / "fragments" / "a.md").read_text(encoding="utf-8")
    # ... and an edit is: inotify and the others deliver in order, so the
    # edit's event coming first proves the read gave none.
    (spec / "fragments" / "b.md").write_text("new\n", encoding="utf-8")
    lines = seen.wait_for("b.md")
    before = lines[:next(i for i, line in enumerate(lines) if "b.md" in line)]
    assert not any("a.md" in line for line in before), lines
    assert all("spec" in line for line in lines)  # nothing from docs/, which nobody touched
    with server._rebuild_cond:  # MkDocs' own handler asks for the rebuild (just after its log line)
        assert server._rebuild_cond.wait_for(lambda: server._want_rebuild, 10)

    # An editor that saves by renaming a file written elsewhere into place.
    elsewhere = spec.parent / "saved.tmp"
    elsewhere.write_text("renamed in\n", encoding="utf-8")
    os.replace(elsewhere, spec / "fragments" / "a.md")
    seen.wait_for("a.md")

    watcher.stop()
    assert watcher.observer is None


@needs_native
def test_a_folder_swapped_or_made_again_is_watched_where_it_now_is(served, tmp_path):
    """A native watch stays with the folder it was given; `import-codex
    --force` swaps a new folder in by rename, and the watch must follow the
    path, as MkDocs' poll does."""
    server, watcher, spec, seen = served
    watcher.watch(server, [spec])
    server.observer.start()
    staging = tmp_path / "staging"
    (staging / "fragments").mkdir(parents=True)
    (staging / "fragments" / "a.md").write_text("imported again\n", encoding="utf-8")
    os.rename(spec, tmp_path / "old")
    os.rename(staging, spec)
    # The swap itself, moved away and moved in: each a change MkDocs rebuilds for, the
    # second once the folder now at the path is watched.
    lines = seen.wait_for(f"src_path='{spec}'", times=2)
    assert any("is_directory=False" in line for line in lines if f"src_path='{spec}'" in line), lines
    (tmp_path / "old" / "fragments" / "a.md").write_text("the folder swapped out\n", encoding="utf-8")
    (spec / "fragments" / "c.md").write_text("an edit after the swap\n", encoding="utf-8")
    lines = seen.wait_for("c.md")
    assert not any(str(tmp_path / "old") in line for line in lines), lines  # the folder moved away is not watched

    # Deleted, then made again: again two changes, the second once the new folder is watched.
    with seen.changed:
        seen.lines.clear()
    shutil.rmtree(spec)
    (spec / "fragments").mkdir(parents=True)
    seen.wait_for(f"src_path='{spec}'", times=2)
    (spec / "fragments" / "d.md").write_text("made again\n", encoding="utf-8")
    seen.wait_for("d.md")


def test_a_folder_another_watch_covers_keeps_the_poll(served, tmp_path):
    """A spec inside docs/ (watched by MkDocs) or inside a `watch:` path:
    the native events and that watch's poll would rebuild twice."""
    server, watcher, spec, _ = served
    inner = tmp_path / "docs" / "spec"
    inner.mkdir()
    watcher.watch(server, [inner, spec], others=[str(spec.parent / "spec")])
    assert watcher.folders == [] and watcher.observer is None
    watcher.watch(server, [spec], others=[str(spec.parent)])
    assert watcher.folders == [] and watcher.observer is None
    assert not _spec_emitter(server, spec).stopped_event.is_set()
    assert not _spec_emitter(server, inner).stopped_event.is_set()


def test_native_watch_false_keeps_mkdocs_poll(served):
    server, watcher, spec, seen = served
    watcher.watch(server, [spec], native=False)
    assert watcher.folders == [] and watcher.observer is None
    server.observer.start()
    assert _spec_emitter(server, spec).is_alive()
    time.sleep(0.05)  # a change within the same second as the first snapshot is still seen (size)
    (spec / "fragments" / "a.md").write_text("a longer body\n", encoding="utf-8")
    seen.wait_for("a.md")  # by the poll, as before


def test_a_server_without_a_poll_is_left_as_it_is(served):
    """Another engine's server (or a later MkDocs) without the polling observer:
    its own watch only."""
    server, watcher, spec, _ = served

    class Other:
        def __init__(self) -> None:
            self.watched: list[str] = []

        def watch(self, path: str) -> None:
            self.watched.append(path)

    other = Other()
    watcher.watch(other, [spec])
    assert other.watched == [str(spec)] and watcher.observer is None
