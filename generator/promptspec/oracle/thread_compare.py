"""Comparing captured threads with a spec's conversations, request by request
(for `verify --cli` and the importer's self-check of later turns).

Each captured thread (oracle/thread.py) becomes a conversation script in the
spec's names (a turn/start override of `model`, `personality`,
`collaborationMode`, `sandboxPolicy`, `approvalPolicy` or `cwd` is a step's
`set:`; the recorder's answer is every `reply`; the usage it reported is the
step's `usage`), the spec renders that script, and every request is compared
with Codex's as a first request is: same parts, byte for byte, after the
documented volatile fields.  Thread-level config (`compact_prompt`,
`model_auto_compact_token_limit`) becomes a scenario value of the machine spec.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ..errors import SpecError
from .compare import compare
from .thread import Thread, ThreadCapture, reply_text

SANDBOX_NAMES = {"readOnly": "read-only", "workspaceWrite": "workspace-write", "dangerFullAccess": "danger-full-access"}


@dataclass
class ThreadResult:
    thread: str
    variant: str
    requests: int  # Codex's
    identical: bool
    request: int | None = None  # 1-based: the first request that differs
    part: str | None = None
    diff: str | None = None


def script_steps(thread: Thread) -> list[dict[str, Any]]:
    """The thread as a script's steps, in the spec's names."""
    steps: list[dict[str, Any]] = []
    for step in thread.steps:
        if step.compact:
            steps.append({"compact": True, "reply": reply_text()})
            continue
        params = step.params()
        changes: dict[str, Any] = {}
        if "model" in params:
            changes["model"] = params["model"]
        if "personality" in params:
            changes["personality"] = params["personality"]
        if "collaborationMode" in params and steps:
            changes["mode"] = params["collaborationMode"]["mode"]
        if "sandboxPolicy" in params:
            changes["sandbox_mode"] = SANDBOX_NAMES[params["sandboxPolicy"]["type"]]
        if "approvalPolicy" in params:
            changes["approval_policy"] = params["approvalPolicy"]
        if "cwd" in params:
            changes["cwd"] = params["cwd"]
        item: dict[str, Any] = {"user": step.text, "reply": reply_text(), "usage": step.usage, "summary": reply_text()}
        if changes:
            item["set"] = changes
        if step.skills:
            item["skills"] = list(step.skills)
        steps.append(item)
    return steps


def thread_spec(machine: Any, thread: Thread) -> Any:
    """The machine spec with the thread's own config (compact_prompt...) as scenario values."""
    if not thread.thread_config:
        return machine
    import json

    extra = {k: json.loads(v) for k, v in thread.thread_config}
    return dataclasses.replace(machine, scenario={**machine.scenario, **extra}, memo={})


def compare_thread(machine: Any, variant: Any, cap: ThreadCapture, compare_tools: bool) -> ThreadResult:
    from ..assemble.conversation import conversation
    from ..assemble.export import responses_payload
    from ..spec.readers.scripts import parse_script

    thread = cap.thread
    result = ThreadResult(thread.name, variant.id, len(cap.bodies), False)
    if cap.refused:
        result.part, result.diff = "thread", f"Codex refused it: {cap.refused}"
        return result
    spec = thread_spec(machine, thread)
    try:
        ours = conversation(spec, variant, parse_script(script_steps(thread), f"thread {thread.name}"))
    except SpecError as exc:
        result.part, result.diff = "script", exc.oneline()
        return result
    for n, (body, treq) in enumerate(zip(cap.bodies, ours), 1):
        outcome = compare(body, responses_payload(treq.request), None, compare_tools=compare_tools)
        if not outcome.identical:
            first = outcome.first
            result.request, result.part, result.diff = n, first.part if first else None, first.diff if first else None
            return result
    if len(cap.bodies) != len(ours):
        who = "Codex" if len(cap.bodies) > len(ours) else "promptspec"
        result.request = min(len(cap.bodies), len(ours)) + 1
        result.part, result.diff = "request", f"only {who} sends request {result.request} ({len(cap.bodies)} vs {len(ours)})"
        return result
    result.identical = True
    return result
