"""Limits and labels at their exact boundary, through the real CLI: what a user sees when a score,
a budget or a failure count lands exactly on the line, and one step either side of it.

The arithmetic of each rule is pinned in process too (tests/execution/, tests/judging/); these are
the end-to-end checks that the CLI applies the rule to its rows and exit code.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.reports import RESULTS, rows_by_id

ATTEMPT_AGENT = """\
targets:
  - name: default
    provider: cli
    command_template: "echo attempt-{ATTEMPT}"
    timeout_seconds: 120
"""
"""Answers `attempt-0`, `attempt-1`, ...: each trial's answer differs, so a judge can score each trial."""

JUDGE = """\
import json, sys
payload = json.load(sys.stdin)
scores = {SCORES}
answer = payload["answer"].strip()
score = scores[answer] if answer in scores else float(payload["question"])
print(json.dumps({"score": score, "hits": [], "misses": [], "reasoning": answer}))
"""
"""Scores a trial by its answer when listed, else scores what the case asks (its input, as a number)."""


def judge(repo: Path, scores: dict[str, float] | None = None) -> None:
    write(repo / "evals/judge.py", JUDGE.replace("{SCORES}", repr(scores or {})))


def rows(repo: Path) -> dict[str, dict]:
    return rows_by_id(repo / RESULTS)


def test_agentv_verdict_labels_split_exactly_at_0_8_and_0_6(tmp_path: Path) -> None:
    """AgentV's scoreToVerdict: pass >= 0.8, borderline >= 0.6, else fail; the evaluator rows carry it."""
    repo = make_repo(tmp_path)
    judge(repo)
    cases = {"p80": 0.8, "p81": 0.81, "b79": 0.79, "b60": 0.6, "f59": 0.59}
    write(repo / "evals/s.eval.yaml", "threshold: 0.5\ntests:\n" + "".join(
        f"  - {{id: {case_id}, input: '{score}', assert: [{{name: j, type: code_judge, script: [python3, judge.py]}}]}}\n"
        for case_id, score in cases.items()))
    ran = run_cli("run", "evals", cwd=repo)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    got = rows(repo)
    assert {case_id: got[case_id]["scores"][0]["verdict"] for case_id in cases} == {
        "p80": "pass", "p81": "pass", "b79": "borderline", "b60": "borderline", "f59": "fail"}


def test_pass_at_k_stops_at_a_trial_scoring_exactly_0_8_and_keeps_the_best(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, ATTEMPT_AGENT)
    judge(repo, {"attempt-0": 0.79, "attempt-1": 0.8, "attempt-2": 1.0})
    write(repo / "evals/s.eval.yaml", """
        execution:
          trials: {count: 3, strategy: pass_at_k}
        tests:
          - {id: c, input: '0', assert: [{name: j, type: code_judge, script: [python3, judge.py]}]}
    """)
    ran = run_cli("run", "evals", cwd=repo)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    row = rows(repo)["c"]
    assert [t["score"] for t in row["trials"]] == [0.79, 0.8]
    assert row["score"] == 0.8 and row["verdict"] == "pass"


def test_pass_at_k_scores_the_best_trial_not_the_last(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, ATTEMPT_AGENT)
    judge(repo, {"attempt-0": 0.2, "attempt-1": 0.7, "attempt-2": 0.4})
    write(repo / "evals/s.eval.yaml", """
        threshold: 0.7
        execution:
          trials: {count: 3, strategy: pass_at_k}
        tests:
          - {id: c, input: '0', assert: [{name: j, type: code_judge, script: [python3, judge.py]}]}
    """)
    ran = run_cli("run", "evals", cwd=repo)
    row = rows(repo)["c"]
    assert [t["score"] for t in row["trials"]] == [0.2, 0.7, 0.4]  # no trial reached AgentV's 0.8: all three ran
    assert row["score"] == 0.7 and row["verdict"] == "pass" and row["answer"] == "attempt-1"
    assert ran.returncode == 0, ran.stdout + ran.stderr


@pytest.mark.parametrize(("threshold", "verdict", "code"), [(0.74, "pass", 0), (0.75, "pass", 0),
                                                            (0.76, "fail", 1)])
def test_a_trials_aggregate_exactly_at_the_threshold_passes(tmp_path: Path, threshold: float, verdict: str,
                                                            code: int) -> None:
    repo = make_repo(tmp_path, ATTEMPT_AGENT)
    judge(repo, {"attempt-0": 0.5, "attempt-1": 1.0})
    write(repo / "evals/s.eval.yaml", f"""
        threshold: {threshold}
        execution:
          trials: {{count: 2, strategy: mean}}
        tests:
          - {{id: c, input: '0', assert: [{{name: j, type: code_judge, script: [python3, judge.py]}}]}}
    """)
    ran = run_cli("run", "evals", cwd=repo)
    row = rows(repo)["c"]
    assert row["score"] == 0.75 and row["verdict"] == verdict
    assert ran.returncode == code, ran.stdout + ran.stderr


