"""`python -m agentv_gate`: the same CLI as the `agentv-gate` console script."""

import sys

from .cli import main

sys.exit(main())
