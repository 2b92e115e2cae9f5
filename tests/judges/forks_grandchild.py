"""Fixture judge: starts a grandchild that inherits stdout, records its pid, then hangs or exits.

argv[1] is where to write the grandchild's pid; argv[2] is "hang" (never answer) or "exit"
(print a valid result and exit at once while the grandchild keeps stdout open).
"""
import json
import subprocess
import sys
import time

grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
with open(sys.argv[1], "w") as f:
    f.write(str(grandchild.pid))
if sys.argv[2] == "hang":
    time.sleep(600)
print(json.dumps({"score": 1.0, "hits": ["done before the grandchild"]}), flush=True)
