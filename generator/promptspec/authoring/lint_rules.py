"""The lint rules: pure functions over data already built, each yielding
`Finding`s.  Rules that need only the loaded `Spec` take a spec; rules that
need rendered sections, token counts or the files a run read take the
pipeline's `Result`.
"""

from __future__ import annotations

import fnmatch
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

import jinja2
from jinja2 import nodes

from ..assemble import agents_md
from ..assemble.matrix import matrix
from ..assemble.request import Variant
from ..errors import INVISIBLE, SpecError
from ..render.codex import CODEX_PLACEHOLDER
from ..render.renderer import renderer_for
from ..spec.files import read_regular_bytes, read_text_file
from ..spec.model import BUILTIN_NAMES, ROLES, SLOT_ROLE, SPEC_FILE, Fragment, Spec, When
from ..spec.readers.sources import Located
from .later_turns_lint import LATER_NAMES, conversation_files
from .findings import IGNORED_FILES, Finding, finding
from .skeleton_rules import SKELETON_RULES
from .tool_rules import TOOL_RESULT_RULES, TOOL_SPEC_RULES

# ---------------------------------------------------------------------------
# Small helpers


def _raw_line(spec: Spec, *keys: Any) -> int | None:
    """Line of a key path in spec.yaml (e.g. 'agents_md', 'max_bytes')."""
    node: Any = spec.raw
    line = None
    for key in keys:
        if not isinstance(node, Located) or key not in node:
            break
        line = node.line_of(key)
        node = node[key]
    return line


def _short(text: str, n: int = 30) -> str:
    flat = text.replace("\n", "\\n")
    return flat if len(flat) <= n else flat[:n] + "..."


def _read(spec: Spec, ref: str, origin: str | None = None) -> tuple[str, Path]:
    """Read a spec file without recording it in `fs.read_paths`: what lint
    reads must not count as use for the orphan rule (PS401)."""
    path = spec.fs.resolve(ref, origin=origin)
    return read_text_file(path), path


def _fragment_file(spec: Spec, fragment: Fragment) -> str:
    """Where a fragment's body lives (the body file, else its yaml)."""
    if fragment.body_file is not None:
        return spec.fs.display(spec.fs.resolve(fragment.body_file))
    return fragment.source


# ---------------------------------------------------------------------------
# PS101 role matches slot


def _roles(spec: Spec) -> Iterator[Finding]:
    for f in spec.fragments:
        if f.role not in ROLES:
            yield finding(
                "PS101", f.source, f.line,
                f"role {f.role!r} is not 'developer' or 'user'", fragment=f.name,
            )
            continue
        if f.later and not f.slot:  # a later-turn text: its message is the one turns: sends it in
            continue
        try:
            group = spec.slot_message(f.slot)
        except KeyError:
            yield finding("PS101", f.source, f.line, f"slot {f.slot!r} is not in the layout", fragment=f.name)
            continue
        expected = SLOT_ROLE[group]
        if f.role != expected:
            yield finding(
                "PS101", f.source, f.line,
                f"role {f.role!r} does not match slot {f.slot!r}, which goes in a {expected} message "
                f"(set role: {expected}, or move it to a {f.role} slot)",
                fragment=f.name,
            )


# ---------------------------------------------------------------------------
# PS102 / PS103 markers


def _marker_pairs(spec: Spec) -> Iterator[Finding]:
    for f in spec.fragments:
        if bool(f.start) != bool(f.end):
            have, missing = ("start", "end") if f.start else ("end", "start")
            yield finding(
                "PS102", f.source, f.line,
                f"'{have}' marker is set but '{missing}' is empty (set both, or neither)",
                fragment=f.name,
            )


_TEMPLATE_OPEN = re.compile(r"\{[{%#]")


# Cyrillic and Greek letters that render like Latin ones: a marker spelled
# with them looks identical in review but is a different string to Codex.
_LOOKALIKES = str.maketrans(
    "аеорсухіјѕԁԛԝкмнтвгѵαβεικνορτυχ",
    "aeopcyxijsdqwkmhtbrvabeiknoptux",
)


