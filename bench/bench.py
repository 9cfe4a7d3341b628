#!/usr/bin/env python3
"""How promptspec scales with the matrix: generator and MkDocs, side by side.

    python bench/bench.py --sizes 36,300,2400,10000 --out results.json
    python bench/bench.py --sizes 10000 --skip-mkdocs-above 2400   # no per-variant-page builds past 2400
    python bench/bench.py --sizes 2400 --no-serve                   # skip the edit-to-reload figure
    python bench/bench.py --sizes 10000 --no-mkdocs --profile       # generator only, with a cProfile
    python bench/bench.py --sizes 300 --work /tmp/bench             # keep the specs and sites to look at

For each requested size it writes a synthetic spec made from the embedded one
(`templates/`, copied to a work folder): more models (copies of the
models.json entries with new slugs, slightly different text and context
windows), more `sandbox_mode` values and an `approval_policy` axis (each value
with its own text file), chosen to land near the requested variant count
(preferring 3 sandbox modes x 5 approval policies, the issue's shape).  Then,
in one run, it prints and records (JSON with --out, rewritten after each size):

* variants, distinct sections, distinct text bytes (sections; sections plus
  base instructions);
* generator time by stage, in a child process: load, assemble, count (cold
  token cache), count again (new counter, warm disk cache), explorer data
  (`explorer.build` + `data_bytes`) and its size against the distinct text,
  the site pages (`site.build_site` with `variant_pages` all, and none),
  the child's peak memory, and an incremental rebuild with
  `pipeline.Session` after editing one fragment (fragments/realtime.md);
* `mkdocs build` of the explorer page alone (home page + explorer page +
  data); of the site without per-variant pages as static files (what
  `site.build_site(variant_pages="none")` makes); and the same site through
  the plugin with `variant_pages: none` (matrix, model/mode/fragment pages,
  explorer), with the sizes of the largest overview pages;
* `mkdocs build` with the promptspec plugin and `variant_pages: all` (a page
  per variant), if `promptspec.site.plugin` is importable (else a note says why), and two floors
  without the plugin: the same number of plain Markdown pages of the same
  sizes (the MkDocs floor), and the generated pages as static files -- with
  the ratios plugin/floor and plugin/static;
* for every build: wall time, peak memory (ru_maxrss of the build's own
  process), site size and search-index size (site/search/search_index.json);
* edit-to-reload: `mkdocs serve` with the plugin on a free port, edit one
  fragment, poll a served page of a variant that contains it until the
  change shows -- on each synthetic spec, and once on the real Codex
  fixture (`--codex DIR`, default ../shared/fixtures/codex beside the
  repository, skipped when absent); `--no-serve` skips both.

Per-variant-page builds and the serve figure are skipped above
`--skip-mkdocs-above N` variants (default 10000): they cost MkDocs' 16-40 ms
a page.  Timings are wall-clock on whatever else the machine is doing;
compare runs made on one box.  Token caches live in the work folder
(PROMPTSPEC_CACHE_DIR), never in ~/.cache.  A script that prints figures,
not a test.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import json
import os
import pstats
import resource
import shutil
import socket
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


# ---------------------------------------------------------------------------
# Synthetic specs


def _variant_count(models: list[dict[str, Any]], n_models: int, sandboxes: int, approvals: int) -> int:
    """Variants of the embedded spec's shape: 4 personalities x 4 modes per
    model, minus pair_programming for the legacy model (its exclude rule
    names it exactly, so its copies keep all modes)."""
    legacy = sum(1 for m in models[:n_models] if m["slug"] == "harbor-4-legacy")
    return (n_models * 16 - legacy * 4) * sandboxes * approvals


def plan_size(target: int, models: list[dict[str, Any]]) -> tuple[int, int, int, int]:
    """(models, sandbox values, approval values, variants) near `target`.

    Among shapes within ~2 % of the target, prefer 3 sandbox modes x 5
    approval policies (the shape of the issue's 10 x 4 x 4 x 3 x 5 = 2,400
    example), then more models: the axis that grows in real specs."""
    best: tuple[Any, ...] | None = None
    for m in range(1, max(4, target // 16 + 2)):
        for s in range(1, 4):
            for a in range(1, 6):
                n = _variant_count(models, m, s, a)
                key = (round(abs(n - target) / target, 2), abs(s * a - 15), -m)
                if best is None or key < best[0]:
                    best = (key, m, s, a, n)
    assert best is not None
    return best[1], best[2], best[3], best[4]


def make_spec(dest: Path, target: int) -> dict[str, Any]:
    """Write a spec with about `target` variants to `dest`; return its shape."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(TEMPLATES, dest)
    data = json.loads((dest / "models.json").read_text(encoding="utf-8"))
    originals = data["models"]
    n_models, n_sandbox, n_approval, expected = plan_size(target, originals)
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
    return {"models": n_models, "sandbox_modes": n_sandbox, "approval_policies": n_approval, "expected_variants": expected}


