"""Where the embedded example spec is, installed or in a checkout.

The one editable copy is `templates/` at the top of the repository; the
wheel build (setup.py) copies it into the package as `promptspec/example/`,
because an installed package has no repository around it. An editable
install, or running from the source tree, has no copy and reads
`templates/` itself, so an edit there shows at once.
"""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve()
PACKAGED = _HERE.parents[1] / "example"
CHECKOUT = _HERE.parents[3] / "templates"


def embedded_spec() -> Path:
    """The example spec folder: the copy inside the package when there is
    one (a wheel install), else `templates/` of the checkout."""
    return PACKAGED if (PACKAGED / "spec.yaml").is_file() else CHECKOUT
