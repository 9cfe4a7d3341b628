"""load → assemble → measure, once, with stage timings.

Every front end (CLI commands, the MkDocs plugin, review, lint) wants the
same three steps; this is the one place they happen, so timings and caching
behave the same everywhere.  `Result.timings` names every stage (load,
assemble, count; a Session adds check) for `-v` (`format_timings`).
Long-running processes (mkdocs serve) use `Session`, which redoes only the
variants an edit can change.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from .assemble.builder import Assembler
from .assemble.conversation import carry_threads
from .assemble.matrix import find_variant, matrix
from .assemble.request import Request, Variant
from .measure.counter import TokenCounter
from .measure.figures import Measure, measure_all
from .render.renderer import renderer_for
from .spec.files import file_digest
from .spec.readers.load import load_spec
from .spec.model import Spec


@dataclass
class Result:
    spec: Spec
    variants: list[Variant]
    requests: list[Request]
    measures: list[Measure]
    timings: dict[str, float] = field(default_factory=dict)

    def measure_of(self, variant: Variant) -> Measure:
        return self._index()[variant]

    def _index(self) -> dict[Variant, Measure]:
        idx = getattr(self, "_idx", None)
        if idx is None:
            idx = {m.request.variant: m for m in self.measures}
            self._idx = idx
        return idx


def run(spec_dir: str | Path, *, counter: TokenCounter | None = None, progress=None) -> Result:
    timings: dict[str, float] = {}
    t = time.perf_counter()
    spec = load_spec(spec_dir)
    timings["load"] = time.perf_counter() - t
    return run_spec(spec, counter=counter, timings=timings, progress=progress)


STAGES = ("load", "assemble", "measure")


def run_one(spec_dir: str | Path, model: str | None, personality: str | None, mode: str | None,
            axes: dict[str, str] | None = None, *, counter: TokenCounter | None = None, upto: str = "measure") -> Result:
    """One variant through the same stages as `run` (`promptspec render`):
    load, pick the variant by its axis values (assemble.matrix.find_variant:
    include/exclude hold), assemble it, measure it.  `upto` stops after a
    stage ("load": only the variant is picked; "assemble": not counted), so
    a command pays only for what it prints."""
    if upto not in STAGES:
        raise ValueError(f"upto must be one of {STAGES}")
    timings: dict[str, float] = {}
    t = time.perf_counter()
    spec = load_spec(spec_dir)
    variant = find_variant(spec, model, personality, mode, axes)
    timings["load"] = time.perf_counter() - t
    requests: list[Request] = []
    measures: list[Measure] = []
    if upto != "load":
        t = time.perf_counter()
        requests.append(Assembler(spec).assemble(variant))
        timings["assemble"] = time.perf_counter() - t
    if upto == "measure":
        t = time.perf_counter()
        measures = measure_all(spec, requests, counter if counter is not None else TokenCounter())
        timings["count"] = time.perf_counter() - t
    return Result(spec, [variant], requests, measures, timings)


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Assembly allocates a few hundred objects per variant and keeps them all;
    the cyclic GC's full passes over that growing heap were ~30 % of a
    10k-variant build and free nothing.  Paused for the stage, then restored."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def run_spec(spec: Spec, *, counter: TokenCounter | None = None, timings: dict[str, float] | None = None, progress=None) -> Result:
    with _gc_paused():
        return _run_spec(spec, counter=counter, timings=timings, progress=progress)


def _run_spec(spec: Spec, *, counter: TokenCounter | None, timings: dict[str, float] | None, progress) -> Result:
    timings = {} if timings is None else timings
    t = time.perf_counter()
    variants = matrix(spec)
    asm = Assembler(spec)
    requests = []
    for i, v in enumerate(variants):
        requests.append(asm.assemble(v))
        if progress is not None:
            progress(i + 1, len(variants))
    timings["assemble"] = time.perf_counter() - t
    t = time.perf_counter()
    measures = measure_all(spec, requests, counter if counter is not None else TokenCounter())
    timings["count"] = time.perf_counter() - t
    return Result(spec, variants, requests, measures, timings)


def format_timings(timings: dict[str, float]) -> str:
    """`load 0.015 s · assemble 0.68 s · count 0.56 s · total 1.26 s` for `-v`."""
    parts = [f"{stage} {seconds:.3f} s" for stage, seconds in timings.items()]
    parts.append(f"total {sum(timings.values()):.3f} s")
    return " · ".join(parts)


# ---------------------------------------------------------------------------
# Incremental rebuilds (mkdocs serve)
#
# A Session keeps the last Result and, for every variant, what it was made
# from, so that after an edit only the variants the edit can change are
# assembled and counted again.  "Made from" is recorded while assembling:
# every render (a fragment body, a marker, a personality or mode text) a
# variant uses is noted, and every file read during a render (its template,
# text() calls, includes) is charged to that render's output; includes are
# also added by a static walk, because Jinja loads a shared include only once.
# Anything that can change every variant (spec.yaml, models.json, the
# AGENTS.md tree, the instructions override, files read outside any render)
# forces a full rebuild; a changed fragment definition redoes the variants it
# applies to (before or after the edit); a template whose includes cannot be
# known statically redoes its variants on any change.


@dataclass(frozen=True)
class Changes:
    """What the last `Session.run()` redid, and why (for logs and the plugin)."""

    full: bool
    reason: str
    files: tuple[str, ...] = ()  # changed files, relative to the spec folder where possible
    variants: frozenset[Variant] = frozenset()  # variants assembled and counted again
    threads_kept: int = 0  # conversation threads of the last spec kept as they were (assemble.conversation.carry_threads)


_Ident = tuple[str, str]  # ("file", template ref) or ("inline", where)


class _Tracker:
    """Records, during assembly, the renders each variant uses and the files
    each render output was made from."""

    def __init__(self) -> None:
        self.frames: list[set[Path]] = []
        self.outside: set[Path] = set()
        self.renders: dict[tuple[_Ident, str], int] = {}  # (ident, output) -> render id
        self.files: dict[int, set[Path]] = {}  # render id -> files read while producing it
        self.used: dict[Variant, tuple[int, ...]] = {}
        self.current: list[int] = []
        self.paused = False

    def attach(self, spec: Spec) -> None:
        original = spec.fs.read_text

        def read_text(ref: str, *, origin: str | Path | None = None) -> tuple[str, Path]:
            text, path = original(ref, origin=origin)
            if not self.paused:
                (self.frames[-1] if self.frames else self.outside).add(path)
            return text, path

        spec.fs.read_text = read_text  # type: ignore[method-assign]  # the Session's own Spec only

    def inherit(self, older: "_Tracker", keep: Iterable[Variant]) -> None:
        """Take over the older build's records for the variants not redone."""
        remap: dict[int, int] = {}
        for key, rid in older.renders.items():
            new = self.renders.setdefault(key, len(self.renders))
            remap[rid] = new
            if rid in older.files:
                self.files.setdefault(new, set()).update(older.files[rid])
        for v in keep:
            self.used[v] = tuple(remap[r] for r in older.used[v])
        self.outside |= older.outside


