"""A throw-away world for one Codex run: fixed sentinel paths and environment.

Everything Codex could read from the machine is pinned or removed, so two runs
on different machines see the same inputs and a captured text differs only
where a sentinel shows through (home, cwd, date, timezone, shell).  Those
sentinels are what the importer turns back into spec variables.  The real
`~/.codex` and every credential variable stay out of reach: the process gets a
new environment built from scratch, not a filtered copy.
"""

from __future__ import annotations

import datetime as _dt
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .binary import MAX_OUTPUT, CodexBinary, CodexError, run_bounded

if TYPE_CHECKING:
    from .world import World

DUMMY_KEY_VAR = "PROMPTSPEC_DUMMY_KEY"
TIMEZONE = "Etc/UTC"
SHELL = "/bin/bash"
PROJECT_DOC = "# Project rules\n\nRun the tests before every commit.\n"
"""Our own AGENTS.md text for the scratch project (never Codex's)."""

PROMPT = "hello"
"""The user's turn text; the last input item of every captured request."""


@dataclass
class Scratch:
    """The sentinel folders of one run; `values` are what the spec's placeholders stand for.
    `args` are the flags every Codex process of the run gets (a user's `-c`,
    `--enable`, `--disable`); `project` the user's project when Codex runs there."""

    base: Path
    home: Path = field(init=False)
    cwd: Path = field(init=False)
    args: list[str] = field(default_factory=list)
    project: Path | None = None  # the git root of a user's --cwd (the AGENTS.md chain starts there)
    mcp: list[str] = field(default_factory=list)  # the MCP servers configured (named when Codex hangs on one)
    quiet: bool = False  # Codex's side work that no request shows is off (QUIET_FLAGS, QUIET_PROGRAMS)

    def __post_init__(self) -> None:
        self.home = self.base / "home"
        self.cwd = self.base / "repo"

    @property
    def codex_home(self) -> Path:
        return self.home / ".codex"

    def values(self) -> dict[str, str]:
        return {
            "home": str(self.home),
            "codex_home": str(self.codex_home),
            "cwd": str(self.cwd),
            **({"project_root": str(self.project)} if self.project is not None and self.project != self.cwd else {}),
            "current_date": _dt.date.today().isoformat(),
            "timezone": TIMEZONE,
            "shell": Path(SHELL).name,
        }

    @property
    def shims(self) -> Path:
        return self.base / "quiet-bin"

    def flags(self) -> list[str]:
        """What every Codex process of this world is given before its own arguments."""
        return [*self.args, *(QUIET_FLAGS if self.quiet else ())]

    def env(self, binary: CodexBinary) -> dict[str, str]:
        path = ":".join([*([str(self.shims)] if self.quiet else []), *binary.extra_path, "/usr/local/bin", "/usr/bin", "/bin"])
        return {
            "PATH": path,
            "HOME": str(self.home),
            "CODEX_HOME": str(self.codex_home),
            "TZ": TIMEZONE,
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "SHELL": SHELL,
            "TERM": "dumb",
            "NO_COLOR": "1",
            "USER": "promptspec",
            "GIT_CONFIG_NOSYSTEM": "1",
            DUMMY_KEY_VAR: "dummy",
        }


QUIET_FLAGS = ("-c", "features.shell_snapshot=false")
"""For each thread, Codex snapshots a login shell for its shell tool (`bash -lc`
and a `bash -c` check of the result, with the `tr`, `wc`, `sed`, `awk` and `id`
they run): about 40 % of its CPU per captured first request (0.125.0, twenty
threads in one app-server: 1.95 CPU-s with it, 1.17 without; 2026-12-07)."""
QUIET_PROGRAMS = ("lsb_release",)
"""Programs Codex runs for what it sends outside the body (the User-Agent header's
OS description): in a quiet world they fail at once (a link to `false`), and
Codex falls back to /etc/os-release (another ~10 % per first request)."""


SYSTEM_CONFIG_DIR = Path("/etc/codex")
SYSTEM_CONFIG_FILES = ("config.toml", "managed_config.toml", "requirements.toml")
"""Machine-wide configuration Codex reads on Unix whatever HOME and CODEX_HOME say
(a fixed path, no override): developer instructions from it show up in the
request, and managed_config.toml, applied over `-c`, can send it elsewhere."""


def check_machine() -> None:
    """Refuse to run where machine-wide Codex configuration would reach the capture."""
    found = [n for n in SYSTEM_CONFIG_FILES if os.path.lexists(SYSTEM_CONFIG_DIR / n)]
    if found:
        raise CodexError(f"{SYSTEM_CONFIG_DIR / found[0]} exists: Codex reads machine-wide configuration from it, "
                         "which would change what it sends",
                         hint=f"run where {SYSTEM_CONFIG_DIR} holds no {', '.join(SYSTEM_CONFIG_FILES)} (a container or CI runner)")


