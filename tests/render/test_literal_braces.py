"""A text that holds template syntax itself (`{{ name }}`, `{%`, `{#`) can be
stored: render/codex.py escape_braces writes it so that both engines -- plain
placeholder filling and the Jinja sandbox -- give the same characters back,
and placeholders added after escaping are the only ones filled."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from promptspec.render.codex import escape_braces, fill_placeholders
from promptspec.render.renderer import Renderer
from promptspec.spec.files import SpecFS

TEXTS = st.lists(st.sampled_from(list('{}%# "ab\n') + ["{{ name }}", '{{ "{{" }}', "{% if x %}"]), max_size=30).map("".join)


@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_plain_filling_gives_the_text_back(text):
    escaped = escape_braces(text)
    assert fill_placeholders(escaped + "{{ cwd }}", {"cwd": "/p"}, "t.md") == text + "/p"


@settings(max_examples=150, deadline=None)
@given(TEXTS)
def test_jinja_gives_the_text_back(tmp_path_factory, text):
    renderer = Renderer(SpecFS(tmp_path_factory.mktemp("spec"), {}))
    assert renderer.render_string(escape_braces(text), {}, "t.yaml") == text


def test_a_text_without_openers_is_unchanged():
    assert escape_braces("a } b { c }} d") == "a } b { c }} d"
    assert escape_braces("{{ x }}") == '{{ "{{" }} x }}'
