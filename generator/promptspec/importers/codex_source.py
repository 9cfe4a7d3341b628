"""`promptspec import-codex`: a spec folder that describes a Codex checkout.

The imported spec *refers to* the checkout instead of copying it: spec.yaml
declares `roots: {codex: <checkout>}` and every Codex text (model catalog,
sandbox and approval texts, collaboration-mode templates) is read through an
`@codex/...` reference.  What we write is only our own glue: fragment
definitions with Codex's markers and order, Jinja bodies that compose the
referenced texts the way Codex's Rust code does, a deterministic scenario, and
a small sample AGENTS.md tree of our own words.  So the output carries no
Codex prose, and re-importing after a `git pull` picks up the new texts.

Codex moved its prompt files between releases, so each text is looked up in
a list of known locations (newest layout and the fixture's layout first).
The folder is staged beside `--out` (atomic.replace_tree) and swapped in
only after every variant has rendered, so a failed import leaves nothing
behind.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from ..errors import SpecError
from ..render.codex import CODEX_PLACEHOLDER
from ..util.atomic import replace_tree

ROOT_NAME = "codex"

CATALOG_PATHS = (
    "codex-rs/models-manager/models.json",  # current checkouts
    "codex-rs/core/models.json",  # older checkouts (before the models-manager crate)
)

# Sandbox-mode texts.  The protocol-era files use `{network_access}` with single
# braces and were filled by plain `str::replace`; the later ones use the
# `{{ network_access }}` template syntax.  Released CLIs (0.125.0 to 0.171.0,
# measured with `verify --cli`) send the protocol-era sentence; the
# core/src/context/ files add a network-proxy sentence no release sends, so they
# come last.
SANDBOX_DIRS = (
    "codex-rs/protocol/src/prompts/permissions/sandbox_mode",
    "codex-rs/prompts/templates/permissions/sandbox_mode",
    "codex-rs/core/src/context/prompts/permissions/sandbox_mode",
)
SANDBOX_FILES = {
    "read-only": "read_only.md",
    "workspace-write": "workspace_write.md",
    "danger-full-access": "danger_full_access.md",
}

APPROVAL_DIRS = (
    "codex-rs/protocol/src/prompts/permissions/approval_policy",
    "codex-rs/core/src/context/prompts/permissions/approval_policy",
    "codex-rs/prompts/templates/permissions/approval_policy",
)
# Policy (its config/serde name) -> candidate files, first existing wins.  Between
# 2026-02-16 and 03-20 the on-request text was only `on_request_rule.md`.
APPROVAL_FILES = {
    "untrusted": ("unless_trusted.md",),
    "on-failure": ("on_failure.md",),
    "on-request": ("on_request.md", "on_request_rule.md"),
    "never": ("never.md",),
}

MODE_DIRS = (
    "codex-rs/core/templates/collaboration_mode",
    "codex-rs/collaboration-mode-templates/templates",
)
MODES = (
    ("default", "Default"),
    ("plan", "Plan"),
    ("execute", "Execute"),
    ("pair_programming", "Pair Programming"),
)
TUI_VISIBLE_MODES = ("Default", "Plan")
"""Codex fills `{{KNOWN_MODE_NAMES}}` from the modes its TUI offers."""

PERSONALITIES = (
    ("unset", "No personality configured: Codex fills the template with its configured default, pragmatic."),
    ("none", "Personality explicitly off: the template's personality slot is left empty."),
    ("friendly", "The model's personality_friendly text fills the template."),
    ("pragmatic", "The model's personality_pragmatic text fills the template."),
)

SCENARIO_CWD = "/workspace/project"

CANNOT_KNOW = (
    "sources do not say which approval texts, skills list and tools a release sends"
    " (Codex 0.125.0 sends on-request and never texts found in no source file);"
    " for exact texts import the release itself: promptspec import-codex --cli PATH"
)
"""The one line `import-codex DIR` prints about what a checkout cannot tell."""


def format_mode_names(names: Sequence[str]) -> str:
    """Codex's `format_mode_names`: none / A / A and B / A, B, C."""
    if not names:
        return "none"
    if len(names) == 1:
        return names[0]
    if len(names) == 2:
        return f"{names[0]} and {names[1]}"
    return ", ".join(names)


# ---------------------------------------------------------------------------
# Finding things in the checkout


@dataclass(frozen=True)
class Found:
    """What the checkout provides, as paths relative to its root."""

    catalog: str
    sandbox: dict[str, str]
    sandbox_single_brace: bool
    approval: dict[str, str]
    modes: tuple[tuple[str, str, str], ...]  # (name, display name, path)
    mode_placeholders: tuple[str, ...]


def _first_dir(root: Path, candidates: Iterable[str], names: Iterable[str]) -> str | None:
    names = tuple(names)
    for rel in candidates:
        folder = root / rel
        if folder.is_dir() and any((folder / n).is_file() for n in names):
            return rel
    return None


