"""Runs without some targets' secrets (a fork's pull request).

`validate` needs no secrets; `run` stops on an unset variable (exit 2, every one named at once);
`run --skip-missing-env` runs what can run and reports the rest as not run, naming the variable,
with exit 5: never the exit of a pass, and a failing case still makes it 1.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from agentv_gate.errors import EXIT_FAILED, EXIT_NOT_RUN, EXIT_OK, EXIT_USAGE
from tests.helpers.cli import run_cli
from tests.helpers.fake_github import FakeGitHub
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply
from tests.helpers.files import write
from tests.helpers.github_runner import parse_github_output
from tests.helpers.targets import CHAT

OWN = ("MISSING_ENV_T_",)

TARGETS = """\
targets:
  - name: default
    provider: mock
    response: Paris is the capital of France.
    judge_target: judge
  - name: judge
    provider: openai
    base_url: http://127.0.0.1:${{ MISSING_ENV_T_PORT }}/v1
    api_key: ${{ MISSING_ENV_T_KEY }}
    model: gpt-4o
"""

SUITE = """\
tests:
  - id: deterministic
    input: What is the capital of France?
    assertions:
      - type: contains
        value: Paris
  - id: judged
    input: What is the capital of France?
    criteria: Names Paris
"""


def _project(repo: Path, suite: str = SUITE) -> None:
    write(repo / ".agentv/targets.yaml", TARGETS)
    write(repo / "evals/geo.eval.yaml", suite)


def test_validate_needs_no_secret_and_run_names_every_unset_variable_at_once(repo: Path) -> None:
    _project(repo)
    checked = run_cli("validate", "evals", cwd=repo, drop=OWN)
    assert checked.returncode == EXIT_OK, checked.stdout + checked.stderr
    assert "MISSING_ENV_T_KEY, MISSING_ENV_T_PORT" in checked.stderr
    ran = run_cli("run", "evals", "--no-cache", cwd=repo, drop=OWN)
    assert ran.returncode == EXIT_USAGE
    # Both, repo-relative, each at its own key's line (base_url embeds the variable)
    assert (".agentv/targets.yaml:8: target 'judge': environment variable 'MISSING_ENV_T_PORT' (base_url: "
            in ran.stderr)
    assert ".agentv/targets.yaml:9: target 'judge': environment variable 'MISSING_ENV_T_KEY'" in ran.stderr
    assert str(repo) not in ran.stderr


def test_skip_missing_env_runs_what_can_run_and_exits_5(repo: Path, tmp_path: Path) -> None:
    _project(repo)
    output = tmp_path / "github-output"
    ran = run_cli("run", "evals", "--no-cache", "--skip-missing-env", cwd=repo, drop=OWN,
                  env={"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": str(output),
                       "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")})
    assert ran.returncode == EXIT_NOT_RUN, ran.stdout + ran.stderr
    assert "agentv-gate INCOMPLETE: 2 cases: 1 passed, 0 failed, 0 errors, 1 not run (environment variables unset)" \
        in ran.stdout
    rows = {row["eval_id"]: row for row in map(json.loads, (repo / ".agentv-gate/results.jsonl").read_text().splitlines())}
    assert rows["deterministic"]["verdict"] == "pass"
    assert rows["judged"]["failure_reason_code"] == "missing_env"
    # A 4.x file (`assertions:`): the row of the case not run holds the pass mark it would have been judged at.
    assert rows["judged"]["threshold"] == rows["deterministic"]["threshold"] == 0.8
    assert "MISSING_ENV_T_KEY" in rows["judged"]["error"] and "MISSING_ENV_T_PORT" in rows["judged"]["error"]
    warnings = [line for line in ran.stdout.splitlines() if line.startswith("::warning ")]
    assert any("judged not run" in line and "MISSING_ENV_T_KEY" in line for line in warnings), ran.stdout
    assert not any("not run: not run" in line for line in warnings), warnings  # said once
    assert not any(line.startswith("::error") for line in ran.stdout.splitlines())
    suite = ET.parse(repo / ".agentv-gate/junit.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("skipped") == "1" and suite.get("errors") == "0"


def test_skip_missing_env_with_a_failing_case_still_fails(repo: Path) -> None:
    _project(repo, SUITE.replace("value: Paris", "value: Lyon"))
    ran = run_cli("run", "evals", "--no-cache", "--skip-missing-env", cwd=repo, drop=OWN)
    assert ran.returncode == EXIT_FAILED, ran.stdout + ran.stderr
    assert "1 failed" in ran.stdout and "1 not run (environment variables unset)" in ran.stdout


def test_skip_missing_env_with_every_variable_set_runs_everything(repo: Path, fake_llm: FakeLLMServer) -> None:
    _project(repo)
    fake_llm.enqueue(CHAT, FakeReply.openai('{"score": 1.0, "hits": ["names Paris"], "misses": [], "reasoning": "ok"}'))
    port = fake_llm.url.rsplit(":", 1)[1].split("/")[0]
    ran = run_cli("run", "evals", "--no-cache", "--skip-missing-env", cwd=repo, drop=OWN,
                  env={"MISSING_ENV_T_PORT": port, "MISSING_ENV_T_KEY": "sk-test-0123456789"})
    assert ran.returncode == EXIT_OK, ran.stdout + ran.stderr
    assert "2 passed" in ran.stdout


def _counts(text: str) -> dict[str, int]:
    """The counts a one-line total names: passed, failed, error(s), quarantined, not run, and the total."""
    found = {word.rstrip("s") if word.startswith("error") else word: int(n) for n, word in
             re.findall(r"(\d+)\*?\*? (passed|failed|errors?|quarantined|not run)", text)}
    found["total"] = int(re.search(r"(?:of )?(\d+) cases", text).group(1))  # type: ignore[union-attr]
    return found


def test_the_counts_add_up_in_the_outputs_the_summary_the_comment_and_junit(repo: Path, tmp_path: Path) -> None:
    """passed + failed + errors + quarantined + not run = total, wherever the run is counted."""
    _project(repo, SUITE + """\
  - id: failing
    input: What is the capital of France?
    assertions:
      - {type: contains, value: Lyon}
  - id: known-gap
    input: What is the capital of France?
    assertions:
      - {type: contains, value: Rome}
