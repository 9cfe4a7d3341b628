"""Stage 3, assembly: the matrix of variants (matrix.py), the request builder
that orders sections into messages (builder.py), AGENTS.md discovery
(agents_md.py), the request records (request.py) and their serialisations:
Responses-API JSON, layout, text (export.py).

May import `render`, `spec` and `errors`.
"""

from .agents_md import (
    DEFAULT_NAME,
    OVERRIDE_NAME,
    PROJECT_DOC_SEPARATOR,
    DocFile,
    ProjectDocs,
    check_cwd,
    discover,
)
from .builder import (
    Assembler,
    assemble,
    assemble_all,
)
from ..render.codex import codex_placeholder_names
from .instructions import PERSONALITY_PLACEHOLDER, base_instructions
from .body import (
    body_params,
    default_params,
    placement,
    select_tools,
)
from .export import (
    ADDITIONAL_TOOLS,
    LAYOUT_LABEL_CHARS,
    body_json,
    dumps,
    layout,
    responses_payload,
    section_label,
    text_view,
    tool_list,
    tools_item,
    tools_json,
    with_tokens,
)
from .matrix import (
    MAX_RENDERED_CHARS,
    MAX_REQUEST_CHARS,
    MAX_VARIANTS,
    find_variant,
    matrix,
)
from .request import (
    BaseInstructions,
    Message,
    Request,
    Section,
    Variant,
)

__all__ = [
    "ADDITIONAL_TOOLS",
    "body_json",
    "body_params",
    "default_params",
    "placement",
    "select_tools",
    "tool_list",
    "tools_item",
    "tools_json",
    "Assembler",
    "BaseInstructions",
    "DEFAULT_NAME",
    "DocFile",
    "LAYOUT_LABEL_CHARS",
    "MAX_RENDERED_CHARS",
    "MAX_REQUEST_CHARS",
    "MAX_VARIANTS",
    "Message",
    "OVERRIDE_NAME",
    "PERSONALITY_PLACEHOLDER",
    "PROJECT_DOC_SEPARATOR",
    "ProjectDocs",
    "Request",
    "Section",
    "Variant",
    "assemble",
    "assemble_all",
    "base_instructions",
    "check_cwd",
    "codex_placeholder_names",
    "discover",
    "dumps",
    "find_variant",
    "layout",
    "matrix",
    "responses_payload",
    "section_label",
    "text_view",
    "with_tokens",
]
