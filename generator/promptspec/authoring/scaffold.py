"""`promptspec new`: start a fragment, mode or personality from a skeleton
that already loads and lints clean.

A new contributor's first edit should not be a YAML puzzle: the fragment
skeleton explains every key in comments, and its body starts and ends with a
newline so the markers sit on their own lines.  Modes and personalities also
need an entry in `spec.yaml`; that file is hand-written and commented, so we
insert lines into its text instead of re-dumping parsed YAML (which would drop
every comment).  Every change is checked by loading the spec again and rolled
back if that fails, so a refused command leaves nothing behind.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..assemble.builder import PERSONALITY_PLACEHOLDER
from ..errors import SpecError, UsageError
from ..spec.files import read_text_file
from ..spec.readers.load import load_spec
from ..spec.schemas import modeline
from ..spec.model import (
    DEFAULT_MODES,
    DEFAULT_PERSONALITIES,
    NAME_RE,
    SLOT_ROLE,
    SPEC_FILE,
    Spec,
)

DEFAULT_SLOT = {"developer": "developer_extensions", "user": "user_extensions"}


@dataclass(frozen=True)
class Created:
    """What `new` wrote (paths relative to the spec folder) and what to do next."""

    files: tuple[str, ...]
    edited: tuple[str, ...]
    notes: tuple[str, ...] = ()


def check_new_name(name: str, what: str) -> str:
    if not isinstance(name, str) or not NAME_RE.match(name) or ".." in name:
        raise UsageError(
            f"{what} name {name!r} is not a safe file name: use letters, digits, '.', '_' or '-' "
            f"(at most 100 characters, starting with a letter or digit)"
        )
    return name


# ---------------------------------------------------------------------------
# Fragment


FRAGMENT_YAML = """\
{modeline}
# Fragment `{name}`: one section of the request Codex sends.
# Each key is described in docs/spec-format.md ("Fragment definitions");
# `promptspec lint` checks the rules in docs/guide/lint-rules.md.

