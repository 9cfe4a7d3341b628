"""Releases whose captures no rule of the catalog explains import exactly
(spec.yaml `exact:`), instead of being refused; `verify --cli` agrees.

0.156.0 is one of the releases (0.153-0.160) whose instructions for gpt-5.5
differ from the catalog's template by a line: it used to be refused with
"the instructions field matches no rule of the catalog".
"""

from __future__ import annotations

import pytest
import yaml

from codex_release import codex_install

from promptspec.cli import main
from promptspec.importers.codex_cli import import_cli

pytestmark = pytest.mark.slow

RELEASE = "0.156.0"
MODEL = "gpt-5.5"


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    cli = codex_install(RELEASE)
    out = tmp_path_factory.mktemp("exact") / "spec"
    # The instructions depend on the model and the personality: every personality and mode, one
    # sandbox and approval (12 of 144 configurations).
    part = {"sandbox_mode": ("workspace-write",), "approval_policy": ("on-request",)}
    spec_dir, stats = import_cli(cli, out, models=(MODEL,), only=part)
    return cli, spec_dir, stats


def test_instructions_no_rule_gives_are_stated_exactly(imported):
    _, spec_dir, stats = imported
    assert stats["reproduced"] == stats["compared"] > 0
    spec = yaml.safe_load((spec_dir / "spec.yaml").read_text())
    entries = [e for e in spec.get("exact", []) if e["part"] == "instructions"]
    assert entries, "the release's instructions were expected to need an exact entry"
    for e in entries:
        assert e["when"]["model"] == MODEL and RELEASE in e["why"]
        assert (spec_dir / e["file"]).is_file()


def test_verify_finds_every_sampled_variant_identical(imported, capsys):
    cli, spec_dir, _ = imported
    assert main(["verify", "--cli", str(cli), "--spec", str(spec_dir), "--sample", "12"]) == 0
    assert "12 of 12 compared variants identical" in capsys.readouterr().out
