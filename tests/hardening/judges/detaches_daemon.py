"""Starts a daemon detached from our pipes, records its pid in config.pid_file, answers at once."""
import json
import subprocess
import sys

config = json.load(sys.stdin).get("config") or {}
daemon = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
with open(config["pid_file"], "w") as fh:
    fh.write(str(daemon.pid))
print(json.dumps({"score": 1.0, "hits": ["answered, leaving a daemon behind"]}))