# One or two sentences: what this section tells the model, and why it exists.
description: {description}
# Who reviews changes to this text (a team or a person).
owner: ""
# The message the section goes into: developer or user. It must match the
# slot's message (lint PS101).
role: {role}
# Where in that message: a slot of the layout. Slots keep Codex's order; see
# `layout:` in docs/spec-format.md for the list.
slot: {slot}
# Markers wrap the body exactly as written, with nothing added in between.
# Codex finds earlier copies of a section by its markers, so they must be
# unique and must not be a prefix of another fragment's marker (lint PS103).
start: "<{name}>"
end: "</{name}>"
# The body template, relative to this file. It starts and ends with a newline
# so the markers sit on lines of their own (lint PS104).
body: {name}.md
# jinja (default): a sandboxed Jinja template. codex: text copied from Codex,
# where only {{{{ name }}}} placeholders are filled, by plain replacement.
engine: jinja
# Limit the fragment to some variants: axis -> values (shell-style patterns).
# Leave it out to send the section in every variant.
# when:
#   mode: [plan, execute]
# Leave the section out when one of these scenario values is empty.
# requires: [open_files]
# Values only this fragment's templates can read (lint PS202: use them all).
# variables:
#   max_items: 5
# Order among fragments in the same slot: lower first, ties by name.
order: 0
"""

FRAGMENT_BODY = "\nReplace this line with what the {name} section tells the model.\n"


LINT = "promptspec lint"
"""The command a note says to run next (the CLI adds the --spec it was given)."""


def new_fragment(spec_dir: Path, name: str, role: str, slot: str | None = None, description: str | None = None,
                 lint: str = LINT) -> Created:
    """Write fragments/NAME.yaml and fragments/NAME.md, then prove they load and lint clean."""
    check_new_name(name, "fragment")
    if role not in DEFAULT_SLOT:
        raise UsageError(f"role must be 'developer' or 'user', not {role!r}")
    spec = load_spec(spec_dir)
    slot = slot or DEFAULT_SLOT[role]
    try:
        group = spec.slot_message(slot)
    except KeyError:
        raise UsageError(
            f"unknown slot {slot!r}; slots of this spec: {', '.join(s for slots in spec.layout.values() for s in slots)}"
        ) from None
    if SLOT_ROLE[group] != role:
        raise UsageError(f"slot {slot!r} is in a {SLOT_ROLE[group]} message; use --role {SLOT_ROLE[group]} or another slot")
    clash = next((f.name for f in spec.fragments if f.name.lower() == name.lower()), None)
    if clash is not None:
        raise UsageError(f"fragment {clash!r} already exists; pick another name")
    folder = spec.fs.resolve(str(spec.raw.get("fragments") or "fragments"), origin=SPEC_FILE)
    yaml_path, body_path = folder / f"{name}.yaml", folder / f"{name}.md"
    for path in (yaml_path, body_path, folder / f"{name}.yml"):
        if path.exists():
            raise UsageError(f"{spec.fs.display(path)} already exists; refusing to overwrite it")
    text = FRAGMENT_YAML.format(
        modeline=modeline("fragment"),
        name=name,
        role=role,
        slot=slot,
        description=_yaml_str(description or f"TODO: what the {name} section tells the model, and why."),
    )
    written: list[Path] = []
    try:
        _write_new(body_path, FRAGMENT_BODY.format(name=name), written)
        _write_new(yaml_path, text, written)
        reloaded = load_spec(spec_dir)
        _check_clean_fragment(reloaded, name)
    except BaseException:
        for path in reversed(written):
            path.unlink(missing_ok=True)
        raise
    fs = reloaded.fs
    return Created(
        files=(fs.display(yaml_path), fs.display(body_path)),
        edited=(),
        notes=(f"next: edit {fs.display(body_path)}, then run `{lint}`",),
    )


LEFT_TO_FILL = ("PS206",)
"""What a skeleton leaves to its author on purpose (its TODO description, its owner); lint reports it until filled in."""


def _check_clean_fragment(spec: Spec, name: str) -> None:
    """The skeleton must not start life with a lint error (e.g. a marker that
    collides with an existing one)."""
    from .lint import check_spec

    for finding in check_spec(spec):
        if finding.fragment == name and finding.rule not in LEFT_TO_FILL:
            raise SpecError(
                f"the new fragment would not lint clean: {finding.rule} {finding.message}",
                finding.path,
                line=finding.line or None,
                hint="pick another name",
            )


# ---------------------------------------------------------------------------
# Mode and personality


MODE_BODY = "# Mode: {title}\n\nReplace this line with how the agent works in {title} mode.\n"
PERSONALITY_BODY = "Replace this line with the {title} communication style.\n"


def new_mode(spec_dir: Path, name: str, description: str | None = None, lint: str = LINT) -> Created:
    return _new_choice(spec_dir, name, "modes", "mode", MODE_BODY, DEFAULT_MODES, description, lint)


def new_personality(spec_dir: Path, name: str, description: str | None = None, lint: str = LINT) -> Created:
    created = _new_choice(spec_dir, name, "personalities", "personality", PERSONALITY_BODY, DEFAULT_PERSONALITIES, description, lint)
    spec = load_spec(spec_dir)
    missing = [
        m.slug
        for m in spec.models
        if m.instructions_template is not None
        and PERSONALITY_PLACEHOLDER in m.instructions_template
        and f"personality_{name}" not in m.instructions_variables
    ]
    if missing:
        note = (f"models without 'personality_{name}' in instructions_variables leave the personality slot of "
                f"their base instructions empty: {', '.join(missing)}")
        created = Created(created.files, created.edited, (*created.notes, note))
    return created


def _new_choice(spec_dir: Path, name: str, key: str, what: str, body: str, defaults: tuple[str, ...], description: str | None,
                lint: str) -> Created:
    check_new_name(name, what)
    spec = load_spec(spec_dir)
    existing = spec.modes if key == "modes" else spec.personalities
    clash = next((c.name for c in existing if c.name.lower() == name.lower()), None)
    if clash is not None:
        raise UsageError(f"{what} {clash!r} already exists; pick another name")
    template_ref = f"{key}/{name}.md"
    template = spec.fs.resolve(template_ref)
    if template.exists():
        raise UsageError(f"{template_ref} already exists; refusing to overwrite it")
    spec_path = spec.root / SPEC_FILE
    original = read_text_file(spec_path)  # bounded and regular, like every spec read (it loaded already, but may have changed)
    title = name.replace("_", " ").replace("-", " ").title()
    entry = {
        "display_name": _yaml_str(title),
        "description": _yaml_str(description or (f"TODO: when to use the {title} mode." if key == "modes" else f"TODO: how the {title} personality talks.")),
        "template": template_ref,
    }
    updated = add_mapping_entry(original, key, name, entry, defaults)
    written: list[Path] = []
    made_dir = not template.parent.exists()
    try:
        template.parent.mkdir(parents=True, exist_ok=True)
        _write_new(template, body.format(title=title), written)
        _replace_text(spec_path, updated)
        load_spec(spec_dir)
    except BaseException:
        _replace_text(spec_path, original)
        for path in reversed(written):
            path.unlink(missing_ok=True)
        if made_dir:
            try:
                template.parent.rmdir()
            except OSError:
                pass
        raise
    return Created(
        files=(template_ref,),
        edited=(SPEC_FILE,),
        notes=(f"next: edit {template_ref}, then run `{lint}`",),
    )


_TOP_KEY = re.compile(r"^(?P<key>[A-Za-z_][A-Za-z0-9_]*)\s*:(?P<rest>.*)$")


def add_mapping_entry(text: str, key: str, name: str, fields: dict[str, str], defaults: tuple[str, ...] = ()) -> str:
    """Insert `name: {fields}` at the end of the top-level block mapping `key:`
    in YAML text, keeping every other line (and comment) as it is.

    Without a `key:` block the spec used the built-in defaults; we then append
    a block listing those defaults first, so the matrix only grows by `name`."""
    lines = text.splitlines(keepends=True)
    start = None
    for i, line in enumerate(lines):
        m = _TOP_KEY.match(line)
        if m and m.group("key") == key:
            rest = m.group("rest").split("#", 1)[0].strip()
            if rest:
                raise SpecError(
                    f"'{key}:' is not a block mapping, so it cannot be extended automatically",
                    SPEC_FILE, line=i + 1, hint=f"write '{key}:' with one entry per line, or add '{name}' by hand",
                )
            start = i
            break
    if start is None:
        block = [f"\n{key}:\n"] + [f"  {d}: {{}}\n" for d in defaults] + [f"  {name}:\n"]
        block += [f"    {k}: {v}\n" for k, v in fields.items()]
        body = text if text.endswith("\n") or not text else text + "\n"
        return body + "".join(block)
    # The block runs until the next line that starts at column 0 and is not blank.
    last = start
    indent = None
    child_indent = None
    for j in range(start + 1, len(lines)):
        line = lines[j]
        if not line.strip():
            continue
        if not line[0].isspace():
            break
        last = j
        if line.lstrip().startswith("#"):
            continue
        width = len(line) - len(line.lstrip(" "))
        if indent is None:
            indent = width
        elif width > indent and child_indent is None:
            child_indent = width
    if indent is None:
        raise SpecError(f"'{key}:' is empty", SPEC_FILE, line=start + 1, hint=f"add '{name}' by hand")
    child_indent = child_indent or indent * 2
    pad, child = " " * indent, " " * child_indent
    entry = [f"{pad}{name}:\n"] + [f"{child}{k}: {v}\n" for k, v in fields.items()]
    if not lines[last].endswith("\n"):
        lines[last] += "\n"
    return "".join(lines[: last + 1] + entry + lines[last + 1 :])


# ---------------------------------------------------------------------------
# Files


def _yaml_str(value: str) -> str:
    """A one-line YAML string, quoted only when plain style would misread it."""
    value = " ".join(str(value).split())
    plain = re.match(r"^[A-Za-z0-9][^:#\[\]{},&*!|>'\"%@`]*$", value) and not value.endswith(" ")
    if plain and value.lower() not in ("yes", "no", "true", "false", "null", "on", "off", "~"):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _write_new(path: Path, text: str, written: list[Path]) -> None:
    """Create a file that must not exist yet (O_EXCL: no race with another writer)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        raise UsageError(f"{path} already exists; refusing to overwrite it") from None
    written.append(path)
    with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)


def _replace_text(path: Path, text: str) -> None:
    """Replace a file's text in one step, so a crash never leaves half a spec.yaml."""
    tmp = path.with_name(f".{path.name}.promptspec-new.tmp")
    tmp.write_text(text, encoding="utf-8", newline="\n")
    os.replace(tmp, path)
