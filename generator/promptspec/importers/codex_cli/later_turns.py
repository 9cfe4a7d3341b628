"""Learning a release's later turns from its standard threads.

The first-request spec is written already; this adds what later requests send,
as `turns:` and fragments with `later: true`, learned only from captures:

- the answer item as the release re-sends it (two turns);
- per switch, the context updates (updates.py);
- the compaction request (its last message, the body keys it changes), the
  summary prefix, and the order of the rebuilt history;
- compaction on a switch across `comp_hash` families, when a thread shows it,
  and the sections its rebuilt context adds: the new base instructions in a
  wrapper, and a later fragment an update sends (each a slot copy placed by
  the nearest known section);
- `emptied` on an update some start's switch sends as bare markers.

Whatever a capture shows that none of these rules explains is an
ImportProblem naming the thread: the caller writes nothing then.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import yaml

from ...oracle.thread import CUSTOM_COMPACT_PROMPT, ThreadCapture, reply_text
from ...oracle.thread_compare import script_steps
from ...oracle.thread import FAMILY_FIELD
from .session import tools_item, without_tools_item
from .updates import SWITCHES, _fragment, _new_items, _texts, learn_updates
from .write_spec import ImportProblem

LATER = "texts/later"


@dataclass
class Learned:
    turns: dict[str, Any] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)  # spec-relative path -> content
    scenario: dict[str, Any] = field(default_factory=dict)  # scenario keys the later turns add
    exact: list[dict[str, Any]] = field(default_factory=list)  # `exact:` entries the later turns add (first ones win)


def learn(captures: dict[str, ThreadCapture], first_sections: Any, base_text: Any, variables: Any,
          skills: dict[str, tuple[str, str, str]] | None = None, model_slug: Any = None, fragment_doc: Any = None) -> Learned:
    """`first_sections(thread_name, step)` -> the sections of the first request
    of the state after that step (step 0: the start); `base_text(thread, step)` -> the
    base instructions of that state's model; `variables(thread, step)` -> the
    catalog instructions variables of that state's model and personality name;
    `skills`: bundled skill name -> (its SKILL.md text, its path and the home
    folder in the scratch world); `fragment_doc(name)` -> a written fragment's yaml, as data."""
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

    learn_updates(out.turns, out.files, captures, SWITCHES, first_sections, base_text, variables, model_slug, fragment_doc)
    _skill(out, captures, skills or {})
    _compaction(out, captures, base_text("compact-manual", 0) if "compact-manual" in captures else "")
    _switch_rebuilt(out, captures, first_sections, base_text, model_slug, fragment_doc)
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


def _compaction(out: Learned, captures: dict[str, ThreadCapture], base: str = "") -> None:
    cap = captures.get("compact-manual")
    if cap is None or len(cap.bodies) != 3:
        raise ImportProblem("the manual compaction thread did not send three requests")
    turn, comp, after = cap.bodies
    # A tool list in the input (an additional_tools item) is part of the history: a release
    # may empty it in the compaction request (turns.compaction.input_tools).
    sent, kept = tools_item(turn), tools_item(comp)
    if not sent or kept == sent:
        input_tools = "keep"
    elif kept == []:
        input_tools = "params"
    elif kept is None:
        input_tools = "none"
    else:
        raise ImportProblem("the compaction request sends another tool list in the input than the turn before it")
    turn, comp, after = (without_tools_item(b) for b in cap.bodies)
    added = _new_items([turn, comp], 1)
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
    params = _changed_params(turn, comp)
    if input_tools == "params":
        params["tools"] = []
    summary_item = next((i for i in after["input"] if _is_summary(i)), None)
    if summary_item is None:
        raise ImportProblem("the request after a compaction carries no summary message")
    prefix = _texts(summary_item)[0][:-len(reply_text())]
    _fragment(out.files, "compact_summary", "user", prefix, "", "{{ summary }}",
              "Opens the history rebuilt after a compaction: the release's prefix, then the model's summary.")
    initial = [_without_id(i) for i in turn["input"][:-1]]
    prompts = ["hello"]
    pieces: list[Any] = []
    for item in after["input"][:-1]:
        item = _without_id(item) if item is not summary_item else item
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
            # The base-instructions message, or all but it: named, as a layout without one (instructions in the field) has no index for it.
            based = [k for k, item in enumerate(initial) if base and base in "".join(_texts(item))]
            named = "initial_base" if piece == based else "initial_rest" if based and piece == [k for k in range(len(initial)) if k not in based] else None
            written.append("initial_context" if whole else named or {"initial_context": f"{piece[0]}:{piece[-1] + 1}"})
        else:
            written.append(piece)
    comp_cfg: dict[str, Any] = {"prompt": "compact_prompt", "summary": "compact_summary", "params": params, "history": written}
    if input_tools != "keep":
        comp_cfg["input_tools"] = input_tools
    across = captures.get("model-across-families")
    if across is not None and len(across.bodies) == 3:
        comp_cfg["on_model_switch"] = FAMILY_FIELD
        switched = _changed_params(across.bodies[0], across.bodies[1])
        extra = {k: v for k, v in switched.items() if params.get(k, turn.get(k)) != v}
        if extra:
            comp_cfg["switch_params"] = extra
    out.turns["compaction"] = comp_cfg


