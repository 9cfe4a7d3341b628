"""Importers: specs built from other sources. `codex_source` reads a Codex source
checkout.

May import `pipeline` and everything below it.
"""
