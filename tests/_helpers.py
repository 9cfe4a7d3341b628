"""Helpers shared by several test modules: the CLI and real MkDocs builds run
in this process, MkDocs serves of a tmp site, link checking, git
repositories, pseudo-terminal reads.

In-process by default: `cli()` and `mkdocs_build()` call the entry points'
functions here, with stdout, stderr and the exit code captured, because a
Python start-up per call is most of what such a test would cost.  A test
whose subject IS the process boundary (the real `promptspec` entry point's
exit code, signals, an encoding chosen by the environment, a real `mkdocs
serve`) uses `cli_process()` or its own subprocess and says so.

Imported as `from _helpers import ...`: tests/ has no __init__.py, so pytest's
default (prepend) import mode puts tests/ on sys.path, as it does for
conftest.  Kept out of conftest.py because these are plain functions, not
fixtures, and a module named for what it holds is easier to find.
"""

from __future__ import annotations

import contextlib
import html
import io
import logging
import os
import re
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import warnings
import urllib.request
from pathlib import Path
from typing import Callable, Iterator, Mapping, Sequence
from urllib.parse import unquote, urlsplit

import yaml

REPO = Path(__file__).resolve().parents[1]
TEMPLATES = REPO / "templates"
MKDOCS_YML = REPO / "mkdocs.yml"


def subprocess_env(**extra: str) -> dict[str, str]:
    """The environment for a child process, read at call time so that it
    carries the session's PROMPTSPEC_CACHE_DIR (set by conftest after the
    test modules were imported) and the children count into the tmp cache."""
    return {**os.environ, "NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true", **extra}


# ---------------------------------------------------------------------------
# MkDocs


class _MkdocsYamlLoader(yaml.SafeLoader):
    """Reads mkdocs.yml without importing the `!!python/name:` objects it names."""


_MkdocsYamlLoader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


def repo_nav() -> list:
    """The shipped nav's Home and Prompts entries: the hand-written guide
    pages it also lists are not in the tmp docs folders the tests build."""
    nav = yaml.load(MKDOCS_YML.read_text(encoding="utf-8"), Loader=_MkdocsYamlLoader)["nav"]
    return [entry for entry in nav if isinstance(entry, dict) and set(entry) & {"Home", "Prompts"}]


def mkdocs_config(
    tmp: Path,
    spec: Path,
    *,
    mermaid_js: str | None = None,
    name: str = "mkdocs.yml",
    site_dir: Path | None = None,
    **plugin_options,
) -> Path:
    """A config that inherits the repository's mkdocs.yml (theme, extensions,
    the nav's prompt pages) but builds `spec` from a tmp docs folder into
    `site_dir` (default tmp/site).  Extra keyword arguments are options of
    the promptspec plugin."""
    docs = tmp / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    (docs / "index.md").write_text("# Test site\n\nSee the [matrix](prompts/index.md).\n", encoding="utf-8")
    options: dict = {"spec": str(spec), **plugin_options}
    if mermaid_js:
        options["mermaid_js"] = mermaid_js
    cfg = {
        "INHERIT": str(MKDOCS_YML),
        "docs_dir": str(docs),
        "site_dir": str(site_dir if site_dir is not None else tmp / "site"),
        "plugins": ["search", {"promptspec": options}],
        "nav": repo_nav(),
    }
    path = tmp / name
    path.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    return path


def mkdocs_build(config: Path, *extra: str) -> subprocess.CompletedProcess:
    """`mkdocs build --strict -f CONFIG EXTRA...` through MkDocs' own command
    (its click group), in this process: the same options, messages and exit
    code as the `mkdocs` program, without a Python start-up per build."""
    from click.testing import CliRunner
    from mkdocs.__main__ import cli as mkdocs_cli
    from mkdocs.commands import build as mkdocs_build_module

    from mkdocs.config.defaults import MkDocsConfig

    args = ["build", "--strict", "-f", str(config), *extra]
    # MkDocs keeps plugin instances (for serve's rebuilds) in its config schema;
    # a build here starts with new ones, as a new `mkdocs build` process does.
    dict(MkDocsConfig._schema)["plugins"].plugin_cache.clear()
    filters = list(mkdocs_build_module.log.filters)
    with warnings.catch_warnings(), _fresh_loggers():
        try:
            result = CliRunner().invoke(mkdocs_cli, args, catch_exceptions=True)
        finally:
            # MkDocs adds a DuplicateFilter per command; kept, it would hide a
            # later build's warning that an earlier build in this process gave.
            mkdocs_build_module.log.filters[:] = filters
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        import traceback

        stderr += "".join(traceback.format_exception(result.exception))
    return subprocess.CompletedProcess(["mkdocs", *args], result.exit_code, result.stdout, stderr)


