"""`import-codex --cli`: a spec from a released Codex binary, checked against that binary.

The pinned release comes from npm at test time (see tests/codex_release.py);
Codex's text is only ever in tmp_path.  Importing one model keeps the test to
seconds; the benchmark (bench/bench_verify.py) covers whole matrices.
"""

from __future__ import annotations

import json
import socket
import stat
from pathlib import Path

import pytest
import yaml

from codex_release import IMPORTED_MODEL, PINNED

from promptspec.cli import main
from promptspec.importers.codex_cli import identify

MODEL = IMPORTED_MODEL

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def imported(codex_import) -> tuple[Path, dict]:
    return codex_import  # conftest.py: imported once for this module and tests/verify/


def test_identify_reads_the_release(codex):
    assert identify(codex).release == PINNED


def test_import_writes_a_real_spec(imported):
    spec_dir, stats = imported
    assert stats["reproduced"] == stats["compared"] == 4 * 3 * 3 * 4
    spec = yaml.safe_load((spec_dir / "spec.yaml").read_text())
    assert list(spec["personalities"]) == ["unset", "none", "friendly", "pragmatic"]
    assert list(spec["modes"]) == ["unset", "default", "plan"]
    assert spec["axes"]["approval_policy"] == ["untrusted", "on-failure", "on-request", "never"]
    # Codex's unset personality is its configured default, pragmatic.
    assert spec["personalities"]["unset"]["fills"] == "pragmatic"
    # Environment values became placeholders: no scratch path survives in any text.
    texts = [p.read_text() for p in (spec_dir / "texts").rglob("*.md")]
    assert texts and not any("promptspec-codex-" in t for t in texts)
    assert any("{{ cwd }}" in t for t in texts)
    # One file per distinct text.
    assert len(texts) == len(set(texts))
    prov = json.loads((spec_dir / "provenance.json").read_text())
    assert prov["codex_release"] == PINNED
    assert set(prov["texts"]) == {p.relative_to(spec_dir).as_posix() for p in (spec_dir / "texts").rglob("*.md")}


def test_no_rule_is_set_and_then_overridden(imported):
    """Only the residue over the documented defaults is written: no `null`
    followed by the value, no two rules for one key under one `when`."""
    spec_dir, _ = imported
    spec = yaml.safe_load((spec_dir / "spec.yaml").read_text())
    seen = set()
    for rule in (spec.get("request") or {}).get("rules", []):
        when = json.dumps(rule.get("when", {}), sort_keys=True)
        for key in rule.get("params", {}):
            assert (when, key) not in seen, f"{key} is set twice under {when}"
            seen.add((when, key))
        if "order" in rule:
            assert (when, "<order>") not in seen
            seen.add((when, "<order>"))
    for path in (spec_dir / "tools").glob("*.json"):
        assert not path.stem.rsplit("-", 1)[-1].isdigit(), f"{path.name}: numbered, not named for what differs"
        tool = json.loads(path.read_text())
        sent = tool["definition"].get("name", tool["definition"]["type"])
        if path.stem != sent:  # one of several definitions of that tool: the description says what sets it apart
            assert tool["description"].startswith(f"{sent}, one of ") and ": " in tool["description"]
        else:
            assert tool["description"] == f"A tool Codex sends ({sent})."


def test_imported_spec_lints_strict_clean(imported, capsys):
    spec_dir, _ = imported
    assert main(["lint", "--spec", str(spec_dir), "--strict"]) == 0


def test_render_prints_the_configuration(imported, capsys):
    spec_dir, _ = imported
    rc = main(["render", "--spec", str(spec_dir), "--model", MODEL, "--personality", "none", "--mode", "plan",
               "--axis", "sandbox_mode=read-only", "--axis", "approval_policy=never", "--format", "json"])
    assert rc == 0
    body = json.loads(capsys.readouterr().out)
    dev, user = body["input"]
    texts = [c["text"] for c in dev["content"]]
    assert texts[0].startswith("<permissions instructions>") and "`read-only`" in texts[0]
    assert texts[1].startswith("<collaboration_mode># Plan Mode")
    assert user["content"][0]["text"].startswith("# AGENTS.md instructions for /home/user/project")


