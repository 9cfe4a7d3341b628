#!/usr/bin/env python3
"""Import a released Codex CLI and verify the whole matrix against it; print the figures.

    python3 bench/bench_verify.py ~/codex/0.125.0 [more installs...] [--sample N]

Each argument is an `npm install --prefix DIR @openai/codex@VERSION` folder (or
the binary).  For each release: variants in the matrix, how many are
byte-identical (instructions and input; see `not modelled`), import seconds,
verify seconds.  The spec is written to a temporary folder and removed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generator"))

from promptspec.importers.codex_cli import import_cli  # noqa: E402
from promptspec.verify import verify  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("installs", nargs="+", type=Path)
    ap.add_argument("--sample", type=int, default=None, help="verify N sampled variants (default: all)")
    args = ap.parse_args()
    rows = []
    for install in args.installs:
        with tempfile.TemporaryDirectory(prefix="bench-verify-") as tmp:
            t0 = time.perf_counter()
            spec, stats = import_cli(install, Path(tmp) / "spec")
            t_import = time.perf_counter() - t0
            t0 = time.perf_counter()
            report = verify(install, spec, sample=args.sample)
            t_verify = time.perf_counter() - t0
        rows.append((report.release, report.compared, report.identical, t_import, t_verify, ", ".join(report.not_modelled)))
        print(f"{report.release}: {report.identical}/{report.compared} identical, import {t_import:.1f} s, verify {t_verify:.1f} s",
              flush=True)
    print()
    print("| release | variants | identical | import s | verify s | not modelled |")
    print("|---|---|---|---|---|---|")
    for release, n, same, ti, tv, nm in rows:
        print(f"| {release} | {n} | {same} ({100 * same / n:.0f} %) | {ti:.1f} | {tv:.1f} | {nm} |")
    return 0 if all(r[1] == r[2] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
