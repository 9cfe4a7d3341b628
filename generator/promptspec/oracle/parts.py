"""Cutting a captured Codex request into named parts, and sentinels back into placeholders.

Both the importer (which learns the rules from many requests) and verify
(which compares one request with promptspec's) see a request the same way:
`instructions`, then input items, each message a list of named content parts,
with the documented volatile fields removed and the turn's own prompt split off.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping

VOLATILE_BODY = ("prompt_cache_key", "client_metadata")
VOLATILE_ITEM = ("id",)
VOLATILE_METADATA = ("create_time", "turn_id")
METADATA_KEY = "internal_chat_message_metadata_passthrough"
PARAMS = ("model", "tool_choice", "parallel_tool_calls", "reasoning", "store", "stream", "include", "text")

MARKERS = (
    ("<permissions instructions>", "permissions"),
    ("<skills_instructions>", "skills"),
    ("<collaboration_mode>", "collaboration_mode"),
    ("# AGENTS.md instructions", "agents_md"),
    ("<environment_context>", "environment_context"),
    ("<multi_agent_mode>", "multi_agent_mode"),
    ("<multi_agent_role>", "multi_agent_role"),
    ("<tools>", "deferred_tools"),
    ("You are `/root`", "multi_agent_usage"),
    ("<apps_instructions>", "apps"),
    ("<plugins_instructions>", "plugins"),
    ("<personality_spec>", "personality_spec"),
    ("<model_switch>", "model_switch"),
    ("<context_window_guidance>", "context_window_guidance"),
)


def part_name(text: str) -> str | None:
    for marker, name in MARKERS:
        if text.startswith(marker):
            return name
    return None


@dataclass(frozen=True)
class Item:
    kind: str  # "message" or the item's type
    role: str
    parts: tuple[tuple[str, str], ...]  # (name, text); for other items: ((type, canonical json),)
    metadata: str = ""  # canonical JSON of the item's non-volatile metadata, if any
    fields: str = ""
    """Canonical JSON of the item's other keys (an answer's `status`) and its parts' (`annotations`), when any."""


@dataclass(frozen=True)
class Parsed:
    instructions: str | None
    items: tuple[Item, ...]
    prompt: str | None
    tools: str  # canonical JSON, "" when absent
    params: str  # canonical JSON of the request parameters
    keys: tuple[str, ...] = ()  # the body's keys in send order (volatile ones left out)


def canonical(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _metadata(item: Mapping[str, Any]) -> str:
    meta = item.get(METADATA_KEY)
    if not isinstance(meta, dict):
        return ""
    return canonical({k: v for k, v in meta.items() if k not in VOLATILE_METADATA})


def _fields(item: Mapping[str, Any]) -> str:
    own = {k: v for k, v in item.items() if k not in ("type", "role", "content", METADATA_KEY, *VOLATILE_ITEM)}
    parts = [{k: v for k, v in c.items() if k not in ("type", "text")} for c in item.get("content") or [] if isinstance(c, dict)]
    if not own and not any(parts):
        return ""
    return canonical({"item": own, "parts": parts})


def parse(body: Mapping[str, Any], prompt: str | None = None) -> Parsed:
    """The request as parts; the last user message is the prompt when it equals `prompt`."""
    items = list(body.get("input") or [])
    got_prompt = None
    if items and prompt is not None:
        last = items[-1]
        content = last.get("content") if isinstance(last, dict) else None
        if (last.get("type") == "message" and last.get("role") == "user" and isinstance(content, list)
                and len(content) == 1 and content[0].get("text") == prompt):
            got_prompt = prompt
            items = items[:-1]
    out = []
    unnamed = 0
    for item in items:
        if item.get("type") == "message":
            parts = []
            for c in item.get("content") or []:
                text = c.get("text", "") if c.get("type") in ("input_text", "output_text") else canonical(c)
                name = part_name(text)
                if name is None:
                    if item.get("role") == "developer" and "instructions" not in body and not any(
                            i.kind == "message" and i.role == "developer" for i in out):
                        name = "base_instructions"
                    else:
                        unnamed += 1
                        name = f"part_{unnamed}"
                parts.append((name, text))
            out.append(Item("message", item.get("role", ""), tuple(parts), _metadata(item), _fields(item)))
        else:
            rest = {k: v for k, v in item.items() if k not in VOLATILE_ITEM}
            out.append(Item(str(item.get("type")), str(item.get("role", "")), ((str(item.get("type")), canonical(rest)),)))
    params = {k: body[k] for k in body if k not in ("input", "instructions", "tools", *VOLATILE_BODY)}
    return Parsed(body.get("instructions"), tuple(out), got_prompt,
                  canonical(body["tools"]) if "tools" in body else "", canonical(params),
                  tuple(k for k in body if k not in VOLATILE_BODY))


# ---------------------------------------------------------------------------
# Sentinels


ENVIRONMENT = ("cwd", "home", "codex_home", "project_root", "current_date", "timezone", "shell")


def to_placeholders(text: str, sentinels: Mapping[str, str]) -> str:
    """Turn the scratch world's values back into `{{ name }}` placeholders.
    Sentinels beyond the environment's are config texts a user passed
    (`-c developer_instructions=...`): replaced wherever they appear, first."""
    out = text
    for name, value in sorted(sentinels.items(), key=lambda kv: -len(kv[1] or "")):
        if name not in ENVIRONMENT and value:
            out = out.replace(value, "{{ " + name + " }}")
    for name in ("cwd", "home"):  # cwd first: both live under the same scratch folder
        value = sentinels.get(name)
        if value:
            out = out.replace(value, "{{ " + name + " }}")
    for tag, name in (("current_date", "current_date"), ("timezone", "timezone"), ("shell", "shell")):
        value = sentinels.get(name)
        if value:
            out = out.replace(f"<{tag}>{value}</{tag}>", f"<{tag}>{{{{ {name} }}}}</{tag}>")
    return out

