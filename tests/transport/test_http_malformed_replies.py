"""Replies no server should send, each written byte by byte by a loopback server: the gate names what
was wrong with the reply in its own words, never an exception's class name or Python's wording.

* 500 header lines: http.client reads at most 99 (its limit of 100 counts the blank line after them),
  and requests reports "got more than 100 headers" as a bare ConnectionError;
* a negative chunk size (`-5` in a chunked body): urllib3's "invalid literal" or "Chunk size" text.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers.cli import run_cli
from tests.helpers.fake_llm_server import FakeReply
from tests.helpers.files import make_repo, write
from tests.helpers.reports import RESULTS, read_rows
from tests.helpers.targets import SECRET
from tests.helpers.wire_server import Behaviour, Wire, WireRequest, WireServer

VERDICT = json.dumps({"score": 0.9, "hits": ["names Paris"], "misses": [], "reasoning": "Correct."})
BODY = FakeReply.openai(VERDICT).body


def _raw(data: bytes) -> Behaviour:
    """Writes `data` as the whole reply and closes the connection."""
    def behave(wire: Wire, request: WireRequest) -> bool:
        wire.send(data)
        return False
    return behave


def _headers(count: int) -> bytes:
    extra = "".join(f"X-Filler-{n}: {n}\r\n" for n in range(count))
    return (f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(BODY)}\r\n{extra}"
            "Connection: close\r\n\r\n").encode() + BODY


def _chunked(size_line: bytes) -> bytes:
    return (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
            b"Connection: close\r\n\r\n" + size_line + b"\r\n" + BODY[:5] + b"\r\n0\r\n\r\n")


@pytest.fixture()
def server() -> Any:
    with WireServer() as started:
        yield started


def _judged(tmp_path: Path, server: WireServer, data: bytes) -> tuple[int, dict, str]:
    server.default(_raw(data))
    targets = [{"name": "default", "provider": "mock", "response": "Paris is the capital of France.",
                "judge_target": "judge"},
               {"name": "judge", "provider": "openai", "base_url": server.url, "api_key": "${{ JUDGE_KEY }}",
                "model": "gpt-test", "max_retries": 0}]
    project = make_repo(tmp_path / "repo", yaml.safe_dump({"targets": targets}, sort_keys=False))
    write(project / "evals/capital.eval.yaml",
          "tests:\n  - id: capital\n    criteria: Names Paris\n    input: Capital of France?\n"
          "    assert:\n      - {name: quality, type: llm_judge}\n")
    no_proxy = {name: os.environ.get(name, "127.0.0.1,localhost") for name in ("NO_PROXY", "no_proxy")}
    done = run_cli("run", "evals", "--no-cache", cwd=project, env={"JUDGE_KEY": SECRET, **no_proxy})
    [row] = read_rows(project / RESULTS)
    return done.returncode, row, done.stdout + done.stderr


HEADERS_ALWAYS = 3  # Content-Type, Content-Length, Connection


def test_a_reply_with_500_header_lines_names_the_cause(tmp_path: Path, server: WireServer) -> None:
    """Fails before the fix: `connection failed (ConnectionError)`, which sends one looking at the network."""
    code, row, out = _judged(tmp_path, server, _headers(500))
    assert (code, row["verdict"]) == (1, "error"), out
    assert "the reply had more than 99 header lines, the most the gate's HTTP client reads" in row["error"]
    assert "ConnectionError" not in out


@pytest.mark.parametrize(("extra", "answered"), [(99 - HEADERS_ALWAYS, True), (100 - HEADERS_ALWAYS, False)])
def test_header_lines_at_the_limit_are_read_and_one_more_is_named(tmp_path: Path, server: WireServer,
                                                                  extra: int, answered: bool) -> None:
    code, row, out = _judged(tmp_path, server, _headers(extra))
    if answered:
        assert (code, row["verdict"], row["score"]) == (0, "pass", 0.9), out
    else:
        assert (code, row["verdict"]) == (1, "error"), out
        assert "more than 99 header lines" in row["error"]


def test_a_header_line_past_the_line_limit_is_named(tmp_path: Path, server: WireServer) -> None:
    data = _headers(0).replace(b"Connection: close", b"X-Long: " + b"a" * 70000 + b"\r\nConnection: close")
    code, row, out = _judged(tmp_path, server, data)
    assert (code, row["verdict"]) == (1, "error"), out
    assert "a status or header line longer than 65536 bytes" in row["error"]


def test_a_negative_chunk_size_is_said_in_the_gate_s_words(tmp_path: Path, server: WireServer) -> None:
    """Fails before the fix: `ValueError: read length must be non-negative or -1`, Python's wording."""
    code, row, out = _judged(tmp_path, server, _chunked(b"-5"))
    assert (code, row["verdict"]) == (1, "error"), out
    assert ("POST " in row["error"] and "the reply's chunked body had a negative chunk size (a chunk size is a "
            "hexadecimal number of bytes)" in row["error"]), row["error"]
    assert "ValueError" not in out and "non-negative" not in out


def test_a_chunk_size_that_is_not_hexadecimal_is_said_not_taken_for_a_closed_connection(
        tmp_path: Path, server: WireServer) -> None:
    code, row, out = _judged(tmp_path, server, _chunked(b"zz<b>"))
    assert (code, row["verdict"]) == (1, "error"), out
    assert "the reply's chunked body had an invalid chunk size 'zz<b>'" in row["error"], row["error"]
    assert "closed before the reply was complete" not in row["error"]


def test_a_well_formed_chunked_reply_is_read(tmp_path: Path, server: WireServer) -> None:
    data = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
            b"Connection: close\r\n\r\n" + b"%x\r\n" % len(BODY) + BODY + b"\r\n0\r\n\r\n")
    code, row, out = _judged(tmp_path, server, data)
    assert (code, row["verdict"], row["score"]) == (0, "pass", 0.9), out