def static_marker(marker: str) -> str:
    """The part of a marker before any template markup, compared loosely:
    case-folded, compatibility-normalised and with look-alike letters mapped to
    Latin, so `<Tools>` and `<tооls>` (Cyrillic o) count as the same marker."""
    m = _TEMPLATE_OPEN.search(marker)
    static = marker[: m.start()] if m else marker
    return unicodedata.normalize("NFKC", static).casefold().translate(_LOOKALIKES)


def _marker_ascii(spec: Spec) -> Iterator[Finding]:
    for f in sorted(spec.fragments, key=lambda f: f.name):
        for which, marker in (("start", f.start), ("end", f.end)):
            odd = sorted({ch for ch in marker if ord(ch) > 127})
            if odd:
                names = ", ".join(f"U+{ord(ch):04X} {unicodedata.name(ch, '?')}" for ch in odd)
                yield finding(
                    "PS105", f.source, f.line,
                    f"{which} marker {marker!r} contains non-ASCII characters ({names}); "
                    "a look-alike letter makes a marker that reads the same but never matches",
                    fragment=f.name,
                )


def _marker_collisions(spec: Spec) -> Iterator[Finding]:
    markers: list[tuple[str, str, str, str]] = []  # (fragment, which, marker, static)
    for f in sorted(spec.fragments, key=lambda f: f.name):
        for which, marker in (("start", f.start), ("end", f.end)):
            static = static_marker(marker)
            if static.strip():
                markers.append((f.name, which, marker, static))
    by_name = {f.name: f for f in spec.fragments}
    reported: set[tuple[str, str]] = set()
    for i, (fa, wa, ma, sa) in enumerate(markers):
        for fb, wb, mb, sb in markers[i + 1 :]:
            if fa == fb:
                if sa == sb:
                    f = by_name[fa]
                    yield finding(
                        "PS103", f.source, f.line,
                        f"start and end markers are the same ({ma!r}); Codex could not tell where the section ends",
                        fragment=fa,
                    )
                continue
            if not (sa.startswith(sb) or sb.startswith(sa)) or (fa, fb) in reported:
                continue
            reported.add((fa, fb))
            how = "equals" if sa == sb else "is a prefix of" if sb.startswith(sa) else "starts with"
            for here, there, mine, theirs, w_here, w_there in ((fa, fb, ma, mb, wa, wb), (fb, fa, mb, ma, wb, wa)):
                f = by_name[here]
                yield finding(
                    "PS103", f.source, f.line,
                    f"{w_here} marker {mine!r} {how if here == fa else _converse(how)} fragment '{there}' {w_there} marker "
                    f"{theirs!r} (case-insensitively); Codex finds sections by marker, so make it unique",
                    fragment=here,
                )


def _converse(how: str) -> str:
    return {"equals": "equals", "is a prefix of": "starts with", "starts with": "is a prefix of"}[how]


# ---------------------------------------------------------------------------
# PS104 glue


def _glued_start(start: str, body: str) -> bool:
    return bool(start) and not start[-1].isspace() and body[:1] not in ("\n", " ")


def _glued_end(body: str, end: str) -> bool:
    return bool(end) and not body.endswith("\n") and not end[:1] == "\n"


