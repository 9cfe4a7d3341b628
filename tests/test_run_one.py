"""pipeline.run_one: `render`'s one variant through the same stages as `run`."""

from __future__ import annotations

import pytest

from promptspec import pipeline
from promptspec.errors import UsageError

from _helpers import TEMPLATES


def test_one_variant_is_what_the_whole_run_gives_for_it() -> None:
    whole = pipeline.run(TEMPLATES)
    v = whole.variants[-1]
    one = pipeline.run_one(TEMPLATES, v.model, v.personality, v.mode, dict(v.extra) if getattr(v, "extra", None) else None)
    assert one.variants == [v]
    assert one.requests[0] == whole.requests[-1]
    assert one.measures[0].total == whole.measures[-1].total
    assert set(one.timings) == {"load", "assemble", "count"}


def test_upto_stops_after_a_stage() -> None:
    v = pipeline.run(TEMPLATES).variants[0]
    assert pipeline.run_one(TEMPLATES, v.model, v.personality, v.mode, upto="load").requests == []
    assembled = pipeline.run_one(TEMPLATES, v.model, v.personality, v.mode, upto="assemble")
    assert len(assembled.requests) == 1 and assembled.measures == []
    with pytest.raises(ValueError):
        pipeline.run_one(TEMPLATES, v.model, v.personality, v.mode, upto="count")


def test_an_unknown_variant_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        pipeline.run_one(TEMPLATES, "no-such-model", None, None)
