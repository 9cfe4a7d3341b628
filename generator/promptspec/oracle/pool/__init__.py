"""Capturing a release at scale: several Codex worlds at once, and what earlier runs kept.

`worlds` spreads captures over scratch worlds of their own (CapturePool) and
gives every capture in the primary world's terms; `cache` keeps Codex's
answers across runs under a key of everything that shapes them; `harvest`
takes one release's catalog, matrix and roots probe through a pool (what
`import-codex --cli` learns from).  `verify` and the later-turns importer use
the pool directly.
"""

from .worlds import CapturePool, PoolStats, default_jobs

__all__ = ["CapturePool", "PoolStats", "default_jobs"]
