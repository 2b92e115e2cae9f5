"""SIGINT and the disposition a run inherits.

A process started with SIGINT ignored (a background job of a non-interactive shell, some nohup
setups) hands that on to its children. agentv-gate keeps an ignored SIGINT ignored, as Unix
programs and Python itself do, and SIGTERM (what a cancelled CI job ends with) still stops the
run with its reports written. The test helper `start_cli` gives the CLI SIGINT's default back, so
the suite's signal tests mean the same under `nohup` as in a terminal.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.helpers.cli import CLI, cli_env, start_cli
from tests.helpers.files import make_repo, write
from tests.helpers.processes import wait_for
from tests.helpers.reports import read_rows

SLOW_JUDGE = """\
import pathlib, sys, time
sys.stdin.read()
pathlib.Path("slow-started").write_text("started")  # in the judge's cwd, the eval file's folder
time.sleep(120)
"""

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX signals")


@contextmanager
def sigint_ignored() -> Iterator[None]:
    """This test process ignores SIGINT for a while, as one started under `nohup ... &` would."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def slow_project(root: Path) -> Path:
    """One case that finishes at once, one whose judge hangs; returns the file the hanging judge creates."""
    make_repo(root)
    write(root / "evals/slow.py", SLOW_JUDGE)
    write(root / "evals/s.eval.yaml", """
        tests:
          - id: fast
            input: q
            assert: [{type: contains, value: ok}]
          - id: slow
            input: q
            assert:
              - {name: hangs, type: code_judge, script: [python3, slow.py]}
    """)
    return root / "evals/slow-started"


def interrupt(proc: subprocess.Popen[str], marker: Path, *signals: int) -> tuple[int, str]:
    try:
        assert wait_for(marker.exists, 30), "the slow judge never started"
        for signum in signals:
            os.kill(proc.pid, signum)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, err


def test_start_cli_gives_sigint_back_even_when_the_tests_run_with_it_ignored(tmp_path: Path) -> None:
    marker = slow_project(tmp_path)
    with sigint_ignored():
        proc = start_cli("run", "evals", "--judge-timeout", "90", cwd=tmp_path)
    code, err = interrupt(proc, marker, signal.SIGINT)
    assert code == 130, err
    assert [(r["eval_id"], r.get("failure_reason_code")) for r in read_rows(tmp_path / ".agentv-gate/results.jsonl")] \
        == [("fast", None), ("slow", "interrupted")]


def test_a_run_started_with_sigint_ignored_keeps_ignoring_it_and_sigterm_still_stops_it(tmp_path: Path) -> None:
    marker = slow_project(tmp_path)
    with sigint_ignored():
        proc = subprocess.Popen([CLI, "run", "evals", "--judge-timeout", "90"], cwd=tmp_path, env=cli_env(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                                start_new_session=True)
    # Were SIGINT honoured it would be handled first (130); ignored, the SIGTERM ends the run (143).
    code, err = interrupt(proc, marker, signal.SIGINT, signal.SIGTERM)
    assert code == 143, err
    assert "interrupted; writing 1 finished case(s) of 2" in err
    assert [(r["eval_id"], r.get("failure_reason_code")) for r in read_rows(tmp_path / ".agentv-gate/results.jsonl")] \
        == [("fast", None), ("slow", "interrupted")]
    assert (tmp_path / ".agentv-gate/junit.xml").exists()
