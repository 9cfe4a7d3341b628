"""Learning what a switch sends: the context updates of the standard threads.

Per switch thread, the messages between the answer and the new prompt: a
part whose text is a first-request section of the new state re-sends that
fragment (`if_different`, as the release diffs its context), in part
(`partial`: only the changed lines) or after a note; a part that wraps the new
model's base instructions, or the new personality's variable, becomes a later
fragment with the wrapper as its markers.  Messages made of known kinds show
that a role's updates are joined (`turns.join`).  Used by later_turns.learn,
and for the updates only a start of another compaction family sends
(families.py).
"""

from __future__ import annotations

from typing import Any

import yaml

from ...oracle.thread import ThreadCapture
from ...oracle.thread_compare import script_steps
from .session import without_tools_item
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
    "cwd-unrestricted": ["sandbox_mode", "cwd"],
}
"""The switch threads of the standard set and what they change (each step's own `set:` says which, per request)."""

def _texts(item: dict[str, Any]) -> list[str]:
    return [c.get("text", "") for c in item.get("content") or []]


def _new_items(bodies: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """The items request n + 1 adds to the input of request n.  A leading tool
    list item is not history: it is the current model's (0.153.2 replaces it on
    a switch within a family); the final check compares it."""
    before, now = without_tools_item(bodies[n - 1])["input"], without_tools_item(bodies[n])["input"]
    if now[:len(before)] != before:
        raise ImportProblem(f"request {n + 1} does not re-send the input of request {n}")
    return now[len(before):]


def _fragment(files: dict[str, str], name: str, role: str, start: str, end: str, text: str, description: str,
              slug: str | None = None, guard: str | None = None, **extra: Any) -> None:
    """Write a later fragment: the release's wrapper as its markers (the new
    model's slug in it as `{{ model.slug }}`), `text` its template; `guard`: a
    condition the whole section is sent under (the wrapper too, where it has to
    be literal text)."""
    for marker in (start, end):
        if "{" in marker or "}" in marker:
            raise ImportProblem(f"the {name} wrapper holds braces, which a marker cannot keep verbatim")
    if slug:
        start, end = start.replace(slug, "{{ model.slug }}"), end.replace(slug, "{{ model.slug }}")
    taken = {m for path, content in files.items() if path.startswith("fragments/") and path != f"fragments/{name}.yaml"
             for m in _markers(content)}
    if not (start and end) or {start.lower(), end.lower()} & taken:
        # Markers come in pairs (lint PS102) and are unique (PS103): a one-sided
        # wrapper, or one another fragment's marker has already, is literal text.
        text, start, end = start + text + end, "", ""
    if guard:
        text = f"{{% if {guard} %}}{text}{{% endif %}}"
    doc = {"description": description, "owner": "codex", "role": role, "later": True, **extra, "start": start, "end": end, "text": text}
    content = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=1000)
    path = f"fragments/{name}.yaml"
    if files.get(path, content) != content:
        raise ImportProblem(f"two threads need different {name} texts (one rule per fragment)")
    files[path] = content


def _markers(content: str) -> set[str]:
    doc = yaml.safe_load(content)
    return {str(doc.get(k) or "").lower() for k in ("start", "end")} - {""} if isinstance(doc, dict) else set()


