#!/usr/bin/env python3
"""A history of released Codex CLIs: import each release, then `history` over them.

    python bench/history_codex.py --out /tmp/codex-history                 # 0.125.0 0.150.0 0.169.0
    python bench/history_codex.py --releases 0.125.0,0.150.0,0.169.0,0.171.0 --format markdown --out DIR

Each release is a `npm install --prefix` folder of `@openai/codex@<version>`:
`$PROMPTSPEC_CODEX_CACHE/<version>`, else `.ci/cache/codex/<version>` in the
repository (where the tests install releases from npm, tests/codex_release.py).
For each, `promptspec import-codex --cli FOLDER --out OUT/<version> --force`
writes a spec (the Codex run is offline, in a scratch HOME); then

    promptspec history dir:OUT/0.125.0,label=0.125.0 dir:OUT/0.150.0,label=0.150.0 ...

prints the history (to stdout, or OUT/history.<ext> with --save).  Import and
history times are printed on stderr.  `--imported DIR` runs the history over
specs imported earlier (DIR/<version>) without running Codex.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

DEFAULT_RELEASES = ("0.125.0", "0.150.0", "0.169.0")
EXT = {"markdown": "md", "json": "json", "text": "txt"}


REPO = Path(__file__).resolve().parent.parent


def places(version: str) -> list[Path]:
    """Where a release may be installed: as tests/codex_release.py installs them."""
    cache = os.environ.get("PROMPTSPEC_CODEX_CACHE")
    return [Path(cache) / version if cache else REPO / ".ci" / "cache" / "codex" / version]


def has_cli_import(py: list[str]) -> bool:
    proc = subprocess.run([*py, "import-codex", "--help"], capture_output=True, text=True)
    return proc.returncode == 0 and "--cli" in proc.stdout


def installed(version: str) -> Path | None:
    return next((f for f in places(version) if any(f.glob("node_modules/@openai/codex-*/vendor/*/*/codex"))), None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--releases", default=",".join(DEFAULT_RELEASES), help="comma-separated versions, in release order")
    parser.add_argument("--out", type=Path, required=True, help="folder for the imported specs (OUT/<version>)")
    parser.add_argument("--format", choices=tuple(EXT), default="text")
    parser.add_argument("--save", action="store_true", help="write OUT/history.<ext> instead of printing")
    parser.add_argument("--reuse", action="store_true", help="keep an already imported OUT/<version> instead of importing again")
    parser.add_argument("--model", action="append", default=None, metavar="SLUG",
                        help="import only this model (repeatable; passed to import-codex --model): a much shorter run")
    parser.add_argument("--only", action="append", default=None, metavar="AXIS=VALUES",
                        help="import only these values of an axis (repeatable; passed to import-codex --only)")
    parser.add_argument("--imported", type=Path, default=None, metavar="DIR",
                        help="specs imported earlier, as DIR/<version>: run history over them (no Codex needed; OUT is not used)")
    args = parser.parse_args(argv)
    py = [sys.executable, "-m", "promptspec.cli"]
    versions = [v.strip() for v in args.releases.split(",") if v.strip()]
    if args.imported is not None:
        absent = [v for v in versions if not (args.imported / v / "spec.yaml").is_file()]
        if absent:
            print(f"history_codex: no imported spec for {', '.join(absent)} under {args.imported}", file=sys.stderr)
            return 2
        return _history(py, [f"dir:{args.imported / v},label={v}" for v in versions], args)
    if not has_cli_import(py):
        print("history_codex: this promptspec has no `import-codex --cli`", file=sys.stderr)
        return 2
    missing = [v for v in versions if installed(v) is None]
    if missing:
        print(f"history_codex: Codex {', '.join(missing)} not installed (looked in {', '.join(str(p) for p in places(missing[0]))}; "
              f"npm install --prefix {places(missing[0])[-1]} @openai/codex@{missing[0]})", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    sides = []
    for v in versions:
        dest = args.out / v
        if not (args.reuse and (dest / "spec.yaml").is_file()):
            t = time.perf_counter()
            models = [x for m in (args.model or ()) for x in ("--model", m)]
            models += [x for o in (args.only or ()) for x in ("--only", o)]
            proc = subprocess.run([*py, "import-codex", "--cli", str(installed(v)), "--out", str(dest), "--force", *models],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                sys.stderr.write(proc.stderr)
                return proc.returncode
            print(f"imported Codex {v} in {time.perf_counter() - t:.1f} s: {proc.stdout.strip().splitlines()[0] if proc.stdout.strip() else ''}",
                  file=sys.stderr)
        sides.append(f"dir:{dest},label={v}")
    return _history(py, sides, args)


def _history(py: list[str], sides: list[str], args: argparse.Namespace) -> int:
    t = time.perf_counter()
    proc = subprocess.run([*py, "history", *sides, "--format", args.format], capture_output=True, text=True)
    took = time.perf_counter() - t
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        return proc.returncode
    if args.save:
        args.out.mkdir(parents=True, exist_ok=True)
        target = args.out / f"history.{EXT[args.format]}"
        target.write_text(proc.stdout, encoding="utf-8")
        print(f"wrote {target}", file=sys.stderr)
    else:
        sys.stdout.write(proc.stdout)
    print(f"history of {len(sides)} Codex releases in {took:.2f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
