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
after the rebuild ends -- the browser has reloaded by then -- and switches
the collector back on, unless the next rebuild has started, which cancels it
and runs one when it ends instead: a burst of edits defers the cycles, never
holds them past the burst.

Nothing here changes what a build writes.  Serve's first build and a one-off
`mkdocs build` keep only the pause of their assembly stage that every
pipeline run has (pipeline._gc_paused, a stage that frees nothing): no reload
waits on them, and with the collector off through a whole first build at
2,400 variants serve held ~85 MiB more for the rest of the session.  Within a
paused rebuild that stage's own pause finds the collector off and leaves it so.
"""

from __future__ import annotations

import gc
import threading

DELAY = 0.3
"""Seconds after a rebuild before the collection: after the livereload answer and the page fetch it sets off."""


class IdleCollector:
    """`pause()` when a rebuild starts, `resume()` when it ends (done or
    failed), `close()` when serve stops.  The collector is switched back on
    only by the collection after a rebuild, not at its end: re-enabled there,
    the allocations counted while it was off would set off a full collection
    at once, in the last steps of the rebuild.  A process whose collector was
    already off (the user's choice) is left as it is."""

    def __init__(self, delay: float = DELAY) -> None:
        self.delay = delay
        self._lock = threading.Lock()
        self._off = False  # switched off by us, not yet back on
        self._timer: threading.Timer | None = None
        self.collections = 0  # collections run after rebuilds (for tests)

    def pause(self) -> None:
        with self._lock:
            self._cancel()
            if not self._off and gc.isenabled():
                gc.disable()
                self._off = True

    def resume(self) -> None:
        with self._lock:
            self._cancel()
            if self._off:
                self._timer = threading.Timer(self.delay, self._collect)
                self._timer.name = "promptspec-gc"
                self._timer.daemon = True
                self._timer.start()

    def close(self) -> None:
        with self._lock:
            self._cancel()
            self._on()

    def _on(self) -> None:
        if self._off:
            self._off = False
            gc.enable()

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _collect(self) -> None:
        with self._lock:
            if self._timer is None or not self._off:  # cancelled by a rebuild that started meanwhile
                return
            self._timer = None
            gc.collect()
            self._on()
            self.collections += 1