def _is_summary(item: dict[str, Any]) -> bool:
    """Whether an input item is the rebuilt history's summary message (a prefix, then the answer)."""
    texts = _texts(item)
    return item.get("role") == "user" and len(texts) == 1 and texts[0].endswith(reply_text()) \
        and len(texts[0]) > len(reply_text()) + 20


def _changed_params(turn: dict[str, Any], comp: dict[str, Any]) -> dict[str, Any]:
    """The body keys a compaction request sends otherwise than the turn before it."""
    return {key: comp.get(key) for key in sorted(set(turn) | set(comp))
            if key not in ("input", "instructions", "prompt_cache_key", "client_metadata", "model") and turn.get(key) != comp.get(key)}


def _without_id(item: dict[str, Any]) -> dict[str, Any]:
    """An input item as compared across requests: ids are volatile (oracle/compare.py drops them too)."""
    return {k: v for k, v in item.items() if k != "id"}


def _switch_rebuilt(out: Learned, captures: dict[str, ThreadCapture], first_sections: Any, base_text: Any,
                    model_slug: Any, fragment_doc: Any) -> None:
    """The section a release adds to the initial context it re-injects after a
    compaction caused by a model switch: the new model's base instructions in a
    wrapper, inside one of the initial context's messages.  It becomes a later
    fragment with a slot (which joins only rebuilt contexts), sent when the model
    differs from the one before the turn."""
    name = "model-across-families"
    cap = captures.get(name)
    if cap is None or len(cap.bodies) != 3 or not cap.bodies[0]["input"]:
        return
    base = base_text(name, 1)
    now = {x.text: x for x in first_sections(name, 1)}
    first = {x.text for x in first_sections(name, 0)}
    sent = {t for item in cap.bodies[2]["input"] for t in _texts(item)}
    left = [x.fragment for x in now.values() if x.text not in sent and x.body != base]
    if left:  # sections of the new state's first request the rebuilt context leaves out
        out.turns["compaction"]["leave_out"] = left
    for item in cap.bodies[2]["input"]:
        texts = _texts(item)
        for k, text in enumerate(texts):
            if not base or base not in text or text in now or text in first:
                continue
            place = _place(texts, k, now, fragment_doc)
            if place is None:
                raise ImportProblem(f"thread {name}: the rebuilt context wraps the new base instructions in a message no rule places")
            slot, order = place
            start, end = text.split(base, 1)
            _fragment(out.files, "model_switch_rebuilt", item.get("role", "developer"), start, end,
                      "{{ model_base.text }}",
                      "Joins the initial context a compaction re-injects when the model changed this turn: "
                      "the new base instructions in the release's wrapper.", model_slug(name, 1) if model_slug else None,
                      guard="thread.previous.model != model.slug", slot=slot, order=order)
            return


def _place(texts: list[str], k: int, now: dict[str, Any], fragment_doc: Any) -> tuple[str, int] | None:
    """(slot, order) for a new section at `texts[k]` of a message: the slot of the
    nearest section of the new state after it (else before it), its order that
    section's less (more) the distance, so that new sections keep their order too."""
    for step in (1, -1):
        at = k + step
        while 0 <= at < len(texts):
            section = now.get(texts[at])
            if section is not None and section.slot:
                doc = fragment_doc(section.fragment) if fragment_doc is not None else None
                return section.slot, int((doc or {}).get("order", 0)) - (at - k)
            at += step
    return None


