"""The theme's templates compiled once per process
(site/serve/compiled_templates.py): reused by the next build's environment, and
never where the template or the settings that shape its code changed."""

from __future__ import annotations

from pathlib import Path

import jinja2

from promptspec.site.serve.compiled_templates import KeptTemplates


class _Counting(jinja2.Environment):
    """A real Jinja environment that counts what it compiles."""

    compiled = 0

    def _compile(self, source, filename):
        type(self).compiled += 1
        return super()._compile(source, filename)


def _env(folder: Path, templates: KeptTemplates, **options) -> jinja2.Environment:
    env = _Counting(loader=jinja2.FileSystemLoader(folder), **options)
    templates.attach(env)  # as the plugin's on_env does for each build's new environment
    return env


def test_a_new_build_reuses_the_compiled_templates(tmp_path: Path) -> None:
    (tmp_path / "main.html").write_text("{% include 'part.html' %}|{{ page }}", encoding="utf-8")
    (tmp_path / "part.html").write_text("part {{ page | upper }}", encoding="utf-8")
    templates = KeptTemplates()
    _Counting.compiled = 0
    first = _env(tmp_path, templates).get_template("main.html").render(page="a")
    assert first == "part A|a" and _Counting.compiled == 2
    again = _env(tmp_path, templates).get_template("main.html").render(page="b")
    assert again == "part B|b" and _Counting.compiled == 2  # nothing compiled for the second build

    (tmp_path / "part.html").write_text("edited {{ page }}", encoding="utf-8")
    edited = _env(tmp_path, templates).get_template("main.html").render(page="c")
    assert edited == "edited c|c" and _Counting.compiled == 3  # only the edited template


def test_settings_that_shape_the_code_keep_their_own_templates(tmp_path: Path) -> None:
    (tmp_path / "t.html").write_text("{% if x %}\nyes{% endif %}\n", encoding="utf-8")
    templates = KeptTemplates()
    plain = _env(tmp_path, templates).get_template("t.html").render(x=True)
    trimmed = _env(tmp_path, templates, trim_blocks=True).get_template("t.html").render(x=True)
    assert (plain, trimmed) == ("\nyes", "yes")
    escaped = _env(tmp_path, templates, autoescape=True)
    (tmp_path / "e.html").write_text("{{ v }}", encoding="utf-8")
    assert escaped.get_template("e.html").render(v="<b>") == "&lt;b&gt;"
    assert _env(tmp_path, templates).get_template("e.html").render(v="<b>") == "<b>"


def test_a_second_one_off_build_in_a_process_compiles_no_theme_template(tmp_path: Path, make_spec, monkeypatch) -> None:
    """Two `mkdocs build` runs in one process (a suite's, a benchmark's): the
    second compiles none of the templates its pages are made with, and makes
    the same pages.  (Material's search plugin translates through an
    environment of its own, made before any plugin sees one: not counted.)"""
    from _helpers import build_ok, mkdocs_config

    from promptspec.site.serve import compiled_templates

    monkeypatch.setattr(compiled_templates, "PROCESS", KeptTemplates())  # as in a new process: earlier builds here filled it
    spec = make_spec()
    compiled: list[tuple[str, bool]] = []
    real = jinja2.Environment._compile

    def counting(env, source, filename):
        compiled.append((Path(filename or "").name, env.bytecode_cache is not None))
        return real(env, source, filename)

    monkeypatch.setattr(jinja2.Environment, "_compile", counting)
    first = build_ok(mkdocs_config(tmp_path / "first", spec))
    assert {("main.html", True), ("base.html", True)} <= set(compiled)  # the pages' environment compiled the theme
    compiled.clear()
    second = build_ok(mkdocs_config(tmp_path / "second", spec))
    assert [name for name, attached in compiled if attached] == []
    page = "prompts/index.html"
    assert (first / page).read_bytes() == (second / page).read_bytes()