@contextlib.contextmanager
def _fresh_loggers() -> Iterator[None]:
    """The handlers of promptspec's own loggers as a new process has them (none):
    one made during an in-process run would write to that run's captured stream."""
    names = ("promptspec.serve",)
    saved = {n: (list(logging.getLogger(n).handlers), logging.getLogger(n).propagate) for n in names}
    try:
        yield
    finally:
        for n, (handlers, propagate) in saved.items():
            logging.getLogger(n).handlers[:] = handlers
            logging.getLogger(n).propagate = propagate


def build_ok(config: Path) -> Path:
    """Build strict, fail the test with mkdocs' stderr otherwise; the site folder."""
    proc = mkdocs_build(config)
    assert proc.returncode == 0, proc.stderr
    return Path(yaml.safe_load(config.read_text())["site_dir"])


@contextlib.contextmanager
def gc_collections() -> Iterator[list[int]]:
    """The generation of each collection Python's cyclic GC starts meanwhile
    (gc.callbacks), in order: 2 is a full one."""
    seen: list[int] = []

    def note(phase: str, info: dict) -> None:
        if phase == "start":
            seen.append(info["generation"])

    import gc

    gc.callbacks.append(note)
    try:
        yield seen
    finally:
        gc.callbacks.remove(note)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def mkdocs_serve(config: Path, log: Path, env: dict[str, str] | None = None, args: tuple[str, ...] = ()) -> Iterator[str]:
    """`mkdocs serve` (with `args`) on a free local port, its output going to
    `log`; yields the base URL and stops the server on exit."""
    port = free_port()
    with open(log, "w+") as fh:
        proc = subprocess.Popen(
            [sys.executable, "-m", "mkdocs", "serve", "-f", str(config), "-a", f"127.0.0.1:{port}", *args],
            stdout=fh, stderr=subprocess.STDOUT, env=env if env is not None else subprocess_env(),
        )
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()


def poll(url: str, predicate: Callable[[str], bool], timeout: float = 120) -> str:
    """Fetch `url` until predicate(body) holds (a wait, not a speed check)."""
    deadline = time.monotonic() + timeout
    body = ""
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=10) as resp:
                body = resp.read().decode("utf-8")
            if predicate(body):
                return body
        except OSError:
            pass
        time.sleep(0.3)
    raise AssertionError(f"{url} never satisfied the condition; last body:\n{body[:2000]}")