def _rebuilt_updates(out: Learned, captures: dict[str, ThreadCapture], first_sections: Any, fragment_doc: Any) -> None:
    """A context update the release also puts into the initial context it
    re-injects after a switch across families (0.144.3: a switch to gpt-5.5
    adds its personality text to the v2 layout's developer message): a section
    the new state's first request lacks, in the markers of a later fragment an
    update sends, becomes a copy of that fragment with the slot of the section
    beside it (joining only rebuilt contexts), under the update's `when`, sent
    when the model changed this turn."""
    name = "model-across-families"
    cap = captures.get(name)
    if cap is None or len(cap.bodies) != 3:
        return
    now = {x.text: x for x in first_sections(name, 1)}
    first = {x.text for x in first_sections(name, 0)}
    updates = {f: u for u in out.turns.get("updates", []) for f in u["fragments"]}
    for item in cap.bodies[2]["input"]:
        texts = _texts(item)
        for k, text in enumerate(texts):
            if text in now or text in first:
                continue
            for fragment, update in updates.items():
                if f"fragments/{fragment}_rebuilt.yaml" in out.files:
                    continue  # placed already (the base instructions' wrapper: _switch_rebuilt)
                doc = yaml.safe_load(out.files.get(f"fragments/{fragment}.yaml", "{}")) or {}
                if not (doc.get("later") and doc.get("start") and doc.get("end") and not doc.get("slot")) \
                        or not (text.startswith(doc["start"]) and text.endswith(doc["end"])) or "{" in doc["start"] + doc["end"]:
                    continue
                place = _place(texts, k, now, fragment_doc)
                if place is None:
                    raise ImportProblem(f"thread {name}: the rebuilt context holds a {fragment} section no slot places")
                slot, order = place
                extra = {"when": update["when"]} if update.get("when") else {}
                _fragment(out.files, f"{fragment}_rebuilt", doc.get("role", item.get("role", "developer")), doc["start"], doc["end"],
                          doc["text"], f"{fragment} as the initial context a compaction re-injects after a model switch carries it.",
                          guard="thread.previous.model != model.slug", slot=slot, order=order, **extra)
                break


def _emptied(out: Learned, captures: list[ThreadCapture], fragment_doc: Any) -> None:
    """An update a switch thread of any start sends as its fragment's markers
    alone (its section went empty: 0.153.2's switch from a model with a text for
    the unset mode to one without) is `emptied: true`."""
    markers = {}
    for u in out.turns.get("updates", []):
        for name in u["fragments"]:
            doc = fragment_doc(name) or {}
            if doc.get("start") and doc.get("end") and "{" not in doc["start"] + doc["end"]:
                markers[doc["start"] + doc["end"]] = u
    for cap in captures:
        if cap.thread.name not in SWITCHES or cap.refused:
            continue
        for n in range(1, len(cap.bodies)):
            for msg in _new_items(cap.bodies, n)[1:-1]:
                for text in _texts(msg):
                    if text in markers:
                        markers[text]["emptied"] = True


def _add_scenario(path: Any, values: dict[str, Any]) -> None:
    """Scenario keys added right under the written `scenario:` line (values as YAML flow)."""
    if not values:
        return
    text = path.read_text(encoding="utf-8")
    if "\nscenario:\n" not in text:
        raise ImportProblem("the written spec.yaml has no scenario block to extend")
    lines = "".join(f"  {k}: {json.dumps(v)}\n" for k, v in values.items())
    path.write_text(text.replace("\nscenario:\n", "\nscenario:\n" + lines, 1), encoding="utf-8", newline="\n")


def _add_exact(path: Any, entries: list[dict[str, Any]]) -> None:
    """`exact:` entries put first in the written spec.yaml's list (a new list at its end when it has none)."""
    if not entries:
        return
    text = path.read_text(encoding="utf-8")
    dumped = yaml.safe_dump(entries, sort_keys=False, allow_unicode=True, width=1000)
    if "\nexact:\n" in text:
        after = text.split("\nexact:\n", 1)[1]
        indent = after[:len(after) - len(after.lstrip(" "))]  # the list's own indentation
        dumped = "".join(indent + line for line in dumped.splitlines(keepends=True))
        text = text.replace("\nexact:\n", "\nexact:\n" + dumped, 1)
    else:
        text = text.rstrip("\n") + "\nexact:\n" + dumped
    path.write_text(text, encoding="utf-8", newline="\n")
    if not isinstance(yaml.safe_load(text).get("exact"), list):
        raise ImportProblem("the written spec.yaml's exact list could not be extended")


STARTS: tuple[dict[str, str], ...] = (
    {"personality": "unset", "mode": "default", "sandbox_mode": "workspace-write", "approval_policy": "on-request"},
    {"personality": "unset", "mode": "unset", "sandbox_mode": "workspace-write", "approval_policy": "on-request"},
)
"""The configurations (of the first model that has them) the standard threads
start from: learned from the first, whose mode is set (a switch re-sends what
depends on the mode too), checked from both."""

