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

import os
import subprocess
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Callable, Iterator

from ..errors import PromptspecError, SpecError, UsageError
from ..spec.locate import locate
from ..spec.model import SPEC_FILE
from .lockfile import LOCK_FILE
from .sides import check_unambiguous, parse_side

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


def _blob_sizes(repo: Path, objects: list[str]) -> dict[str, int]:
    """Sizes of blobs without reading them (`git cat-file --batch-check`)."""
    unique = sorted(set(objects))
    if not unique:
        return {}
    proc = _git(repo, "cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)", stdin=("\n".join(unique) + "\n").encode())
    if proc.returncode != 0:
        raise UsageError(f"git cat-file failed: {_first_line(proc.stderr)}")
    sizes: dict[str, int] = {}
    for line in proc.stdout.decode("ascii", "replace").splitlines():
        parts = line.split(" ")
        if len(parts) != 3 or parts[1] != "blob" or not parts[2].isdigit():
            raise UsageError(f"git cat-file could not read object {parts[0]}")
        sizes[parts[0]] = int(parts[2])
    return sizes


def _cat_blobs(repo: Path, objects: list[str]) -> dict[str, bytes]:
    """Read many blobs with one `git cat-file --batch` process (sizes checked first by the caller)."""
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


def _checked_entries(entries: list[tuple[str, str, str, str]], commit: str) -> list[tuple[str, str, tuple[str, ...]]]:
    """(mode, object, path parts) of the blobs to write, refusing any tree a
    real checkout could not have: unsafe names, one name twice (git fsck's
    duplicateEntries: a symlink then a file of the same name would have the
    file written through the symlink), or a name that is both a file and a folder."""
    out: list[tuple[str, str, tuple[str, ...]]] = []
    files: set[tuple[str, ...]] = set()
    folders: set[tuple[str, ...]] = set()
    for mode, kind, obj, name in entries:
        if kind != "blob":
            continue  # submodule (commit) entries have no content here
        pure = PurePosixPath(name)
        parts = tuple(name.split("/"))
        if pure.is_absolute() or any(p in ("..", ".", "") for p in parts) or "\x00" in name:
            raise UsageError(f"refusing unsafe path {name!r} in revision {commit[:12]}")
        if parts in files or parts in folders:
            raise UsageError(f"refusing revision {commit[:12]}: its tree lists {name!r} twice (a corrupt or crafted tree; see `git fsck`)")
        for i in range(1, len(parts)):
            if parts[:i] in files:
                raise UsageError(f"refusing revision {commit[:12]}: {'/'.join(parts[:i])!r} is both a file and a folder in its tree")
            folders.add(parts[:i])
        files.add(parts)
        out.append((mode, obj, parts))
    return out


def _mkdirs(dest: Path, parts: tuple[str, ...]) -> Path:
    """Create dest/parts[0]/... one level at a time, refusing anything but a real folder on the way."""
    here = dest
    for part in parts:
        here = here / part
        try:
            os.mkdir(here, 0o755)
        except FileExistsError:
            if os.path.islink(here) or not os.path.isdir(here):
                raise UsageError(f"refusing to write under {here}: not a plain folder") from None
    return here


def materialise(repo: Path, commit: str, rel: str, dest: Path) -> Path:
    """Write the tree at `commit:rel` under `dest/rel` and return that folder.

    The tree may be hostile (a pull request's branch), so nothing is ever
    written through a symlink: blob sizes are checked before any is read,
    files are created with O_EXCL|O_NOFOLLOW and their mode set at creation,
    and symlinks are recreated only after every file (the spec loader refuses
    any that lead outside the spec folder).  Submodules are skipped."""
    from ..spec.files import MAX_FILE_BYTES, MAX_SPEC_BYTES
    from .lockfile import MAX_LOCK_BYTES

    entries = _ls_tree(repo, commit, rel)
    target = dest if rel == "." else dest / rel
    if not entries:
        raise UsageError(f"no folder {rel!r} at revision {commit[:12]} (was the spec folder moved? pass its old path with --spec or compare folders)")
    blobs_to_write = _checked_entries(entries, commit)
    sizes = _blob_sizes(repo, [obj for _, obj, _ in blobs_to_write])
    total = 0
    for mode, obj, parts in blobs_to_write:
        limit = MAX_LOCK_BYTES if parts[-1] == LOCK_FILE else MAX_FILE_BYTES
        if sizes[obj] > limit:
            raise UsageError(f"refusing revision {commit[:12]}: {'/'.join(parts)!r} is {sizes[obj]} bytes, over the {limit} byte limit for a spec file")
        total += sizes[obj]
    if total > MAX_SPEC_BYTES + MAX_LOCK_BYTES:
        raise UsageError(f"refusing revision {commit[:12]}: its spec folder holds {total} bytes, over the {MAX_SPEC_BYTES} byte budget")
    blobs = _cat_blobs(repo, [obj for _, obj, _ in blobs_to_write])
    nofollow = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    links = []
    for mode, obj, parts in blobs_to_write:
        if mode == "120000":
            links.append((obj, parts))
            continue
        folder = _mkdirs(dest, parts[:-1])
        try:
            fd = os.open(folder / parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | nofollow, 0o755 if mode == "100755" else 0o644)
        except FileExistsError:
            raise UsageError(f"refusing revision {commit[:12]}: {'/'.join(parts)!r} would be written twice") from None
        with os.fdopen(fd, "wb") as fh:
            fh.write(blobs[obj])
    for obj, parts in links:
        folder = _mkdirs(dest, parts[:-1])
        try:
            os.symlink(blobs[obj].decode("utf-8", "surrogateescape"), folder / parts[-1])
        except FileExistsError:
            raise UsageError(f"refusing revision {commit[:12]}: {'/'.join(parts)!r} would be written twice") from None
    if not target.is_dir() or target.is_symlink():
        raise UsageError(f"{rel!r} is a file, not a folder, at revision {commit[:12]}")
    return target


