"""Counting tokens, cached.

Prompt variants share most of their sections, so counts are cached by
(encoding, SHA-256 of the text): in memory for the process and in a small
SQLite file that survives between runs.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import os
import secrets
import sqlite3
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence, TypeVar

from ..errors import SpecError
from ..spec.files import MAX_FILE_BYTES, read_regular_bytes
from .encodings import TokenCacheWarning, TokenizerError, check_known, get_encoding

_T = TypeVar("_T")

# --------------------------------------------------------------------------
# Counting with a cache.
# --------------------------------------------------------------------------

# Threads, not processes.  Measured on a 2-core box (tiktoken 0.14, Codex
# fixture text replicated into distinct variants; best of 5):
#
#   uncached  serial   2 threads  encode_ordinary_batch(2)  2 spawned procs
#   0.25 MB    6.5 ms     6.8 ms       6.8 ms                    —
#   0.5  MB   13.5 ms     8.9 ms      10.5 ms                    —
#   1    MB   28.3 ms    22.0 ms      25.7 ms                  376 ms
#   4    MB  103   ms    72   ms      88   ms                  429 ms
#   16   MB  409   ms   318   ms     368   ms                  676 ms
#
# tiktoken drops the GIL for the BPE work, so threads sharing one Encoding
# win at every size: each process must rebuild the ~0.25 s Encoding and
# receive the text pickled (even fork, which inherits the Encoding, took
# 368 ms at 16 MB).  Our size-balanced chunks beat encode_ordinary_batch,
# which submits one task per text.  Below ~0.5 MB the pool's overhead eats
# the gain.  End to end (bench/bench_tokens.py -n 2000, 5.2 MB distinct, cold
# cache): 193 ms with 1 worker, 153 ms with 2; raw serial encode 160 ms.
_PARALLEL_MIN_CHARS = 512 * 1024

_CACHE_FILENAME = "token-counts.sqlite3"
_BUSY_TIMEOUT_S = 15.0
_LOCK_RETRIES = 5
_SQL_CHUNK = 500  # stays well under SQLite's bound-parameter limit
_SQLITE_CORRUPT = 11
_SQLITE_NOTADB = 26
_QUERY_SECONDS = 5.0  # a cache lookup that takes longer is hostile (a VIEW over an endless CTE) or broken
_MAX_TOKEN_BYTES = 256  # no token of a tiktoken vocabulary is longer: a count below bytes/256 is impossible


class _UntrustedCache(sqlite3.DatabaseError):
    """The cache file is not the plain table we create: treated as corrupt."""


def default_cache_dir() -> Path:
    """Where counts persist by default: the platform's user cache folder
    (``~/.cache/promptspec`` or ``$XDG_CACHE_HOME/promptspec`` on Linux,
    ``~/Library/Caches/promptspec`` on macOS, ``%LOCALAPPDATA%\\promptspec\\Cache``
    on Windows), never the source tree.

    Keeping the cache out of the repository means a checkout stays clean and
    a CI cache step can point ``PROMPTSPEC_CACHE_DIR`` wherever it likes.
    """
    override = os.environ.get("PROMPTSPEC_CACHE_DIR")
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("promptspec", appauthor=False))


def _plausible(count: int, text: str) -> bool:
    """A cached count must fit its text: at most one token per UTF-8 byte,
    at least one per `_MAX_TOKEN_BYTES` (catches edited rows, not a proof)."""
    size = len(text.encode("utf-8", "surrogatepass"))
    return isinstance(count, int) and -(-size // _MAX_TOKEN_BYTES) <= count <= size


def _digest(text: str) -> str:
    # surrogatepass: a str with lone surrogates is still a distinct input and
    # must not crash the key computation (tiktoken itself tolerates it).
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class CountStats:
    """Cumulative figures for one TokenCounter, to show what the cache saved."""

    distinct_texts: int = 0
    cache_hits: int = 0
    counted: int = 0
    tokens_counted: int = 0
    seconds: float = 0.0


def _is_corruption(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)  # Python >= 3.11
    if code is not None:
        return code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB)
    message = str(exc).lower()
    return "not a database" in message or "malformed" in message


def _is_busy(exc: sqlite3.Error) -> bool:
    message = str(exc).lower()
    return "locked" in message or "busy" in message


class _DiskCache:
    """The SQLite side of the cache: (encoding, sha256 hex) → token count.

    A connection is opened per batch rather than held, so a TokenCounter
    carries no OS handles and another process's recovery (moving a corrupt
    file aside) is seen on the next batch.  WAL lets readers proceed while a
    writer commits; writers take the lock up front (BEGIN IMMEDIATE) so two
    processes never deadlock upgrading a read lock.
    """

    def __init__(self, directory: Path) -> None:
        self.path = directory / _CACHE_FILENAME

    def connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_S, isolation_level=None)
        try:
            # Every statement is time-bound: the file may come from anywhere.
            deadline = [time.monotonic() + _QUERY_SECONDS]
            conn.set_progress_handler(lambda: 1 if time.monotonic() > deadline[0] else 0, 10_000)
            conn.execute("PRAGMA trusted_schema=OFF")
            self._check_schema(conn)
            self._retry(lambda: conn.execute("PRAGMA journal_mode=WAL"))
            conn.execute("PRAGMA synchronous=NORMAL")
            self._retry(
                lambda: conn.execute(
                    "CREATE TABLE IF NOT EXISTS token_counts ("
                    " encoding TEXT NOT NULL,"
                    " sha256 TEXT NOT NULL,"
                    " count INTEGER NOT NULL,"
                    " PRIMARY KEY (encoding, sha256)) WITHOUT ROWID"
                )
            )
        except BaseException:
            conn.close()
            raise
        return conn

    @staticmethod
    def _check_schema(conn: sqlite3.Connection) -> None:
        """Only our one table may exist: a VIEW, trigger or extra object named
        like it could loop forever or answer anything."""
        objects = conn.execute("SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_autoindex_%'").fetchall()
        if any((kind, name) != ("table", "token_counts") for kind, name in objects):
            raise _UntrustedCache(f"file is not a promptspec token cache (holds {objects[0][0]} {objects[0][1]!r}); file is not a database")

    def lookup(self, conn: sqlite3.Connection, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], int]:
        by_encoding: dict[str, list[str]] = {}
        for encoding, digest in keys:
            by_encoding.setdefault(encoding, []).append(digest)
        found: dict[tuple[str, str], int] = {}
        for encoding, digests in by_encoding.items():
            for start in range(0, len(digests), _SQL_CHUNK):
                chunk = digests[start : start + _SQL_CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = self._retry(
                    lambda: conn.execute(
                        f"SELECT sha256, count FROM token_counts WHERE encoding = ? AND sha256 IN ({marks})",
                        (encoding, *chunk),
                    ).fetchall()
                )
                for digest, count in rows:
                    found[(encoding, digest)] = int(count)
        return found

    def store(self, conn: sqlite3.Connection, rows: Sequence[tuple[str, str, int]]) -> None:
        def write() -> None:
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany(
                    "INSERT OR REPLACE INTO token_counts (encoding, sha256, count) VALUES (?, ?, ?)",
                    rows,
                )
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:  # some errors (e.g. SQLITE_FULL) already rolled back
                    conn.execute("ROLLBACK")
                raise

        if rows:
            self._retry(write)

    def quarantine(self) -> Path:
        """Move a corrupt database (and its WAL files) aside, keeping it for inspection."""
        stamp = f"corrupt-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}-{secrets.token_hex(3)}"
        aside = self.path.with_name(f"{self.path.name}.{stamp}")
        for suffix in ("", "-wal", "-shm"):
            source = Path(f"{self.path}{suffix}")
            try:
                os.replace(source, Path(f"{aside}{suffix}"))
            except FileNotFoundError:
                pass  # never existed, or another process already moved it
        return aside

    @staticmethod
    def _retry(action: Callable[[], _T]) -> _T:
        """Retry on SQLITE_BUSY the busy handler does not cover (e.g. WAL recovery)."""
        for attempt in range(_LOCK_RETRIES):
            try:
                return action()
            except sqlite3.OperationalError as exc:
                if not _is_busy(exc) or attempt == _LOCK_RETRIES - 1:
                    raise
                time.sleep(0.05 * 2**attempt)
        raise AssertionError("unreachable")


class TokenCounter:
    """Counts tokens of many texts, each distinct (encoding, text) once.

    Prompt variants repeat the same sections hundreds of times, so texts are
    keyed by SHA-256 and looked up in memory, then in a persistent SQLite
    cache; only the rest is encoded.  The cache is an optimisation only: if it
    is corrupt or unwritable a single ``TokenCacheWarning`` is emitted and
    counting carries on, exactly, without it.  Results never depend on the
    cache, the worker count or the order of texts.
    """

    def __init__(
        self,
        cache_dir: Path | None = None,
        *,
        workers: int | None = None,
        persist: bool = True,
        verify: bool = False,
    ) -> None:
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.workers = max(1, workers if workers is not None else min(2, os.cpu_count() or 1))
        self._disk: _DiskCache | None = _DiskCache(self.cache_dir) if persist else None
        self._memory: dict[tuple[str, str], int] = {}
        self._stats = CountStats()
        self._warned = False
        # verify: counts behind a gate (diff, check) are never taken from the
        # disk cache, which a pull request can commit or a CI cache restore;
        # they are counted afresh (and still written for later site builds).
        self.verify = verify

    @property
    def stats(self) -> CountStats:
        """Totals over every call on this counter so far."""
        return self._stats

    @property
    def cache_path(self) -> Path | None:
        """The SQLite file in use, or None when persistence is off or was abandoned."""
        return self._disk.path if self._disk is not None else None

    def count(self, text: str, encoding: str) -> int:
        """Tokens in ``text`` as plain text: ``<|endoftext|>`` counts as characters."""
        return self.count_many([(encoding, text)])[(encoding, text)]

    def count_many(self, items: Iterable[tuple[str, str]]) -> dict[tuple[str, str], int]:
        """Count ``(encoding, text)`` pairs; the result is keyed by the same pairs.

        One SQLite transaction per call writes every newly counted text, so a
        large build costs one fsync, not thousands.
        """
        started = time.perf_counter()
        pairs: dict[tuple[str, str], tuple[str, str]] = {}
        for encoding, text in items:
            if (encoding, text) not in pairs:
                check_known(encoding)
                pairs[(encoding, text)] = (encoding, _digest(text))

        texts_by_key: dict[tuple[str, str], str] = {}
        for (_, text), key in pairs.items():
            texts_by_key.setdefault(key, text)

        known = {key: self._memory[key] for key in texts_by_key if key in self._memory}
        missing = [key for key in texts_by_key if key not in known]

        if missing and not self.verify:
            wanted = missing
            nothing: dict[tuple[str, str], int] = {}
            from_disk = self._with_disk(lambda disk, conn: disk.lookup(conn, wanted), nothing)
            implausible = [key for key, n in from_disk.items() if not _plausible(n, texts_by_key[key])]
            if implausible:
                self._warn(f"promptspec token cache {self.cache_path} holds {len(implausible)} impossible count(s); counting those afresh.")
                for key in implausible:
                    del from_disk[key]
            known.update(from_disk)
            missing = [key for key in missing if key not in from_disk]
        fresh = self._encode({key: texts_by_key[key] for key in missing})
        if fresh:
            rows = [(enc, dig, n) for (enc, dig), n in fresh.items()]
            self._with_disk(lambda disk, conn: disk.store(conn, rows), None)

        known.update(fresh)
        self._memory.update(known)
        previous = self._stats
        self._stats = CountStats(
            distinct_texts=previous.distinct_texts + len(texts_by_key),
            cache_hits=previous.cache_hits + len(texts_by_key) - len(fresh),
            counted=previous.counted + len(fresh),
            tokens_counted=previous.tokens_counted + sum(fresh.values()),
            seconds=previous.seconds + time.perf_counter() - started,
        )
        return {pair: known[key] for pair, key in pairs.items()}

    # -- encoding ----------------------------------------------------------

    def _encode(self, texts: dict[tuple[str, str], str]) -> dict[tuple[str, str], int]:
        if not texts:
            return {}
        encodings = {key[0]: get_encoding(key[0]) for key in texts}
        keys = list(texts)
        volume = sum(len(text) for text in texts.values())
        if self.workers < 2 or len(keys) < 2 or volume < _PARALLEL_MIN_CHARS:
            return {key: len(encodings[key[0]].encode_ordinary(texts[key])) for key in keys}

        # Longest-first into the lightest bucket: texts are uneven (a whole
        # base prompt vs a one-line marker) and a thread stuck with all the
        # big ones would erase the gain.
        buckets: list[list[tuple[str, str]]] = [[] for _ in range(self.workers)]
        loads = [0] * self.workers
        for key in sorted(keys, key=lambda k: len(texts[k]), reverse=True):
            lightest = loads.index(min(loads))
            buckets[lightest].append(key)
            loads[lightest] += len(texts[key])

        def run(bucket: list[tuple[str, str]]) -> dict[tuple[str, str], int]:
            return {key: len(encodings[key[0]].encode_ordinary(texts[key])) for key in bucket}

        counts: dict[tuple[str, str], int] = {}
        with concurrent.futures.ThreadPoolExecutor(max_workers=self.workers) as pool:
            for part in pool.map(run, [b for b in buckets if b]):
                counts.update(part)
        return {key: counts[key] for key in keys}

    # -- persistence ---------------------------------------------------------

    def _with_disk(self, action: Callable[[_DiskCache, sqlite3.Connection], _T], default: _T) -> _T:
        """Run one cache operation on a fresh connection; never let it fail a count.

        A corrupt file is moved aside and the operation retried once on a new
        database; any other failure (read-only dir, full disk, permissions)
        turns persistence off for this counter.
        """
        for attempt in range(2):
            disk = self._disk
            if disk is None:
                return default
            conn: sqlite3.Connection | None = None
            try:
                conn = disk.connect()
                return action(disk, conn)
            except (sqlite3.Error, OSError) as exc:
                if conn is not None:
                    conn.close()
                    conn = None
                corrupt = isinstance(exc, sqlite3.DatabaseError) and _is_corruption(exc)
                if not corrupt or attempt > 0:
                    self._abandon(exc)
                    return default
                try:
                    aside = disk.quarantine()
                except OSError as again:
                    self._abandon(again, cause=exc)
                    return default
                self._warn(
                    f"promptspec token cache {disk.path} was corrupt ({exc}); moved it to "
                    f"{aside.name} and started a new one. Counts are unaffected."
                )
            finally:
                if conn is not None:
                    conn.close()
        return default

    def _abandon(self, exc: BaseException, *, cause: BaseException | None = None) -> None:
        """Stop persisting for this counter's lifetime, so the problem is reported once."""
        if self._disk is None:
            return
        path = self._disk.path
        self._disk = None
        detail = f"{cause}; then {exc}" if cause is not None else str(exc)
        self._warn(
            f"promptspec token cache {path} is unusable ({detail}); counting without it. "
            f"Counts are unaffected; point PROMPTSPEC_CACHE_DIR at a writable directory to keep them."
        )

    def _warn(self, message: str) -> None:
        if not self._warned:
            self._warned = True
            warnings.warn(message, TokenCacheWarning, stacklevel=2)


