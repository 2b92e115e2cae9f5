"""Real bounds: output over a cap is an error that says so, and `timeout_seconds` is a deadline.

A `cli` target or a code judge whose output is cut at the capture cap must not be judged as if
it were whole (`contains` passing on the first megabytes of a flood); an HTTP reply has a size
cap too, and a server that drips its body a byte at a time cannot hold a case past the target's
`timeout_seconds` (nor its retries past `retry_max_total_seconds`).
"""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.reports import read_rows

FLOOD = "python3 -c \"import sys; sys.stdout.write('Paris ' + 'x' * {size})\""


def test_cli_target_and_code_judge_output_over_the_cap_is_an_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", f"""
        targets:
          - name: default
            provider: mock
            response: Paris
          - name: flood
            provider: cli
            command_template: {FLOOD.format(size=9 * 1024 * 1024)}
          - name: small-cap
            provider: cli
            command_template: {FLOOD.format(size=5000)}
            max_response_bytes: 2000
          - name: under-cap
            provider: cli
            command_template: {FLOOD.format(size=1000)}
            max_response_bytes: 2000
        """)
    # Whole, this output is two JSON values: the last line (score 0) would be taken. Cut at the
    # cap, only the first (score 1) would be left.
    write(repo / "evals" / "judge.py", """
        import sys
        sys.stdin.read()
        print('{"score": 1.0}')
        print(' ' * (9 * 1024 * 1024))
        print('{"score": 0.0}')
        """)
    write(repo / "evals" / "caps.eval.yaml", """
        tests:
          - {id: flood, target: flood, input: q, assert: [{type: contains, value: Paris}]}
          - {id: small-cap, target: small-cap, input: q, assert: [{type: contains, value: Paris}]}
          - {id: under-cap, target: under-cap, input: q, assert: [{type: contains, value: Paris}]}
          - id: judge-flood
            input: q
            assert: [{type: code_judge, name: flood, script: [python3, judge.py]}]
        """)
    proc = run_cli("run", "evals", "--workers", "2", timeout=120, cwd=repo)
    rows = {r["eval_id"]: r for r in read_rows(repo / ".agentv-gate/results.jsonl")}
    verdicts = {k: r["verdict"] for k, r in rows.items()}
    assert verdicts == {"flood": "error", "small-cap": "error", "under-cap": "pass", "judge-flood": "error"}, (
        proc.stderr, {k: str(r.get("error"))[:300] for k, r in rows.items()})
    assert "max_response_bytes" in rows["flood"]["error"] and str(8 * 1024 * 1024) in rows["flood"]["error"]
    assert "more than 2000 bytes" in rows["small-cap"]["error"]
    assert "more than" in rows["judge-flood"]["error"] and "stdout" in rows["judge-flood"]["error"]
    for row in rows.values():
        assert len(str(row)) < 20_000  # the flood never reaches the results


class DripServer:
    """An HTTP server that sends headers at once, then its body one byte every `interval` seconds."""

    def __init__(self, interval: float, body: bytes) -> None:
        self.interval = interval
        self.body = body
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._drip, args=(conn,), daemon=True).start()

    def _drip(self, conn: socket.socket) -> None:
        try:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         b"Content-Length: %d\r\n\r\n" % len(self.body))
            for byte in self.body:
                if self.stop.is_set():
                    break
                conn.sendall(bytes([byte]))
                time.sleep(self.interval)
        except OSError:
            pass
        finally:
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


def test_a_dripping_server_cannot_hold_a_case_past_timeout_seconds(tmp_path: Path) -> None:
    body = b'{"choices": [{"message": {"role": "assistant", "content": "Paris"}}]}' + b" " * 400
    server = DripServer(0.05, body)  # ~24 s for the whole body
    try:
        repo = make_repo(tmp_path / "repo", f"""
            targets:
              - name: default
                provider: openai
                endpoint: {server.url}/v1
                model: fake
                timeout_seconds: 1
                max_retries: 0
            """)
        write(repo / "evals" / "drip.eval.yaml", """
            tests:
              - {id: drip, input: q, assert: [{type: contains, value: Paris}]}
            """)
        started = time.monotonic()
        proc = run_cli("run", "evals", timeout=60, cwd=repo)
        took = time.monotonic() - started
    finally:
        server.close()
    rows = read_rows(repo / ".agentv-gate/results.jsonl")
    assert [r["verdict"] for r in rows] == ["error"], proc.stderr
    assert "1.00s" in rows[0]["error"] and "deadline" in rows[0]["error"], rows[0]["error"]
    assert took < 15, f"a 1 s deadline held the run for {took:.0f} s"


def test_an_http_reply_over_max_response_bytes_is_an_error(tmp_path: Path) -> None:
    from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply

    with FakeLLMServer() as server:
        server.set_default("/v1/chat/completions", FakeReply.openai("Paris " + "y" * 50_000))
        server.set_default("/small/v1/chat/completions", FakeReply.openai("Paris"))
        repo = make_repo(tmp_path / "repo", f"""
            targets:
              - name: big
                provider: openai
                endpoint: {server.url}/v1
                model: fake
                max_retries: 0
                max_response_bytes: 10000
              - name: small
                provider: openai
                endpoint: {server.url}/small/v1
                model: fake
                max_retries: 0
                max_response_bytes: 10000
            """)
        write(repo / "evals" / "big.eval.yaml", """
            tests:
              - {id: big, target: big, input: q, assert: [{type: contains, value: Paris}]}
              - {id: small, target: small, input: q, assert: [{type: contains, value: Paris}]}
            """)
        proc = run_cli("run", "evals", cwd=repo)
    rows = {r["eval_id"]: r for r in read_rows(repo / ".agentv-gate/results.jsonl")}
    assert {k: r["verdict"] for k, r in rows.items()} == {"big": "error", "small": "pass"}, proc.stderr
    assert "max_response_bytes" in rows["big"]["error"] and "10000" in rows["big"]["error"]
    assert len(str(rows["big"])) < 5000


def test_retry_max_total_seconds_bounds_every_attempt_together(tmp_path: Path) -> None:
    body = b'{"choices": [{"message": {"role": "assistant", "content": "Paris"}}]}' + b" " * 400
    server = DripServer(0.05, body)
    try:
        repo = make_repo(tmp_path / "repo", f"""
            targets:
              - name: default
                provider: openai
                endpoint: {server.url}/v1
                model: fake
                timeout_seconds: 30
                max_retries: 20
                retry_initial_delay_ms: 10
                retry_max_total_seconds: 2
            """)
        write(repo / "evals" / "drip.eval.yaml", "tests:\n  - {id: drip, input: q, assert: [{type: contains, value: Paris}]}\n")
        started = time.monotonic()
        proc = run_cli("run", "evals", timeout=60, cwd=repo)
        took = time.monotonic() - started
    finally:
        server.close()
    rows = read_rows(repo / ".agentv-gate/results.jsonl")
    assert [r["verdict"] for r in rows] == ["error"], proc.stderr
    assert took < 15, f"retry_max_total_seconds: 2 held the run for {took:.0f} s"
