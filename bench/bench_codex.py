#!/usr/bin/env python3
"""How long `import-codex --cli` and `verify --cli` of a release take, cold and warm.

    python3 bench/bench_codex.py 0.125.0                       # a release under $PROMPTSPEC_CODEX_CACHE (or a folder)
    python3 bench/bench_codex.py 0.125.0 --before /tmp/old     # the same steps from another checkout first, back to back
    python3 bench/bench_codex.py 0.125.0 0.171.0 --repeat 2 --out codex-times.json
    python3 bench/bench.py --codex 0.125.0 --sizes none        # the same, from bench.py

Per release, each step a child process of its own (its CPU time and peak
memory from wait4, so Codex's processes count too), in one fresh capture cache
(`PROMPTSPEC_CACHE_DIR` in the work folder, never ~/.cache):

* **cold import**: `import-codex --cli` (full matrix) with an empty cache;
* **cold verify**: `verify --cli` of that spec (full matrix, the default two
  threads): what the import captured is not captured again;
* **warm import** / **warm verify**: both again, with the cache filled.

It checks what must not change: the warm import writes the same spec tree as
the cold one (every file, byte for byte), and the warm report is the cold one.
With `--before DIR` (a checkout, e.g. `git worktree add /tmp/old HEAD~5`) the
import and verify of that checkout run first, and their spec tree and report
are compared with this one's too.  The machine's load average is printed with
every step: on a shared machine compare the CPU seconds too, and repeat
(`--repeat N` keeps the run with the least wall time).  A script that prints
figures, not a test.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
VOLATILE_REPORT = ("spec", "date")
"""Report fields that name the run, not the result (the spec's folder, the day); the
scratch folder's name in a diff text is written as SCRATCH too."""


def install(release: str) -> Path:
    given = Path(release).expanduser()
    if given.exists():
        return given
    root = Path(os.environ.get("PROMPTSPEC_CODEX_CACHE") or REPO / ".ci" / "cache" / "codex")
    folder = root / release
    if not any(folder.glob("node_modules/@openai/codex-*/vendor/*/*/codex")):
        subprocess.run(["npm", "install", "--prefix", str(folder), "--no-audit", "--no-fund", "--loglevel=error",
                        f"@openai/codex@{release}"], check=True, timeout=900)
    return folder


def step(tree: Path, args: list[str], cache: Path) -> dict:
    """One promptspec child: wall and CPU seconds (itself and every child it waited for), peak MiB, load before."""
    env = {**os.environ, "PYTHONPATH": str(tree / "generator"), "PROMPTSPEC_CACHE_DIR": str(cache)}
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "promptspec", "-v", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, env=env)
    assert proc.stdout is not None
    output = proc.stdout.read().decode("utf-8", "replace")
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    note = next((ln.split("captures: ", 1)[1] for ln in output.splitlines() if "captures: " in ln), "")
    return {"status": os.waitstatus_to_exitcode(status), "wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
            "peak_mib": usage.ru_maxrss / 1024, "load": load, "captures": note, "last": (output.strip().splitlines() or [""])[-1]}


