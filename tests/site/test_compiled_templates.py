"""The theme's templates compiled once per serve session
(site/compiled_templates.py): reused by the next build's environment, and
never where the template or the settings that shape its code changed."""

from __future__ import annotations

from pathlib import Path

import jinja2

from promptspec.site.serve.compiled_templates import ServeTemplates


class _Counting(jinja2.Environment):
    """A real Jinja environment that counts what it compiles."""

    compiled = 0

    def _compile(self, source, filename):
        type(self).compiled += 1
        return super()._compile(source, filename)


def _env(folder: Path, templates: ServeTemplates, **options) -> jinja2.Environment:
    env = _Counting(loader=jinja2.FileSystemLoader(folder), **options)
    templates.attach(env)  # as the plugin's on_env does for each build's new environment
    return env


def test_a_new_build_reuses_the_compiled_templates(tmp_path: Path) -> None:
    (tmp_path / "main.html").write_text("{% include 'part.html' %}|{{ page }}", encoding="utf-8")
    (tmp_path / "part.html").write_text("part {{ page | upper }}", encoding="utf-8")
    templates = ServeTemplates()
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
    templates = ServeTemplates()
    plain = _env(tmp_path, templates).get_template("t.html").render(x=True)
    trimmed = _env(tmp_path, templates, trim_blocks=True).get_template("t.html").render(x=True)
    assert (plain, trimmed) == ("\nyes", "yes")
    escaped = _env(tmp_path, templates, autoescape=True)
    (tmp_path / "e.html").write_text("{{ v }}", encoding="utf-8")
    assert escaped.get_template("e.html").render(v="<b>") == "&lt;b&gt;"
    assert _env(tmp_path, templates).get_template("e.html").render(v="<b>") == "<b>"