def test_mode_unset_sends_no_collaboration_mode(imported, capsys):
    spec_dir, _ = imported
    assert main(["render", "--spec", str(spec_dir), "--model", MODEL, "--personality", "unset", "--mode", "unset",
                 "--format", "json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert not any(c["text"].startswith("<collaboration_mode>") for c in body["input"][0]["content"])


def test_only_imports_that_part_of_the_matrix_as_the_whole_import_has_it(codex, imported, tmp_path, capsys):
    """`--only`: the configurations captured are those values' (3 modes x 3
    sandboxes here, 9 of 144), the spec's matrix is that part, every variant
    renders as the same variant of the whole model's import does, and the
    release verifies it."""
    from promptspec.assemble import assemble
    from promptspec.assemble.export import responses_payload
    from promptspec.assemble.matrix import matrix
    from promptspec.spec import load_spec

    whole, _ = imported
    out = tmp_path / "part"
    assert main(["import-codex", "--cli", str(codex), "--out", str(out), "--model", MODEL,
                 "--only", "approval_policy=on-request", "--only", "personality=friendly,unset"]) == 0
    assert "18 of 18 captured first requests reproduced" in capsys.readouterr().out
    spec = yaml.safe_load((out / "spec.yaml").read_text())
    assert list(spec["personalities"]) == ["unset", "friendly"]  # the matrix's order, not the flag's
    assert list(spec["modes"]) == ["unset", "default", "plan"]
    assert spec["axes"] == {"sandbox_mode": ["read-only", "workspace-write", "danger-full-access"], "approval_policy": ["on-request"]}
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["only"] == {"personality": ["unset", "friendly"], "approval_policy": ["on-request"]}
    assert prov["configurations_captured"] == 18
    part_spec, whole_spec = load_spec(out), load_spec(whole)
    by_id = {v.id: v for v in matrix(whole_spec)}
    variants = matrix(part_spec)
    assert len(variants) == 18
    for v in variants:
        assert responses_payload(assemble(part_spec, v)) == responses_payload(assemble(whole_spec, by_id[v.id])), v.id
    assert main(["verify", "--cli", str(codex), "--spec", str(out), "--threads", "0"]) == 0
    assert "18 of 18 compared variants identical" in capsys.readouterr().out


@pytest.mark.parametrize("only, message", [
    (["model=gpt-5.4"], "--only: no axis 'model' (known: personality, mode, sandbox_mode, approval_policy; a model: --model SLUG)"),
    (["colour=red"], "--only: no axis 'colour'"),
    (["mode=execute"], "--only: mode has no value 'execute' (known: unset, default, plan)"),
    (["mode"], "expected AXIS=VALUE[,VALUE...]"),
    (["mode="], "expected AXIS=VALUE[,VALUE...]"),
    (["mode=plan", "mode=default"], "axis 'mode' is given twice"),
])
def test_only_refuses_what_is_no_part_of_the_matrix(codex, tmp_path, capsys, only, message):
    err = _run_import(codex, tmp_path / "spec", capsys, *[a for o in only for a in ("--only", o)])
    assert message in err


@pytest.mark.parametrize("only, message", [
    (["mode=plan"], "switch to mode unset, default; give --only mode=unset,default,plan or leave mode out of --only"),
    (["personality=unset,friendly,none", "approval_policy=on-request,untrusted"],
     "switch to approval_policy never; give --only approval_policy=untrusted,on-request,never"),
])
def test_later_turns_refuse_a_part_their_threads_leave(codex, tmp_path, capsys, only, message):
    err = _run_import(codex, tmp_path / "spec", capsys, *[a for o in only for a in ("--only", o)], "--later-turns")
    assert message in err


def test_only_goes_with_cli(tmp_path, capsys):
    rc = main(["import-codex", str(tmp_path), "--out", str(tmp_path / "spec"), "--only", "mode=plan"])
    assert rc == 2 and "--only" in capsys.readouterr().err


# ---------------------------------------------------------------------------
# Bad input: one line, exit 2, nothing written


def _script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _run_import(cli: Path, out: Path, capsys, *extra: str) -> str:
    rc = main(["import-codex", "--cli", str(cli), "--out", str(out), *extra])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert len(err.strip().splitlines()) == 1, err
    assert not out.exists()
    return err


def test_no_binary(tmp_path, capsys):
    err = _run_import(tmp_path / "nowhere", tmp_path / "out", capsys)
    assert "no such file or folder" in err and "npm install" in err


def test_not_codex(tmp_path, capsys):
    cli = _script(tmp_path / "codex", 'echo "hello 1.0"\n')
    err = _run_import(cli, tmp_path / "out", capsys)
    assert "not a Codex CLI" in err


def test_too_old(tmp_path, capsys):
    cli = _script(tmp_path / "codex", 'echo "codex-cli 0.99.0"\n')
    assert "codex 0.99.0" in _run_import(cli, tmp_path / "out", capsys)


def test_missing_subcommand(tmp_path, capsys):
    cli = _script(tmp_path / "codex", 'if [ "$1" = --version ]; then echo "codex-cli 0.130.0"; exit 0; fi\n'
                                      "echo \"error: unrecognized subcommand '$1'\" >&2; exit 2\n")
    err = _run_import(cli, tmp_path / "out", capsys)
    assert "codex 0.130.0" in err and "not available in this release" in err


def test_nonzero_exit(tmp_path, capsys):
    cli = _script(tmp_path / "codex", 'if [ "$1" = --version ]; then echo "codex-cli 0.130.0"; exit 0; fi\n'
                                      'echo "boom: broken install" >&2; exit 7\n')
    err = _run_import(cli, tmp_path / "out", capsys)
    assert "exited with status 7" in err and "boom: broken install" in err


def test_unparseable_output(tmp_path, capsys):
    cli = _script(tmp_path / "codex", 'if [ "$1" = --version ]; then echo "codex-cli 0.130.0"; exit 0; fi\n'
                                      'echo "not json at all"\n')
    assert "not JSON" in _run_import(cli, tmp_path / "out", capsys)


def test_hang_times_out(tmp_path, capsys):
    cli = _script(tmp_path / "codex", 'if [ "$1" = --version ]; then echo "codex-cli 0.130.0"; exit 0; fi\n'
                                      "exec sleep 30\n")
    err = _run_import(cli, tmp_path / "out", capsys, "--timeout", "1")
    assert "did not finish within 1 s" in err


def test_port_in_use(codex, tmp_path, capsys):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        # --no-cache: from the capture cache (the session's earlier imports) no recorder would be needed
        err = _run_import(codex, tmp_path / "out", capsys, "--port", str(port), "--model", MODEL, "--no-cache")
    assert f"codex {PINNED}" in err and "cannot start" in err


def test_existing_folder_is_not_replaced(codex, tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "mine.txt").write_text("keep me")
    rc = main(["import-codex", "--cli", str(codex), "--out", str(out), "--model", MODEL])
    assert rc == 2 and "not empty" in capsys.readouterr().err
    assert (out / "mine.txt").read_text() == "keep me"


def test_environment_is_scratch_only(codex, monkeypatch, tmp_path):
    """A real ~/.codex and API keys stay out: the run sees none of the caller's environment."""
    from promptspec.oracle.scratch import make_scratch, remove_scratch

    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-leak")
    s = make_scratch()
    try:
        env = s.env(identify(codex))
        assert not any(k.startswith(("OPENAI", "AZURE")) for k in env)
        assert env["HOME"].startswith(str(s.base)) and env["CODEX_HOME"].startswith(str(s.base))
    finally:
        remove_scratch(s)


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_reimport_takes_the_checked_spec_from_the_cache(codex, imported, tmp_path, monkeypatch):
    """The same answers and the same code: the spec an earlier import wrote and
    checked is written again without building or checking it; another version
    of promptspec builds and checks it afresh (and gets the same files)."""
    from promptspec.importers.codex_cli import importer

    spec, _ = imported  # the session's import filled the capture cache
    _, again = importer.import_cli(codex, tmp_path / "again", models=(MODEL,))
    assert again["spec_from_cache"] and again["pool"].captured == 0
    assert again["reproduced"] == again["compared"] > 0
    assert _files(tmp_path / "again") == _files(spec)

    def no_build(h):
        raise AssertionError("built although the cache holds the spec")

    monkeypatch.setattr(importer, "build", no_build)
    importer.import_cli(codex, tmp_path / "third", models=(MODEL,))
    monkeypatch.undo()

    monkeypatch.setattr(importer, "code_fingerprint", lambda: "another promptspec")
    _, other = importer.import_cli(codex, tmp_path / "other", models=(MODEL,))
    assert not other["spec_from_cache"] and other["reproduced"] == other["compared"]
    assert _files(tmp_path / "other") == _files(spec)


@pytest.mark.parametrize("entry", [
    None, "text", {"files": {}, "not_modelled": [], "reproduced": 1, "compared": 1},
    {"files": {"spec.yaml": "x"}, "not_modelled": [], "reproduced": 1, "compared": 2},
    {"files": {"spec.yaml": 3}, "not_modelled": [], "reproduced": 1, "compared": 1},
    {"files": {"spec.yaml": "x"}, "not_modelled": "none", "reproduced": 1, "compared": 1},
])
def test_a_broken_or_failed_cache_entry_is_a_miss(entry):
    from promptspec.importers.codex_cli.importer import _kept

    assert _kept(entry) is None
    assert _kept({"files": {"spec.yaml": "x"}, "not_modelled": [], "reproduced": 2, "compared": 2}) is not None