def make_scratch(prefix: str = "promptspec-codex-", world: "World | None" = None) -> Scratch:
    """A fresh scratch world: empty HOME, a git project with one AGENTS.md
    (on a machine with no machine-wide Codex configuration: check_machine);
    with a user's `world`, their project as cwd and what shapes the prompt
    from their Codex home (oracle/world.py)."""
    check_machine()
    base = Path(tempfile.mkdtemp(prefix=prefix))
    s = Scratch(base)
    try:  # interrupted half-made (SIGTERM during `git init`): removed here, the caller never saw it
        s.codex_home.mkdir(parents=True)
        _make_shims(s.shims)
        if world is not None:
            from .world import mcp_servers, populate_home, project_root

            s.args = world.args()
            s.mcp = mcp_servers(world)
            populate_home(world, s.codex_home)
            if world.cwd is not None:
                s.cwd, s.project = world.cwd, project_root(world.cwd)
                return s
        s.cwd.mkdir()
        (s.cwd / "AGENTS.md").write_text(PROJECT_DOC, encoding="utf-8")
        git = shutil.which("git")
        if git:
            subprocess.run([git, "init", "-q", "-b", "main", str(s.cwd)], check=False, capture_output=True,
                           env={"PATH": "/usr/bin:/bin", "HOME": str(s.home), "GIT_CONFIG_NOSYSTEM": "1"}, timeout=30)
        else:
            (s.cwd / ".git").mkdir()
    except BaseException:
        remove_scratch(s)
        raise
    return s


def _make_shims(folder: Path) -> None:
    """QUIET_PROGRAMS as links to `false`, put first on PATH in a quiet world
    (none where the machine has no `false`: those programs then run as usual)."""
    folder.mkdir()
    false = shutil.which("false", path="/usr/bin:/bin")
    if false:
        for name in QUIET_PROGRAMS:
            (folder / name).symlink_to(false)


def remove_scratch(s: Scratch) -> None:
    shutil.rmtree(s.base, ignore_errors=True)


def provider_overrides(url: str) -> list[str]:
    """`-c` flags pointing Codex at the loopback recorder with a dummy key."""
    return [
        "-c", "model_provider=promptspec_local",
        "-c", "model_providers.promptspec_local.name=promptspec_local",
        "-c", f'model_providers.promptspec_local.base_url="{url}"',
        "-c", "model_providers.promptspec_local.wire_api=responses",
        "-c", f"model_providers.promptspec_local.env_key={DUMMY_KEY_VAR}",
        "-c", "check_for_update_on_startup=false",
        # The plugin marketplace sync is the release's one network attempt at start-up
        # (`git ls-remote` of github.com, lookups of api.github.com and chatgpt.com; seen
        # with strace in 0.125.0 and 0.171.0); off, the captured requests are the same.
        "-c", "features.plugins=false",
    ]


def run(binary: CodexBinary, scratch: Scratch, args: list[str], what: str, timeout: float = 120.0) -> str:
    """Run one Codex command in the scratch world; its stdout, or a one-line error."""
    try:
        code, stdout, stderr, over = run_bounded([str(binary.path), *scratch.flags(), *args], timeout, cwd=scratch.cwd, env=scratch.env(binary))
    except subprocess.TimeoutExpired:
        raise CodexError(f"`codex {what}` did not finish within {timeout:.0f} s", release=binary.release,
                         hint="a hung Codex; rerun, or report the release") from None
    except OSError as exc:
        raise CodexError(f"cannot run `codex {what}`: {exc.strerror or exc}", release=binary.release) from None
    if over:
        raise CodexError(f"`codex {what}` printed more than {MAX_OUTPUT // (1024 * 1024)} MB", release=binary.release,
                         hint="a broken or hostile binary; report the release")
    out = subprocess.CompletedProcess(args, code, stdout, stderr)
    if out.returncode != 0:
        err = _last_line(out.stderr.decode("utf-8", "replace"))
        if "unrecognized subcommand" in err or "unexpected argument" in err:
            raise CodexError(f"`codex {what}` is not available in this release ({err})", release=binary.release,
                             hint="use a release from 0.125.0 on")
        raise CodexError(f"`codex {what}` exited with status {out.returncode}: {err}", release=binary.release,
                         hint="check the configuration values passed")
    try:
        return out.stdout.decode("utf-8")
    except UnicodeDecodeError:
        raise CodexError(f"`codex {what}` printed output that is not UTF-8", release=binary.release) from None


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("WARNING: proceeding")]
    return (lines[-1] if lines else "no message")[:300]
