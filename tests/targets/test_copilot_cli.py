"""`provider: copilot-cli` (and `copilot`), through the CLI, against a stand-in Copilot CLI speaking the Agent
Client Protocol on its stdio as the real one does: JSON-RPC lines, `initialize`, `session/new`, `session/prompt`,
the agent's `session/update` notifications and its `session/request_permission` request.

AgentV 4.42's CopilotCliProvider: `copilot --acp --stdio --allow-all-tools --yolo [--model M] [ARGS]`, every
permission granted, the answer the text of the message chunks; a JSON-RPC error, an early exit, the timeout and a
missing program are the case's error, never an answer.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli, start_cli
from tests.helpers.files import make_repo, write
from tests.helpers.processes import kill_quietly, pid_alive, wait_for
from tests.helpers.reports import rows_by_id

COPILOT = """\
#!{python}
import json, os, sys, time
mode = os.environ.get("FAKE_COPILOT_MODE", "answer")
log = open(os.environ["FAKE_COPILOT_LOG"], "a")
log.write(json.dumps({{"argv": sys.argv[1:], "cwd": os.getcwd(),
                       "env": {{k: v for k, v in os.environ.items() if k.startswith("COPILOT_PROVIDER_")}}}}) + "\\n")
def send(obj):
    sys.stdout.write(json.dumps(obj) + "\\n"); sys.stdout.flush()
if mode == "exit":
    sys.stderr.write("copilot: crashed on start\\n"); sys.exit(3)
for line in sys.stdin:
    msg = json.loads(line)
    log.write(json.dumps({{"got": msg}}) + "\\n"); log.flush()
    if "method" not in msg:
        continue
    m, i = msg["method"], msg["id"]
    if m == "initialize":
        print("a log line that is not JSON", flush=True)
        send({{"jsonrpc": "2.0", "id": i, "result": {{"protocolVersion": 1, "agentCapabilities": {{}}}}}})
    elif m == "session/new":
        if mode == "auth":
            send({{"jsonrpc": "2.0", "id": i, "error": {{"code": -32000, "message": "Authentication required"}}}})
        else:
            send({{"jsonrpc": "2.0", "id": i, "result": {{"sessionId": "s-1"}}}})
    elif m == "session/prompt":
        if mode == "hang":
            time.sleep(60)
        send({{"jsonrpc": "2.0", "id": 99, "method": "session/request_permission",
              "params": {{"sessionId": "s-1", "options": [{{"optionId": "allow", "kind": "allow_once"}}]}}}})
        granted = json.loads(sys.stdin.readline())
        log.write(json.dumps({{"permission": granted}}) + "\\n"); log.flush()
        send({{"jsonrpc": "2.0", "id": 100, "method": "fs/read_text_file", "params": {{"path": "/etc/passwd"}}}})
        log.write(json.dumps({{"fs": json.loads(sys.stdin.readline())}}) + "\\n"); log.flush()
        def update(u):
            send({{"jsonrpc": "2.0", "method": "session/update", "params": {{"sessionId": "s-1", "update": u}}}})
        update({{"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "read_file", "status": "pending",
                "rawInput": {{"path": "a.txt"}}}})
        out = {{"code": "rejected"}} if mode == "reject" else {{"text": "file text"}}
        update({{"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed", "rawOutput": out}})
        update({{"sessionUpdate": "agent_message_chunk", "content": {{"type": "text", "text": "The capital "}}}})
        update({{"sessionUpdate": "agent_thought_chunk", "content": {{"type": "text", "text": "hmm"}}}})
        update({{"sessionUpdate": "agent_message_chunk", "content": {{"type": "text", "text": "is Paris."}}}})
        update({{"sessionUpdate": "usage_update", "used": 1234, "size": 200000, "cost": {{"amount": 0.25, "currency": "USD"}}}})
        send({{"jsonrpc": "2.0", "id": i, "result": {{"stopReason": "end_turn"}}}})
"""

SUITE = """\
tests:
  - id: paris
    input: What is the capital of France?
    assertions:
      - {type: contains, value: Paris}
