"""Learning a release's later turns from its standard threads.

The first-request spec is written already; this adds what later requests send,
as `turns:` and fragments with `later: true`, learned only from captures:

- the answer item as the release re-sends it (two turns);
- per switch, the messages between the answer and the new prompt: a part whose
  text is a first-request section of the new state re-sends that fragment
  (`if_different`, as the release diffs its context); a part that wraps the new
  model's base instructions, or the new personality's variable, becomes a later
  fragment with the wrapper as its markers;
- the compaction request (its last message, the body keys it changes), the
  summary prefix, and the order of the rebuilt history;
- compaction on a switch across `comp_hash` families, when a thread shows it.

Whatever a capture shows that none of these rules explains is an
ImportProblem naming the thread: the caller writes nothing then.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import yaml

from ...oracle.thread import CUSTOM_COMPACT_PROMPT, ThreadCapture, reply_text
from .write_spec import ImportProblem

SWITCHES = {
    "model-within-family": ["model"],
    "personality-friendly": ["personality"],
    "personality-none": ["personality"],
    "mode-from-unset": ["mode"],
    "mode-switch-and-back": ["mode"],
    "sandbox": ["sandbox_mode"],
    "approval": ["approval_policy"],
    "cwd": ["cwd"],
}
FAMILY_FIELD = "comp_hash"
LATER = "texts/later"


@dataclass
class Learned:
    turns: dict[str, Any] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)  # spec-relative path -> content
    scenario: dict[str, Any] = field(default_factory=dict)  # scenario keys the later turns add


def _texts(item: dict[str, Any]) -> list[str]:
    return [c.get("text", "") for c in item.get("content") or []]


def _new_items(bodies: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    before, now = bodies[n - 1]["input"], bodies[n]["input"]
    if now[:len(before)] != before:
        raise ImportProblem(f"request {n + 1} does not re-send the input of request {n}")
    return now[len(before):]


def _fragment(files: dict[str, str], name: str, role: str, start: str, end: str, text: str, description: str) -> None:
    for marker in (start, end):
        if "{" in marker or "}" in marker:
            raise ImportProblem(f"the {name} wrapper holds braces, which a marker cannot keep verbatim")
    if not (start and end):  # markers come in pairs (lint PS102): a one-sided wrapper is literal text
        text, start, end = start + text + end, "", ""
    doc = {"description": description, "owner": "codex", "role": role, "later": True, "start": start, "end": end, "text": text}
    content = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=1000)
    path = f"fragments/{name}.yaml"
    if files.get(path, content) != content:
        raise ImportProblem(f"two threads need different {name} texts (one rule per fragment)")
    files[path] = content


def learn(captures: dict[str, ThreadCapture], first_sections: Any, base_text: Any, variables: Any,
          skills: dict[str, tuple[str, str, str]] | None = None, model_slug: Any = None) -> Learned:
    """`first_sections(thread_name, step)` -> {section text: fragment name} of the
    first request of the state after that step; `base_text(thread, step)` -> the
    base instructions of that state's model; `variables(thread, step)` -> the
    catalog instructions variables of that state's model and personality name;
    `skills`: bundled skill name -> (its SKILL.md text, its path and the home
    folder in the scratch world)."""
    out = Learned()
    two = captures.get("two-turns")
    if two is None or len(two.bodies) != 2:
        raise ImportProblem("the two-turn thread did not send two requests")
    reply = _new_items(two.bodies, 1)[0]
    if reply.get("role") != "assistant":
        raise ImportProblem("the second request does not re-send the answer first")
    item = {k: v for k, v in reply.items() if k not in ("id", "content")}
    part = {k: v for k, v in (reply.get("content") or [{}])[0].items() if k not in ("type", "text")}
    out.turns["reply"] = {"item": item, "content": part}

    updates: list[dict[str, Any]] = []
    for name, changed in SWITCHES.items():
        cap = captures.get(name)
        if cap is None or cap.refused:
            continue
        last = len(cap.bodies) - 1
        if last < 1:
            raise ImportProblem(f"thread {name}: only {len(cap.bodies)} request(s)")
        for n in range(1, last + 1):
            new = _new_items(cap.bodies, n)[1:-1]  # between the answer and the prompt
            known = first_sections(name, n)
            for msg in new:
                frags = []
                for text in _texts(msg):
                    frags.append(_explain(out.files, name, n, text, known, base_text, variables, msg.get("role", ""), model_slug))
                _add(updates, changed, frags, msg.get("role", "developer"))
    out.turns["updates"] = updates
    _skill(out, captures, skills or {})
    _compaction(out, captures)
    return out


def _skill(out: Learned, captures: dict[str, ThreadCapture], skills: dict[str, tuple[str, str, str]]) -> None:
    """The message a `$name` mention adds after the prompt: the release's wrapper
    around the skill's SKILL.md, its name and path written as placeholders."""
    cap = captures.get("skill-mention")
    if cap is None or not cap.bodies:
        return
    body = cap.bodies[0]["input"]
    prompt = (_texts(body[-2]) or [""])[0] if len(body) > 1 else ""
    name = next((n for n in skills if f"${n}" in prompt), None)
    if name is None:
        raise ImportProblem("thread skill-mention: the mentioned skill's message is not the last item")
    text, path, home = skills[name]
    (sent,) = _texts(body[-1])
    if text not in sent:
        raise ImportProblem("thread skill-mention: the skill message does not hold its SKILL.md")
    start, end = sent.split(text, 1)
    placed = path.replace(home, "{{ home }}", 1).replace(f"/{name}/", "/{{ skill.name }}/")

    def literal(piece: str) -> str:
        if "{" in piece or "}" in piece:
            raise ImportProblem("thread skill-mention: the skill wrapper holds braces")
        return piece.replace(name, "{{ skill.name }}")

    template = placed.join(literal(p) for p in start.split(path)) + "{{ skill.text }}" + literal(end)
    out.turns["skills"] = {"fragment": "skill", "files": {name: f"{LATER}/skills/{name}/SKILL.md"}}
    out.files[f"{LATER}/skills/{name}/SKILL.md"] = text
    out.files["fragments/skill.yaml"] = yaml.safe_dump({
        "description": "The message a skill mention adds after the prompt: the skill's SKILL.md in the release's wrapper.",
        "owner": "codex", "role": body[-1].get("role", "user"), "later": True, "text": template,
    }, sort_keys=False, allow_unicode=True, width=1000)


