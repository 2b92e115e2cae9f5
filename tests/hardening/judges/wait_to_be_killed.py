"""Writes its pid to config.pid_file, then waits (for the test to kill it from outside)."""
import json
import os
import sys
import time

config = json.load(sys.stdin).get("config") or {}
with open(config["pid_file"] + ".tmp", "w") as fh:
    fh.write(str(os.getpid()))
os.replace(config["pid_file"] + ".tmp", config["pid_file"])
time.sleep(120)
print(json.dumps({"score": 1.0}))
