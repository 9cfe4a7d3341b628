"""The capture pool and its cache (oracle/pool/worlds.py, oracle/pool/cache.py),
driven through a stand-in Codex (tests/security/_fake_codex.py, `echo`) whose answers echo what a
capture depends on: parallel worlds give the serial captures, a warm cache
starts no Codex, and every input of the key makes a miss when it changes."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import shutil
from pathlib import Path

import pytest

from promptspec.oracle.pool import cache as capture_cache, worlds as _pool
from promptspec.oracle.binary import identify
from promptspec.oracle.capture import Config, full_matrix
from promptspec.oracle.pool.harvest import harvest
from promptspec.oracle.pool import CapturePool
from promptspec.oracle.thread import Thread, ThreadStep
from promptspec.oracle.world import make_world

FAKE = Path(__file__).resolve().parent.parent / "security" / "_fake_codex.py"


def echo_codex(root: Path, tone: str = "calm", quiet: str | None = None) -> Path:
    """The stand-in Codex with its `echo` behaviour (tests/security/_fake_codex.py)."""
    folder = root / "bin"
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(FAKE, folder / "codex")
    (folder / "codex").chmod(0o755)
    (folder / "behaviour.json").write_text(json.dumps({"echo": True, "tone": tone, "quiet": quiet}), encoding="utf-8")
    return folder / "codex"


def start_lines(codex: Path) -> list[str]:
    log = codex.parent.parent / "starts.log"
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def starts(codex: Path) -> int:
    return len(start_lines(codex))


def _text(body) -> dict:
    return json.loads(body["input"][0]["content"][0]["text"])


CONFIGS = [Config(m, "unset", "unset", s, a) for m in ("m1", "m2") for s in ("read-only", "workspace-write")
           for a in ("untrusted", "on-request", "never")] * 7  # 84: enough for three worlds


def _run(codex: Path, cache_root: Path, jobs: int, cache: bool = True, world=None, configs=CONFIGS, quiet: bool = True):
    binary = identify(codex)
    with CapturePool(binary, world, timeout=30, jobs=jobs, cache=cache, cache_root=cache_root, quiet=quiet) as p:
        p.warm(configs[0])
        caps = p.first_requests(configs)
        return caps, p.stats, str(p.scratch.base)


def _comparable(caps, base: str):
    """The captures with the primary world's folder written as BASE and the thread id dropped."""
    out = []
    for c in caps:
        body = None if c.body is None else {k: v for k, v in c.body.items() if k != "prompt_cache_key"}
        out.append((c.config, json.dumps(body).replace(base, "BASE"), c.refused))
    return out


def test_parallel_worlds_give_the_serial_captures_in_the_primary_worlds_terms(tmp_path):
    codex = echo_codex(tmp_path)
    serial, s_stats, s_base = _run(codex, tmp_path / "c1", jobs=1, cache=False)
    parallel, p_stats, p_base = _run(codex, tmp_path / "c2", jobs=3, cache=False)
    assert s_stats.worlds == 1 and p_stats.worlds == 3  # the primary and two workers ran Codex
    assert _comparable(parallel, p_base) == _comparable(serial, s_base)
    seen_homes = {_text(c.body)["home"] for c in parallel if c.body}
    assert seen_homes == {p_base + "/home"}  # every worker's folder was given back as the primary's
    assert [c.refused for c in parallel[:3]] == ["untrusted is not supported", None, None]


def test_captures_run_quiet_when_the_probe_finds_the_same_answers_and_equal_the_loud_ones(tmp_path):
    codex = echo_codex(tmp_path)
    loud, l_stats, l_base = _run(codex, tmp_path / "c1", jobs=2, cache=False, quiet=False)
    n = starts(codex)
    quiet, q_stats, q_base = _run(codex, tmp_path / "c2", jobs=2, cache=False)
    assert l_stats.quiet == {"first": "loud (not asked)"} and l_stats.probe_worlds == 0
    assert all(not line.endswith(" quiet") for line in start_lines(codex)[:n])
    assert q_stats.quiet == {"first": "quiet"} and q_stats.probe_worlds == 1  # the primary was warm: one fresh world
    assert _comparable(quiet, q_base) == _comparable(loud, l_base)
    # After the warm start, the probe's loud side (the primary) and the probe's own quiet world, the rest is quiet.
    assert sum(line.endswith(" quiet") for line in start_lines(codex)[n:]) >= 4


