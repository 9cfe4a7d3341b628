"""Importing a released Codex CLI binary (npm `@openai/codex`) as a spec, offline."""

from ...oracle.binary import CodexBinary, CodexError, identify
from .importer import import_cli

__all__ = ["CodexBinary", "CodexError", "identify", "import_cli"]