@pytest.mark.parametrize("flag", ["2", "4"])
def test_trials_flag_sets_the_count_over_the_files_own_and_keeps_its_strategy(tmp_path: Path, flag: str) -> None:
    """README: `--trials N` sets the count for every case; a case's own strategy and cost limit stay.
    (AgentV has no such flag: the file's `execution.trials` is all it reads.)"""
    repo = make_repo(tmp_path, ATTEMPT_AGENT)
    judge(repo, {"attempt-0": 1.0, "attempt-1": 0.0, "attempt-2": 0.0, "attempt-3": 0.0})
    write(repo / "evals/s.eval.yaml", """
        execution:
          trials: {count: 3, strategy: mean}
        tests:
          - {id: c, input: '0', assert: [{name: j, type: code_judge, script: [python3, judge.py]}]}
    """)
    run_cli("run", "evals", "--trials", flag, cwd=repo)
    row = rows(repo)["c"]
    assert len(row["trials"]) == int(flag)
    assert row["aggregation"]["strategy"] == "mean" and row["score"] == pytest.approx(1 / int(flag))


# ---------------------------------------------------------------- budgets and failure counts

AGENT = """\
import json, pathlib, sys
with open(pathlib.Path(sys.argv[0]).parent / "ran.txt", "a") as ran:
    ran.write(sys.argv[1] + "\\n")
if sys.argv[1].startswith("broken"):
    sys.exit("down")
print(json.dumps({"text": "bad" if sys.argv[1].startswith("bad") else "ok", "cost_usd": 0.6}))
"""
"""Notes each case in ran.txt; a case named `broken*` errors, `bad*` answers wrong, the rest `ok`, at $0.60."""


def costly_repo(tmp_path: Path) -> Path:
    write(tmp_path / "agent.py", AGENT)
    return make_repo(tmp_path, f"""
        targets:
          - name: default
            provider: cli
            command_template: "python3 {tmp_path}/agent.py {{EVAL_ID}}"
            timeout_seconds: 120
    """)


def ran_cases(repo: Path) -> list[str]:
    path = repo / "ran.txt"
    return path.read_text().split() if path.exists() else []


def suite(*case_ids: str, execution: str = "") -> str:
    head = f"execution: {execution}\n" if execution else ""
    return head + "tests:\n" + "".join(
        f"  - {{id: {c}, input: Hi, assert: [{{type: contains, value: ok}}]}}\n" for c in case_ids)


@pytest.mark.parametrize(("budget", "ran"), [("1.2", ["a", "b"]), ("1.2001", ["a", "b", "c"])])
def test_a_budget_spent_exactly_starts_no_further_case(tmp_path: Path, budget: str, ran: list[str]) -> None:
    repo = costly_repo(tmp_path)
    write(repo / "evals/s.eval.yaml", suite("a", "b", "c", execution=f"{{total_budget_usd: {budget}}}"))
    run_cli("run", "evals", "--workers", "1", cwd=repo)
    assert ran_cases(repo) == ran
    assert (rows(repo)["c"].get("failure_reason_code") == "budget_exceeded") is (ran == ["a", "b"])


def test_fail_on_error_does_not_stop_on_a_case_that_only_failed(tmp_path: Path) -> None:
    repo = costly_repo(tmp_path)
    write(repo / "evals/s.eval.yaml", suite("bad1", "a", "broken1", "b", execution="{fail_on_error: true}"))
    ran = run_cli("run", "evals", "--workers", "1", cwd=repo)
    assert ran.returncode == 1
    assert ran_cases(repo) == ["bad1", "a", "broken1"]
    got = rows(repo)
    assert got["bad1"]["verdict"] == "fail" and got["a"]["verdict"] == "pass"
    assert got["b"]["failure_reason_code"] == "error_threshold_exceeded"


@pytest.mark.parametrize(("limit", "ran"), [("1", ["broken1"]), ("2", ["broken1", "a", "bad1"]),
                                            ("3", ["broken1", "a", "bad1", "b"])])
def test_max_failures_counts_errored_cases_and_stops_exactly_at_the_limit(tmp_path: Path, limit: str,
                                                                         ran: list[str]) -> None:
    repo = costly_repo(tmp_path)
    write(repo / "evals/s.eval.yaml", suite("broken1", "a", "bad1", "b"))
    result = run_cli("run", "evals", "--workers", "1", "--max-failures", limit, cwd=repo)
    assert result.returncode == 1
    assert ran_cases(repo) == ran
    not_run = [c for c, row in rows(repo).items() if row.get("failure_reason_code") == "max_failures"]
    assert sorted(not_run) == sorted({"broken1", "a", "bad1", "b"} - set(ran))


@pytest.mark.parametrize(("limit", "trials"), [("1.19", 2), ("1.2", 2), ("1.21", 3)])
def test_trials_stop_once_their_cost_reaches_cost_limit_usd_exactly(tmp_path: Path, limit: str, trials: int) -> None:
    """AgentV 2.19: `cumulativeCost >= costLimitUsd` starts no further trial. Each trial costs $0.60."""
    repo = costly_repo(tmp_path)
    write(repo / "evals/s.eval.yaml", f"""
        execution:
          trials: {{count: 3, strategy: mean, cost_limit_usd: {limit}}}
        tests:
          - {{id: c, input: Hi, assert: [{{type: contains, value: ok}}]}}
    """)
    run_cli("run", "evals", cwd=repo)
    row = rows(repo)["c"]
    assert len(row["trials"]) == trials
    assert row.get("cost_limited") is (True if trials == 2 else None)
