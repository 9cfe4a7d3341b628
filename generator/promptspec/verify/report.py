"""Printing and storing a verify report (text, JSON, Markdown).

The JSON form is what `verify --out` stores and what the site reads, so a site
build never needs the Codex binary.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Mapping

from ..util.gh_markdown import fenced, md_code, md_escape
from .groups import group
from .run import COVERED, Report

MAX_DIFFS = 3
"""Distinct diffs shown per differing part; the rest are counted (all are in --format json)."""


def as_text(r: Report) -> str:
    lines = [f"Codex {r.release} vs {r.spec}: {r.identical} of {r.compared} compared variants identical"
             f" (matrix: {r.matrix_size} variants)"]
    if r.world:
        lines.append("in the world: " + world_line(r.world))
    if r.not_modelled:
        lines.append("not modelled (not compared): " + ", ".join(r.not_modelled))
    for g in group(_entries(r)):
        lines.append(f"DIFFERS {g.headline()}")
        for d in g.diffs[:MAX_DIFFS]:
            if len(g.diffs) > 1:
                lines.append(f"  {d.reach.counted()}:")
            lines.append(f"    at {', '.join(d.where)}")
            lines.extend("    " + ln for ln in d.diff.splitlines())
        if len(g.diffs) > MAX_DIFFS:
            lines.append(f"  ... and {len(g.diffs) - MAX_DIFFS} more distinct diffs of {g.name} (see --format json)")
    if r.threads:
        same = sum(t.identical for t in r.threads)
        lines.append(f"threads: {same} of {len(r.threads)} identical in every request"
                     + ("" if r.threads_gate else " (not gating: the spec has no turns:)"))
        for t in r.threads:
            if not t.identical:
                lines.append(f"DIFFERS thread {t.thread} from {t.variant}: request {t.request} of {t.requests}: {t.part}")
                if t.diff:
                    lines.extend("    " + ln for ln in t.diff.splitlines()[:8])
    return "\n".join(lines) + "\n"


def world_line(world: Mapping[str, Any]) -> str:
    """The user's world a report was made in, as the flags that give it."""
    said = [f"--cwd {world['cwd']}"] if world.get("cwd") else []
    said += [f"--codex-home {world['codex_home']}"] if world.get("codex_home") else []
    said += [f"-c {o}" for o in world.get("config_overrides") or []]
    said += [f"--enable {f}" for f in world.get("enable") or []] + [f"--disable {f}" for f in world.get("disable") or []]
    return " ".join(said) or "(none)"


def _entries(r: Report) -> list[dict[str, Any]]:
    return [dataclasses.asdict(v) for v in r.variants]


def as_markdown(r: Report) -> str:
    """For a pull-request comment or a job summary: every value from the spec or
    the binary goes through util/gh_markdown (escaped, or fenced so it cannot close its fence)."""
    release = md_escape(r.release)
    out = [f"# Conformance: Codex {release}", "",
           f"**{r.identical} of {r.compared}** compared variants are byte-identical to what Codex {release} sends"
           f" (matrix: {r.matrix_size} variants; checked {md_escape(r.date)}).", "",
           "Compared: " + "; ".join(md_escape(x) for x in covered(r.to_json())) + ".", ""]
    if r.not_modelled:
        out += ["Not modelled, so not compared: " + ", ".join(md_code(p) for p in r.not_modelled) + ".", ""]
    groups = group(_entries(r))
    if groups:
        out += ["| differs | variants | which |", "|---|---|---|"]
        out += [f"| {md_escape(g.name)} | {len(g.ids)} of {g.reach.total} | {md_escape(g.reach.text())} |" for g in groups]
        for g in groups:
            out += ["", f"## {md_escape(g.headline())}"]
            for d in g.diffs[:MAX_DIFFS]:
                where = ", ".join(md_code(w) for w in d.where)
                out += ["", (f"{md_escape(d.reach.counted())}, at {where}:" if len(g.diffs) > 1 else f"At {where}:"), "",
                        fenced(d.diff).rstrip("\n")]
            if len(g.diffs) > MAX_DIFFS:
                out += ["", f"… and {len(g.diffs) - MAX_DIFFS} more distinct diffs of {md_escape(g.name)} (all are in the JSON report)."]
    if r.threads:
        same = sum(t.identical for t in r.threads)
        out += ["", "## Threads", "", f"**{same} of {len(r.threads)}** standard threads are identical in every request"
                + ("." if r.threads_gate else " (not gating: the spec has no `turns:`)."), "",
                "| thread | from | requests | first difference |", "|---|---|---|---|"]
        out += [f"| {md_escape(t.thread)} | {md_code(t.variant)} | {t.requests} | "
                + ("identical" if t.identical else f"request {t.request}: {md_escape(t.part or '')}") + " |" for t in r.threads]
    return "\n".join(out) + "\n"


def covered(data: Mapping[str, Any]) -> list[str]:
    """What "identical" covered, from a stored report (a version 1 report did not say: the parts compared then)."""
    found = data.get("covered")
    items = [str(x) for x in found] if isinstance(found, list) and found else list(COVERED)
    removed = data.get("volatile_fields_removed")
    if isinstance(removed, list) and removed:
        items.append("after removing only " + ", ".join(str(x) for x in removed))
    return items


def as_json(r: Report) -> str:
    return json.dumps(r.to_json(), indent=2, ensure_ascii=False) + "\n"


def render(r: Report, fmt: str) -> str:
    return {"text": as_text, "json": as_json, "markdown": as_markdown}[fmt](r)


def load(data: Any) -> dict[str, Any]:
    """A stored report, checked enough for the site to trust its shape."""
    if not isinstance(data, dict) or data.get("kind") != "promptspec-verify-report":
        raise ValueError("not a promptspec verify report")
    return data