# ---------------------------------------------------------------------------
# Child processes: each measurement runs in its own process, so its peak
# memory (ru_maxrss from wait4) is its own.


def run_child(cmd: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None, timeout: float | None = None) -> dict[str, Any]:
    """Run `cmd`, return wall seconds, peak RSS (MiB), exit status and output."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd, text=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        return {"ok": False, "seconds": time.perf_counter() - started, "error": f"timed out after {timeout:.0f} s"}
    seconds = time.perf_counter() - started
    # communicate() reaped the child; its rusage went into RUSAGE_CHILDREN's
    # maximum, which is only exact for the largest child so far, so each
    # child also reports its own peak when it can (see --child).
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    result: dict[str, Any] = {"ok": proc.returncode == 0, "seconds": seconds, "children_peak_rss_mib": round(rss, 1)}
    if proc.returncode != 0:
        result["error"] = (err or out).strip().splitlines()[-5:]
    result["stdout"], result["stderr"] = out, err
    return result


def _child_env(cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PROMPTSPEC_CACHE_DIR"] = str(cache)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "generator"), env.get("PYTHONPATH", "")]))
    env.pop("CI", None)
    return env


def _own_peak_mib() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)



def _fresh_docs(folder: Path, files: dict) -> Path:
    """A new docs folder holding a stub index.md and `files` (path -> str or bytes)."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "index.md").write_text("# Bench\n\nSynthetic spec.\n", encoding="utf-8")
    for path, content in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return folder

def filler(size: int, title: str) -> str:
    """Plain Markdown of exactly `size` bytes: a heading and paragraphs."""
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