""")
    write(repo / ".agentv/gate.yaml", "quarantine:\n  - id: known-gap\n    reason: no Rome yet\n")
    output, summary = tmp_path / "github-output", tmp_path / "summary.md"
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"number": 7, "pull_request": {"number": 7, "head": {"sha": "a" * 40},
                                                               "base": {"ref": "main"}}}))
    with FakeGitHub(token="ghs_faketoken1234567890") as github:
        ran = run_cli("run", "evals", "--no-cache", "--skip-missing-env", "--comment", cwd=repo, drop=OWN,
                      env={"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary),
                           "GITHUB_EVENT_PATH": str(event), "GITHUB_EVENT_NAME": "pull_request",
                           "GITHUB_REPOSITORY": "octo/widgets", "GITHUB_API_URL": github.url,
                           "AGENTV_GATE_GITHUB_TOKEN": "ghs_faketoken1234567890"})
        [comment] = [c["body"] for c in github.comments.get(7, [])]
    assert ran.returncode == EXIT_FAILED, ran.stdout + ran.stderr
    expected = {"passed": 1, "failed": 1, "error": 0, "quarantined": 1, "not run": 1, "total": 4}
    outputs = parse_github_output(output.read_text())
    assert {k: outputs[k] for k in ("passed", "failed", "errors", "quarantined", "not-run", "total")} == \
        {"passed": "1", "failed": "1", "errors": "0", "quarantined": "1", "not-run": "1", "total": "4"}
    [line] = [line for line in summary.read_text().splitlines() if " passed, " in line]
    assert _counts(line) == expected, line
    [line] = [line for line in comment.splitlines() if " passed, " in line]
    assert _counts(line) == expected, line
    suite = ET.parse(repo / ".agentv-gate/junit.xml").getroot().find("testsuite")
    assert suite is not None
    cases = suite.findall("testcase")
    assert len(cases) == int(suite.get("tests", "-1")) == 4
    skipped = [c.get("name") for c in cases if c.find("skipped") is not None]
    assert len(skipped) == int(suite.get("skipped", "-1")) == 2, skipped
    assert int(suite.get("failures", "-1")) + int(suite.get("errors", "-1")) + len(skipped) + 1 == 4


def test_a_not_run_row_holds_the_pass_mark_its_case_is_judged_at(repo: Path) -> None:
    _project(repo, SUITE.replace("tests:", "threshold: 0.7\ntests:"))
    own = run_cli("run", "evals", "--no-cache", "--skip-missing-env", cwd=repo, drop=OWN)
    flag = run_cli("run", "evals", "--no-cache", "--skip-missing-env", "--threshold", "0.6", "--results", "flag.jsonl",
                   cwd=repo, drop=OWN)
    assert own.returncode == flag.returncode == EXIT_NOT_RUN, own.stdout + own.stderr + flag.stderr
    for name, mark in ((".agentv-gate/results.jsonl", 0.7), ("flag.jsonl", 0.7)):  # the file's own wins
        rows = [json.loads(line) for line in (repo / name).read_text().splitlines()]
        assert {row["eval_id"]: row["threshold"] for row in rows} == {"deterministic": mark, "judged": mark}
    _project(repo)
    flag = run_cli("run", "evals", "--no-cache", "--skip-missing-env", "--threshold", "0.6", cwd=repo, drop=OWN)
    rows = [json.loads(line) for line in (repo / ".agentv-gate/results.jsonl").read_text().splitlines()]
    assert {row["eval_id"]: row["threshold"] for row in rows} == {"deterministic": 0.6, "judged": 0.6}
