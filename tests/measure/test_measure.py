"""Token figures per variant: exact counts, sums with nothing hidden, window maths.

"Exact" is checked against reference encodings built from tiktoken's own
constructors (tests/tiktoken_reference.py), and Codex's estimate against its
rule as Codex states it (⌈UTF-8 bytes / 4⌉), not against promptspec's
encoder and estimator.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from required import needs

from promptspec import pipeline
from promptspec.assemble import export
from promptspec.measure.counter import TokenCounter
from promptspec.measure.encodings import codex_estimate

from tiktoken_reference import reference_encodings

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
CODEX = SHARED / "fixtures" / "codex"


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory):
    return reference_encodings(tmp_path_factory.mktemp("vocab"))


def _bytes_over_four(text: str) -> int:
    return -(-len(text.encode("utf-8")) // 4)


def _check_result(result: pipeline.Result, reference) -> None:
    assert result.measures, "no variants measured"
    for m in result.measures:
        enc = reference[m.encoding]
        req = m.request
        assert m.base == len(enc.encode_ordinary(req.base.text))
        assert len(m.sections) == len(req.messages)
        for msg, counts in zip(req.messages, m.sections):
            assert len(counts) == len(msg.sections)
            for section, n in zip(msg.sections, counts):
                assert n == len(enc.encode_ordinary(section.text)), section.fragment
        # Tools: the list's JSON exactly as the body carries it, counted again here.
        tools_text = json.dumps(export.tool_list(req), ensure_ascii=False, separators=(",", ":")) if req.tools else ""
        assert m.tools == len(enc.encode_ordinary(tools_text))
        assert m.tool_counts == tuple(len(enc.encode_ordinary(json.dumps(t.definition, ensure_ascii=False, separators=(",", ":")))) for t in req.tools)
        # The total is exactly the parts: instructions, every section, the tool list.
        assert m.total == m.base + sum(sum(c) for c in m.sections) + m.tools
        assert m.estimate == _bytes_over_four(req.base.text) + sum(
            _bytes_over_four(s.text) for _, _, s in req.sections
        ) + (_bytes_over_four(tools_text) if req.tools else 0)
        summary = m.summary()
        assert summary["total"] == summary["instructions"]["tokens"] + sum(
            x["tokens"] for x in summary["messages"]
        ) + summary["tools"]["tokens"]


def test_embedded_spec_counts_are_exact(tmp_path: Path, reference) -> None:
    result = pipeline.run(ROOT / "templates", counter=TokenCounter(tmp_path))
    _check_result(result, reference)
    legacy = [m for m in result.measures if m.request.model == "harbor-4-legacy"]
    assert legacy and all(m.encoding == "cl100k_base" for m in legacy)
    assert {m.encoding for m in result.measures if m.request.model == "harbor-5"} == {"o200k_base"}


def test_window_figures_name_their_denominators(tmp_path: Path) -> None:
    result = pipeline.run(ROOT / "templates", counter=TokenCounter(tmp_path))
    for m in result.measures:
        model = result.spec.model(m.request.model)
        usable = model.context_window * model.effective_context_window_percent // 100
        assert m.usable_window == usable
        assert m.percent_of_usable == pytest.approx(100 * m.total / usable)
        if model.auto_compact_token_limit:
            assert m.compact_limit_source == "auto_compact_token_limit"
            assert m.headroom == model.auto_compact_token_limit - m.estimate  # Codex decides on its estimate
        else:
            assert m.compact_limit_source == "90% of context_window"
            assert m.headroom == model.context_window * 9 // 10 - m.estimate
        assert m.summary()["usable_window_rule"].startswith("context_window x effective_context_window_percent")


def test_codex_estimate_is_ceil_bytes_over_four() -> None:
    for text in ["", "a", "abcd", "abcde", "é", "日本語", "🙂🙂"]:
        assert codex_estimate(text) == math.ceil(len(text.encode("utf-8")) / 4)


@needs(CODEX.is_dir(), "../shared/fixtures/codex is absent (it is only present beside the promptspec checkout)")
def test_codex_fixture_every_section_counted(tmp_path: Path, reference) -> None:
    from promptspec.importers.codex_source import import_codex

    spec_dir = import_codex(CODEX, tmp_path / "codex-spec")
    result = pipeline.run(spec_dir, counter=TokenCounter(tmp_path / "cache"))
    assert len(result.measures) == len(result.variants) > 0
    _check_result(result, reference)