def _read(codex_dir: Path, rel: str) -> str:
    """Read a checkout file under the rules the imported spec will obey
    (hidden files and symlinks out of the checkout refused): a hostile
    checkout's `plan.md -> ../.git/config` must not be read, let alone published."""
    from ..spec.files import SpecFS

    return SpecFS(codex_dir).read_text(rel)[0]


def survey(codex_dir: Path) -> Found:
    """Locate the catalog and prompt texts, or say precisely what is missing."""
    if not codex_dir.exists():
        raise SpecError("Codex checkout not found", codex_dir, hint="pass the folder of a Codex clone (the one holding codex-rs/)")
    if not codex_dir.is_dir():
        raise SpecError("Codex checkout is not a folder", codex_dir, hint="pass the folder of a Codex clone (the one holding codex-rs/)")
    catalog = next((rel for rel in CATALOG_PATHS if (codex_dir / rel).is_file()), None)
    if catalog is None:
        raise SpecError(
            f"no model catalog found (looked for {' and '.join(CATALOG_PATHS)})",
            codex_dir,
            hint="pass the root of a Codex checkout",
        )

    sandbox: dict[str, str] = {}
    single = False
    sdir = _first_dir(codex_dir, SANDBOX_DIRS, SANDBOX_FILES.values())
    if sdir is not None:
        for mode, name in SANDBOX_FILES.items():
            if (codex_dir / sdir / name).is_file():
                sandbox[mode] = f"{sdir}/{name}"
                text = _read(codex_dir, f"{sdir}/{name}")
                if "network_access" not in CODEX_PLACEHOLDER.findall(text) and "{network_access}" in text:
                    single = True

    approval: dict[str, str] = {}
    adir = _first_dir(codex_dir, APPROVAL_DIRS, (n for names in APPROVAL_FILES.values() for n in names))
    if adir is not None:
        for policy, names in APPROVAL_FILES.items():
            name = next((n for n in names if (codex_dir / adir / n).is_file()), None)
            if name is not None:
                approval[policy] = f"{adir}/{name}"

    modes: list[tuple[str, str, str]] = []
    placeholders: set[str] = set()
    for name, display in MODES:
        rel = next((f"{d}/{name}.md" for d in MODE_DIRS if (codex_dir / d / f"{name}.md").is_file()), None)
        if rel is not None:
            modes.append((name, display, rel))
            placeholders.update(CODEX_PLACEHOLDER.findall(_read(codex_dir, rel)))
    return Found(catalog, sandbox, single, approval, tuple(modes), tuple(sorted(placeholders)))


# ---------------------------------------------------------------------------
# What we write: our own glue, as text


def _q(value: str) -> str:
    """A YAML scalar: JSON strings are valid YAML double-quoted strings."""
    return json.dumps(value, ensure_ascii=False)


def _ref(rel: str) -> str:
    return f"@{ROOT_NAME}/{rel}"


def _mapping(items: dict[str, str], indent: str) -> str:
    return "".join(f"{indent}{_q(k)}: {_q(_ref(v))}\n" for k, v in items.items())


IMPORT_HEADER = "# Imported from a Codex checkout by `promptspec import-codex`."


