"""The user's world (oracle/world.py) without a Codex: which config values
become spec text, and how verify reads back the world an import recorded."""

from __future__ import annotations

import pytest

from promptspec.errors import UsageError
from promptspec.oracle.world import make_world, recorded_world


def test_only_prose_keys_become_spec_values():
    world = make_world(None, None, ['web_search="disabled"', 'model_reasoning_summary="detailed"',
                                    'developer_instructions="Keep every change small."'])
    # A switch whose value happens to be a word is not text to turn back into a placeholder.
    assert world.text_values() == {"developer_instructions": "Keep every change small."}


def test_the_recorded_world_gives_the_same_flags(tmp_path):
    (tmp_path / "proj").mkdir()
    (tmp_path / "home").mkdir()
    world = make_world(tmp_path / "proj", tmp_path / "home", ["project_doc_max_bytes=100", 'web_search="live"'],
                       ("view_image",), ("unified_exec",))
    again = recorded_world(world.record())
    assert again is not None and again.args() == world.args()
    assert (again.cwd, again.codex_home) == (world.cwd, world.codex_home)
    assert recorded_world({}) is None and recorded_world(None) is None


@pytest.mark.parametrize("record, said", [
    ({"config_overrides": ["mcp_servers.x.env.TOKEN=<redacted>"]}, "mcp_servers.x.env.TOKEN"),
    ({"cwd": "/nonexistent/promptspec-project"}, "--cwd /nonexistent/promptspec-project"),
    ({"config_overrides": ["web_search=not toml"]}, "does not apply"),
])
def test_a_world_that_cannot_be_replayed_is_one_line(record, said):
    with pytest.raises(UsageError) as exc:
        recorded_world(record, "spec/provenance.json")
    text = str(exc.value)
    assert said in text and "spec/provenance.json" in text and "\n" not in text


def test_a_server_is_missing_only_where_a_request_would_show_it():
    from promptspec.oracle.binary import CodexError
    from promptspec.oracle.world import check_mcp

    world = make_world(None, None, ['mcp_servers.notebook.command="x"'])
    code_mode = {"input": [{"type": "additional_tools", "tools": []}]}
    search = {"type": "tool_search", "description": "Sources:\n- Multi-agent tools: spawn.\n- notebook\nSome may not..."}
    # A code-mode request keeps MCP tools behind exec: the server is not modelled, not refused.
    assert check_mcp(world, [code_mode], "9.9.9") == ["notebook"]
    # Named by the tool_search description, listed in <tools>, or sent: shown.
    assert check_mcp(world, [{"tools": [search], "input": []}], "9.9.9") == []
    assert check_mcp(world, [{"tools": [], "input": [{"type": "message", "content": [{"text": "<tools>\n- mcp__notebook\n</tools>"}]}]}], "9.9.9") == []
    with pytest.raises(CodexError) as exc:
        check_mcp(world, [{"tools": [{"type": "function", "name": "shell"}], "input": []}], "9.9.9")
    assert "MCP server 'notebook' did not start" in str(exc.value)


def test_which_servers_a_first_request_defers():
    from promptspec.oracle.mcp import deferred_servers

    world = make_world(None, None, ['mcp_servers.alpha.command="x"', 'mcp_servers.beta.command="x"', 'mcp_servers.gamma.command="x"'])
    body = {"tools": [{"type": "function", "name": "mcp__alpha__ping"},
                      {"type": "tool_search", "description": "Sources:\n- beta\n"}],
            "input": [{"type": "message", "content": [{"text": "<tools>\nDeferred tool namespaces:\n- mcp__gamma\n</tools>"}]}]}
    # alpha's tools are sent; beta is a tool_search source (0.150.0), gamma a listed namespace (0.171.0).
    assert deferred_servers(world, body) == ["beta", "gamma"]
    assert deferred_servers(world, {"tools": [], "input": []}) == []
