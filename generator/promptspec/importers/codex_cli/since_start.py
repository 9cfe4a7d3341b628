"""A piece of a context text that only the thread's start sends.

Some values a release derives once, when the session starts, and a switch
does not derive again: Codex 0.125.0 adds its memories folder to the
writable roots of a thread that starts in workspace-write, and a later
switch to workspace-write sends the roots without it.  In a capture this
shows as a context update that is the new state's first-request section
with one piece left out.  The rule learned from it: the piece becomes a
placeholder of the text file it is part of, filled by the fragment only
while the setting has not been switched (`thread.switched`, docs/spec-format.md
`turns`), so first requests render as before.
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

from ...render.codex import CODEX_PLACEHOLDER
from .write_spec import ImportProblem

PLACEHOLDER = "since_start"
"""The placeholder the piece becomes in its text file."""


def left_out(expected: str, sent: str) -> list[tuple[int, int]]:
    """Every (start, stop) of one piece of `expected` whose removal gives `sent`."""
    gap = len(expected) - len(sent)
    if gap <= 0:
        return []
    p = 0
    while p < len(sent) and expected[p] == sent[p]:
        p += 1
    return [(a, a + gap) for a in range(p, -1, -1) if expected[:a] + expected[a + gap:] == sent]


def _template_span(template: str, values: dict[str, str], piece: str) -> str | None:
    """The part of a placeholder template (`{{ home }}/...`) that renders to `piece`, when it is one."""
    segments: list[tuple[int, int, int, int, bool]] = []  # template start/stop, rendered start/stop, placeholder?
    rendered, t = "", 0
    for m in CODEX_PLACEHOLDER.finditer(template):
        if m.group(1) not in values:
            return None
        segments.append((t, m.start(), len(rendered), len(rendered) + m.start() - t, False))
        rendered += template[t:m.start()]
        value = values[m.group(1)]
        segments.append((m.start(), m.end(), len(rendered), len(rendered) + len(value), True))
        rendered += value
        t = m.end()
    segments.append((t, len(template), len(rendered), len(rendered) + len(template) - t, False))
    rendered += template[t:]
    if rendered.count(piece) != 1:
        return None
    a = rendered.index(piece)
    b = a + len(piece)

    def at(pos: int) -> int | None:
        # Inside or at the edge of a literal (every placeholder has one, maybe empty, on each side);
        # a position inside a placeholder's value is no place in the template.
        return next((ts + pos - rs for ts, _, rs, re_, placeholder in segments if not placeholder and rs <= pos <= re_), None)

    start, stop = at(a), at(b)
    return None if start is None or stop is None else template[start:stop]


def _jinja(template_piece: str) -> str:
    """A placeholder template as a Jinja expression (literals quoted, placeholders as names)."""
    parts, t = [], 0
    for m in CODEX_PLACEHOLDER.finditer(template_piece):
        if template_piece[t:m.start()]:
            parts.append(json.dumps(template_piece[t:m.start()]))
        parts.append(m.group(1))
        t = m.end()
    if template_piece[t:]:
        parts.append(json.dumps(template_piece[t:]))
    return " ~ ".join(parts) or '""'


SORTED_LIST = re.compile(r"\[((?:[^\[\]\"]|\"(?:[^\"\\]|\\.)*\")*)\] \| sort \| join\((\"(?:[^\"\\]|\\.)*\")\)")
"""A list the fragment's text sorts and joins (a release that sorts its writable roots, write_spec._sorted_roots)."""
ITEM = re.compile(r'\(?(\w+)(?: ~ ("(?:[^"\\]|\\.)*"))?\)?|("(?:[^"\\]|\\.)*")')
"""One item of it: a placeholder, a placeholder and a literal, or a literal."""


def _in_sorted_list(doc: dict[str, Any], piece: str, values: dict[str, str], unless: str) -> str | None:
    """The fragment's text with the list item `piece` names (an item and its
    separator) sent only `unless` a setting was switched, when the text
    computes the piece as one item of a sorted list; None otherwise."""
    for m in SORTED_LIST.finditer(doc["text"]):
        sep = json.loads(m.group(2))
        items = [i.strip() for i in m.group(1).split(", ")]
        rendered: list[str] = []
        for item in items:
            found = ITEM.fullmatch(item)
            if not found:
                break
            name, tail, literal = found.groups()
            if literal is not None:
                rendered.append(json.loads(literal))
            elif name in values:
                rendered.append(values[name] + (json.loads(tail) if tail else ""))
            else:
                break
        else:
            hits = [k for k, r in enumerate(rendered) if piece in (f"{r}{sep}", f"{sep}{r}")]
            # One item renders to the piece (the spec's reproduction of every thread checks the rest).
            if len(hits) == 1 and rendered.count(rendered[hits[0]]) == 1:
                k = hits[0]
                kept = [*items[:k], f'({items[k]} if {unless} else "")', *items[k + 1:]]
                listed = "[" + ", ".join(kept) + "] | select | sort | join(" + m.group(2) + ")"
                return doc["text"][:m.start()] + listed + doc["text"][m.end():]
    return None


