#!/usr/bin/env python3
"""Benchmark promptspec's TokenCounter on a prompt-variant-shaped workload.

Prompt variants (model × personality × mode …) are mostly the same sections
in different combinations, plus a little unique text each.  This script
builds such a workload from real prompt files, then times:

* cold: a TokenCounter with an empty, fresh SQLite cache;
* warm: a new TokenCounter on the same cache (what a second build sees);
* raw:  plain ``encode_ordinary`` over exactly the distinct texts, serially,

and prints how the cold run compares with raw tiktoken on the same text, so
the cost of hashing, deduplication and persistence is visible.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "generator"))  # runnable from a checkout without installing

from promptspec.measure import KNOWN_ENCODINGS, TokenCounter, get_encoding  # noqa: E402

FIXTURE = REPO.parent / "shared" / "fixtures" / "codex"


def default_source() -> Path:
    """The repo's own templates if there are any, else the Codex fixture."""
    for candidate in (REPO / "templates", FIXTURE):
        if candidate.is_dir() and any(_source_files(candidate)):
            return candidate
    return REPO / "templates"


def _source_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.suffix in (".md", ".json") and p.is_file())


def build_workload(root: Path, variants: int, seed: int, whole: bool) -> list[str]:
    """Return one text per item to count, in submission order (with repeats).

    Each variant is a random choice of shared sections plus two unique ones
    (a header naming the variant and a per-variant environment block), which
    is how assembled agent prompts differ.  With ``whole`` the assembled
    variant is counted too, as a report of per-variant totals would.
    """
    sections = [p.read_text(encoding="utf-8", errors="replace") for p in _source_files(root)]
    if not sections:
        raise SystemExit(f"no .md or .json files under {root}")
    rng = random.Random(seed)
    items: list[str] = []
    for v in range(variants):
        chosen = rng.sample(sections, k=max(1, min(len(sections), rng.randint(4, 10))))
        header = f"# Variant {v}: model m{v % 7}, personality p{v % 3}, mode {v % 4}\n"
        env = f"<environment_context>\n  <cwd>/work/project-{v}</cwd>\n  <shell>bash</shell>\n</environment_context>\n"
        parts = [header, *chosen, env]
        items.extend(parts)
        if whole:
            items.append("\n".join(parts))
    return items


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", nargs="?", type=Path, default=None,
                        help="directory of .md/.json prompt files (default: templates/ or the Codex fixture)")
    parser.add_argument("-n", "--variants", type=int, default=500, help="number of variants (default 500)")
    parser.add_argument("-e", "--encoding", choices=KNOWN_ENCODINGS, default="o200k_base")
    parser.add_argument("-w", "--workers", type=int, default=None, help="counting threads (default min(2, CPUs))")
    parser.add_argument("-r", "--repeat", type=int, default=3, help="report the best of this many runs (default 3)")
    parser.add_argument("--seed", type=int, default=1, help="workload seed (default 1)")
    parser.add_argument("--sections-only", action="store_true",
                        help="count sections only, not each assembled variant as a whole")
    args = parser.parse_args(argv)

    source = args.source or default_source()
    items = build_workload(source, args.variants, args.seed, whole=not args.sections_only)
    pairs = [(args.encoding, text) for text in items]
    distinct = list(dict.fromkeys(items))
    distinct_mb = sum(len(t.encode("utf-8")) for t in distinct) / 1e6

    t0 = time.perf_counter()
    enc = get_encoding(args.encoding)
    build_s = time.perf_counter() - t0

    # Best of --repeat for each phase: the box may be shared, and the minimum
    # is the least noisy estimate of what the code itself costs.
    raw_s = cold_s = warm_s = float("inf")
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        raw_tokens = sum(len(enc.encode_ordinary(t)) for t in distinct)
        raw_s = min(raw_s, time.perf_counter() - t0)

        with tempfile.TemporaryDirectory(prefix="promptspec-bench-") as cache:
            cold = TokenCounter(Path(cache), workers=args.workers)
            t0 = time.perf_counter()
            cold_counts = cold.count_many(pairs)
            cold_s = min(cold_s, time.perf_counter() - t0)

            warm = TokenCounter(Path(cache), workers=args.workers)
            t0 = time.perf_counter()
            warm_counts = warm.count_many(pairs)
            warm_s = min(warm_s, time.perf_counter() - t0)

    if cold_counts != warm_counts or cold.stats.tokens_counted != raw_tokens:
        print("MISMATCH between cached, uncached and raw counts", file=sys.stderr)
        return 1

    submitted_tokens = sum(cold_counts[p] for p in pairs)
    print(f"source             {source}")
    print(f"encoding           {args.encoding} (built in {build_s:.2f} s, once per process)")
    print(f"workers            {cold.workers} (best of {args.repeat} runs)")
    print(f"variants           {args.variants}")
    print(f"items submitted    {len(pairs)}  ({submitted_tokens:,} tokens if counted naively)")
    print(f"distinct sections  {len(distinct)}  ({distinct_mb:.2f} MB)")
    print(f"tokens counted     {cold.stats.tokens_counted:,}")
    print(f"cold cache         {cold_s * 1e3:8.1f} ms  counted {cold.stats.counted}, hits {cold.stats.cache_hits}")
    print(f"warm cache         {warm_s * 1e3:8.1f} ms  counted {warm.stats.counted}, hits {warm.stats.cache_hits}")
    print(f"raw encode_ordinary{raw_s * 1e3:8.1f} ms  on the distinct text ({distinct_mb / raw_s:.1f} MB/s)")
    print(f"cold / raw         {cold_s / raw_s:8.2f}x   warm / raw {warm_s / raw_s:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