def child_generator(spec: Path, cache: Path, work: Path, profile: bool, page_docs_up_to: int | None = None) -> dict[str, Any]:
    """Generator figures for one spec; writes the docs folders the MkDocs runs use."""
    from promptspec import pipeline
    from promptspec.site import explorer
    from promptspec.measure import measure_all
    from promptspec.measure import TokenCounter

    out: dict[str, Any] = {}
    prof = cProfile.Profile() if profile else None
    if prof:
        prof.enable()
    t = time.perf_counter()
    result = pipeline.run(spec, counter=TokenCounter(cache))
    out["generator_s"] = {k: round(v, 3) for k, v in result.timings.items()}
    out["generator_s"]["load+assemble+count"] = round(time.perf_counter() - t, 3)
    if prof:
        prof.disable()
        stats = pstats.Stats(prof, stream=sys.stderr)
        stats.sort_stats("cumulative").print_stats(25)
    t = time.perf_counter()
    measure_all(result.spec, result.requests, TokenCounter(cache))  # a new counter on the warm disk cache
    out["generator_s"]["count_warm"] = round(time.perf_counter() - t, 3)

    out["variants"] = len(result.variants)
    sections = {s.text for r in result.requests for _, _, s in r.sections}
    bases = {r.base.text for r in result.requests}
    out["distinct_sections"] = len(sections)
    out["distinct_section_bytes"] = sum(len(x.encode("utf-8")) for x in sections)
    out["distinct_text_bytes"] = sum(len(x.encode("utf-8")) for x in sections | bases)

    t = time.perf_counter()
    data = explorer.build(result)
    blob = explorer.data_bytes(data)
    out["generator_s"]["explorer_data"] = round(time.perf_counter() - t, 3)
    out["explorer_data_bytes"] = len(blob)
    out["explorer_vs_distinct_text"] = round(len(blob) / out["distinct_text_bytes"], 2)
    out["explorer_vs_distinct_section_text"] = round(len(blob) / max(1, out["distinct_section_bytes"]), 2)
    out["peak_rss_mib_through_explorer"] = _own_peak_mib()  # before any per-variant pages exist

    # The site pages, with a page per variant (variant_pages: all) and without (none).
    pages: dict[str, str] = {}
    files: dict[str, Any] = {}
    off_pages: dict[str, str] = {}
    off_files: dict[str, Any] = {}
    try:
        from promptspec.site.build import assets, build_site

        t = time.perf_counter()
        site = build_site(result, prefix="prompts", links="dir", variant_pages="all")
        out["generator_s"]["site_pages"] = round(time.perf_counter() - t, 3)
        pages, files = dict(site.pages), {**site.files, **assets()}
        del site
        out["site_pages"] = len(pages)
        out["site_page_bytes"] = sum(len(p.encode("utf-8")) for p in pages.values())
        t = time.perf_counter()
        site = build_site(result, prefix="prompts", links="dir", variant_pages="none")
        out["generator_s"]["site_pages_off"] = round(time.perf_counter() - t, 3)
        off_pages, off_files = dict(site.pages), {**site.files, **assets()}
        del site
        overview = sorted(((len(t.encode("utf-8")), p) for p, t in off_pages.items()), reverse=True)
        out["largest_overview_pages"] = [[p, n] for n, p in overview[:5]]
        out["overview_page_bytes"] = sum(n for n, _ in overview)
        out["overview_pages"] = len(overview)
    except Exception as exc:  # noqa: BLE001 - report, don't fail
        out["site_pages_note"] = f"promptspec.site unavailable: {type(exc).__name__}: {exc}"

    # docs for the site without per-variant pages (overview pages + explorer), as static files.
    t = time.perf_counter()
    _fresh_docs(work / "docs-explorer", {**off_pages, **off_files})
    out["generator_s"]["write_explorer_docs"] = round(time.perf_counter() - t, 3)

    # docs for the explorer page alone: what the explorer itself costs MkDocs.
    explorer_only = {p: c for p, c in {**off_pages, **off_files}.items() if p.startswith(("prompts/explorer/", "assets/"))}
    alone = _fresh_docs(work / "docs-explorer-alone", explorer_only)
    (alone / "prompts" / "explorer").mkdir(parents=True, exist_ok=True)
    if not (alone / "prompts" / "explorer" / "index.md").exists():  # no site module: the bare widget
        folder = alone / "prompts" / "explorer"
        (folder / explorer.DATA_FILE).write_bytes(blob)
        explorer.write_assets(folder)
        (folder / "index.md").write_text("# Variant explorer\n\n" + explorer.page_html(explorer.DATA_FILE, result.spec.axes), encoding="utf-8")
    del off_pages, off_files

    # The per-variant-page builds are skipped above --skip-mkdocs-above: their docs too.
    if page_docs_up_to is not None and len(result.variants) > page_docs_up_to:
        pages, files = {}, {}
    # docs for the MkDocs floor: the same pages as plain Markdown of the same sizes.
    _fresh_docs(
        work / "docs-floor",
        {path: filler(len(text.encode("utf-8")), f"Page {n}") for n, (path, text) in enumerate(sorted(pages.items()))},
    )

    # docs for the second floor: exactly the generated pages, as static files.
    _fresh_docs(work / "docs-static", {**pages, **files})

    # Incremental: edit one fragment body, rebuild with a Session.
    session = pipeline.Session(spec, counter=TokenCounter(cache))
    t = time.perf_counter()
    session.run()
    full = time.perf_counter() - t
    target = spec / "fragments" / "realtime.md"
    original = target.read_text(encoding="utf-8")
    target.write_text(original + "Bench edit.\n", encoding="utf-8")
    try:
        t = time.perf_counter()
        session.run()
        out["incremental"] = {
            "edited": "fragments/realtime.md",
            "session_full_s": round(full, 3),
            "rebuild_s": round(time.perf_counter() - t, 3),
            "variants_redone": len(session.changes.variants),
            "stages_s": {k: round(v, 3) for k, v in session.result.timings.items()},
        }
    finally:
        target.write_text(original, encoding="utf-8")
    out["peak_rss_mib"] = _own_peak_mib()
    return out


