#!/usr/bin/env python3
"""How fast the site is built and reloaded, against MkDocs' own floors.

    python bench/bench.py                                  # 32, 300, 2400 and 10000 variants
    python bench/bench.py --sizes 2400,10000 --models 19   # a fixed model count: is the time per variant flat?
    python bench/bench.py --sizes 960,9600 --axes 3,1      # fixed other axes: linear as the models grow?
    python bench/bench.py --sizes 2400 --repeat 3 --out results.json
    python bench/bench.py --sizes 300 --plugin-option fast_pages=false   # the plugin without its fast path
    python bench/bench.py --sizes 300 --work /tmp/bench    # keep the specs and sites to look at

For each size it writes a synthetic spec grown from the embedded one
(`templates/`): copies of its models with new slugs and slightly different
text, more `sandbox_mode` values and an `approval_policy` axis, each value
with its own text file.  Then, each in a child process of its own (so the
peak memory, ru_maxrss, is that build's alone), it measures:

* the generator: stage timings (load, assemble, count cold and warm, the
  site's pages), its peak memory, and an incremental `pipeline.Session`
  rebuild after editing one fragment;
* **plugin**: `mkdocs build` of a site with the promptspec plugin and a page
  for every variant (`variant_pages: all`), tokens counted from a warm
  cache (a serve session's situation);
* **prose floor**: the same number of pages, at the same paths and of the
  same sizes, as plain Markdown prose, without the plugin -- what MkDocs
  costs for that much text;
* **trivial floor**: the same number of pages, one line each -- what MkDocs
  costs per page whatever the page holds;
* **reload**: `mkdocs serve` with the plugin, one fragment edited, the time
  from the edit until a browser would show it: the livereload long poll a
  served page holds (`/livereload/<epoch>/<id>`, what MkDocs' script in every
  page waits on) answers with a new epoch, and the changed variant page,
  fetched over HTTP as the reloaded browser does, holds the edit -- sizes up
  to `--serve-up-to`; the edit is repeated `--serve-edits` times (default:
  5, at least `--repeat`), the minimum and the median kept, with the serve
  process's CPU seconds per edit (from /proc).  Each edit adds one more word
  than the last, as typing does, so the edited variants' token counts change
  every time, and with them where other variants rank (each variant page
  says where it sits among all of them); `--serve-same-size` makes every
  edit after the first the same size instead (only the edited variants'
  pages change: the figure earlier runs of this script gave).  MkDocs polls for changes
  every 0.5 s, so without the plugin's native watch (`native_watch: false`,
  or a platform without one) an edit waits 0-0.5 s before the rebuild starts; the
  edits are spread evenly over that period (not made at a fixed time after
  the last rebuild, which measures one wait every time), so the minimum is
  the rebuild with the shortest wait and the median a typical one.  Then
  the edited file is written again as many times with the same text: the
  floor (`noop_reload_median_s`), a rebuild that changes no page.  The
  median is reported against the plugin's full build of the same site
  (`reload_vs_build`), and the serve process's peak memory (VmHWM, after
  the first build and all the edits) against that build's peak
  (`serve_rss_vs_build`).  Serve is stopped with SIGINT, so MkDocs removes
  its temp site (in TMPDIR, or `--serve-tmpdir`).

Every figure carries the load average when it was taken and the CPU seconds
(user + system) beside the wall-clock time, since the machine may be shared.

Every MkDocs config takes its theme and Markdown extensions from the
repository's mkdocs.yml (the one the README serves, Mermaid fence included).
Builds are repeated `--repeat` times: the minimum time and the largest peak
are kept.  Timings are wall-clock on whatever else the machine runs: compare
figures from one run.  Token caches live in the work folder, never in
~/.cache.  A script that prints figures, not a test.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "generator"))  # runnable from a checkout without installing

TEMPLATES = REPO / "templates"
SANDBOX_BASE = ("workspace-write", "read-only")
APPROVAL_BASE = ("on-request", "never")
EDITED = Path("fragments") / "realtime.md"  # in the pair_programming variants
POLL_PERIOD = 0.5  # seconds between MkDocs serve's looks for changed files (its livereload PollingObserver)


# ---------------------------------------------------------------------------
# Synthetic specs


def _variant_count(models: list[dict[str, Any]], n_models: int, sandboxes: int, approvals: int) -> int:
    """Variants of the embedded spec's shape: 4 personalities x 4 modes per
    model, minus pair_programming for the legacy model (its exclude rule
    names it exactly, so its copies keep all modes)."""
    legacy = sum(1 for m in models[:n_models] if m["slug"] == "harbor-4-legacy")
    return (n_models * 16 - legacy * 4) * sandboxes * approvals


def plan_size(target: int, models: list[dict[str, Any]], *, fixed_models: int | None = None,
              fixed_axes: tuple[int, int] | None = None) -> tuple[int, int, int, int]:
    """(models, sandbox values, approval values, variants) near `target`.

    Free shape: among shapes within ~2 % of the target, prefer 3 sandbox
    modes x 5 approval policies, then more models (the axis that grows in
    real specs).  `fixed_models`: that many models, the approval axis grows;
    `fixed_axes` (sandbox, approval): those axes, the models grow."""
    best: tuple[Any, ...] | None = None
    model_range = [fixed_models] if fixed_models else range(1, max(4, target // 16 + 2))
    sandbox_range = [fixed_axes[0]] if fixed_axes else range(1, 4)
    approval_range = [fixed_axes[1]] if fixed_axes else range(1, 6 if not fixed_models else max(6, target // 16 + 2))
    for m in model_range:
        for s in sandbox_range:
            for a in approval_range:
                n = _variant_count(models, m, s, a)
                key = (round(abs(n - target) / target, 2), abs(s * a - 15) if not fixed_models else -s, -m)
                if best is None or key < best[0]:
                    best = (key, m, s, a, n)
    assert best is not None
    return best[1], best[2], best[3], best[4]


def make_spec(dest: Path, target: int, *, fixed_models: int | None = None, fixed_axes: tuple[int, int] | None = None) -> dict[str, Any]:
    """Write a spec with about `target` variants to `dest`; return its shape."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(TEMPLATES, dest)
    data = json.loads((dest / "models.json").read_text(encoding="utf-8"))
    originals = data["models"]
    n_models, n_sandbox, n_approval, expected = plan_size(target, originals, fixed_models=fixed_models, fixed_axes=fixed_axes)
    models = []
    for i in range(n_models):
        src = json.loads(json.dumps(originals[i % len(originals)]))
        if i >= len(originals):
            copy = i // len(originals)
            src["slug"] = f"{src['slug']}-c{copy}"
            src["display_name"] = f"{src['display_name']} copy {copy}"
            note = f"\nThis is model copy {copy}; it answers in the style of its family.\n"
            if src.get("base_instructions"):
                src["base_instructions"] += note
            mm = src.get("model_messages")
            if mm and mm.get("instructions_template"):
                mm["instructions_template"] += note
            if src.get("context_window"):
                src["context_window"] += 1000 * copy
                src["max_context_window"] = src["context_window"]
            if src.get("auto_compact_token_limit"):
                src["auto_compact_token_limit"] += 900 * copy
        models.append(src)
    # Fewer models than the embedded spec has: fields the spec's rules name
    # (e.g. use_responses_lite) must still exist on some model.
    for key, value in {k: v for m in originals for k, v in m.items()}.items():
        if all(key not in m for m in models):
            models[0][key] = type(value)()
    data["models"] = models
    (dest / "models.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")

    sandboxes = [f"custom-{k}" if k >= len(SANDBOX_BASE) else SANDBOX_BASE[k] for k in range(n_sandbox)]
    for k, name in enumerate(sandboxes):
        path = dest / "permissions" / "sandbox" / f"{name}.md"
        if not path.exists():
            path.write_text(
                f"Sandbox: `{name}`. You may read any file; writes are limited to the folders policy {k} names. "
                "Network access is {{ network_access }}.\n",
                encoding="utf-8",
            )
    approvals = [f"policy-{k}" if k >= len(APPROVAL_BASE) else APPROVAL_BASE[k] for k in range(n_approval)]
    for k, name in enumerate(approvals):
        path = dest / "permissions" / "approval" / f"{name}.md"
        if path.exists():
            continue
        path.write_text(
            f"Approvals: `{name}`. Ask before commands in risk class {k} or above, "
            "and explain in one sentence why the command is needed.\n",
            encoding="utf-8",
        )
    spec = yaml.safe_load((dest / "spec.yaml").read_text(encoding="utf-8"))
    spec["axes"] = {**(spec.get("axes") or {}), "sandbox_mode": sandboxes, "approval_policy": approvals}
    (dest / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False, allow_unicode=True), encoding="utf-8")
    runnable = _runnable(dest)
    if runnable != spec.get("conversations"):
        spec["conversations"] = runnable
        (dest / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return {"models": n_models, "sandbox_modes": n_sandbox, "approval_policies": n_approval, "expected_variants": expected}


def _runnable(dest: Path) -> dict[str, str]:
    """The example's conversations the sized spec can run, by the spec's own
    check of a script (check_script): one that switches to a model, sandbox or
    approval value the size left out is a spec error (the build says so in one
    line), not part of the benchmark."""
    from promptspec.errors import SpecError
    from promptspec.spec.readers.load import load_spec
    from promptspec.spec.readers.scripts import check_script, read_script

    spec = load_spec(dest)
    kept = {}
    for name, ref in spec.conversations:
        try:
            check_script(spec, read_script(spec.fs.resolve(ref), ref), {})
        except SpecError:
            continue
        kept[name] = ref
    return kept


# ---------------------------------------------------------------------------
# Child processes


def run_child(cmd: list[str], *, env: dict[str, str] | None = None, timeout: float | None = None) -> dict[str, Any]:
    """Run `cmd`; its last stdout line is its JSON result."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return {"error": f"timed out after {timeout:.0f} s"}
    if proc.returncode != 0:
        return {"error": (err or out).strip().splitlines()[-5:]}
    data = json.loads(out.strip().splitlines()[-1])
    data["wall_s"] = round(time.perf_counter() - started, 2)
    return data


def _child_env(cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PROMPTSPEC_CACHE_DIR"] = str(cache)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "generator"), env.get("PYTHONPATH", "")]))
    env.pop("CI", None)  # no progress bars either way: stderr is a pipe
    return env


def _own_peak_mib() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _own_cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return round(r.ru_utime + r.ru_stime, 2)


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def _fresh_docs(folder: Path, files: dict[str, str | bytes]) -> Path:
    """A new docs folder holding a stub index.md and `files` (path -> text or bytes)."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "index.md").write_text("# Bench\n\nSynthetic spec.\n", encoding="utf-8")
    for path, content in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return folder


def filler(size: int, title: str) -> str:
    """Plain Markdown of `size` bytes: a heading and paragraphs of prose."""
    words = "prompt section token budget model variant sandbox approval message developer user".split()
    head = f"# {title}\n\n"
    out, n = [head], len(head)
    i = 0
    while n < size:
        chunk = " ".join(words[(i + k) % len(words)] for k in range(12)) + (".\n\n" if i % 5 == 4 else ". ")
        out.append(chunk)
        n += len(chunk)
        i += 1
    return "".join(out).encode("utf-8")[:size].decode("utf-8", "ignore")


def child_generator(spec: Path, cache: Path, work: Path) -> dict[str, Any]:
    """Generator figures for one spec; writes the floors' docs folders."""
    from promptspec import pipeline
    from promptspec.measure import TokenCounter, measure_all
    from promptspec.site.build import build_site

    out: dict[str, Any] = {}
    t = time.perf_counter()
    result = pipeline.run(spec, counter=TokenCounter(cache))
    stages = {k: round(v, 3) for k, v in result.timings.items()}
    stages["load+assemble+count"] = round(time.perf_counter() - t, 3)
    t = time.perf_counter()
    measure_all(result.spec, result.requests, TokenCounter(cache))  # a new counter on the warm disk cache
    stages["count_warm"] = round(time.perf_counter() - t, 3)
    out["variants"] = len(result.variants)
    out["distinct_sections"] = len({s.text for r in result.requests for _, _, s in r.sections})

    t = time.perf_counter()
    site = build_site(result, prefix="prompts", links="dir", variant_pages="all")
    stages["site_pages"] = round(time.perf_counter() - t, 3)
    sizes = {path: len(text.encode("utf-8")) for path, text in site.pages.items()}
    del site
    out["site_pages"] = len(sizes)
    out["site_page_bytes"] = sum(sizes.values())
    out["generator_s"] = stages
    out["peak_rss_mib"] = _own_peak_mib()

    # The floors: the same page paths, as prose of the same sizes / one line each.
    ordered = sorted(sizes.items())
    _fresh_docs(work / "docs-prose", {path: filler(n, f"Page {k}") for k, (path, n) in enumerate(ordered)})
    _fresh_docs(work / "docs-trivial", {path: f"# Page {k}\n" for k, (path, _) in enumerate(ordered)})

    session = pipeline.Session(spec, counter=TokenCounter(cache))
    session.run()
    target = spec / EDITED
    original = target.read_text(encoding="utf-8")
    target.write_text(original + "Bench edit.\n", encoding="utf-8")
    try:
        t = time.perf_counter()
        session.run()
        out["incremental"] = {"rebuild_s": round(time.perf_counter() - t, 3), "variants_redone": len(session.changes.variants)}
    finally:
        target.write_text(original, encoding="utf-8")
    return out


def child_mkdocs_build(config: Path) -> dict[str, Any]:
    """`mkdocs build` in this process, so ru_maxrss is the build's own peak."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    t, cpu, load = time.perf_counter(), _own_cpu_s(), _load()
    cfg = load_config(str(config))
    build(cfg)
    seconds = time.perf_counter() - t
    cpu = _own_cpu_s() - cpu
    site = Path(cfg["site_dir"])
    index = site / "search" / "search_index.json"
    return {
        "build_s": round(seconds, 2),
        "cpu_s": round(cpu, 2),
        "load": load,
        "pages": sum(1 for _ in site.rglob("*.html")),
        "site_bytes": sum(p.stat().st_size for p in site.rglob("*") if p.is_file()),
        "search_index_bytes": index.stat().st_size if index.exists() else None,
        "peak_rss_mib": _own_peak_mib(),
    }


# ---------------------------------------------------------------------------
# MkDocs configs and runs


def readme_settings() -> str:
    """The `theme:` and `markdown_extensions:` blocks of the repository's
    mkdocs.yml, as text (its Mermaid fence names a Python object, which a
    YAML round trip would need MkDocs' loader for)."""
    keep, out = False, []
    for line in (REPO / "mkdocs.yml").read_text(encoding="utf-8").splitlines():
        if line and not line[0].isspace() and not line.startswith("#"):
            keep = line.split(":", 1)[0] in ("theme", "markdown_extensions")
        if keep:
            out.append(line)
    return "\n".join(out) + "\n"


def write_mkdocs_yml(path: Path, docs: Path, site: Path, *, spec: Path | None = None, cache: Path | None = None,
                     options: dict[str, Any] | None = None) -> Path:
    plugin = ""
    if spec is not None:
        opts = {"spec": str(spec), "cache_dir": str(cache), **(options or {})}
        plugin = "  - promptspec:\n" + "".join(f"      {k}: {json.dumps(v)}\n" for k, v in opts.items())
    path.write_text(
        "site_name: promptspec bench\n"
        f"docs_dir: {json.dumps(str(docs))}\nsite_dir: {json.dumps(str(site))}\n"
        "strict: true\nuse_directory_urls: true\n"
        "not_in_nav: |\n  /prompts/variants/\n"  # the floors' pages at the plugin's paths: out of the nav like its own
        f"plugins:\n  - search\n{plugin}" + readme_settings(),
        encoding="utf-8",
    )
    return path


def mkdocs_build(config: Path, cache: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Min time and largest peak of --repeat builds, each in a new process."""
    runs = []
    for _ in range(args.repeat):
        res = run_child([sys.executable, __file__, "--child", "mkdocs-build", "--config", str(config)],
                        env=_child_env(cache), timeout=args.timeout)
        if "error" in res:
            return res
        runs.append(res)
    best = min(runs, key=lambda r: r["build_s"])
    return {**best, "runs_s": [r["build_s"] for r in runs], "runs_cpu_s": [r["cpu_s"] for r in runs],
            "peak_rss_mib": max(r["peak_rss_mib"] for r in runs)}


def free_port() -> int:
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.read().decode("utf-8", "replace")
    except (urllib.error.URLError, OSError):
        return None


_LIVERELOAD = re.compile(r"livereload\((\d+),\s*(\d+)\)")
"""The call MkDocs' serve injects into every HTML page it serves: the epoch
of the site the page is from, and the page's request id."""


def _proc_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a running process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _proc_mem_mib(pid: int) -> dict[str, float]:
    """Peak and current resident memory of a running process (Linux /proc)."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmHWM", "VmRSS"):
            out[key] = round(int(value.split()[0]) / 1024, 1)
    return {"peak_rss_mib": out.get("VmHWM"), "rss_mib": out.get("VmRSS")}


def _reload_until(base: str, page: str, epoch: str, marker: str, proc: subprocess.Popen, deadline: float) -> tuple[float, float]:
    """What a browser showing `page` of site `epoch` does after an edit: wait
    on the livereload long poll until the server answers with a newer epoch,
    then fetch the page again, until it holds `marker`.  (moment the poll
    answered, moment the page with the edit was served), perf_counter."""
    answered = None
    while True:
        text = _get(f"{base}livereload/{epoch}/{time.time_ns() // 1_000_000}")
        if proc.poll() is not None or time.perf_counter() > deadline:
            raise RuntimeError("mkdocs serve exited" if proc.poll() is not None else "the edit did not show in time")
        if text is None or not text.strip().isdigit() or int(text) <= int(epoch):
            time.sleep(0.05 if text is None else 0)
            continue
        epoch = text.strip()
        answered = answered or time.perf_counter()
        shown = _get(base + page)
        if shown is not None and marker in shown:
            return answered, time.perf_counter()
        # A rebuild that started before the edit was written: wait on the next one.


def serve_reload(config: Path, target: Path, cache: Path, page: str, args: argparse.Namespace) -> dict[str, Any]:
    """`mkdocs serve`; edit `target` --serve-edits times, each time until a
    browser on `page` would show the edit (livereload, then the page); the
    serve process's CPU per edit and its peak memory; the plugin's log lines
    of the rebuilds are kept."""
    port = free_port()
    base = f"http://127.0.0.1:{port}/"
    log_path = config.with_suffix(".serve.log")
    original = target.read_text(encoding="utf-8")
    env = _child_env(cache)
    if args.serve_tmpdir:
        env["TMPDIR"] = str(args.serve_tmpdir)  # where MkDocs puts the site it serves
    edits = max(args.serve_edits, args.repeat)

    with open(log_path, "w", encoding="utf-8") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "mkdocs", "serve", "-f", str(config), "-a", f"127.0.0.1:{port}"],
            stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True,
            # A shell's background job starts with SIGINT ignored, and Python
            # then never raises KeyboardInterrupt: give serve the default back.
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        try:
            t = time.perf_counter()
            while _get(base + page) is None:
                if proc.poll() is not None:
                    return {"error": "mkdocs serve exited; see " + str(log_path)}
                if time.perf_counter() - t > args.timeout:
                    return {"error": f"first build not served within {args.timeout:.0f} s"}
                time.sleep(0.25)
            first = time.perf_counter() - t
            first_mem = _proc_mem_mib(proc.pid)

            def timed(k: int, text: str, marker: str) -> tuple[float, float, float, float]:
                """Write `text` to the edited file and wait until the page holds
                `marker`: (load before, CPU s, s to the livereload answer, s to the page)."""
                # Let the watcher settle after the last build; then a write at
                # a new point of its polling period each time.
                time.sleep(1.0 + POLL_PERIOD * k / edits)
                m = _LIVERELOAD.search(_get(base + page) or "")
                if m is None:
                    raise RuntimeError("the served page has no livereload script")
                load, cpu, t = _load(), _proc_cpu_s(proc.pid), time.perf_counter()
                target.write_text(text, encoding="utf-8")
                answered, shown = _reload_until(base, page, m.group(1), marker, proc, t + args.timeout)
                return load, round(_proc_cpu_s(proc.pid) - cpu, 2), round(answered - t, 2), round(shown - t, 2)

            reloads, polls, cpus, loads, floors, floor_cpus = [], [], [], [], [], []
            try:
                for k in range(edits):
                    marker = f"bench-edit-{os.getpid()}-{k}-{time.time_ns()}"
                    words = "" if args.serve_same_size else " word" * (k + 1)
                    load, cpu, poll, reload = timed(k, original + marker + words + "\n", marker)
                    loads.append(load)
                    cpus.append(cpu)
                    polls.append(poll)
                    reloads.append(reload)
                # The floor: the same file written again with the same text, a
                # rebuild that changes no page -- what any edit costs at this size.
                same = target.read_text(encoding="utf-8")
                for k in range(edits):
                    _, cpu, _, reload = timed(k, same, "")
                    floor_cpus.append(cpu)
                    floors.append(reload)
            except RuntimeError as exc:
                return {"error": f"{exc}; see {log_path}"}
            mem = _proc_mem_mib(proc.pid)
        finally:
            target.write_text(original, encoding="utf-8")
            stopped = _stop(proc)
    lines = [line.split("promptspec: ", 1)[1].strip() for line in log_path.read_text(encoding="utf-8").splitlines()
             if "promptspec: " in line and " variants" in line]
    return {"first_build_served_s": round(first, 2), "first_build_rss_mib": first_mem["peak_rss_mib"],
            "reload_s": min(reloads), "reload_median_s": statistics.median(reloads), "reloads_s": reloads,
            "livereload_answers_s": polls, "reload_cpu_s": cpus, "reload_cpu_median_s": statistics.median(cpus),
            "loads": loads, "noop_reload_median_s": statistics.median(floors), "noop_reloads_s": floors,
            "noop_reload_cpu_median_s": statistics.median(floor_cpus),
            "peak_rss_mib": mem["peak_rss_mib"], "rss_mib": mem["rss_mib"],
            "stopped": stopped, "plugin_rebuild": lines[-1] if len(lines) > 1 else None}


def _stop(proc: subprocess.Popen) -> str:
    """SIGINT (MkDocs removes its temp site on KeyboardInterrupt), then SIGKILL."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(timeout=30)
        return "SIGINT"
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return "SIGKILL (SIGINT ignored for 30 s)"


def _option(text: str) -> tuple[str, Any]:
    key, _, value = text.partition("=")
    return key, yaml.safe_load(value)


def bench_size(size: int, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    work.mkdir(parents=True, exist_ok=True)
    spec = work / "spec"
    shape = make_spec(spec, size, fixed_models=args.models, fixed_axes=args.axes)
    row: dict[str, Any] = {"requested": size, **shape}
    cache = work / "token-cache"
    shutil.rmtree(cache, ignore_errors=True)
    gen = run_child([sys.executable, __file__, "--child", "generator", "--spec", str(spec), "--cache", str(cache), "--work", str(work)],
                    env=_child_env(cache), timeout=args.timeout)
    if "error" in gen:
        row["error"] = gen["error"]
        return row
    row.update(gen)
    print(f"  generator: {row['variants']} variants, {row['site_pages']} pages ({row['site_page_bytes']:,} B), "
          f"{json.dumps(row['generator_s'])}, peak {row['peak_rss_mib']} MiB; incremental {json.dumps(row['incremental'])}", flush=True)
    if args.no_mkdocs:
        return row
    options = {"variant_pages": "all", **dict(args.plugin_option)}
    docs = _fresh_docs(work / "docs-plugin", {})
    cfg = write_mkdocs_yml(work / "mkdocs-plugin.yml", docs, work / "site-plugin", spec=spec, cache=cache, options=options)
    row["plugin"] = mkdocs_build(cfg, cache, args)
    print(f"  plugin, a page per variant {json.dumps(dict(args.plugin_option))}: {json.dumps(row['plugin'])}", flush=True)
    if not args.no_floors:
        for name in ("prose", "trivial"):
            floor = write_mkdocs_yml(work / f"mkdocs-{name}.yml", work / f"docs-{name}", work / f"site-{name}")
            row[name] = mkdocs_build(floor, cache, args)
            print(f"  {name} floor: {json.dumps(row[name])}", flush=True)
    a = row["plugin"].get("build_s")
    for name in ("prose", "trivial"):
        b = row.get(name, {}).get("build_s")
        row[f"plugin_vs_{name}"] = round(a / b, 2) if a and b else None
    row["ms_per_variant"] = round(1000 * a / row["variants"], 2) if a else None
    if not args.no_serve and row["variants"] <= args.serve_up_to:
        from promptspec.assemble import matrix
        from promptspec.spec import load_spec

        variant = next((v for v in matrix(load_spec(spec)) if v.mode == "pair_programming"), None)
        row["serve"] = (serve_reload(cfg, spec / EDITED, cache, f"prompts/variants/{variant.slug}/", args)
                        if variant else {"error": "no pair_programming variant to watch"})
        serve, build = row["serve"], row["plugin"]
        if "error" not in serve and build.get("build_s"):
            row["reload_vs_build"] = round(serve["reload_median_s"] / build["build_s"], 3)
            row["noop_reload_vs_build"] = round(serve["noop_reload_median_s"] / build["build_s"], 3)
            # The same ratio in CPU seconds: steadier than wall time on a machine whose speed drifts.
            row["reload_cpu_vs_build_cpu"] = round(serve["reload_cpu_median_s"] / min(build["runs_cpu_s"]), 3)
            row["serve_rss_vs_build"] = round(serve["peak_rss_mib"] / build["peak_rss_mib"], 2)
        print(f"  mkdocs serve, edit to reload: {json.dumps(serve)}; median reload / full build "
              f"{row.get('reload_vs_build')} (CPU {row.get('reload_cpu_vs_build_cpu')}), "
              f"floor (no page changed) / full build {row.get('noop_reload_vs_build')}, "
              f"serve peak RSS / build peak {row.get('serve_rss_vs_build')}", flush=True)
    return row


def _cell(value: Any, width: int) -> str:
    return f"{'-' if value is None else value:>{width}}"


def print_table(rows: list[dict[str, Any]]) -> None:
    print(f"{'variants':>8} {'models':>6} {'plugin s':>8} {'prose s':>7} {'trivial s':>9} {'/prose':>6} {'/trivial':>8} "
          f"{'peak MiB':>8} {'prose MiB':>9} {'ms/var':>6} {'reload s':>8} {'median':>6} {'/build':>6} {'serve MiB':>9} {'/peak':>5} {'search B':>10}")
    for r in rows:
        if "variants" not in r:
            print(f"{r['requested']:>8} error: {r.get('error')}")
            continue
        p = r.get("plugin", {})
        print(" ".join([
            _cell(r["variants"], 8), _cell(r["models"], 6), _cell(p.get("build_s"), 8),
            _cell(r.get("prose", {}).get("build_s"), 7), _cell(r.get("trivial", {}).get("build_s"), 9),
            _cell(r.get("plugin_vs_prose"), 6), _cell(r.get("plugin_vs_trivial"), 8),
            _cell(p.get("peak_rss_mib"), 8), _cell(r.get("prose", {}).get("peak_rss_mib"), 9),
            _cell(r.get("ms_per_variant"), 6), _cell(r.get("serve", {}).get("reload_s"), 8),
            _cell(r.get("serve", {}).get("reload_median_s"), 6),
            _cell(r.get("reload_vs_build"), 6), _cell(r.get("serve", {}).get("peak_rss_mib"), 9),
            _cell(r.get("serve_rss_vs_build"), 5),
            _cell(p.get("search_index_bytes"), 10),
        ]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="32,300,2400,10000", help="comma-separated variant counts (default: %(default)s)")
    parser.add_argument("--models", type=int, default=None, metavar="N", help="a fixed model count (the approval axis grows instead)")
    parser.add_argument("--axes", default=None, metavar="S,A", help="fixed sandbox and approval value counts (the models grow)")
    parser.add_argument("--repeat", type=int, default=1, metavar="N", help="builds and edits per figure; the minimum is kept (default: %(default)s)")
    parser.add_argument("--serve-edits", type=int, default=5, metavar="N",
                        help="edits under mkdocs serve per size, at least --repeat (default: %(default)s)")
    parser.add_argument("--serve-up-to", type=int, default=2400, metavar="N", help="measure edit-to-reload up to N variants (default: %(default)s)")
    parser.add_argument("--serve-same-size", action="store_true",
                        help="every edit after the first of the same size (default: one word more each time, as typing)")
    parser.add_argument("--serve-tmpdir", type=Path, default=None, metavar="DIR",
                        help="TMPDIR for mkdocs serve, which builds the served site in a temp folder (e.g. /dev/shm)")
    parser.add_argument("--plugin-option", type=_option, action="append", default=[], metavar="KEY=VALUE",
                        help="an option for the plugin in the 'plugin' build and serve (YAML value)")
    parser.add_argument("--no-mkdocs", action="store_true", help="generator figures only")
    parser.add_argument("--no-floors", action="store_true", help="skip the two floor builds")
    parser.add_argument("--no-serve", action="store_true", help="skip the edit-to-reload figures")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds before a child is given up (default: %(default)s)")
    parser.add_argument("--work", type=Path, default=None, help="keep specs and sites here (default: a temp folder, removed)")
    parser.add_argument("--out", type=Path, default=None, help="write the results as JSON here (rewritten after each size)")
    parser.add_argument("--codex", default=None, metavar="RELEASES",
                        help="also time import-codex --cli and verify --cli of these releases, cold and warm (bench_codex.py; "
                             "--sizes none for only that)")
    parser.add_argument("--child", choices=("generator", "mkdocs-build"), help=argparse.SUPPRESS)
    parser.add_argument("--spec", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--cache", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--config", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child == "generator":
        print(json.dumps(child_generator(args.spec, args.cache, args.work)))
        return 0
    if args.child == "mkdocs-build":
        print(json.dumps(child_mkdocs_build(args.config)))
        return 0
    args.axes = tuple(int(x) for x in args.axes.split(",")) if args.axes else None

    sizes = [int(s) for s in args.sizes.split(",") if s.strip() and s.strip() != "none"]
    root = args.work or Path(tempfile.mkdtemp(prefix="promptspec-bench-"))
    meta = {"python": sys.version.split()[0], "cpus": os.cpu_count(), "load_before": os.getloadavg(),
            "repeat": args.repeat, "plugin_options": dict(args.plugin_option)}
    rows = []
    try:
        for size in sizes:
            print(f"size {size}:", flush=True)
            rows.append(bench_size(size, root / f"n{size}", args))
            if args.out:
                args.out.write_text(json.dumps({"meta": meta, "results": rows}, indent=2) + "\n", encoding="utf-8")
    finally:
        if args.work is None:
            shutil.rmtree(root, ignore_errors=True)
    if rows:
        print()
        print_table(rows)
    if args.out:
        print(f"wrote {args.out}")
    if args.codex:
        import bench_codex

        return bench_codex.main([r for r in args.codex.split(",") if r.strip()])
    return 0


if __name__ == "__main__":
    sys.exit(main())
