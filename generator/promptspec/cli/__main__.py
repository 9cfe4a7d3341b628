"""`python -m promptspec.cli`, as the tests and scripts run it."""

import sys

from . import main

sys.exit(main())
