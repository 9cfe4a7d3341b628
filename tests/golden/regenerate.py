"""Write the golden layout files for tests/test_cli.py.  Run by hand:

    python tests/golden/regenerate.py

then read the diff (`git diff tests/golden`) and check it against
`promptspec render --format layout` before committing.  The tests never write
these files: a missing golden file is a failure.
"""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from promptspec.cli import main  # noqa: E402
from test_cli import GOLDEN_VARIANTS, golden_argv, golden_path  # noqa: E402


def regenerate() -> None:
    for variant in GOLDEN_VARIANTS:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main(golden_argv(*variant))
        if code != 0:
            sys.exit(f"render failed for {'/'.join(variant)} (exit {code})")
        path = golden_path(*variant)
        path.write_text(out.getvalue(), encoding="utf-8", newline="\n")
        print(f"wrote {path.relative_to(HERE.parent.parent)}")


if __name__ == "__main__":
    regenerate()
