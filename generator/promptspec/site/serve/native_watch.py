"""Under `mkdocs serve`, the spec's folders are watched through the system's
change notifications instead of MkDocs' poll.

MkDocs (and ProperDocs) look for changed files every 0.5 s (the
LiveReloadServer's PollingObserver), so an edit waits a quarter of a second
on average before its rebuild starts: at a small spec, about as long as the
rebuild.  For each folder of the plugin's, MkDocs' own watch is made as
before (`server.watch`: its handler, its wait for edits to settle, its
rebuild and reload); the poll of that folder is stopped before it starts;
and a native observer (inotify, FSEvents or ReadDirectoryChangesW, through
watchdog, which MkDocs itself uses) puts each change into MkDocs' event
queue as that watch's.

Only changes go through: a build opens and reads every spec file, and an
open or a close without a write must not start another rebuild.  A native
watch stays with the folder it was given, so the folder's parent is watched
too (its own entries only): a folder swapped in by rename or made again is
watched where it now is (`_Folder`), as the poll would.  A folder
keeps the poll where nothing native can take over: watchdog has no native
observer on the platform, the observer cannot start (inotify's watch
limit), the server is not the one expected, another watch of the server's
already covers the folder (a change would then rebuild twice), or the
plugin's `native_watch: false` asks for it (a network or container mount
that sends no notifications)."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Iterable

log = logging.getLogger("mkdocs.plugins.promptspec")

_NOT_CHANGES = ("FileOpenedEvent", "FileClosedNoWriteEvent", "DirOpenedEvent", "DirClosedNoWriteEvent")
"""watchdog's events for reading a file (those its version has)."""

_REPLACED = ("created", "deleted", "moved")
"""watchdog's event types by which a name can come to stand for another folder."""


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


class NativeWatch:
    """The native observer of one serve session; `stop` at shutdown."""

    def __init__(self) -> None:
        self.observer: Any = None
        self.folders: list[str] = []  # the folders it watches instead of the poll

    def watch(self, server: Any, folders: Iterable[Path], native: bool = True, others: Iterable[str] = ()) -> None:
        """Watch `folders` for `server` (MkDocs' LiveReloadServer), natively
        where it can; `others` are paths the server will watch later (the
        config's `watch:` list), which no folder may lie inside."""
        paths = [os.path.abspath(folder) for folder in folders]
        for path in paths:
            server.watch(path)
        if native:
            self._take_over(server, paths, [os.path.abspath(p) for p in others])

    def _take_over(self, server: Any, paths: list[str], others: list[str]) -> None:
        try:
            from watchdog import events
            from watchdog.observers import Observer
            from watchdog.observers.polling import PollingObserver
        except ImportError:
            return
        polling = getattr(server, "observer", None)
        if not isinstance(polling, PollingObserver) or issubclass(Observer, PollingObserver):
            return
        emitters = list(polling.emitters)
        # What reports a change inside a folder of ours: a recursive watch of a
        # folder above it (a watch of a file is handed that file's events only).
        watched = [e.watch.path for e in emitters if e.watch.path not in paths and e.watch.is_recursive
                   and not getattr(e.watch, "is_file", False)] + [p for p in others if os.path.isdir(p)]
        mine = {e.watch.path: e for e in emitters
                if e.watch.path in paths and not any(_inside(e.watch.path, w) for w in watched)}
        if not mine:
            return
        skip = tuple(getattr(events, name) for name in _NOT_CHANGES if hasattr(events, name))
        observer = Observer()
        try:
            for emitter in mine.values():
                _Folder(observer, polling.event_queue, emitter.watch, skip, events.FileModifiedEvent)
            observer.start()
        except OSError as exc:  # e.g. inotify's limit of watches or instances
            observer.unschedule_all()
            log.info("promptspec: watching the spec by polling (%s)", " ".join(str(exc).split()))
            return
        for emitter in mine.values():
            emitter.stop()  # MkDocs starts its observer after on_serve: this poll's thread then ends at once
        self.observer, self.folders = observer, sorted(mine)
        shown = ", ".join(f"'{os.path.relpath(f) if _inside(f, os.getcwd()) else f}'" for f in self.folders)
        log.info("promptspec: watching %s through the system's change notifications", shown)

    def stop(self) -> None:
        if self.observer is not None:
            self.observer.stop()
            self.observer.join()
            self.observer = None


class _Folder:
    """One folder under the native observer: a watch of it, and a watch of its
    parent's own entries that sees the folder itself replaced -- renamed
    away and another renamed in (the swap of `import-codex --force`), or
    deleted and made again.  A native watch stays with the folder it was
    given, wherever that goes, where MkDocs' poll follows the path; so on
    such an event the folder's watch is made again for what is at the path
    now, and MkDocs is told of a change (as a file's: it passes over
    folders' events), since the files there are new."""

    def __init__(self, observer: Any, queue: Any, watch: Any, skip: tuple[type, ...], changed: type) -> None:
        self.observer, self.queue, self.watch, self.changed = observer, queue, watch, changed
        self.forward = _Forward(queue, watch, skip)
        self.inner: Any = None
        self.arm()
        observer.schedule(self, os.path.dirname(watch.path), recursive=False)

    def arm(self) -> None:
        if self.inner is not None:
            self.observer.unschedule(self.inner)
            self.inner = None
        if os.path.isdir(self.watch.path):
            self.inner = self.observer.schedule(self.forward, self.watch.path, recursive=self.watch.is_recursive)

    def dispatch(self, event: Any) -> None:
        """An event among the parent's entries: the folder's own name, made,
        deleted or renamed?  (Not opened or read: a build lists the folder.)"""
        if event.event_type not in _REPLACED or self.watch.path not in (event.src_path, getattr(event, "dest_path", None)):
            return
        # Watched again once a folder is there (made, or renamed to the name): a
        # folder deleted stops its own watch as it goes, and is left to do so.
        if event.event_type == "created" or getattr(event, "dest_path", None) == self.watch.path:
            try:
                self.arm()
            except OSError as exc:  # e.g. inotify's limit: say so, rather than see nothing from now on
                log.warning("promptspec: changes to '%s' are no longer seen (%s); restart serve",
                            self.watch.path, " ".join(str(exc).split()))
        self.queue.put((self.changed(self.watch.path), self.watch))


class _Forward:
    """A watchdog event handler: each change, into MkDocs' queue as its watch's."""

    def __init__(self, queue: Any, watch: Any, skip: tuple[type, ...]) -> None:
        self.queue, self.watch, self.skip = queue, watch, skip

    def dispatch(self, event: Any) -> None:
        if not isinstance(event, self.skip):
            self.queue.put((event, self.watch))