@pytest.mark.parametrize("how", ["shows", "shows-m2", "fails"])
def test_a_quiet_world_that_changes_the_answer_or_fails_leaves_every_capture_loud(tmp_path, how):
    # "shows-m2": only the second model's requests show it, and the batch starts with six of the first
    # model's: the probe's captures are spread over the batch (its last one is m2's).
    codex = echo_codex(tmp_path, quiet=how)
    caps, stats, base = _run(codex, tmp_path / "cache", jobs=2)
    why = "the quiet world failed" if how == "fails" else "the quiet world changed what Codex sends"
    assert stats.quiet["first"].startswith(f"loud ({why}") and stats.probe_worlds == 1
    answered = [c for c in caps if c.body]
    assert len(answered) == 2 * len(CONFIGS) // 3  # "untrusted" is refused
    shown = {"shows": {"m1", "m2"}, "shows-m2": {"m2"}, "fails": set()}[how]
    assert all(_text(c.body).get("quiet") is (False if c.config.model in shown else None) for c in answered)
    n = starts(codex)
    again, stats2, base2 = _run(codex, tmp_path / "cache", jobs=2, configs=CONFIGS + [Config("m1", "friendly")] * 12)
    # A changed answer is remembered (no probe the second time); a failure is not an answer: asked again
    # (in two fresh worlds, as the primary's skills came from the cache and it never started).
    assert stats2.quiet["first"].startswith(f"loud ({why}") and stats2.probe_worlds == (2 if how == "fails" else 0)
    assert sum(line.endswith(" quiet") for line in start_lines(codex)[n:]) == (1 if how == "fails" else 0)
    assert stats2.captured == 12
    assert _comparable(again[:len(CONFIGS)], base2) == _comparable(caps, base)


def test_a_quiet_probe_that_times_out_decides_nothing_and_is_asked_again(tmp_path, monkeypatch):
    codex = echo_codex(tmp_path)
    real = _pool.capture

    def slow_when_quiet(binary, scratch, configs, timeout, port):
        for cap in real(binary, scratch, configs, timeout, port):
            if scratch.quiet and cap.config.model == "m2":  # as a timeout would leave it: no answer
                cap.body, cap.refused, cap.transient = None, "did not answer", True
            yield cap

    monkeypatch.setattr(_pool, "capture", slow_when_quiet)
    for personality in ("unset", "friendly"):  # the second batch is not in the cache: is the probe asked again?
        configs = [dataclasses.replace(c, personality=personality) for c in CONFIGS[:12] + CONFIGS[6:12]]
        caps, stats, _ = _run(codex, tmp_path / "cache", jobs=2, configs=configs)
        assert stats.quiet == {"first": "loud (the probe's captures gave nothing to compare)"} and stats.probe_worlds >= 1
        assert stats.from_cache == 0 and all(c.body for c in caps if c.config.approval_policy != "untrusted")  # all loud


def test_threads_are_probed_on_their_own(tmp_path):
    codex = echo_codex(tmp_path, quiet="shows")
    binary = identify(codex)
    threads = [Thread(f"t{i}", Config("m1"), (ThreadStep("hello"), ThreadStep("again"))) for i in range(14)]
    with CapturePool(binary, None, timeout=30, jobs=2, cache=False) as p:
        p.warm(Config("m1"))
        caps = p.threads(threads)
        assert p.stats.quiet == {"threads": "loud (the quiet world changed what Codex sends)"}
    assert [c.thread.name for c in caps] == [t.name for t in threads]
    assert all(len(c.bodies) == 2 and "quiet" in _text(b) and _text(b)["quiet"] is False for c in caps for b in c.bodies)


def test_a_warm_cache_starts_no_codex_and_gives_the_same_captures(tmp_path):
    codex = echo_codex(tmp_path)
    cold, c_stats, c_base = _run(codex, tmp_path / "cache", jobs=2)
    before = starts(codex)
    warm, w_stats, w_base = _run(codex, tmp_path / "cache", jobs=2)
    assert starts(codex) == before and w_stats.captured == 0 and w_stats.from_cache == len(CONFIGS)
    assert c_base != w_base and _comparable(warm, w_base) == _comparable(cold, c_base)
    assert all(c.body["prompt_cache_key"] for c in warm if c.body)


def test_a_harvest_from_the_cache_equals_the_harvest_that_filled_it(tmp_path, monkeypatch):
    codex = echo_codex(tmp_path)
    binary = identify(codex)
    monkeypatch.setenv("PROMPTSPEC_CACHE_DIR", str(tmp_path / "cache"))
    first = harvest(binary, timeout=30, jobs=2)
    n = starts(codex)
    second = harvest(binary, timeout=30, jobs=2)
    assert starts(codex) == n and second.pool.captured == 0
    assert second.pool.from_cache == len(first.captures) + 1  # the matrix and the roots probe
    assert second.catalog == first.catalog and len(first.captures) == len(full_matrix(first.catalog))

    def seen(h):
        base = str(Path(h.sentinels["home"]).parent)
        return [(c.config, json.dumps({k: v for k, v in (c.body or {}).items() if k != "prompt_cache_key"}).replace(base, "B"),
                 c.refused) for c in h.captures]

    assert seen(first) == seen(second) and sum(c.body is not None for c in first.captures) == 3 * len(first.captures) // 4