def _explain(files: dict[str, str], thread: str, n: int, text: str, known: dict[str, str], base_text: Any,
             variables: Any, role: str, model_slug: Any = None) -> str:
    if text in known:
        return known[text]
    base = base_text(thread, n)
    if base and base in text:
        start, end = text.split(base, 1)
        kind = "model" if thread.startswith("model") else SWITCHES[thread][0]
        name = f"{kind}_switch" if kind == "model" else f"{kind}_instructions"
        _fragment(files, name, role, start, end, "{{ base.text }}",
                  f"Sent after the answer when the {kind} changes: the new base instructions in the release's wrapper.")
        return name
    values, personality = variables(thread, n)
    value = values.get(f"personality_{personality}") if personality else None
    if value and value in text:
        start, end = text.split(value, 1)
        _fragment(files, "personality_spec", role, start, end,
                  '{{ model.instructions_variables.get("personality_" ~ personality.name, "") }}',
                  "Sent after the answer when the personality changes: the new personality's text from the catalog.")
        return "personality_spec"
    slug = model_slug(thread, n) if model_slug is not None else None
    if slug and slug in text and thread.startswith("model"):
        start, end = text.split(slug, 1)
        _fragment(files, "model_switch", role, start, end, "{{ model.slug }}",
                  "Sent after the answer when the model changes: the release names the new model.")
        return "model_switch"
    raise ImportProblem(f"thread {thread}, request {n + 1}: a context update matches no rule ({text[:60]!r})")


def _add(updates: list[dict[str, Any]], changed: list[str], frags: list[str], role: str) -> None:
    for u in updates:
        if u["fragments"] == frags and u["role"] == role:
            u["changed"] += [c for c in changed if c not in u["changed"]]
            return
    entry = {"changed": list(changed), "fragments": frags, "role": role}
    if not any(f in ("model_switch", "personality_spec") for f in frags):
        entry["if_different"] = True
    updates.append(entry)


