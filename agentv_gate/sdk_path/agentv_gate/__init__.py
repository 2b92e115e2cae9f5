"""Stand-in for the `agentv_gate` package on a judge's PYTHONPATH; its parent folder holds nothing else.

A judge runs with the user's own `python3`, which may not have agentv-gate installed. agentv-gate
puts this folder first on the judge's PYTHONPATH, and this package's modules are looked up in the
folder of the agentv-gate that is running (`__path__` below), so `from agentv_gate.sdk import ...`
loads that installation's own sdk.py, which needs only the standard library. The real package's
`__init__` is not run, so none of agentv-gate's dependencies are needed to import the SDK.
"""

import os as _os

__path__ = [_os.path.dirname(_os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))))]
