"""Faults through the real CLI: judges that die or flood, targets that hang or cut off, full disks, signals.

Every test runs `python -m agentv_gate.cli` as a child process on a small suite that mixes the
fault with healthy cases, and checks what CI would see: the exit code, a clear reason on the
broken case, every other case still reported, JUnit well-formed and schema-valid, and no judge
or target process left behind.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli, start_cli
from tests.helpers.files import write
from tests.helpers.hostile import copy_judges, no_traceback
from tests.helpers.processes import kill_quietly, pid_alive, wait_for
from tests.helpers.reports import checked_junit, junit_cases, read_rows

OUT = ".agentv-gate"


def by_id(rows: list[dict[str, object]]) -> dict[str, dict[str, object]]:
    return {str(r["eval_id"]): r for r in rows}


def judge_case(case_id: str, judge: str, **config: str) -> str:
    extra = "".join(f", {k}: {v!r}" for k, v in config.items())
    return (f"  - id: {case_id}\n    input: question {case_id}\n"
            f"    assert: [{{type: code_judge, name: j, script: [python3, judges/{judge}]{extra}}}]\n")


def contains_case(case_id: str, target: str | None = None) -> str:
    """A case that passes when its target (the default mock unless named) answers `fine`."""
    on = f"    target: {target}\n" if target else ""
    return f"  - id: {case_id}\n{on}    input: hi\n    assert: [{{type: contains, value: fine}}]\n"


def suite(repo: Path, *cases: str, name: str = "faults") -> Path:
    return write(repo / "evals" / f"{name}.eval.yaml", "tests:\n" + "".join(cases))


@pytest.fixture(autouse=True)
def judges(repo: Path) -> Path:
    """Every test here runs in the shared `repo` fixture, with the hostile judges copied in."""
    return copy_judges(repo)


def assert_reported(repo: Path, expected: dict[str, str], not_run: tuple[str, ...] = ()) -> dict[str, dict[str, object]]:
    """results.jsonl and junit.xml both hold exactly `expected` (id -> verdict), and both also list
    the cases an interrupted run did not finish (`not_run`) as errors; JUnit is XSD-valid."""
    rows = by_id(read_rows(repo / OUT / "results.jsonl"))
    assert {k: (str(v["verdict"]), v.get("failure_reason_code")) for k, v in rows.items()} == \
        {k: (v, None) for k, v in expected.items()} | dict.fromkeys(not_run, ("error", "interrupted"))
    assert junit_cases(checked_junit(repo / OUT / "junit.xml")) == expected | dict.fromkeys(not_run, "error")
    return rows


# ---------------------------------------------------------------- judges that die or flood


def test_a_judge_that_sigkills_itself_is_an_error_and_the_other_cases_still_report(repo: Path) -> None:
    suite(repo, judge_case("healthy", "ok_judge.py"), judge_case("suicidal", "self_kill.py"))
    proc = run_cli("run", "evals", "--judge-timeout", "20", cwd=repo)
    assert proc.returncode == 1, proc.stderr
    rows = assert_reported(repo, {"healthy": "pass", "suicidal": "error"})
    assert "killed by SIGKILL" in str(rows["suicidal"]["error"])
    assert no_traceback(proc.stdout + proc.stderr)


def test_a_judge_killed_from_outside_mid_run_is_an_error(repo: Path) -> None:
    pid_file = repo / "victim.pid"
    suite(repo, judge_case("healthy", "ok_judge.py"), judge_case("victim", "wait_to_be_killed.py", pid_file=str(pid_file)))
    proc = start_cli("run", "evals", "--judge-timeout", "60", cwd=repo)
    try:
        assert wait_for(pid_file.exists, 30), "the judge never started"
        os.kill(int(pid_file.read_text()), signal.SIGKILL)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 1, err
    rows = assert_reported(repo, {"healthy": "pass", "victim": "error"})
    assert "killed by SIGKILL" in str(rows["victim"]["error"])
    assert no_traceback(out + err)


def test_a_judge_writing_50_mb_is_cut_off_and_reported_without_bloating_any_report(repo: Path) -> None:
    suite(repo, judge_case("healthy", "ok_judge.py"), judge_case("flood", "flood.py", megabytes="50"))
    proc = run_cli("run", "evals", "--judge-timeout", "60", cwd=repo)
    assert proc.returncode == 1, proc.stderr
    rows = assert_reported(repo, {"healthy": "pass", "flood": "error"})
    misses = " ".join(map(str, rows["flood"]["misses"]))  # type: ignore[call-overload]
    assert "stdout was cut at" in misses and "of 52428816 bytes" in misses
    # The flood must not reach any report: each stays far below the 8 MB capture cap.
    for path in (repo / OUT / "results.jsonl", repo / OUT / "junit.xml"):
        assert path.stat().st_size < 200_000, path
    assert len(proc.stdout) + len(proc.stderr) < 50_000


def test_a_judge_that_detaches_a_daemon_leaves_no_process_behind(repo: Path) -> None:
    pid_file = repo / "daemon.pid"
    suite(repo, judge_case("daemon", "detaches_daemon.py", pid_file=str(pid_file)))
    proc = run_cli("run", "evals", "--judge-timeout", "20", cwd=repo)
    daemon = int(pid_file.read_text())
    try:
        assert proc.returncode == 0, proc.stderr
        assert wait_for(lambda: not pid_alive(daemon), 10), "the judge's detached daemon outlived the run"
    finally:
        kill_quietly([daemon])


@pytest.mark.parametrize("double_fork", ["", "yes"])
def test_a_daemon_in_a_session_of_its_own_does_not_outlive_the_run(repo: Path, double_fork: str) -> None:
    """setsid takes the daemon out of the judge's process group; agentv-gate adopts it as a child
    subreaper once its parent is gone, and ends it when the run ends."""
    pid_file = repo / "daemon.pid"
    suite(repo, judge_case("daemon", "detaches_session.py", pid_file=str(pid_file), double_fork=double_fork),
          judge_case("healthy", "ok_judge.py"))
    proc = run_cli("run", "evals", "--judge-timeout", "20", cwd=repo)
    daemon = int(pid_file.read_text())
    try:
        assert proc.returncode == 0, proc.stderr
        assert wait_for(lambda: not pid_alive(daemon), 10), "the judge's daemon in its own session outlived the run"
    finally:
        kill_quietly([daemon])


# ---------------------------------------------------------------- targets that hang or cut off


class RawServer:
    """A TCP server on 127.0.0.1 whose connections are handled by `behaviour(conn)` on a thread."""

    def __init__(self, behaviour: str) -> None:
        self.behaviour = behaviour
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.conns: list[socket.socket] = []
        self.closed = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"

    def _accept(self) -> None:
        while not self.closed.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            if self.behaviour == "cut":
                threading.Thread(target=self._cut, args=(conn,), daemon=True).start()
            # "silent": keep the connection open and never say a word

    @staticmethod
    def _cut(conn: socket.socket) -> None:
        """Read the request, promise a 1000-byte body, send 30 bytes of it and hang up."""
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                       if line.lower().startswith(b"content-length:")), 0)
        while len(body) < length:
            body += conn.recv(65536)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
                     b'{"choices": [{"message": {"con')
        conn.close()

    def close(self) -> None:
        self.closed.set()
        self.sock.close()
        for conn in self.conns:
            conn.close()


@pytest.fixture()
def raw_server(request: pytest.FixtureRequest) -> Iterator[RawServer]:
    server = RawServer(request.param)
    yield server
    server.close()


def http_targets(url: str) -> str:
    return f"""
        targets:
          - name: default
            provider: mock
            response: fine
          - name: remote
            provider: openai
            endpoint: {url}
            model: m
            timeout_seconds: 1
            max_retries: 0
        """


@pytest.mark.parametrize(("raw_server", "reason"), [
    ("silent", "no response within 1.00s"),
    ("cut", "the connection closed before the reply was complete (30 bytes read"),
], indirect=["raw_server"])
def test_an_http_target_that_hangs_or_cuts_off_the_body_is_that_case_s_error(repo: Path, raw_server: RawServer,
                                                                            reason: str) -> None:
    write(repo / ".agentv/targets.yaml", http_targets(raw_server.url))
    suite(repo, contains_case("local"), contains_case("remote", target="remote"), name="http")
    proc = run_cli("run", "evals", cwd=repo)
    assert proc.returncode == 1, proc.stderr
    rows = assert_reported(repo, {"local": "pass", "remote": "error"})
    error = str(rows["remote"]["error"])
    assert error.startswith("target remote:") and raw_server.url.split("/v1")[0] in error, error
    assert reason in error, error
    assert no_traceback(proc.stdout + proc.stderr)


def test_a_cli_target_that_never_answers_is_killed_at_its_timeout(repo: Path) -> None:
    marker = repo / "sleeper.pid"
    write(repo / ".agentv/targets.yaml", f"""
        targets:
          - name: default
            provider: mock
            response: fine
          - name: sleeper
            provider: cli
            command_template: echo $$ > {marker} && exec sleep 60
            timeout_seconds: 1
        """)
    suite(repo, contains_case("local"), contains_case("sleeper", target="sleeper"), name="cli")
    proc = run_cli("run", "evals", cwd=repo)
    assert proc.returncode == 1, proc.stderr
    rows = assert_reported(repo, {"local": "pass", "sleeper": "error"})
    assert "timed out" in str(rows["sleeper"]["error"]), rows["sleeper"]["error"]
    sleeper = int(marker.read_text())
    try:
        assert wait_for(lambda: not pid_alive(sleeper), 10)
    finally:
        kill_quietly([sleeper])


# ---------------------------------------------------------------- output that cannot be written


def simple_suite(repo: Path) -> None:
    write(repo / "evals/simple.eval.yaml", """
        tests:
          - id: one
            input: hi
            assert: [{type: contains, value: ok}]
        """)


@pytest.mark.parametrize(("flag", "path", "reason"), [
    ("--results", "/dev/full", "No space left on device"),
    ("--junit", "/dev/full", "No space left on device"),
    ("--results", "blocker/sub/results.jsonl", "Not a directory"),
    ("--junit", "blocker/junit.xml", "Not a directory"),
    ("--output-dir", "blocker/out", "Not a directory"),
])
def test_unwritable_output_is_a_one_line_usage_error(repo: Path, flag: str, path: str, reason: str) -> None:
    if path == "/dev/full":
        if not Path("/dev/full").is_char_device():
            pytest.skip("no /dev/full on this system")
        # Through a symlink: if a regression ever renamed a temp file over the path (as root), it
        # would replace this link, not the system's /dev/full.
        (repo / "full").symlink_to("/dev/full")
        path = "full"
    simple_suite(repo)
    (repo / "blocker").write_text("a regular file where a folder is expected\n")
    proc = run_cli("run", "evals", flag, path, cwd=repo)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert no_traceback(proc.stderr)
    # Off a terminal the cases that ran before the end-of-run reports have their live lines.
    live = ("PASS  ", "FAIL  ", "ERROR ")
    lines = [line for line in proc.stderr.splitlines() if line.strip() and not line.startswith(live)]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("agentv-gate: cannot write") and reason in lines[0], lines[0]
    if path == "full":
        assert (repo / "full").is_symlink() and Path("/dev/full").is_char_device()


# ---------------------------------------------------------------- interrupted runs


@pytest.mark.parametrize(("signals", "code"), [
    ([signal.SIGTERM], 143),
    ([signal.SIGINT], 130),
    ([signal.SIGINT, signal.SIGTERM, signal.SIGINT], 130),  # a cancelled CI job signals again: reports still whole
], ids=["SIGTERM", "SIGINT", "SIGINT-then-more"])
def test_an_interrupted_run_exits_keeping_finished_cases_and_kills_every_judge(repo: Path, signals: list[int],
                                                                               code: int) -> None:
    pid_dir = repo / "pids"
    pid_dir.mkdir()
    suite(repo, judge_case("fast1", "ok_judge.py"), judge_case("fast2", "ok_judge.py"),
          judge_case("slow1", "hang_with_grandchild.py", pid_dir=str(pid_dir)),
          judge_case("slow2", "hang_with_grandchild.py", pid_dir=str(pid_dir)))
    results = repo / OUT / "results.jsonl"
    proc = start_cli("run", "evals", "--workers", "4", "--judge-timeout", "90", cwd=repo)
    pids: list[int] = []
    try:
        def ready() -> bool:
            rows = read_rows(results) if results.exists() else []
            return len(rows) == 2 and len(list(pid_dir.glob("*.pids"))) == 2
        assert wait_for(ready, 30), "fast cases never finished or slow judges never started"
        pids = [int(p) for f in pid_dir.glob("*.pids") for p in f.read_text().split()]
        assert len(pids) == 4 and all(pid_alive(p) for p in pids)
        for signum in signals:
            os.kill(proc.pid, signum)
            time.sleep(0.02)
        # Far below the 90 s judge timeout: the hanging judges were killed, not waited for.
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    finally:
        if proc.poll() is None:
            proc.kill()
    try:
        assert proc.returncode == code, err
        assert "interrupted; writing 2 finished case(s) of 4" in err
        # The finished half passed, but the run as a whole must not read as a pass.
        assert "agentv-gate INTERRUPTED: 2 cases: 2 passed, 0 failed, 0 errors, 2 not run (interrupted)" in out
        assert "PASSED" not in out
        assert no_traceback(out + err)
        assert assert_reported(repo, {"fast1": "pass", "fast2": "pass"}, not_run=("slow1", "slow2"))
        assert wait_for(lambda: not any(pid_alive(p) for p in pids), 10), \
            f"judge processes survived the interrupted run: {[p for p in pids if pid_alive(p)]}"
    finally:
        kill_quietly(pids)


def assert_sigterm_exits_at_once_once_stuck(repo: Path, raw_server: RawServer, stuck_connections: int,
                                            stuck: str) -> None:
    """Run the suite, SIGTERM it once `local` has finished and `stuck_connections` requests hang on
    the silent server, and require a prompt 143 with `local` reported: far below the 90 s request
    timeout, so no thread stuck in a network read holds the exit."""
    results = repo / OUT / "results.jsonl"
    proc = start_cli("run", "evals", "--no-cache", cwd=repo)
    try:
        assert wait_for(lambda: results.exists() and len(read_rows(results)) == 1
                        and len(raw_server.conns) >= stuck_connections, 30)
        os.kill(proc.pid, signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, err
    assert no_traceback(out + err)
    assert_reported(repo, {"local": "pass"}, not_run=(stuck,))


@pytest.mark.parametrize("raw_server", ["silent"], indirect=True)
def test_an_interrupted_run_does_not_wait_for_a_target_stuck_in_a_network_read(repo: Path, raw_server: RawServer) -> None:
    write(repo / ".agentv/targets.yaml", http_targets(raw_server.url).replace("timeout_seconds: 1", "timeout_seconds: 90"))
    suite(repo, contains_case("local"), contains_case("remote", target="remote"), name="http")
    assert_sigterm_exits_at_once_once_stuck(repo, raw_server, stuck_connections=1, stuck="remote")


@pytest.mark.parametrize("raw_server", ["silent"], indirect=True)
def test_an_interrupted_run_does_not_wait_for_composite_members_stuck_in_a_network_read(repo: Path,
                                                                                      raw_server: RawServer) -> None:
    """Two LLM-judge members of a composite run side by side; both wait on a judge that never answers."""
    targets = http_targets(raw_server.url).replace("timeout_seconds: 1", "timeout_seconds: 90")
    write(repo / ".agentv/targets.yaml", targets.replace("response: fine", "response: fine\n            judge_target: remote"))
    write(repo / "evals/composite.eval.yaml", """
        tests:
          - id: local
            input: hi
            assert: [{type: contains, value: fine}]
          - id: judged
            input: hi
            criteria: says fine
            assert:
              - name: both
                type: composite
                evaluators:
                  - {name: first, type: llm_judge}
                  - {name: second, type: llm_judge}
                aggregator: {type: weighted_average}
        """)
    assert_sigterm_exits_at_once_once_stuck(repo, raw_server, stuck_connections=2, stuck="judged")