OTHER_STARTS: tuple[dict[str, str], ...] = tuple({**s, "sandbox_mode": "read-only"} for s in STARTS)
"""Where the sandbox switches start too (the first that is in the matrix): what a
release derives only when a session starts shows there (learn_since_start)."""


def values_reached() -> dict[str, list[str]]:
    """Per axis (oracle/capture.ONLY_AXES), the values the standard threads start
    from or switch to, whatever the models: a part of the matrix (--only) the
    later turns are learned in must hold each, or a switch leaves the spec's matrix."""
    from ...oracle.capture import ONLY_AXES, Config
    from ...oracle.thread import standard_threads

    reached: dict[str, set[str]] = {axis: set() for axis in ONLY_AXES}
    for values in (*STARTS, *OTHER_STARTS):
        for thread in standard_threads(Config("-", **values), {"models": []}, "skill", "/"):
            for step in [{"set": values}, *script_steps(thread)]:
                for axis, value in step.get("set", {}).items():
                    if axis in reached:
                        reached[axis].add(value)
    return {axis: [v for v in ONLY_AXES[axis] if v in got] for axis, got in reached.items()}


def check_part(only: dict[str, list[str]]) -> None:
    """A UsageError naming the first value the standard threads need that the
    part (--only, as oracle/capture.check_only gives it) leaves out."""
    from ...errors import UsageError
    from ...oracle.capture import ONLY_AXES

    reached = values_reached()
    for axis, values in only.items():
        missing = [v for v in reached[axis] if v not in values]
        if missing:
            enough = ",".join(v for v in ONLY_AXES[axis] if v in values or v in missing)
            raise UsageError(f"--later-turns: the standard threads start from or switch to {axis} {', '.join(missing)};"
                             f" give --only {axis}={enough} or leave {axis} out of --only")


def turns_yaml(learned: Learned) -> str:
    """The `turns:` block appended to the written spec.yaml."""
    return "\n# Later turns, learned from the release's standard threads (docs/spec-format.md, turns).\n" + yaml.safe_dump(
        {"turns": learned.turns}, sort_keys=False, allow_unicode=True, width=1000)


