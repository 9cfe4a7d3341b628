"""Python's cyclic garbage collector paused while a serve rebuild runs, and
run once shortly after it, when nothing waits on the process.

A serve process holds a large heap for the whole session: the Session's
requests and measures, the page parts and theme output kept for the next
rebuild, MkDocs' own objects.  A rebuild allocates enough to set off several
full collections, and each walks all of that heap: at 2,400 variants about
0.7 s of a 3.3 s rebuild went to the collector (measured 2026-12-02 with the
collector off during rebuilds: 2.6 s; one full collection alone costs
~0.5 s).  Reference counting frees almost everything either way; only
objects in reference cycles (MkDocs' pages and nav link to each other) wait
for the collection after the rebuild.  That collection runs `DELAY` seconds
after the rebuild ends -- the browser has reloaded by then -- unless the next
rebuild has started, which cancels it and runs one when it ends instead: a
burst of edits defers the cycles, never holds them past the burst.

Nothing here changes what a build writes; a one-off `mkdocs build` does not
use it.
"""

from __future__ import annotations

import gc
import threading

DELAY = 0.3
"""Seconds after a rebuild before the collection: after the livereload answer and the page fetch it sets off."""


class IdleCollector:
    """`pause()` when a rebuild starts, `resume()` when it ends (done or
    failed), `close()` when serve stops.  A process whose collector was
    already off (the user's choice) is left as it is."""

    def __init__(self, delay: float = DELAY) -> None:
        self.delay = delay
        self._lock = threading.Lock()
        self._paused = False
        self._timer: threading.Timer | None = None
        self.collections = 0  # collections run after rebuilds (for tests)

    def pause(self) -> None:
        with self._lock:
            self._cancel()
            if not self._paused and gc.isenabled():
                gc.disable()
                self._paused = True

    def resume(self) -> None:
        with self._lock:
            if not self._paused:
                return
            self._paused = False
            gc.enable()
            self._cancel()
            self._timer = threading.Timer(self.delay, self._collect)
            self._timer.name = "promptspec-gc"
            self._timer.daemon = True
            self._timer.start()

    def close(self) -> None:
        with self._lock:
            self._cancel()
            if self._paused:
                self._paused = False
                gc.enable()

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _collect(self) -> None:
        with self._lock:
            if self._paused or self._timer is None:  # a rebuild started meanwhile: it collects when it ends
                return
            self._timer = None
            gc.collect()
            self.collections += 1
