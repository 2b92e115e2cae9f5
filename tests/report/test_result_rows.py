"""Results rows carry AgentV 2.19's names beside the seed-004 ones, through the real CLI and through `merge`."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.reports import RESULTS, rows_by_id

AGENT = """\
import json
print(json.dumps({
    "text": "Acme is DENIED",
    "output_messages": [
        {"role": "assistant", "content": "", "tool_calls": [
            {"tool": "search", "input": {"q": "Acme"}, "output": "hit", "id": "1"},
            {"tool": "search", "input": {"q": "Acme Corp"}, "output": "hit", "id": "2"},
            {"tool": "fetch", "input": {"id": 42}, "output": "entry", "id": "3"}]},
        {"role": "assistant", "content": "Acme is DENIED"}],
    "token_usage": {"input": 120, "output": 30},
    "cost_usd": 0.0021,
}))
"""

SUITE = """
tests:
  - id: denied
    criteria: Flags Acme
    input: Screen Acme
    conversation_id: thread-7
    assert:
      - {name: word, type: contains, value: DENIED}
      - {name: entry, type: contains, value: entry 42}
  - id: approved
    criteria: Approves Acme
    input: Screen Acme
    assert:
      - {name: word, type: contains, value: APPROVED}
  - id: broken
    criteria: anything
    input: Screen Acme
    target: broken
    assert:
      - {name: word, type: contains, value: Acme}
"""


def make_project(tmp_path: Path) -> Path:
    targets = [{"name": "default", "provider": "cli", "command_template": "python3 agent.py", "timeout_seconds": 20},
               {"name": "broken", "provider": "cli", "command_template": "sh -c 'exit 3'", "timeout_seconds": 20}]
    project = make_repo(tmp_path / "repo", yaml.safe_dump({"targets": targets}, sort_keys=False))
    write(project / "evals/agent.py", AGENT)  # a cli target runs in the eval file's folder
    write(project / "evals/screen.eval.yaml", SUITE)
    write(project / ".agentv/gate.yaml", 'agentv: {version: "2.19"}\n')  # seed 004's rows: 2.19's pass mark
    return project


def test_rows_have_agentv_names_beside_the_gates_own_and_survive_merge(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    proc = run_cli("run", "evals", "--no-cache", cwd=project)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    rows = rows_by_id(project / RESULTS)

    denied = rows["denied"]
    assert denied["test_id"] == denied["eval_id"] == "denied"
    assert denied["answer"] == denied["candidate_answer"] == "Acme is DENIED"
    assert denied["dataset"] == "screen.eval" and denied["conversation_id"] == "thread-7"
    assert denied["input"] == [{"role": "user", "content": "Screen Acme"}]
    assert denied["token_usage"] == {"input": 120, "output": 30} and denied["cost_usd"] == 0.0021
    assert denied["trace"] == {"event_count": 3, "tool_names": ["fetch", "search"],
                               "tool_calls_by_name": {"search": 2, "fetch": 1}, "error_count": 0,
                               "llm_call_count": 2}
    assert [(s["name"], s["type"], s["score"], s["weight"], s["verdict"]) for s in denied["scores"]] == [
        ("word", "contains", 1.0, 1.0, "pass"), ("entry", "contains", 0.0, 1.0, "fail")]
    assert denied["scores"][1]["misses"] == ['Output does not contain "entry 42"']
    assert isinstance(denied["scores"][0]["duration_ms"], int)
    assert denied["execution_status"] == "quality_failure"  # 0.5: passes the 0.5 gate, below AgentV's 0.8
    assert denied["verdict"] == "pass" and len(denied["evaluator_results"]) == 2  # seed-004 names kept

    approved = rows["approved"]
    assert approved["execution_status"] == "quality_failure" and approved["verdict"] == "fail"
    # One evaluator: seed 004 keeps no evaluator_results, but scores[] always lists it.
    assert "evaluator_results" not in approved and [s["name"] for s in approved["scores"]] == ["word"]

    broken = rows["broken"]
    assert broken["execution_status"] == "execution_error" and "exit" in broken["error"].lower()
    assert broken["input"] == [{"role": "user", "content": "Screen Acme"}] and "scores" not in broken

    merged = project / "merged"
    proc = run_cli("merge", ".agentv-gate/results.jsonl", "--output-dir", str(merged), cwd=project)
    again = rows_by_id(merged / "results.jsonl")
    for case in ("denied", "approved", "broken"):
        assert {k: v for k, v in again[case].items() if k != "timestamp"} == \
               {k: v for k, v in rows[case].items() if k != "timestamp"}


def test_a_passing_case_scoring_point_eight_is_ok(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    write(project / "evals/screen.eval.yaml", """
        tests:
          - id: fine
            criteria: Flags Acme
            input: Screen Acme
            assert:
              - {type: contains, value: DENIED}
    """)
    run_cli("run", "evals", "--no-cache", cwd=project)
    assert rows_by_id(project / RESULTS)["fine"]["execution_status"] == "ok"


def test_rubric_checks_show_in_the_junit_failure_and_the_job_summary_of_a_failing_case_only() -> None:
    from agentv_gate.models import CaseResult
    from agentv_gate.report.github import summary_markdown
    from agentv_gate.report.junit import failure_body
    from agentv_gate.report.rows import ReportRow

    checks = [{"id": "entry", "outcome": "Names the entry", "required": True, "satisfied": True, "reasoning": "42"},
              {"id": "why", "outcome": "Explains | why", "required": False, "satisfied": False, "reasoning": "none"},
              {"id": "src", "outcome": "Cites a source", "required": False, "reported": False}]
    scores = [{"name": "quality", "type": "llm-judge", "score": 0.5, "details": {"mode": "checklist", "checks": checks}},
              # a code judge's own `details` are kept in the row as it printed them, never read as rubric checks
              {"name": "kw", "type": "code-judge", "score": 0.5, "details": {"checks": [{"id": "a", "score": "high"}]}}]
    failed = CaseResult(eval_id="screen", suite="evals/s.eval.yaml", file="evals/s.eval.yaml", line=4,
                        score=0.5, threshold=0.8, verdict="fail", scores=scores)
    lines = ["quality: ✓ [entry] Names the entry (required): 42", "quality: ✗ [why] Explains | why: none",
             "quality: ? [src] Cites a source: not assessed by the judge"]
    row = ReportRow.of(failed)
    assert list(row.checks) == lines
    assert "Checks:\n  " + "\n  ".join(lines) + "\nThreshold: 0.800" in failure_body(row)
    summary = summary_markdown([row])
    assert "#### Rubric checks" in summary and "screen (evals/s.eval.yaml:4): 1 of 3 checks met" in summary
    assert "- quality: ✗ \\[why\\] Explains \\| why: none\n" in summary  # escaped: no table or link breaks
    passed = ReportRow.of(failed.model_copy(update={"verdict": "pass"}))
    assert passed.checks == () and "Rubric checks" not in summary_markdown([passed])
