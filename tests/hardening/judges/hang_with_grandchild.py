"""Forks a grandchild into its own process group's pipes, records both pids in config.pid_dir, hangs."""
import json
import os
import subprocess
import sys
import time

config = json.load(sys.stdin).get("config") or {}
grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
path = os.path.join(config["pid_dir"], f"{os.getpid()}.pids")
with open(path + ".tmp", "w") as fh:
    fh.write(f"{os.getpid()} {grandchild.pid}")
os.replace(path + ".tmp", path)
time.sleep(120)
print(json.dumps({"score": 1.0}))