MKDOCS_YML = """\
site_name: promptspec bench
docs_dir: {docs}
site_dir: {site}
use_directory_urls: true
theme:
  name: material
{not_in_nav}plugins:
  - search
{plugin}markdown_extensions:
  - attr_list
  - md_in_html
  - tables
  - admonition
  - toc:
      permalink: true
  - pymdownx.details
  - pymdownx.superfences
"""


def write_mkdocs_yml(path: Path, docs: Path, site: Path, *, spec: Path | None, cache: Path, plugin_options: dict[str, Any] | None = None) -> Path:
    plugin = ""
    if spec is not None:
        options = {"spec": str(spec), "cache_dir": str(cache), **(plugin_options or {})}
        plugin = "  - promptspec:\n" + "".join(f"      {k}: {json.dumps(v)}\n" for k, v in options.items())
    not_in_nav = "not_in_nav: |\n  /prompts/variants/\n"
    path.write_text(MKDOCS_YML.format(docs=json.dumps(str(docs)), site=json.dumps(str(site)), plugin=plugin, not_in_nav=not_in_nav), encoding="utf-8")
    return path


def _tree_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def child_mkdocs_build(config: Path) -> dict[str, Any]:
    """`mkdocs build` in this process (so ru_maxrss is the build's own peak)."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    t = time.perf_counter()
    cfg = load_config(str(config))
    build(cfg)
    seconds = time.perf_counter() - t
    site = Path(cfg["site_dir"])
    index = site / "search" / "search_index.json"
    return {
        "build_s": round(seconds, 2),
        "pages": sum(1 for _ in site.rglob("*.html")),
        "site_bytes": _tree_bytes(site),
        "search_index_bytes": index.stat().st_size if index.exists() else None,
        "peak_rss_mib": _own_peak_mib(),
    }


def mkdocs_build(config: Path, cache: Path, timeout: float) -> dict[str, Any]:
    res = run_child([sys.executable, __file__, "--child", "mkdocs-build", "--config", str(config)], env=_child_env(cache), timeout=timeout)
    if not res["ok"]:
        return {"error": res.get("error")}
    data = json.loads(res["stdout"].strip().splitlines()[-1])
    data["wall_s"] = round(res["seconds"], 2)
    return data


def free_port() -> int:
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.read().decode("utf-8", "replace")
    except (urllib.error.URLError, OSError):
        return None


def serve_edit_to_reload(config: Path, spec: Path, cache: Path, page_url_path: str, timeout: float, target: Path | None = None) -> dict[str, Any]:
    """Start `mkdocs serve`, edit a fragment (`target`, default
    fragments/realtime.md), time until the served page shows it.  The
    plugin's log line for the rebuild (stage timings) is returned too."""
    port = free_port()
    base = f"http://127.0.0.1:{port}/"
    log_path = config.with_suffix(".serve.log")
    log = open(log_path, "w", encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, "-m", "mkdocs", "serve", "-f", str(config), "-a", f"127.0.0.1:{port}"],
        stdout=log, stderr=subprocess.STDOUT, env=_child_env(cache), start_new_session=True,
    )
    target = target or spec / "fragments" / "realtime.md"
    original = target.read_text(encoding="utf-8")

    def plugin_lines() -> list[str]:
        log.flush()
        return [line.split("promptspec: ", 1)[1].strip() for line in log_path.read_text(encoding="utf-8").splitlines() if "promptspec: " in line]

    try:
        t = time.perf_counter()
        while _get(base + page_url_path) is None:
            if proc.poll() is not None:
                return {"error": "mkdocs serve exited"}
            if time.perf_counter() - t > timeout:
                return {"error": f"first build not served within {timeout:.0f} s"}
            time.sleep(0.25)
        first = time.perf_counter() - t
        marker = f"bench-edit-{os.getpid()}-{time.time_ns()}"
        time.sleep(1.0)  # let the watcher settle after the first build
        t = time.perf_counter()
        target.write_text(original + marker + "\n", encoding="utf-8")
        while True:
            page = _get(base + page_url_path)
            if page is not None and marker in page:
                reload = round(time.perf_counter() - t, 2)
                lines = plugin_lines()
                return {"first_build_served_s": round(first, 2), "edit_to_reload_s": reload, "page": page_url_path,
                        "edited": target.name, "plugin_first_build": lines[0] if lines else None,
                        "plugin_rebuild": lines[-1] if len(lines) > 1 else None}
            if proc.poll() is not None:
                return {"error": "mkdocs serve exited"}
            if time.perf_counter() - t > timeout:
                return {"error": f"the edit did not show within {timeout:.0f} s", "page": page_url_path}
            time.sleep(0.1)
    finally:
        target.write_text(original, encoding="utf-8")
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 15)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=20)
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, 9)
            proc.wait()
        log.close()


