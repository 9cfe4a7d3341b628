"""The user's own world for a capture: their project, their Codex home, their
config values and feature flags.

What Codex sends depends on where it runs (the AGENTS.md chain of the
project, the global `$CODEX_HOME/AGENTS.md`), on config (`developer_instructions`,
`project_doc_max_bytes`, `web_search`, MCP servers) and on feature flags.  A
`World` carries those into the scratch run and nothing else: from the Codex
home only what shapes the prompt is copied (config.toml, AGENTS.md, skills),
never credentials, sessions, history or logs; config values that hold
credentials (MCP `env`, headers, tokens) are passed to Codex but never
recorded (`public_overrides`).
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UsageError

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

COPIED = ("config.toml", "AGENTS.md", "AGENTS.override.md")
COPIED_FOLDERS = ("skills",)
CREDENTIALS = ("auth.json", ".credentials.json", "credentials.json")
"""Files of a Codex home that hold secrets: named, skipped, never copied."""
SECRET_KEY = re.compile(r"(^|[._])(env|headers|http_headers|env_http_headers|bearer_token|token|api_key|secret|password|auth)([._]|$)", re.I)
MAX_HOME_FILE = 4 * 1024 * 1024
TEXT_KEYS = ("developer_instructions",)
"""config keys whose text Codex puts into the first request as written: spec
values, turned back into `{{ KEY }}` wherever the captured texts hold them."""


@dataclass(frozen=True)
class Override:
    """One `-c KEY=VALUE`: the value parsed as TOML, as Codex parses it."""

    key: str
    raw: str
    value: Any

    @property
    def secret(self) -> bool:
        return bool(SECRET_KEY.search(self.key))


def parse_override(text: str) -> Override:
    """`KEY=VALUE` with a TOML value; one line naming it otherwise."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key or not re.fullmatch(r"[A-Za-z0-9_.\-\"]+", key):
        raise UsageError(f"-c {text!r}: expected KEY=VALUE (a dotted config key, a TOML value)")
    try:
        value = tomllib.loads(f"v = {raw.strip()}")["v"]
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"-c {key}: the value {raw.strip()[:60]!r} is not valid TOML ({exc}); quote a string: -c {key}='\"...\"'") from None
    return Override(key, raw.strip(), value)


@dataclass(frozen=True)
class World:
    cwd: Path | None = None
    codex_home: Path | None = None
    overrides: tuple[Override, ...] = ()
    enable: tuple[str, ...] = ()
    disable: tuple[str, ...] = ()
    skipped: tuple[str, ...] = field(default=(), compare=False)  # credential files of the home, not copied

    @property
    def empty(self) -> bool:
        return not (self.cwd or self.codex_home or self.overrides or self.enable or self.disable)

    def args(self) -> list[str]:
        """The flags every Codex process of the run gets."""
        out: list[str] = []
        for o in self.overrides:
            out += ["-c", f"{o.key}={o.raw}"]
        for f in self.enable:
            out += ["--enable", f]
        for f in self.disable:
            out += ["--disable", f]
        return out

    def public_overrides(self) -> list[str]:
        """The overrides as provenance.json records them: credentials redacted."""
        return [f"{o.key}=<redacted>" if o.secret else f"{o.key}={o.raw}" for o in self.overrides]

    def record(self) -> dict[str, Any]:
        """The world as provenance.json and verify reports record it: never a
        credential (recorded_world reads it back)."""
        return {
            "cwd": str(self.cwd) if self.cwd else None,
            "codex_home": str(self.codex_home) if self.codex_home else None,
            "config_overrides": self.public_overrides(),
            "enable": list(self.enable),
            "disable": list(self.disable),
            "credentials_skipped": list(self.skipped),
        }

    def home_config(self) -> dict[str, Any]:
        """The user's config.toml (empty when there is none or it does not parse)."""
        if self.codex_home is None:
            return {}
        path = self.codex_home / "config.toml"
        try:
            return tomllib.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            return {}

    def config(self, key: str) -> Any:
        """A top-level config key as Codex sees it: the last `-c`, else the home's config.toml."""
        for o in reversed(self.overrides):
            if o.key == key:
                return o.value
        return self.home_config().get(key)

    def text_values(self) -> dict[str, str]:
        """Top-level config texts the prompt may carry (developer_instructions...),
        from the home's config.toml and `-c`: spec values a person can change."""
        out = {k: v for k, v in self.home_config().items() if k in TEXT_KEYS and isinstance(v, str) and v}
        for o in self.overrides:  # only keys whose text Codex sends as written: `web_search="disabled"` is a switch, not prose
            if o.key in TEXT_KEYS and isinstance(o.value, str) and o.value:
                out[o.key] = o.value
        return out


