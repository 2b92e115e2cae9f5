"""The orphan sweep ends what a run's scripts left in sessions of their own, and nothing else."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentv_gate.transport import reaper
from tests.helpers.processes import kill_quietly, pid_alive, wait_for

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="a child subreaper is Linux-only")

DETACH = ("import subprocess, sys\n"
          "print(subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'], start_new_session=True,"
          " stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).pid)\n")


def test_only_the_runs_adopted_orphans_are_ended(tmp_path: Path) -> None:
    unrelated = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])  # ours before the run
    reaper.mark_run_start()
    assert reaper.become_subreaper()
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])  # a script still running
    daemon = int(subprocess.run([sys.executable, "-c", DETACH], capture_output=True, text=True, check=True).stdout)
    try:
        assert wait_for(lambda: Path(f"/proc/{daemon}/stat").read_text().rsplit(")", 1)[1].split()[1] == str(
            os.getpid()), 10), "the orphan was not adopted"
        assert reaper.end_orphans(keep={live.pid}) == 1
        assert not pid_alive(daemon) and not Path(f"/proc/{daemon}").exists()  # killed and reaped
        assert unrelated.poll() is None and live.poll() is None
    finally:
        kill_quietly([daemon, unrelated.pid, live.pid])
        unrelated.wait()
        live.wait()
