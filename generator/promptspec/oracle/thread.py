"""Capturing every request of multi-turn threads from a released Codex.

One app-server runs the threads one after another (`thread/start`, then per
step `turn/start` with the step's overrides, or `thread/compact/start`), and
the loopback recorder keeps every request in order.  Before each turn the
recorder is told what `usage.total_tokens` its answer reports, which is how a
thread reaches Codex's auto-compaction threshold without sending that many
tokens.  The standard threads (`standard_threads`) are the set import and
verify both use: two turns, each kind of switch, a skill mention, manual and
automatic compaction.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from .appserver import AppServer
from .binary import CodexBinary, CodexError
from .capture import COMPLETION_GRACE, UNSET, Config
from .recorder import REPLY_TEXT, Recorder, start_recorder
from .scratch import Scratch, provider_overrides

SMALL_USAGE = 2
SUBFOLDER = "pkg"
"""A folder of the scratch project with an AGENTS.md of its own, for a cwd switch."""
SUBFOLDER_DOC = "# Package rules\n\nKeep functions short.\n"
CUSTOM_COMPACT_PROMPT = "Summarise the session so far in three lines for the next agent."
"""Our own text for the `compact_prompt` thread (never Codex's)."""


@dataclass(frozen=True)
class ThreadStep:
    """One step: a user turn (`text`, turn/start overrides in Codex's names,
    the usage its answer reports) or a manual compaction."""

    text: str = ""
    overrides: tuple[tuple[str, str], ...] = ()  # turn/start params, values as JSON
    usage: int = SMALL_USAGE
    compact: bool = False
    skills: tuple[str, ...] = ()  # explicit skill input items (names of bundled skills)

    def params(self) -> dict[str, Any]:
        return {k: json.loads(v) for k, v in self.overrides}


@dataclass(frozen=True)
class Thread:
    name: str
    config: Config
    steps: tuple[ThreadStep, ...]
    thread_config: tuple[tuple[str, str], ...] = ()  # more thread/start config keys (values as JSON)


@dataclass
class ThreadCapture:
    thread: Thread
    bodies: list[dict[str, Any]] = field(default_factory=list)
    refused: str | None = None


def _json(**params: Any) -> tuple[tuple[str, str], ...]:
    return tuple((k, json.dumps(v, sort_keys=True)) for k, v in params.items())


def collaboration(mode: str, model: str) -> dict[str, Any]:
    return {"mode": mode, "settings": {"model": model, "reasoning_effort": None, "developer_instructions": None}}


SANDBOX_POLICY = {"read-only": {"type": "readOnly"}, "workspace-write": {"type": "workspaceWrite"},
                  "danger-full-access": {"type": "dangerFullAccess"}}


FAMILY_FIELD = "comp_hash"
"""The catalog field whose value groups Codex's models into compaction
families (a switch across two values compacts first, in releases that do)."""


def families(catalog: dict[str, Any], field: str = FAMILY_FIELD) -> dict[str, Any]:
    """slug -> the model's compaction family (`field` of its catalog entry)."""
    return {m.get("slug"): m.get(field) for m in catalog.get("models", []) if isinstance(m, dict)}


def standard_threads(cfg: Config, catalog: dict[str, Any], skill: str | None, cwd: str, family_field: str = FAMILY_FIELD,
                     models_in: Iterable[str] | None = None) -> list[Thread]:
    """The standard set for one starting configuration (see the module docstring);
    model switches go to models in `models_in` (default: the whole catalog)."""
    wanted = None if models_in is None else set(models_in)
    models = [m for m in catalog["models"] if isinstance(m, dict) and "slug" in m and (wanted is None or m["slug"] in wanted)]
    me = next((m for m in models if m["slug"] == cfg.model), {})
    same = [m["slug"] for m in models if m["slug"] != cfg.model and m.get(family_field) == me.get(family_field)]
    other = [m["slug"] for m in models if m.get(family_field) != me.get(family_field)]
    limit = me.get("auto_compact_token_limit") or (me.get("context_window") or 0) * 9 // 10
    hello, again = ThreadStep("hello"), ThreadStep("again")
    t: list[Thread] = [Thread("two-turns", cfg, (hello, again))]

    def switch(name: str, **params: Any) -> None:
        t.append(Thread(name, cfg, (hello, ThreadStep("again", _json(**params)))))

    if same:
        switch("model-within-family", model=same[0])
    if other:
        switch("model-across-families", model=other[0])
    for personality in ("friendly", "none"):
        if personality != cfg.personality:
            switch(f"personality-{personality}", personality=personality)
    if cfg.mode == UNSET:
        switch("mode-from-unset", collaborationMode=collaboration("plan", cfg.model))
    else:
        there = "plan" if cfg.mode != "plan" else "default"
        t.append(Thread("mode-switch-and-back", cfg, (
            hello, ThreadStep("switch", _json(collaborationMode=collaboration(there, cfg.model))),
            ThreadStep("back", _json(collaborationMode=collaboration(cfg.mode, cfg.model))))))
    sandbox = "read-only" if cfg.sandbox_mode != "read-only" else "workspace-write"
    switch("sandbox", sandboxPolicy=SANDBOX_POLICY[sandbox])
    switch("approval", approvalPolicy="never" if cfg.approval_policy != "never" else "on-request")
    switch("cwd", cwd=f"{cwd}/{SUBFOLDER}")
    # A new folder under full access: the permissions stay, so the folder's context
    # messages follow one another (a release may send them as one message).
    if cfg.sandbox_mode != "danger-full-access":
        t.append(Thread("cwd-unrestricted", cfg, (hello, ThreadStep("open", _json(sandboxPolicy=SANDBOX_POLICY["danger-full-access"])),
                                                  ThreadStep("again", _json(cwd=f"{cwd}/{SUBFOLDER}")))))
    if skill:
        t.append(Thread("skill-mention", cfg, (ThreadStep(f"use ${skill} please"),)))
    t.append(Thread("compact-manual", cfg, (hello, ThreadStep(compact=True), again)))
    t.append(Thread("compact-prompt", cfg, (hello, ThreadStep(compact=True), again),
                    _json(compact_prompt=CUSTOM_COMPACT_PROMPT)))
    if limit:
        t.append(Thread("compact-auto", cfg, (ThreadStep("hello", usage=limit), again)))
        t.append(Thread("compact-below", cfg, (ThreadStep("hello", usage=limit - 1), again)))
        t.append(Thread("compact-configured", cfg, (ThreadStep("hello", usage=5000), again),
                        _json(model_auto_compact_token_limit=5000)))
    return t


def bundled_skill(scratch: Scratch) -> str | None:
    """The first bundled skill unpacked into CODEX_HOME (after a first start), by name."""
    folder = scratch.codex_home / "skills" / ".system"
    names = sorted(p.parent.name for p in folder.glob("*/SKILL.md")) if folder.is_dir() else []
    return names[0] if names else None


def capture_threads(binary: CodexBinary, scratch: Scratch, threads: Iterable[Thread], timeout: float = 60.0,
                    port: int = 0) -> Iterator[ThreadCapture]:
    """Every request of each thread, in order, through one app-server."""
    threads = list(threads)
    if not threads:
        return
    sub = scratch.cwd / SUBFOLDER
    sub.mkdir(exist_ok=True)
    (sub / "AGENTS.md").write_text(SUBFOLDER_DOC, encoding="utf-8")
    steps = sum(len(t.steps) + 2 for t in threads)
    rec = start_recorder(binary.release, 2 * steps + 10, 120.0 + 10.0 * steps, port)
    try:
        with AppServer(binary, scratch, provider_overrides(rec.url), timeout=timeout) as srv:
            srv.initialize()
            for thread in threads:
                yield _run(srv, rec, scratch, thread, timeout)
    finally:
        rec.stop()


def _run(srv: AppServer, rec: Recorder, scratch: Scratch, thread: Thread, timeout: float) -> ThreadCapture:
    cfg = thread.config
    config = {**cfg.codex_config(), **{k: json.loads(v) for k, v in thread.thread_config}}
    out = ThreadCapture(thread)
    seen = len(rec.requests)
    try:
        started = srv.request("thread/start", {"cwd": str(scratch.cwd), "ephemeral": True, "model": cfg.model, "config": config})
    except CodexError as exc:
        out.refused = str(exc)
        return out
    tid = started["thread"]["id"]
    for n, step in enumerate(thread.steps):
        rec.usage_total = step.usage
        try:
            if step.compact:
                srv.request("thread/compact/start", {"threadId": tid})
            else:
                items: list[dict[str, Any]] = [{"type": "text", "text": step.text, "text_elements": []}]
                items += [{"type": "skill", "name": s, "path": str(scratch.codex_home / "skills" / ".system" / s / "SKILL.md")}
                          for s in step.skills]
                params: dict[str, Any] = {"threadId": tid, "input": items, **step.params()}
                if n == 0 and cfg.mode != UNSET and "collaborationMode" not in params:
                    params["collaborationMode"] = collaboration(cfg.mode, cfg.model)
                srv.request("turn/start", params)
            srv.wait_for("turn/completed", {"threadId": tid}, max(timeout, COMPLETION_GRACE))
        except CodexError as exc:
            out.refused = f"step {n + 1}: {exc}"
            break
    rec.usage_total = SMALL_USAGE
    out.bodies = [r.body for r in rec.requests[seen:] if isinstance(r.body, dict)]
    return out


def reply_text() -> str:
    """The answer every turn gets: scripts compared with captures use it as each `reply`."""
    return REPLY_TEXT
