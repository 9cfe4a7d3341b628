"""`import-codex --cli` in the user's own world: their project (--cwd), Codex
home (--codex-home), config values (-c) and feature flags (--enable/--disable).

Each import ends with the importer's own check: every captured first request
(one model, its whole matrix) is reproduced byte for byte by the written
spec, so `stats["reproduced"] == stats["compared"]` is "identical to what the
binary sends".  The other assertions check that the world reached the spec
as values a person can change.  Codex comes from npm (tests/codex_release.py);
the MCP server is our own script (mcp_one_tool.py).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from codex_release import codex_install

from promptspec.assemble import assemble, matrix
from promptspec.cli import main
from promptspec.importers.codex_cli import import_cli
from promptspec.oracle.world import make_world
from promptspec.spec import load_spec

pytestmark = pytest.mark.slow

MODELS = {"0.125.0": "gpt-5.4", "0.171.0": "gpt-5.5"}
PART = {"personality": ("unset",), "approval_policy": ("on-request",)}
"""The part of a model's matrix (9 of 144 configurations) the tests import
whose subject is one setting of the world, not the matrix: a whole matrix in
a world is the first test's (the home config, a global doc, MCP, a cut doc)."""
MCP = Path(__file__).with_name("mcp_one_tool.py")
DEVELOPER = "Keep every change small and say why."
GLOBAL_DOC = "# House rules\n\nWrite commit messages in the imperative.\n"


def big_doc(cut: int, size: int = 40_000) -> str:
    """An AGENTS.md of `size` bytes with a two-byte character across byte `cut`."""
    head = "# Big rules\n\n" + "Keep lines short. " * (size // 18)
    data = head.encode()[: cut - 1] + "é".encode() + b"x" * size
    return data[:size - 1].decode("utf-8", errors="ignore") + "\n"


def project(root: Path, doc: str) -> Path:
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True, capture_output=True)
    (root / "AGENTS.md").write_text(doc, encoding="utf-8")
    return root


def variant_text(spec_dir: Path, slot: str) -> str:
    spec = load_spec(spec_dir)
    req = assemble(spec, next(iter(matrix(spec))))
    return "".join(s.body for m in req.messages for s in m.sections if s.slot == slot)


def tools_of(spec_dir: Path) -> dict[str, str]:
    return {p.stem: p.read_text() for p in (spec_dir / "tools").glob("*.json")}


@pytest.fixture(params=sorted(MODELS))
def release(request):
    return request.param, codex_install(request.param)


def test_home_config_global_doc_mcp_and_a_cut_project_doc(release, tmp_path, capsys):
    rel, cli = release
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(f'developer_instructions = "{DEVELOPER}"\n', encoding="utf-8")
    (home / "AGENTS.md").write_text(GLOBAL_DOC, encoding="utf-8")
    (home / "auth.json").write_text('{"OPENAI_API_KEY": "sk-never-copied"}', encoding="utf-8")
    (home / "sessions").mkdir()
    (home / "sessions" / "s.jsonl").write_text("{}", encoding="utf-8")
    proj = project(tmp_path / "proj", big_doc(32 * 1024))
    disable = ("view_image",) if rel == "0.171.0" else ()
    world = make_world(proj, home, [f'mcp_servers.notebook.command="{sys.executable}"', f'mcp_servers.notebook.args=["{MCP}"]',
                                    'mcp_servers.notebook.env.NOTEBOOK_TOKEN="secret-token-1"'], (), disable)
    assert world.skipped == ("auth.json",)
    out, stats = import_cli(cli, tmp_path / "spec", models=(MODELS[rel],), world=world)
    assert stats["reproduced"] == stats["compared"] > 0
    spec = yaml.safe_load((out / "spec.yaml").read_text())
    assert spec["scenario"]["developer_instructions"] == DEVELOPER  # a value a person can change
    assert "{{ developer_instructions }}" in "".join(p.read_text() for p in (out / "texts").rglob("*.md"))
    assert spec["agents_md"]["user_instructions"] == "codex_home/AGENTS.md"
    assert (out / "codex_home" / "AGENTS.md").read_text() == GLOBAL_DOC
    # The MCP server's one tool is a tool file on every release: sent in the first request
    # (0.125.0), or a deferred namespace that tool_search loads (0.171.0), listed in <tools>.
    if rel == "0.125.0":
        assert any("note_down" in text and "mcp__notebook__" in text for text in tools_of(out).values())
    else:
        entry = json.loads(tools_of(out)["mcp__notebook"])
        assert entry["deferred"] is True and entry["definition"]["type"] == "namespace"
        assert [t["name"] for t in entry["definition"]["tools"]] == ["note_down"]
        assert "- mcp__notebook\n" in variant_text(out, "deferred_tools")
    if disable:
        assert not any(name.startswith("view_image") for name in tools_of(out))
    # Cut at 32 KiB by byte, decoded lossily: the split character is U+FFFD.
    assert "\ufffd" in variant_text(out, "agents_md")
    # No credential anywhere in what was written.
    written = "".join(p.read_text(errors="replace") for p in out.rglob("*") if p.is_file())
    assert "sk-never-copied" not in written and "secret-token-1" not in written
    assert not (out / "auth.json").exists() and not list(out.rglob("sessions"))
    prov = json.loads((out / "provenance.json").read_text())["world"]
    assert prov["credentials_skipped"] == ["auth.json"]
    assert "mcp_servers.notebook.env.NOTEBOOK_TOKEN=<redacted>" in prov["config_overrides"]
    if rel != "0.125.0":  # the <tools> line is said from the tool file: without it, no line
        copy = tmp_path / "without-mcp"
        shutil.copytree(out, copy)
        (copy / "tools" / "mcp__notebook.json").unlink()
        assert "mcp__notebook" not in variant_text(copy, "deferred_tools")
    # verify compares in the same world: the recorded one cannot replay the redacted token, so
    # it asks for the flags; given them, a sample of variants is identical to the binary's.
    assert main(["verify", "--cli", str(cli), "--spec", str(out), "--threads", "0"]) == 2
    assert "credential" in capsys.readouterr().err
    flags = ["--cwd", str(proj), "--codex-home", str(home), *[a for o in world.overrides for a in ("-c", f"{o.key}={o.raw}")],
             *[a for f in disable for a in ("--disable", f)]]
    assert main(["verify", "--cli", str(cli), "--spec", str(out), "--sample", "2", "--threads", "0", *flags]) == 0
    said = capsys.readouterr()
    assert "2 of 2 compared variants identical" in said.out
    assert "auth.json: holds credentials; skipped, not copied" in said.err  # named, and the run goes on


