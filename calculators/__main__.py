"""``python -m calculators``: the same command line as ``bigmodel``."""

from __future__ import annotations

import sys

from calculators.cli import main

sys.exit(main())
