"""A command healthcheck that passes only when run in its own folder (suites/tools)."""

import os
import sys

sys.exit(0 if os.path.basename(os.getcwd()) == "tools" else 3)
