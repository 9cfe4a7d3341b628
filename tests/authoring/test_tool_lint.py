"""Lint rules for tools (PS501-PS503): each triggers on a real tool file and
stays quiet on a well-described one."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from promptspec import pipeline
from promptspec.authoring import lint
from promptspec.measure.counter import TokenCounter

DESCRIBED = {
    "type": "function",
    "name": "shell",
    "description": "Runs one command.",
    "parameters": {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The command line."},
            "env": {"type": "array", "description": "Extra variables.", "items": {"type": "object", "properties": {"name": {"type": "string", "description": "Its name."}}}},
        },
    },
}


def spec_with(tmp_path: Path, tools: dict[str, dict]) -> Path:
    root = tmp_path / "spec"
    (root / "fragments").mkdir(parents=True)
    (root / "tools").mkdir()
    (root / "spec.yaml").write_text("name: t\npersonalities: {default: {}}\nmodes: {default: {}}\n")
    (root / "models.json").write_text(json.dumps({"models": [{"slug": "m1", "context_window": 1000, "base_instructions": "Base.\n"}]}))
    (root / "fragments" / "note.yaml").write_text("role: developer\nslot: permissions\ntext: \"Note.\\n\"\n")
    for name, data in tools.items():
        (root / "tools" / f"{name}.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return root


def found(root: Path, tmp_path: Path) -> list[lint.Finding]:
    return [f for f in lint.lint(pipeline.run(root, counter=TokenCounter(tmp_path / "cache"))) if f.rule.startswith("PS5")]


def test_described_tools_are_clean(tmp_path: Path) -> None:
    assert found(spec_with(tmp_path, {"shell": {"definition": DESCRIBED}, "search": {"definition": {"type": "web_search"}}}), tmp_path) == []


def test_ps501_tool_and_namespace_member_without_description(tmp_path: Path) -> None:
    bare = {k: v for k, v in DESCRIBED.items() if k != "description"}
    ns = {"type": "namespace", "name": "jobs", "description": "Jobs.", "tools": [dict(bare, name="start")]}
    hits = found(spec_with(tmp_path, {"shell": {"definition": bare}, "jobs": {"definition": ns}}), tmp_path)
    assert sorted((f.rule, f.path) for f in hits) == [("PS501", "tools/jobs.yaml"), ("PS501", "tools/shell.yaml")]
    assert "member 'start'" in next(f for f in hits if f.path == "tools/jobs.yaml").message
    assert all(f.severity == "warning" for f in hits)


def test_ps502_parameters_without_description(tmp_path: Path) -> None:
    schema = json.loads(json.dumps(DESCRIBED))
    del schema["parameters"]["properties"]["command"]["description"]
    del schema["parameters"]["properties"]["env"]["items"]["properties"]["name"]["description"]
    hits = found(spec_with(tmp_path, {"shell": {"definition": schema}}), tmp_path)
    assert [f.rule for f in hits] == ["PS502"]
    assert "command, env.[].name" in hits[0].message


def test_ps503_tool_never_sent(tmp_path: Path) -> None:
    hits = found(spec_with(tmp_path, {"shell": {"definition": DESCRIBED, "when": {"model": "nope-*"}}}), tmp_path)
    assert [(f.rule, f.path) for f in hits] == [("PS503", "tools/shell.yaml")]