def mcp_servers(world: "World | None") -> list[str]:
    """The MCP servers the run configures (`-c mcp_servers.NAME.*`, the home's
    `[mcp_servers.NAME]`), enabled ones only, in name order."""
    if world is None:
        return []
    names = {n for n, v in (world.home_config().get("mcp_servers") or {}).items() if isinstance(v, dict) and v.get("enabled", True) is not False}
    for o in world.overrides:
        parts = o.key.split(".")
        if parts[0] == "mcp_servers" and len(parts) >= 2:
            if parts[2:] == ["enabled"] and o.value is False:
                names.discard(parts[1])
            else:
                names.add(parts[1])
    return sorted(names)


def missing_mcp_tools(world: "World | None", bodies: Any) -> list[str]:
    """The configured MCP servers none of whose tools the requests carry
    (Codex names them `mcp__NAME__...`, or lists the namespace `mcp__NAME` as
    deferred in newer releases): servers that did not start, hung, or list nothing."""
    text = "".join(json.dumps(b.get("tools")) + json.dumps(b.get("input")) for b in bodies if isinstance(b, dict))
    searchable = {n for b in bodies for n in searchable_servers(b)}
    return [n for n in mcp_servers(world) if n not in searchable and not re.search(rf"mcp__{re.escape(n)}(?:__|\b)", text)]


def searchable_servers(body: Any) -> list[str]:
    """The sources a `tool_search` tool's description lists (`- NAME` lines,
    as releases around 0.150 name the MCP servers whose tools it loads)."""
    out: list[str] = []
    for tool in (body.get("tools") or []) if isinstance(body, dict) else []:
        if isinstance(tool, dict) and tool.get("type") == "tool_search" and isinstance(tool.get("description"), str):
            out += re.findall(r"^- ([A-Za-z0-9_.-]+)$", tool["description"], re.M)
    return out


def shows_mcp(bodies: Any) -> bool:
    """Whether these requests would show a started server's tools: one with a
    `tools` field does (as functions, or the namespace in `<tools>`); a
    code-mode model's (no `tools` field, only `additional_tools`) may keep
    them behind its `exec` tool, with no trace in a first request."""
    return any(isinstance(b, dict) and "tools" in b for b in bodies)


def check_mcp(world: "World | None", bodies: Any, release: str) -> list[str]:
    """A configured MCP server whose tools requests that would show them lack
    did not start (or hung past Codex's startup timeout): named, rather than
    imported or verified without it.  Returns the servers these requests
    cannot tell about (code-mode models only): said as not modelled."""
    from .binary import CodexError

    bodies = [b for b in bodies if b is not None]
    missing = missing_mcp_tools(world, bodies)
    if missing and shows_mcp(bodies):
        raise CodexError(f"MCP server {missing[0]!r} did not start, hung, or lists no tools (its tools are not in the request)",
                         release=release,
                         hint=f"run its command by hand; check mcp_servers.{missing[0]}.command/args (Codex waits startup_timeout_sec, --timeout bounds the turn)")
    return missing


