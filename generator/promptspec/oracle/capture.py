"""Capturing Codex's first requests for many configurations in one go.

One app-server process serves every configuration as its own thread (per-thread
`config` overrides carry model, personality, sandbox and approval policy), so a
release's whole matrix costs one Codex start plus ~60 ms per variant.  The
release's answers are kept as data: the catalog from `debug models`, each
first request as sent, and the values the release refused.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping, Sequence

from ..errors import escape_controls
from .appserver import AppServer
from .binary import CodexBinary, CodexError
from .recorder import Recorder, start_recorder
from .scratch import PROMPT, Scratch, provider_overrides, run

PERSONALITIES = ("unset", "none", "friendly", "pragmatic")
MODES = ("unset", "default", "plan")
SANDBOX_MODES = ("read-only", "workspace-write", "danger-full-access")
APPROVAL_POLICIES = ("untrusted", "on-failure", "on-request", "never")
UNSET = "unset"

COMPLETION_GRACE = 15.0
"""Seconds to wait for a turn to finish once its request was recorded."""

AXES = ("model", "personality", "mode", "sandbox_mode", "approval_policy")


@dataclass(frozen=True)
class Config:
    """One configuration, in Codex's names; `unset` means the key is not given."""

    model: str
    personality: str = UNSET
    mode: str = UNSET
    sandbox_mode: str = "workspace-write"
    approval_policy: str = "on-request"
    extra: tuple[tuple[str, str], ...] = ()  # more config keys (value as JSON), for probes; not an axis

    @property
    def values(self) -> dict[str, str]:
        return {a: getattr(self, a) for a in AXES}

    @property
    def id(self) -> str:
        return "/".join(getattr(self, a) for a in AXES)

    def codex_config(self) -> dict[str, Any]:
        cfg: dict[str, Any] = {"model": self.model, "sandbox_mode": self.sandbox_mode, "approval_policy": self.approval_policy}
        if self.personality != UNSET:
            cfg["personality"] = self.personality
        cfg.update((k, json.loads(v)) for k, v in self.extra)
        return cfg


@dataclass
class Capture:
    config: Config
    body: dict[str, Any] | None
    refused: str | None = None
    transient: bool = False  # refused for a reason other than the release's answer (a timeout): never cached


@dataclass
class Harvest:
    release: str
    sentinels: dict[str, str]
    catalog: dict[str, Any]
    captures: list[Capture] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    models: list[str] = field(default_factory=list)  # the models imported (empty: all)
    only: dict[str, list[str]] = field(default_factory=dict)  # the axis values imported, per axis limited (capture.check_only)
    roots_sorted: bool | None = None  # does the release sort the writable roots? (None: not probed)
    world: Any = None  # the user's World (oracle/world.py) the captures ran in; None: the scratch project
    mcp_deferred: dict[str, Any] = field(default_factory=dict)  # per MCP server a release defers: the namespace it loads (oracle/mcp.py)
    mcp_hidden: list[str] = field(default_factory=list)  # MCP servers no captured request shows (code-mode models only)
    pool: Any = None  # oracle/pool/worlds.py PoolStats: how many came from the cache, how many worlds ran
    memo: Any = None  # oracle/pool/cache.py Memo: where what is derived from these answers is kept (None: no cache)


def debug_models(binary: CodexBinary, scratch: Scratch, timeout: float = 120.0) -> dict[str, Any]:
    out = run(binary, scratch, ["debug", "models"], "debug models", timeout)
    try:
        data = json.loads(out)
    except json.JSONDecodeError:
        raise CodexError("`codex debug models` printed something that is not JSON", release=binary.release,
                         hint="report the release") from None
    if not isinstance(data, dict) or not isinstance(data.get("models"), list) or not data["models"]:
        raise CodexError("`codex debug models` printed no model catalog", release=binary.release, hint="report the release")
    check_catalog(data, binary.release)
    return data


MAX_MODELS = 200
"""Most models a catalog may list (a release lists about a dozen)."""
MAX_CONFIGS = 50 * len(PERSONALITIES) * len(MODES) * len(SANDBOX_MODES) * len(APPROVAL_POLICIES)
"""Most configurations one harvest captures (50 models' matrices); more needs --model."""


def check_catalog(catalog: dict[str, Any], release: str) -> None:
    """Every slug is a safe name (it becomes a file name and a URL), once, in a
    catalog of bounded size: checked before anything is captured or written."""
    from ..spec.model import NAME_RE

    models = catalog["models"]
    if len(models) > MAX_MODELS:
        raise CodexError(f"the catalog lists {len(models)} models (at most {MAX_MODELS})", release=release,
                         hint="a broken or hostile binary; report the release")
    seen: set[str] = set()
    for m in models:
        slug = m.get("slug") if isinstance(m, dict) else None
        if not isinstance(slug, str) or not NAME_RE.match(slug) or ".." in slug or slug in seen:
            shown = escape_controls(str(slug)[:80])
            raise CodexError(f"the catalog's model slug {shown!r} is not a safe name, or is listed twice", release=release,
                             hint="a broken or hostile binary; nothing was written")
        seen.add(slug)


def prompt_input(binary: CodexBinary, scratch: Scratch, overrides: Iterable[str] = ()) -> list[Any]:
    args = ["debug", "prompt-input"]
    for o in overrides:
        args += ["-c", o]
    out = run(binary, scratch, args, "debug prompt-input")
    try:
        return json.loads(out)
    except json.JSONDecodeError:
        raise CodexError("`codex debug prompt-input` printed something that is not JSON", release=binary.release,
                         hint="report the release") from None