def _compaction(out: Learned, captures: dict[str, ThreadCapture]) -> None:
    cap = captures.get("compact-manual")
    if cap is None or len(cap.bodies) != 3:
        raise ImportProblem("the manual compaction thread did not send three requests")
    turn, comp, after = cap.bodies
    added = _new_items(cap.bodies, 1)
    if len(added) != 2 or added[0].get("role") != "assistant":
        raise ImportProblem("the compaction request is not the history, the answer and one prompt")
    (prompt,) = _texts(added[1])
    out.files["fragments/compact_prompt.yaml"] = yaml.safe_dump({
        "description": "The compaction request's last message (a non-empty `compact_prompt` scenario value replaces it).",
        "owner": "codex", "role": added[1].get("role", "user"), "later": True,
        "text": "{{ compact_prompt or release_prompt }}",
        "variables": {"release_prompt": prompt},
    }, sort_keys=False, allow_unicode=True, width=1000)
    out.scenario["compact_prompt"] = ""
    custom = captures.get("compact-prompt")
    if custom is not None and len(custom.bodies) == 3 and _texts(custom.bodies[1]["input"][-1]) != [CUSTOM_COMPACT_PROMPT]:
        raise ImportProblem("a configured compact_prompt is not the compaction request's last message")
    params: dict[str, Any] = {}
    for key in sorted(set(turn) | set(comp)):
        if key in ("input", "instructions", "prompt_cache_key", "client_metadata", "model"):
            continue
        if turn.get(key) != comp.get(key):
            params[key] = comp.get(key)
    summary_item = next((i for i in after["input"] if i.get("role") == "user" and len(_texts(i)) == 1
                         and _texts(i)[0].endswith(reply_text()) and _texts(i)[0] != reply_text()
                         and len(_texts(i)[0]) > len(reply_text()) + 20), None)
    if summary_item is None:
        raise ImportProblem("the request after a compaction carries no summary message")
    prefix = _texts(summary_item)[0][:-len(reply_text())]
    _fragment(out.files, "compact_summary", "user", prefix, "", "{{ summary }}",
              "Opens the history rebuilt after a compaction: the release's prefix, then the model's summary.")
    initial = turn["input"][:-1]
    prompts = ["hello"]
    pieces: list[Any] = []
    for item in after["input"][:-1]:
        if item is summary_item:
            kind: Any = "summary"
        elif _texts(item) in ([p] for p in prompts):
            kind = "user_messages"
        elif item in initial:
            kind = ("initial_context", initial.index(item))
        else:
            raise ImportProblem(f"the rebuilt history holds an item no rule explains ({json.dumps(item)[:80]})")
        pieces.append(kind)
    history: list[Any] = []
    for kind in pieces:
        if isinstance(kind, tuple):
            if history and isinstance(history[-1], list):
                history[-1].append(kind[1])
                continue
            history.append([kind[1]])
        elif not history or history[-1] != kind:
            history.append(kind)
    written: list[Any] = []
    for piece in history:
        if isinstance(piece, list):
            if piece != list(range(piece[0], piece[-1] + 1)):
                raise ImportProblem("the rebuilt history re-orders the initial context")
            whole = piece[0] == 0 and piece[-1] == len(initial) - 1
            written.append("initial_context" if whole else {"initial_context": f"{piece[0]}:{piece[-1] + 1}"})
        else:
            written.append(piece)
    comp_cfg: dict[str, Any] = {"prompt": "compact_prompt", "summary": "compact_summary", "params": params, "history": written}
    across = captures.get("model-across-families")
    if across is not None and len(across.bodies) == 3:
        comp_cfg["on_model_switch"] = FAMILY_FIELD
    out.turns["compaction"] = comp_cfg


def _add_scenario(path: Any, values: dict[str, Any]) -> None:
    """Scenario keys added right under the written `scenario:` line (values as YAML flow)."""
    if not values:
        return
    text = path.read_text(encoding="utf-8")
    if "\nscenario:\n" not in text:
        raise ImportProblem("the written spec.yaml has no scenario block to extend")
    lines = "".join(f"  {k}: {json.dumps(v)}\n" for k, v in values.items())
    path.write_text(text.replace("\nscenario:\n", "\nscenario:\n" + lines, 1), encoding="utf-8", newline="\n")


