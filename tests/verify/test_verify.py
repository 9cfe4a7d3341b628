"""`promptspec verify --cli`: the imported spec against the release it came from.

A sample of the matrix is driven through the real binary; a deliberately
edited spec must fail and name the part that changed.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from codex_release import PINNED

from promptspec.cli import main
from promptspec.importers.codex_cli import import_cli

MODEL = "gpt-5.4"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def spec_dir(codex, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("verify") / "spec"
    import_cli(codex, out, models=(MODEL,))
    return out


def test_sample_is_identical(codex, spec_dir, tmp_path, capsys):
    report = tmp_path / "report.json"
    rc = main(["verify", "--cli", str(codex), "--spec", str(spec_dir), "--sample", "24", "--out", str(report)])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "24 of 24 compared variants identical" in out
    data = json.loads(report.read_text())
    assert data["codex_release"] == PINNED and data["compared"] == data["identical"] == 24
    # Instructions, input, tools, parameters and key order all compared; the imported spec has no
    # turns:, so the standard threads are compared and reported but said not to be modelled.
    assert data["not_modelled"] == ["later turns (the spec has no turns:, so its threads do not gate)"]
    assert all(v["identical"] for v in data["variants"])
    assert {t["thread"] for t in data["threads"]} >= {"two-turns", "compact-manual"} and data["threads_identical"] >= 1


def test_a_spec_without_tools_says_what_it_does_not_compare(codex, spec_dir, tmp_path, capsys):
    bare = tmp_path / "bare"
    shutil.copytree(spec_dir, bare)
    shutil.rmtree(bare / "tools")
    text = (bare / "spec.yaml").read_text()
    (bare / "spec.yaml").write_text(_without_keys(text, ("tools", "request")))
    rc = main(["verify", "--cli", str(codex), "--spec", str(bare), "--sample", "4", "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert rc == 0 and data["identical"] == 4
    assert "tools" in data["not_modelled"] and "request parameters" in data["not_modelled"]


def _without_keys(yaml_text: str, keys: tuple[str, ...]) -> str:
    import yaml

    data = yaml.safe_load(yaml_text)
    for k in keys:
        data.pop(k, None)
    return yaml.safe_dump(data, sort_keys=False)


def test_edited_spec_fails_and_names_the_part(codex, spec_dir, tmp_path, capsys):
    edited = tmp_path / "edited"
    shutil.copytree(spec_dir, edited)
    never = edited / "texts" / "permissions" / "approval" / "never.md"
    never.write_text(never.read_text().replace("never", "hardly ever", 1))
    rc = main(["verify", "--cli", str(codex), "--spec", str(edited), "--sample", "48", "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert rc == 1
    bad = [v for v in data["variants"] if not v["identical"]]
    assert bad and all(v["config"]["approval_policy"] == "never" for v in bad)
    assert all("(permissions)" in v["part"] for v in bad)
    assert "hardly ever" in bad[0]["diff"]
    good = [v for v in data["variants"] if v["identical"]]
    assert good and all(v["config"]["approval_policy"] != "never" for v in good)


def test_markdown_report(codex, spec_dir, capsys):
    rc = main(["verify", "--cli", str(codex), "--spec", str(spec_dir), "--sample", "3", "--format", "markdown"])
    out = capsys.readouterr().out
    assert rc == 0 and out.startswith(f"# Conformance: Codex {PINNED}") and "**3 of 3**" in out


def test_spec_without_codex_axes_is_refused(codex, capsys):
    embedded = Path(__file__).resolve().parents[2] / "templates"  # the example spec: no approval_policy axis
    rc = main(["verify", "--cli", str(codex), "--spec", str(embedded)])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "axis" in err