def make_world(cwd: str | Path | None = None, codex_home: str | Path | None = None, overrides=(), enable=(), disable=()) -> World:
    """A World from command-line values, each checked with a one-line error."""
    folder = None
    if cwd is not None:
        folder = Path(cwd).expanduser()
        if not folder.is_dir():
            raise UsageError(f"--cwd {cwd}: not a folder (give the project folder Codex should run in)")
        folder = folder.resolve()
    home = None
    skipped: tuple[str, ...] = ()
    if codex_home is not None:
        home = Path(codex_home).expanduser()
        if not home.is_dir():
            raise UsageError(f"--codex-home {codex_home}: not a folder (give the Codex home, e.g. ~/.codex)")
        home = home.resolve()
        skipped = tuple(name for name in CREDENTIALS if (home / name).exists())
    for flag in (*enable, *disable):
        if not re.fullmatch(r"[a-z0-9_]+", flag):
            raise UsageError(f"feature {flag!r}: a feature name is lower case letters, digits and '_' (see `codex features list`)")
    return World(folder, home, tuple(parse_override(o) for o in overrides), tuple(enable), tuple(disable), skipped)


def recorded_world(record: Any, where: str = "provenance.json") -> World | None:
    """The world an import ran in, from its provenance.json `world` record, so
    that `verify` compares in the same world by default.  None for an import
    in the scratch project.  A value the record could not keep (a credential,
    `<redacted>`) or a folder that is gone is one line asking for the flags."""
    if not isinstance(record, dict) or not record:
        return None
    overrides = record.get("config_overrides") or []
    redacted = [o.partition("=")[0] for o in overrides if isinstance(o, str) and o.endswith("=<redacted>")]
    if redacted:
        raise UsageError(f"{where}: the import ran with -c {redacted[0]}=..., a credential it did not record"
                         " (pass the world again: --cwd, --codex-home, -c, --enable, --disable)")
    for key, flag in (("cwd", "--cwd"), ("codex_home", "--codex-home")):
        value = record.get(key)
        if value is not None and not (isinstance(value, str) and Path(value).is_dir()):
            raise UsageError(f"{where}: the import ran with {flag} {value}, which is not a folder here"
                             f" (pass {flag} and the other world flags for this machine)")
    try:
        return make_world(record.get("cwd"), record.get("codex_home"), [str(o) for o in overrides],
                          [str(f) for f in record.get("enable") or []], [str(f) for f in record.get("disable") or []])
    except UsageError as exc:
        raise UsageError(f"{where}: the recorded world does not apply: {exc}") from None


def populate_home(world: World, target: Path) -> list[str]:
    """Copy what shapes the prompt from the user's Codex home into the scratch
    home; returns the relative paths copied.  Regular files only, bounded;
    symlinks are not followed out."""
    if world.codex_home is None:
        return []
    copied = []
    for name in COPIED:
        src = world.codex_home / name
        if src.is_file() and not src.is_symlink() and src.stat().st_size <= MAX_HOME_FILE:
            shutil.copyfile(src, target / name)
            copied.append(name)
    for name in COPIED_FOLDERS:
        src = world.codex_home / name
        if src.is_dir() and not src.is_symlink():
            for path in sorted(src.rglob("*")):
                rel = path.relative_to(world.codex_home)
                if any(p.startswith(".") for p in rel.parts) or path.is_symlink():
                    continue  # bundled system skills are unpacked by Codex itself; hidden files stay
                if path.is_dir():
                    (target / rel).mkdir(parents=True, exist_ok=True)
                elif path.is_file() and path.stat().st_size <= MAX_HOME_FILE:
                    (target / rel).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(path, target / rel)
                    copied.append(rel.as_posix())
    return copied


def project_root(cwd: Path) -> Path:
    """Where Codex's AGENTS.md chain starts: the nearest folder up from cwd with a `.git`, else cwd."""
    for folder in (cwd, *cwd.parents):
        if (folder / ".git").exists():
            return folder
    return cwd
