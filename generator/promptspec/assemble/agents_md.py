"""AGENTS.md discovery over the scenario's sample project tree.

Codex reads one instructions file per directory from the project root (the
folder holding `.git`) down to the working directory, preferring
`AGENTS.override.md`, then `AGENTS.md`, then configured fallback names, and
stops reading once `project_doc_max_bytes` is spent — cutting the last file at
the byte where the budget ends, silently.  We do the same, but report the cut.

The sample tree is a folder in the spec whose top stands for the project root;
paths inside it stand for paths under `agents_md.project_root`.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from ..errors import SpecError
from ..spec.model import Spec
from ..spec.provenance import SourceRef, field_ref, file_ref, ordered

OVERRIDE_NAME = "AGENTS.override.md"
DEFAULT_NAME = "AGENTS.md"
PROJECT_DOC_SEPARATOR = "\n\n--- project-doc ---\n\n"


@dataclass(frozen=True)
class DocFile:
    path: str  # the virtual path, e.g. /workspace/project/src/AGENTS.md
    source: str  # where it lives in the spec, e.g. project/src/AGENTS.md
    text: str
    bytes_used: int
    bytes_total: int


@dataclass(frozen=True)
class ProjectDocs:
    files: tuple[DocFile, ...]
    user_instructions: str | None
    text: str
    truncated_bytes: int
    total_bytes: int
    budget: int
    refs: tuple[SourceRef, ...] = ()
    """Provenance of `text`: each file read (by what was kept of it) and the spec.yaml settings."""

    @property
    def sources(self) -> tuple[str, ...]:
        return tuple(f.source for f in self.files)

    def note(self) -> str | None:
        if not self.truncated_bytes:
            return None
        return (
            f"AGENTS.md truncated: project docs total {self.total_bytes} bytes, over the "
            f"{self.budget}-byte project_doc_max_bytes budget; the last {self.truncated_bytes} bytes were cut"
        )


def _chain(root: str, cwd: str) -> list[str]:
    """Directories from the project root down to cwd (just cwd if outside it)."""
    root = posixpath.normpath(root)
    cwd = posixpath.normpath(cwd)
    if cwd != root and not cwd.startswith(root.rstrip("/") + "/"):
        return []
    rel = posixpath.relpath(cwd, root)
    parts = [] if rel == "." else rel.split("/")
    return ["/".join(parts[:i]) for i in range(len(parts) + 1)]


def discover(spec: Spec, cwd: str) -> ProjectDocs:
    cfg = spec.agents
    user_text = None
    refs: list[SourceRef] = [field_ref("spec.yaml", "agents_md", [cfg.tree, cfg.project_root, cfg.user_instructions, cfg.max_bytes, list(cfg.fallback_filenames)])]
    if cfg.user_instructions:
        raw, upath = spec.fs.read_text(cfg.user_instructions)
        user_text = raw.strip() or None
        refs.append(spec.fs.source_ref(upath, raw))
    files: list[DocFile] = []
    cut = 0
    total = 0
    if cfg.tree is not None:
        budget_left = cfg.max_bytes
        names = (OVERRIDE_NAME, DEFAULT_NAME, *cfg.fallback_filenames)
        for rel_dir in _chain(cfg.project_root, cwd) if cfg.max_bytes > 0 else ():
            folder = spec.fs.resolve(posixpath.join(cfg.tree, rel_dir) if rel_dir else cfg.tree)
            if not folder.is_dir():
                continue
            for name in names:
                candidate = folder / name
                if not candidate.is_file():
                    continue
                ref = posixpath.join(cfg.tree, rel_dir, name) if rel_dir else posixpath.join(cfg.tree, name)
                text, path = spec.fs.read_text(ref)
                data = text.encode("utf-8")
                if not text.strip():
                    break  # an empty file counts as no file here, like Codex
                total += len(data)
                used = data[: max(budget_left, 0)]
                cut += len(data) - len(used)
                # Codex cuts at the byte and decodes lossily: a split character becomes U+FFFD.
                kept = used.decode("utf-8", errors="replace")
                # Like Codex, test what was kept (not the whole file) for being blank:
                # a blank kept part is skipped and spends no budget.
                if kept.strip():
                    budget_left -= len(used)
                    virtual = posixpath.join(cfg.project_root, rel_dir, name)
                    shown = spec.fs.display(path)
                    files.append(DocFile(virtual, shown, kept, len(used), len(data)))
                    refs.append(file_ref(shown, text) if kept == text else field_ref(shown, "", kept, 1, kept.count("\n") + 1))
                break
    parts = [f.text for f in files]
    project = "\n\n".join(parts)
    if user_text and project:
        text = user_text + PROJECT_DOC_SEPARATOR + project
    else:
        text = user_text or project
    return ProjectDocs(tuple(files), user_text, text, cut, total, cfg.max_bytes, ordered(refs))


def check_cwd(spec: Spec, cwd: object) -> str:
    if not isinstance(cwd, str) or not cwd.startswith("/"):
        raise SpecError("scenario 'cwd' must be an absolute path string", "spec.yaml", hint="e.g. cwd: /workspace/project")
    return cwd
