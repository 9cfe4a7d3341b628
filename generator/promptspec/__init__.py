"""promptspec: see every variant of an assembled agent prompt, and what each piece costs.

The package is laid out by the stages data flows through (see
docs/architecture.md)::

    spec -> render -> assemble -> measure -> pipeline -> site / review / authoring / importers

The names a script or plugin author needs are available here, imported on
first use so that ``import promptspec`` (and the CLI's start-up) stays cheap::

    import promptspec
    spec = promptspec.load_spec("templates")
    requests = promptspec.assemble_all(spec, promptspec.matrix(spec))

(The subpackages share the stage names, so one variant's request is
``promptspec.assemble.assemble(spec, variant)``.)
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_API = {
    "load_spec": "spec",
    "Spec": "spec",
    "matrix": "assemble",
    "find_variant": "assemble",
    "assemble_all": "assemble",
    "Variant": "assemble",
    "Request": "assemble",
    "TokenCounter": "measure",
    "measure_all": "measure",
    "Measure": "measure",
    "run": "pipeline",
    "Result": "pipeline",
    "Session": "pipeline",
    "PromptspecError": "errors",
    "SpecError": "errors",
}

__all__ = ["__version__", *sorted(_API)]


def __getattr__(name: str) -> Any:
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'promptspec' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
