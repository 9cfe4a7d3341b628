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
import dataclasses
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence, TypeVar

from ..binary import CodexBinary, CodexError
from ..capture import Capture, Config, capture, check_catalog, debug_models
from ..scratch import Scratch, make_scratch, remove_scratch
from .cache import TOKEN, Memo, Store, open_store, plain, relocate

if TYPE_CHECKING:
    from ..thread import Thread, ThreadCapture
    from ..world import World

MAX_JOBS = 8
MIN_CONFIGS_PER_JOB = 24
"""A worker costs a scratch world and a warm-up start (about a second): not worth it for fewer first requests."""
MIN_THREADS_PER_JOB = 3
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
    worlds: int = 1  # scratch worlds Codex ran in (the primary counts once)
    not_cached: str | None = None  # why nothing was cached (None: the cache was used)


class CapturePool:
    """`with CapturePool(binary, world, ...) as pool: pool.catalog(); pool.warm(cfg);
    pool.first_requests(configs); pool.threads(threads)`."""

    def __init__(self, binary: CodexBinary, world: "World | None" = None, timeout: float = 60.0, port: int = 0,
                 jobs: int = 0, cache: bool = True, cache_root: Path | None = None):
        from ..world import mcp_servers

        self.binary, self.world, self.timeout, self.port = binary, world, timeout, port
        self.scratch: Scratch = make_scratch(world=world)
        self.stats = PoolStats()
        self._warm_cfg: Config | None = None
        self._primary = "fresh"  # fresh | warm (a real first start ran) | restored (skills from the cache)
        try:
            self.base = str(self.scratch.base)
            alone = bool(port) or not plain(self.scratch.base) or bool(world and (world.cwd or mcp_servers(world)))
            self.jobs = 1 if alone else max(1, min(jobs or default_jobs(), MAX_JOBS))
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
            made = self._spread([configs[i] for i in missing], MIN_CONFIGS_PER_JOB,
                                lambda s, chunk: capture(self.binary, s, chunk, self.timeout, self.port),
                                lambda orig, got: Capture(orig, got.body, got.refused, got.transient))
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
            made = self._spread([threads[i] for i in missing], MIN_THREADS_PER_JOB,
                                lambda s, chunk: capture_threads(self.binary, s, chunk, self.timeout, self.port),
                                lambda orig, got: ThreadCapture(orig, got.bodies, got.refused))
            for i, cap in zip(missing, made):
                out[i] = cap
            # A thread a step of which failed is kept only when Codex refused it (an answer, not a timeout).
            self._put("threads", {keys[i]: {"bodies": c.bodies, "refused": c.refused} for i, c in zip(missing, made)
                                  if c.refused is None or "` was refused: " in c.refused})
        return out  # type: ignore[return-value]

    # -- the workers ---------------------------------------------------------
    def _spread(self, items: list[T], per_job: int, run: Callable[[Scratch, list[T]], Iterator[R]],
                rebuild: Callable[[T, R], R]) -> list[R]:
        """`run` over contiguous chunks of `items` in up to `jobs` worlds at once;
        the results in the order of `items`, each rebuilt around its original item."""
        n = max(1, min(self.jobs, len(items) // per_job))
        size = -(-len(items) // n)
        chunks = [items[i:i + size] for i in range(0, len(items), size)]
        results: list[list[R] | None] = [None] * len(chunks)
        errors: list[BaseException | None] = [None] * len(chunks)
        stop = threading.Event()

        def work(i: int) -> None:
            own = i == 0 and self._primary == "warm"
            s = self.scratch if own else None
            try:
                if s is None:
                    s = make_scratch(world=self.world)
                    warm = self._warm_cfg or _config_of(chunks[i][0])
                    list(capture(self.binary, s, [relocate(warm, self.base, str(s.base))], self.timeout, self.port))
                    _mirror(self.scratch.base, s.base, chunks[i])
                done: list[R] = []
                for got in run(s, chunks[i] if own else relocate(chunks[i], self.base, str(s.base))):
                    done.append(got if own else relocate(got, str(s.base), self.base))
                    if stop.is_set():
                        return
                results[i] = [rebuild(orig, got) for orig, got in zip(chunks[i], done)]
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                errors[i] = exc
                stop.set()
            finally:
                if s is not None and s is not self.scratch:
                    remove_scratch(s)

        self.stats.captured += len(items)
        self.stats.worlds += sum(1 for i in range(len(chunks)) if not (i == 0 and self._primary == "warm"))
        if len(chunks) == 1:
            work(0)
        else:
            workers = [threading.Thread(target=work, args=(i,), name=f"codex-worker-{i}", daemon=True)
                       for i in range(len(chunks))]
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
        first = next((e for e in errors if e is not None), None)
        if first is not None:
            raise first
        if any(r is None for r in results):
            raise CodexError("a capture worker stopped early", release=self.binary.release, hint="rerun")
        return [got for chunk in results for got in chunk]  # type: ignore[union-attr]


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