# ---------------------------------------------------------------------------
# sides


def side_kind(ref: str, *, root: Path | None = None) -> tuple[str, str]:
    """("folder", path) or ("revision", rev) for a BASE/HEAD argument: never a guess.

    A pull request controls which folders exist in its checkout, so a folder
    named `origin/main/` must not silently stand in for the revision (the
    token gate would compare the change with itself).  The rules are the one
    side syntax of sides.py (`dir:PATH` or a path-like `./x`, `x/`, `/x` for a
    folder; `rev:REV` or a bare name for a revision, refused when a path of
    that name exists), shared with `history`."""
    side = parse_side(ref)
    if side.kind == "lock":
        raise UsageError(f"{ref!r}: a lock file is not a side of `diff`; use `promptspec check` against a lock file")
    check_unambiguous(side, Path(root) if root is not None else Path.cwd())
    return ("folder" if side.kind == "dir" else "revision"), side.ref


def open_side(ref: str | None, *, spec_dir: Path, workdir: Path, root: Path | None = None) -> SpecSource:
    """Turn a BASE/HEAD argument into a spec folder on disk.

    None is the working tree (`spec_dir` as it is now); a folder (see
    `side_kind`, relative to `root`, default the current folder) must hold
    spec.yaml; a revision of the repository holding `spec_dir` is
    materialised under `workdir`."""
    if ref is None:
        return SpecSource(WORKING_TREE, Path(spec_dir))
    kind, value = side_kind(ref, root=root)
    if kind == "folder":
        as_path = Path(value).expanduser()
        if not as_path.is_absolute() and root is not None:
            as_path = Path(root) / as_path
        if as_path.is_file():
            raise UsageError(f"{ref} is a file; pass a git revision or a spec folder")
        if not as_path.is_dir():
            raise UsageError(f"no folder {value!r}; pass a spec folder or a git revision")
        if not (as_path / SPEC_FILE).is_file():
            raise UsageError(f"{ref} is a folder but not a spec folder (no {SPEC_FILE} in it); pass a spec folder or a git revision")
        return SpecSource(ref, as_path)
    repo, rel = repo_of(Path(spec_dir))
    commit = resolve_commit(repo, value)
    workdir.mkdir(parents=True, exist_ok=True)
    path = materialise(repo, commit, rel, workdir)
    if not (path / SPEC_FILE).is_file():
        raise UsageError(f"{rel!r} at {ref} ({commit[:7]}) is not a spec folder (no {SPEC_FILE}); pass the spec folder's path with --spec")
    return SpecSource(value, path, commit)


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
    sees `modes/plan.md modified` beside the sections it changed.  Files no
    spec references are hashed too, so each read is bounded and non-blocking
    (a `x.md -> /dev/zero` or a FIFO gets a marker, not a hang), and the
    whole walk stops hashing past the spec size budget."""
    from ..spec.files import MAX_FILE_BYTES, MAX_SPEC_BYTES, file_digest

    out: dict[str, str] = {}
    root = Path(root)
    if not root.is_dir():
        return out
    budget = MAX_SPEC_BYTES
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__pycache__")
        for name in sorted(filenames):
            path = Path(dirpath, name)
            rel = path.relative_to(root).as_posix()
            if rel in skip or name.startswith("."):
                continue
            digest = file_digest(path, limit=max(0, min(MAX_FILE_BYTES, budget)))
            if digest is None:
                continue
            if ":" not in digest:
                budget -= os.stat(path).st_size
            out[rel] = digest
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
    "side_kind",
]



def current_repo_spec(cwd: Path | None = None) -> Path | None:
    """`templates/` at the top of the git repository around `cwd`, if it is a
    spec folder: step 3 of the spec rule (spec/locate.py), which every command follows."""
    choice = locate(None, cwd=cwd)
    return choice.path if choice.reason == "repository" else None
