#!/usr/bin/env python3
"""How long `promptspec history` takes over ten releases of a Codex-sized matrix.

    python bench/bench_history.py                       # 2,400 variants, 10 releases
    python bench/bench_history.py --variants 960 --releases 5 --work /tmp/bh

It writes the synthetic spec of bench/bench.py (the issue's 10 x 4 x 4 x 3 x 5
shape: models x personalities x modes x sandbox modes x approval policies)
into a scratch git repository and commits ten releases, each a realistic
edit: a fragment text, a model's base instructions, a mode's text, a new
approval policy, a section moved into another message.  Then, each in a
child process (`python -m promptspec.cli history ... --format json`):

* **cold**: an empty token cache -- every distinct text of every release is
  tokenized;
* **warm**: the same command again -- counts come from the token cache, so
  what is left is git, assembly and the comparison;
* **locks**: the same series as ten `lock:` files (written beforehand with
  `promptspec lock` at each tag): no assembly, no counting.

Figures are wall times of the whole command (min of --repeat runs for warm
and locks), printed and, with --out, written as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench  # noqa: E402  (make_spec: the synthetic spec of the scale benchmark)

ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid", "GIT_COMMITTER_NAME": "bench",
       "GIT_COMMITTER_EMAIL": "bench@example.invalid", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"}


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env={**os.environ, **ENV})


def edit(spec: Path, n: int) -> str:
    """Release n's change (n >= 1); returns what it did."""
    kind = n % 5
    if kind == 1:
        path = spec / "fragments" / "realtime.md"
        path.write_text(path.read_text(encoding="utf-8").rstrip("\n") + f"\nRelease {n}: keep voice replies short.\n", encoding="utf-8")
        return "fragment realtime edited"
    if kind == 2:
        data = json.loads((spec / "models.json").read_text(encoding="utf-8"))
        model = data["models"][n % len(data["models"])]
        extra = f"\nRelease {n}: report what you verified.\n"
        if model.get("base_instructions"):
            model["base_instructions"] += extra
        if (model.get("model_messages") or {}).get("instructions_template"):
            model["model_messages"]["instructions_template"] += extra
        (spec / "models.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        return f"base instructions of {model['slug']} edited"
    if kind == 3:
        path = spec / "modes" / "plan.md"
        path.write_text(path.read_text(encoding="utf-8").rstrip("\n") + f"\n\nRelease {n}: list the risks of each step.\n", encoding="utf-8")
        return "mode plan edited"
    if kind == 4:
        import yaml

        data = yaml.safe_load((spec / "spec.yaml").read_text(encoding="utf-8"))
        name = f"policy-r{n}"
        (spec / "permissions" / "approval" / f"{name}.md").write_text(f"Approvals: `{name}`. Ask before anything irreversible.\n", encoding="utf-8")
        data["axes"]["approval_policy"] = [*data["axes"]["approval_policy"][1:], name]  # one value gone, one added
        (spec / "spec.yaml").write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
        return f"approval policy {name} added, {data['axes']['approval_policy'][0]} kept"
    path = spec / "fragments" / "open_files.yaml"
    text = path.read_text(encoding="utf-8")
    if "role: user" in text:
        path.write_text(text.replace("role: user\nslot: user_extensions", "role: developer\nslot: developer_extensions"), encoding="utf-8")
        return "open_files moved into the developer message"
    path.write_text(text.replace("role: developer\nslot: developer_extensions", "role: user\nslot: user_extensions"), encoding="utf-8")
    return "open_files moved back into the user message"


def make_series(work: Path, variants: int, releases: int) -> tuple[Path, list[str], dict]:
    repo = work / "repo"
    if repo.exists():
        shutil.rmtree(repo)
    repo.mkdir(parents=True)
    git(repo, "init", "-q")
    spec = repo / "templates"
    shape = bench.make_spec(spec, variants)
    (spec / "prompts.lock.json").unlink(missing_ok=True)
    tags, notes = [], {}
    for n in range(releases):
        notes[f"r{n}"] = "the synthetic spec" if n == 0 else edit(spec, n)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"release {n}")
        git(repo, "tag", f"r{n}")
        tags.append(f"r{n}")
    return spec, tags, {"shape": shape, "releases": notes}


def run(cmd: list[str], cache: Path) -> tuple[float, str]:
    env = {**os.environ, "PROMPTSPEC_CACHE_DIR": str(cache)}
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    took = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{proc.stderr}")
    return took, proc.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variants", type=int, default=2400)
    parser.add_argument("--releases", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3, help="warm and lock runs: the minimum of this many")
    parser.add_argument("--work", type=Path, default=None, help="keep the repository and caches here")
    parser.add_argument("--out", type=Path, default=None, help="write the figures as JSON")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-history-"))
    work.mkdir(parents=True, exist_ok=True)
    py = [sys.executable, "-m", "promptspec.cli"]
    spec, tags, meta = make_series(work, args.variants, args.releases)
    cache = work / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    cold, out = run([*py, "--cache-dir", str(cache), "history", *tags, "--spec", str(spec), "--format", "json"], cache)
    doc = json.loads(out)
    counts = [r["variants"] for r in doc["releases"]]
    changes = [len(s["changes"]) for s in doc["steps"]]
    warm = min(run([*py, "--cache-dir", str(cache), "history", *tags, "--spec", str(spec), "--format", "json"], cache)[0]
               for _ in range(args.repeat))
    text = min(run([*py, "--cache-dir", str(cache), "history", *tags, "--spec", str(spec), "--format", "markdown"], cache)[0]
               for _ in range(args.repeat))
    locks = []
    lock_dir = work / "locks"
    lock_dir.mkdir(exist_ok=True)
    for tag in tags:
        checkout = work / "checkout" / tag
        shutil.rmtree(checkout, ignore_errors=True)
        checkout.mkdir(parents=True)
        subprocess.run(["git", "-C", str(spec.parent), "archive", tag, "templates"], check=True, stdout=open(checkout / "t.tar", "wb"))
        subprocess.run(["tar", "-xf", "t.tar"], cwd=checkout, check=True)
        lock = lock_dir / f"{tag}.lock.json"
        run([*py, "--cache-dir", str(cache), "lock", "--spec", str(checkout / "templates"), "--lock", str(lock)], cache)
        locks.append(f"lock:{lock},label={tag}")
    from_locks = min(run([*py, "--cache-dir", str(cache), "history", *locks, "--spec", str(spec), "--format", "json"], cache)[0]
                     for _ in range(args.repeat))
    figures = {
        "variants_per_release": counts,
        "changes_per_step": changes,
        "cold_s": round(cold, 2),
        "warm_s": round(warm, 2),
        "warm_markdown_s": round(text, 2),
        "locks_s": round(from_locks, 2),
        **meta,
    }
    print(f"history of {len(tags)} releases, {min(counts):,}-{max(counts):,} variants each "
          f"({meta['shape']['models']} models x 4 personalities x 4 modes x {meta['shape']['sandbox_modes']} sandbox x "
          f"{meta['shape']['approval_policies']} approval), {sum(changes)} grouped changes over {len(changes)} steps")
    print(f"  cold (empty token cache), json:  {cold:6.2f} s")
    print(f"  warm (token cache), json:        {warm:6.2f} s   (min of {args.repeat})")
    print(f"  warm (token cache), markdown:    {text:6.2f} s   (min of {args.repeat})")
    print(f"  from {len(tags)} lock files, json:  {from_locks:6.2f} s   (min of {args.repeat})")
    if args.out:
        args.out.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
