"""`promptspec verify --cli`: the imported spec against the release it came from.

A sample of the matrix is driven through the real binary; a deliberately
edited spec must fail and name the part that changed, for each kind of part
verify claims to compare byte for byte: a text, a tool definition, a request
parameter, the body's key order.  The report a real run writes is what the
site's Conformance page and badges read.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from codex_release import IMPORTED_MODEL, PINNED, PINNED_BODY_KEYS

from promptspec.cli import main

MODEL = IMPORTED_MODEL

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def spec_dir(codex_import) -> Path:
    return codex_import[0]  # conftest.py: imported once for this module and tests/importers/


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
    # The site reads this real report: the Conformance page and a badge on each compared variant.
    pages = _site_pages(spec_dir, report, tmp_path)
    assert "<strong>24 of 24</strong>" in pages["prompts/conformance.md"] and PINNED in pages["prompts/conformance.md"]
    compared = {v["id"] for v in data["variants"]}
    badges = {vid: f"identical to Codex {PINNED}" in page for vid, page in _variant_pages(spec_dir, pages).items()}
    assert {vid for vid, badged in badges.items() if badged} == compared


def _site_pages(spec: Path, report: Path, tmp_path: Path) -> dict[str, str]:
    from promptspec import pipeline
    from promptspec.measure.counter import TokenCounter
    from promptspec.site import build as site
    from promptspec.site.pages import conformance

    result = pipeline.run(spec, counter=TokenCounter(tmp_path / "tokens"))
    return site.build_site(result, links="dir", variant_pages="all", conformance=conformance.load(report)).pages


def _variant_pages(spec: Path, pages: dict[str, str]) -> dict[str, str]:
    """Variant id -> its page's text."""
    from promptspec import pipeline
    from promptspec.measure.counter import TokenCounter

    result = pipeline.run(spec, counter=TokenCounter(persist=False))
    return {v.id: pages[f"prompts/variants/{v.slug}.md"] for v in result.variants}


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
    report = tmp_path / "report.json"
    rc = main(["verify", "--cli", str(codex), "--spec", str(edited), "--sample", "48", "--format", "json", "--out", str(report)])
    data = json.loads(capsys.readouterr().out)
    assert rc == 1
    # The site marks exactly the variants this real report found different.
    differs = {vid for vid, page in _variant_pages(edited, _site_pages(edited, report, tmp_path)).items()
               if f"differs from Codex {PINNED}" in page}
    assert differs == {v["id"] for v in data["variants"] if not v["identical"]}
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


def test_a_changed_tool_and_permissions_text_are_both_named_grouped_and_short(codex, spec_dir, tmp_path, capsys):
    """The newcomer's tampered spec: one tool description and one permissions
    text changed.  The report names the tool and the part, groups the variants
    by axis, and stays small; so does the Conformance page built from it."""
    from promptspec import pipeline
    from promptspec.measure.counter import TokenCounter
    from promptspec.site import build as site
    from promptspec.site.pages import conformance

    edited = tmp_path / "tampered"
    shutil.copytree(spec_dir, edited)
    tool_file = edited / "tools" / "update_plan.json"
    tool = json.loads(tool_file.read_text())
    tool["definition"]["description"] += " Keep it current."  # what Codex sends, not the catalog's note
    tool_file.write_text(json.dumps(tool, indent=2))
    on_request = edited / "texts" / "permissions" / "approval" / "on-request.md"
    on_request.write_text(on_request.read_text().replace("approv", "Approv", 1))
    report = tmp_path / "tampered.json"
    rc = main(["verify", "--cli", str(codex), "--spec", str(edited), "--sample", "96", "--format", "markdown", "--out", str(report)])
    md = capsys.readouterr().out
    assert rc == 1
    assert len(md) < 40_000, len(md)
    assert "## tool update&#95;plan&#58; all 96 compared variants" in md
    assert "approval&#95;policy &#61; on-request" in md and "## permissions" in md
    assert md.count("Keep it current.") == 1  # one group, its diff once
    data = json.loads(report.read_text())
    assert all(any(d["name"] == "tool update_plan" for d in v["differences"]) for v in data["variants"])
    both = [v for v in data["variants"] if v["config"]["approval_policy"] == "on-request"]
    assert both and all({d["name"] for d in v["differences"]} >= {"permissions", "tool update_plan"} for v in both)
    result = pipeline.run(edited, counter=TokenCounter(tmp_path / "tokens"))
    page = site.build_site(result, links="dir", variant_pages="all", conformance=conformance.load(report)).pages["prompts/conformance.md"]
    assert len(page.encode()) < 300_000 and page.count("Keep it current.") == 1 and "Compared: the instructions field" in page


def _edit_tools(spec: Path) -> None:
    """Every tool definition's description one word longer."""
    for path in sorted((spec / "tools").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data.get("definition", {}).get("description"), str):
            data["definition"]["description"] += " Edited."
            path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def _edit_spec_yaml(spec: Path, rule: dict) -> None:
    """One more request rule, for every variant (an imported spec writes only
    what differs from the documented defaults, so the edit adds a rule)."""
    import yaml

    path = spec / "spec.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data.setdefault("request", {}).setdefault("rules", []).append(rule)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")


def _store_true() -> dict:
    """`store: false` (what Codex sends) becomes true."""
    return {"params": {"store": True}}


def _store_and_stream_swapped() -> dict:
    """`store` and `stream` trade places in the body order."""
    from promptspec.spec.model import DEFAULT_BODY_ORDER

    order = list(DEFAULT_BODY_ORDER)
    i, j = order.index("store"), order.index("stream")
    order[i], order[j] = order[j], order[i]
    return {"order": order}


@pytest.mark.parametrize("edit, part", [
    (_edit_tools, "tools"),
    (lambda spec: _edit_spec_yaml(spec, _store_true()), "request parameters"),
    (lambda spec: _edit_spec_yaml(spec, _store_and_stream_swapped()), "body key order"),
], ids=["tool", "parameter", "key-order"])
def test_every_compared_part_can_fail(codex, spec_dir, tmp_path, capsys, edit, part):
    """A changed tool, parameter or key order (not only a text) fails verify
    and is named: each comparison verify reports as done can catch a difference."""
    edited = tmp_path / "edited"
    shutil.copytree(spec_dir, edited)
    edit(edited)
    rc = main(["verify", "--cli", str(codex), "--spec", str(edited), "--sample", "3", "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert rc == 1, data
    assert data["compared"] == 3 and data["identical"] == 0
    parts = {v["part"] for v in data["variants"]}
    if part == "tools":  # each tool is compared and named on its own ("tool update_plan")
        assert parts and all(p.startswith("tool ") for p in parts), parts
    else:
        assert parts == {part}


def test_the_pinned_body_keys_are_what_codex_sends(codex):
    """codex_release.PINNED_BODY_KEYS (which the site's download is checked
    against) from a live capture of the installed release, not a copy."""
    from promptspec.oracle.binary import identify
    from promptspec.oracle.pool.harvest import harvest
    from promptspec.oracle.parts import VOLATILE_BODY
    from promptspec.spec.model import DEFAULT_BODY_ORDER

    h = harvest(identify(codex), models=(MODEL,), n=2)
    orders = {tuple(c.body) for c in h.captures if c.body}
    assert orders == {PINNED_BODY_KEYS}
    # promptspec's default order is Codex's, the per-session keys included: they
    # keep their place and are left out only while they have no value.
    assert DEFAULT_BODY_ORDER == PINNED_BODY_KEYS
    assert set(VOLATILE_BODY) <= set(PINNED_BODY_KEYS)
