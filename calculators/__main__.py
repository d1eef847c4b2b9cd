"""``python -m calculators``: the same command line as ``bigmodel``."""

from __future__ import annotations

import os
import sys

from calculators.core.cli import main

try:
    sys.exit(main())
except BrokenPipeError:
    # The reader piped the output into something that stopped reading (e.g. head).
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(0)