def import_later_turns(staging: Any, codex: Any, timeout: float, port: int, jobs: int = 0, cache: bool = True) -> dict[str, Any]:
    """Capture the standard threads in a fresh scratch world, learn them into
    the staged spec, and check that it reproduces every request of every
    thread; the figures, or an ImportProblem (the caller then writes nothing)."""
    from ...assemble.builder import Assembler
    from ...assemble.conversation import request_after
    from ...oracle import thread as _thread
    from ...oracle.machine import configs_of, models_tools, spec_for_machine
    from ...oracle.pool import CapturePool
    from ...oracle.thread_compare import compare_thread
    from ...spec import load_spec
    from ...spec.readers.scripts import parse_script

    with CapturePool(codex, None, timeout, port, jobs, cache) as pool:
        scratch = pool.scratch
        spec = load_spec(staging)
        pairs = configs_of(spec)

        def start(values: dict[str, str]) -> Any:
            return next((p for p in pairs if all(getattr(p[1], a) == v for a, v in values.items())), None)

        starts = [p for p in map(start, STARTS) if p is not None] or pairs[:1]
        catalog = pool.catalog()
        pool.warm(starts[0][1])  # skills unpacked, project trusted
        skill = _thread.bundled_skill(scratch)
        skills = {}
        if skill:
            path = scratch.codex_home / "skills" / ".system" / skill / "SKILL.md"
            skills[skill] = (path.read_text(encoding="utf-8"), str(path), str(scratch.home))
        if spec.agents.tree is not None:  # the cwd thread's folder, with its own AGENTS.md, in the spec's tree too
            sub = staging / spec.agents.tree / _thread.SUBFOLDER / "AGENTS.md"
            sub.parent.mkdir(parents=True, exist_ok=True)
            sub.write_text(_thread.SUBFOLDER_DOC, encoding="utf-8", newline="\n")
        machine = spec_for_machine(spec, scratch.values())
        asm = Assembler(machine)
        captured = []
        for variant, cfg in starts:
            threads = _thread.standard_threads(cfg, catalog, skill, str(scratch.cwd), models_in=[m.slug for m in spec.models])
            caps = {c.thread.name: c for c in pool.threads(threads)}
            captured.append((variant, caps))
        # The sandbox switches from a start in another sandbox mode too: what a release
        # derives only when a session starts shows there (learn_since_start).
        other = next((p for p in map(start, OTHER_STARTS) if p is not None), None)
        if other is not None:
            threads = [t for t in _thread.standard_threads(other[1], catalog, skill, str(scratch.cwd), models_in=[m.slug for m in spec.models])
                       if "sandbox_mode" in SWITCHES.get(t.name, ())]
            captured.append((other[0], {c.thread.name: c for c in pool.threads(threads)}))
        readonly = captured[-1][1] if other is not None else {}
        from .families import THREADS, merge_family, other_family

        fam = other_family(pairs, starts[0], catalog, FAMILY_FIELD)
        if fam is not None:
            threads = [t for t in _thread.standard_threads(fam[1], catalog, skill, str(scratch.cwd), models_in=[m.slug for m in spec.models])
                       if t.name in THREADS]
            captured.append((fam[0], {c.thread.name: c for c in pool.threads(threads)}))
        variant, caps = captured[0]

        def views(variant: Any, caps: dict[str, Any]) -> tuple[Any, ...]:
            """(sections, base, variables, model) of the state after step n of a thread from `variant`."""
            scripts = {name: parse_script(script_steps(c.thread), name) for name, c in caps.items()}

            def state(name: str, n: int) -> Any:
                return request_after(machine, variant, scripts[name], n + 1, asm)

            def variables(name: str, n: int) -> tuple[dict[str, Any], str]:
                req = state(name, n)
                return dict(machine.model(req.model).instructions_variables), req.variant.personality

            return (lambda name, n: [s for _, _, s in state(name, n).sections], lambda name, n: state(name, n).base.text,
                    variables, lambda name, n: state(name, n).model)

        def fragment_doc(name: str) -> Any:
            path = staging / "fragments" / f"{name}.yaml"
            return yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else None

        sections, base, variables, slug = views(variant, caps)
        learned = learn(caps, sections, base, variables, skills, slug, fragment_doc)
        if other is not None:
            from .since_start import since_start_rules

            since_start_rules(learned, staging, machine, asm, other[0], readonly, scratch.values(), fragment_doc,
                              lambda bodies, n: [t for msg in _new_items(bodies, n)[1:-1] for t in _texts(msg)])
        from .session import learn_other_start, learn_session, write_order

        order = learn_session(learned, caps, machine, asm, variant, scratch.values(),
                              {st.text for c in caps.values() for st in c.thread.steps if st.text}, _is_summary)
        if fam is not None:  # what a start of the other family shows: merged into one rule for both
            family = _thread.families(catalog)
            body_changes = lambda t, c: _changed_params(without_tools_item(t), without_tools_item(c))  # noqa: E731
            fam_caps = captured[-1][1]

            def fam_updates(names: list[str]) -> list[dict[str, Any]]:
                turns: dict[str, Any] = {}
                learn_updates(turns, learned.files, fam_caps, names, *views(fam[0], fam_caps), fragment_doc)
                return turns["updates"]

            merge_family(learned, fam_caps, fam[1].model, family.get(fam[1].model), family.get(starts[0][1].model), FAMILY_FIELD,
                         body_changes, _new_items, fam_updates)
            learn_other_start(learned, captured[-1][1], machine, asm, fam[0], FAMILY_FIELD, family.get(starts[0][1].model), body_changes)
        _rebuilt_updates(learned, caps, sections, fragment_doc)
        _emptied(learned, [c for _, cs in captured for c in cs.values()], fragment_doc)
        for rel, content in learned.files.items():
            path = staging / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8", newline="\n")
        _add_scenario(staging / "spec.yaml", learned.scenario)
        _add_exact(staging / "spec.yaml", learned.exact)
        with open(staging / "spec.yaml", "a", encoding="utf-8", newline="\n") as f:
            f.write(turns_yaml(learned))
        if order:
            write_order(staging / "spec.yaml", order)
        checked = spec_for_machine(load_spec(staging), scratch.values())
        results = [compare_thread(checked, v, c, models_tools(spec)) for v, cs in captured for c in cs.values()]
        bad = [r for r in results if not r.identical]
        if bad:
            r = bad[0]
            raise ImportProblem(f"the learned later turns reproduce {len(results) - len(bad)} of {len(results)} threads"
                                f" (first: {r.thread} from {r.variant}, request {r.request}: {r.part})")
        return {"threads": len(results), "thread_requests": sum(r.requests for r in results),
                "from": [v.id for v, _ in captured]}
