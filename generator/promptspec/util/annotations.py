"""Findings for machines: GitHub workflow commands and SARIF 2.1.0.

`lint` and `check` report problems at a file and line; in CI they should land
on that line of the pull request (`::error file=...,line=...::message`) or in
code scanning (SARIF).  This module knows nothing about specs: callers hand
it `Annotation`s.  Spec text can reach a message, so everything is escaped the
way GitHub's runner parses workflow commands: `%`, CR and LF in the message,
and additionally `:` and `,` in property values.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

LEVELS = {"error": "error", "warning": "warning", "notice": "note"}
"""GitHub command -> SARIF level."""

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


@dataclass(frozen=True)
class Annotation:
    path: str  # relative to the repository root (forward slashes)
    line: int  # 0 when unknown
    level: str  # "error" | "warning" | "notice"
    rule: str  # stable id, e.g. "PS101" or "check-lock"
    title: str
    message: str


@dataclass(frozen=True)
class RuleDoc:
    id: str
    name: str
    summary: str
    level: str
    help_uri: str | None = None


def escape_data(text: str) -> str:
    return str(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github(annotations: Iterable[Annotation]) -> str:
    """One workflow command per annotation (`::error file=F,line=L,title=T::message`)."""
    out = []
    for a in annotations:
        props = [f"file={escape_property(a.path)}"]
        if a.line:
            props.append(f"line={a.line}")
        props.append(f"title={escape_property(a.title)}")
        out.append(f"::{a.level} {','.join(props)}::{escape_data(a.message)}")
    return "".join(line + "\n" for line in out)


def sarif(annotations: Sequence[Annotation], rules: Sequence[RuleDoc], *, tool: str = "promptspec", version: str = "",
          information_uri: str | None = None) -> str:
    """A SARIF 2.1.0 log with one run (deterministic: sorted keys, rules in the given order)."""
    used = {a.rule for a in annotations}
    driver: dict = {"name": tool, "rules": []}
    if version:
        driver["version"] = version
    if information_uri:
        driver["informationUri"] = information_uri
    index = {}
    for r in rules:
        if r.id not in used:
            continue
        index[r.id] = len(driver["rules"])
        entry = {"id": r.id, "name": r.name, "shortDescription": {"text": r.summary},
                 "defaultConfiguration": {"level": LEVELS.get(r.level, "warning")}}
        if r.help_uri:
            entry["helpUri"] = r.help_uri
        driver["rules"].append(entry)
    results = []
    for a in annotations:
        location: dict = {"artifactLocation": {"uri": a.path}}
        if a.line:
            location["region"] = {"startLine": a.line}
        result = {"ruleId": a.rule, "level": LEVELS.get(a.level, "warning"), "message": {"text": f"{a.title}: {a.message}" if a.title else a.message},
                  "locations": [{"physicalLocation": location}]}
        if a.rule in index:
            result["ruleIndex"] = index[a.rule]
        results.append(result)
    log = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [{"tool": {"driver": driver}, "results": results}]}
    return json.dumps(log, indent=2, ensure_ascii=False, sort_keys=True) + "\n"


def join_path(prefix: str, path: str) -> str:
    """A spec-relative path as a repository-relative one (`prefix` is the spec folder, "" or "templates")."""
    if not prefix or prefix == "." or path.startswith("@"):
        return path
    return f"{prefix.rstrip('/')}/{path}"


def repo_relative(path: Path) -> str:
    """A path as annotations name it: relative to the current directory (a
    workflow runs at the repository root), unless it lies outside it."""
    rel = os.path.relpath(Path(path).resolve(), Path.cwd().resolve())
    return Path(path).resolve().as_posix() if rel.startswith("..") else Path(rel).as_posix()