def learn_since_start(files: dict[str, str], staging: Any, section: Any, sent: str, changed: list[str],
                      values: dict[str, str], fragment_doc: Any) -> bool:
    """When `sent` is `section` (a first-request section of the new state) with
    one piece left out, of one of its fragment's text files or one item of a
    list its text sorts, write the rule (the piece a placeholder the fragment
    fills, or the item one it lists, while none of `changed` has been
    switched) into `files` and say so; False when the rule does not fit."""
    doc = fragment_doc(section.fragment) if fragment_doc is not None else None
    if not isinstance(doc, dict) or not isinstance(doc.get("text"), str) or not changed:
        return False
    unless = " and ".join(f'{json.dumps(c)} not in thread.switched' for c in changed)
    # Where a removal fits in several places (`x`, `y` less "x`, `"), a piece that ends
    # at a word's end reads best: "`x`, " (they all render the same).
    for a, b in sorted(left_out(section.text, sent), key=lambda ab: not section.text[ab[1] - 1].isspace()):
        piece = section.text[a:b]
        listed = _in_sorted_list(doc, piece, values, unless)
        if listed is not None:
            _rewrite(files, section.fragment, doc, listed)
            return True
        for table, paths in (doc.get("variables") or {}).items():
            if not isinstance(paths, dict):
                continue
            for path in paths.values():
                if not isinstance(path, str):
                    continue
                file = staging / path
                template = files.get(path) or (file.read_text(encoding="utf-8") if file.is_file() else "")
                span = _template_span(template, values, piece) if template and PLACEHOLDER not in template else None
                if not span or template.count(span) != 1:
                    continue
                call = re.compile(r"text\(" + re.escape(table) + r"\[[^\]]*\](?:, \w+=\w+)*")
                if len(call.findall(doc["text"])) != 1:
                    raise ImportProblem(f"the {section.fragment} fragment reads {table} more than once: no place for a piece only the start sends")
                text = call.sub(lambda m: f'{m.group(0)}, {PLACEHOLDER}=({_jinja(span)} if {unless} else "")', doc["text"])
                files[path] = template.replace(span, "{{ " + PLACEHOLDER + " }}")
                _rewrite(files, section.fragment, doc, text)
                return True
    return False


def _rewrite(files: dict[str, str], fragment: str, doc: dict[str, Any], text: str) -> None:
    """The fragment's file with its text replaced by the one the rule writes."""
    files[f"fragments/{fragment}.yaml"] = yaml.safe_dump({**doc, "text": text}, sort_keys=False, allow_unicode=True, width=1000)


def since_start_rules(learned: Any, staging: Any, machine: Any, asm: Any, variant: Any, caps: dict[str, Any],
                      values: dict[str, str], fragment_doc: Any, updates_of: Any) -> None:
    """Learn, from the switch threads of another start, the pieces of a context
    text only a thread's start sends: an update part that is no section of the
    new state but one with a piece of its text file left out.  `updates_of(bodies, n)`:
    the texts of the context updates request n + 1 adds."""
    from ...assemble.conversation import request_after
    from ...oracle.thread_compare import script_steps
    from ...spec.readers.scripts import parse_script

    cut = {f for u in learned.turns.get("updates", []) if u.get("partial") for f in u["fragments"]}  # sent in part by rule
    for name, cap in caps.items():
        if cap.refused or len(cap.bodies) < 2:
            continue
        steps = script_steps(cap.thread)
        script = parse_script(steps, name)
        for n in range(1, len(cap.bodies)):
            now = [s for _, _, s in request_after(machine, variant, script, n + 1, asm).sections if s.fragment not in cut]
            known = {x.text for x in now}
            changed = list(steps[n].get("set", {}))
            for text in updates_of(cap.bodies, n):
                if text not in known:
                    any(learn_since_start(learned.files, staging, x, text, changed, values, fragment_doc) for x in now)
