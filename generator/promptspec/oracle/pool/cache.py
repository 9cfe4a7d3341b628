"""What a released Codex answered, kept across runs, so that no configuration is
captured twice: `verify` after `import-codex` of the same binary re-uses the
import's captures, and a re-import of a known release starts no Codex at all.

A cache must never change a result, so an entry is found only under a key
made of everything that shapes a capture:

- the binary: a digest of the contents of every file in the native binary's
  folder and in the folders the npm launcher puts on PATH (a stand-in binary
  that reads a file beside it is keyed by that file too);
- promptspec's own capture code (the oracle modules that build the scratch
  world, drive the app-server and answer as the Responses API): an edit to
  any of them is a new key;
- the user's world (oracle/world.py): the `-c`/`--enable`/`--disable` flags
  and the contents of what was copied from their Codex home.  A world that
  reaches outside what can be hashed cheaply is never cached: a `--cwd`
  project, MCP servers (programs of the user's), config values that name files;
- the day: Codex reads the clock (`<current_date>`), so an entry is good for
  the day it was captured on (older days are removed);
- the machine: the operating system and architecture.

Within a key, an entry is one configuration (or one thread) and holds Codex's
answer with the scratch world's folder replaced by a token, which the reader
puts back as its own folder (the scratch folder is the one thing that differs
between two runs; docs/verify.md).  Only answers are kept, never comparisons:
a changed spec is compared afresh with the same captures.

Storage: `<user cache>/codex-captures/<date>-<key>/<kind>.json.gz`, one file per
kind (first requests, threads, the catalog, the bundled skills, and the specs
imports wrote from them: `Memo`).  Every piece
of an answer (a message, a tool, the instructions) is stored once per file (a
release's matrix repeats its instructions and tools hundreds of times), so a
full matrix is a few hundred kilobytes.  Files
are written atomically; a broken or foreign file reads as a miss, and a cache
that cannot be written only costs the next run its speed.
"""

from __future__ import annotations

import datetime as _dt
import gzip
import hashlib
import json
import os
import platform
import re
import shutil
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from ...util.atomic import write_bytes

if TYPE_CHECKING:
    from ..binary import CodexBinary
    from ..world import World

FORMAT = 2
"""Bumped when the layout of an entry changes."""
TOKEN = "@@promptspec-scratch@@"
"""What a stored answer holds where the scratch world's folder was."""
SHAPING = ("appserver.py", "binary.py", "capture.py", "recorder.py", "scratch.py", "thread.py", "world.py",
           "pool/cache.py", "pool/harvest.py", "pool/worlds.py")
"""The oracle modules whose code shapes a capture, under oracle/ (their bytes are part of the key)."""
MAX_FILES = 64
MAX_BYTES = 4 << 30
"""Most files, and bytes, hashed for a binary's folders; beyond that the binary is not cached."""
CHUNK = 2048
"""Bytes of JSON up to which a piece of an entry is stored whole (once per file)."""
PLAIN = re.compile(r"[A-Za-z0-9_./+-]+")
"""A scratch folder the relocation can replace as plain text (in JSON strings too)."""
KEPT_DAYS = 1
"""Key folders of days before today minus this many are removed."""


def cache_root() -> Path:
    """`codex-captures` in the user cache folder ($PROMPTSPEC_CACHE_DIR wins, as for token counts)."""
    from ...measure.counter import default_cache_dir

    return default_cache_dir() / "codex-captures"


