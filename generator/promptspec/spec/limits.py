"""The rendering budgets a spec may set in `limits:` (the sandbox enforces them).

They are spec data: loading validates them against hard ceilings, and the
render stage reads them from the loaded `Spec`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """Budgets for one render.  Generous for real prompts (Codex's biggest
    template is ~25 KB), small enough that hostile ones fail in well under a
    second and a few MB of memory."""

    max_output_chars: int = 2 * 1024 * 1024
    max_iterations: int = 1_000_000
    max_seconds: float = 5.0
    max_items: int = 100_000


