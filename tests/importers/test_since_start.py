"""The since-start learner on a list the fragment's text sorts (Codex 0.134.0
sorts its writable roots, and a switch to workspace-write lists them without
the memories root a workspace-write start has); in-process, no Codex."""

from __future__ import annotations

from types import SimpleNamespace

import yaml
from jinja2.sandbox import SandboxedEnvironment

from promptspec.importers.codex_cli.since_start import learn_since_start

ROOTS = ('{{ (" The writable roots are `" ~ (["/tmp", (home ~ "/.codex/memories"), cwd] | sort | join("`, `")) ~ "`.") }}')
VALUES = {"home": "/h", "cwd": "/w"}


def _doc(name):
    return {"description": "d", "role": "developer", "text": ROOTS} if name == "permissions" else None


def test_an_item_left_out_of_a_sorted_list_is_listed_only_while_unswitched():
    files: dict[str, str] = {}
    section = SimpleNamespace(fragment="permissions", text=" The writable roots are `/h/.codex/memories`, `/tmp`, `/w`.")
    sent = " The writable roots are `/tmp`, `/w`."
    assert learn_since_start(files, None, section, sent, ["sandbox_mode"], VALUES, _doc)
    text = yaml.safe_load(files["fragments/permissions.yaml"])["text"]
    assert '((home ~ "/.codex/memories") if "sandbox_mode" not in thread.switched else "")' in text
    assert "] | select | sort |" in text
    env = SandboxedEnvironment()
    for switched, expected in (([], section.text), (["sandbox_mode"], sent)):
        assert env.from_string(text).render(**VALUES, thread={"switched": switched}) == expected


def test_a_piece_no_item_renders_to_is_not_learned():
    files: dict[str, str] = {}
    section = SimpleNamespace(fragment="permissions", text=" The writable roots are `/h/.codex/memories`, `/tmp`, `/w`.")
    # Part of an item left out: no item of the list is the piece.
    assert not learn_since_start(files, None, section, " The writable roots are `/h/.codex/memories`, `/tmp`, `/`.",
                                 ["sandbox_mode"], VALUES, _doc)
    assert files == {}