"""


def _repo(tmp_path: Path, settings: str = "") -> tuple[Path, Path]:
    repo = make_repo(tmp_path / "repo", f"""
        targets:
          - name: default
            provider: copilot-cli
            executable: {tmp_path / "bin" / "copilot"}
        {settings}
    """)
    write(tmp_path / "bin" / "copilot", COPILOT.format(python=sys.executable), executable=True)
    write(repo / "evals" / "x.eval.yaml", SUITE)
    return repo, tmp_path / "copilot.log"


def _log(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_copilot_answers_over_acp_as_agentv_speaks_to_it(tmp_path: Path) -> None:
    repo, log = _repo(tmp_path, """
            model: gpt-fake
            args: [--add-dir, /data]
            system_prompt: Be brief.
            stream_log: raw
            cwd: ..
    """)
    done = run_cli("run", "evals", "--no-cache", cwd=repo, env={"FAKE_COPILOT_LOG": str(log)})
    assert done.returncode == 0, done.stdout + done.stderr
    row = rows_by_id(repo / ".agentv-gate" / "results.jsonl")["paris"]
    assert row["verdict"] == "pass"
    entries = _log(log)
    assert entries[0]["argv"] == ["--acp", "--stdio", "--allow-all-tools", "--yolo", "--model", "gpt-fake",
                                  "--add-dir", "/data"]
    assert entries[0]["cwd"] == str(repo)  # `cwd: ..` from the eval file's folder
    calls = [e["got"] for e in entries if "got" in e and "method" in e["got"]]
    assert [c["method"] for c in calls] == ["initialize", "session/new", "session/prompt"]
    assert calls[0]["params"] == {"protocolVersion": 1, "clientCapabilities": {
        "fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}}
    assert calls[1]["params"] == {"cwd": str(repo), "mcpServers": []}
    assert calls[2]["params"] == {"sessionId": "s-1", "prompt": [
        {"type": "text", "text": "Be brief."},
        {"type": "text", "text": "[[ ## user_query ## ]]\n\nWhat is the capital of France?"}]}  # JS join
    permission = next(e["permission"] for e in entries if "permission" in e)
    assert permission == {"jsonrpc": "2.0", "id": 99, "result": {"outcome": {"outcome": "selected", "optionId": "allow"}}}
    fs = next(e["fs"] for e in entries if "fs" in e)
    assert fs["id"] == 100 and fs["error"]["code"] == -32601  # a request AgentV's client does not serve
    assert row["cost_usd"] == 0.25


def test_provider_copilot_is_the_same_provider(tmp_path: Path) -> None:
    repo, log = _repo(tmp_path)
    targets = repo / ".agentv" / "targets.yaml"
    targets.write_text(targets.read_text().replace("provider: copilot-cli", "provider: copilot"))
    done = run_cli("run", "evals", "--no-cache", cwd=repo, env={"FAKE_COPILOT_LOG": str(log)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert _log(log)[0]["argv"] == ["--acp", "--stdio", "--allow-all-tools", "--yolo"]


FAILURES = {
    "auth": "copilot-cli target 'default': Authentication required (code -32000)",
    "exit": "Copilot CLI exited before it answered 'initialize'; stderr: copilot: crashed on start",
    "hang": "Copilot CLI timed out after 1s",
    "reject": "Copilot rejected 1 tool call(s): read_file. Add args: [\"--yolo\"]",
}


@pytest.mark.parametrize("mode", list(FAILURES))
def test_a_copilot_that_does_not_answer_is_the_cases_error(tmp_path: Path, mode: str) -> None:
    # the short timeout only where it is the point: a loaded machine may take a second to start the fake CLI
    repo, log = _repo(tmp_path, f"    timeout_seconds: {1 if mode == 'hang' else 60}\n")
    done = run_cli("run", "evals", "--no-cache", cwd=repo, env={"FAKE_COPILOT_LOG": str(log),
                                                                 "FAKE_COPILOT_MODE": mode})
    assert done.returncode == 1, done.stdout + done.stderr
    row = rows_by_id(repo / ".agentv-gate" / "results.jsonl")["paris"]
    assert row["verdict"] == "error"
    assert FAILURES[mode] in row["error"], row["error"]


def test_a_missing_copilot_binary_is_the_cases_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", "targets:\n  - name: default\n    provider: copilot-cli\n")
    write(repo / "evals" / "x.eval.yaml", SUITE)
    done = run_cli("run", "evals", "--no-cache", cwd=repo, env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 1, done.stdout + done.stderr
    row = rows_by_id(repo / ".agentv-gate" / "results.jsonl")["paris"]
    assert row["verdict"] == "error"
    assert ("Failed to start Copilot CLI executable 'copilot' for target 'default'. command not found: 'copilot'"
            in row["error"])


def test_a_model_provider_of_ones_own_reaches_copilot_through_its_variables(tmp_path: Path) -> None:
    repo, log = _repo(tmp_path, """
            base_url: http://127.0.0.1:9/v1
            subprovider: openai
            api_key: ${{ MY_KEY }}
            api_format: responses
    """)
    done = run_cli("run", "evals", "--no-cache", cwd=repo, env={"FAKE_COPILOT_LOG": str(log),
                                                                 "MY_KEY": "sk-test-secret-1234567890"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert _log(log)[0]["env"] == {"COPILOT_PROVIDER_BASE_URL": "http://127.0.0.1:9/v1",
                                   "COPILOT_PROVIDER_TYPE": "openai", "COPILOT_PROVIDER_WIRE_API": "responses",
                                   "COPILOT_PROVIDER_API_KEY": "sk-test-secret-1234567890"}
    assert "sk-test-secret-1234567890" not in done.stdout + done.stderr
    assert "sk-test-secret-1234567890" not in (repo / ".agentv-gate" / "results.jsonl").read_text()


def test_an_interrupted_run_kills_a_copilot_that_never_answers(tmp_path: Path) -> None:
    """The ACP session is a running script like any other: SIGTERM to the gate ends it at once, not at its timeout."""
    repo, log = _repo(tmp_path)
    pid_file = tmp_path / "copilot.pid"
    write(tmp_path / "bin" / "copilot", f"#!{sys.executable}\nimport os, sys, time\n"
          f"open({str(pid_file)!r}, 'w').write(str(os.getpid()))\ntime.sleep(120)\n", executable=True)
    proc = start_cli("run", "evals", "--no-cache", cwd=repo, env={"FAKE_COPILOT_LOG": str(log)})
    try:
        assert wait_for(pid_file.exists, 30), "the stand-in Copilot never started"
        time.sleep(0.2)
        copilot = int(pid_file.read_text())
        assert pid_alive(copilot)
        os.kill(proc.pid, signal.SIGTERM)
        proc.communicate(timeout=30)
        assert proc.returncode == 143
        assert wait_for(lambda: not pid_alive(copilot), 10), "the Copilot session outlived the interrupted run"
    finally:
        if proc.poll() is None:
            proc.kill()
        if pid_file.exists():
            kill_quietly([int(pid_file.read_text())])