# --------------------------------------------------------------------------
# CLI helpers for `promptspec tokens FILE...`.
# --------------------------------------------------------------------------


def count_files(
    paths: Iterable[str | os.PathLike[str]],
    encoding: str,
    errors: str = "strict",
    *,
    counter: TokenCounter | None = None,
) -> list[tuple[int, str]]:
    """Count each file's exact contents (no newline or BOM normalisation).

    A prompt file that is not UTF-8 is almost always a mistake, so decoding is
    strict unless the caller opts into ``errors="replace"``, which counts
    each bad byte as U+FFFD.  Paths are echoed back as given.
    """
    if errors not in ("strict", "replace"):
        raise ValueError(f"errors must be 'strict' or 'replace', not {errors!r}")
    check_known(encoding)
    texts: list[tuple[str, str]] = []
    for path in paths:
        shown = os.fspath(path)
        try:
            data = read_regular_bytes(shown, limit=MAX_FILE_BYTES)
        except SpecError as exc:  # a FIFO, /dev/zero or a huge file must not hang or exhaust us
            raise TokenizerError(f"{shown}: cannot read ({exc.message})") from None
        try:
            texts.append((shown, data.decode("utf-8", errors)))
        except UnicodeDecodeError as exc:
            raise TokenizerError(
                f"{shown}: not valid UTF-8 (byte {exc.start}); pass --errors replace to count it anyway"
            ) from exc
    counter = counter if counter is not None else TokenCounter()
    counts = counter.count_many((encoding, text) for _, text in texts)
    return [(counts[(encoding, text)], shown) for shown, text in texts]


def format_token_lines(results: Sequence[tuple[int, str]]) -> str:
    """Render ``count<TAB>path`` lines and a final ``N<TAB>total`` line, like wc.

    The total line is always present (even for one file) so scripts can take
    the last line without counting arguments.
    """
    lines = [f"{count}\t{path}" for count, path in results]
    lines.append(f"{sum(count for count, _ in results)}\ttotal")
    return "\n".join(lines) + "\n"
