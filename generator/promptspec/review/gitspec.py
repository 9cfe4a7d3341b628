"""Getting both sides of a review onto disk: a git revision's spec folder, or a folder.

`promptspec diff origin/main` needs the spec *as it was* at a revision.  We
copy exactly the files git has for the spec folder at that commit into a
temporary directory (`git ls-tree` + `git cat-file --batch`, which unlike
`git archive` ignores `export-ignore` attributes), at the same path relative to
the repository top level, so the loader sees the same folder name on both
sides.  Everything else in this module is about saying clearly what went
wrong: not a repository, unknown revision, no spec folder at that revision,
a spec that does not load on one side.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Callable, Iterator

from ..errors import PromptspecError, SpecError, UsageError
from ..spec.model import SPEC_FILE
from .lockfile import LOCK_FILE

WORKING_TREE = "working tree"


@dataclass(frozen=True)
class SpecSource:
    """One side of a comparison: a spec folder on disk and how to name it."""

    label: str  # what the user typed ("origin/main", a folder) or "working tree"
    path: Path  # the spec folder to load
    commit: str | None = None  # full commit id when the side is a git revision

    @property
    def title(self) -> str:
        """`origin/main (1a2b3c4)`, a folder, or `working tree`: for report headers."""
        return f"{self.label} ({self.commit[:7]})" if self.commit else self.label


# ---------------------------------------------------------------------------
# git plumbing


def _git(repo: Path | None, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    cmd = ["git", "--literal-pathspecs"]
    if repo is not None:
        cmd += ["-C", str(repo)]
    cmd += list(args)
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    try:
        return subprocess.run(cmd, input=stdin, capture_output=True, env=env, check=False)
    except FileNotFoundError:
        raise UsageError("git is not installed or not on PATH (needed to read a git revision; or pass two spec folders)") from None


def _first_line(data: bytes) -> str:
    text = data.decode("utf-8", "replace").strip()
    return text.splitlines()[0] if text else ""


def repo_of(path: Path) -> tuple[Path, str]:
    """The top level of the git repository holding `path`, and `path` relative to it (posix, "." for the top)."""
    path = Path(os.path.abspath(path))
    probe = path
    while not probe.is_dir():
        if probe.parent == probe:
            break
        probe = probe.parent
    proc = _git(probe, "rev-parse", "--show-toplevel")
    if proc.returncode != 0:
        detail = _first_line(proc.stderr)
        extra = f" ({detail})" if detail and "not a git repository" not in detail else ""
        raise UsageError(
            f"{path} is not inside a git repository{extra}; to compare revisions, point --spec at a spec folder in a git checkout, "
            "or pass two spec folders instead of revisions"
        )
    top = Path(proc.stdout.decode("utf-8", "surrogateescape").strip()).resolve()
    real = path.resolve()
    if real != top and top not in real.parents:
        raise UsageError(f"spec folder {path} is outside the repository {top}")
    rel = real.relative_to(top).as_posix() if real != top else "."
    return top, rel


def resolve_commit(repo: Path, revision: str) -> str:
    """The full commit id of `revision`, or a one-line UsageError."""
    if not revision or revision.startswith("-") or "\x00" in revision:
        raise UsageError(f"{revision!r} is not a git revision")
    proc = _git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{revision}^{{commit}}")
    if proc.returncode != 0:
        raise UsageError(
            f"unknown git revision {revision!r} in {repo} (and no such folder); "
            "pass a branch, tag or commit (run `git fetch` if it is a remote branch) or a spec folder"
        )
    return proc.stdout.decode().strip()


def _ls_tree(repo: Path, commit: str, rel: str) -> list[tuple[str, str, str, str]]:
    args = ["ls-tree", "-r", "-z", "--full-tree", commit]
    if rel != ".":
        args += ["--", rel]
    proc = _git(repo, *args)
    if proc.returncode != 0:
        raise UsageError(f"git ls-tree failed for {commit[:12]}: {_first_line(proc.stderr)}")
    out = []
    for record in proc.stdout.split(b"\0"):
        if not record:
            continue
        meta, _, name = record.partition(b"\t")
        mode, kind, obj = meta.decode().split(" ")
        out.append((mode, kind, obj, name.decode("utf-8", "surrogateescape")))
    return out


def _cat_blobs(repo: Path, objects: list[str]) -> dict[str, bytes]:
    """Read many blobs with one `git cat-file --batch` process."""
    unique = sorted(set(objects))
    if not unique:
        return {}
    proc = _git(repo, "cat-file", "--batch", stdin=("\n".join(unique) + "\n").encode())
    if proc.returncode != 0:
        raise UsageError(f"git cat-file failed: {_first_line(proc.stderr)}")
    data, pos, blobs = proc.stdout, 0, {}
    for _ in unique:
        end = data.index(b"\n", pos)
        header = data[pos:end].decode().split(" ")
        if len(header) != 3:
            raise UsageError(f"git cat-file could not read object {header[0]}")
        obj, size = header[0], int(header[2])
        blobs[obj] = data[end + 1 : end + 1 + size]
        pos = end + 1 + size + 1
    return blobs


def materialise(repo: Path, commit: str, rel: str, dest: Path) -> Path:
    """Write the tree at `commit:rel` under `dest/rel` and return that folder.

    Submodules are skipped; symlinks are recreated as symlinks (the spec loader
    refuses any that lead outside the spec folder)."""
    entries = _ls_tree(repo, commit, rel)
    target = dest if rel == "." else dest / rel
    if not entries:
        raise UsageError(f"no folder {rel!r} at revision {commit[:12]} (was the spec folder moved? pass its old path with --spec or compare folders)")
    blobs = _cat_blobs(repo, [obj for mode, kind, obj, _ in entries if kind == "blob"])
    dest_real = dest.resolve()
    for mode, kind, obj, name in entries:
        if kind != "blob":
            continue  # submodule (commit) entries have no content here
        parts = PurePosixPath(name).parts
        if any(p in ("..", "") for p in parts) or PurePosixPath(name).is_absolute():
            raise UsageError(f"refusing unsafe path {name!r} in revision {commit[:12]}")
        out = dest.joinpath(*parts)
        out.parent.mkdir(parents=True, exist_ok=True)
        if dest_real not in out.parent.resolve().parents and out.parent.resolve() != dest_real:
            raise UsageError(f"refusing path {name!r} in revision {commit[:12]}: it leaves the temporary folder")
        if mode == "120000":
            os.symlink(blobs[obj].decode("utf-8", "surrogateescape"), out)
        else:
            out.write_bytes(blobs[obj])
            if mode == "100755":
                out.chmod(0o755)
    if not target.is_dir():
        raise UsageError(f"{rel!r} is a file, not a folder, at revision {commit[:12]}")
    return target


# ---------------------------------------------------------------------------
# sides


def open_side(ref: str | None, *, spec_dir: Path, workdir: Path) -> SpecSource:
    """Turn a BASE/HEAD argument into a spec folder on disk.

    None is the working tree (`spec_dir` as it is now); an existing folder is
    used as it is (it must hold spec.yaml); anything else is a git revision of
    the repository holding `spec_dir`, materialised under `workdir`."""
    if ref is None:
        return SpecSource(WORKING_TREE, Path(spec_dir))
    as_path = Path(ref)
    if as_path.is_dir():
        if not (as_path / SPEC_FILE).is_file():
            raise UsageError(f"{ref} is a folder but not a spec folder (no {SPEC_FILE} in it); pass a spec folder or a git revision")
        return SpecSource(ref, as_path)
    if as_path.is_file():
        raise UsageError(f"{ref} is a file; pass a git revision or a spec folder")
    repo, rel = repo_of(Path(spec_dir))
    commit = resolve_commit(repo, ref)
    workdir.mkdir(parents=True, exist_ok=True)
    path = materialise(repo, commit, rel, workdir)
    if not (path / SPEC_FILE).is_file():
        raise UsageError(f"{rel!r} at {ref} ({commit[:7]}) is not a spec folder (no {SPEC_FILE}); pass the spec folder's path with --spec")
    return SpecSource(ref, path, commit)


@contextmanager
def checkout_spec(ref: str | None, *, spec_dir: Path) -> Iterator[SpecSource]:
    """`open_side` with its own temporary folder, removed on exit.

    For callers other than the CLI (the site's "changed since base" view):
    load and measure inside the `with`; the Result's data stays valid after it."""
    with tempfile.TemporaryDirectory(prefix="promptspec-rev-") as tmp:
        yield open_side(ref, spec_dir=spec_dir, workdir=Path(tmp))


def load_side(side: str, source: SpecSource, run: Callable[[Path], object]) -> object:
    """Run `run(source.path)`, and say which side failed if it raises a user error.

    Messages mention the temporary folder of a revision; they are rewritten to
    name the revision instead, e.g. `base (origin/main): spec.yaml:14: ...`."""
    try:
        return run(source.path)
    except PromptspecError as exc:
        text = exc.oneline()
        if source.commit:
            text = text.replace(str(source.path.resolve()), f"{source.label}:").replace(str(source.path), f"{source.label}:")
        error = SpecError(f"{side} ({source.title}): {text}")
        error.exit_code = exc.exit_code
        raise error from None


def digest_tree(root: Path, *, skip: frozenset[str] = frozenset({LOCK_FILE})) -> dict[str, str]:
    """sha256 of every file under `root` by posix relative path (dot-folders and the lock skipped).

    Used to list which spec files differ between the two sides, so a reviewer
    sees `modes/plan.md modified` beside the sections it changed."""
    out: dict[str, str] = {}
    root = Path(root)
    if not root.is_dir():
        return out
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__pycache__")
        for name in sorted(filenames):
            path = Path(dirpath, name)
            rel = path.relative_to(root).as_posix()
            if rel in skip or name.startswith("."):
                continue
            try:
                data = path.read_bytes()
            except OSError:
                continue
            out[rel] = hashlib.sha256(data).hexdigest()
    return out


__all__ = [
    "LOCK_FILE",
    "SpecSource",
    "WORKING_TREE",
    "checkout_spec",
    "current_repo_spec",
    "digest_tree",
    "load_side",
    "materialise",
    "open_side",
    "repo_of",
    "resolve_commit",
]



def current_repo_spec(cwd: Path | None = None) -> Path | None:
    """`templates/` at the top of the git repository around `cwd`, if it is a spec folder.

    The review commands default to it, so `promptspec check` in a project's
    checkout (a pre-commit hook, a CI step) finds that project's spec."""
    try:
        proc = _git(Path(cwd) if cwd else None, "rev-parse", "--show-toplevel")
    except UsageError:
        return None
    if proc.returncode != 0:
        return None
    found = Path(proc.stdout.decode("utf-8", "surrogateescape").strip()) / "templates"
    if not (found / SPEC_FILE).is_file():
        return None
    try:
        return Path(os.path.relpath(found))
    except ValueError:  # another drive on Windows
        return found
