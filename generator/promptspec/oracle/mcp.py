"""The definitions of a user's MCP tools where a release defers them.

Older releases send an MCP server's tools in the first request (`mcp__NAME__TOOL`
functions).  Newer ones only list the server's namespace (`- mcp__NAME` in a
`<tools>` section) and give the model a `tool_search` tool that loads it.  The
definition then exists only in Codex's answer to a search, so a thread is
driven to one: the recorder answers the first request with a `tool_search`
call for the server's name, Codex runs the search over the tools it got from
the server it started, and its second request carries the loaded namespace
(a `tool_search_output` item), exactly as the model would be sent it.  That
definition becomes a deferred tool file in the imported spec.
"""

from __future__ import annotations

import json
from typing import Any

from .appserver import AppServer
from .binary import CodexBinary, CodexError
from .recorder import start_recorder
from .scratch import PROMPT, Scratch, provider_overrides
from .world import World, mcp_servers, searchable_servers

SEARCH_LIMIT = 1000
"""Tools one search may return: every tool a server lists, not the release's default handful."""
CALL_ID = "call_promptspec_mcp"


def deferred_servers(world: World | None, body: Any) -> list[str]:
    """The configured servers the first request names as deferred instead of
    sending their tools: a `- mcp__NAME` line of a `<tools>` section (0.171.0),
    or a `- NAME` source in the `tool_search` description (around 0.150).
    None on releases that send the tools."""
    if not isinstance(body, dict):
        return []
    sent = json.dumps(body.get("tools") or []) + json.dumps([i for i in body.get("input") or [] if isinstance(i, dict) and i.get("type") != "message"])
    listed = json.dumps(body.get("input") or [])
    searchable = searchable_servers(body)
    return [n for n in mcp_servers(world) if f"mcp__{n}__" not in sent and f'"name": "mcp__{n}"' not in sent
            and (f"- mcp__{n}" in listed or n in searchable)]


def _search(name: str) -> Any:
    def answer(body: Any) -> list[dict[str, Any]] | None:
        searched = isinstance(body, dict) and any(isinstance(i, dict) and i.get("type") == "tool_search_output" for i in body.get("input") or [])
        if searched:
            return None
        return [{"type": "tool_search_call", "call_id": CALL_ID, "status": "completed", "execution": "client",
                 "arguments": {"query": name, "limit": SEARCH_LIMIT}}]
    return answer


def _loaded(body: Any, name: str) -> Any:
    for item in (body.get("input") or []) if isinstance(body, dict) else []:
        if isinstance(item, dict) and item.get("type") == "tool_search_output" and item.get("call_id") == CALL_ID:
            for tool in item.get("tools") or []:
                if isinstance(tool, dict) and tool.get("name") == f"mcp__{name}":
                    return tool
    return None


def deferred_definitions(binary: CodexBinary, scratch: Scratch, world: World | None, captured: list[tuple[str, Any]],
                         timeout: float, port: int = 0) -> dict[str, Any]:
    """Per deferred server, the namespace Codex loads for it (one search thread
    each, with the first captured (model, body) that names the server: a
    code-mode model may show no trace of it); a server whose search finds
    nothing is named in one line."""
    model_of: dict[str, str] = {}
    for model, body in captured:
        for name in deferred_servers(world, body):
            model_of.setdefault(name, model)
    names = sorted(model_of)
    out: dict[str, Any] = {}
    if not names:
        return out
    rec = start_recorder(binary.release, 4 * len(names) + 4, 60.0 + 10.0 * len(names), port)
    try:
        with AppServer(binary, scratch, provider_overrides(rec.url), timeout=timeout) as srv:
            srv.initialize()
            for name in names:
                rec.answer = _search(name)
                model = model_of[name]
                started = srv.request("thread/start", {"cwd": str(scratch.cwd), "ephemeral": True, "model": model,
                                                       "config": {"model": model}})
                tid = started["thread"]["id"]
                srv.request("turn/start", {"threadId": tid, "input": [{"type": "text", "text": PROMPT}]})
                try:
                    srv.wait_for("turn/completed", {"threadId": tid}, timeout)
                except CodexError:
                    raise CodexError(f"MCP server {name!r}: the tool_search that loads its deferred tools did not finish within {timeout:.0f} s",
                                     release=binary.release, hint="raise --timeout, or check the server's tools/list answer") from None
                found = next((d for d in (_loaded(r.body, name) for r in list(rec.requests)) if d is not None), None)
                if found is None:
                    raise CodexError(f"MCP server {name!r}: Codex lists it as deferred, but a tool_search for it loads no tools",
                                     release=binary.release, hint=f"check that mcp_servers.{name} lists tools; report the release")
                out[name] = found
    finally:
        rec.stop()
    return out
