#!/usr/bin/env python3
"""Import and verify (full matrix) every released Codex CLI from 0.125.0 on; one table.

    nice -n 10 python3 bench/sweep.py                          # every release on npm from 0.125.0
    python3 bench/sweep.py --releases 0.153.0,0.156.0 --table sweep.md
    python3 bench/sweep.py --prereleases --later-turns 2      # alphas too (0.162.0-alpha.15 ...)

For each release: `npm install --prefix CACHE/<release> @openai/codex@<release>`
unless already there (CACHE: `$PROMPTSPEC_CODEX_CACHE`, else
~/.cache/promptspec/codex), then `promptspec import-codex --cli` into a
temporary folder and `promptspec verify --cli` over the whole matrix, each in a
child process so its peak memory (max RSS, from wait4) is its own.  A row is
written as soon as its release is done (to stdout, and to --table), so a sweep
stopped half-way keeps what it measured.  Not part of the test suite: a full
sweep is hours of Codex runs.

Columns: release, variants (compared), identical, import s, verify s, peak MiB
(the larger of the two steps), and the first line of an error when a step failed.
A release npm publishes without a binary for this machine (0.142.1 and 0.153.1
have no platform packages at all) gets a row of "-" saying so, and does not
count as a failure: there is nothing any tool could run.
With --later-turns the import also learns the release's later turns and verify
runs its standard threads (`--threads N` variants): two more columns, threads
compared and threads identical, every request of each thread byte for byte.
The import takes the whole catalog, so a release with models of two
compaction families has both, and verify starts its threads from one variant
of each family first (verify/run.py `thread_starts`): with N = 2 both
families' own later turns and the switch across families in each direction
are compared.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIRST = (0, 125, 0)
STABLE = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")
PRERELEASE = re.compile(r"^(\d+)\.(\d+)\.(\d+)-(alpha|beta|rc)\.(\d+)$")
"""0.162.0-alpha.15; not 0.162.0-linux-x64, which npm lists too but is a platform package of a release."""
HEADER = "| release | variants | identical | import s | verify s | peak MiB | note |\n|---|---|---|---|---|---|---|"
THREAD_HEADER = ("| release | variants | identical | threads | threads identical | import s | verify s | peak MiB | note |\n"
                 "|---|---|---|---|---|---|---|---|---|")


def cache_root() -> Path:
    given = os.environ.get("PROMPTSPEC_CODEX_CACHE")
    return Path(given) if given else Path.home() / ".cache" / "promptspec" / "codex"


def npm_releases(prereleases: bool = False) -> list[str]:
    """Stable releases on npm from 0.125.0 on (and their alphas, betas and
    release candidates with `prereleases`), oldest first."""
    out = subprocess.run(["npm", "view", "@openai/codex", "versions", "--json"], capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        sys.exit(f"sweep: npm view failed: {(out.stderr.strip().splitlines() or ['no message'])[-1]}")
    return releases_from(json.loads(out.stdout), prereleases)


def releases_from(versions: list[str], prereleases: bool = False) -> list[str]:
    """The versions to sweep, in semver order (a prerelease before its release)."""
    kinds = ("alpha", "beta", "rc", "")  # a release sorts after its prereleases

    def order(v: str) -> tuple[int, ...] | None:
        m = STABLE.match(v) or (PRERELEASE.match(v) if prereleases else None)
        if m is None:
            return None
        major, minor, patch = map(int, m.groups()[:3])
        kind, n = m.groups()[3:] or ("", "0")  # a stable release has neither
        return major, minor, patch, kinds.index(kind), int(n)
    keyed = [(k, v) for v in versions if (k := order(v)) is not None and k[:3] >= FIRST]
    return [v for _, v in sorted(keyed)]


def install(release: str) -> Path:
    folder = cache_root() / release
    if not any(folder.glob("node_modules/@openai/codex-*/vendor/*/*/codex")):
        done = subprocess.run(["npm", "install", "--prefix", str(folder), "--no-audit", "--no-fund", "--loglevel=error",
                               f"@openai/codex@{release}"], capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            raise RuntimeError(f"npm install failed: {(done.stderr.strip().splitlines() or ['no message'])[-1][:200]}")
        if not any(folder.glob("node_modules/@openai/codex-*/vendor/*/*/codex")):
            raise Unrunnable(f"npm has no binary of this release for this machine: its optional dependency "
                             f"@openai/codex@{release}-{PLATFORM} is not published (nothing to import)")
    return folder


class Unrunnable(RuntimeError):
    """A release npm publishes without a binary for this machine: a row, not a failure of promptspec."""


PLATFORM = {"x86_64": "linux-x64", "aarch64": "linux-arm64"}.get(os.uname().machine, os.uname().machine)


def timed(args: list[str]) -> tuple[int, float, float, str]:
    """(exit status, seconds, peak MiB, last line of output) of one promptspec child."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "generator")}
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "promptspec", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    assert proc.stdout is not None
    output = proc.stdout.read().decode("utf-8", "replace")
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - t0
    last = (output.strip().splitlines() or [""])[-1]
    return proc.returncode, seconds, usage.ru_maxrss / 1024, last