def broken_links(site_dir: Path) -> tuple[int, list[tuple[str, str]]]:
    """(links checked, links whose target file is missing) over every page."""
    broken = []
    count = 0
    for page in site_dir.rglob("*.html"):
        if page.name == "404.html":  # links from the site root by design
            continue
        text = page.read_text(encoding="utf-8")
        for href in re.findall(r'href="([^"]*)"', text):
            href = html.unescape(href)
            parts = urlsplit(href)
            if parts.scheme or parts.netloc or not parts.path:
                continue
            count += 1
            target = (page.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append((page.relative_to(site_dir).as_posix(), href))
    return count, broken


# ---------------------------------------------------------------------------
# Specs and results


def break_spec(spec: Path) -> None:
    """Make a copy of the embedded spec fail to load, naming fragments/apps.yaml."""
    (spec / "fragments" / "apps.yaml").write_text("role: developer\nslot: nowhere\ntext: x\n", encoding="utf-8")


def expected_sections(result, variant) -> dict[str, str]:
    """What the pipeline assembled for `variant`, keyed as the pages' data-ps-section ("base", "0.1"...)."""
    req = next(r for r in result.requests if r.variant == variant)
    out = {"base": req.base.text}
    for i, message in enumerate(req.messages):
        for j, s in enumerate(message.sections, 1):
            out[f"{i}.{j}"] = s.text
    return out


class Hung(BaseException):
    """A run in this process took longer than its time limit.  Not an Exception,
    so the CLI's last-resort handler cannot turn it into a clean exit 2."""


@contextlib.contextmanager
def _time_limit(seconds: float | None, what: str) -> Iterator[None]:
    """Interrupt the block after `seconds` (SIGALRM; only in the main thread)."""
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_alarm(signum, frame):
        raise Hung(f"{what} did not finish within {seconds} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def _environment(cwd: Path | None, env: Mapping[str, str] | None) -> Iterator[None]:
    saved_cwd, saved_env = os.getcwd(), dict(os.environ)
    try:
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        if cwd is not None:
            os.chdir(cwd)
        yield
    finally:
        os.chdir(saved_cwd)
        if env is not None:
            os.environ.clear()
            os.environ.update(saved_env)


def _captured() -> tuple[io.BytesIO, io.TextIOWrapper]:
    raw = io.BytesIO()
    return raw, io.TextIOWrapper(raw, encoding="utf-8", errors="surrogateescape", write_through=True)


def _as_text(raw: io.BytesIO, errors: str) -> str:
    # What subprocess.run(text=True) gives: decoded, universal newlines.
    return raw.getvalue().decode("utf-8", errors).replace("\r\n", "\n").replace("\r", "\n")


def run_cli(
    args: Sequence[str],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = 300,
    errors: str = "surrogateescape",
) -> subprocess.CompletedProcess[str]:
    """`promptspec ARGS` in this process: `promptspec.cli.main(ARGS)` with
    stdout and stderr captured (as text, as a child's pipe would give them),
    the exit code (argparse's SystemExit included), in `cwd` with the
    environment `env` (the whole of it, as for a child) when given, and
    interrupted after `timeout` seconds (Hung)."""
    from promptspec.cli import main

    argv = [str(a) for a in args]
    out_raw, out = _captured()
    err_raw, err = _captured()
    with _environment(cwd, env), warnings.catch_warnings(), _fresh_loggers(), \
            contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
            _time_limit(timeout, "promptspec " + " ".join(argv)):
        # The warning filters a new interpreter starts with (the run prints its warnings itself).
        warnings.resetwarnings()
        warnings.simplefilter("default")
        for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
            warnings.simplefilter("ignore", category)
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse: --help, --version, a bad option
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if not isinstance(exc.code, (int, type(None))):
                print(exc.code, file=sys.stderr)
        out.flush()
        err.flush()
    return subprocess.CompletedProcess(["promptspec", *argv], code, _as_text(out_raw, errors), _as_text(err_raw, errors))


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """`promptspec ARGS` in this process (run_cli): exit code, stdout, stderr."""
    return run_cli(args)


def cli_process(*args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None,
                timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """The real entry point (`python -m promptspec.cli`) in a child process, for
    tests whose subject is the process: its exit status, its signals, its start-up."""
    return subprocess.run([sys.executable, "-m", "promptspec.cli", *args], capture_output=True, text=True, cwd=cwd,
                          env=dict(env) if env is not None else subprocess_env(), timeout=timeout)


# ---------------------------------------------------------------------------
# git and terminals


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo.parent)}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env).stdout


def commit(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", message)


def read_available(fd: int) -> bytes:
    """Everything readable on `fd` (a pty's reader end) until it stays quiet for 0.2 s."""
    chunks = []
    while select.select([fd], [], [], 0.2)[0]:
        try:
            data = os.read(fd, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks)


def search_sections(markup: str) -> list[tuple]:
    """What Material's search index is made of: each section's tag, id,
    title and text as its parser leaves them (create_entry_for_section reads
    these), or [("error", message)] where that parser gives up on an end
    tag it cannot pair."""
    from material.plugins.search.plugin import Parser

    parser = Parser()
    try:
        parser.feed(markup)
        parser.close()
    except ValueError as exc:
        return [("error", str(exc))]
    return [(s.el.tag, s.id, s.title, s.text, s.is_excluded()) for s in parser.data]
