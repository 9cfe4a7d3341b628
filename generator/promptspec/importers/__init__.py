"""Importers: specs built from other sources. `codex_source` reads a Codex source
checkout; `codex_cli` learns a spec from what a released Codex CLI sends
(captured through `oracle`).

May import `pipeline` and everything below it.
"""