def relocate(obj: Any, old: str, new: str) -> Any:
    """`obj` with every occurrence of `old` in its strings (dict keys too, and
    the fields of dataclasses such as Config and Thread) replaced by `new`.
    `old` is a plain folder or TOKEN (`plain`): JSON writes it as it is and no
    escape can hold it, so a dict or list is replaced in its JSON text (one
    C-speed pass instead of a walk over every string)."""
    if isinstance(obj, str):
        return obj.replace(old, new) if old in obj else obj
    if isinstance(obj, (dict, list)):
        try:
            text = _dumps(obj)
        except TypeError:  # holds dataclasses (a list of Config): item by item
            if isinstance(obj, dict):
                return {relocate(k, old, new): relocate(v, old, new) for k, v in obj.items()}
            return [relocate(v, old, new) for v in obj]
        return json.loads(text.replace(old, new)) if old in text else obj
    if isinstance(obj, tuple):
        return tuple(relocate(v, old, new) for v in obj)
    if hasattr(obj, "__dataclass_fields__") and not isinstance(obj, type):
        return type(obj)(**{f.name: relocate(getattr(obj, f.name), old, new) for f in fields(obj) if f.init})
    return obj


def holds(obj: Any, text: str) -> bool:
    """Whether any string in `obj` contains `text` (a plain one, as for relocate)."""
    if isinstance(obj, str):
        return text in obj
    if isinstance(obj, (dict, list)):
        try:
            return text in _dumps(obj)
        except TypeError:
            return any(holds(v, text) for v in (obj if isinstance(obj, list) else [*obj.keys(), *obj.values()]))
    if isinstance(obj, tuple):
        return any(holds(v, text) for v in obj)
    if hasattr(obj, "__dataclass_fields__") and not isinstance(obj, type):
        return any(holds(getattr(obj, f.name), text) for f in fields(obj))
    return False


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


# ---------------------------------------------------------------------------
# The key


def _files_of(folders: list[Path]) -> list[Path] | None:
    out: list[Path] = []
    for folder in folders:
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            return None
        out += [p for p in entries if p.is_file()]
        if len(out) > MAX_FILES:
            return None
    return out


def binary_digest(binary: "CodexBinary", memo: Path | None = None) -> str | None:
    """The digest of the binary's folder and its PATH folders (None: too large to
    key, not cached).  The contents are hashed once per change: a memo keyed by
    each file's device, inode, size, mtime and ctime (every write changes the
    ctime, which no one can set back) keeps the digest of a 200 MB binary."""
    folders = [binary.path.parent, *(Path(p) for p in binary.extra_path)]
    files = _files_of(folders)
    if files is None:
        return None
    try:
        stats = [os.stat(p) for p in files]
    except OSError:
        return None
    if sum(s.st_size for s in stats) > MAX_BYTES:
        return None
    marks = [[str(p), s.st_dev, s.st_ino, s.st_size, s.st_mtime_ns, s.st_ctime_ns] for p, s in zip(files, stats)]
    known = _read_json(memo) if memo is not None else None
    if isinstance(known, dict) and known.get("marks") == marks and isinstance(known.get("digest"), str):
        return known["digest"]
    h = hashlib.sha256()
    for p in files:
        rel = str(p.relative_to(p.parent.parent))
        h.update(f"{rel}\0{p.stat().st_size}\0".encode())
        try:
            with open(p, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
        except OSError:
            return None
    digest = h.hexdigest()
    if memo is not None and [[str(p), *_mark(p)] for p in files] == marks:  # unchanged while it was read
        _write_json(memo, {"marks": marks, "digest": digest})
    return digest


def _mark(p: Path) -> list[int]:
    s = os.stat(p)
    return [s.st_dev, s.st_ino, s.st_size, s.st_mtime_ns, s.st_ctime_ns]


def code_digest() -> str:
    """The digest of promptspec's capture code (SHAPING)."""
    h = hashlib.sha256()
    here = Path(__file__).resolve().parent.parent
    for name in SHAPING:
        h.update(name.encode() + b"\0" + (here / name).read_bytes() + b"\0")
    return h.hexdigest()


PATH_LIKE = re.compile(r"^(/|~|\.\.?/)")
FILE_KEY = re.compile(r"(^|[._])(file|path|command|args|cwd)($|[._])", re.I)


def _reaches_files(value: Any, key: str = "") -> bool:
    """Whether a config value may make Codex read a file we do not hash
    (`model_instructions_file`, a path, a command)."""
    if FILE_KEY.search(key):
        return True
    if isinstance(value, str):
        return bool(PATH_LIKE.match(value))
    if isinstance(value, dict):
        return any(_reaches_files(v, f"{key}.{k}") for k, v in value.items())
    if isinstance(value, list):
        return any(_reaches_files(v, key) for v in value)
    return False


KNOWN_WORLD = {"cwd", "codex_home", "overrides", "enable", "disable", "skipped"}


def world_key(world: "World | None", codex_home: Path) -> tuple[Any, str | None]:
    """(what the key holds for the world, None) or (None, why it is not cached).
    `codex_home` is the scratch home after the world was copied into it."""
    if world is None or world.empty:
        return "scratch", None
    from ..world import mcp_servers

    extra = [f.name for f in fields(world) if f.name not in KNOWN_WORLD and getattr(world, f.name)]
    if extra:
        return None, f"the world sets {extra[0]}"
    if world.cwd is not None:
        return None, "Codex runs in your project (--cwd), which the cache cannot key"
    if mcp_servers(world):
        return None, "MCP servers are programs of yours, which the cache cannot key"
    if any(_reaches_files(o.value, o.key) for o in world.overrides) or _reaches_files(world.home_config()):
        return None, "a config value names a file or a command"
    h = hashlib.sha256()
    for p in sorted(codex_home.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(codex_home)).encode() + b"\0" + p.read_bytes() + b"\0")
    return {"args": world.args(), "home": h.hexdigest()}, None