def learn_updates(turns: dict[str, Any], files: dict[str, str], captures: dict[str, ThreadCapture], names: Any,
                  first_sections: Any, base_text: Any, variables: Any, model_slug: Any = None, fragment_doc: Any = None) -> None:
    """`turns["updates"]` (and `turns["join"]`) from the switch threads `names`,
    the later fragments they need written into `files` (learn()'s arguments)."""
    updates: list[dict[str, Any]] = []
    seen: list[tuple[str, set[str | None], set[str | None], list[str | None]]] = []  # (fragment, sent, changed, lines)
    joined: set[str] = set()
    for name in (n for n in SWITCHES if n in names):
        cap = captures.get(name)
        if cap is None or cap.refused:
            continue
        last = len(cap.bodies) - 1
        if last < 1:
            raise ImportProblem(f"thread {name}: only {len(cap.bodies)} request(s)")
        steps = script_steps(cap.thread)
        for n in range(1, last + 1):
            changed = list(steps[n].get("set", {}))
            new = _new_items(cap.bodies, n)[1:-1]  # between the answer and the prompt
            now, was = first_sections(name, n), first_sections(name, n - 1)
            known = {x.text: x.fragment for x in now}
            at = -1
            before = {x.text for x in was}
            for msg in new:
                frags = []
                for text in _texts(msg):
                    part = _partial_of(text, now, was, seen) or _noted(files, text, now, fragment_doc)
                    frags.append(part or _explain(files, name, n, text, known, base_text, variables, msg.get("role", ""),
                                                  model_slug, changed))
                at = _add(updates, changed, frags, msg.get("role", "developer"), at, joined)
                if all(text in before for text in _texts(msg)):  # re-sent as it was: this change sends it whatever its text
                    updates[at].setdefault("_same", set()).update(changed)
    for fragment, rule in _partial_rules(seen).items():
        for u in updates:
            if fragment in u["fragments"]:
                u["partial"] = rule
    for u in updates:
        same = u.pop("_same", set())
        if u.get("if_different") and same:
            kept = [c for c in u["changed"] if c not in same]
            if kept:
                u["if_different"] = kept
            else:
                del u["if_different"]
    turns["updates"] = updates
    if joined:
        turns["join"] = sorted(joined)


def _explain(files: dict[str, str], thread: str, n: int, text: str, known: dict[str, str], base_text: Any,
             variables: Any, role: str, model_slug: Any = None, changed: list[str] | None = None) -> str:
    if text in known:
        return known[text]
    base = base_text(thread, n)
    if base and base in text:
        start, end = text.split(base, 1)
        kind = "model" if thread.startswith("model") else (changed or SWITCHES[thread])[0]
        name = f"{kind}_switch" if kind == "model" else f"{kind}_instructions"
        _fragment(files, name, role, start, end, "{{ base.text }}",
                  f"Sent after the answer when the {kind} changes: the new base instructions in the release's wrapper.",
                  model_slug(thread, n) if model_slug is not None and kind == "model" else None)
        return name
    values, personality = variables(thread, n)
    value = values.get(f"personality_{personality}") if personality else None
    if value and value in text:
        start, end = text.split(value, 1)
        _fragment(files, "personality_spec", role, start, end,
                  '{{ model.instructions_variables.get("personality_" ~ personality.fills, "") }}',
                  "Sent after the answer when the personality changes: the new personality's text from the catalog.")
        return "personality_spec"
    slug = model_slug(thread, n) if model_slug is not None else None
    if slug and slug in text and thread.startswith("model"):
        start, end = text.split(slug, 1)
        _fragment(files, "model_switch", role, start, end, "{{ model.slug }}",
                  "Sent after the answer when the model changes: the release names the new model.")
        return "model_switch"
    raise ImportProblem(f"thread {thread}, request {n + 1}: a context update matches no rule ({text[:60]!r})")


def _add(updates: list[dict[str, Any]], changed: list[str], frags: list[str], role: str, after: int, joined: set[str]) -> int:
    """Merge one message into the update list; a new kind goes right after the
    message before it in this thread, so every thread's order holds.  A message
    made of kinds already known, one after the other, of one role, shows that
    the release joins that role's consecutive updates (`turns.join`).  Returns its place."""
    for n, u in enumerate(updates):
        if u["fragments"] == frags and u["role"] == role:
            u["changed"] += [c for c in changed if c not in u["changed"]]
            if n < after:
                raise ImportProblem(f"two threads send the updates {frags} and {updates[after]['fragments']} in different orders")
            return n
    start, places = 0, []
    for n, u in enumerate(updates):
        if n > after and u["role"] == role and frags[start:start + len(u["fragments"])] == u["fragments"]:
            places.append(n)
            start += len(u["fragments"])
    if start == len(frags) and len(places) > 1:
        for n in places:
            updates[n]["changed"] += [c for c in changed if c not in updates[n]["changed"]]
        joined.add(role)
        return places[-1]
    entry = {"changed": list(changed), "fragments": frags, "role": role}
    if not any(f in ("model_switch", "personality_spec") for f in frags):
        entry["if_different"] = True
    updates.insert(after + 1, entry)
    return after + 1


