"""What a thread keeps from its first model when the model changes.

Codex fixes some of a session when it starts: in 0.169.0 and 0.171.0 a
thread started with a model of the multi-agent v2 kind keeps that kind's
context messages and collaboration tools after a switch to a model of
another compaction family, while everything else (base instructions in
the update, the mode and skills texts, where the tools go) follows the new
model.  The switch across families compacts first, so the capture shows it
all in the rebuilt request.  Learned from that thread, as `turns.session`
(docs/spec-format.md):

- `tools`: the tools the request sends, or leaves out, against what the new
  model's own first request does, when the first model's requests do the
  same (and the one tool order, `tools.order`, merged with the request's);
- `layout`: the rebuilt initial context has the first model's messages;
- a message of that layout the new model's first request has no text for
  becomes a later fragment in its slot (it joins only rebuilt contexts),
  holding the release's text for the new model.

The same thread from a start of the other family (`learn_other_start`)
makes each rule hold in both directions: 0.171.0's gpt-5.5 start switching
to a v2 model keeps its layout and deferred-tools text (`session.slots`)
and sends no collaboration tool, but takes the new model's base
instructions (`session.base`), sends tool search only where both models
would (`session.tools: {NAME: both}`) and compacts with the turn's own
settings (`compaction.switch_when`).
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

import yaml

from .write_spec import ImportProblem

THREAD = "model-across-families"


def tools_item(body: dict[str, Any]) -> list[Any] | None:
    """The tool list of a body's leading additional_tools input item (None: no such item)."""
    first = (body.get("input") or [None])[0]
    return first.get("tools") if isinstance(first, dict) and first.get("type") == "additional_tools" else None


def without_tools_item(body: dict[str, Any]) -> dict[str, Any]:
    """The body with its input's tool list item left out: the history's messages only."""
    return {**body, "input": body["input"][1:]} if tools_item(body) is not None else body


def _sent_tools(body: dict[str, Any]) -> list[Any]:
    item = tools_item(body)
    return list(item) if item is not None else list(body.get("tools") or [])


def _texts(item: dict[str, Any]) -> list[str]:
    return [c.get("text", "") for c in item.get("content") or []]


def learn_session(learned: Any, caps: dict[str, Any], machine: Any, asm: Any, variant: Any, values: dict[str, str],
                  prompts: set[str], summary_of: Any) -> list[str] | None:
    """Fill `learned.turns["session"]` and the later fragments from the
    across-families thread; returns the merged `tools.order` to write (None:
    unchanged).  `prompts`: the thread's user texts; `summary_of(item)`: whether
    an input item is the compaction summary."""
    from ...assemble.conversation import request_after
    from ...assemble.layouts import choose_layout
    from ...oracle.thread_compare import script_steps
    from ...spec.readers.scripts import parse_script
    from .tools_spec import _merge_orders

    cap = caps.get(THREAD)
    if cap is None or cap.refused or len(cap.bodies) != 3:
        return None
    script = parse_script(script_steps(cap.thread), THREAD)
    start, now = request_after(machine, variant, script, 1, asm), request_after(machine, variant, script, 2, asm)
    if start.model == now.model:
        return None
    session: dict[str, Any] = {}
    # Tools: each sent definition is one of the spec's tools.
    by_definition = {json.dumps(t.definition, sort_keys=True): t.name for t in machine.tools}
    sent = [by_definition.get(json.dumps(d, sort_keys=True)) for d in _sent_tools(cap.bodies[2])]
    order = None
    if None not in sent:
        ours, first = {t.name for t in now.tools}, {t.name for t in start.tools}
        extra, missing = set(sent) - ours, ours - set(sent)
        if (extra or missing) and extra <= first and not missing & first:
            session["tools"] = sorted(extra | missing)
            merged = _merge_orders([*_first_orders(machine), [s for s in sent if s]])
            order = merged if merged != list(machine.request.tools_order) else None
    # The layout: the rebuilt initial context has as many messages as the first model's first request.
    rebuilt = [i for i in without_tools_item(cap.bodies[2])["input"][:-1] if not (set(_texts(i)) <= prompts or summary_of(i))]
    first_layout = choose_layout(machine, dataclasses.replace(now.variant, model=start.model)) if machine.layouts else None
    own_layout = choose_layout(machine, now.variant) if machine.layouts else None
    # Where the base instructions go stays the new model's: in its `instructions` field, the first layout's base message goes.
    kept_messages = [m for m in start.messages if own_layout is None or own_layout.instructions != "field"
                     or not any(s.body == start.base.text for s in m.sections)]
    if first_layout is not None and first_layout is not own_layout and len(rebuilt) == len(kept_messages) != len(now.messages):
        session["layout"] = True
        # A section the new model's layout has and the first one's lacks is not left out: it has no place.
        kept = {slot for _, slots in first_layout.messages for slot in slots}
        comp = learned.turns.get("compaction") or {}
        slot_of = {s.fragment: s.slot for _, _, s in now.sections}
        left = [f for f in comp.get("leave_out", []) if slot_of.get(f) in kept]
        if "leave_out" in comp:
            comp["leave_out"] = left
            if not left:
                del comp["leave_out"]
        rendered = {s.slot for _, _, s in now.sections if s.slot}
        layout = [(role, slots) for (role, slots), m in zip(first_layout.messages, start.messages) if m in kept_messages]
        for k, (role, slots) in enumerate(layout):
            texts = _texts(rebuilt[k]) if k < len(rebuilt) else []
            if len(slots) != 1 or len(texts) != 1 or slots[0] in rendered:
                continue
            _later_slot(learned.files, slots[0], role, now.model, texts[0], values)
    if session:
        learned.turns["session"] = session
    return order


