"""spec/readers/sources.py reads YAML through libyaml's parser where PyYAML
has it: the data, and the line of every mapping and key, are what the
pure-Python loader gives; a document either finds fault with says the
pure-Python loader's message; the node limit holds on both paths."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from promptspec.errors import SpecError
from promptspec.spec.readers import sources

from _helpers import REPO
from required import require

CORPUS = REPO / "tests" / "corpus"


def _lines(value: Any, seen: set[int] | None = None) -> Any:
    """Every mapping's line and key lines, depth first (an alias's value once)."""
    seen = set() if seen is None else seen
    if isinstance(value, (dict, list)):
        if id(value) in seen:
            return "alias"
        seen.add(id(value))
    if isinstance(value, dict):
        return [value.line, value.key_lines, [_lines(v, seen) for v in value.values()]]
    if isinstance(value, list):
        return [_lines(v, seen) for v in value]
    return None


def _pure(text: str, shown: str) -> Any:
    loader = sources._Loader(text)
    loader.name = shown
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def _documents() -> list[Path]:
    files = sorted([*(REPO / "templates").rglob("*.yaml"), *CORPUS.rglob("*.yaml"), *CORPUS.rglob("*.yml"),
                    *(REPO / "docs").rglob("*.yaml")])
    return [p for p in files if p.is_file() and not p.is_symlink() and p.stat().st_size < 1_000_000]


def test_libyaml_reads_what_the_python_loader_reads() -> None:
    require(sources._FAST, "PyYAML built with libyaml (the wheels on PyPI are)")
    read = faulted = 0
    for path in _documents():
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        shown = path.relative_to(REPO).as_posix()
        try:
            expected = _pure(text, shown)
        except (SpecError, Exception) as exc:  # noqa: BLE001 - any refusal: the fast path must not accept it either
            got = None
            try:
                got = sources._fast_data(text, shown)
            except SpecError as fast_exc:
                assert str(fast_exc) == str(exc), shown  # a limit or a value error: the same line
            else:
                assert got is sources._NOT_READ, shown  # read again by the pure-Python loader
            faulted += 1
            continue
        got = sources._fast_data(text, shown)
        assert got is not sources._NOT_READ, shown
        assert _lines(got) == _lines(expected), shown
        if "&" not in text:  # a document of aliases compares as its expansion: a billion laughs, kept for the limit below
            assert got == expected, shown
        read += 1
    assert read > 150 and faulted >= 5  # the example spec, the corpus' specs and its broken files


@pytest.mark.parametrize("text, message", [
    ("a: 1\n\tb: 2\n", "found character '\\t' that cannot start any token"),
    ("a: [1, 2\nb: 3\n", "expected ',' or ']', but got ':'"),
    ("a: 1\na: 2\n", "duplicate key 'a'"),
    ("when: 2026-02-30\n", "invalid YAML value '2026-02-30'"),
    ("a: \x07\n", "unacceptable character #x0007"),
])
def test_a_faulty_document_says_what_the_python_loader_says(tmp_path: Path, monkeypatch, text: str, message: str) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(text, encoding="utf-8")
    said = []
    for fast in (True, False):
        monkeypatch.setattr(sources, "_FAST", fast)
        with pytest.raises(SpecError) as exc:
            sources.load_yaml(path, "spec.yaml")
        said.append(str(exc.value))
    assert said[0] == said[1] and message in said[0]


def test_the_node_limit_holds_through_libyaml(tmp_path: Path) -> None:
    require(sources._FAST, "PyYAML built with libyaml (the wheels on PyPI are)")
    text = "".join(f"k{n}: {n}\n" for n in range(sources.MAX_YAML_NODES))
    with pytest.raises(SpecError, match=f"more than {sources.MAX_YAML_NODES} values"):
        sources._fast_data(text, "big.yaml")
