"""The bad-input corpus: broken and hostile specs, each run through the real CLI.

Every folder under tests/corpus/ except `_base` is one case.  The test copies
`_base` (a minimal valid spec), lays the case's files over it, applies the
case's test-time setup (bytes that a text file cannot hold, huge files,
symlinks, FIFOs), runs `promptspec` (its `main`, in this process, with
stdout, stderr and the exit code captured: what the cases test is the
command's handling of bad input, not the interpreter around it) and checks:

* the exit status (2 for a user error unless `exit:` says otherwise);
* stderr is exactly one line, `promptspec: error: ...`, matching the case's
  `error` regex (which names the file and, where known, the line);
* no `Traceback` anywhere, nothing on stdout for an error;
* nothing left behind: the spec folder is byte-for-byte unchanged and no new
  file or folder appeared beside it (temp dirs, half-written output).

case.yaml keys: description, command (argv after `promptspec`, default
[render]; `--spec {spec}` is added unless spec_arg: false), exit, error,
stdout (a substring expected on stdout), remove (base paths to delete),
bytes (path -> string whose code points 0-255 are the bytes to write),
generate (path -> {prefix, text, repeat, suffix}), symlinks (path -> target;
`{outside}` is a folder beside the spec holding secret.txt, evil.yaml and
spec.yaml), fifo (paths), not_created (paths under the workspace that must
not exist afterwards).  `{spec}` and `{tmp}` expand in command and files.

`promptspec lint` runs on every case's spec too: it may report findings or
one error line, but never crash or write.

The atomic-write tests at the end cover the other half of "nothing lost":
a write interrupted by SIGTERM/SIGINT leaves the previous output intact.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from promptspec.util import atomic

from _helpers import run_cli

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
BASE = CORPUS / "_base"
CASES = sorted(p.name for p in CORPUS.iterdir() if p.is_dir() and not p.name.startswith("_"))
CASE_KEYS = {
    "description", "command", "spec_arg", "exit", "error", "stdout", "remove", "bytes",
    "generate", "symlinks", "fifo", "not_created",
}
RUN_TIMEOUT = 120  # a hang guard only: a case that needs it has failed anyway


def load_case(name: str) -> dict[str, Any]:
    data = yaml.safe_load((CORPUS / name / "case.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict) and data.get("description"), f"{name}/case.yaml needs a description"
    unknown = set(data) - CASE_KEYS
    assert not unknown, f"{name}/case.yaml has unknown keys {sorted(unknown)}"
    if data.get("exit", 2) != 0:
        assert data.get("error"), f"{name}/case.yaml needs an 'error' regex"
    return data


SPEC_CASES = [name for name in CASES if load_case(name).get("spec_arg", True)]
"""The cases that take a spec folder, which lint then reads too."""


def tree_digest(root: Path) -> dict[str, str]:
    """Every entry under root -> a digest of what it is (file bytes, link target, kind)."""
    out: dict[str, str] = {}
    for folder, dirs, files in os.walk(root):
        for name in sorted(dirs + files):
            path = Path(folder) / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                out[rel] = "link:" + os.readlink(path)
            elif path.is_dir():
                out[rel] = "dir"
            elif path.is_file():
                out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                out[rel] = "special"
    return out


@dataclass
class Outcome:
    case: dict[str, Any]
    workspace: Path
    spec: Path
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    spec_before: dict[str, str]
    spec_after: dict[str, str]
    workspace_before: list[str]
    workspace_after: list[str]
    lint: subprocess.CompletedProcess[str] | None = None


def _expand(value: str, spec: Path, tmp: Path) -> str:
    return value.replace("{spec}", str(spec)).replace("{tmp}", str(tmp)).replace("{outside}", str(tmp / "outside"))


def prepare(name: str, workspace: Path) -> tuple[dict[str, Any], Path]:
    case = load_case(name)
    spec = workspace / "spec"
    shutil.copytree(BASE, spec, symlinks=True)
    outside = workspace / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("not for publishing\n")
    (outside / "evil.yaml").write_text("role: user\nslot: environment_context\ntext: stolen\n")
    (outside / "spec.yaml").write_text((BASE / "spec.yaml").read_text())
    for rel in case.get("remove", ()):
        target = spec / rel
        if target.is_dir():
            shutil.rmtree(target)
        else:
            target.unlink()
    for src in sorted((CORPUS / name).rglob("*")):
        rel = src.relative_to(CORPUS / name)
        if rel.as_posix() == "case.yaml" or src.is_dir():
            continue
        dest = spec / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(_expand(src.read_text(encoding="utf-8"), spec, workspace), encoding="utf-8")
    for rel, text in (case.get("bytes") or {}).items():
        (spec / rel).write_bytes(text.encode("latin-1"))
    for rel, gen in (case.get("generate") or {}).items():
        data = gen.get("prefix", "") + gen["text"] * gen["repeat"] + gen.get("suffix", "")
        (spec / rel).write_text(data, encoding="utf-8")
    for rel, target in (case.get("symlinks") or {}).items():
        os.symlink(_expand(target, spec, workspace), spec / rel)
    for rel in case.get("fifo", ()):
        os.mkfifo(spec / rel)
    return case, spec


def run_case(name: str, workspace: Path) -> Outcome:
    case, spec = prepare(name, workspace)
    argv = [_expand(a, spec, workspace) for a in case.get("command", ["render"])]
    if case.get("spec_arg", True) and "--spec" not in argv:
        argv += ["--spec", str(spec)]
    env = {**os.environ, "LC_ALL": "C.UTF-8", "PROMPTSPEC_CACHE_DIR": str(workspace.parent / "token-cache")}
    spec_before = tree_digest(spec)
    workspace_before = sorted(os.listdir(workspace))

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return run_cli(args, cwd=workspace, env=env, timeout=RUN_TIMEOUT, errors="replace")

    proc = cli(*argv)
    outcome = Outcome(
        case, workspace, spec, argv, proc.returncode, proc.stdout, proc.stderr,
        spec_before, tree_digest(spec), workspace_before, sorted(os.listdir(workspace)),
    )
    if case.get("spec_arg", True):
        outcome.lint = cli("lint", "--spec", str(spec))  # the linter reads the same hostile files
    return outcome


class _Outcomes(dict):
    """Each case run once, when a test first asks for it (so `-k` runs only the
    cases it selects); a case that raised is kept and reported by its tests.
    A hang (_helpers.Hung) is not kept: it fails the run where it happens."""

    def __init__(self, root: Path):
        super().__init__()
        self.root = root

    def __missing__(self, name: str) -> Outcome | Exception:
        workspace = self.root / name
        workspace.mkdir()
        try:
            self[name] = run_case(name, workspace)
        except Exception as exc:
            self[name] = exc
        return self[name]


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    root = tmp_path_factory.mktemp("corpus")
    (root / "token-cache").mkdir()
    return _Outcomes(root)


def test_corpus_is_big_enough():
    assert len(CASES) >= 45, f"only {len(CASES)} corpus cases"


@pytest.mark.parametrize("name", CASES)
def test_case(name: str, outcomes: dict[str, Outcome]) -> None:
    outcome = outcomes[name]
    if isinstance(outcome, BaseException):
        raise outcome
    case = outcome.case
    shown = f"promptspec {' '.join(outcome.argv)}\nexit {outcome.returncode}\nstderr: {outcome.stderr!r}\nstdout: {outcome.stdout[:500]!r}"
    assert "Traceback" not in outcome.stderr + outcome.stdout, shown
    assert outcome.returncode == case.get("exit", 2), shown
    if outcome.returncode == 0:
        assert "error" not in outcome.stderr.lower(), shown
        if "stdout" in case:
            assert case["stdout"] in outcome.stdout, shown
    else:
        lines = outcome.stderr.splitlines()
        assert len(lines) == 1, f"stderr must be exactly one line\n{shown}"
        assert lines[0].startswith("promptspec: error: "), shown
        message = lines[0][len("promptspec: error: "):]
        assert re.search(case["error"], message), f"error does not match {case['error']!r}\n{shown}"
        assert outcome.stdout == "", f"nothing may be printed on stdout for an error\n{shown}"
    # Nothing left behind: the spec is untouched and nothing new appeared.
    assert outcome.spec_after == outcome.spec_before, f"the spec folder changed\n{shown}"
    assert outcome.workspace_after == outcome.workspace_before, f"new files appeared beside the spec\n{shown}"
    for rel in case.get("not_created", ()):
        assert not (outcome.workspace / rel).exists(), f"{rel} was created\n{shown}"


@pytest.mark.parametrize("name", SPEC_CASES)
def test_lint_survives_the_case(name: str, outcomes: dict[str, Outcome]) -> None:
    """`promptspec lint` on the same spec: findings (1) or one clean error line (2),
    never a crash, and it writes nothing."""
    outcome = outcomes[name]
    if isinstance(outcome, BaseException):
        raise outcome
    lint = outcome.lint
    assert lint is not None, "SPEC_CASES holds only cases that take a spec folder"
    shown = f"promptspec lint --spec {outcome.spec}\nexit {lint.returncode}\nstderr: {lint.stderr[-1000:]!r}"
    assert lint.returncode in (0, 1, 2), shown
    assert "Traceback" not in lint.stderr + lint.stdout and "internal error" not in lint.stderr, shown
    if lint.returncode == 2:
        lines = lint.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("promptspec: error: "), shown
    assert tree_digest(outcome.spec) == outcome.spec_before, f"lint changed the spec\n{shown}"
    assert sorted(os.listdir(outcome.workspace)) == outcome.workspace_before, f"lint left files behind\n{shown}"


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    """--debug is how a user reports a bug: then (and only then) a traceback.
    A subprocess on purpose: the traceback is printed by the interpreter
    around the real entry point, which is what this tests."""
    _, spec = prepare("template-undefined", tmp_path)
    env = {**os.environ, "PROMPTSPEC_CACHE_DIR": str(tmp_path / "cache")}
    plain = subprocess.run([sys.executable, "-m", "promptspec.cli", "render", "--spec", str(spec)], capture_output=True, text=True, env=env)
    debug = subprocess.run([sys.executable, "-m", "promptspec.cli", "--debug", "render", "--spec", str(spec)], capture_output=True, text=True, env=env)
    assert plain.returncode == 2 and "Traceback" not in plain.stderr
    assert debug.returncode != 0 and "Traceback" in debug.stderr and "SpecError" in debug.stderr


# ---------------------------------------------------------------------------
# Nothing lost: atomic writes survive interruption.

WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from promptspec.util import atomic

    target = Path(sys.argv[1])
    with atomic.replace_tree(target) as staging:
        for i in range(100000):
            (staging / f"page-{i:05}.md").write_text("new page\\n" * 50)
            if i == 20:
                print("writing", flush=True)
            time.sleep(0.002)
    print("done", flush=True)
    """
)