def spec_yaml(codex_dir: Path, found: Found) -> str:
    modes = found.modes
    lines = [
        IMPORT_HEADER,
        "# Codex's own texts are read from the checkout through @codex/... references;",
        "# only the glue (fragment definitions, scenario, sample AGENTS.md tree) lives here.",
        f"name: {_q('Codex (' + codex_dir.name + ')')}",
        "roots:",
        f"  {ROOT_NAME}: {_q(str(codex_dir))}",
        f"models: {_q(_ref(found.catalog))}",
        "",
        "# `default` asks for no personality; `none` asks for an empty one. The text",
        "# comes from each model's model_messages.instructions_variables.",
        "personalities:",
    ]
    for name, description in PERSONALITIES:
        lines += [f"  {name}:", f"    description: {_q(description)}"]
        if name == "unset":
            lines.append("    fills: pragmatic")
    lines += ["", "# Collaboration-mode templates, sent verbatim inside <collaboration_mode>;",
              "# `unset` (no mode chosen for the turn) sends no such section."]
    if modes:
        lines += ["modes:", "  unset:", "    description: \"No collaboration mode set for the turn.\""]
        for name, display, rel in modes:
            lines += [
                f"  {name}:",
                f"    display_name: {_q(display)}",
                f"    template: {_q(_ref(rel))}",
                "    engine: codex",
            ]
    else:
        lines += ["# (none found in this checkout)", "modes:", "  default:", "    display_name: Default"]
    lines += [
        "",
        "# One fixed, deterministic session. Change these to see other variants.",
        "scenario:",
        f"  cwd: {_q(SCENARIO_CWD)}",
        "  shell: bash",
        '  current_date: "2026-01-15"',
        "  timezone: Etc/UTC",
        f"  sandbox_mode: {_q(_pick(found.sandbox, 'workspace-write'))}",
        f"  approval_policy: {_q(_pick(found.approval, 'on-request'))}",
        f"  writable_roots: [{_q(SCENARIO_CWD)}]",
        "  # Configured `developer_instructions` (sent raw, without markers); empty: not sent.",
        '  developer_instructions: ""',
    ]
    for name in found.mode_placeholders:
        if name == "KNOWN_MODE_NAMES":
            lines.append("  # Codex fills this with the modes its TUI shows.")
            lines.append(f"  KNOWN_MODE_NAMES: {_q(format_mode_names(TUI_VISIBLE_MODES))}")
        else:
            lines.append(f"  # Codex fills {{{{{name}}}}} at run time; set the text you want to see.")
            lines.append(f'  {name}: ""')
    lines += [
        "",
        "# Codex opens the network under danger-full-access (or when workspace-write sets network_access).",
        "derived:",
        "  network_access: \"{{ 'enabled' if sandbox_mode == 'danger-full-access' else 'restricted' }}\"",
        "",
        "# AGENTS.md discovery: the sample tree in project/ stands for the cwd.",
        "agents_md:",
        "  tree: project",
        f"  project_root: {_q(SCENARIO_CWD)}",
        "",
    ]
    return "\n".join(lines)


def _pick(available: dict[str, str], preferred: str) -> str:
    if preferred in available or not available:
        return preferred
    return next(iter(available))


PERMISSIONS_BODY = """\
{#- Composed like Codex's PermissionsInstructions: the sandbox-mode text with
    its end trimmed, the approval-policy text as it is, then the writable-roots
    line; codex_join starts each block on a new line, so the body begins and
    ends with a newline. -#}
{%- set raw = text(sandbox_files[sandbox_mode], network_access=network_access) -%}
{%- set sandbox = (raw | replace("{network_access}", network_access)) if single_brace else raw -%}
{%- set roots = writable_roots if sandbox_mode == "workspace-write" else [] -%}
{%- set roots_line -%}
{%- if roots|length == 1 %} The writable root is `{{ roots[0] }}`.
{%- elif roots %} The writable roots are {% for root in roots %}`{{ root }}`{{ ", " if not loop.last }}{% endfor %}.
{%- endif -%}
{%- endset -%}
{{ codex_join(sandbox.rstrip(), text(approval_files[approval_policy]), roots_line) -}}
"""


def permissions_yaml(found: Found) -> str:
    return (
        "description: What the sandbox allows and when to ask for approval, composed from Codex's sandbox-mode text, approval-policy text and the writable-roots line.\n"
        "role: developer\n"
        "slot: permissions\n"
        'start: "<permissions instructions>"\n'
        'end: "</permissions instructions>"\n'
        "body: permissions.md\n"
        "variables:\n"
        f"  single_brace: {'true' if found.sandbox_single_brace else 'false'}\n"
        "  sandbox_files:\n" + _mapping(found.sandbox, "    ") + "  approval_files:\n" + _mapping(found.approval, "    ")
    )


DEVELOPER_INSTRUCTIONS_YAML = """\
description: The configured developer_instructions, sent raw as their own part right after permissions; skipped when empty.
role: developer
slot: developer_instructions
requires: [developer_instructions]
text: "{{ developer_instructions }}"
"""

COLLABORATION_YAML = """\
description: The collaboration mode's template, verbatim between the tags (the template carries its own newlines).
# Codex puts the template right after the tag, so the first line is glued to it.
glue_ok: true
role: developer
slot: collaboration_mode
start: "<collaboration_mode>"
end: "</collaboration_mode>"
text: "{{ mode.text }}"
"""

PERSONALITY_YAML = """\
description: >-
  Sent only when the personality is not already baked into the base
  instructions, as Codex decides at the start of a session. Codex's own
  framing sentence lives in its Rust source, so `preamble` here is our
  wording; change it to match the Codex version you study.
role: developer
slot: personality
start: "<personality_spec>"
end: "</personality_spec>"
body: personality_spec.md
variables:
  preamble: "Communication style for the rest of this conversation:"
"""

PERSONALITY_BODY = """\
{#- Codex's rule: only friendly and pragmatic carry a message (from the model's
    instructions_variables; models without model_messages have none). It is
    baked, so not sent, when the model's template has the personality
    placeholder, all three personality variables are set, and the base
    instructions are that template rather than an override. -#}
{%- set vars = model.instructions_variables -%}
{%- set message = vars.get("personality_" ~ personality.name) if personality.name in ("friendly", "pragmatic") else none -%}
{%- set complete = vars.get("personality_default") is not none
      and vars.get("personality_friendly") is not none
      and vars.get("personality_pragmatic") is not none -%}
{%- set baked = model.bakes_personality and complete and base.rule == "template" -%}
{%- if message and not baked %}{{ " " ~ preamble ~ " \\n" ~ message ~ " " }}{% endif -%}
"""

