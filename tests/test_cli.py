"""The command line: list, render, errors, --help, and golden layouts.

Golden files under tests/golden/ are written by hand-running
`python tests/golden/regenerate.py` and reviewed before committing; a missing
golden file fails the test, it is never created by it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from promptspec.assemble.builder import Assembler
from promptspec.assemble.matrix import find_variant, matrix
from promptspec.cli import build_parser, default_spec, main
from promptspec.spec.readers.load import load_spec
from codex_release import PINNED_BODY_KEYS

GOLDEN = Path(__file__).resolve().parent / "golden"

# (model, personality, mode, sandbox_mode) of the embedded spec; chosen to cover
# personality_spec, a separate developer message, the
# realtime and extension fragments and the user-message extension.
GOLDEN_VARIANTS = (
    ("harbor-5", "default", "default", "workspace-write"),
    ("harbor-5-mini", "friendly", "plan", "read-only"),
    ("harbor-4-legacy", "pragmatic", "execute", "workspace-write"),
    ("harbor-5", "none", "pair_programming", "read-only"),
)


def golden_argv(model: str, personality: str, mode: str, sandbox: str) -> list[str]:
    return [
        "render", "--spec", str(default_spec()), "--model", model, "--personality", personality,
        "--mode", mode, "--axis", f"sandbox_mode={sandbox}", "--format", "layout",
    ]


def golden_path(model: str, personality: str, mode: str, sandbox: str) -> Path:
    return GOLDEN / f"{model}--{personality}--{mode}--{sandbox}.layout"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def embedded():
    return load_spec(default_spec())


# ---------------------------------------------------------------------------
# list


def test_list_json_has_every_variant(embedded, capsys):
    code, out, err = run(capsys, "list", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["axes"] == [name for name, _ in embedded.axes]
    assert [row["id"] for row in data["variants"]] == [v.id for v in matrix(embedded)]
    for row in data["variants"]:
        assert isinstance(row["tokens"], int) and row["tokens"] > 0
        assert row["codex_estimate"] > 0
        assert row["model"] == row["id"].split("/")[0]


def test_list_table_has_a_row_per_variant(embedded, capsys):
    code, out, err = run(capsys, "list")
    assert code == 0, err
    lines = out.rstrip("\n").split("\n")
    variants = matrix(embedded)
    assert lines[0].split() == [*(name for name, _ in embedded.axes), "tokens", "%", "usable"]
    assert len(lines) == 1 + len(variants) + 1
    assert lines[-1].startswith(f"{len(variants)} variants;")
    for line, v in zip(lines[1:-1], variants):
        cells = line.split()
        assert cells[: len(v.values)] == [value for _, value in v.values]
        assert cells[-1].endswith("%") and int(cells[-2]) > 0


# ---------------------------------------------------------------------------
# render


def test_render_text_shows_every_section_exactly(embedded, capsys):
    variant = find_variant(embedded, "harbor-5-mini", "friendly", "plan")
    request = Assembler(embedded).assemble(variant)
    code, out, err = run(capsys, "render", "--model", "harbor-5-mini", "--personality", "friendly", "--mode", "plan")
    assert code == 0, err
    assert out.startswith(f"=== variant {variant.id}\n=== instructions (rule: template: personality_friendly)\n")
    assert request.base.text in out
    for i, message, section in request.sections:
        assert f"=== {i:02} message/{message.role}" in out
        assert f"] {section.fragment} ({section.slot}, from {section.source})\n{section.text}" in out


def test_render_json_is_the_responses_payload(embedded, capsys):
    code, out, err = run(capsys, "render", "--model", "harbor-4-legacy", "--mode", "execute", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    request = Assembler(embedded).assemble(find_variant(embedded, "harbor-4-legacy", None, "execute"))
    payload = {k: v for k, v in data.items() if k != "tokens"}
    # Codex's body order: codex_release.PINNED_BODY_KEYS, which a live capture checks (tests/verify/).
    assert list(payload) == [k for k in PINNED_BODY_KEYS if k in payload]
    assert {"model", "instructions", "input", "tools", "tool_choice", "store", "stream"} <= set(payload)
    assert payload["model"] == "harbor-4-legacy"
    assert payload["instructions"] == request.base.text
    assert [m["role"] for m in payload["input"]] == [m.role for m in request.messages]
    assert [[c["text"] for c in m["content"]] for m in payload["input"]] == [[s.text for s in m.sections] for m in request.messages]
    assert all(c["type"] == "input_text" for m in payload["input"] for c in m["content"])
    assert payload["tools"] == [t.definition for t in request.tools] and payload["tools"]
    tokens = data["tokens"]
    assert tokens["total"] == tokens["instructions"]["tokens"] + sum(m["tokens"] for m in tokens["messages"]) + tokens["tools"]["tokens"]
    assert [t["tool"] for t in tokens["tools"]["tools"]] == [t.name for t in request.tools]
    assert [[s["fragment"] for s in m["sections"]] for m in tokens["messages"]] == [[s.fragment for s in m.sections] for m in request.messages]


def test_render_layout_lists_sections_per_message(capsys):
    code, out, err = run(capsys, *golden_argv(*GOLDEN_VARIANTS[0]))
    assert code == 0, err
    assert out.startswith("00:message/developer[")
    assert out.endswith("\n") and "[01] <permissions instructions>" in out


@pytest.mark.parametrize("variant", GOLDEN_VARIANTS, ids=lambda v: "/".join(v))
def test_render_layout_matches_golden(variant, capsys):
    path = golden_path(*variant)
    if not path.is_file():
        pytest.fail(f"golden file {path.relative_to(GOLDEN.parent.parent)} is missing: run `python tests/golden/regenerate.py`, review the output, commit it")
    code, out, err = run(capsys, *golden_argv(*variant))
    assert code == 0, err
    assert out == path.read_text(encoding="utf-8")


# ---------------------------------------------------------------------------
# Errors: one line, exit 2, no traceback


@pytest.mark.parametrize(
    "flag, value, expected",
    [
        ("--model", "gpt-99", "unknown model 'gpt-99'; known: harbor-5"),
        ("--personality", "grumpy", "unknown personality 'grumpy'; known: default, none"),
        ("--mode", "yolo", "unknown mode 'yolo'; known: default, plan"),
    ],
)
def test_unknown_axis_value_is_one_line_exit_2(capsys, flag, value, expected):
    code, out, err = run(capsys, "render", flag, value)
    assert code == 2
    assert out == ""
    assert err.startswith("promptspec: error: " + expected)
    assert err.count("\n") == 1 and "Traceback" not in err


def test_unknown_extra_axis_and_bad_axis_syntax(capsys):
    code, _, err = run(capsys, "render", "--axis", "sandbox_mode=sideways")
    assert code == 2 and "unknown sandbox_mode 'sideways'" in err and err.count("\n") == 1
    code, _, err = run(capsys, "render", "--axis", "no-equals-sign")
    assert code == 2 and "NAME=VALUE" in err and err.count("\n") == 1


def test_missing_spec_folder_is_one_line(tmp_path, capsys):
    code, _, err = run(capsys, "render", "--spec", str(tmp_path / "nope"))
    assert code == 2 and "spec folder not found" in err and err.count("\n") == 1


def test_real_entry_point_prints_no_traceback(tmp_path):
    # A subprocess on purpose: the real entry point's exit status and streams, with an empty PATH.
    proc = subprocess.run(
        [sys.executable, "-m", "promptspec.cli", "render", "--model", "nope"],
        capture_output=True, text=True, env={"PROMPTSPEC_CACHE_DIR": str(tmp_path), "PATH": ""}, timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.startswith("promptspec: error: unknown model 'nope'")
    assert proc.stderr.count("\n") == 1


# ---------------------------------------------------------------------------
# --help


def commands() -> list[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sorted(sub.choices)


def test_expected_commands_exist():
    assert {"list", "render", "tokens", "import-codex"} <= set(commands())


@pytest.mark.parametrize("command", [None, *commands()])
def test_help_works_for_every_command(command, capsys):
    argv = ["--help"] if command is None else [command, "--help"]
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: promptspec{' ' + command if command else ''}")