def test_another_binary_misses(tmp_path):
    codex = echo_codex(tmp_path)
    _run(codex, tmp_path / "cache", jobs=1)
    echo_codex(tmp_path, tone="loud")  # a file of the binary's folder changed
    caps, stats, _ = _run(codex, tmp_path / "cache", jobs=1)
    assert stats.from_cache == 0 and {_text(c.body)["tone"] for c in caps if c.body} == {"loud"}


def test_a_changed_world_flag_misses_and_the_same_one_hits(tmp_path):
    codex = echo_codex(tmp_path)
    root = tmp_path / "cache"
    _run(codex, root, jobs=1)
    caps, stats, _ = _run(codex, root, jobs=1, world=make_world(enable=["fast_mode"]))
    assert stats.from_cache == 0 and {tuple(_text(c.body)["flags"]) for c in caps if c.body} == {("--enable",)}
    _, again, _ = _run(codex, root, jobs=1, world=make_world(enable=["fast_mode"]))
    assert again.from_cache == len(CONFIGS)
    _, other, _ = _run(codex, root, jobs=1, world=make_world(disable=["fast_mode"]))
    assert other.from_cache == 0


def test_a_home_file_is_part_of_the_key(tmp_path):
    codex = echo_codex(tmp_path)
    home = tmp_path / "myhome"
    home.mkdir()
    (home / "AGENTS.md").write_text("one\n", encoding="utf-8")
    _run(codex, tmp_path / "cache", jobs=1, world=make_world(codex_home=home))
    _, same, _ = _run(codex, tmp_path / "cache", jobs=1, world=make_world(codex_home=home))
    (home / "AGENTS.md").write_text("two\n", encoding="utf-8")
    _, changed, _ = _run(codex, tmp_path / "cache", jobs=1, world=make_world(codex_home=home))
    assert same.from_cache == len(CONFIGS) and changed.from_cache == 0


