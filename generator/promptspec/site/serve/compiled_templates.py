"""The theme's templates compiled once per process, not once per build.

MkDocs makes a new Jinja environment for every build, so every rebuild
parses and compiles the theme's templates again: ~0.12 s of a 0.5 s reload
of a small site here (Material's main.html and the partials it includes),
and as much again for each build a process makes after its first (a test
suite's or a benchmark's in-process builds).  Jinja's own extension point
for this is a bytecode cache; this one holds the compiled code in memory for
the process (`PROCESS`: every build and every serve rebuild share it).
Jinja checks each entry against the template's source (a checksum), so an
edited template is compiled again; entries are kept per set of environment
settings that change what compiling gives (delimiters, whitespace options,
extensions, autoescape), so an environment configured otherwise never
reuses them.
"""

from __future__ import annotations

from typing import Any

import jinja2


class CompiledTemplates(jinja2.BytecodeCache):
    def __init__(self) -> None:
        self._code: dict[str, bytes] = {}

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        data = self._code.get(bucket.key)
        if data is not None:
            bucket.bytecode_from_string(data)  # resets itself when the source's checksum differs

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self._code[bucket.key] = bucket.bytecode_to_string()

    def clear(self) -> None:
        self._code.clear()


def settings(env: jinja2.Environment) -> tuple[Any, ...]:
    """What, besides a template's source, its compiled code depends on."""
    autoescape = env.autoescape if isinstance(env.autoescape, bool) else "callable"  # a callable is asked when rendering
    finalize = None if env.finalize is None else (getattr(env.finalize, "__module__", None),
                                                  getattr(env.finalize, "__qualname__", repr(env.finalize)))
    return (
        env.block_start_string, env.block_end_string, env.variable_start_string, env.variable_end_string,
        env.comment_start_string, env.comment_end_string, env.line_statement_prefix, env.line_comment_prefix,
        env.trim_blocks, env.lstrip_blocks, env.newline_sequence, env.keep_trailing_newline,
        tuple(sorted(env.extensions)), env.optimized, finalize, autoescape, env.is_async,
    )


class KeptTemplates:
    """A CompiledTemplates per environment settings, for the builds that
    share it (only the latest settings are kept)."""

    def __init__(self) -> None:
        self._key: tuple[Any, ...] | None = None
        self._cache = CompiledTemplates()

    def attach(self, env: jinja2.Environment) -> None:
        key = settings(env)
        if key != self._key:
            self._key, self._cache = key, CompiledTemplates()
        env.bytecode_cache = self._cache


PROCESS = KeptTemplates()
"""What the plugin attaches to each build's environment."""