def sweep_one(release: str, timeout: float, keep: Path | None = None, threads: int | None = None) -> str:
    """One table row; `threads` set: later turns learned at import and that many variants' threads verified."""
    try:
        cli = install(release)
    except Unrunnable as exc:
        return f"| {release} |" + " - |" * (7 if threads is not None else 5) + f" {exc} |"
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        return f"| {release} |" + " |" * (7 if threads is not None else 5) + f" {exc} |"
    with tempfile.TemporaryDirectory(prefix="sweep-") as tmp:
        spec, report = (keep / release if keep else Path(tmp) / "spec"), Path(tmp) / "report.json"
        if keep:
            keep.mkdir(parents=True, exist_ok=True)
        later = ["--later-turns"] if threads is not None else []
        rc, t_import, m_import, last = timed(["import-codex", "--cli", str(cli), "--out", str(spec), "--timeout", str(timeout),
                                              "--force", *later])
        gap = " | |" if threads is not None else ""
        if rc != 0:
            return f"| {release} | | |{gap} {t_import:.0f} | | {m_import:.0f} | import: {last[:160]} |"
        rc, t_verify, m_verify, last = timed(["verify", "--cli", str(cli), "--spec", str(spec), "--out", str(report),
                                              "--timeout", str(timeout), *(["--threads", str(threads)] if threads is not None else [])])
        data = json.loads(report.read_text()) if report.is_file() else {}
    n, same = data.get("compared", ""), data.get("identical", "")
    counts = ""
    if threads is not None:
        ran = data.get("threads", [])
        counts = f" {len(ran)} | {sum(bool(t.get('identical')) for t in ran)} |"
    note = "" if rc == 0 else f"verify: {last[:160]}"
    return f"| {release} | {n} | {same} |{counts} {t_import:.0f} | {t_verify:.0f} | {max(m_import, m_verify):.0f} | {note} |"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--releases", help="comma-separated releases (default: every stable release on npm from 0.125.0)")
    ap.add_argument("--prereleases", action="store_true",
                    help="with the default list: also the alphas, betas and release candidates npm publishes")
    ap.add_argument("--table", type=Path, help="also write the table to this Markdown file (row by row)")
    ap.add_argument("--keep", type=Path, help="keep each imported spec as KEEP/<release> (default: removed)")
    ap.add_argument("--timeout", type=float, default=60.0, help="the longest one Codex step may take (default 60)")
    ap.add_argument("--later-turns", type=int, nargs="?", const=2, default=None, metavar="N",
                    help="also learn later turns at import and verify the standard threads of N variants (default 2)")
    args = ap.parse_args()
    header = THREAD_HEADER if args.later_turns is not None else HEADER
    releases = [r.strip() for r in args.releases.split(",") if r.strip()] if args.releases else npm_releases(args.prereleases)
    print(header, flush=True)
    if args.table:
        args.table.write_text(header + "\n", encoding="utf-8")
    failed = 0
    for release in releases:
        row = sweep_one(release, args.timeout, args.keep, args.later_turns)
        cells = [c.strip() for c in row.strip("|").split("|")]
        threads_ok = args.later_turns is None or (cells[3] and cells[3] == cells[4])
        failed += cells[1] != "-" and not (cells[1] and cells[1] == cells[2] and threads_ok and not cells[-1])
        print(row, flush=True)
        if args.table:
            with args.table.open("a", encoding="utf-8") as f:
                f.write(row + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
