"""A progress bar on stderr for long builds, and silence everywhere else.

A 10,000-variant build takes seconds; a person at a terminal should see it
move.  Logs, pipes and CI must not fill up with carriage returns, so the bar
only draws when the stream is a terminal and CI is not set.  Redraws are
throttled, so reporting every one of 10,000 steps costs next to nothing.

    with Progress("assembling", total) as p:
        for item in items:
            ...
            p.advance()

    with Progress("assembling") as p:        # the total arrives with the calls
        pipeline.run(spec_dir, progress=p)    # p(done, total)
"""

from __future__ import annotations

import os
import sys
import time
from typing import IO, Any

BAR_WIDTH = 24


def wanted(stream: IO[str] | None = None) -> bool:
    """Draw only on a terminal, and never under CI (CI=true or CI=1)."""
    stream = sys.stderr if stream is None else stream
    if os.environ.get("CI", "").strip().lower() in ("true", "1", "yes"):
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # closed or not a real file
        return False


class Progress:
    """A one-line progress bar: `label [#####.....]  120/400`.

    Usable as a context manager (`advance()`, `update()`), and as the
    `progress(done, total)` callback `pipeline.run` takes.  `enabled=None`
    decides by `wanted(stream)`; when disabled every method is a cheap no-op.
    """

    def __init__(
        self,
        label: str,
        total: int | None = None,
        *,
        stream: IO[str] | None = None,
        enabled: bool | None = None,
        min_interval: float = 0.1,
    ) -> None:
        self.label = label
        self.total = total
        self.done = 0
        self.stream = sys.stderr if stream is None else stream
        self.enabled = wanted(self.stream) if enabled is None else enabled
        self.min_interval = min_interval
        self._last_draw = float("-inf")
        self._drawn = 0  # width of the line on screen, 0 when none

    # -- reporting ----------------------------------------------------------
    def advance(self, n: int = 1) -> None:
        self.update(self.done + n)

    def update(self, done: int, total: int | None = None) -> None:
        self.done = done
        if total is not None:
            self.total = total
        if not self.enabled:
            return
        now = time.monotonic()
        finished = self.total is not None and done >= self.total
        if finished or now - self._last_draw >= self.min_interval:
            self._last_draw = now
            self._draw()

    def __call__(self, done: int, total: int | None = None) -> None:
        self.update(done, total)

    def close(self) -> None:
        """Draw the final state and end the line (only if a bar was shown)."""
        if self.enabled and self._drawn:
            self._draw()
            self._write("\n")
            self._drawn = 0

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- drawing --------------------------------------------------------------
    def line(self) -> str:
        """The text of the bar (without carriage return), e.g. for tests."""
        if self.total:
            filled = min(BAR_WIDTH, BAR_WIDTH * self.done // self.total)
            bar = "#" * filled + "." * (BAR_WIDTH - filled)
            width = len(str(self.total))
            return f"{self.label} [{bar}] {self.done:>{width}}/{self.total}"
        return f"{self.label} {self.done}"

    def _draw(self) -> None:
        text = self.line()
        pad = " " * max(0, self._drawn - len(text))
        self._write("\r" + text + pad)
        self._drawn = len(text)

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # terminal gone: stop drawing, keep working
            self.enabled = False
