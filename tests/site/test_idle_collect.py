"""site/serve/idle_collect.py: the cyclic collector waits while a serve
rebuild runs and collects once after it, unless the next rebuild starts first."""

from __future__ import annotations

import gc
import time

import pytest
from _helpers import gc_collections

from promptspec.site.serve.idle_collect import IdleCollector


@pytest.fixture
def collections():
    """The generations of the collections run during the test; the collector on again after it."""
    with gc_collections() as seen:
        yield seen
    gc.enable()


def _wait_for(predicate, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


def test_paused_no_collection_runs_and_one_full_collection_follows_the_resume(collections):
    idle = IdleCollector(delay=0.05)
    idle.pause()
    assert not gc.isenabled()
    garbage = [[] for _ in range(50_000)]  # enough allocations for several young collections
    for item in garbage:
        item.append(item)  # cycles: only the collector frees them
    del garbage
    assert collections == []
    idle.resume()
    assert not gc.isenabled()  # on again only with the collection: no full one set off by the rebuild's last steps
    assert _wait_for(lambda: idle.collections == 1)
    assert gc.isenabled() and 2 in collections  # a full one


def test_a_rebuild_that_starts_before_the_delay_cancels_the_collection(collections):
    idle = IdleCollector(delay=0.3)
    idle.pause()
    idle.resume()
    idle.pause()  # the next rebuild, within the delay
    time.sleep(0.5)
    assert idle.collections == 0 and not gc.isenabled()
    idle.resume()
    assert _wait_for(lambda: idle.collections == 1) and gc.isenabled()


def test_a_collector_the_process_switched_off_stays_off(collections):
    gc.disable()
    idle = IdleCollector(delay=0.01)
    idle.pause()
    idle.resume()
    time.sleep(0.1)
    assert not gc.isenabled() and idle.collections == 0
    idle.close()
    assert not gc.isenabled()


def test_close_gives_the_collector_back():
    idle = IdleCollector(delay=10)
    idle.pause()
    idle.close()
    assert gc.isenabled()
    time.sleep(0.05)
    assert idle.collections == 0