CODEX_FIXTURE = REPO.parent / "shared" / "fixtures" / "codex"


def codex_serve(codex: Path, work: Path, timeout: float) -> dict[str, Any]:
    """Edit-to-reload on the real Codex fixture: import it, serve a site of
    it with the plugin (every variant has a page), edit
    fragments/environment_context.md (in every variant), time until a
    variant page shows the edit."""
    work.mkdir(parents=True, exist_ok=True)
    spec = work / "codex-spec"
    cache = work / "token-cache"
    res = run_child([sys.executable, "-m", "promptspec.cli", "import-codex", str(codex), "--out", str(spec), "--force"],
                    env=_child_env(cache), timeout=timeout)
    if not res["ok"]:
        return {"error": res.get("error")}
    from promptspec.assemble import matrix
    from promptspec.spec import load_spec

    variant = matrix(load_spec(spec))[-1]
    docs = work / "docs"
    docs.mkdir(exist_ok=True)
    (docs / "index.md").write_text("# Codex\n", encoding="utf-8")
    cfg = write_mkdocs_yml(work / "mkdocs-codex.yml", docs, work / "site-codex", spec=spec, cache=cache)
    out = serve_edit_to_reload(cfg, spec, cache, f"prompts/variants/{variant.slug}/", timeout, target=spec / "fragments" / "environment_context.md")
    out["variants"] = len(matrix(load_spec(spec)))
    return out


def plugin_status() -> tuple[bool, str]:
    try:
        import promptspec.site.plugin  # noqa: F401
    except Exception as exc:  # noqa: BLE001
        return False, f"promptspec.site.plugin not importable ({type(exc).__name__}: {exc}); MkDocs columns skipped"
    try:
        import mkdocs  # noqa: F401
    except ImportError:
        return False, "mkdocs not installed; MkDocs columns skipped"
    return True, ""


