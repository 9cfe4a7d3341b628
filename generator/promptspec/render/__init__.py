"""Stage 2, rendering: the Jinja sandbox and its budgets (sandbox.py), Codex-style
placeholder text (codex.py) and the per-spec `Renderer` (renderer.py).

May import `spec` and `errors`.
"""

from .codex import (
    CODEX_PLACEHOLDER,
    codex_join,
)
from .renderer import (
    Renderer,
    renderer_for,
)
from .sandbox import (
    BYTES_PER_STEP,
    CALL_COST,
    MAX_INT_BITS,
    MAX_SLOW_FILTER_CHARS,
    MAX_TEMPLATE_TOKENS,
    RECURSIVE_TURN_COST,
)

__all__ = [
    "BYTES_PER_STEP",
    "CALL_COST",
    "CODEX_PLACEHOLDER",
    "MAX_INT_BITS",
    "MAX_SLOW_FILTER_CHARS",
    "MAX_TEMPLATE_TOKENS",
    "RECURSIVE_TURN_COST",
    "Renderer",
    "codex_join",
    "renderer_for",
]
