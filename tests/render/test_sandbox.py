"""Untrusted templates: the sandbox, the file boundary and the budgets.

Every attack below must end with a one-line `SpecError`, and within bounded
memory: the peak resident memory during the render grows by less than
MEMORY_LIMIT (Linux: the kernel's high-water mark, reset through
/proc/self/clear_refs, so nothing slips between samples; elsewhere the peak
of Python allocations from tracemalloc, which is exact but ~30x slower).  Time is bounded by the iteration budget and the deadline
in render/sandbox.py; a SIGALRM guard only turns a hang into a failure instead of
a stuck test run (it asserts nothing about speed).

The second half checks that the guards do not break legitimate templates
(call/filter blocks, recursive loops, join by attribute...), the file
boundary (SpecFS and the Jinja loader), and that YAML only ever loads safely.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import threading
import tracemalloc
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

import promptspec
from promptspec.render import codex
from promptspec.errors import SpecError
from promptspec.spec.readers.sources import load_yaml
from promptspec.spec.readers.load import load_spec
from promptspec.spec.limits import Limits
from promptspec.render.renderer import Renderer
from promptspec.spec.files import SpecFS, read_text_file

MEMORY_LIMIT = 200 * 1024 * 1024
HANG_GUARD_SECONDS = 60

GIANT_STR = "{% set x = 'x' * 2000000 %}"

# (id, template).  Each must raise SpecError.
ATTACKS: list[tuple[str, str]] = [
    # the brief's list
    ("repeat-10e10", "{{ 'x' * 10**10 }}"),
    ("center-10e9", "{{ 'x'|center(10**9) }}"),
    ("namespace-doubling", "{% set ns = namespace(x='ab') %}{% for i in range(60) %}{% set ns.x = ns.x ~ ns.x %}{% endfor %}{{ ns.x }}"),
    ("nested-empty-loops", "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}"),
    ("list-repeat-10e8", "{{ [1]*10**8 }}"),
    ("replace-empty", "{{ ('x'*1000000)|replace('', 'yy') }}"),
    ("macro-recursion", "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}"),
    ("include-self", "{% include 'self.md' %}"),
    ("include-cycle", "{% include 'a.md' %}"),
    ("mro", "{{ ''.__class__.__mro__ }}"),
    ("cycler-globals", "{{ cycler.__init__.__globals__ }}"),
    ("template-context", "{{ self._TemplateReference__context }}"),
    ("lipsum", "{{ lipsum }}"),
    ("range-self", "{{ range.__self__ }}"),
    ("format-width", '{{ "%999999999d" % 1 }}'),
    ("big-int-power", "{{ (2**100)**100**100 }}"),
    ("tower-power", "{{ 10**10**10**10**10 }}"),
    ("chars-x-chars", "{% for x in 'a'*1000000 %}{% for y in 'a'*1000000 %}{% endfor %}{% endfor %}"),
    ("text-etc-passwd", "{{ text('/etc/passwd') }}"),
    ("text-dotdot", "{{ text('../x') }}"),
    ("wordwrap-1", "{{ ('x'*1000000)|wordwrap(1) }}"),
    ("indent-huge", "{{ ('x\\n'*1000000)|indent(1000) }}"),
    ("join-huge", "{{ range(100000)|join('x'*1000) }}"),
    ("sum-of-lists", "{{ range(100000)|batch(1)|sum(start=[]) }}"),
    ("map-center", "{{ range(100000)|map('string')|map('center', 10**6)|list }}"),
    ("batch-fill", "{{ range(10)|batch(10**9, 'x')|list }}"),
    ("batch-list", GIANT_STR + "{{ x|batch(1)|list|length }}"),
    ("slice-huge", "{{ range(10)|slice(10**9)|list }}"),
    ("list-big-range", "{{ range(10**9)|list }}"),
    ("str-ljust", "{{ 'x'.ljust(10**9) }}"),
    ("str-zfill", "{{ 'x'.zfill(10**9) }}"),
    ("str-expandtabs", "{{ 'a\\tb'.expandtabs(10**9) }}"),
    ("str-translate", "{{ ('x'*1000000).translate({120: 'y'*1000}) }}"),
    ("str-join-method", "{{ ','.join(['y'*1000]*2000) }}"),
    ("str-format-method", "{{ '{0:>999999999}'.format(1) }}"),
    ("bytes-center", "{{ 'x'.encode().center(10**9) }}"),
    ("int-to-bytes", "{{ (1).to_bytes(10**9, 'big') }}"),
    ("dict-comprehension-like", "{{ dict.fromkeys(range(100000), 'y'*2000000) }}"),
    ("fromkeys-method", "{% set d = {'a': 1} %}{{ d.fromkeys(range(100000), 'y'*2000000)|length }}"),
    ("list-comprehension-like", "{{ range(100000)|map('string')|map('center', 100)|list|join }}"),
    # amplification through sharing, recursion and mutation
    ("list-doubling", "".join(f"{{% set v{i + 1} = [v{i}, v{i}] %}}" for i in range(64)).replace("[v0, v0]", "['ab', 'ab']") + "{{ v64|string|length }}"),
    ("tuple-refs-string", GIANT_STR + "{{ ((x,)*1000000)|string|length }}"),
    ("percent-many-refs", GIANT_STR + '{{ "%s"*1000 % ((x,)*1000) }}'),
    ("percent-star-width", '{{ "%*d" % (10**9, 1) }}'),
    ("percent-named-width", '{{ "%(a)999999999s" % {"a": 1} }}'),
    ("macro-doubling", "{% macro f(x, n) %}{% if n %}{{ f([x, x], n - 1) }}{% else %}{{ x|string|length }}{% endif %}{% endmacro %}{{ f('ab', 64) }}"),
    ("macro-binary-recursion", "{% macro f(n) %}{% if n %}{{ f(n-1) }}{{ f(n-1) }}{% endif %}{% endmacro %}{{ f(60) }}"),
    ("recursive-loop", "{% for i in range(100000) recursive %}{{ loop(range(100000)) if loop.depth < 4 }}{% endfor %}"),
    ("list-extend-doubling", "{% set l = [1] %}{% for i in range(64) %}{{ l.extend(l) or '' }}{% endfor %}"),
    ("dict-update", "{% set d = {} %}{{ d.update(a=1) }}"),
    ("int-squaring", "".join(f"{{% set n{i + 1} = n{i} * n{i} %}}" for i in range(40)).replace("n0 * n0", "2**500 * 2**500")),
    ("concat-doubling", GIANT_STR + "{{ x ~ x }}"),
    ("escape-amplifies", "{% set x = '&' * 2000000 %}{{ x|e }}"),
    ("codex-join-many", "{{ codex_join(*(['x'*1000000]*3)) }}"),
    ("text-placeholders", "{{ text('many.md', v='y'*1000) }}"),
    ("in-lazy-map", "{{ 'zz' in (range(100000)|map('center', 1000000)) }}"),
    ("random-filter", "{{ range(10)|random }}"),
    ("format-filter", "{{ '%s'|format(1) }}"),
    ("many-tags", "{{ x }}" * 60000),
    ("compile-time-folding", "{{ 'x'|center(2000000)|length }}" * 3000),  # Jinja's optimizer would run these at compile time
    ("loop-big-values", "{% for i in range(100000) %}{{ ('x' * 2000000)|length }}{% endfor %}"),
    ("deep-parentheses", "{{ " + "(" * 5000 + "1" + ")" * 5000 + " }}"),
    # escapes
    ("subclasses", "{{ ().__class__.__base__.__subclasses__() }}"),
    ("namespace-globals", "{{ namespace.__init__.__globals__ }}"),
    ("text-globals", "{{ text.__func__.__globals__ }}"),
    ("text-self", "{{ text.__self__.fs }}"),
    ("codex-join-globals", "{{ codex_join.__globals__ }}"),
    ("macro-func", "{% macro m() %}{% endmacro %}{{ m._func.__globals__ }}"),
    ("loop-iterator", "{% for i in [1] %}{{ loop._iterator }}{% endfor %}"),
    ("attr-filter", "{{ 'x'|attr('__class__') }}"),
    ("format-attr-walk", "{{ '{0.__class__}'.format(1) }}"),
    ("config", "{{ config }}"),
    ("environ", "{{ environ }}"),
    ("os", "{{ os.environ }}"),
    ("import", "{% import 'os' as os %}"),
    ("include-absolute", "{% include '/etc/passwd' %}"),
    ("include-outside-symlink", "{% include 'leak.md' %}"),
    ("extends-dotdot", "{% extends '../etc/passwd' %}"),
    ("hidden-root-file", "{{ text('@vendor/.git/config') }}"),
]


@pytest.fixture(scope="module")
def renderer(tmp_path_factory: pytest.TempPathFactory) -> Renderer:
    root = tmp_path_factory.mktemp("sandbox")
    spec = root / "spec"
    spec.mkdir()
    (spec / "self.md").write_text("x{% include 'self.md' %}")
    (spec / "a.md").write_text("{% include 'b.md' %}")
    (spec / "b.md").write_text("{% include 'a.md' %}")
    (spec / "many.md").write_text("{{ v }}" * 100000)
    (root / "secret.txt").write_text("secret\n")
    os.symlink(root / "secret.txt", spec / "leak.md")
    vendor = root / "vendor"
    (vendor / ".git").mkdir(parents=True)
    (vendor / ".git" / "config").write_text("[remote] url = https://token@example.com\n")
    return Renderer(SpecFS(spec, {"vendor": vendor}))


class _Hang(Exception):
    pass


@pytest.fixture
def hang_guard() -> Iterator[None]:
    """Turn a hang into a failure (main thread only; asserts nothing about speed)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGALRM"):
        yield
        return

    def alarm(*_: Any) -> None:
        raise _Hang(f"still running after {HANG_GUARD_SECONDS} s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(HANG_GUARD_SECONDS)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _status_kb(field: str) -> int:
    match = re.search(rf"^{field}:\s+(\d+) kB", Path("/proc/self/status").read_text(), re.M)
    assert match, field
    return int(match.group(1)) * 1024


def _can_reset_peak_rss() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return _status_kb("VmHWM") <= _status_kb("VmRSS") + 4 * 1024 * 1024
    except (OSError, AssertionError):
        return False


@contextlib.contextmanager
def peak_memory_growth() -> Iterator[Callable[[], int]]:
    """Yields a function returning the peak memory growth (bytes) inside the block."""
    result: list[int] = []
    if _can_reset_peak_rss():
        Path("/proc/self/clear_refs").write_text("5")  # VmHWM := current RSS
        base = _status_kb("VmRSS")
        try:
            yield lambda: result[0]
        finally:
            result.append(_status_kb("VmHWM") - base)
    else:
        tracemalloc.start()
        try:
            yield lambda: result[0]
        finally:
            result.append(tracemalloc.get_traced_memory()[1])
            tracemalloc.stop()


def test_peak_memory_growth_sees_a_short_spike() -> None:
    """The measurement itself must be able to fail."""
    with peak_memory_growth() as growth:
        spike = bytearray(300 * 1024 * 1024)
        del spike
    assert growth() > MEMORY_LIMIT


@pytest.mark.parametrize("source", [a[1] for a in ATTACKS], ids=[a[0] for a in ATTACKS])
def test_attack_stops_with_a_one_line_error_in_bounded_memory(renderer: Renderer, source: str, hang_guard: None) -> None:
    with peak_memory_growth() as growth:
        with pytest.raises(SpecError) as info:
            renderer.render_string(source, {"x": 1}, "fragments/attack.md")
    peak = growth()
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("fragments/attack.md") or message.startswith(("self.md", "a.md", "b.md", "many.md"))
    assert peak < MEMORY_LIMIT, f"peak {peak / 1e6:.0f} MB"


def test_attack_errors_name_the_template_line(renderer: Renderer) -> None:
    with pytest.raises(SpecError, match=r"^fragments/x\.md:3: repetition would build"):
        renderer.render_string("a\nb\n{{ 'x' * 10**10 }}", {}, "fragments/x.md")
    with pytest.raises(SpecError, match=r"^fragments/x\.md:2: absolute path '/etc/passwd' is not allowed"):
        renderer.render_string("a\n{{ text('/etc/passwd') }}", {}, "fragments/x.md")
    with pytest.raises(SpecError, match=r"^fragments/x\.md:2: undefined template variable"):
        renderer.render_string("a\n{{ nope }}", {}, "fragments/x.md")


def test_the_environment_offers_only_our_helpers(renderer: Renderer) -> None:
    assert set(renderer.env.globals) == {"range", "text", "codex_join", "__ps_iter", "__ps_check", "__ps_call", "__ps_text"}
    assert renderer.env.undefined is __import__("jinja2").StrictUndefined
    assert isinstance(renderer.env, __import__("jinja2").sandbox.ImmutableSandboxedEnvironment)


def test_scenario_values_cannot_be_mutated(renderer: Renderer) -> None:
    items = ["a"]
    data = {"k": "v"}
    for source in ("{{ items.append('b') }}", "{{ items.extend(items) }}", "{{ items.pop() }}", "{{ data.update(k='w') }}", "{{ data.clear() }}"):
        with pytest.raises(SpecError, match="sandbox forbids"):
            renderer.render_string(source, {"items": items, "data": data}, "t.md")
    assert items == ["a"] and data == {"k": "v"}


# ---------------------------------------------------------------------------
# The guards must not break what real templates do.

LEGIT = [
    ("{% macro box(t) %}[{{ caller() }}:{{ t }}]{% endmacro %}{% call box('t') %}body{% endcall %}", "[body:t]"),
    ("{% filter upper %}shout {{ 'it' }}{% endfilter %}", "SHOUT IT"),
    ("{{ items|join(', ', attribute='name') }}", "a, b"),
    ("{{ items|map(attribute='name')|join('+') }}", "a+b"),
    ("{{ [1, 2, 3]|sum }}|{{ [[1], [2]]|sum(start=[]) }}", "6|[1, 2]"),
    ("{% for a, b in [(1, 2), (3, 4)] %}{{ a + b }};{% endfor %}", "3;7;"),
    ("{% set a, b = 1, 2 %}{{ a }}{{ b }}", "12"),
    ("{% for row in range(7)|batch(3, 0) %}{{ row|sum }},{% endfor %}", "3,12,6,"),
    ("{% for col in range(5)|slice(2) %}{{ col|list }}{% endfor %}", "[0, 1, 2][3, 4]"),
    ("{{ range(10)|select('odd')|list }}", "[1, 3, 5, 7, 9]"),
    ("{{ {'b': 1, 'a': 2}|dictsort|first }}", "('a', 2)"),
    ("{{ {'a': 1}|items|list }}", "[('a', 1)]"),
    ("{% for x in [[1, [2]], [3]] recursive %}{% if x is iterable %}{{ loop(x) }}{% else %}{{ x }}{% endif %}{% endfor %}", "123"),
    ("{% for x in ['a', 'b', 'c'] %}{{ loop.cycle('-', '+') }}{{ x }}{% endfor %}", "-a+b-c"),
    ("{{ 'a b c'.split()|reverse|join }}|{{ 'abc'|reverse }}", "cba|cba"),
    ("{{ '%s-%05.1f' % ('x', 2.5) }}", "x-002.5"),
    ("{{ 2 ** 10 }} {{ 3 * 4 }} {{ 'ab' * 3 }} {{ [0] * 2 }}", "1024 12 ababab [0, 0]"),
    ("{{ 'Hello'|center(9) }}|{{ 'a\nb'|indent(2) }}|{{ 'a-b'|replace('-', '+') }}", "  Hello  |a\n  b|a+b"),
    ("{{ codex_join('a', '', 'b\n') }}", "\na\nb\n"),
    ("{{ 'aaa bbb ccc'|wordwrap(7) }}", "aaa bbb\nccc"),
    ("{% set x %}block{% endset %}{{ x ~ '!' }}", "block!"),
    ("{{ (items|first).name }} {{ items|length }} {{ items[1]['name'] }}", "a 2 b"),
]


@pytest.mark.parametrize("source,expected", LEGIT, ids=[str(i) for i in range(len(LEGIT))])
def test_legitimate_templates_still_render(renderer: Renderer, source: str, expected: str) -> None:
    items = [{"name": "a"}, {"name": "b"}]
    assert renderer.render_string(source, {"items": items}, "legit.md") == expected


def test_budget_is_per_thread_and_per_render(renderer: Renderer) -> None:
    """MkDocs serve renders off the main thread; each render starts a fresh budget."""
    source = "{% for i in range(90000) %}{% endfor %}ok"
    results: list[str] = []
    thread = threading.Thread(target=lambda: results.append(renderer.render_string(source, {}, "t.md")))
    thread.start()
    thread.join()
    assert results == ["ok"]
    for _ in range(20):  # 20 x 90,000 turns: over the budget if it leaked between renders
        assert renderer.render_string(source, {}, "t.md") == "ok"


def test_tighter_limits_apply(tmp_path: Path) -> None:
    fs = SpecFS(tmp_path)
    small = Renderer(fs, Limits(max_output_chars=100, max_iterations=50, max_items=10))
    with pytest.raises(SpecError, match="100 limit"):
        small.render_string("{{ 'x' * 101 }}", {}, "t.md")
    with pytest.raises(SpecError, match="more than 50 steps"):
        small.render_string("{% for i in range(10) %}{% for j in range(10) %}{% endfor %}{% endfor %}", {}, "t.md")
    with pytest.raises(SpecError, match="over the 10 item limit"):
        small.render_string("{{ range(11)|list }}", {}, "t.md")


# ---------------------------------------------------------------------------
# The file boundary: SpecFS and the Jinja loader


@pytest.fixture
def fs_tree(tmp_path: Path) -> SpecFS:
    spec = tmp_path / "spec"
    (spec / "sub").mkdir(parents=True)
    (spec / "sub" / "inner.md").write_text("inner {{ 1 }}")
    (spec / "ok.md").write_text("{% include 'sub/inner.md' %}")
    (tmp_path / "outside.md").write_text("outside")
    (tmp_path / "outdir").mkdir()
    (tmp_path / "outdir" / "f.md").write_text("outside too")
    os.symlink(tmp_path / "outside.md", spec / "file-link.md")
    os.symlink(tmp_path / "outdir", spec / "dir-link")
    os.symlink(spec / "sub" / "inner.md", spec / "inside-link.md")
    return SpecFS(spec)


@pytest.mark.parametrize(
    "ref,message",
    [
        ("/etc/passwd", "absolute path"),
        ("C:/Windows/win.ini", "absolute path"),
        ("..\\outside.md", "leaves the spec folder"),
        ("sub/../../outside.md", "leaves the spec folder"),
        ("file-link.md", "symlink pointing outside"),
        ("dir-link/f.md", "symlink pointing outside"),
        ("", "empty file reference"),
        ("a\x00b", "NUL"),
        ("@nowhere/x.md", "unknown root"),
    ],
)
def test_specfs_refuses_references_leaving_the_spec(fs_tree: SpecFS, ref: str, message: str) -> None:
    with pytest.raises(SpecError, match=re.escape(message)):
        fs_tree.read_text(ref)
    renderer = Renderer(fs_tree)
    with pytest.raises(SpecError, match=re.escape(message)):
        renderer.render_string("{% include " + repr(ref) + " %}", {}, "t.md")
    with pytest.raises(SpecError, match=re.escape(message)):
        renderer.render_string("{{ text(" + repr(ref) + ") }}", {}, "t.md")


def test_includes_inside_the_spec_work(fs_tree: SpecFS) -> None:
    renderer = Renderer(fs_tree)
    assert renderer.render_file("ok.md", {}) == "inner 1"
    assert renderer.render_string("{% include 'inside-link.md' %}", {}, "t.md") == "inner 1"
    assert fs_tree.read_text("inside-link.md")[0] == "inner {{ 1 }}"


def test_read_text_file_is_strict(tmp_path: Path) -> None:
    cases = {
        "bom.md": (b"\xef\xbb\xbfx", "byte-order mark"),
        "crlf.md": (b"a\r\nb", "CR (Windows)"),
        "nul.md": (b"a\x00b", "binary"),
        "latin1.md": (b"caf\xe9", "not valid UTF-8"),
    }
    for name, (data, message) in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(SpecError, match=re.escape(message)):
            read_text_file(tmp_path / name)
    os.mkfifo(tmp_path / "pipe.md")
    with pytest.raises(SpecError, match="not a regular file"):
        read_text_file(tmp_path / "pipe.md")  # must not block waiting for a writer


def test_codex_placeholders_cannot_amplify(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="placeholders expand the text"):
        codex.fill_placeholders("{{ v }}" * 10000, {"v": "y" * 10000}, "x.md")
    assert codex.fill_placeholders("a {{ v }}", {"v": "b"}, "x.md") == "a b"


# ---------------------------------------------------------------------------
# YAML: the safe loader, always


@pytest.mark.parametrize(
    "payload",
    [
        "x: !!python/object/apply:os.system ['touch {pwned}']",
        "x: !!python/object/new:os.system ['touch {pwned}']",
        "x: !!python/name:os.system",
        "x: !!python/module:os",
        "!!python/object:promptspec.spec.Spec {}",
    ],
)
def test_yaml_python_tags_are_refused(tmp_path: Path, payload: str) -> None:
    pwned = tmp_path / "pwned"
    path = tmp_path / "spec.yaml"
    path.write_text(payload.replace("{pwned}", str(pwned)))
    with pytest.raises(SpecError, match=r"^spec\.yaml:1:\d+: YAML tag '!!python/[a-z]+.*' is not allowed"):
        load_yaml(path, "spec.yaml")
    assert not pwned.exists()


def test_no_unsafe_yaml_loading_anywhere_in_the_package() -> None:
    package = Path(promptspec.__file__).parent
    unsafe = re.compile(r"yaml\.(unsafe_load|full_load|load_all)\(|yaml\.load\(|Loader=yaml\.(Unsafe|Full)?Loader\b|yaml\.(Full|Unsafe)?Loader\)")
    offenders = [
        f"{path.name}:{i}"
        for path in sorted(package.rglob("*.py"))
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if unsafe.search(line)
    ]
    assert offenders == []


def test_spec_limits_cannot_switch_the_budgets_off(tmp_path: Path) -> None:
    from conftest import write_spec

    for key, value in [("max_output_chars", 10**12), ("max_iterations", 10**12), ("max_seconds", 10**6), ("max_items", 10**9), ("max_items", 0)]:
        spec = write_spec(tmp_path / f"{key}-{value}", spec={"limits": {key: value}})
        with pytest.raises(SpecError, match=rf"^spec\.yaml:\d+: limits\.{key} must be above 0 and at most"):
            load_spec(spec)
    spec = write_spec(tmp_path / "tight", spec={"limits": {"max_output_chars": 1000, "max_seconds": 1}})
    assert load_spec(spec).limits.max_output_chars == 1000


def test_yaml_from_a_hostile_spec_is_data(tmp_path: Path) -> None:
    """Tags a safe loader does know (binary, set, timestamps) load as plain data."""
    path = tmp_path / "x.yaml"
    path.write_text("a: !!binary aGk=\nb: !!set {x}\nc: 2026-01-02\n")
    data = load_yaml(path, "x.yaml")
    assert data["a"] == b"hi" and data["b"] == {"x"} and str(data["c"]) == "2026-01-02"


@pytest.mark.parametrize("secret", [".ssh", ".aws", ".git"])
def test_a_root_inside_a_credentials_folder_is_refused(tmp_path: Path, secret: str) -> None:
    """A pull request must not be able to publish ~/.ssh/id_rsa as prompt text."""
    keys = tmp_path / "home" / secret
    keys.mkdir(parents=True)
    (keys / "id_rsa").write_text("PRIVATE KEY\n", encoding="utf-8")
    spec = tmp_path / "spec"
    shutil.copytree(Path(__file__).parents[1] / "corpus" / "_base", spec)
    text = (spec / "spec.yaml").read_text(encoding="utf-8")
    (spec / "spec.yaml").write_text(text + f"roots:\n  keys: {keys.as_posix()}\n", encoding="utf-8")
    with pytest.raises(SpecError, match=r"root 'keys' points at .*, which may not be read by a spec"):
        load_spec(spec)
    # The same folder under an ordinary name is a valid root.
    plain = tmp_path / "home" / "project"
    keys.rename(plain)
    (spec / "spec.yaml").write_text(text + f"roots:\n  keys: {plain.as_posix()}\n", encoding="utf-8")
    assert load_spec(spec).fs.roots["keys"] == plain.resolve()


def test_the_time_budget_counts_the_renders_cpu_time(tmp_path: Path) -> None:
    """Within its step budget a template can still spend too long; the budget
    is the render's own CPU time, which a loaded machine does not inflate."""
    from conftest import write_spec
    from promptspec import pipeline

    spec = write_spec(tmp_path / "slow", spec={"limits": {"max_seconds": 0.02}},
                      fragments={"greeting": {"description": "A loop.", "role": "developer", "slot": "permissions", "body": "greeting.md"}},
                      files={"fragments/greeting.md": "{% for a in range(900) %}{% for b in range(900) %}{% endfor %}{% endfor %}hello\n"})
    with pytest.raises(SpecError, match=r"template took more than 0\.02 s of CPU time"):
        pipeline.run(spec)
    (spec / "fragments" / "greeting.md").write_text("{% for a in range(1000) %}{% endfor %}hello\n", encoding="utf-8")
    assert pipeline.run(spec).requests
