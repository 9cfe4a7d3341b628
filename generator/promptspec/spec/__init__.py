"""Stage 1, the spec: the data model, loading and validation.

Holds the dataclasses every later stage reads (model.py), the loader
(load.py, catalog.py, reader.py), YAML/JSON with line numbers (sources.py)
and confined, bounded file access (files.py, the only place that opens a spec
file).  Imports nothing of promptspec but `errors`.
"""

from .readers.catalog import (
    MODEL_KEYS,
    parse_models,
)
from .embedded import (
    embedded_spec,
)
from .files import (
    MAX_FILE_BYTES,
    MAX_SPEC_BYTES,
    SpecFS,
    file_digest,
    read_regular_bytes,
    read_text_file,
)
from .limits import (
    Limits,
)
from .readers.load import (
    FRAGMENT_KEYS,
    LIMIT_CEILINGS,
    SECRET_DIRS,
    SPEC_KEYS,
    SYSTEM_DIRS,
    load_spec,
)
from .model import (
    BUILTIN_AXES,
    DEFAULT_LAYOUT,
    DEFAULT_MODES,
    DEFAULT_PERSONALITIES,
    ENGINES,
    NAME_RE,
    ROLES,
    SLOT_ROLE,
    SPEC_FILE,
    AgentsConfig,
    Choice,
    Fragment,
    Model,
    Rule,
    Spec,
)
from .readers.reader import (
    check_name,
    check_unique_slugs,
)
from .readers.sources import (
    MAX_YAML_EXPANDED,
    MAX_YAML_NODES,
    LineFinder,
    Located,
    find_line,
    load_json,
    load_yaml,
)

__all__ = [
    "AgentsConfig",
    "BUILTIN_AXES",
    "Choice",
    "DEFAULT_LAYOUT",
    "DEFAULT_MODES",
    "DEFAULT_PERSONALITIES",
    "ENGINES",
    "FRAGMENT_KEYS",
    "Fragment",
    "LIMIT_CEILINGS",
    "Limits",
    "LineFinder",
    "Located",
    "MAX_FILE_BYTES",
    "MAX_YAML_EXPANDED",
    "MAX_YAML_NODES",
    "MODEL_KEYS",
    "Model",
    "NAME_RE",
    "ROLES",
    "Rule",
    "SECRET_DIRS",
    "SLOT_ROLE",
    "SPEC_FILE",
    "SPEC_KEYS",
    "SYSTEM_DIRS",
    "Spec",
    "SpecFS",
    "embedded_spec",
    "check_name",
    "check_unique_slugs",
    "find_line",
    "load_json",
    "load_spec",
    "load_yaml",
    "parse_models",
    "read_text_file",
    "read_regular_bytes",
    "file_digest",
    "MAX_SPEC_BYTES",
]
