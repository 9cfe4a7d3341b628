"""Properties of the loader and the renderer (Hypothesis), and determinism.

* Prompt text is data: any text (without NUL and CR, which spec files may
  not contain) placed in a fragment's body file comes out of assembly
  unchanged; NUL or CR is refused with a SpecError.  Any text given as a
  scenario value and printed with `{{ x }}` comes out unchanged too.
* Any name the spec format allows loads, and appears in the matrix.
* Any YAML scalar in the scenario either loads and renders or fails with a
  SpecError: never another exception (which the CLI would show as an internal
  error).
* The site's escaping helpers round-trip through an HTML parser's unescaping.
* The same spec gives byte-identical `list`/`render` JSON whatever the hash
  seed, time zone, locale or token-cache state.
"""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from promptspec.assemble.builder import Assembler
from promptspec.assemble.matrix import matrix
from promptspec.errors import SpecError
from promptspec.spec.model import NAME_RE
from promptspec.spec.readers.load import load_spec
from promptspec.render.codex import CODEX_PLACEHOLDER

from conftest import write_spec

PROPERTY_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Text of any Unicode character except surrogates (not encodable as UTF-8).
any_text = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=200)
# What prompt text may hold, however it is written (files, JSON/YAML escapes,
# template literals): no NUL, CR or ESC (spec/files.py, tests/security/).
spec_text = any_text.filter(lambda t: "\x00" not in t and "\r" not in t and "\x1b" not in t)


def _spec_with_body(root: Path, body: bytes, engine: str = "codex") -> Path:
    write_spec(
        root,
        fragments={"probe": {"role": "developer", "slot": "permissions", "engine": engine, "body": "probe.md"}},
    )
    (root / "fragments" / "probe.md").write_bytes(body)
    return root


def _sections(spec_dir: Path) -> list[Any]:
    spec = load_spec(spec_dir)
    request = Assembler(spec).assemble(matrix(spec)[0])
    return [s for _, _, s in request.sections]


@PROPERTY_SETTINGS
@given(text=spec_text)
@example(text="{% raw %} {# not a comment #} {{{ x }}}")  # only {{ name }} placeholders are special
@example(text="\ufeffzero width no-break space, not at the file start")
@example(text="\x85\u2028\u2029\x0b\x0c\x07[31m")
def test_body_file_text_round_trips(text: str) -> None:
    assume(not CODEX_PLACEHOLDER.search(text))
    assume(not text.startswith("\ufeff"))  # a BOM at the start of a file is refused on purpose
    with tempfile.TemporaryDirectory() as tmp:
        sections = _sections(_spec_with_body(Path(tmp) / "spec", text.encode("utf-8")))
    assert [s.body for s in sections] == [text]


@PROPERTY_SETTINGS
@given(text=spec_text, bad=st.sampled_from(["\x00", "\r", "\r\n"]), at=st.integers(min_value=0, max_value=200))
def test_body_file_with_nul_or_cr_is_refused(text: str, bad: str, at: int) -> None:
    at = min(at, len(text))
    body = text[:at] + bad + text[at:]
    with tempfile.TemporaryDirectory() as tmp:
        with pytest.raises(SpecError, match=r"^fragments/probe\.md(:\d+)?: (looks like a binary file|file has CR)"):
            _sections(_spec_with_body(Path(tmp) / "spec", body.encode("utf-8")))


def _quoted_yaml(data: Any) -> str:
    """YAML with every string double-quoted and escaped: PyYAML's default
    emitter writes a lone U+0085 raw, which a YAML reader takes for a line
    break (a PyYAML round-trip quirk, not something our loader does)."""
    return yaml.safe_dump(data, default_style='"', allow_unicode=False, sort_keys=False)