def _old_output(folder: Path) -> dict[str, str]:
    folder.mkdir()
    (folder / "index.md").write_text("old index\n")
    (folder / "sub").mkdir()
    (folder / "sub" / "page.md").write_text("old page\n")
    return tree_digest(folder)


def _interrupt_writer(tmp_path: Path, sig: int) -> subprocess.CompletedProcess[str]:
    out = tmp_path / "site"
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()  # waits until the writer is midway
    assert line.strip() == "writing", proc.stderr.read() if proc.stderr else ""
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=RUN_TIMEOUT)
    return subprocess.CompletedProcess(proc.args, proc.returncode, line + stdout, stderr)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_interrupted_replace_tree_keeps_the_old_folder(tmp_path: Path, sig: int) -> None:
    before = _old_output(tmp_path / "site")
    done = _interrupt_writer(tmp_path, sig)
    assert "done" not in done.stdout
    assert done.returncode != 0
    assert "KeyboardInterrupt" in done.stderr or "Interrupted" in done.stderr  # raised, so cleanup ran
    assert tree_digest(tmp_path / "site") == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"], "a staging folder was left behind"


def test_replace_tree_swaps_in_the_new_folder(tmp_path: Path) -> None:
    out = tmp_path / "site"
    _old_output(out)
    with atomic.replace_tree(out) as staging:
        (staging / "index.md").write_text("new index\n")
        assert (out / "index.md").read_text() == "old index\n"  # the old one is kept until the end
    assert tree_digest(out) == {"index.md": hashlib.sha256(b"new index\n").hexdigest()}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]
    assert (out.stat().st_mode & 0o777) == (0o777 & ~_umask()), "the published folder must not be 0700"


