"""A scratch git repository with three tagged releases of the embedded spec,
for the history tests in tests/review/ and tests/site/ (imported as `history_repo`).

    v1  the embedded spec as it is
    v2  fragments/realtime.md edited; a new mode `review`
    v3  model harbor-4-legacy removed; the open_files section moved from the
        user message into the developer message; the shell tool's description edited
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from _helpers import TEMPLATES

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
DATES = {"v1": "2026-01-05T10:00:00+00:00", "v2": "2026-03-10T10:00:00+00:00", "v3": "2026-06-20T10:00:00+00:00"}
REALTIME_LINE = "When the user interrupts you, stop and listen before you continue."
SHELL_SENTENCE = "set `workdir` instead of chaining `cd`, and never run interactive programs."


def _git(repo: Path, *args: str, date: str | None = None) -> None:
    import os

    env = {**os.environ, **GIT_ENV}
    if date:
        env |= {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


def _commit(repo: Path, tag: str) -> None:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", tag, date=DATES[tag])
    _git(repo, "tag", tag)


def make_repo(dest: Path) -> Path:
    """Build the repository under `dest`; returns the spec folder (dest/templates)."""
    dest.mkdir(parents=True, exist_ok=True)
    _git(dest, "init", "-q")
    spec = dest / "templates"
    shutil.copytree(TEMPLATES, spec, ignore=shutil.ignore_patterns("prompts.lock.json"))
    _commit(dest, "v1")

    realtime = spec / "fragments" / "realtime.md"
    realtime.write_text(realtime.read_text(encoding="utf-8").rstrip("\n") + "\n" + REALTIME_LINE + "\n", encoding="utf-8")
    (spec / "modes" / "review.md").write_text("# Mode: Review\n\nRead the change and report problems; do not edit files.\n", encoding="utf-8")
    text = (spec / "spec.yaml").read_text(encoding="utf-8")
    text = text.replace("  pair_programming:\n    display_name: Pair Programming\n",
                        "  review:\n    display_name: Review\n    description: Review a change without editing.\n    template: modes/review.md\n"
                        "  pair_programming:\n    display_name: Pair Programming\n")
    (spec / "spec.yaml").write_text(text, encoding="utf-8")
    _commit(dest, "v2")

    models = json.loads((spec / "models.json").read_text(encoding="utf-8"))
    models["models"] = [m for m in models["models"] if m["slug"] != "harbor-4-legacy"]
    (spec / "models.json").write_text(json.dumps(models, indent=2) + "\n", encoding="utf-8")
    text = (spec / "spec.yaml").read_text(encoding="utf-8")
    text = text.replace("matrix:\n  exclude:\n    # The legacy model predates pair programming.\n    - model: harbor-4-legacy\n      mode: pair_programming\n", "")
    (spec / "spec.yaml").write_text(text, encoding="utf-8")
    # The model-switch conversation's last step went to the removed model: a spec naming it would not load.
    talk = spec / "conversations" / "model-switch.yaml"
    talk.write_text(talk.read_text(encoding="utf-8").replace("model: harbor-4-legacy", "model: harbor-5"), encoding="utf-8")
    tool = spec / "tools" / "shell.yaml"
    tool.write_text(tool.read_text(encoding="utf-8").replace("set `workdir` instead of chaining `cd`.", SHELL_SENTENCE), encoding="utf-8")
    frag = spec / "fragments" / "open_files.yaml"
    frag.write_text(frag.read_text(encoding="utf-8").replace("role: user\nslot: user_extensions", "role: developer\nslot: developer_extensions"),
                    encoding="utf-8")
    _commit(dest, "v3")
    return spec
