"""docs/guide/add-a-fragment.md, followed literally in a team's repository:
a fresh git repository whose templates/ is a copy of the example, with the
commands run from its top without --spec, as the guide says.

The commands, the body text and the YAML lines are read from the guide
itself, so if the guide changes, this test follows it, and if a step of the
guide stops working, this test fails."""

from __future__ import annotations

import fnmatch
import json
import re
import shlex
import shutil
from pathlib import Path

import pytest

from promptspec import cli, pipeline
from promptspec.spec.readers.load import load_spec
from promptspec.measure.counter import TokenCounter

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guide" / "add-a-fragment.md"
FENCE = re.compile(r"^```(?P<lang>\w*)\n(?P<body>.*?)^```$", re.M | re.S)


def blocks(lang: str) -> list[str]:
    return [m.group("body") for m in FENCE.finditer(GUIDE.read_text(encoding="utf-8")) if m.group("lang") == lang]


def only_block(lang: str) -> str:
    found = blocks(lang)
    assert len(found) == 1, f"the guide should have exactly one ```{lang} block, has {len(found)}"
    return found[0]


def commands(prefix: str) -> list[list[str]]:
    """Guide command lines starting with `prefix`, comments stripped."""
    out = []
    for block in blocks("sh"):
        for line in block.splitlines():
            if line.startswith(prefix):
                out.append(shlex.split(line, comments=True))
    return out


GUIDE_REPO = "/home/you/team"
"""Where the guide's sample output says the team's repository is."""


def run(argv: list[str], spec: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """A command as the guide gives it, from the top of the repository (no --spec)."""
    assert argv[0] == "promptspec"
    code = cli.main(argv[1:])
    captured = capsys.readouterr()
    return code, (captured.out + captured.err).replace(str(spec.parent.resolve()), GUIDE_REPO)


def test_walkthrough(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "team"
    spec = repo / "templates"
    shutil.copytree(ROOT / "templates", spec)
    (repo / ".git").mkdir()  # the top of a work tree, as the spec rule finds it (spec/locate.py)
    monkeypatch.chdir(repo)

    # 1. Create the skeleton.
    (new_cmd,) = commands("promptspec new fragment")
    name = new_cmd[3]
    code, out = run(new_cmd, spec, capsys)
    assert code == 0, out
    assert out in blocks("text"), "the guide shows other output for `promptspec new fragment`"

    # 2. Write the text: the guide's body replaces the whole file.
    body = only_block("markdown")
    assert f"templates/fragments/{name}.md" in GUIDE.read_text()
    (spec / "fragments" / f"{name}.md").write_text(body, encoding="utf-8")

    # 3. Replace description and owner, and the commented-out `when:` example.
    snippet = only_block("yaml").splitlines()
    definition = spec / "fragments" / f"{name}.yaml"
    lines = definition.read_text().splitlines()
    for key in ("description", "owner"):
        (new_line,) = [l for l in snippet if l.startswith(f"{key}:")]
        (at,) = [i for i, l in enumerate(lines) if l.startswith(f"{key}:")]
        lines[at] = new_line
    when_at = next(i for i, l in enumerate(lines) if l.startswith("# when:"))
    assert lines[when_at + 1].startswith("#   mode:")
    when = snippet[snippet.index("when:") :]
    lines[when_at : when_at + 2] = when
    definition.write_text("\n".join(lines) + "\n")
    fragment = next(f for f in load_spec(spec).fragments if f.name == name)
    modes = fragment.when["mode"]

    # 4. See it in every variant it applies to, and in no other.
    for argv in commands("promptspec render"):
        code, out = run(argv, spec, capsys)
        assert code == 0, out
        mode = argv[argv.index("--mode") + 1]
        assert (f"<{name}>" in out) == (mode in modes), argv
    result = pipeline.run(spec, counter=TokenCounter(tmp_path / "tokens"))
    sent = 0
    for request in result.requests:
        v = request.variant
        applies = any(fnmatch.fnmatchcase(v.mode, p) for p in modes)
        code, out = run(
            ["promptspec", "render", "--model", v.model, "--personality", v.personality, "--mode", v.mode,
             *(a for axis, value in v.extra for a in ("--axis", f"{axis}={value}")), "--format", "layout"],
            spec, capsys,
        )
        assert code == 0, out
        assert (f"<{name}>" in out) == applies, v.id
        sections = [s for _, _, s in request.sections if s.fragment == name]
        assert len(sections) == (1 if applies else 0), v.id
        if applies:
            assert sections[0].text == f"<{name}>{body}</{name}>"
            sent += 1
    assert 0 < sent < len(result.requests)

    # 5. Lint, exactly as the guide shows it.
    (lint_cmd,) = commands("promptspec lint")
    code, out = run(lint_cmd, spec, capsys)
    assert code == 0, out
    assert out == "no findings\n" and out in blocks("text")

    # 6. Update the lock. The committed lock no longer matches: this is why the step exists.
    assert (spec / "prompts.lock.json").is_file(), "templates/ ships a lock file"
    code, out = run(["promptspec", "check"], spec, capsys)
    assert code == 1, out
    (lock_cmd,) = commands("promptspec lock")
    code, out = run(lock_cmd, spec, capsys)
    assert code == 0, out
    lock = json.loads((spec / "prompts.lock.json").read_text())
    text = json.dumps(lock)
    assert f'"{name}"' in text, "the lock file has no section of the new fragment"
    code, out = run(["promptspec", "check"], spec, capsys)
    assert code == 0, out
    # The lock file is not spec input: lint stays clean with it present.
    code, out = run(lint_cmd, spec, capsys)
    assert code == 0 and out == "no findings\n", out
