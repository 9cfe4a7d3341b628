"""The model catalog (`models.json`, Codex's format) -> `Model` records.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

from ...errors import SpecError
from ..model import MODEL_FIELDS, Model
from .reader import Reader, check_name, check_unique_slugs, typename
from .sources import LineFinder

MODEL_KEYS = {*MODEL_FIELDS, "base_instructions", "model_messages"}
"""Catalog keys promptspec reads itself; every other key is kept in `Model.extra`."""


def parse_models(data: Any, path: Path, shown: str) -> tuple[Model, ...]:
    if isinstance(data, list):
        raise SpecError("models.json must be {\"models\": [...]}, found a bare list", shown, line=1, hint="wrap it as {\"models\": [...]}")
    top = Reader(data, shown, "models.json")
    items = top.get("models", list, required=True)
    if not items:
        raise SpecError("models.json lists no models", shown, hint="add at least one model")
    models = []
    lines = LineFinder(path)
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise SpecError(f"model #{index + 1} must be an object, found {typename(item)}", shown)
        slug = item.get("slug")
        line = lines.line_of(f'"{slug}"') if isinstance(slug, str) else None
        where_model = f"model #{index + 1}" + (f" ({slug})" if isinstance(slug, str) else "")
        if not isinstance(slug, str) or not slug:
            raise SpecError(f"{where_model} has no 'slug'", shown, line=line, hint="give every model a slug")
        check_name(slug, shown, line, "model")

        def num(key: str, default: int | None = None) -> int | None:
            value = item.get(key)
            if value is None:
                return default
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise SpecError(f"{where_model}: '{key}' must be a non-negative whole number, found {value!r}", shown, line=line)
            return value

        def txt(key: str, obj: Mapping[str, Any] = item) -> str | None:
            value = obj.get(key)
            if value is not None and not isinstance(value, str):
                raise SpecError(f"{where_model}: '{key}' must be a string, found {typename(value)}", shown, line=line)
            return value

        messages = item.get("model_messages")
        template = None
        variables: dict[str, str | None] = {}
        if messages is not None:
            if not isinstance(messages, dict):
                raise SpecError(f"{where_model}: 'model_messages' must be an object or null", shown, line=line)
            template = txt("instructions_template", messages)
            raw_vars = messages.get("instructions_variables") or {}
            if not isinstance(raw_vars, dict):
                raise SpecError(f"{where_model}: 'instructions_variables' must be an object", shown, line=line)
            for key, value in raw_vars.items():
                if value is not None and not isinstance(value, str):
                    raise SpecError(f"{where_model}: instructions variable '{key}' must be a string or null", shown, line=line)
                variables[key] = value
        base = txt("base_instructions")
        if base is None and template is None:
            raise SpecError(
                f"model {slug!r} has no instructions",
                shown,
                line=line,
                hint="give it 'base_instructions' or 'model_messages.instructions_template'",
            )
        percent = num("effective_context_window_percent", 95)
        if percent is not None and not 1 <= percent <= 100:
            raise SpecError(f"{where_model}: 'effective_context_window_percent' must be 1..100, found {percent}", shown, line=line)
        models.append(
            Model(
                slug=slug,
                display_name=txt("display_name") or slug,
                description=txt("description") or "",
                context_window=num("context_window"),
                max_context_window=num("max_context_window"),
                effective_context_window_percent=percent or 95,
                auto_compact_token_limit=num("auto_compact_token_limit"),
                base_instructions=base,
                instructions_template=template,
                instructions_variables=MappingProxyType(variables),
                extra=MappingProxyType({k: v for k, v in item.items() if k not in MODEL_KEYS}),
                line=line,
                messages=MappingProxyType(dict(messages or {})),
            )
        )
    check_unique_slugs(((m.slug, m.line) for m in models), shown, "model slug")
    return tuple(models)


# ---------------------------------------------------------------------------
# spec.yaml


