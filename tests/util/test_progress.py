"""progress.Progress: a bar on a terminal, silence in pipes and CI."""

from __future__ import annotations

import io
import os
import pty

import pytest

from promptspec import pipeline
from promptspec.util.progress import Progress, wanted

from _helpers import TEMPLATES, read_available


@pytest.fixture
def tty():
    """A real terminal (pseudo-terminal): the writer's end as a text stream,
    and the reader's file descriptor."""
    master, slave = pty.openpty()
    stream = os.fdopen(slave, "w", encoding="utf-8", closefd=True)
    try:
        yield stream, master
    finally:
        stream.close()
        os.close(master)


def test_draws_a_bar_with_counts_on_a_tty(tty, monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    stream, master = tty
    assert wanted(stream)
    with Progress("assembling", 3, stream=stream, min_interval=0) as p:
        for _ in range(3):
            p.advance()
    out = read_available(master).decode("utf-8")
    assert "\r" in out
    assert "assembling [" in out
    assert "1/3" in out and "3/3" in out
    assert out.endswith("\n") or out.endswith("\r\n")  # the line is ended once done
    assert "[" + "#" * 24 + "]" in out


def test_silent_when_not_a_tty():
    stream = io.StringIO()
    assert not wanted(stream)
    with Progress("assembling", 5, stream=stream, min_interval=0) as p:
        for _ in range(5):
            p.advance()
    assert stream.getvalue() == ""


def test_silent_under_ci_even_on_a_tty(tty, monkeypatch):
    monkeypatch.setenv("CI", "true")
    stream, master = tty
    assert not wanted(stream)
    with Progress("assembling", 2, stream=stream, min_interval=0) as p:
        p.advance()
        p.advance()
    assert read_available(master) == b""


def test_throttles_redraws(tty, monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    stream, master = tty
    with Progress("counting", 1000, stream=stream, min_interval=3600) as p:
        for _ in range(1000):
            p.advance()
    out = read_available(master).decode("utf-8")
    # The first step draws, the last draws (completion), close redraws once.
    assert out.count("\r") <= 4, out
    assert "1000/1000" in out


def test_as_pipeline_callback(tty, monkeypatch):
    """`pipeline.run(progress=p)` reports every variant; the bar learns the total from the calls."""
    monkeypatch.delenv("CI", raising=False)
    stream, master = tty
    with Progress("assembling", stream=stream, min_interval=0) as p:
        result = pipeline.run(TEMPLATES, progress=p)
    n = len(result.variants)
    assert p.total == n and p.done == n
    out = read_available(master).decode("utf-8")
    assert f"{n}/{n}" in out


def test_unknown_total_shows_a_count():
    p = Progress("loading", stream=io.StringIO(), enabled=True)
    p.update(7)
    assert p.line() == "loading 7"
    p.update(2, 4)
    assert p.line() == "loading [" + "#" * 12 + "." * 12 + "] 2/4"


def test_a_closed_stream_stops_drawing_without_failing():
    stream = io.StringIO()
    p = Progress("x", 2, stream=stream, enabled=True, min_interval=0)
    stream.close()
    p.advance()
    p.advance()
    p.close()
    assert not p.enabled