def session_definitions(learned: Any, body: dict[str, Any], machine: Any, start: Any, now: Any, field: str) -> None:
    """A tool the request after a switch sends under the name of one of the new
    model's own tools, with another definition: the session's (Codex builds some
    tool texts when the session starts: 0.150.0's code-mode exec tool notes
    deferred tools in a session gpt-5.5 started).  An `exact:` entry per such
    tool, for the new model's cells of the tool and a first model of the
    thread's first family (`first:`); appended to `learned.exact`."""
    own = {t.tool_name: t for t in now.tools}
    family = machine.model(start.model).field_value(field)
    if family == machine.model(now.model).field_value(field):
        return
    for definition in _sent_tools(body):
        name = definition.get("name", definition.get("type")) if isinstance(definition, dict) else None
        tool = own.get(name)
        if tool is None or tool.definition == definition:
            continue
        spec_tool = next(t for t in machine.tools if t.name == tool.name)  # the file's own `when`, not an exact entry's
        when = {k: list(spec_tool.when[k]) for k in spec_tool.when} or {"model": [now.model]}
        entry = {"part": f"tool {tool.name}", "when": when, "first": {field: [family]}, "value": definition,
                 "why": f"a thread started by a model of {field} {family} sends this definition after a switch (Codex fixes it when the session starts)"}
        if any(e["part"] == entry["part"] and e["first"] == entry["first"] and e["when"] == when for e in learned.exact):
            raise ImportProblem(f"thread {THREAD}: two definitions of tool {tool.name} for one session")
        learned.exact.append(entry)


def _first_orders(machine: Any) -> list[list[str]]:
    """Each distinct tool list of the spec's first requests, in send order: what
    `tools.order` was merged from (the spec reproduces every captured one)."""
    from ...assemble.body import select_tools
    from ...assemble.matrix import matrix

    seen: dict[tuple[str, ...], None] = {}
    for v in matrix(machine):
        sent, deferred = select_tools(machine, v, machine.model(v.model))
        seen.setdefault(tuple(t.name for t in (*sent, *deferred)), None)
    return [list(k) for k in seen]