# ---------------------------------------------------------------------------
# Files of one key


def _read_json(path: Path) -> Any:
    try:
        raw = path.read_bytes()
        return json.loads(gzip.decompress(raw) if path.suffix == ".gz" else raw)
    except (OSError, ValueError, EOFError, gzip.BadGzipFile):
        return None


def _write_json(path: Path, data: Any) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        raw = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
        write_bytes(path, gzip.compress(raw, 6, mtime=0) if path.suffix == ".gz" else raw, durable=False)
    except OSError:
        pass  # a cache that cannot be written costs speed, never a result


class _Chunks:
    """The pieces of one file: an entry is split into containers down to pieces
    of at most CHUNK bytes of JSON, each piece stored once as its JSON text (a
    release's matrix repeats its instructions and tools hundreds of times).
    A node is ["j", index] (a piece), ["d", [[key, node]...]] or ["l", [node...]]."""

    def __init__(self, table: list[str]):
        self.table = table
        self.index = {t: i for i, t in enumerate(table)}

    def pack(self, obj: Any) -> Any:
        text = _dumps(obj)
        if len(text) <= CHUNK or not isinstance(obj, (dict, list)):
            if text not in self.index:
                self.index[text] = len(self.table)
                self.table.append(text)
            return ["j", self.index[text]]
        if isinstance(obj, dict):
            return ["d", [[k, self.pack(v)] for k, v in obj.items()]]
        return ["l", [self.pack(v) for v in obj]]

    def unpack(self, node: Any, old: str, new: str) -> Any:
        kind, value = node
        if kind == "j":
            text = self.table[value]
            return json.loads(text.replace(old, new) if old in text else text)
        if kind == "d":
            return {k.replace(old, new): self.unpack(v, old, new) for k, v in value}
        if kind == "l":
            return [self.unpack(v, old, new) for v in value]
        raise ValueError(kind)


