"""`codex:` sides of `promptspec history`: a release (installed from npm into
the user cache) or an install folder, imported once and reused, dated by the
npm registry's publish time."""

from __future__ import annotations

import pytest

from promptspec.errors import UsageError
from promptspec.review.history import series
from promptspec.review.gitspec import side_kind
from promptspec.review.sides import parse_side, parse_sides


def test_codex_sides_parse():
    side = parse_side("codex:0.125.0")
    assert (side.kind, side.ref, side.name) == ("codex", "0.125.0", "0.125.0")
    side = parse_side("codex:/opt/codex-0.150.0,label=old,date=2026-09-16")
    assert (side.kind, side.ref, side.label, side.date) == ("codex", "/opt/codex-0.150.0", "old", "2026-09-16")
    with pytest.raises(UsageError, match="two sides are both named"):
        parse_sides(["codex:0.125.0", "codex:0.125.0"])


def test_codex_side_is_not_a_diff_side():
    with pytest.raises(UsageError, match="read by `promptspec history`"):
        side_kind("codex:0.125.0")


def test_codex_side_needs_the_resolver(tmp_path):
    with pytest.raises(UsageError, match="codex: side is read by `promptspec history` only"):
        series.load_series(parse_sides(["codex:0.125.0", "codex:0.150.0"]), spec_dir=tmp_path, root=tmp_path)


@pytest.mark.slow
def test_history_of_two_installs_imports_each_once(tmp_path, monkeypatch):
    from codex_release import codex_install

    from promptspec.importers.codex_cli import releases as codex_releases
    from promptspec.measure.counter import TokenCounter

    installs = [codex_install(r) for r in ("0.125.0", "0.150.0")]
    calls = []
    real = codex_releases.import_cli
    monkeypatch.setattr(codex_releases, "import_cli", lambda *a, **k: calls.append(a[0]) or real(*a, **k))

    def resolve(ref):  # one model, its unset personality and mode: what is checked is the import's reuse, not its matrix
        return codex_releases.codex_side(ref, tmp_path / "cache", models=("gpt-5.4",),
                                         only={"personality": ["unset"], "mode": ["unset"]})

    sides = parse_sides([f"codex:{p}" for p in installs])
    got = series.load_series(sides, spec_dir=tmp_path, root=tmp_path, counter=TokenCounter(persist=False), codex_spec=resolve)
    assert [r.label for r in got] == ["0.125.0", "0.150.0"]
    dates = codex_releases.publish_dates()
    if dates:  # the npm registry answered: each release carries its publish date
        assert [r.date for r in got] == [dates["0.125.0"], dates["0.150.0"]]
    assert len(calls) == 2
    again = series.load_series(sides, spec_dir=tmp_path, root=tmp_path, counter=TokenCounter(persist=False), codex_spec=resolve)
    assert len(calls) == 2, "an imported release is reused from the cache"
    assert [r.label for r in again] == ["0.125.0", "0.150.0"]
    assert [len(r.variants) for r in got] == [12, 9]  # the part (0.150.0 refuses untrusted approval), not the whole matrix


def test_a_release_npm_publishes_without_a_binary_is_named(tmp_path):
    """0.153.1 is on npm with no platform package at all: npm "succeeds" and leaves
    no binary, which must be said, not imported as a folder with nothing in it."""
    import shutil

    from required import missing

    from promptspec.importers.codex_cli import releases as codex_releases

    if shutil.which("npm") is None:
        missing("npm, to install codex:0.153.1 from the registry")
    with pytest.raises(UsageError) as caught:
        codex_releases.install("0.153.1", tmp_path / "cache")
    if "npm cannot install" in str(caught.value):
        missing(f"the npm registry ({caught.value})")
    assert "codex:0.153.1: npm installed @openai/codex@0.153.1 without a binary for this machine" in str(caught.value)
