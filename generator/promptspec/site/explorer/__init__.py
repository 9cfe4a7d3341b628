"""The variant explorer: its compact data file (data.py) and its page (page.py).
"""

from .data import (
    ASSETS,
    DATA_FILE,
    DATA_SCRIPT,
    DELTA_MIN_SAVED,
    FORMAT,
    SPARSE_FACTOR,
    Reader,
    build,
    data_bytes,
    decode,
    unpack_texts,
)
from .page import (
    asset_bytes,
    page_html,
    standalone_files,
    write_assets,
    write_standalone,
)

__all__ = [
    "ASSETS",
    "DATA_FILE",
    "DATA_SCRIPT",
    "DELTA_MIN_SAVED",
    "FORMAT",
    "Reader",
    "SPARSE_FACTOR",
    "asset_bytes",
    "build",
    "data_bytes",
    "decode",
    "page_html",
    "standalone_files",
    "unpack_texts",
    "write_assets",
    "write_standalone",
]
