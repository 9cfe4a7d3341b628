"""Captures spread over several Codex processes, through the capture cache.

A `CapturePool` holds the primary scratch world: the one whose values (cwd,
home, date) the spec is rendered with and every capture is given in.  What the
cache (oracle/pool/cache.py) holds is taken from it; the rest is captured
by up to `jobs` worker worlds at once, each a scratch world of its own (its
own HOME, so one Codex's project trust and unpacked skills never meet
another's), warmed up as a first start is, with its own app-servers and
recorder.  A worker's captures name its own folder; it is replaced by the
primary's, so a capture reads the same whichever world made it (the scratch
folder is the one input in which two worlds differ; tests/oracle/ checks the
parallel captures equal the serial ones).

One world at a time when that is the only safe way: a fixed `--port` (one
recorder), the user's project as cwd (two Codex processes would share it),
MCP servers (the user's programs, started once per Codex), or a scratch
folder whose name cannot be replaced as plain text.
"""

from __future__ import annotations

import base64
import copy
import dataclasses
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence, TypeVar

from ..binary import CodexBinary, CodexError
from ..capture import Capture, Config, capture, check_catalog, debug_models
from ..parts import parse
from ..scratch import Scratch, make_scratch, remove_scratch
from .cache import TOKEN, Memo, Store, open_store, plain, relocate

if TYPE_CHECKING:
    from ..thread import Thread, ThreadCapture
    from ..world import World

MAX_JOBS = 8
MIN_CONFIGS_PER_JOB = 24
"""A worker costs a scratch world and a warm-up start (about a second): not worth it for fewer first requests."""
MIN_THREADS_PER_JOB = 3
QUIET_PROBE_MIN = 12
"""Fewer captures than this run loud without a probe: the probe's quiet world
(a first start and a capture, ~0.45 CPU-s) would cost more than quiet saves
(~0.04 CPU-s a first request; scratch.QUIET_FLAGS)."""
QUIET_PROBE_ITEMS = 4
"""Captures compared by a quiet probe, spread over the batch (one may be refused)."""
SKILLS = Path("skills") / ".system"
"""Where Codex unpacks its bundled skills in CODEX_HOME (read by thread.bundled_skill and the importer)."""
MAX_SKILL_BYTES = 1 << 20

T = TypeVar("T")
R = TypeVar("R")