def _glue(result: Any) -> Iterator[Finding]:
    spec: Spec = result.spec
    by_name = {f.name: f for f in spec.fragments}
    seen: dict[tuple[str, str], tuple[str, str, int]] = {}  # (fragment, side) -> (first variant, sample, count)
    sides: dict[int, tuple[Any, tuple[tuple[str, str], ...]]] = {}  # variants share sections: each looked at once
    for req in result.requests:
        for _, _, s in req.sections:
            f = by_name.get(s.fragment)
            if f is None or f.glue_ok:
                continue
            hit = sides.get(id(s))
            if hit is None or hit[0] is not s:
                hit = sides[id(s)] = (s, tuple((side, sample) for side, glued, sample in (
                    ("start", _glued_start(s.start, s.body), s.start + s.body[:20]),
                    ("end", _glued_end(s.body, s.end), s.body[-20:] + s.end),
                ) if glued))
            for side, sample in hit[1]:
                key = (s.fragment, side)
                first = seen.get(key)
                seen[key] = (req.variant.id, sample, 1) if first is None else (first[0], first[1], first[2] + 1)
    for (name, side), (variant, sample, n) in sorted(seen.items()):
        f = by_name[name]
        path = _fragment_file(spec, f)
        more = f" and {n - 1} more" if n > 1 else ""
        if side == "start":
            msg = (f"start marker is glued onto the body ({_short(sample, 40)!r}) in variant {variant}{more}; "
                   f"begin the body with a newline (or a space), or set glue_ok: true")
        else:
            msg = (f"body is glued onto the end marker ({_short(sample, 40)!r}) in variant {variant}{more}; "
                   f"end the body with a newline, or set glue_ok: true")
        line = 1 if f.body_file is not None else f.line
        yield finding("PS104", path, line, msg, fragment=name, variant=variant)


# ---------------------------------------------------------------------------
# PS201 / PS202 variables


def _context_names(spec: Spec) -> set[str]:
    return set(spec.scenario) | {name for name, _ in spec.extra_axes} | set(BUILTIN_NAMES) | set(spec.derived)


@dataclass(frozen=True)
class _Use:
    name: str
    where: str
    line: int | None


def template_uses(spec: Spec, engine: str, source: str, where: str) -> list[_Use]:
    """Every context name a template reads, with the file and line of its first
    use, following static includes.  Raises SpecError on syntax errors."""
    out: dict[str, _Use] = {}
    _collect(spec, engine, source, where, out, frozenset())
    return sorted(out.values(), key=lambda u: u.name)


def _collect(spec: Spec, engine: str, source: str, where: str, out: dict[str, _Use], seen: frozenset[str]) -> None:
    if engine == "codex":
        for m in CODEX_PLACEHOLDER.finditer(source):
            out.setdefault(m.group(1), _Use(m.group(1), where, source[: m.start()].count("\n") + 1))
        return
    if where in seen:
        return
    env = renderer_for(spec).env
    try:
        tree = env.parse(source)
    except jinja2.TemplateSyntaxError as exc:
        raise SpecError(f"template syntax error: {exc.message}", where, line=exc.lineno, hint="fix the Jinja syntax") from None
    names = renderer_for(spec).variables_of(source) - set(env.globals)
    first: dict[str, int] = {}
    for node in tree.find_all(nodes.Name):
        if node.name in names and node.ctx == "load":
            first.setdefault(node.name, node.lineno)
    for name in names:
        out.setdefault(name, _Use(name, where, first.get(name)))
    for node in tree.find_all((nodes.Include, nodes.Import, nodes.FromImport, nodes.Extends)):
        target = node.template
        if isinstance(target, nodes.Const) and isinstance(target.value, str):
            try:
                text, path = _read(spec, target.value, origin=where)
            except SpecError:
                continue  # assembly reports the missing file with its own message
            _collect(spec, "jinja", text, spec.fs.display(path), out, seen | {where})


def _sources_of(spec: Spec, f: Fragment) -> list[tuple[str, str]]:
    """(source, where) of every template a fragment renders: body and dynamic markers."""
    out = []
    if f.body is not None:
        out.append((f.body, f.source))
    elif f.body_file is not None:
        text, path = _read(spec, f.body_file)
        out.append((text, spec.fs.display(path)))
    for marker in (f.start, f.end):
        if "{" in marker:
            out.append((marker, f"{f.source} (marker)"))
    return out


