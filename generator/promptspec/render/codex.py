"""Codex-style text: `{{ name }}` placeholders filled by plain replacement, and
Codex's way of joining permission blocks.

Text taken verbatim from Codex has no other markup; running it through Jinja
would misread any stray ``{%``.  A text that must say ``{{`` itself (a
captured prompt that shows template syntax) writes it as Jinja does,
``{{ "{{" }}`` (likewise ``{{ "{%" }}``, ``{{ "{#" }}``): `escape_braces`
writes that, and both engines turn it back into the two characters.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Mapping

from ..errors import SpecError
from ..spec.limits import Limits
from .sandbox import projected

CODEX_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_OPENERS = re.compile(r"\{([{%#])")
_FILLED = re.compile(r'\{\{\s*"(?P<literal>\{[{%#])"\s*\}\}|' + CODEX_PLACEHOLDER.pattern)


def escape_braces(text: str) -> str:
    """`text` as a template that gives it back unchanged, under either engine:
    every `{{`, `{%` and `{#` written as the Jinja literal `{{ "{{" }}`...
    After it, every `{{` left in the text opens such a literal, so placeholders
    put in afterwards are the only ones there are."""
    return _OPENERS.sub(lambda m: '{{ "{' + m.group(1) + '" }}', text)

def codex_join(*parts: Any) -> str:
    """Join text blocks the way Codex composes its permissions section: before
    each non-empty block add a newline unless the text so far already ends with
    one (so the result starts with one), and end with a newline."""
    out = ""
    for part in parts:
        part = "" if part is None else str(part)
        if not part:
            continue
        projected(len(out) + len(part) + 2, "codex_join")
        if not out.endswith("\n"):
            out += "\n"
        out += part
    if out and not out.endswith("\n"):
        out += "\n"
    return out


def fill_placeholders(text: str, values: Mapping[str, Any], where: str | Path, limit: int | None = None) -> str:
    """Fill `{{ name }}` placeholders; refuses to grow the text past `limit`
    characters (a file of 100,000 placeholders times a long value would)."""
    cap = max(Limits.max_output_chars if limit is None else limit, len(text))
    size = len(text)

    def sub(m: re.Match[str]) -> str:
        nonlocal size
        if m.group("literal"):
            return m.group("literal")
        name = m.group(2)
        if name not in values:
            line = text[: m.start()].count("\n") + 1
            raise SpecError(
                f"placeholder '{{{{ {name} }}}}' has no value",
                where,
                line=line,
                hint=f"pass {name}=... or define '{name}' in the scenario",
            )
        value = str(values[name])
        size += len(value) - (m.end() - m.start())
        if size > cap:
            raise SpecError(
                f"placeholders expand the text to more than {cap} characters",
                where,
                line=text[: m.start()].count("\n") + 1,
                hint="prompt texts must stay small; check the placeholder values",
            )
        return value

    return _FILLED.sub(sub, text)


def codex_placeholder_names(source: str) -> set[str]:
    """The names a Codex-style text fills: its dependencies for caching."""
    return set(CODEX_PLACEHOLDER.findall(source))
