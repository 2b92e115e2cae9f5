"""`provider: claude-cli` (AgentV 4.42), through the CLI, against a stand-in Claude CLI that prints stream-json events
as the real one does: AgentV's command line, the prompt on stdin, the last assistant message's text as the answer,
the `result` event's cost, duration and tokens; a missing program, an exit code other than 0 and the timeout are the
case's error."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.reports import rows_by_id

CLAUDE = """\
#!{python}
import json, os, sys, time
mode = os.environ.get("FAKE_CLAUDE_MODE", "answer")
prompt = sys.stdin.read()
open(os.environ["FAKE_CLAUDE_LOG"], "w").write(json.dumps({{
    "argv": sys.argv[1:], "cwd": os.getcwd(), "prompt": prompt,
    "markers": [k for k in ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT") if k in os.environ]}}))
if mode == "exit":
    sys.stderr.write("claude: not logged in\\n"); sys.exit(2)
if mode == "hang":
    time.sleep(60)
def emit(e):
    print(json.dumps(e), flush=True)
emit({{"type": "system", "subtype": "init"}})
emit({{"type": "stream_event", "event": {{"type": "content_block_delta"}}}})
emit({{"type": "assistant", "message": {{"content": [{{"type": "tool_use", "id": "t1", "name": "Read",
                                                     "input": {{"file_path": "a.txt"}}}}]}}}})
emit({{"type": "user", "message": {{"content": [{{"type": "tool_result", "tool_use_id": "t1"}}]}}}})
emit({{"type": "assistant", "message": {{"content": [{{"type": "text", "text": "The capital"}},
                                                    {{"type": "text", "text": "is Paris."}}]}}}})
emit({{"type": "assistant", "message": {{"content": [{{"type": "tool_use", "id": "t2", "name": "Bash",
                                                     "input": {{"command": "ls"}}}}]}}}})
print("not json")
emit({{"type": "result", "total_cost_usd": 0.125, "duration_ms": 4321,
       "usage": {{"input_tokens": 10, "cache_read_input_tokens": 5, "cache_creation_input_tokens": 2,
                  "output_tokens": 7}}}})
"""

SUITE = """\
tests:
  - id: paris
    input: What is the capital of France?
    assertions:
      - {type: contains, value: "The capital\\nis Paris."}
"""


def _repo(tmp_path: Path, settings: str = "") -> tuple[Path, Path]:
    repo = make_repo(tmp_path / "repo", f"""
        targets:
          - name: default
            provider: claude-cli
            executable: {tmp_path / "bin" / "claude"}
        {settings}
    """)
    write(tmp_path / "bin" / "claude", CLAUDE.format(python=sys.executable), executable=True)
    write(repo / "evals" / "x.eval.yaml", SUITE)
    return repo, tmp_path / "claude.json"


def test_claude_answers_as_agentv_runs_it(tmp_path: Path) -> None:
    repo, log = _repo(tmp_path, """
            model: sonnet
            max_turns: 3
            cwd: ..
            stream_log: summary
    """)
    done = run_cli("run", "evals", "--no-cache", cwd=repo,
                   env={"FAKE_CLAUDE_LOG": str(log), "CLAUDECODE": "1", "CLAUDE_CODE_ENTRYPOINT": "cli"})
    assert done.returncode == 0, done.stdout + done.stderr
    seen = json.loads(log.read_text())
    assert seen["argv"] == ["-p", "--output-format", "stream-json", "--include-partial-messages", "--verbose",
                            "--dangerously-skip-permissions", "--model", "sonnet", "--max-turns", "3"]
    assert seen["prompt"] == "[[ ## user_query ## ]]\n\nWhat is the capital of France?"
    assert seen["cwd"] == str(repo) and seen["markers"] == []
    row = rows_by_id(repo / ".agentv-gate" / "results.jsonl")["paris"]
    assert row["verdict"] == "pass"  # the last assistant message with text, not the tool-only one after it
    assert row["cost_usd"] == 0.125
    assert row["token_usage"]["input"] == 17 and row["token_usage"]["output"] == 7


def test_bypass_permissions_false_leaves_the_flag_out(tmp_path: Path) -> None:
    repo, log = _repo(tmp_path, "    bypass_permissions: false\n")
    run_cli("run", "evals", "--no-cache", cwd=repo, env={"FAKE_CLAUDE_LOG": str(log)})
    assert "--dangerously-skip-permissions" not in json.loads(log.read_text())["argv"]


@pytest.mark.parametrize(("mode", "said"), [("exit", "Claude CLI exited with code 2: claude: not logged in"),
                                            ("hang", "Claude CLI timed out after 1s")])
def test_a_claude_that_does_not_answer_is_the_cases_error(tmp_path: Path, mode: str, said: str) -> None:
    # the short timeout only where it is the point: a loaded machine may take a second to start the fake CLI
    repo, log = _repo(tmp_path, f"    timeout_seconds: {1 if mode == 'hang' else 60}\n")
    done = run_cli("run", "evals", "--no-cache", cwd=repo, env={"FAKE_CLAUDE_LOG": str(log), "FAKE_CLAUDE_MODE": mode})
    assert done.returncode == 1, done.stdout + done.stderr
    row = rows_by_id(repo / ".agentv-gate" / "results.jsonl")["paris"]
    assert row["verdict"] == "error" and said in row["error"], row["error"]


def test_a_missing_claude_binary_is_the_cases_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", "targets:\n  - name: default\n    provider: claude-cli\n")
    write(repo / "evals" / "x.eval.yaml", SUITE)
    done = run_cli("run", "evals", "--no-cache", cwd=repo, env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 1, done.stdout + done.stderr
    row = rows_by_id(repo / ".agentv-gate" / "results.jsonl")["paris"]
    assert ("Claude CLI executable 'claude' was not found on PATH. Install claude-code or ensure it is in PATH."
            in row["error"])