def _partial_of(text: str, now: list[Any], was: list[Any], seen: list[Any]) -> str | None:
    """The fragment whose section `text` re-sends in part or whole (keeping its
    markers, its lines in order), recorded with which lines changed since the
    state before; None when no section of the new state fits."""
    from ...assemble.conversation import line_key

    for section in now:
        if not (section.start and section.end):
            continue  # without markers a part of a text cannot be told from another text
        if not (text.startswith(section.start) and text.endswith(section.end)) or len(text) < len(section.start + section.end):
            continue
        body = text[len(section.start):len(text) - len(section.end)]
        lines = section.body.splitlines(keepends=True)
        sent = body.splitlines(keepends=True)
        it = iter(lines)
        if not all(any(x == y for y in it) for x in sent):
            continue  # not a subsequence of the section's lines
        before = next((x.body for x in was if x.fragment == section.fragment), "")
        old = {line_key(x): x for x in before.splitlines(keepends=True)}
        keys = [line_key(x) for x in lines]
        seen.append((section.fragment, {line_key(x) for x in sent}, {k for k, x in zip(keys, lines) if old.get(k) != x}, keys))
        return section.fragment if body != section.body else None
    return None


def _noted(files: dict[str, str], text: str, now: list[Any], fragment_doc: Any) -> str | None:
    """A section re-sent with a note before its text (a newer release's "these
    replace the earlier ones" on a new folder's AGENTS.md): a later copy of the
    fragment, its template after the note."""
    for section in now:
        if not (section.body and section.start) or not (text.startswith(section.start) and text.endswith(section.body + section.end)):
            continue
        note = text[len(section.start):len(text) - len(section.body + section.end)]
        doc = fragment_doc(section.fragment) if fragment_doc is not None else None
        if not note or doc is None or not isinstance(doc.get("text"), str):
            continue
        if "{" in note or "}" in note:
            raise ImportProblem(f"the note re-sent with {section.fragment} holds braces, which a template cannot keep verbatim")
        name = f"{section.fragment}_update"
        # The markers go into the text: they are the first-request fragment's (lint PS103: unique markers).
        text = f"{doc.get('start') or ''}{note}{doc['text']}{doc.get('end') or ''}"
        doc = {**{k: v for k, v in doc.items() if k not in ("slot", "order", "start", "end", "glue_ok")}, "later": True, "text": text,
               "description": f"{section.fragment} as a later turn re-sends it: a note first, then the same text."}
        path = f"fragments/{name}.yaml"
        content = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=1000)
        if files.get(path, content) != content:
            raise ImportProblem(f"two threads need different {name} texts (one rule per fragment)")
        files[path] = content
        return name
    return None


def _partial_rules(seen: list[Any]) -> dict[str, dict[str, Any]]:
    """Per fragment sent in part somewhere, which of its lines go always and
    which go with another line (spec/turns.py `Partial`), from every time it was
    sent; a line that no rule explains is an ImportProblem."""
    rules: dict[str, dict[str, Any]] = {}
    cut = {f for f, sent, _, keys in seen if set(keys) - sent}
    for fragment in sorted(cut):
        obs = [(sent, changed, keys) for f, sent, changed, keys in seen if f == fragment]
        names = list(dict.fromkeys(k for _, _, keys in obs for k in keys if k is not None))
        always: list[str] = []
        ties: dict[str, str] = {}
        for key in names:
            if any(key in changed and key not in sent for sent, changed, _ in obs):
                raise ImportProblem(f"a partial {fragment} update leaves out its changed line <{key}>")
            extra = [sent for sent, changed, _ in obs if key in sent and key not in changed]
            if not extra:
                continue
            if all(key in sent for sent, changed, _ in obs if key not in changed):
                always.append(key)
                continue
            partner = next((p for p in names if p != key and all((p in sent) == (key in sent) for sent, changed, _ in obs
                                                                  if key not in changed)), None)
            if partner is None:
                raise ImportProblem(f"a partial {fragment} update sends its unchanged line <{key}> by no rule found")
            ties[key] = partner
        rule: dict[str, Any] = {"always": always}
        if ties:
            rule["with"] = ties
        rules[fragment] = rule
    return rules
