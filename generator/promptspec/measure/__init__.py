"""Stage 4, measurement: tokenizers (encodings.py), the token cache
(counter.py) and per-variant figures such as % of the usable window
(figures.py).

May import `assemble`, `spec` and `errors`.
"""

from .counter import (
    CountStats,
    TokenCounter,
    count_files,
    default_cache_dir,
    format_token_lines,
)
from .encodings import (
    DEFAULT_ENCODING,
    KNOWN_ENCODINGS,
    TokenCacheWarning,
    TokenizerError,
    codex_estimate,
    encoding_for_model,
    get_encoding,
)
from .figures import (
    TOOLS_COUNT_RULE,
    Measure,
    measure_all,
    tools_text,
)

__all__ = [
    "CountStats",
    "DEFAULT_ENCODING",
    "KNOWN_ENCODINGS",
    "Measure",
    "TOOLS_COUNT_RULE",
    "tools_text",
    "TokenCacheWarning",
    "TokenCounter",
    "TokenizerError",
    "codex_estimate",
    "count_files",
    "default_cache_dir",
    "encoding_for_model",
    "format_token_lines",
    "get_encoding",
    "measure_all",
]
