"""`python -m promptspec`: the same command line as the `promptspec` script,
for when the script's folder is not on PATH (or to pick the interpreter)."""

import sys

from .cli import main

sys.exit(main())