def _later_slot(files: dict[str, str], slot: str, role: str, model: str, text: str, values: dict[str, str]) -> None:
    """A later fragment in `slot`: the release's text for `model` there (a table by
    model; inline, as the file of a text only a thread reads is one no variant uses)."""
    if any(v and v in text for k, v in values.items() if k in ("home", "cwd", "codex_home")):
        raise ImportProblem(f"thread {THREAD}: the {slot} text of the rebuilt context names the scratch world")
    table = f"{slot}_session"
    path = f"fragments/{table}.yaml"
    doc: dict[str, Any] = yaml.safe_load(files[path]) if path in files else {
        "description": f"The {slot} message a model gets in a thread another kind of model started (Codex keeps the "
                       "session's kind): joins only a rebuilt initial context.",
        "owner": "codex", "role": role, "later": True, "slot": slot, "order": 1,
        "text": f'{{{{ {table}[model.slug] if model.slug in {table} else "" }}}}', "variables": {table: {}}}
    doc["variables"][table][model] = text
    files[path] = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=1000)


def write_order(spec_yaml: Any, order: list[str]) -> None:
    """Replace the `tools.order` list of the written spec.yaml."""
    text = spec_yaml.read_text(encoding="utf-8")
    block = re.compile(r"^tools:\n  order:\n(?:  - .*\n)+", re.M)
    if len(block.findall(text)) != 1:
        raise ImportProblem("the written spec.yaml has no tools.order list to extend")
    new = "tools:\n  order:\n" + "".join(f"  - {name}\n" for name in order)
    spec_yaml.write_text(block.sub(lambda _: new, text), encoding="utf-8", newline="\n")


def learn_other_start(learned: Any, caps: dict[str, Any], machine: Any, asm: Any, variant: Any, field: str, first_family: Any,
                      changed_params: Any) -> None:
    """What the across-families thread of a start of the other family adds to
    `turns.session` (one rule for both directions; the final check compares
    both threads): a session that keeps its first base instructions, or the
    switch's compaction parameters, only for the first start's family
    (`session.base`, `compaction.switch_when`); per kept tool, whether the first
    model decides alone or with the current one (`first`, `both`); and the slots
    whose sections stay the first model's (`session.slots`)."""
    from ...assemble.conversation import request_after
    from ...oracle.thread_compare import script_steps
    from ...spec.readers.scripts import parse_script

    cap, manual = caps.get(THREAD), caps.get("compact-manual")
    session = learned.turns.get("session")
    if cap is None or cap.refused or len(cap.bodies) != 3 or session is None or first_family is None:
        return
    script = parse_script(script_steps(cap.thread), THREAD)
    start, now = request_after(machine, variant, script, 1, asm), request_after(machine, variant, script, 2, asm)
    if start.model == now.model:
        return
    session_definitions(learned, cap.bodies[2], machine, start, now, field)

    def only_first() -> dict[str, list[str]]:  # a new value each time: the written YAML holds no anchors
        return {field: [str(first_family)]}

    comp = learned.turns.get("compaction") or {}
    if comp.get("switch_params") and manual is not None and len(manual.bodies) == 3 \
            and changed_params(*cap.bodies[:2]) == changed_params(*manual.bodies[:2]):
        comp["switch_when"] = only_first()
    texts = [t for item in without_tools_item(cap.bodies[2])["input"] for t in _texts(item)]
    if now.base.text in texts and start.base.text not in texts:
        session["base"] = only_first()
        wrapper = learned.files.get("fragments/model_switch_rebuilt.yaml")
        if wrapper is not None:  # the wrapper says the new base only where the session holds another one
            learned.files["fragments/model_switch_rebuilt.yaml"] = wrapper.replace(
                "thread.previous.model != model.slug", "thread.previous.model != model.slug and base.text != model_base.text")
    # Tools: a kept tool the first model sends and the rebuilt request leaves out is sent only when both would.
    by_definition = {json.dumps(t.definition, sort_keys=True): t.name for t in machine.tools}
    sent = {by_definition.get(json.dumps(d, sort_keys=True)) for d in _sent_tools(cap.bodies[2])}
    first_sends = {t.name for t in start.tools}
    rules = {name: "both" if name in first_sends and name not in sent else "first" for name in session.get("tools", [])}
    if "both" in rules.values():
        session["tools"] = rules
    # Slots the new model's own first request leaves empty and whose first-model text the rebuilt context holds.
    rendered = {s.slot for _, _, s in now.sections if s.slot}
    slots = sorted({s.slot for _, _, s in start.sections if s.slot and s.slot not in rendered and s.text in texts})
    if slots:
        session["slots"] = slots