def full_matrix(catalog: dict[str, Any], approvals: Iterable[str] = APPROVAL_POLICIES) -> list[Config]:
    models = [m["slug"] for m in catalog["models"]]
    return [Config(*combo) for combo in itertools.product(models, PERSONALITIES, MODES, SANDBOX_MODES, tuple(approvals))]


ONLY_AXES: dict[str, tuple[str, ...]] = {"personality": PERSONALITIES, "mode": MODES, "sandbox_mode": SANDBOX_MODES,
                                         "approval_policy": APPROVAL_POLICIES}
"""The axes a harvest may be limited to some values of (`import-codex --only`), in Codex's names; the model has --model."""


def check_only(only: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    """`only` as the harvest keeps it (each axis's values in the matrix's
    order), or a UsageError naming the axis or value and what is known."""
    from ..errors import UsageError

    out: dict[str, list[str]] = {}
    for axis, values in only.items():
        known = ONLY_AXES.get(axis)
        if known is None:
            hint = "; a model: --model SLUG" if axis == "model" else ""
            raise UsageError(f"--only: no axis {axis!r} (known: {', '.join(ONLY_AXES)}{hint})")
        for value in values:
            if value not in known:
                raise UsageError(f"--only: {axis} has no value {value!r} (known: {', '.join(known)})")
        out[axis] = [v for v in known if v in values]
    return out


def restrict(configs: Iterable[Config], only: Mapping[str, Sequence[str]]) -> list[Config]:
    """The configurations whose value on every axis `only` names is one of its values."""
    return [c for c in configs if all(getattr(c, axis) in values for axis, values in only.items())]


def sample(configs: list[Config], n: int | None) -> list[Config]:
    """A deterministic spread of `n` configurations (by hash of their ids), or all."""
    if n is None or n >= len(configs):
        return list(configs)
    ranked = sorted(configs, key=lambda c: hashlib.sha256(c.id.encode()).hexdigest())
    keep = set(ranked[:n])
    return [c for c in configs if c in keep]


def capture(binary: CodexBinary, scratch: Scratch, configs: list[Config], timeout: float = 60.0,
            port: int = 0) -> Iterator[Capture]:
    """The first request of a thread per configuration, through one app-server."""
    if not configs:
        return
    # Bounded by itself: a few requests per thread at most, a few seconds per thread at worst.
    rec = start_recorder(binary.release, 3 * len(configs) + 10, 120.0 + 5.0 * len(configs), port)
    try:
        for start in range(0, len(configs), THREADS_PER_SERVER):
            with AppServer(binary, scratch, provider_overrides(rec.url), timeout=timeout) as srv:
                srv.initialize()
                for cfg in configs[start:start + THREADS_PER_SERVER]:
                    yield _one(srv, rec, scratch, cfg, timeout)
    finally:
        rec.stop()


THREADS_PER_SERVER = 10
"""An app-server keeps every thread it started loaded, and each new one costs a
little more than the last; a fresh server every ten keeps the cost flat.
Measured on 0.125.0 (2026-12-02, Codex CPU seconds for 100 first requests):
100 per server 18.1, 50: 15.8, 25: 13.1-14.7, 10: 11.6-12.4, 4: 11.8, 2: 12.4."""


def _one(srv: AppServer, rec: Recorder, scratch: Scratch, cfg: Config, timeout: float) -> Capture:
    try:
        started = srv.request("thread/start", {"cwd": str(scratch.cwd), "ephemeral": True, "model": cfg.model,
                                               "config": cfg.codex_config()})
    except CodexError as exc:
        return Capture(cfg, None, refused=_reason(exc), transient=not exc.refusal)
    tid = started["thread"]["id"]
    params: dict[str, Any] = {"threadId": tid, "input": [{"type": "text", "text": PROMPT}]}
    if cfg.mode != UNSET:
        params["collaborationMode"] = {"mode": cfg.mode, "settings": {"model": cfg.model, "reasoning_effort": None,
                                                                        "developer_instructions": None}}
    try:
        turn = srv.request("turn/start", params)
    except CodexError as exc:
        return Capture(cfg, None, refused=_reason(exc), transient=not exc.refusal)
    # Codex keys its prompt cache by thread: that finds this thread's request even
    # if an earlier turn were still talking to the recorder.
    got = rec.first_with("prompt_cache_key", tid, timeout)
    if got is None:
        if scratch.mcp:
            raise CodexError(f"no request reached the recorder within {timeout:.0f} s: MCP server {scratch.mcp[0]!r} did not start or hangs"
                             " (Codex waits for its MCP servers before the first request)", release=srv.binary.release,
                             hint=f"run mcp_servers.{scratch.mcp[0]}.command by hand; it must answer `initialize` on stdout")
        raise CodexError(f"no request reached the recorder for {cfg.id} within {timeout:.0f} s", release=srv.binary.release,
                         hint="a hung Codex; rerun, or report the release")
    try:
        srv.wait_for("turn/completed", {"threadId": tid}, min(timeout, COMPLETION_GRACE))
    except CodexError:
        # The request is all we need; a turn that does not settle is stopped, not waited for.
        turn_id = (turn.get("turn") or {}).get("id")
        try:
            srv.request("turn/interrupt", {"threadId": tid, "turnId": turn_id})
        except CodexError:
            pass
    body = got.body
    if not isinstance(body, dict):
        raise CodexError(f"the request for {cfg.id} is not JSON", release=srv.binary.release, hint="report the release")
    return Capture(cfg, body)


def _reason(exc: CodexError) -> str:
    text = str(exc)
    return text.split("was refused: ", 1)[-1].rsplit(" (this release", 1)[0]
