"""Starts a daemon in a session of its own (setsid), so killing the judge's process group misses it.

`config.pid_file` receives the daemon's pid. With `config.double_fork`, the daemon is started by a
short-lived middle process, so it is orphaned while the judge is still running; otherwise it is
the judge's own child, orphaned when the judge exits.
"""
import json
import subprocess
import sys

config = json.load(sys.stdin).get("config") or {}
start_daemon = (
    "import subprocess, sys\n"
    "daemon = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'], start_new_session=True,\n"
    "                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    "print(daemon.pid)\n"
)
if config.get("double_fork"):
    pid = subprocess.run([sys.executable, "-c", start_daemon], capture_output=True, text=True, check=True).stdout
else:
    pid = str(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True,
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).pid)
with open(config["pid_file"], "w") as fh:
    fh.write(pid.strip())
print(json.dumps({"score": 1.0, "hits": ["answered, leaving a daemon in its own session behind"]}))
