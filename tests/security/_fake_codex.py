#!/usr/bin/env python3
"""A stand-in `codex` binary (it says 0.125.0) for the importer's attack tests.

Its behaviour comes from `behaviour.json` beside it:
  slug          the first model's slug                      (default "m1")
  extra_models  how many more models the catalog lists      (default 0)
  flood_mb      `debug models` prints this many MiB of junk instead of JSON
  hang          app-server answers nothing (the import waits)
  instr         the developer text it sends, when not the catalog's (so the
                import stores it as a file named after the slug)
It answers `--version`, `debug models` and just enough `app-server` JSON-RPC
(initialize, thread/start, turn/start) to post one Responses request per turn
to the URL in its `-c ...base_url=` flag.
"""
import json
import os
import sys
import time
import urllib.request

here = os.path.dirname(os.path.realpath(__file__))
try:
    with open(os.path.join(here, "behaviour.json"), encoding="utf-8") as fh:
        how = json.load(fh)
except FileNotFoundError:
    how = {}
argv = sys.argv[1:]
if argv == ["--version"]:
    print("codex-cli 0.125.0")
    sys.exit(0)
slug = how.get("slug", "m1")
models = [{"slug": slug, "display_name": "M", "context_window": 100000, "base_instructions": "You are a test model.\n"}]
models += [{"slug": f"extra{i}", "display_name": "M", "context_window": 100000, "base_instructions": "x\n"} for i in range(how.get("extra_models", 0))]
if argv[-2:] == ["debug", "models"]:
    if how.get("flood_mb"):
        block = "z" * (1 << 20)
        for _ in range(how["flood_mb"]):
            sys.stdout.write(block)
        sys.exit(0)
    print(json.dumps({"models": models}))
    sys.exit(0)
if "app-server" not in argv:
    sys.exit(1)
if how.get("hang"):
    time.sleep(600)
base = next(a.split("=", 1)[1].strip('"') for a in argv if "promptspec_local.base_url=" in a)


def reply(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


threads = 0
for raw in sys.stdin:
    msg = json.loads(raw)
    if msg.get("id") is None:
        continue
    if msg["method"] == "initialize":
        reply({"id": msg["id"], "result": {}})
    elif msg["method"] == "thread/start":
        threads += 1
        reply({"id": msg["id"], "result": {"thread": {"id": f"thread-{os.getpid()}-{threads}"}}})
    elif msg["method"] == "turn/start":
        tid = msg["params"]["threadId"]
        reply({"id": msg["id"], "result": {"turn": {"id": "t-" + tid}}})
        body = {"model": slug, "input": [
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": how.get("instr", "You are a test model.\n")}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hello"}]}],
            "tools": [], "prompt_cache_key": tid, "stream": True}
        req = urllib.request.Request(base + "/responses", data=json.dumps(body).encode(), method="POST",
                                     headers={"content-type": "application/json"})
        try:
            urllib.request.urlopen(req, timeout=10).read()
        except OSError as exc:
            sys.stderr.write(f"post failed: {exc}\n")
        reply({"method": "turn/completed", "params": {"threadId": tid}})
    else:
        reply({"id": msg["id"], "error": {"message": "unknown method"}})
