"""Tools end to end through the real CLI: the embedded spec's pages show a
tools segment whose tokens equal a recount of the JSON actually sent, the
download is exactly the body Codex sends, and review names a tool edit."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from _helpers import cli, commit, git, run_cli
from codex_release import PINNED_BODY_KEYS

from promptspec.measure.encodings import encoding_for_model, get_encoding
from promptspec.spec import load_spec

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"

CODEX_0_125_BODY = PINNED_BODY_KEYS
"""The top-level keys Codex 0.125.0 sends, in order (codex_release.py; a live
capture checks them in tests/verify/test_verify.py)."""
VOLATILE = {"prompt_cache_key", "client_metadata"}
"""Session-specific: Codex fills them per thread; promptspec leaves them out."""


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("tools-site") / "site"
    proc = cli("build", "--spec", str(TEMPLATES), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    return out / "prompts"


def sent_tools(body: dict) -> list:
    if "tools" in body:
        return body["tools"]
    return [t for item in body["input"] if item["type"] == "additional_tools" for t in item["tools"]]


def recount(body: dict) -> int:
    text = json.dumps(sent_tools(body), ensure_ascii=False, separators=(",", ":"))
    enc = encoding_for_model(body["model"], load_spec(TEMPLATES).encodings)
    return len(get_encoding(enc).encode_ordinary(text))


@pytest.mark.parametrize("slug", ["harbor-5--default--default--workspace-write", "harbor-5-mini--friendly--plan--read-only", "harbor-4-legacy--none--execute--read-only"])
def test_variant_page_tools_segment_equals_a_recount_of_the_sent_json(site: Path, slug: str) -> None:
    body = json.loads((site / "variants" / f"{slug}.json").read_text(encoding="utf-8"))
    page = (site / "variants" / f"{slug}.md").read_text(encoding="utf-8")
    tools = sent_tools(body)
    assert tools, "every embedded variant sends tools"
    seg = re.search(r'class="ps-seg ps-role-tools[^"]*" style="width:[\d.]+%" href="#s-tools" title="tools \((\d+)\): ([\d,]+) tokens', page)
    assert seg, "no tools segment in the token bar"
    assert int(seg.group(1)) == len(tools)
    assert int(seg.group(2).replace(",", "")) == recount(body) > 0
    # The page says what the count is, and lists each tool with a link to its page.
    assert "offline count" in page and "not public" in page
    for t in tools:
        name = t.get("name", t["type"])
        assert f"<code>{html.escape(name).replace('_', '&#95;')}</code>" in page or f"<code>{name}</code>" in page


def test_total_includes_the_tools(site: Path) -> None:
    body = json.loads((site / "variants" / "harbor-5--default--default--workspace-write.json").read_text(encoding="utf-8"))
    proc = cli("render", "--spec", str(TEMPLATES), "--model", "harbor-5", "--format", "json")
    data = json.loads(proc.stdout)
    tokens = data.pop("tokens")
    assert data == body  # render --format json is the download plus `tokens`
    assert tokens["tools"]["tokens"] == recount(body)
    assert tokens["total"] == tokens["instructions"]["tokens"] + sum(m["tokens"] for m in tokens["messages"]) + tokens["tools"]["tokens"]
    assert "not public" in tokens["tools"]["rule"]


def test_download_has_exactly_the_keys_codex_sends(site: Path) -> None:
    body = json.loads((site / "variants" / "harbor-5--default--default--workspace-write.json").read_text(encoding="utf-8"))
    assert list(body) == [k for k in CODEX_0_125_BODY if k not in VOLATILE]
    assert body["reasoning"] == {"effort": "medium"} and body["text"] == {"verbosity": "low"}
    assert body["include"] == ["reasoning.encrypted_content"] and body["tool_choice"] == "auto"
    assert body["store"] is False and body["stream"] is True and body["parallel_tool_calls"] is True


def test_tool_catalog_pages(site: Path) -> None:
    spec = load_spec(TEMPLATES)
    index = (site / "tools" / "index.md").read_text(encoding="utf-8")
    for t in spec.tools:
        page = (site / "tools" / f"{t.name}.md").read_text(encoding="utf-8")
        assert f'href="{t.name}.md"' in index
        # The definition, pretty-printed and escaped (quotes and braces never raw).
        pretty = json.dumps(t.definition, indent=2, ensure_ascii=False)
        assert html.escape(pretty.splitlines()[1].strip(), quote=True).split("&quot;")[1] in page
        assert '"type"' not in page.split("## Definition", 1)[1].split("## Variants", 1)[0]
        assert "description tokens" in page and "not public" in page
        # The description's tokens, for each encoding of the variants that carry it, equal a recount.
        shown = re.search(r"description tokens</th><td>([^<]*)</td>", page).group(1)
        figures = dict((enc, int(n.replace(",", ""))) for n, enc in re.findall(r"([\d,]+) \(([\w.]+)\)", shown))
        text = t.sent_description
        assert figures and figures == {e: len(get_encoding(e).encode_ordinary(text)) for e in figures}
    model_page = (site / "models" / "harbor-5.md").read_text(encoding="utf-8")
    assert "Tools compared with other models" in model_page and "differs" in model_page


def test_diff_names_an_edited_tool_its_file_variants_and_delta(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(TEMPLATES, repo / "templates")
    git(repo, "init", "-q", "-b", "main")
    commit(repo, "base")
    before = {t.name: t for t in load_spec(repo / "templates").tools}["shell"]
    shell = repo / "templates" / "tools" / "shell.yaml"
    text = shell.read_text(encoding="utf-8")
    old = "set `workdir` instead of chaining `cd`."
    assert old in text
    shell.write_text(text.replace(old, old + " Output longer than 10 kB is cut in the middle."), encoding="utf-8")
    spec = load_spec(repo / "templates")
    after = {t.name: t for t in spec.tools}["shell"]

    data = json.loads(run_in(repo, "diff", "--format", "json", "HEAD").stdout)
    groups = [g for g in data["changes"] if g["fragment"] == "tool:shell"]
    assert len(groups) == 1, [g["fragment"] for g in data["changes"]]
    g = groups[0]
    assert g["kind"] == "changed" and g["sources"] == ["tools/shell.yaml"]
    assert "Output longer than 10 kB" in g["diff"]
    from promptspec.assemble import matrix

    assert sorted(g["variants"]) == sorted(v.id for v in matrix(spec))  # no `when`: every variant carries it
    for entry in g["tokens"]:
        enc = get_encoding(encoding_for_model(entry["variant"].split("/")[0], spec.encodings))
        expected = len(enc.encode_ordinary(after.serialized)) - len(enc.encode_ordinary(before.serialized))
        assert entry["delta"] == expected > 0, entry
    text_out = run_in(repo, "diff", "HEAD").stdout
    assert "tool:shell" in text_out and "tools/shell.yaml" in text_out

    # check fails on the now stale lock, naming the tool.
    proc = run_in(repo, "check", "--spec", "templates", check=False)
    assert proc.returncode == 1 and "tool:shell" in proc.stdout, proc.stdout + proc.stderr


def run_in(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """The CLI, run inside the scratch repository (diff finds templates/ there)."""
    proc = run_cli(args, cwd=repo)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def test_changes_page_against_the_lock_names_an_edited_tool(tmp_path: Path) -> None:
    spec = tmp_path / "templates"
    shutil.copytree(TEMPLATES, spec)
    plan = spec / "tools" / "update_plan.yaml"
    plan.write_text(plan.read_text(encoding="utf-8").replace("Keep exactly one step in progress.", "Keep one step in progress."), encoding="utf-8")
    out = tmp_path / "site"
    proc = cli("build", "--spec", str(spec), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    page = (out / "prompts" / "changes.md").read_text(encoding="utf-8")
    assert 'tool <a href="tools/update&#95;plan.md"' in page or 'tool <a href="tools/update_plan.md"' in page, page[:3000]
    assert "changed" in page


def test_a_build_with_every_count_cached_runs_no_tokenizer(tmp_path: Path, monkeypatch) -> None:
    """The site shows only what the measure stage counted (through the token
    cache), so a build whose texts are all cached encodes nothing: tool pages
    once counted each description with the tokenizer, which cost a warm
    build of the embedded spec a third of its time (loading the vocabulary)."""
    import tiktoken

    monkeypatch.setenv("PROMPTSPEC_CACHE_DIR", str(tmp_path / "cache"))
    first = cli("build", "--spec", str(TEMPLATES), "--out", str(tmp_path / "first"))
    assert first.returncode == 0, first.stderr

    def refuse(self, *args, **kwargs):
        raise AssertionError("a cached build ran the tokenizer")

    for method in ("encode", "encode_ordinary", "encode_batch", "encode_ordinary_batch"):
        monkeypatch.setattr(tiktoken.Encoding, method, refuse)
    again = cli("build", "--spec", str(TEMPLATES), "--out", str(tmp_path / "again"))
    assert again.returncode == 0, again.stderr
    pages = sorted(p.relative_to(tmp_path / "first") for p in (tmp_path / "first").rglob("*.md"))
    assert len(pages) > 100
    assert all((tmp_path / "first" / p).read_bytes() == (tmp_path / "again" / p).read_bytes() for p in pages)


def test_a_tool_every_variant_sends_with_another_text_still_shows_its_files_description(make_spec) -> None:
    """Where every variant of an encoding carries an `exact:` text of the tool
    with another description, the tool's page still counts the file's own."""
    from promptspec.pipeline import run
    from promptspec.site.index import SiteIndex
    from promptspec.site.pages.tool_pages import tool_page

    own = {"type": "function", "name": "look", "description": "Look at one file and say what it holds.",
           "parameters": {"type": "object", "properties": {}}}
    stated = {**own, "description": "Stated."}
    spec_dir = make_spec(
        spec={"personalities": {"default": {}}, "modes": {"default": {}},
              "exact": [{"part": "tool look", "when": {"model": "m1"}, "value": stated}]},
        models=[{"slug": "m1", "context_window": 100000, "base_instructions": "One.\n"}],
        fragments={},
        files={"tools/look.yaml": json.dumps({"definition": own})},
    )
    page = tool_page(SiteIndex(run(spec_dir)), "look")
    shown = re.search(r"description tokens</th><td>([^<]*)</td>", page).group(1)
    n, enc = re.fullmatch(r"(\d+) \(([\w.]+)\)", shown).groups()
    assert int(n) == len(get_encoding(enc).encode_ordinary(own["description"])) != len(get_encoding(enc).encode_ordinary("Stated."))