AGENTS_YAML = """\
description: The AGENTS.md files from the project root down to the cwd.
role: user
slot: agents_md
requires: [agents_md]
start: "# AGENTS.md instructions for "
end: "</INSTRUCTIONS>"
text: |
  {{ cwd }}

  <INSTRUCTIONS>
  {{ agents_md }}
"""

ENVIRONMENT_YAML = """\
description: "Where the agent runs: working directory, shell, date and time zone."
role: user
slot: environment_context
start: "<environment_context>"
end: "</environment_context>"
body: environment_context.md
"""

ENVIRONMENT_BODY = """\
{#- One line per known value, children indented two spaces; the shell is
    always there, the others only when set. -#}
{%- set lines = [
      cwd and "  <cwd>" ~ cwd ~ "</cwd>",
      "  <shell>" ~ shell ~ "</shell>",
      current_date and "  <current_date>" ~ current_date ~ "</current_date>",
      timezone and "  <timezone>" ~ timezone ~ "</timezone>",
    ] -%}
{{ "\\n" ~ (lines | select | join("\\n")) ~ "\\n" -}}
"""

SAMPLE_AGENTS_MD = """\
# Working in this repository

- Run the unit tests for the package you change before calling a task done.
- Keep each change to one concern; split unrelated clean-ups into their own change.
- New modules need a short docstring saying why they exist.
"""

def spec_files(codex_dir: Path, found: Found) -> dict[str, str]:
    """Every file of the imported spec, by relative path."""
    files = {
        "spec.yaml": spec_yaml(codex_dir, found),
        "fragments/developer_instructions.yaml": DEVELOPER_INSTRUCTIONS_YAML,
        "fragments/collaboration_mode.yaml": COLLABORATION_YAML,
        "fragments/personality_spec.yaml": PERSONALITY_YAML,
        "fragments/personality_spec.md": PERSONALITY_BODY,
        "fragments/agents_md.yaml": AGENTS_YAML,
        "fragments/environment_context.yaml": ENVIRONMENT_YAML,
        "fragments/environment_context.md": ENVIRONMENT_BODY,
        "project/AGENTS.md": SAMPLE_AGENTS_MD,
    }
    if found.sandbox and found.approval:
        files["fragments/permissions.yaml"] = permissions_yaml(found)
        files["fragments/permissions.md"] = PERMISSIONS_BODY
    return dict(sorted(files.items()))


# ---------------------------------------------------------------------------
# Writing, atomically


def _check_out(out: Path, force: bool, files: dict[str, str]) -> None:
    """--force replaces only what an earlier import wrote: a spec.yaml that
    starts with our header and nothing else beside the import's own files
    (a hand-made spec, its .git or notes are never deleted)."""
    if not out.exists() and not out.is_symlink():
        return
    if not out.is_dir() or out.is_symlink():
        raise SpecError("output path exists and is not a folder", out, hint="choose another --out")
    if not any(out.iterdir()):
        return
    if not force:
        raise SpecError("output folder is not empty", out, hint="pass --force to replace a previously imported spec, or choose another --out")
    from .output import not_an_import

    why = not_an_import(out, files, IMPORT_HEADER)
    if why:
        raise SpecError(
            f"refusing to replace a folder that is not an earlier import ({why})",
            out,
            hint="--force only replaces a spec folder written by import-codex; choose another --out",
        )


def _verify(folder: Path) -> None:
    """Load the spec and assemble every variant: an import that cannot render is not written."""
    from ..assemble.builder import assemble_all
    from ..spec.readers.load import load_spec

    assemble_all(load_spec(folder))


def import_codex(codex_dir: Path, out: Path, force: bool = False) -> Path:
    """Write a spec folder at `out` describing the Codex checkout `codex_dir`."""
    codex_dir = Path(codex_dir).expanduser()
    out = Path(out).expanduser()
    found = survey(codex_dir)
    codex_dir = codex_dir.resolve()
    files = spec_files(codex_dir, found)
    _check_out(out, force, files)

    parent = out.absolute().parent
    created = [p for p in (parent, *parent.parents) if not p.exists()]  # deepest first
    try:
        with replace_tree(out) as staging:
            for rel, content in files.items():
                path = staging / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(content, encoding="utf-8", newline="\n")
            _verify(staging)
    except BaseException:
        for folder in created:  # leave no trace, not even the parents we made
            try:
                folder.rmdir()
            except OSError:
                break
        raise
    return out