class _TrackingAssembler(Assembler):
    def __init__(self, spec: Spec, tracker: _Tracker):
        super().__init__(spec)
        self._tracker = tracker

    def _render(self, engine, inline, ref, where, ctx):  # type: ignore[override]
        tracker = self._tracker
        tracker.frames.append(set())
        try:
            out = super()._render(engine, inline, ref, where, ctx)
        finally:
            files = tracker.frames.pop()
        key = (("inline", where) if inline is not None else ("file", ref), out)
        rid = tracker.renders.get(key)
        if rid is None:
            rid = tracker.renders[key] = len(tracker.renders)
        if files:
            tracker.files.setdefault(rid, set()).update(files)
        tracker.current.append(rid)
        return out

    def assemble(self, variant: Variant) -> Request:
        self._tracker.current = []
        request = super().assemble(variant)
        self._tracker.used[variant] = tuple(dict.fromkeys(self._tracker.current))
        return request


def _digest_file(path: Path) -> str | None:
    # Every file under the spec folder is hashed, referenced or not: a
    # symlink to /dev/zero or a FIFO must cost nothing (bounded, non-blocking).
    return file_digest(path)


def _snapshot(root: Path, extra: Iterable[Path]) -> dict[Path, str | None]:
    """Content hash of every file under the spec folder (hidden folders
    skipped) and of the given other files (e.g. under extra roots)."""
    out: dict[Path, str | None] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        for name in files:
            path = Path(folder, name)
            out[path] = _digest_file(path)
    for path in extra:
        if path not in out:
            out[path] = _digest_file(path)
    return out


