"""The orphan sweep ends what a run's scripts left in sessions of their own, and nothing else."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentv_gate.transport import process, reaper
from tests.helpers.processes import kill_quietly, pid_alive, wait_for

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="a child subreaper is Linux-only")

DETACH = ("import subprocess, sys\n"
          "print(subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'], start_new_session=True,"
          " stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).pid)\n")


@pytest.fixture(autouse=True)
def _as_an_embedding_program(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests run in pytest's process, which another file's in-process CLI run may have told to claim
    every child (`claim_every_child`, what the agentv-gate process does): the orphan sweep would then reap
    this file's zombies before it looks at them. Here the process is an embedding program again, and no
    earlier test's scripts are remembered: over a whole suite their group ids are pids that come round
    again (pid_max may be 32768), so the orphan sweep they started could take one of these tests'
    processes for an orphan of theirs."""
    monkeypatch.setattr(reaper, "_every_child", False)
    monkeypatch.setattr(process, "_script_groups", set())


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


def test_exited_orphans_are_reaped_now_and_a_kept_child_keeps_its_status(tmp_path: Path) -> None:
    """`reap_exited` takes only exited orphans of the scripts' groups: a child the caller still waits
    for keeps its exit status (3 here, never lost to a sweep), an exited orphan in a group of its own
    waits for the run's end (in an embedding program it could be the program's own), and a live
    orphan runs on until `end_orphans`."""
    reaper.mark_run_start()
    assert reaper.become_subreaper()
    time.sleep(0.05)  # past the tick the run started in (a process started within it is not counted)
    kept = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    # Each orphan outlives its parent by a moment: one that exited first would be its parent's to reap (the
    # subshell's, or the detaching Python's Popen), never adopted, and the test failed about once in twelve.
    script = subprocess.Popen(["sh", "-c", "( sleep 0.3 & echo $! ); sleep 0.5"], stdout=subprocess.PIPE, text=True,
                              start_new_session=True)  # a script, leading its own group, double-forks a helper
    helper = int(script.stdout.readline()) if script.stdout else 0
    script.wait()
    detached = int(subprocess.run([sys.executable, "-c", DETACH.replace("time.sleep(120)", "time.sleep(0.3)")],
                                  capture_output=True, text=True, check=True).stdout)
    daemon = int(subprocess.run([sys.executable, "-c", DETACH], capture_output=True, text=True, check=True).stdout)
    try:
        assert wait_for(lambda: not any(pid_alive(p) for p in (helper, detached, kept.pid)), 10)
        assert all(Path(f"/proc/{p}").exists() for p in (helper, detached))  # zombies of ours, until reaped
        assert reaper.reap_exited(keep={kept.pid}, groups={script.pid}) == 1
        assert not Path(f"/proc/{helper}").exists() and Path(f"/proc/{detached}").exists()
        assert kept.wait(5) == 3
        assert pid_alive(daemon)
        assert reaper.end_orphans(keep={kept.pid}) == 2 and not pid_alive(daemon)  # the daemon, the detached one
    finally:
        kill_quietly([daemon])