def _variables(spec: Spec) -> Iterator[Finding]:
    context = _context_names(spec)
    for f in spec.fragments:
        known = context | LATER_NAMES if f.later else context
        used: set[str] = set()
        for source, where in _sources_of(spec, f):
            for use in template_uses(spec, f.engine, source, where):
                used.add(use.name)
                if use.name in known or use.name in f.variables:
                    continue
                if use.where == f.source or use.where.endswith("(marker)"):
                    path, line = f.source, f.line  # inline text: lines do not map onto the yaml
                else:
                    path, line = use.where, use.line
                yield finding(
                    "PS201", path, line,
                    f"template variable '{use.name}' is not defined (add it to the scenario, "
                    f"to the fragment's 'variables', or remove it)",
                    fragment=f.name,
                )
        for name in f.requires:
            if name not in known and name not in f.variables:
                yield finding(
                    "PS201", f.source, f.line,
                    f"'requires' names {name!r}, which is not a scenario key, an axis, a built-in name "
                    f"or one of the fragment's variables",
                    fragment=f.name,
                )
        used |= set(f.requires)
        for name in sorted(set(f.variables) - used):
            yield finding(
                "PS202", f.source, f.line,
                f"variable {name!r} is declared but no template of this fragment uses it (remove it)",
                fragment=f.name,
            )
    for kind, choices in (("mode", spec.modes), ("personality", spec.personalities)):
        for c in choices:
            if c.template is None:
                continue
            text, path = _read(spec, c.template)
            shown = spec.fs.display(path)
            for use in template_uses(spec, c.engine, text, shown):
                if use.name not in known:
                    yield finding(
                        "PS201", use.where, use.line,
                        f"template variable '{use.name}' of {kind} {c.name!r} is not defined (add it to the scenario or remove it)",
                    )


# ---------------------------------------------------------------------------
# PS203 unknown names / PS204 never applies


def _unknown_names(spec: Spec) -> Iterator[Finding]:
    """Patterns no value can match (the names themselves are checked at load)."""
    axes = dict(spec.axes)

    def check(where: str, line: int | None, what: str, when: When, fragment: str | None) -> Iterator[Finding]:
        for name, patterns in when.items():
            if name in when.fields:
                known = sorted({m.field_value(name) for m in spec.models})
                label = f"model field {name}"
            else:
                known = list(axes[name])
                label = name
            for pattern in patterns:
                if not any(fnmatch.fnmatchcase(v, pattern) for v in known):
                    yield finding(
                        "PS203", where, line,
                        f"{what} names {label} {pattern!r}, which is not defined (known: {', '.join(known)})",
                        fragment=fragment,
                    )

    for f in spec.fragments:
        yield from check(f.source, f.line, "'when'", f.when, f.name)
    for key, rules in (("include", spec.include), ("exclude", spec.exclude)):
        for rule in rules:
            yield from check(SPEC_FILE, rule.line, f"matrix {key} rule", rule.when, None)


def _applies(spec: Spec, f: Fragment, v: Variant) -> bool:
    return f.when.matches(v, spec.model(v.model))


def _never_applies(spec: Spec) -> Iterator[Finding]:
    variants = matrix(spec)
    for f in spec.fragments:
        if not f.when:
            continue
        if not any(_applies(spec, f, v) for v in variants):
            yield finding(
                "PS204", f.source, f.line,
                "its 'when' excludes every variant of the matrix, so it is never sent (fix 'when' or delete the fragment)",
                fragment=f.name,
            )


# ---------------------------------------------------------------------------
# PS205 never rendered


def _never_rendered(result: Any) -> Iterator[Finding]:
    spec: Spec = result.spec
    sent = {s.fragment for req in result.requests for _, _, s in req.sections}
    for f in spec.fragments:
        if f.name in sent or f.later:
            continue
        if not any(_applies(spec, f, v) for v in result.variants):
            continue  # PS204 says why
        reason = "its 'requires' values are empty" if f.requires else "its body renders empty"
        yield finding(
            "PS205", f.source, f.line,
            f"applies to some variants but produces no section in any of them ({reason} everywhere)",
            fragment=f.name,
        )


# ---------------------------------------------------------------------------
# PS301 AGENTS.md truncation