def _jinja_includes(spec: Spec, source: str) -> set[str] | None:
    """Templates a Jinja source includes/imports/extends; None if not all are
    constant names (then any file might be one)."""
    from jinja2 import nodes

    refs: set[str] = set()
    for node in renderer_for(spec).env.parse(source).find_all((nodes.Include, nodes.Import, nodes.FromImport, nodes.Extends)):
        target = node.template
        if not (isinstance(target, nodes.Const) and isinstance(target.value, str)) or getattr(node, "ignore_missing", False):
            return None
        refs.add(target.value)
    return refs


class Session:
    """Build a spec repeatedly (e.g. on every `mkdocs serve` reload), redoing
    only the variants an edit can change.

        session = Session(spec_dir, counter=TokenCounter(cache_dir))
        result = session.run()      # full build
        ...                         # someone edits modes/plan.md
        result = session.run()      # only the plan-mode variants redone
        session.changes             # Changes(full=False, variants=frozenset({...}), ...)

    `run()` returns a new Result (the previous one when nothing relevant
    changed) whose requests and measures are the previous objects for every
    variant not redone, so callers can skip unchanged pages by identity.
    Timings gain a "check" stage (hashing the spec's files).  A failed run
    (SpecError) leaves the session at its last good build.
    """

    def __init__(self, spec_dir: str | Path, *, counter: TokenCounter | None = None):
        self.spec_dir = Path(spec_dir)
        self.counter = counter if counter is not None else TokenCounter()
        self.result: Result | None = None
        self.changes: Changes | None = None
        self._tracker = _Tracker()
        self._stamps: dict[Path, str | None] = {}
        self._render_files: dict[int, frozenset[Path] | None] = {}
        self._global: set[Path] = set()
        self._tree: Path | None = None
        self._tools_dir: Path | None = None

    # -- public ---------------------------------------------------------------
    def run(self, *, progress=None) -> Result:
        root = self.spec_dir.resolve()
        if self.result is None:
            with _gc_paused():
                return self._build(root, None, "first build", (), progress, 0.0, None)
        t = time.perf_counter()
        now = _snapshot(root, self._stamps)
        changed = sorted(p for p in set(now) | set(self._stamps) if now.get(p) != self._stamps.get(p))
        check = time.perf_counter() - t
        if not changed:
            self.changes = Changes(False, "nothing changed")
            self.result.timings = {"check": check}
            return self.result
        shown = tuple(self._shown(root, p) for p in changed)
        with _gc_paused():
            if any(self._is_global(p) for p in changed):
                return self._build(root, None, f"{shown[0]} can change every variant", shown, progress, check, None)
            return self._build(root, set(changed), "", shown, progress, check, now)

    # -- the build ----------------------------------------------------------------
    def _build(self, root: Path, changed: set[Path] | None, reason: str, shown, progress, check: float, now) -> Result:
        """A full build when `changed` is None, else only the variants it affects."""
        old = self.result
        timings: dict[str, float] = {"check": check} if check else {}
        t = time.perf_counter()
        stamps = now if now is not None else _snapshot(root, ())  # taken before reading anything
        spec = load_spec(self.spec_dir)
        timings["load"] = time.perf_counter() - t
        t = time.perf_counter()
        tracker = _Tracker()
        tracker.attach(spec)
        asm = _TrackingAssembler(spec, tracker)
        if changed is None or old is None:
            variants = matrix(spec)
            redo = set(variants)
        else:
            variants = list(old.variants)
            redo = self._affected(old, spec, asm, changed)
        requests: list[Request] = []
        fresh: list[Request] = []
        previous = old.requests if old is not None and changed is not None else [None] * len(variants)
        for i, (v, req) in enumerate(zip(variants, previous)):
            if v in redo:
                req = asm.assemble(v)
                fresh.append(req)
            requests.append(req)
            if progress is not None:
                progress(i + 1, len(variants))
        timings["assemble"] = time.perf_counter() - t
        t = time.perf_counter()
        measured = measure_all(spec, fresh, self.counter)
        if changed is None or old is None:
            measures = measured
        else:
            by_variant = {m.request.variant: m for m in measured}
            measures = [by_variant.get(m.request.variant, m) for m in old.measures]
        timings["count"] = time.perf_counter() - t
        result = Result(spec, variants, requests, measures, timings)
        if changed is not None:
            tracker.inherit(self._tracker, (v for v in variants if v not in redo))
            reason = f"{len(redo)} of {len(variants)} variants affected by {', '.join(shown[:3])}{'...' if len(shown) > 3 else ''}"
        self._commit(root, spec, tracker, result, stamps)
        # The conversation threads the edit did not reach, kept for the new spec (after
        # _commit: the files it reads again are not the assembly's, nor global).
        threads = carry_threads(old.spec, spec, redo, changed) if changed is not None and old is not None else 0
        self.changes = Changes(changed is None, reason, shown, frozenset(redo), threads)
        return result

    def _affected(self, old: Result, spec: Spec, asm: Assembler, changed: set[Path]) -> set[Variant]:
        hit = {rid for rid, files in self._render_files.items() if files is None or files & changed}
        redo = {v for v, rids in self._tracker.used.items() if not hit.isdisjoint(rids)}
        before = {f.name: f for f in old.spec.fragments}
        after = {f.name: f for f in spec.fragments}
        old_asm = Assembler(old.spec)
        touched = [(old_asm, before[n]) for n in before if before[n] != after.get(n)]
        touched += [(asm, after[n]) for n in after if after[n] != before.get(n)]
        if touched:
            redo |= {v for v in old.variants if v not in redo and any(a.applies(f, v) for a, f in touched)}
        return redo

    # -- bookkeeping ------------------------------------------------------------------
    def _commit(self, root: Path, spec: Spec, tracker: _Tracker, result: Result, stamps) -> None:
        tracker.paused = True
        fs = spec.fs
        inline_sources: dict[str, list[str]] = {}
        for f in spec.fragments:
            if f.body is not None:
                inline_sources.setdefault(f.source, []).append(f.body)
            inline_sources.setdefault(f"{f.source} (marker)", []).extend(m for m in (f.start, f.end) if "{" in m)
        static_memo: dict[str, frozenset[Path] | None] = {}

        def static(ref: str, seen: frozenset[str]) -> frozenset[Path] | None:
            """A template file and everything it includes, transitively."""
            if ref in static_memo:
                return static_memo[ref]
            if ref in seen:
                return frozenset()
            out: frozenset[Path] | None = frozenset({fs.resolve(ref)})
            try:
                refs = _jinja_includes(spec, fs.read_text(ref)[0])
            except Exception:  # not a Jinja template (e.g. codex text): no includes
                refs = set()
            for sub in sorted(refs) if refs is not None else ():
                part = static(sub, seen | {ref})
                out = None if part is None or out is None else out | part
            static_memo[ref] = None if refs is None else out
            return static_memo[ref]

        def ident_files(ident: _Ident) -> frozenset[Path] | None:
            kind, name = ident
            if kind == "file":
                return static(name, frozenset())
            out: frozenset[Path] | None = frozenset()
            for source in inline_sources.get(name, ()):
                try:
                    refs = _jinja_includes(spec, source)
                except Exception:
                    refs = set()
                for sub in sorted(refs) if refs is not None else ():
                    part = static(sub, frozenset())
                    out = None if part is None or out is None else out | part
                if refs is None:
                    out = None
            return out

        by_ident: dict[_Ident, frozenset[Path] | None] = {}
        render_files: dict[int, frozenset[Path] | None] = {}
        for (ident, _), rid in tracker.renders.items():
            if ident not in by_ident:
                by_ident[ident] = ident_files(ident)
            base = by_ident[ident]
            render_files[rid] = None if base is None else base | tracker.files.get(rid, set())
        glob = {root / "spec.yaml", fs.resolve(spec.models_file)} | tracker.outside
        glob |= {fs.resolve(f.source) for f in spec.fragments}  # compared as definitions, stamped here
        for ref in (spec.instructions_override, spec.agents.user_instructions):
            if ref:
                glob.add(fs.resolve(ref))
        stamps = dict(stamps)
        for path in glob.union(*(files for files in render_files.values() if files)):
            if path not in stamps:  # outside the spec folder: hash what the build read
                cached = fs._cache.get(path)
                stamps[path] = hashlib.sha256(cached.encode("utf-8")).hexdigest() if cached is not None else _digest_file(path)
        self.result, self._tracker, self._stamps, self._render_files = result, tracker, stamps, render_files
        self._global = glob - {fs.resolve(f.source) for f in spec.fragments}
        self._tree = fs.resolve(spec.agents.tree) if spec.agents.tree else None
        self._tools_dir = fs.resolve(spec.request.tools_folder)

    def _is_global(self, path: Path) -> bool:
        if path in self._global:
            return True
        # A tool file (new, edited or removed) can change which tools any variant sends.
        if self._tools_dir is not None and self._tools_dir in path.parents:
            return True
        return self._tree is not None and (path == self._tree or self._tree in path.parents)

    @staticmethod
    def _shown(root: Path, path: Path) -> str:
        return path.relative_to(root).as_posix() if root in path.parents else str(path)
