#!/usr/bin/env python3
"""A tiny stdio MCP server with one tool, for the import tests (written for promptspec).

Newline-delimited JSON-RPC on stdin/stdout: `initialize` (echoes the client's
protocolVersion), `tools/list` (one tool, `note_down`), `tools/call`, `ping`,
empty resource and prompt lists; anything else is -32601.  With the argument
`hang` it reads its input and never answers (the importer must give up and
name it).
"""

import json
import sys

TOOL = {
    "name": "note_down",
    "description": "Writes one line into the team's notebook.",
    "inputSchema": {"type": "object", "properties": {"line": {"type": "string", "description": "The line to keep."}},
                    "required": ["line"]},
}


def answer(mid, result=None, error=None):
    msg = {"jsonrpc": "2.0", "id": mid}
    msg.update({"error": error} if error else {"result": result})
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def main():
    hang = sys.argv[1:] == ["hang"]
    for line in sys.stdin:
        if hang:
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if "id" not in msg:
            continue  # a notification
        method, params = msg.get("method"), msg.get("params") or {}
        if method == "initialize":
            answer(msg["id"], {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                               "capabilities": {"tools": {"listChanged": False}},
                               "serverInfo": {"name": "notebook", "version": "1.0.0"}})
        elif method == "tools/list":
            answer(msg["id"], {"tools": [TOOL]})
        elif method == "tools/call":
            answer(msg["id"], {"content": [{"type": "text", "text": "noted"}], "isError": False})
        elif method == "ping":
            answer(msg["id"], {})
        elif method in ("resources/list", "resources/templates/list", "prompts/list"):
            key = {"resources/list": "resources", "resources/templates/list": "resourceTemplates", "prompts/list": "prompts"}[method]
            answer(msg["id"], {key: []})
        else:
            answer(msg["id"], error={"code": -32601, "message": f"no method {method}"})


if __name__ == "__main__":
    main()
