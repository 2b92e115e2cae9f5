"""The end-of-run console output says in full why a case did not pass, and the table fits the terminal.

A table cell cut at a fixed width used to hide the useful part of an error (`…openai target
'judge':…` before an HTTP 401, `…can't open file '/tmp/m…` before the path), whatever `COLUMNS`
said. Now the table is fitted to the terminal width and a Details block below it prints each
non-passing case's error and misses whole; `--verbose` adds, per evaluator, the score, hits,
misses, reasoning and the judge's stderr tail.
"""

from __future__ import annotations

import io
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from agentv_gate.report.console import ConsoleReporter
from agentv_gate.report.rows import ReportRow
from tests.helpers.cli import run_cli as cli
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply
from tests.helpers.files import make_repo, write
from tests.helpers.reports import case_result

MISSING = "/tmp/monorepo/services/agent/judges/helpers/missing_helper_module.py"

FAILING_JUDGE = f"""
import sys
sys.stderr.write("python3: can't open file '{MISSING}': [Errno 2] No such file or directory\\n")
sys.exit(2)
"""

CHATTY_JUDGE = """
import json, sys
json.load(sys.stdin)
sys.stderr.write("debug: compared the answer with the keyword list\\n")
print(json.dumps({"score": 1.0, "hits": ["says ok"], "misses": [], "reasoning": "the answer is fine"}))
"""

SUITE = """
tests:
  - id: judged-by-a-model-whose-key-is-wrong
    input: Say ok
    assert:
      - name: quality
        type: llm_judge
        target: judge
  - id: judged-by-a-script-that-cannot-start
    input: Say ok
    assert:
      - name: broken
        type: code_judge
        script: [python3, judges/broken.py]
  - id: judged-by-a-chatty-script
    input: Say ok
    assert:
      - name: chatty
        type: code_judge
        script: [python3, judges/chatty.py]
"""


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as srv:
        yield srv


@pytest.fixture
def project(tmp_path: Path, server: FakeLLMServer) -> Path:
    targets = {"targets": [
        {"name": "default", "provider": "mock", "response": "ok"},
        {"name": "judge", "provider": "openai", "base_url": f"{server.url}/v1", "model": "grader",
         "api_key": "${{ JUDGE_KEY }}", "retry_initial_delay_ms": 1, "retry_max_delay_ms": 5, "retry_jitter_ms": 1},
    ]}
    repo = make_repo(tmp_path / "repo", yaml.safe_dump(targets, sort_keys=False))
    write(repo / "evals" / "judges" / "broken.py", FAILING_JUDGE)
    write(repo / "evals" / "judges" / "chatty.py", CHATTY_JUDGE)
    write(repo / "evals" / "suite.eval.yaml", SUITE)
    server.set_default("/v1/chat/completions", FakeReply.error(401, "Incorrect API key provided: sk-wr***"))
    return repo


def run_cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return cli(*args, cwd=cwd, env={"JUDGE_KEY": "sk-wrong", **(env or {})})


def table_lines(stdout: str) -> list[str]:
    """The table: from its header to the first blank line."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("VERDICT"))
    end = lines.index("", start)
    return lines[start:end]


def test_errors_are_printed_whole_and_the_table_fits_columns(project: Path) -> None:
    proc = run_cli("run", "evals", cwd=project, env={"COLUMNS": "80"})
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout
    assert all(len(line) <= 80 for line in table_lines(out)), table_lines(out)
    # What a cut cell hid: the status of the judge's HTTP call, and the whole path.
    assert "401" in out and "Incorrect API key provided" in out
    assert f"can't open file '{MISSING}'" in out
    details = out.split("\n\n", 1)[1]
    assert details.index("judged-by-a-model-whose-key-is-wrong") < details.index("401")
    assert "judged-by-a-chatty-script" not in details, "a passing case has no details without --verbose"
    assert "debug: compared" not in out


def test_a_wider_terminal_gets_a_wider_table(project: Path) -> None:
    narrow = table_lines(run_cli("run", "evals", cwd=project, env={"COLUMNS": "80"}).stdout)
    wide = table_lines(run_cli("run", "evals", cwd=project, env={"COLUMNS": "200"}).stdout)
    assert max(map(len, wide)) > 80 >= max(map(len, narrow))
    assert all(len(line) <= 200 for line in wide)


def test_quiet_still_says_why(project: Path) -> None:
    proc = run_cli("run", "--quiet", "evals", cwd=project, env={"COLUMNS": "80"})
    assert proc.returncode == 1
    assert f"can't open file '{MISSING}'" in proc.stdout and "401" in proc.stdout
    assert "judged-by-a-chatty-script" not in proc.stdout


def test_verbose_shows_each_evaluator_and_the_judges_stderr(project: Path) -> None:
    proc = run_cli("run", "--verbose", "evals", cwd=project, env={"COLUMNS": "80"})
    assert proc.returncode == 1, proc.stderr
    details = proc.stdout.split("\n\n", 1)[1]
    chatty = details[details.index("PASS judged-by-a-chatty-script"):]
    assert "chatty (code_judge): score 1.000" in chatty
    assert "hit: says ok" in chatty
    assert "reasoning: the answer is fine" in chatty
    assert "stderr: debug: compared the answer with the keyword list" in chatty
    broken = details[details.index("judged-by-a-script-that-cannot-start"):]
    assert "broken (code_judge): score 0.000" in broken
    assert f"stderr: python3: can't open file '{MISSING}'" in broken


def test_merge_verbose_reads_the_same_details_from_the_results_file(project: Path) -> None:
    run_cli("run", "evals", cwd=project)
    proc = run_cli("merge", "--verbose", ".agentv-gate/results.jsonl", "--output-dir", "merged", cwd=project)
    assert proc.returncode == 1, proc.stderr
    assert "stderr: debug: compared the answer with the keyword list" in proc.stdout
    assert "hit: says ok" in proc.stdout


def test_details_keep_model_text_inert() -> None:
    evil = case_result("x::add-mask::y", "error", error="boom\n::add-mask::secret\n\x1b[2J##[set-output name=a]b",
                       misses=["  ::stop-commands::tok", "\r::error::fake"])
    for result in (evil, ReportRow.of(evil)):
        out = io.StringIO()
        text = ConsoleReporter(progress=io.StringIO(), out=out, colour=True, width=80).finish([result])
        assert "secret" in text and "fake" in text
        assert "\x1b[2J" not in text and "##[" not in text and "\r" not in text
        assert all(not line.lstrip().startswith("::") for line in text.splitlines()), text


def test_a_huge_error_is_cut_with_a_note() -> None:
    result = case_result("big", "error", error="x" * 100_000)
    text = ConsoleReporter(progress=io.StringIO(), out=io.StringIO(), width=80).finish([result])
    assert len(text) < 20_000 and "more characters]" in text