def test_small_doc_budget_live_search_and_no_unified_exec(release, tmp_path, capsys):
    rel, cli = release
    proj = project(tmp_path / "proj", big_doc(100))
    world = make_world(proj, None, ["project_doc_max_bytes=100", 'web_search="live"'], (), ("unified_exec",))
    out, stats = import_cli(cli, tmp_path / "spec", models=(MODELS[rel],), world=world, only=PART)
    assert stats["reproduced"] == stats["compared"] > 0
    spec = yaml.safe_load((out / "spec.yaml").read_text())
    assert spec["agents_md"]["max_bytes"] == 100
    doc = variant_text(out, "agents_md")
    assert "\ufffd" in doc and len(doc.encode()) < 200
    tools = tools_of(out)
    if rel == "0.125.0":  # later releases keep exec_command for models whose catalog asks for it
        assert "exec_command" not in tools
    searches = [json.loads(t)["definition"] for n, t in tools.items() if n.startswith("web_search")]
    assert searches and all(d.get("external_web_access") is True for d in searches)
    # verify runs in the world provenance.json records; in another world (a smaller budget) it differs.
    before = sorted(p.relative_to(proj) for p in proj.rglob("*") if ".git" not in p.parts)
    assert main(["verify", "--cli", str(cli), "--spec", str(out), "--sample", "2"]) == 0
    said = capsys.readouterr().out
    assert "in the world: --cwd" in said and "not run there" in said  # the threads would write into the project
    assert sorted(p.relative_to(proj) for p in proj.rglob("*") if ".git" not in p.parts) == before
    assert main(["verify", "--cli", str(cli), "--spec", str(out), "--sample", "1", "--threads", "0", "--cwd", str(proj),
                 "-c", "project_doc_max_bytes=50", "-c", 'web_search="live"', "--disable", "unified_exec"]) == 1
    assert "DIFFERS agents_md" in capsys.readouterr().out


def test_search_disabled_and_no_shell_tool(release, tmp_path):
    rel, cli = release
    world = make_world(None, None, ['web_search="disabled"'], (), ("shell_tool",))
    out, stats = import_cli(cli, tmp_path / "spec", models=(MODELS[rel],), world=world, only=PART)
    assert stats["reproduced"] == stats["compared"] > 0
    assert not any(n.startswith("web_search") for n in tools_of(out))
    assert json.loads((out / "provenance.json").read_text())["world"]["disable"] == ["shell_tool"]


def test_a_hanging_mcp_server_is_named(tmp_path, capsys):
    cli = codex_install("0.125.0")
    rc = main(["import-codex", "--cli", str(cli), "--out", str(tmp_path / "spec"), "--model", "gpt-5.4", "--timeout", "5",
               "-c", f'mcp_servers.notebook.command="{sys.executable}"', "-c", f'mcp_servers.notebook.args=["{MCP}", "hang"]'])
    err = capsys.readouterr().err
    assert rc == 2 and "MCP server 'notebook'" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "spec").exists()


@pytest.mark.parametrize("args, message", [
    (["--cwd", "{tmp}/missing"], "--cwd"),
    (["-c", "developer_instructions=not quoted"], "not valid TOML"),
    (["-c", "novalue"], "expected KEY=VALUE"),
    (["--codex-home", "{tmp}/missing"], "--codex-home"),
])
@pytest.mark.parametrize("command", ["import-codex", "verify"])
def test_bad_world_input_is_one_line(tmp_path, capsys, args, message, command):
    cli = tmp_path / "codex"  # refused before any Codex runs
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    where = ["--out", str(tmp_path / "spec")] if command == "import-codex" else ["--spec", str(tmp_path / "spec")]
    rc = main([command, "--cli", str(cli), *where, *args])
    err = capsys.readouterr().err
    assert rc == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "spec").exists()


def test_mcp_tools_a_release_names_in_its_tool_search_land_as_a_deferred_tool_file(tmp_path):
    """Around 0.150 Codex neither sends an MCP server's tools nor lists `mcp__NAME`:
    the tool_search description names the server (`- notebook`); the import
    still loads its namespace and writes it as a deferred tool file."""
    cli = codex_install("0.150.0")
    world = make_world(None, None, [f'mcp_servers.notebook.command="{sys.executable}"', f'mcp_servers.notebook.args=["{MCP}"]'])
    out, stats = import_cli(cli, tmp_path / "spec", models=("gpt-5.5",), world=world, only=PART)
    assert stats["reproduced"] == stats["compared"] > 0
    entry = json.loads(tools_of(out)["mcp__notebook"])
    assert entry["deferred"] is True and [t["name"] for t in entry["definition"]["tools"]] == ["note_down"]
    assert "- notebook" in json.loads(tools_of(out)["tool_search"])["definition"]["description"]