def _agents_truncated(result: Any) -> Iterator[Finding]:
    spec: Spec = result.spec
    if spec.agents.tree is None:
        return
    cwds: set[str] = set()
    for v in result.variants:
        values = dict(v.extra)
        cwd = values.get("cwd", spec.scenario.get("cwd", spec.agents.project_root))
        if isinstance(cwd, str):
            cwds.add(cwd)
    for cwd in sorted(cwds):
        docs = agents_md.discover(spec, agents_md.check_cwd(spec, cwd))
        if not docs.truncated_bytes:
            continue
        cut_file = next((f for f in docs.files if f.bytes_used < f.bytes_total), None)
        where = cut_file.source if cut_file else SPEC_FILE
        line = None if cut_file else _raw_line(spec, "agents_md", "max_bytes")
        yield finding(
            "PS301", where, line,
            f"AGENTS.md text for cwd {cwd} is {docs.total_bytes} bytes, over project_doc_max_bytes "
            f"({docs.budget}); Codex would cut the last {docs.truncated_bytes} bytes",
        )


# ---------------------------------------------------------------------------
# PS302 fragment budget / PS303 compaction headroom


def _over_budget(result: Any) -> Iterator[Finding]:
    spec: Spec = result.spec
    budget = spec.token_budget
    if not budget:
        return
    worst: dict[str, tuple[int, str, int]] = {}  # fragment -> (tokens, variant, count over)
    for m in result.measures:
        for msg, counts_ in zip(m.request.messages, m.sections):
            for s, n in zip(msg.sections, counts_):
                if n > budget:
                    prev = worst.get(s.fragment)
                    over = 1 + (prev[2] if prev else 0)
                    if prev is None or n > prev[0]:
                        worst[s.fragment] = (n, m.request.variant.id, over)
                    else:
                        worst[s.fragment] = (prev[0], prev[1], over)
    by_name = {f.name: f for f in spec.fragments}
    for name, (n, variant, over) in sorted(worst.items()):
        f = by_name[name]
        yield finding(
            "PS302", f.source, f.line,
            f"section is {n} tokens in variant {variant} (over budget in {over} variant{'s' if over != 1 else ''}), "
            f"over tokens.fragment_budget {budget}",
            fragment=name, variant=variant,
        )


def _over_compaction(result: Any) -> Iterator[Finding]:
    spec: Spec = result.spec
    per_model: dict[str, list[Any]] = {}
    for m in result.measures:
        if m.headroom is not None and m.headroom < 0:
            per_model.setdefault(m.request.model, []).append(m)
    for slug, ms in sorted(per_model.items()):
        worst = min(ms, key=lambda m: (m.headroom, m.request.variant.id))
        model = spec.model(slug)
        yield finding(
            "PS303", spec.models_file, model.line,
            f"{len(ms)} variant{'s' if len(ms) != 1 else ''} of model {slug} start past the auto-compaction limit "
            f"({worst.compact_limit} tokens, {worst.compact_limit_source}); worst: {worst.request.variant.id} at "
            f"{worst.estimate} by Codex's ⌈bytes/4⌉ estimate, which Codex compares with the limit "
            f"({-worst.headroom} over; {worst.total} real tokens)",
            variant=worst.request.variant.id,
        )


# ---------------------------------------------------------------------------
# PS401 orphans