@pytest.mark.parametrize("kind", ["cwd", "mcp", "file"])
def test_worlds_the_key_cannot_hold_are_never_cached(tmp_path, kind):
    codex = echo_codex(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    world = {"cwd": make_world(cwd=project),
             "mcp": make_world(overrides=['mcp_servers.x.command="true"']),
             "file": make_world(overrides=['model_instructions_file="/etc/hostname"'])}[kind]
    binary = identify(codex)
    with CapturePool(binary, world, timeout=30, jobs=4, cache_root=tmp_path / "cache") as p:
        assert p.store is None and p.stats.not_cached and p.jobs == (4 if kind == "file" else 1)


def test_a_change_of_capture_code_or_day_misses(tmp_path, monkeypatch):
    codex = echo_codex(tmp_path)
    root = tmp_path / "cache"
    _run(codex, root, jobs=1)
    real = capture_cache.code_digest()
    monkeypatch.setattr(capture_cache, "code_digest", lambda: real + "-edited")
    assert _run(codex, root, jobs=1)[1].from_cache == 0
    monkeypatch.setattr(capture_cache, "code_digest", lambda: real)
    assert _run(codex, root, jobs=1)[1].from_cache == len(CONFIGS)

    tomorrow = _dt.date.today() + _dt.timedelta(days=1)

    class Tomorrow(_dt.date):
        @classmethod
        def today(cls):
            return tomorrow

    import promptspec.oracle.scratch as scratch_module

    monkeypatch.setattr(scratch_module._dt, "date", Tomorrow)
    caps, stats, _ = _run(codex, root, jobs=1)
    assert stats.from_cache == 0
    assert _run(codex, root, jobs=1)[1].from_cache == len(CONFIGS)  # tomorrow's own entries


def test_a_fixed_port_runs_one_world(tmp_path):
    from promptspec.oracle.recorder import port_free
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert port_free(port)
    binary = identify(echo_codex(tmp_path))
    with CapturePool(binary, None, timeout=30, port=port, jobs=4, cache=False) as p:
        assert p.jobs == 1
        p.warm(CONFIGS[0])
        assert len(p.first_requests(CONFIGS[:30])) == 30 and p.stats.worlds == 1
        # The quiet probe's two sides ran one after the other: at once, the second recorder could not have the port.
        assert p.stats.quiet == {"first": "quiet"} and p.stats.probe_worlds == 1


def test_threads_in_parallel_are_the_serial_ones_and_come_from_the_cache(tmp_path):
    codex = echo_codex(tmp_path)
    binary = identify(codex)

    def threads_for(cwd: str) -> list[Thread]:
        cfg = Config("m1")
        return [Thread(f"t{i}", cfg, (ThreadStep("hello"), ThreadStep("again", (("cwd", json.dumps(f"{cwd}/pkg")),))))
                for i in range(8)]

    got = {}
    for jobs, cache in ((1, False), (3, True), (3, True)):
        with CapturePool(binary, None, timeout=30, jobs=jobs, cache=cache, cache_root=tmp_path / "cache") as p:
            p.warm(Config("m1"))
            n = starts(codex)
            caps = p.threads(threads_for(str(p.scratch.cwd)))
            base = str(p.scratch.base)
            got.setdefault(jobs, []).append(([json.dumps([{k: v for k, v in b.items() if k != "prompt_cache_key"}
                                                          for b in c.bodies]).replace(base, "BASE") for c in caps],
                                             starts(codex) - n, [c.thread.name for c in caps]))
    (serial, _, names), (cold, cold_starts, _), (warm, warm_starts, _) = got[1][0], got[3][0], got[3][1]
    assert names == [f"t{i}" for i in range(8)]
    assert cold == serial == warm and cold_starts >= 2 and warm_starts == 0
    assert all("BASE/repo/pkg" in t for t in serial)  # the cwd switch names the primary's folder


def test_the_bundled_skills_come_back_from_the_cache(tmp_path):
    codex = echo_codex(tmp_path)
    binary = identify(codex)
    for _ in range(2):
        with CapturePool(binary, None, timeout=30, jobs=1, cache_root=tmp_path / "cache") as p:
            p.warm(Config("m1"))
            assert p.bundled_skill() == "demo"
            assert (p.scratch.codex_home / "skills/.system/demo/SKILL.md").read_text() == "# demo\n\nA bundled skill of the stand-in.\n"
    assert p._primary == "restored"


def test_a_transient_failure_is_not_cached(tmp_path, monkeypatch):
    codex = echo_codex(tmp_path)
    real = _pool.capture

    def flaky(binary, scratch, configs, timeout, port):
        for cap in real(binary, scratch, configs, timeout, port):
            if cap.config.model == "m2":
                cap.body, cap.refused, cap.transient = None, "did not answer", True
            yield cap

    monkeypatch.setattr(_pool, "capture", flaky)
    _run(codex, tmp_path / "cache", jobs=1, configs=CONFIGS[:12])
    monkeypatch.setattr(_pool, "capture", real)
    caps, stats, _ = _run(codex, tmp_path / "cache", jobs=1, configs=CONFIGS[:12])
    assert stats.from_cache == 6 and stats.captured == 6 and all(c.body for c in caps if c.config.approval_policy != "untrusted")


def test_a_folder_a_configuration_names_exists_in_the_worker_world_that_captures_it(tmp_path):
    codex = echo_codex(tmp_path)
    binary = identify(codex)
    root = tmp_path / "cache"
    _run(codex, root, jobs=1)  # fills the cache: the next pool's primary world is restored, never runs Codex
    with CapturePool(binary, None, timeout=30, jobs=1, cache_root=root) as p:
        p.warm(CONFIGS[0])
        probe = p.scratch.base / "zz-probe"
        probe.mkdir()
        cfg = Config("m1", extra=(("sandbox_workspace_write", json.dumps({"writable_roots": [str(probe)]})),))
        (cap,) = p.first_requests([cfg])
        assert p._primary == "restored" and p.stats.worlds == 2
        assert _text(cap.body)["roots"] == {str(probe): True}


def test_jobs_and_no_cache_are_checked_on_the_command_line(tmp_path):
    from _helpers import cli

    codex = echo_codex(tmp_path)
    bad = cli("import-codex", "--cli", str(codex), "--out", str(tmp_path / "out"), "--jobs", "-1")
    assert bad.returncode == 2 and "--jobs must be 0" in bad.stderr and not (tmp_path / "out").exists()
    bad = cli("verify", "--cli", str(codex), "--spec", str(tmp_path), "--jobs", "-2")
    assert bad.returncode == 2 and "--jobs must be 0" in bad.stderr
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    bad = cli("import-codex", str(checkout), "--out", str(tmp_path / "out"), "--no-cache")
    assert bad.returncode == 2 and "--no-cache" in bad.stderr and "go with --cli" in bad.stderr