@PROPERTY_SETTINGS
@given(text=spec_text)
@example(text="{{ x }}{% if %}")  # a value is never a template
@example(text="\n\x85\u2028\x0b")
def test_scenario_value_round_trips_through_yaml_and_jinja(text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = write_spec(
            Path(tmp) / "spec",
            fragments={"probe": {"role": "user", "slot": "environment_context", "text": "{{ x }}"}},
        )
        (root / "spec.yaml").write_text(_quoted_yaml({"name": "t", "scenario": {"x": text}}), encoding="utf-8")
        sections = _sections(root)
    assert [s.body for s in sections] == [text]


@PROPERTY_SETTINGS
@given(text=spec_text)
def test_inline_codex_text_round_trips(text: str) -> None:
    assume(not CODEX_PLACEHOLDER.search(text))
    with tempfile.TemporaryDirectory() as tmp:
        root = write_spec(Path(tmp) / "spec")
        definition = {"role": "user", "slot": "environment_context", "engine": "codex", "text": text}
        (root / "fragments" / "probe.yaml").write_text(_quoted_yaml(definition), encoding="utf-8")
        sections = _sections(root)
    assert [s.body for s in sections] == [text]


names = st.from_regex(NAME_RE, fullmatch=True).filter(lambda n: ".." not in n and "--" not in n)


@PROPERTY_SETTINGS
@given(model=names, personality=names, mode=names, axis_value=names, fragment=names)
def test_any_valid_name_loads(model: str, personality: str, mode: str, axis_value: str, fragment: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = write_spec(
            Path(tmp) / "spec",
            spec={
                "personalities": {personality: {}},
                "modes": {mode: {}},
                "axes": {"extra": [axis_value]},
            },
            models=[{"slug": model, "base_instructions": "hi\n"}],
            fragments={fragment: {"role": "developer", "slot": "permissions", "text": "{{ variant.id }}"}},
        )
        spec = load_spec(root)
        (variant,) = matrix(spec)
        sections = [s for _, _, s in Assembler(spec).assemble(variant).sections]
    assert variant.values == (("model", model), ("personality", personality), ("mode", mode), ("extra", axis_value))
    assert [(s.fragment, s.body) for s in sections] == [(fragment, variant.id)]
    assert "/" not in variant.slug and ".." not in variant.slug


yaml_scalars = st.one_of(
    st.text(st.characters(exclude_categories=("Cs",)), max_size=60),  # raw text after `x: `: anything YAML makes of it
    st.sampled_from(
        [
            "~", "null", "yes", "No", "on", "0x1F", "0o17", "1_000", "1e400", "-.inf", ".nan", "2026-02-30",
            "2026-11-30T10:00:00Z", "12:30:00", "!!binary aGk=", "!!set {a, b}", "!!str 1", "!!int x", "!!float x",
            "!!timestamp x", "!!timestamp", "!!omap [a: 1]", "!!pairs [a: 1]", "*missing", "&a [*a]", "!!python/none ''",
            "'unterminated", '"\\x00\\r"', "[1, {a: [2]}]", "{a: 1, a: 2}", "9" * 5000, "<<: {a: 1}", "|\n  block",
        ]
    ),
    st.integers().map(str),
    st.floats().map(repr),
)


@PROPERTY_SETTINGS
@given(scalar=yaml_scalars, key=st.sampled_from(["x", "cwd"]))
def test_any_yaml_scalar_in_the_scenario_loads_or_fails_cleanly(scalar: str, key: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = write_spec(
            Path(tmp) / "spec",
            fragments={"probe": {"role": "user", "slot": "environment_context", "text": "[{{ x }}]"}},
        )
        spec_yaml = root / "spec.yaml"
        with spec_yaml.open("a", encoding="utf-8", newline="") as fh:
            fh.write(f"scenario:\n  x: 1\n  {key}: {scalar}\n" if key == "cwd" else f"scenario:\n  {key}: {scalar}\n")
        try:
            spec = load_spec(root)
            for variant in matrix(spec):
                Assembler(spec).assemble(variant)
        except SpecError as exc:
            assert "\n" not in str(exc)


# ---------------------------------------------------------------------------
# The site's escaping helpers

from promptspec.site.html import markup as site_markup  # noqa: E402 - a missing module is an error, not a skip


_REFERENCE = re.compile(r"&(?:#[xX]([0-9a-fA-F]+)|#([0-9]+)|([A-Za-z][A-Za-z0-9]*));")


def browser_unescape(text: str) -> str:
    """Character references decoded the way an HTML5 parser does: a numeric
    reference to a control character yields that character (Python's
    html.unescape drops it), &#0; yields U+FFFD, &#128;-&#159; map through
    windows-1252.  One pass, so "&amp;lt;" stays "&lt;"."""

    def one(m: re.Match[str]) -> str:
        if m.group(3):
            return html.unescape(m.group(0))
        n = int(m.group(1), 16) if m.group(1) else int(m.group(2))
        if n == 0 or n > 0x10FFFF or 0xD800 <= n <= 0xDFFF:
            return "\ufffd"
        if 0x80 <= n <= 0x9F:
            return html.unescape(m.group(0))
        return chr(n)

    return _REFERENCE.sub(one, text)


@PROPERTY_SETTINGS
@given(text=st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00")))
@example(text="\x02\x03`~{}\t\r  \n&amp;<b>\"'")
def test_site_escaping_round_trips_through_html_unescape(text: str) -> None:
    # NUL is left out: a parser turns "&#0;" into U+FFFD (and spec files cannot hold NUL).
    # Invisible characters (format characters, zero-width, bidi) are shown as
    # visible escapes on purpose (SECURITY.md): the browser shows exactly that.
    from promptspec.errors import reveal_invisible

    for escape in (site_markup.h, site_markup.prompt_html):
        escaped = escape(text)
        assert browser_unescape(escaped) == reveal_invisible(text)
        assert "<" not in escaped and ">" not in escaped and '"' not in escaped


# ---------------------------------------------------------------------------
# Determinism across processes

ROOT = Path(__file__).resolve().parents[2]
RENDER_ALL = textwrap.dedent(
    """
    import contextlib, io, sys
    from promptspec import cli
    from promptspec.assemble.matrix import matrix
    from promptspec.spec.readers.load import load_spec

    out = sys.stdout.buffer
    for v in matrix(load_spec(cli.default_spec())):
        argv = ["render", "--format", "json", "--model", v.model, "--personality", v.personality, "--mode", v.mode]
        argv += [f"--axis={axis}={value}" for axis, value in v.extra]
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            code = cli.main(argv)
        assert code == 0, (v.id, code)
        out.write(f"=== {v.id}\\n".encode("utf-8") + buf.getvalue().encode("utf-8"))
    """
)


def _environments(tmp: Path) -> list[dict[str, str]]:
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONHASHSEED", "TZ", "LC_ALL", "LANG", "LC_CTYPE")}
    cache = str(tmp / "token-cache")  # cold in the first run, warm in the second
    return [
        {**base, "PYTHONHASHSEED": "1", "TZ": "UTC", "LC_ALL": "C.UTF-8", "PROMPTSPEC_CACHE_DIR": cache},
        {**base, "PYTHONHASHSEED": "4242", "TZ": "Pacific/Kiritimati", "LC_ALL": "C", "LANG": "C", "PROMPTSPEC_CACHE_DIR": cache},
    ]


def _run(argv: list[str], env: dict[str, str], cwd: Path) -> bytes:
    # Subprocesses on purpose: hash seed, time zone and locale are fixed when a process starts.
    proc = subprocess.run(argv, capture_output=True, env=env, cwd=cwd, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")
    return proc.stdout


def test_list_and_render_json_are_byte_identical_across_environments(tmp_path: Path) -> None:
    runs = []
    for i, env in enumerate(_environments(tmp_path)):
        cwd = tmp_path / f"cwd{i}"
        cwd.mkdir()
        listed = _run([sys.executable, "-m", "promptspec.cli", "list", "--format", "json"], env, cwd)
        rendered = _run([sys.executable, "-c", RENDER_ALL], env, cwd)
        first = _run([sys.executable, "-m", "promptspec.cli", "render", "--format", "json"], env, cwd)
        runs.append((listed, rendered, first))
    (list_a, render_a, first_a), (list_b, render_b, first_b) = runs
    variants = json.loads(list_a)["variants"]
    assert len(variants) > 1
    assert render_a.count(b"=== ") == len(variants)
    assert list_a == list_b
    assert render_a == render_b
    assert first_a == first_b
    # The in-process driver prints what the real command prints.
    assert render_a.split(b"=== ", 2)[1].split(b"\n", 1)[1] == first_a


def test_site_folder_and_lock_are_byte_identical_across_environments(tmp_path: Path) -> None:
    """The whole `build --out` tree and the lock file, under two hash seeds,
    time zones and locales, with a cold and then a warm token cache."""
    trees = []
    for i, env in enumerate(_environments(tmp_path)):
        cwd = tmp_path / f"cwd{i}"
        cwd.mkdir()
        out, lock = cwd / "site", cwd / "prompts.lock.json"
        _run([sys.executable, "-m", "promptspec.cli", "build", "--base", "none", "--out", str(out)], env, cwd)
        _run([sys.executable, "-m", "promptspec.cli", "lock", "--lock", str(lock)], env, cwd)
        files = {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
        trees.append((files, lock.read_bytes()))
    (files_a, lock_a), (files_b, lock_b) = trees
    assert len(files_a) > 100
    assert sorted(files_a) == sorted(files_b)
    for name in files_a:
        assert files_a[name] == files_b[name], name
    assert lock_a == lock_b and b'"variants"' in lock_a
