"""Learning a release's assembly rules from its captured first requests.

Each kind of part (permissions, skills, collaboration mode...) is a function
of some axes.  We find the smallest set of axes it depends on, keep each
distinct text once, and note where it is absent.  The permissions part is
further split into Codex's three blocks (sandbox sentence, approval block,
roots line), each with its own dependencies.  Base instructions are explained
by the catalog: which instructions variable each personality fills, or which
section it removes, with per-(model, personality) exceptions only where no
rule fits.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Mapping, Sequence

from ...assemble.instructions import remove_section
from ...oracle.capture import AXES, Config
from ...render import codex_join

PERSONALITY_PLACEHOLDER = "{{ personality }}"
SECTION_HEADING = "# Personality"


@dataclass
class Table:
    """A part's text as a function of `axes`: key (axis values) -> text; a missing key = part absent."""

    axes: tuple[str, ...]
    rows: dict[tuple[str, ...], str]

    def lookup(self, cfg: Config) -> str | None:
        return self.rows.get(tuple(getattr(cfg, a) for a in self.axes))


def factor(values: Mapping[Config, str | None], axes: Sequence[str] = AXES) -> Table:
    """The smallest set of axes the value depends on (None = absent)."""
    for size in range(len(axes) + 1):
        for subset in itertools.combinations(axes, size):
            table: dict[tuple[str, ...], str | None] = {}
            ok = True
            for cfg, value in values.items():
                key = tuple(getattr(cfg, a) for a in subset)
                if key in table and table[key] != value:
                    ok = False
                    break
                table[key] = value
            if ok:
                return Table(subset, {k: v for k, v in table.items() if v is not None})
    raise AssertionError("the full axis set always determines a value")


# ---------------------------------------------------------------------------
# Permissions: <start> + codex_join(sandbox, approval, roots) + <end>


PERMISSIONS_START = "<permissions instructions>"
PERMISSIONS_END = "</permissions instructions>"


def split_permissions(text: str) -> tuple[str, str, str] | None:
    if not (text.startswith(PERMISSIONS_START) and text.endswith(PERMISSIONS_END)):
        return None
    inner = text[len(PERMISSIONS_START):-len(PERMISSIONS_END)]
    if inner == "\n":
        return ("", "", "")
    if not (inner.startswith("\n") and inner.endswith("\n")):
        return None
    lines = inner[1:-1].split("\n")
    sandbox = lines.pop(0) if lines and lines[0].startswith("Filesystem sandboxing") else ""
    roots = lines.pop() if lines and lines[-1].startswith(" The writable root") else ""
    middle = "\n".join(lines)
    for approval in (middle + "\n", middle) if middle else ("",):
        if codex_join(sandbox, approval, roots) == inner:
            return (sandbox, approval, roots)
    return None


def join_permissions(sandbox: str, approval: str, roots: str) -> str:
    return PERMISSIONS_START + (codex_join(sandbox, approval, roots) or "\n") + PERMISSIONS_END


# ---------------------------------------------------------------------------
# Base instructions


@dataclass(frozen=True)
class PersonalityRule:
    fills: str | None  # instructions variable suffix ("pragmatic"), "" for the empty string, None = the name rule
    removes_section: str | None  # heading removed from templates without the placeholder


def predict(model: Mapping[str, Any], personality: str, rule: PersonalityRule) -> str:
    """What base instructions a model gets under a rule (mirrors promptspec's assembly)."""
    mm = model.get("model_messages") or {}
    template = mm.get("instructions_template") if isinstance(mm, dict) else None
    if template is None:
        return model.get("base_instructions") or ""
    if PERSONALITY_PLACEHOLDER in template:
        variables = mm.get("instructions_variables") or {}
        fill = rule.fills if rule.fills is not None else ("" if personality == "none" else personality)
        value = "" if fill == "" else (variables.get(f"personality_{fill}") or "")
        return template.replace(PERSONALITY_PLACEHOLDER, value)
    if rule.removes_section:
        return remove_section(template, rule.removes_section)
    return template


CANDIDATE_RULES = [PersonalityRule(f, r) for f in (None, "", "default", "pragmatic", "friendly")
                   for r in (None, SECTION_HEADING)]


@dataclass
class BaseLearned:
    rules: dict[str, PersonalityRule]
    exceptions: dict[tuple[str, str], str] = field(default_factory=dict)  # (model, personality) -> exact text


def learn_base(catalog: Mapping[str, Any], observed: Mapping[tuple[str, str], str]) -> BaseLearned:
    models = {m["slug"]: m for m in catalog["models"]}
    rules: dict[str, PersonalityRule] = {}
    exceptions: dict[tuple[str, str], str] = {}
    for personality in sorted({p for _, p in observed}):
        cells = {m: t for (m, p), t in observed.items() if p == personality}

        def score(rule: PersonalityRule) -> int:
            return sum(predict(models[m], personality, rule) == t for m, t in cells.items())

        best = max(CANDIDATE_RULES, key=lambda r: (score(r), _simplicity(r, personality)))
        rules[personality] = best
        for m, t in cells.items():
            if predict(models[m], personality, best) != t:
                exceptions[(m, personality)] = t
    return BaseLearned(rules, exceptions)


def _simplicity(rule: PersonalityRule, personality: str) -> int:
    """Among equally good rules prefer the plainest: the name rule, no section removal."""
    return (rule.fills is None or rule.fills == personality) * 2 + (rule.removes_section is None)


def group_by(items: Sequence[Any], key: Callable[[Any], Hashable]) -> dict[Hashable, list[Any]]:
    out: dict[Hashable, list[Any]] = {}
    for it in items:
        out.setdefault(key(it), []).append(it)
    return out