def used_files(spec: Spec, read: Iterable[Path] = ()) -> set[Path]:
    """Resolved paths of every file the spec uses: what a run read, plus the
    files every spec has (spec.yaml, models, fragment definitions and bodies,
    mode/personality templates) and every AGENTS.md candidate in the sample
    tree (discovery may pick any of them for some working directory)."""
    fs = spec.fs
    used = {Path(p).resolve() for p in read}
    used.add((spec.root / SPEC_FILE).resolve())
    refs: list[str] = [spec.models_file]
    refs += [t.source for t in spec.tools]
    for f in spec.fragments:
        refs.append(f.source)
        if f.body_file:
            refs.append(f.body_file)
    for c in (*spec.modes, *spec.personalities):
        if c.template:
            refs.append(c.template)
    for ref in (spec.instructions_override, spec.agents.user_instructions):
        if ref:
            refs.append(ref)
    for ref in refs:
        try:
            used.add(fs.resolve(ref).resolve())
        except SpecError:
            pass
    if spec.agents.tree is not None:
        names = {agents_md.OVERRIDE_NAME, agents_md.DEFAULT_NAME, *spec.agents.fallback_filenames}
        tree = fs.resolve(spec.agents.tree)
        if tree.is_dir():
            for path in tree.rglob("*"):
                if path.name in names and path.is_file():
                    used.add(path.resolve())
    return used


def _ignored(rel: Path) -> bool:
    parts = rel.parts
    if any(p.startswith(".") or p == "__pycache__" for p in parts):
        return True
    return rel.name in IGNORED_FILES or rel.name.upper().startswith("README")


def _orphans(result: Any) -> Iterator[Finding]:
    spec: Spec = result.spec
    fs = spec.fs
    extra = conversation_files(spec)
    used = used_files(spec, fs.read_paths)
    for ref in extra:
        try:
            used.add(fs.resolve(ref).resolve())
        except SpecError:
            pass
    root = fs.root
    skip_roots = [r for r in fs.roots.values() if r == root or root in r.parents]
    for path in sorted(root.rglob("*")):
        if not path.is_file() and not path.is_symlink():
            continue
        rel = path.relative_to(root)
        if _ignored(rel) or any(r == path or r in path.parents for r in skip_roots):
            continue
        if path.resolve() in used:
            continue
        yield finding(
            "PS401", rel.as_posix(), None,
            "no variant uses this file (reference it from a fragment or template, or delete it)",
        )




_INVISIBLE_CHAR = re.compile(f"[{INVISIBLE}]")
_ESCAPED = re.compile(r"\\u([0-9a-fA-F]{4})|\\U([0-9a-fA-F]{8})")


def _invisible(result: Any) -> Iterator[Finding]:
    """Every file the spec uses, searched for characters a reviewer cannot see
    but the model reads ("ASCII smuggling" in tag characters, zero-width text,
    bidi reordering): the first line and how many, per file."""
    spec: Spec = result.spec
    for path in sorted(used_files(spec, spec.fs.read_paths)):
        try:
            text = read_regular_bytes(path).decode("utf-8", "replace")
        except (SpecError, OSError):
            continue
        found = [(m.start(), m.group()) for m in _INVISIBLE_CHAR.finditer(text)]
        # ... also written as a JSON/YAML escape (`\u200b`, `\U000e0049`), which loads as the character
        found += [(m.start(), chr(int(m.group(1) or m.group(2), 16))) for m in _ESCAPED.finditer(text)
                  if _INVISIBLE_CHAR.fullmatch(chr(int(m.group(1) or m.group(2), 16)))]
        if not found:
            continue
        hits = [ch for _, ch in found]
        line = text.count("\n", 0, min(found)[0]) + 1
        kinds = ", ".join(f"U+{ord(ch):04X}" for ch in sorted(set(hits))[:5]) + (", ..." if len(set(hits)) > 5 else "")
        yield finding(
            "PS106", spec.fs.display(path), line,
            f"{len(hits)} invisible character{'s' if len(hits) != 1 else ''} ({kinds}): the model reads them, "
            "a reviewer sees nothing (remove them, or write the text visibly)",
        )



SPEC_RULES = (_roles, _marker_pairs, _marker_collisions, _marker_ascii, _variables, _unknown_names, _never_applies, *SKELETON_RULES, *TOOL_SPEC_RULES)
"""Rules over the loaded spec alone, in the order they were written."""

RESULT_RULES = (_glue, _never_rendered, _agents_truncated, _over_budget, _over_compaction, _orphans, _invisible, *TOOL_RESULT_RULES)
"""Rules over an assembled and measured run."""