def turns_yaml(learned: Learned) -> str:
    """The `turns:` block appended to the written spec.yaml."""
    return "\n# Later turns, learned from the release's standard threads (docs/spec-format.md, turns).\n" + yaml.safe_dump(
        {"turns": learned.turns}, sort_keys=False, allow_unicode=True, width=1000)


def import_later_turns(staging: Any, codex: Any, timeout: float, port: int) -> dict[str, Any]:
    """Capture the standard threads in a fresh scratch world, learn them into
    the staged spec, and check that it reproduces every request of every
    thread; the figures, or an ImportProblem (the caller then writes nothing)."""
    from ...assemble.builder import Assembler
    from ...assemble.conversation import request_after
    from ...oracle import capture as _harvest
    from ...oracle import thread as _thread
    from ...oracle.machine import configs_of, models_tools, spec_for_machine
    from ...oracle.scratch import make_scratch, remove_scratch
    from ...oracle.thread_compare import compare_thread, script_steps
    from ...spec import load_spec
    from ...spec.readers.scripts import parse_script

    scratch = make_scratch()
    try:
        spec = load_spec(staging)
        pairs = configs_of(spec)

        def start(mode: str) -> Any:
            return next((p for p in pairs if p[1].personality == "unset" and p[1].mode == mode
                         and p[1].sandbox_mode == "workspace-write" and p[1].approval_policy == "on-request"), None)

        # Learned from a start with a mode set (a switch re-sends what depends on the
        # mode too), checked from both starts.
        starts = [p for p in (start("default"), start("unset")) if p is not None] or pairs[:1]
        catalog = _harvest.debug_models(codex, scratch, timeout)
        list(_harvest.capture(codex, scratch, [starts[0][1]], timeout, port))  # skills unpacked, project trusted
        skill = _thread.bundled_skill(scratch)
        skills = {}
        if skill:
            path = scratch.codex_home / "skills" / ".system" / skill / "SKILL.md"
            skills[skill] = (path.read_text(encoding="utf-8"), str(path), str(scratch.home))
        machine = spec_for_machine(spec, scratch.values())
        asm = Assembler(machine)
        captured = []
        for variant, cfg in starts:
            threads = _thread.standard_threads(cfg, catalog, skill, str(scratch.cwd), models_in=[m.slug for m in spec.models])
            caps = {c.thread.name: c for c in _thread.capture_threads(codex, scratch, threads, timeout, port)}
            captured.append((variant, caps))
        variant, caps = captured[0]
        scripts = {name: parse_script(script_steps(c.thread), name) for name, c in caps.items()}

        def state(name: str, n: int) -> Any:
            return request_after(machine, variant, scripts[name], n + 1, asm)

        def sections(name: str, n: int) -> dict[str, str]:
            return {s.text: s.fragment for _, _, s in state(name, n).sections}

        def base(name: str, n: int) -> str:
            return state(name, n).base.text

        def variables(name: str, n: int) -> tuple[dict[str, Any], str]:
            req = state(name, n)
            return dict(machine.model(req.model).instructions_variables), req.variant.personality

        learned = learn(caps, sections, base, variables, skills, lambda name, n: state(name, n).model)
        for rel, content in learned.files.items():
            path = staging / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8", newline="\n")
        _add_scenario(staging / "spec.yaml", learned.scenario)
        with open(staging / "spec.yaml", "a", encoding="utf-8", newline="\n") as f:
            f.write(turns_yaml(learned))
        checked = spec_for_machine(load_spec(staging), scratch.values())
        results = [compare_thread(checked, v, c, models_tools(spec)) for v, cs in captured for c in cs.values()]
        bad = [r for r in results if not r.identical]
        if bad:
            r = bad[0]
            raise ImportProblem(f"the learned later turns reproduce {len(results) - len(bad)} of {len(results)} threads"
                                f" (first: {r.thread} from {r.variant}, request {r.request}: {r.part})")
        return {"threads": len(results), "thread_requests": sum(r.requests for r in results),
                "from": [v.id for v, _ in captured]}
    finally:
        remove_scratch(scratch)