def tree_digest(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(folder)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


SCRATCH = re.compile(r"/promptspec-codex-[A-Za-z0-9_]{8}")
"""The scratch world's random folder name, which a thread's diff in a report shows."""


def report_of(path: Path) -> str:
    data = json.loads(path.read_text(encoding="utf-8"))
    return SCRATCH.sub("/promptspec-codex-SCRATCH", json.dumps({k: v for k, v in data.items() if k not in VOLATILE_REPORT},
                                                                sort_keys=True))


def run_release(cli: Path, tree: Path, work: Path, warm: bool = True, extra: tuple[str, ...] = ()) -> dict:
    """Cold (and warm) import + verify of one release with `tree`'s promptspec, in a fresh cache."""
    cache, spec = work / "cache", work / "spec"
    out: dict = {"steps": {}}
    rounds = ("cold", "warm") if warm else ("cold",)
    for n, name in enumerate(rounds):
        imp = step(tree, ["import-codex", "--cli", str(cli), "--out", str(spec), "--force", *extra], cache)
        if imp["status"] != 0:
            out["steps"][f"{name} import"] = imp
            out["error"] = f"{name} import: {imp['last'][:200]}"
            return out
        out.setdefault("trees", []).append(tree_digest(spec))
        report = work / f"report-{n}.json"
        ver = step(tree, ["verify", "--cli", str(cli), "--spec", str(spec), "--out", str(report)], cache)
        out["steps"][f"{name} import"], out["steps"][f"{name} verify"] = imp, ver
        if not report.is_file():
            out["error"] = f"{name} verify: {ver['last'][:200]}"
            return out
        out.setdefault("reports", []).append(report_of(report))
        data = json.loads(report.read_text(encoding="utf-8"))
        out["variants"], out["identical"] = data.get("compared"), data.get("identical")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("releases", nargs="+", help="releases (installed under $PROMPTSPEC_CODEX_CACHE) or install folders")
    ap.add_argument("--before", type=Path, default=None, metavar="DIR", help="also time this checkout's import and verify first")
    ap.add_argument("--repeat", type=int, default=1, metavar="N", help="runs per release; the one with the least wall time is kept")
    ap.add_argument("--work", type=Path, default=None, help="keep specs, reports and caches here (default: a temp folder, removed)")
    ap.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    args = ap.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-codex-"))
    results, failed = [], False
    try:
        for release in args.releases:
            cli = install(release)
            sides = ([("before", args.before, False)] if args.before else []) + [("after", REPO, True)]
            for side, tree, warm in sides:
                runs = []
                for r in range(args.repeat):
                    folder = work / Path(release).name / f"{side}-{r}"
                    shutil.rmtree(folder, ignore_errors=True)
                    folder.mkdir(parents=True)
                    runs.append(run_release(cli, tree, folder, warm))
                best = min(runs, key=lambda x: sum(s["wall"] for s in x["steps"].values()))
                results.append({"release": Path(release).name, "side": side, **best})
                _print(results[-1])
            same = _checks([r for r in results if r["release"] == Path(release).name])
            failed |= not all(ok for _, ok in same)
            for what, ok in same:
                print(f"  {'same' if ok else 'DIFFERENT'}: {what}", flush=True)
        if args.out:
            args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        _table(results)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    return 1 if failed or any("error" in r for r in results) else 0


def _checks(rows: list[dict]) -> list[tuple[str, bool]]:
    after = next((r for r in rows if r["side"] == "after"), None)
    if after is None or "error" in after:
        return []
    out = [("warm import's spec tree and the cold one's", len(set(after.get("trees", []))) == 1),
           ("warm verify's report and the cold one's", len(set(after.get("reports", []))) == 1)]
    before = next((r for r in rows if r["side"] == "before" and "error" not in r), None)
    if before is not None:
        out += [("spec tree: before and after", before["trees"][0] == after["trees"][0]),
                ("verify report: before and after", before["reports"][0] == after["reports"][0])]
    return out


def _print(row: dict) -> None:
    print(f"{row['release']} ({row['side']}): {row.get('identical')}/{row.get('variants')} identical"
          + (f"; ERROR {row['error']}" if "error" in row else ""), flush=True)
    for name, s in row["steps"].items():
        print(f"  {name:12} {s['wall']:7.1f} s wall {s['cpu']:7.1f} s CPU {s['peak_mib']:6.0f} MiB  load {s['load']:5.2f}"
              f"  {s['captures']}", flush=True)


def _table(results: list[dict]) -> None:
    print()
    print("| release | side | cold import s | cold verify s | warm import s | warm verify s | CPU s (cold import+verify) | load |")
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        s = r["steps"]

        def wall(name: str) -> str:
            return f"{s[name]['wall']:.1f}" if name in s else ""

        cpu = sum(s[n]["cpu"] for n in ("cold import", "cold verify") if n in s)
        load = max((x["load"] for x in s.values()), default=0.0)
        print(f"| {r['release']} | {r['side']} | {wall('cold import')} | {wall('cold verify')} | {wall('warm import')}"
              f" | {wall('warm verify')} | {cpu:.1f} | {load:.1f} |")


if __name__ == "__main__":
    sys.exit(main())