def default_jobs() -> int:
    """One worker world per core this process may use (at most MAX_JOBS)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_JOBS))


@dataclass
class PoolStats:
    from_cache: int = 0
    captured: int = 0
    worlds: int = 1  # scratch worlds Codex captured in (the primary counts once)
    not_cached: str | None = None  # why nothing was cached (None: the cache was used)
    quiet: dict[str, str] = dataclasses.field(default_factory=dict)  # per kind captured: "quiet" or "loud (why)"
    probe_worlds: int = 0  # fresh worlds the quiet probes ran in


class CapturePool:
    """`with CapturePool(binary, world, ...) as pool: pool.catalog(); pool.warm(cfg);
    pool.first_requests(configs); pool.threads(threads)`."""

    def __init__(self, binary: CodexBinary, world: "World | None" = None, timeout: float = 60.0, port: int = 0,
                 jobs: int = 0, cache: bool = True, cache_root: Path | None = None, quiet: bool = True):
        from ..world import mcp_servers

        self.binary, self.world, self.timeout, self.port = binary, world, timeout, port
        self.may_be_quiet = quiet  # False: every capture loud, no probe (a reference to compare quiet ones with)
        self.scratch: Scratch = make_scratch(world=world)
        self.stats = PoolStats()
        self._warm_cfg: Config | None = None
        self._primary = "fresh"  # fresh | warm (a real first start ran) | restored (skills from the cache)
        try:
            self.base = str(self.scratch.base)
            self.relocatable = plain(self.scratch.base)  # another world's captures can be given in this one's terms
            alone = bool(port) or not self.relocatable or bool(world and (world.cwd or mcp_servers(world)))
            self.jobs = 1 if alone else max(1, min(jobs or default_jobs(), MAX_JOBS))
            self._quiet: dict[str, bool] = {}  # per kind of capture: may it run quiet (_quiet_verdict)
            self.store: Store | None = None
            if not cache:
                self.stats.not_cached = "--no-cache"
            elif not plain(self.scratch.base):
                self.stats.not_cached = f"the scratch folder {self.base!r} is not a plain path"
            else:
                self.store, self.stats.not_cached = open_store(binary, world, self.scratch.codex_home,
                                                               self.scratch.values()["current_date"], cache_root)
        except BaseException:
            remove_scratch(self.scratch)
            raise

    def __enter__(self) -> "CapturePool":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        remove_scratch(self.scratch)

    # -- the cache, in the primary world's terms ----------------------------
    def _get(self, kind: str, key: str) -> Any:
        return self.store.get(kind, key, self.base) if self.store is not None else None

    def _put(self, kind: str, items: dict[str, Any]) -> None:
        if self.store is not None:
            self.store.put(kind, items, self.base)

    def _key(self, obj: Any) -> str:
        return json.dumps(relocate(obj, self.base, TOKEN), ensure_ascii=False)

    def memo(self) -> "Memo | None":
        """Where a caller keeps what it derives from this pool's answers (None: no cache)."""
        return None if self.store is None else Memo(self.store, self.base)

    # -- what the callers ask for ------------------------------------------
    def catalog(self) -> dict[str, Any]:
        """`codex debug models`."""
        got = self._get("catalog", "debug models")
        if isinstance(got, dict) and isinstance(got.get("models"), list) and got["models"]:
            check_catalog(got, self.binary.release)
            return got
        data = debug_models(self.binary, self.scratch, self.timeout)
        self._put("catalog", {"debug models": data})
        return data

    def warm(self, cfg: Config) -> list[Capture]:
        """Settle the primary world as a first Codex start does (bundled skills
        unpacked, the project trusted).  From the cache when it holds this
        world's skills (then no Codex runs here, and [] is returned); else by
        capturing `cfg` in a first app-server, as the serial runs did."""
        self._warm_cfg = self._warm_cfg or cfg
        if self._primary != "fresh":
            return []
        skills = self._get("skills", "bundled")
        if isinstance(skills, dict):
            _restore(self.scratch.codex_home, skills)
            self._primary = "restored"
            return []
        got = list(capture(self.binary, self.scratch, [cfg], self.timeout, self.port))
        self._primary = "warm"
        self._put("skills", {"bundled": _snapshot(self.scratch.codex_home)})
        return got

    def first_requests(self, configs: Sequence[Config]) -> list[Capture]:
        """The first request of each configuration, in order."""
        keys = [self._key(_config_key(c)) for c in configs]
        out: list[Capture | None] = []
        for cfg, key in zip(configs, keys):
            got = self._get("first", key)
            out.append(Capture(cfg, got.get("body"), got.get("refused")) if isinstance(got, dict) else None)
        missing = [i for i, c in enumerate(out) if c is None]
        self.stats.from_cache += len(configs) - len(missing)
        if missing:
            made = self._spread("first", [configs[i] for i in missing], MIN_CONFIGS_PER_JOB,
                                lambda s, chunk: capture(self.binary, s, chunk, self.timeout, self.port),
                                lambda orig, got: Capture(orig, got.body, got.refused, got.transient),
                                lambda c: None if c.transient else (c.body is not None, c.refused,
                                                                    None if c.body is None else parse(c.body)))
            for i, cap in zip(missing, made):
                out[i] = cap
            self._put("first", {keys[i]: {"body": c.body, "refused": c.refused} for i, c in zip(missing, made)
                                if not c.transient})
        return out  # type: ignore[return-value]

    def bundled_skill(self) -> str | None:
        """The first bundled skill of the primary world (warm() first)."""
        from ..thread import bundled_skill

        return bundled_skill(self.scratch)

    def threads(self, threads: Iterable["Thread"]) -> list["ThreadCapture"]:
        """Every request of each thread, in order (oracle/thread.py)."""
        from ..thread import ThreadCapture, capture_threads

        threads = list(threads)
        keys = [self._key(dataclasses.asdict(t)) for t in threads]
        out: list[ThreadCapture | None] = []
        for t, key in zip(threads, keys):
            got = self._get("threads", key)
            out.append(ThreadCapture(t, got["bodies"], got.get("refused")) if isinstance(got, dict)
                       and isinstance(got.get("bodies"), list) else None)
        missing = [i for i, c in enumerate(out) if c is None]
        self.stats.from_cache += len(threads) - len(missing)
        if missing:
            made = self._spread("threads", [threads[i] for i in missing], MIN_THREADS_PER_JOB,
                                lambda s, chunk: capture_threads(self.binary, s, chunk, self.timeout, self.port),
                                lambda orig, got: ThreadCapture(orig, got.bodies, got.refused),
                                lambda t: None if t.refused else (bool(t.bodies), [parse(b) for b in t.bodies]))
            for i, cap in zip(missing, made):
                out[i] = cap
            # A thread a step of which failed is kept only when Codex refused it (an answer, not a timeout).
            self._put("threads", {keys[i]: {"bodies": c.bodies, "refused": c.refused} for i, c in zip(missing, made)
                                  if c.refused is None or "` was refused: " in c.refused})
        return out  # type: ignore[return-value]

    # -- the workers ---------------------------------------------------------
    def _spread(self, kind: str, items: list[T], per_job: int, run: Callable[[Scratch, list[T]], Iterator[R]],
                rebuild: Callable[[T, R], R], answer: Callable[[R], Any]) -> list[R]:
        """`run` over contiguous chunks of the `items` a quiet probe did not
        capture (_quiet_verdict), in up to `jobs` worlds at once, quiet ones
        where the probe allows; the results in the order of `items`, each
        rebuilt around its original item."""
        self.stats.captured += len(items)
        quiet, probed = self._quiet_verdict(kind, items, run, answer)
        done: dict[int, R] = dict(probed or {})
        left = [i for i in range(len(items)) if i not in done]
        if left:
            n = max(1, min(self.jobs, len(left) // per_job))
            size = -(-len(left) // n)
            chunks = [[items[i] for i in left[k:k + size]] for k in range(0, len(left), size)]
            self.stats.worlds += sum(1 for i in range(len(chunks)) if not (i == 0 and self._primary == "warm"))
            got = [g for chunk in self._concurrently([(c, quiet, i == 0) for i, c in enumerate(chunks)], run) for g in chunk]
            done.update(zip(left, got))
        return [rebuild(orig, done[i]) for i, orig in enumerate(items)]

    def _quiet_verdict(self, kind: str, items: list[T], run: Callable[[Scratch, list[T]], Iterator[R]],
                       answer: Callable[[R], Any]) -> tuple[bool, dict[int, R] | None]:
        """Whether `kind`'s captures may run in a quiet world (scratch.QUIET_FLAGS,
        QUIET_PROGRAMS), and the answers a probe captured (by index in `items`).

        Quiet is an optimisation that must never change a result, and no list of
        releases can promise that of the next one, so each release (and world)
        is asked: QUIET_PROBE_ITEMS items spread over the batch (first, last and
        between: other models, other threads) are captured in a loud world
        (the primary, or a fresh one) and in a fresh quiet one; only the same
        answers in both, one of them at least a request, let the rest run
        quiet.  `answer` gives what is compared: whether a request was sent,
        the parsed requests without their volatile fields, the refusal; None
        for nothing to compare (a timeout, a thread whose step was refused),
        which decides nothing.  A verdict is kept with the captures (the
        cache's key holds the binary and the world).  Where one world at a
        time is the rule (`--port`, `--cwd`, MCP servers) the two sides run
        one after the other.  Loud, with no probe, when too few captures are
        left to repay the probe's world."""
        if kind in self._quiet:
            return self._quiet[kind], None
        if not self.may_be_quiet or not self.relocatable:
            self._decide(kind, False, "not asked" if not self.may_be_quiet else "no second world can be compared", keep=False)
            return False, None
        kept = self._get("world", f"quiet {kind}")
        if isinstance(kept, dict) and isinstance(kept.get("quiet"), bool):
            self._decide(kind, kept["quiet"], kept.get("why"), keep=False)
            return kept["quiet"], None
        if len(items) < QUIET_PROBE_MIN:  # undecided: a larger batch of this kind may still probe
            self.stats.quiet.setdefault(kind, "loud (too few captures to probe)")
            return False, None
        picked = _evenly_apart(len(items), QUIET_PROBE_ITEMS)
        probe = [items[i] for i in picked]
        loud, quiet = self._concurrently([(probe, False, True), (probe, True, False)], run, errors=True)
        if isinstance(loud, BaseException):
            raise loud
        self.stats.probe_worlds += 2 if self._primary != "warm" else 1
        probed = dict(zip(picked, loud))  # answers of the batch's own, whatever the verdict
        if isinstance(quiet, CodexError):  # not kept: a failure may be the machine's (a timeout), not the release's answer
            self._decide(kind, False, f"the quiet world failed: {quiet.oneline()}", keep=False)
        elif isinstance(quiet, BaseException):
            raise quiet
        else:
            pairs = [(answer(a), answer(b)) for a, b in zip(loud, quiet)]
            if any(a is not None and b is not None and a != b for a, b in pairs):
                self._decide(kind, False, "the quiet world changed what Codex sends", keep=True)
            elif any(a is None or b is None for a, b in pairs) or not any(a[0] for a, _ in pairs):
                # A timeout on either side, or refusals only: no verdict, so this batch runs loud and a later one asks again.
                self.stats.quiet.setdefault(kind, "loud (the probe's captures gave nothing to compare)")
                return False, probed
            else:
                self._decide(kind, True, None, keep=True)
        return self._quiet[kind], probed

    def _decide(self, kind: str, quiet: bool, why: str | None, keep: bool) -> None:
        self._quiet[kind] = quiet
        self.stats.quiet[kind] = "quiet" if quiet else f"loud ({why})"
        if keep:
            self._put("world", {f"quiet {kind}": {"quiet": quiet, "why": why}})

    def _concurrently(self, work: list[tuple[list[T], bool, bool]], run: Callable[[Scratch, list[T]], Iterator[R]],
                      errors: bool = False) -> list[Any]:
        """Each (chunk, quiet, may_use_primary) run in a world of its own, at once
        (one after another with --jobs 1); the results in the primary world's
        terms.  The first error is raised, or with `errors` given back in its
        chunk's place (the probe's quiet side may fail on its own)."""
        results: list[Any] = [None] * len(work)
        stop = threading.Event()

        def one(i: int) -> None:
            chunk, quiet, may_own = work[i]
            try:
                results[i] = self._in_world(chunk, run, quiet, may_own and self._primary == "warm", stop)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                results[i] = exc
                if not errors:
                    stop.set()

        if len(work) == 1 or self.jobs == 1:
            for i in range(len(work)):
                one(i)
        else:
            workers = [threading.Thread(target=one, args=(i,), name=f"codex-worker-{i}", daemon=True)
                       for i in range(len(work))]
            for w in workers:
                w.start()
            try:
                for w in workers:
                    while w.is_alive():
                        w.join(0.2)  # short waits: SIGINT/SIGTERM reach this thread
            except BaseException:
                stop.set()
                for w in workers:
                    w.join()  # each is bounded by the timeouts of its own steps
                raise
        if not errors:
            first = next((r for r in results if isinstance(r, BaseException)), None)
            if first is not None:
                raise first
        if any(r is None for r in results):
            raise CodexError("a capture worker stopped early", release=self.binary.release, hint="rerun")
        return results

    def _in_world(self, chunk: list[T], run: Callable[[Scratch, list[T]], Iterator[R]], quiet: bool, own: bool,
                  stop: threading.Event) -> list[R] | None:
        """`run` over `chunk` in the primary world (`own`: warm already) or in a
        fresh one warmed as a first start is; None when `stop` was set."""
        s = copy.copy(self.scratch) if own else make_scratch(world=self.world)
        s.quiet = quiet
        try:
            if not own:
                warm = self._warm_cfg or _config_of(chunk[0])
                list(capture(self.binary, s, [relocate(warm, self.base, str(s.base))], self.timeout, self.port))
                _mirror(self.scratch.base, s.base, chunk)
            done: list[R] = []
            for got in run(s, chunk if own else relocate(chunk, self.base, str(s.base))):
                done.append(got if own else relocate(got, str(s.base), self.base))
                if stop.is_set():
                    return None
            return done
        finally:
            if not own:
                remove_scratch(s)


def _evenly_apart(n: int, k: int) -> list[int]:
    """`k` indexes of `n` items, evenly apart, the first and the last among them."""
    return sorted({round(j * (n - 1) / (k - 1)) for j in range(k)}) if k > 1 and n > 1 else [0]


def _config_key(cfg: Config) -> list[Any]:
    return [getattr(cfg, f.name) for f in dataclasses.fields(cfg)]


def _config_of(item: Any) -> Config:
    return item if isinstance(item, Config) else item.config


def _mirror(primary: Path, worker: Path, items: Any) -> None:
    """Folders of the primary world that the items name (a probe's writable
    root) exist in the worker's world too."""
    text = json.dumps(relocate(items, str(primary), TOKEN), default=lambda o: dataclasses.asdict(o))
    for rel in sorted(set(text.split(TOKEN)[1:])):
        name = rel.split('"', 1)[0].split("\\", 1)[0].strip("/").split("/", 1)[0]
        if name and (primary / name).is_dir() and not (worker / name).exists():
            (worker / name).mkdir()


def _snapshot(codex_home: Path) -> dict[str, list[str]]:
    """The bundled skills' files (what promptspec reads of them), by path under
    CODEX_HOME: ["text", content] or ["base64", content]."""
    out: dict[str, list[str]] = {}
    folder = codex_home / SKILLS
    for p in sorted(folder.rglob("*")) if folder.is_dir() else []:
        if p.is_file() and not p.is_symlink() and p.stat().st_size <= MAX_SKILL_BYTES:
            raw = p.read_bytes()
            try:
                out[p.relative_to(codex_home).as_posix()] = ["text", raw.decode("utf-8")]
            except UnicodeDecodeError:
                out[p.relative_to(codex_home).as_posix()] = ["base64", base64.b64encode(raw).decode("ascii")]
    return out


def _restore(codex_home: Path, files: dict[str, Any]) -> None:
    for rel, value in files.items():
        parts = Path(rel).parts
        if (not isinstance(value, list) or len(value) != 2 or value[0] not in ("text", "base64") or Path(rel).is_absolute()
                or ".." in parts or parts[:2] != SKILLS.parts):
            continue  # only the skills folder, from a cache file someone may have edited
        path = codex_home / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(value[1].encode("utf-8") if value[0] == "text" else base64.b64decode(value[1]))