@dataclass
class Store:
    """The entries of one key: `get(kind, key, base)` / `put(kind, {key: value}, base)`,
    values JSON data given in the terms of the scratch folder `base`, stored
    with TOKEN in its place."""

    folder: Path
    date: str
    _loaded: dict[str, tuple[_Chunks, dict[str, Any]]] | None = None

    def _kind(self, kind: str) -> tuple[_Chunks, dict[str, Any]]:
        self._loaded = self._loaded or {}
        if kind not in self._loaded:
            data = _read_json(self.folder / f"{kind}.json.gz")
            ok = (isinstance(data, dict) and data.get("format") == FORMAT and isinstance(data.get("chunks"), list)
                  and isinstance(data.get("entries"), dict) and all(isinstance(t, str) for t in data["chunks"]))
            self._loaded[kind] = (_Chunks(data["chunks"]), data["entries"]) if ok else (_Chunks([]), {})
        return self._loaded[kind]

    def get(self, kind: str, key: str, base: str = TOKEN) -> Any:
        chunks, entries = self._kind(kind)
        if key not in entries:
            return None
        try:
            return chunks.unpack(entries[key], TOKEN, base)
        except (ValueError, IndexError, TypeError, AttributeError):
            return None  # an edited or broken file: a miss

    def put(self, kind: str, items: Mapping[str, Any], base: str = TOKEN) -> None:
        """Store the items that do not already hold TOKEN (they could not be told apart from the folder)."""
        if not items or _dt.date.today().isoformat() != self.date:  # captured across midnight: not this key's day
            return
        chunks, entries = self._kind(kind)
        for key, value in items.items():
            if not holds(value, TOKEN):
                entries[key] = chunks.pack(relocate(value, base, TOKEN))
        _write_json(self.folder / f"{kind}.json.gz", {"format": FORMAT, "chunks": chunks.table, "entries": entries})


@dataclass(frozen=True)
class Memo:
    """A result derived from one run's answers (an import's spec), kept in the
    same store: found under a digest of those answers in the cache's terms
    (the scratch folder as TOKEN) and of whatever else the caller says made
    it (its code), so that a re-run which met only cached answers takes the
    result instead of deriving it again.  The store's key (binary, world,
    capture code, day, machine) bounds it as it bounds the answers."""

    store: Store
    base: str

    def key(self, made_from: Iterable[Any]) -> str:
        """`made_from`: pieces of JSON data, hashed one at a time (a full
        matrix's answers are some 100 MB of JSON, never held as one text)."""
        h = hashlib.sha256()
        for piece in made_from:
            h.update(_dumps(piece).replace(self.base, TOKEN).encode("utf-8"))
            h.update(b"\0")
        return h.hexdigest()

    def get(self, kind: str, key: str) -> Any:
        return self.store.get(kind, key, self.base)

    def put(self, kind: str, key: str, value: Any) -> None:
        self.store.put(kind, {key: value}, self.base)


def open_store(binary: "CodexBinary", world: "World | None", codex_home: Path, date: str,
               root: Path | None = None) -> tuple[Store | None, str | None]:
    """The store for this binary, world and day, or (None, why not)."""
    root = root or cache_root()
    digest = binary_digest(binary, root / "binaries" / (hashlib.sha256(str(binary.path).encode()).hexdigest()[:24] + ".json"))
    if digest is None:
        return None, "the binary's folder is too large to key"
    wkey, why = world_key(world, codex_home)
    if why:
        return None, why
    key = {"format": FORMAT, "binary": digest, "release": binary.release, "code": code_digest(), "world": wkey,
           "date": date, "machine": [platform.system(), platform.machine(), shutil.which("git") is not None]}
    name = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:32]
    folder = root / f"{date}-{name}"
    _prune(root, date)
    if not (folder / "key.json").is_file():
        _write_json(folder / "key.json", key)
    return Store(folder, date), None


def _prune(root: Path, today: str) -> None:
    """Remove key folders of days that can no longer be hit."""
    try:
        oldest = (_dt.date.fromisoformat(today) - _dt.timedelta(days=KEPT_DAYS)).isoformat()
        entries = list(root.iterdir())
    except (OSError, ValueError):
        return
    for p in entries:
        day = p.name[:10]
        if re.fullmatch(r"\d{4}-\d\d-\d\d", day) and day < oldest and p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)


def plain(base: Path) -> bool:
    """Whether a scratch folder can be relocated as plain text."""
    return bool(PLAIN.fullmatch(str(base))) and TOKEN not in str(base)