def plugin_variant_pages(which: str) -> dict[str, Any] | None:
    """The plugin's `variant_pages` option set to `which` (all | none), if it has it."""
    try:
        from promptspec.site.plugin import PromptspecConfig
    except Exception:  # noqa: BLE001
        return None
    names = {name for name, _ in getattr(PromptspecConfig, "_schema", ())}
    return {"variant_pages": which} if "variant_pages" in names else None


def bench_size(size: int, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    work.mkdir(parents=True, exist_ok=True)
    spec = work / "spec"
    shape = make_spec(spec, size)
    row: dict[str, Any] = {"requested": size, **shape}
    cache = work / "token-cache"
    shutil.rmtree(cache, ignore_errors=True)
    cmd = [sys.executable, __file__, "--child", "generator", "--spec", str(spec), "--cache", str(cache), "--work", str(work),
           "--skip-mkdocs-above", str(args.skip_mkdocs_above)]
    if args.profile:
        cmd.append("--profile")
    res = run_child(cmd, env=_child_env(cache), timeout=args.timeout)
    if not res["ok"]:
        row["error"] = res.get("error")
        return row
    if args.profile:
        print(res.get("stderr", ""), file=sys.stderr)
    row.update(json.loads(res["stdout"].strip().splitlines()[-1]))
    print(
        f"  generator: {row['variants']} variants, {row['distinct_sections']} distinct sections, "
        f"{json.dumps(row['generator_s'])}, explorer data {row['explorer_data_bytes']:,} B "
        f"({row['explorer_vs_distinct_text']}x distinct text), peak {row['peak_rss_mib']} MiB",
        flush=True,
    )
    if "incremental" in row:
        print(f"  incremental: {json.dumps(row['incremental'])}", flush=True)

    if args.no_mkdocs:
        row["mkdocs_note"] = "--no-mkdocs"
        return row
    ok, note = plugin_status()
    # Explorer-only site (no per-variant pages): written by the generator child, built without the plugin.
    cfg = write_mkdocs_yml(work / "mkdocs-explorer.yml", work / "docs-explorer", work / "site-explorer", spec=None, cache=cache)
    build = {"note": "--no-overview-site"} if args.no_overview_site else mkdocs_build(cfg, cache, args.timeout)
    if "build_s" in build:
        build["generator_plus_build_s"] = round(build["build_s"] + row["generator_s"]["load+assemble+count"] + row["generator_s"]["explorer_data"] + row["generator_s"].get("site_pages", 0), 2)
    row["mkdocs_explorer_site"] = build
    print(f"  mkdocs, overview pages + explorer (no per-variant pages): {json.dumps(build)}", flush=True)
    if "largest_overview_pages" in row:
        print(f"    overview pages {row['overview_page_bytes']:,} B; largest: {row['largest_overview_pages']}", flush=True)
    cfg = write_mkdocs_yml(work / "mkdocs-alone.yml", work / "docs-explorer-alone", work / "site-alone", spec=None, cache=cache)
    alone = mkdocs_build(cfg, cache, args.timeout)
    if "build_s" in alone:
        alone["generator_plus_build_s"] = round(alone["build_s"] + row["generator_s"]["load+assemble+count"] + row["generator_s"]["explorer_data"], 2)
    row["mkdocs_explorer_alone"] = alone
    print(f"  mkdocs, explorer page alone: {json.dumps(alone)}", flush=True)
    pages_off = plugin_variant_pages("none") if ok else None
    if pages_off is not None:
        cfg = write_mkdocs_yml(work / "mkdocs-plugin-off.yml", work / "docs-empty", work / "site-plugin-off", spec=spec, cache=cache, plugin_options=pages_off)
        (work / "docs-empty").mkdir(exist_ok=True)
        (work / "docs-empty" / "index.md").write_text("# Bench\n", encoding="utf-8")
        row["mkdocs_plugin_pages_off"] = mkdocs_build(cfg, cache, args.timeout)
        print(f"  mkdocs, plugin with {pages_off} (whole site: matrix, axis and fragment pages, explorer): "
              f"{json.dumps(row['mkdocs_plugin_pages_off'])}", flush=True)

    if not ok:
        row["mkdocs_note"] = note
        print(f"  {note}", flush=True)
        return row
    if row["variants"] > args.skip_mkdocs_above:
        row["mkdocs_note"] = f"per-variant page builds skipped above {args.skip_mkdocs_above} variants (--skip-mkdocs-above)"
        print(f"  {row['mkdocs_note']}", flush=True)
        return row
    docs = work / "docs-plugin"
    shutil.rmtree(docs, ignore_errors=True)
    docs.mkdir()
    (docs / "index.md").write_text("# Bench\n\nSynthetic spec.\n", encoding="utf-8")
    cfg = write_mkdocs_yml(work / "mkdocs-plugin.yml", docs, work / "site-plugin", spec=spec, cache=cache,
                           plugin_options=plugin_variant_pages("all"))
    row["mkdocs_plugin"] = mkdocs_build(cfg, cache, args.timeout)
    print(f"  mkdocs, plugin (per-variant pages): {json.dumps(row['mkdocs_plugin'])}", flush=True)
    floor_cfg = write_mkdocs_yml(work / "mkdocs-floor.yml", work / "docs-floor", work / "site-floor", spec=None, cache=cache)
    row["mkdocs_floor"] = mkdocs_build(floor_cfg, cache, args.timeout)
    print(f"  mkdocs, floor (same pages as static Markdown): {json.dumps(row['mkdocs_floor'])}", flush=True)
    static_cfg = write_mkdocs_yml(work / "mkdocs-static.yml", work / "docs-static", work / "site-static", spec=None, cache=cache)
    row["mkdocs_static_same_pages"] = mkdocs_build(static_cfg, cache, args.timeout)
    print(f"  mkdocs, the generated pages as static files: {json.dumps(row['mkdocs_static_same_pages'])}", flush=True)
    a, b = row["mkdocs_plugin"].get("build_s"), row["mkdocs_floor"].get("build_s")
    c = row["mkdocs_static_same_pages"].get("build_s")
    row["plugin_vs_floor"] = round(a / b, 2) if a and b else None
    row["plugin_vs_static_same_pages"] = round(a / c, 2) if a and c else None
    gen = row["generator_s"]["load+assemble+count"]
    row["generator_share_of_floor"] = round(gen / b, 3) if b else None
    print(f"  plugin / floor: {row['plugin_vs_floor']}; plugin / same pages static: {row['plugin_vs_static_same_pages']}; "
          f"generator (load+assemble+count) / floor: {row['generator_share_of_floor']}", flush=True)
    if not args.no_serve:
        from promptspec.assemble import matrix
        from promptspec.spec import load_spec

        variant = next((v for v in matrix(load_spec(spec)) if v.mode == "pair_programming"), None)
        if variant is None:
            row["serve"] = {"error": "no pair_programming variant to watch"}
        else:
            row["serve"] = serve_edit_to_reload(cfg, spec, cache, f"prompts/variants/{variant.slug}/", args.timeout)
        print(f"  mkdocs serve, edit to reload: {json.dumps(row['serve'])}", flush=True)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="36,300,2400,10000", help="comma-separated variant counts (default: %(default)s)")
    parser.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    parser.add_argument("--skip-mkdocs-above", type=int, default=10000, metavar="N", help="no per-variant-page MkDocs builds above N variants (default: %(default)s)")
    parser.add_argument("--no-mkdocs", action="store_true", help="generator figures only")
    parser.add_argument("--no-serve", action="store_true", help="skip the mkdocs serve edit-to-reload figures")
    parser.add_argument("--codex", type=Path, default=CODEX_FIXTURE, metavar="DIR",
                        help="Codex checkout for the edit-to-reload figure on a real spec (default: ../shared/fixtures/codex; skipped when absent)")
    parser.add_argument("--no-overview-site", action="store_true", help="skip the build of the overview pages without per-variant pages")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of load+assemble+count (to stderr of the child, shown here)")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds before a child process is given up (default: %(default)s)")
    parser.add_argument("--work", type=Path, default=None, help="keep the synthetic specs and sites here (default: a temp folder, removed)")
    parser.add_argument("--child", choices=("generator", "mkdocs-build"), help=argparse.SUPPRESS)
    parser.add_argument("--spec", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--cache", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--config", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child == "generator":
        print(json.dumps(child_generator(args.spec, args.cache, args.work, args.profile, args.skip_mkdocs_above)))
        return 0
    if args.child == "mkdocs-build":
        print(json.dumps(child_mkdocs_build(args.config)))
        return 0

    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    root = args.work or Path(tempfile.mkdtemp(prefix="promptspec-bench-"))
    rows = []
    meta = {"python": sys.version.split()[0], "cpus": os.cpu_count(), "note": "wall-clock timings; noisy on a shared machine"}
    ok, note = plugin_status()
    if not ok:
        meta["mkdocs_note"] = note
    codex = None
    try:
        for size in sizes:
            print(f"size {size}:", flush=True)
            rows.append(bench_size(size, root / f"n{size}", args))
            if args.out:
                args.out.write_text(json.dumps({"meta": meta, "results": rows}, indent=2) + "\n", encoding="utf-8")
        if not args.no_serve and not args.no_mkdocs and ok and args.codex and args.codex.is_dir():
            print(f"codex fixture ({args.codex}), mkdocs serve:", flush=True)
            codex = codex_serve(args.codex, root / "codex", args.timeout)
            print(f"  edit to reload: {json.dumps(codex)}", flush=True)
            if args.out:
                args.out.write_text(json.dumps({"meta": meta, "results": rows, "codex_serve": codex}, indent=2) + "\n", encoding="utf-8")
    finally:
        if args.work is None:
            shutil.rmtree(root, ignore_errors=True)
    print()
    header = (
        f"{'variants':>8} {'sections':>8} {'gen s':>6} {'explorer B':>10} {'x text':>6} {'alone s':>7} {'ovw s':>7} "
        f"{'off s':>7} {'off MiB':>7} {'pages s':>8} {'floor s':>8} {'ratio':>6} {'gen/fl':>6} {'reload s':>8}"
    )
    print(header)
    for r in rows:
        if "variants" not in r:
            print(f"{r['requested']:>8} error: {r.get('error')}")
            continue
        ex = r.get("mkdocs_explorer_site", {})
        print(
            f"{r['variants']:>8} {r['distinct_sections']:>8} {r['generator_s']['load+assemble+count']:>6} "
            f"{r['explorer_data_bytes']:>10,} {r['explorer_vs_distinct_text']:>6} "
            f"{str(r.get('mkdocs_explorer_alone', {}).get('build_s', '-')):>7} {str(ex.get('build_s', '-')):>7} "
            f"{str(r.get('mkdocs_plugin_pages_off', {}).get('build_s', '-')):>7} {str(r.get('mkdocs_plugin_pages_off', {}).get('peak_rss_mib', '-')):>7} "
            f"{str(r.get('mkdocs_plugin', {}).get('build_s', '-')):>8} {str(r.get('mkdocs_floor', {}).get('build_s', '-')):>8} "
            f"{str(r.get('plugin_vs_floor') or '-'):>6} {str(r.get('generator_share_of_floor') or '-'):>6} "
            f"{str(r.get('serve', {}).get('edit_to_reload_s', '-')):>8}"
        )
    if codex is not None:
        print(f"codex fixture: {codex.get('variants', '?')} variants, edit to reload {codex.get('edit_to_reload_s', codex.get('error'))} s")
    if args.out:
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
