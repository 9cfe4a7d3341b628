#!/usr/bin/env python3
"""A stand-in `codex` binary (it says 0.125.0) for the importer's attack tests.

Its behaviour comes from `behaviour.json` beside it:
  slug          the first model's slug                      (default "m1")
  extra_models  how many more models the catalog lists      (default 0)
  flood_mb      `debug models` prints this many MiB of junk instead of JSON
  hang          app-server answers nothing (the import waits)
  instr         the developer text it sends, when not the catalog's (so the
                import stores it as a file named after the slug)
  echo          the developer text echoes what a capture depends on (the
                thread's config and cwd, the turn's overrides, HOME,
                CODEX_HOME, the value of `tone`, --enable/--disable flags,
                whether each configured writable root is a folder);
                a second model m2; approval_policy "untrusted" is refused;
                each start unpacks a bundled skill into CODEX_HOME and adds a
                line to `../starts.log` (outside the binary's folder), for
                the capture pool tests (tests/oracle/); the line ends in
                ` quiet` when the world is quiet (oracle/scratch.py)
  quiet         with echo: what the world sends shows whether it is quiet
                ("shows"; "shows-m2": for model m2 only), or a quiet
                app-server exits at once ("fails")
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
echo = how.get("echo")
quiet = "features.shell_snapshot=false" in argv
if echo:
    models.append({**models[0], "slug": "m2"})
    with open(os.path.join(here, "..", "starts.log"), "a", encoding="utf-8") as log:
        log.write(" ".join(argv[-2:]) + (" quiet" if quiet else "") + "\n")
    if quiet and how.get("quiet") == "fails" and "app-server" in argv:
        sys.exit(3)
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
flags = [a for a in argv if a in ("--enable", "--disable")]
if echo:
    skill = os.path.join(os.environ["CODEX_HOME"], "skills", ".system", "demo")
    os.makedirs(skill, exist_ok=True)
    with open(os.path.join(skill, "SKILL.md"), "w", encoding="utf-8") as fh:
        fh.write("# demo\n\nA bundled skill of the stand-in.\n")


def reply(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


threads = {}
for raw in sys.stdin:
    msg = json.loads(raw)
    if msg.get("id") is None:
        continue
    if msg["method"] == "initialize":
        reply({"id": msg["id"], "result": {}})
    elif msg["method"] == "thread/start":
        params = msg.get("params") or {}
        if echo and (params.get("config") or {}).get("approval_policy") == "untrusted":
            reply({"id": msg["id"], "error": {"message": "untrusted is not supported"}})
            continue
        tid = f"thread-{os.getpid()}-{len(threads) + 1}"
        threads[tid] = params
        reply({"id": msg["id"], "result": {"thread": {"id": tid}}})
    elif msg["method"] == "turn/start":
        tid = msg["params"]["threadId"]
        reply({"id": msg["id"], "result": {"turn": {"id": "t-" + tid}}})
        params, started = msg["params"], threads.get(tid, {})
        text = how.get("instr", "You are a test model.\n")
        if echo:
            text = json.dumps({"config": started.get("config"), "cwd": started.get("cwd"), "home": os.environ["HOME"],
                               "codex_home": os.environ["CODEX_HOME"], "tone": how.get("tone"), "flags": flags,
                               "turn": {k: v for k, v in params.items() if k not in ("threadId", "input")}, "long": "x" * 300,
                               "roots": {r: os.path.isdir(r) for r in ((started.get("config") or {}).get("sandbox_workspace_write")
                                                                       or {}).get("writable_roots", [])},
                               **({"quiet": quiet} if how.get("quiet") == "shows" or how.get("quiet") == "shows-" + started.get("model", "")
                                  else {})},
                              sort_keys=True)
        body = {"model": started.get("model", slug) if echo else slug, "input": [
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": text}]},
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