def test_replace_tree_without_atomic_exchange_uses_two_renames(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where renameat2(RENAME_EXCHANGE) is missing (macOS, old kernels, some
    file systems) the old folder is moved aside, the new one renamed in, and
    the old one deleted only then."""
    monkeypatch.setattr(atomic, "_exchange", lambda a, b: False)
    out = tmp_path / "site"
    _old_output(out)
    with atomic.replace_tree(out) as staging:
        (staging / "index.md").write_text("new index\n")
    assert tree_digest(out) == {"index.md": hashlib.sha256(b"new index\n").hexdigest()}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_replace_tree_failure_leaves_target_untouched(tmp_path: Path) -> None:
    out = tmp_path / "site"
    before = _old_output(out)
    with pytest.raises(RuntimeError):
        with atomic.replace_tree(out) as staging:
            (staging / "half.md").write_text("half")
            raise RuntimeError("a template failed")
    assert tree_digest(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_replace_tree_creates_a_missing_target(tmp_path: Path) -> None:
    out = tmp_path / "deep" / "site"
    with atomic.replace_tree(out) as staging:
        (staging / "a.md").write_text("a")
    assert (out / "a.md").read_text() == "a"


def test_replace_tree_refuses_a_file_target(tmp_path: Path) -> None:
    out = tmp_path / "site"
    out.write_text("a file")
    with pytest.raises(atomic.SpecError, match="is a file"):
        with atomic.replace_tree(out):
            pass
    assert out.read_text() == "a file"


def test_signal_during_the_swap_is_held_until_it_is_complete(tmp_path: Path) -> None:
    """A signal that lands between the renames must not leave a half swap."""
    out = tmp_path / "site"
    _old_output(out)
    real_swap = atomic._swap

    def swap_with_signal(staging: Path, target: Path) -> None:
        os.kill(os.getpid(), signal.SIGINT)  # delivered now, acted on after the swap
        real_swap(staging, target)

    atomic._swap = swap_with_signal  # type: ignore[assignment]
    # Python's own SIGINT handler, as in a terminal, even when this run's
    # parent ignores SIGINT (a shell's background job).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            with atomic.replace_tree(out) as staging:
                (staging / "index.md").write_text("new index\n")
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        atomic._swap = real_swap  # type: ignore[assignment]
        signal.signal(signal.SIGINT, previous)
    assert (out / "index.md").read_text() == "new index\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_killed_writer_leftovers_are_cleaned_by_the_next_write(tmp_path: Path) -> None:
    """SIGKILL cannot be caught: the staging folder stays, named after the dead pid,
    and the next replace_tree beside it removes it."""
    out = tmp_path / "site"
    before = _old_output(out)
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(out)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "writing"
    proc.kill()
    proc.wait(timeout=RUN_TIMEOUT)
    assert tree_digest(out) == before
    leftovers = [p.name for p in tmp_path.iterdir() if p.name != "site"]
    assert leftovers and all(name.startswith(".site.") for name in leftovers)
    with atomic.replace_tree(out) as staging:
        (staging / "index.md").write_text("new\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_write_text_is_atomic_and_keeps_the_mode(tmp_path: Path) -> None:
    path = tmp_path / "page.md"
    atomic.write_text(path, "first\r\nline\n")  # bytes as given: no newline translation
    assert path.read_bytes() == b"first\r\nline\n"
    assert (path.stat().st_mode & 0o777) == (0o666 & ~_umask())
    path.chmod(0o640)
    atomic.write_text(path, "second\n")
    assert path.read_text() == "second\n" and (path.stat().st_mode & 0o777) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["page.md"]


def test_write_bytes_failure_leaves_old_file_and_no_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "lock.json"
    path.write_text("old\n")

    def boom(*_args: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, "replace", boom)
    with pytest.raises(OSError):
        atomic.write_bytes(path, b"new\n")
    assert path.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lock.json"]


def test_interrupted_write_text_cleans_its_temp_file(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import os, signal, sys
        from promptspec.util import atomic
        real_fsync = os.fsync
        def fsync_then_term(fd):
            real_fsync(fd)
            os.kill(os.getpid(), signal.SIGTERM)  # arrives while the temp file exists
        os.fsync = fsync_then_term
        atomic.write_text(sys.argv[1], "new\\n")
        """
    )
    path = tmp_path / "lock.json"
    path.write_text("old\n")
    proc = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, timeout=RUN_TIMEOUT)
    assert proc.returncode != 0 and "Interrupted" in proc.stderr
    assert path.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lock.json"]


def test_cli_reports_an_interrupt_without_traceback(tmp_path: Path) -> None:
    """`promptspec` turns Interrupted into one line and 128 + signal number."""
    script = textwrap.dedent(
        """
        import os, signal, sys, time
        from promptspec import cli
        from promptspec.cli import commands
        from promptspec.util import atomic

        def cmd(args):
            with atomic.replace_tree(sys.argv[1]) as staging:
                (staging / "x").write_text("x")
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(30)  # never reached: the signal raises first

        commands.cmd_render = cmd  # build_parser() binds it when main() runs
        sys.exit(cli.main(["render"]))
        """
    )
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-c", script, str(out)], capture_output=True, text=True, timeout=RUN_TIMEOUT)
    assert proc.returncode == 128 + signal.SIGTERM, proc.stderr
    assert proc.stderr.strip() == "promptspec: interrupted"
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
