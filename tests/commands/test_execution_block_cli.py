"""AgentV's `execution` block through the real CLI: trials, a matrix of targets, budgets, fail_on_error, cache."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply
from tests.helpers.files import make_repo, write
from tests.helpers.reports import read_rows

ATTEMPT_AGENT = """\
targets:
  - name: default
    provider: cli
    command_template: "echo attempt-{ATTEMPT}"
    timeout_seconds: 10
"""
"""Answers `attempt-0`, `attempt-1`, ... : a different answer on every trial, as a flaky agent gives."""

JUDGE_BY_ATTEMPT = """\
import json, sys
answer = json.load(sys.stdin)["answer"].strip()
scores = {"attempt-0": 0.9, "attempt-1": 0.8, "attempt-2": 1.0}
print(json.dumps({"score": scores.get(answer, 0.0), "hits": [], "misses": [], "reasoning": answer}))
"""


KEY = {"TEST_KEY": "sk-test"}


def rows(repo: Path) -> list[dict]:
    return read_rows(repo / ".agentv-gate/results.jsonl")


def by_id(repo: Path) -> dict[str, dict]:
    return {row["eval_id"]: row for row in rows(repo)}


# ---------------------------------------------------------------- trials


def test_pass_at_k_stops_at_the_first_passing_trial_and_keeps_every_trial(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, ATTEMPT_AGENT)
    write(repo / "evals/s.eval.yaml", """
        execution:
          trials: {count: 3, strategy: pass_at_k}
        tests:
          - id: flaky
            input: Hi
            assert: [{type: contains, value: attempt-1}]
    """)
    ran = run_cli("run", "evals", cwd=repo)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    row = by_id(repo)["flaky"]
    assert row["verdict"] == "pass" and row["score"] == 1.0
    assert [(t["attempt"], t["score"], t["verdict"]) for t in row["trials"]] == [(1, 0.0, "fail"), (2, 1.0, "pass")]
    assert row["trials"][0]["execution_status"] == "quality_failure"
    assert row["trials"][0]["scores"][0]["type"] == "contains"
    assert row["aggregation"] == {"strategy": "pass_at_k", "passed_attempts": 1, "total_attempts": 2}
    assert row["answer"] == "attempt-1"  # the row shows the trial that made its score


def test_pass_at_k_stops_at_agentvs_pass_not_at_the_case_threshold(tmp_path: Path) -> None:
    """AgentV's pass_at_k stops at the first trial whose verdict is `pass` (score >= 0.8, scoreToVerdict),
    whatever the case's threshold. Trial 1 scores 0.9: AgentV stops there and the case scores 0.9, below
    its 0.95. Trying on until a trial reached 0.95 (trial 3: 1.0) passed a case AgentV fails; and a 0.6
    trial under a 0.5 threshold does not stop AgentV either."""
    repo = make_repo(tmp_path, ATTEMPT_AGENT)
    write(repo / "evals/judge.py", JUDGE_BY_ATTEMPT)
    write(repo / "evals/low.py", JUDGE_BY_ATTEMPT.replace('"attempt-0": 0.9, "attempt-1": 0.8',
                                                          '"attempt-0": 0.6, "attempt-1": 0.85'))
    write(repo / "evals/s.eval.yaml", """
        execution:
          trials: {count: 3, strategy: pass_at_k}
        tests:
          - id: strict
            threshold: 0.95
            input: Hi
            assert: [{name: j, type: code_judge, script: [python3, judge.py]}]
          - id: lenient
            threshold: 0.5
            input: Hi
            assert: [{name: j, type: code_judge, script: [python3, low.py]}]
    """)
    ran = run_cli("run", "evals", cwd=repo)
    strict, lenient = by_id(repo)["strict"], by_id(repo)["lenient"]
    assert [t["score"] for t in strict["trials"]] == [0.9]
    assert strict["score"] == 0.9 and strict["verdict"] == "fail"
    assert strict["aggregation"] == {"strategy": "pass_at_k", "passed_attempts": 1, "total_attempts": 1}
    assert [t["score"] for t in lenient["trials"]] == [0.6, 0.85]
    assert lenient["score"] == 0.85 and lenient["verdict"] == "pass"
    assert lenient["aggregation"] == {"strategy": "pass_at_k", "passed_attempts": 1, "total_attempts": 2}
    assert ran.returncode == 1, ran.stdout + ran.stderr


def test_mean_and_confidence_interval_gate_on_their_aggregate(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, ATTEMPT_AGENT)
    write(repo / "evals/judge.py", JUDGE_BY_ATTEMPT)
    write(repo / "evals/s.eval.yaml", """
        threshold: 0.7
        execution:
          trials: {count: 3, strategy: mean}
        tests:
          - id: by-mean
            input: Hi
            assert: [{name: j, type: code_judge, script: [python3, judge.py]}]
          - id: by-ci
            input: Hi
            execution: {trials: {count: 3, strategy: confidence_interval}}
            assert: [{name: j, type: code_judge, script: [python3, judge.py]}]
    """)
    ran = run_cli("run", "evals", cwd=repo)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    mean, ci = by_id(repo)["by-mean"], by_id(repo)["by-ci"]
    assert mean["verdict"] == "pass" and mean["score"] == pytest.approx(0.9)
    assert mean["aggregation"] == {"strategy": "mean", "mean": pytest.approx(0.9), "min": 0.8, "max": 1.0}
    # mean 0.9, s 0.1, n 3: lower bound 0.9 - 4.303 * 0.1 / sqrt(3) = 0.652 < 0.7
    assert ci["verdict"] == "fail" and ci["score"] == pytest.approx(0.6516, abs=1e-3)
    assert ci["aggregation"]["strategy"] == "confidence_interval"
    assert ci["aggregation"]["ci95_lower"] == pytest.approx(ci["score"])
    assert len(ci["trials"]) == 3


def test_trials_flag_runs_every_case_n_times(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, ATTEMPT_AGENT)
    write(repo / "evals/s.eval.yaml", """
        tests:
          - id: never
            input: Hi
            assert: [{type: contains, value: attempt-9}]
    """)
    ran = run_cli("run", "evals", "--trials", "3", cwd=repo)
    assert ran.returncode == 1
    row = by_id(repo)["never"]
    assert [t["attempt"] for t in row["trials"]] == [1, 2, 3]
    assert row["aggregation"]["passed_attempts"] == 0
    assert run_cli("run", "evals", "--trials", "0", cwd=repo).returncode == 2


def test_a_trial_that_errors_never_lets_a_mean_pass(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, """
        targets:
          - name: default
            provider: cli
            command_template: "sh -c 'test {ATTEMPT} = 1 && exit 3; echo Paris'"
            timeout_seconds: 10
    """)
    write(repo / "evals/s.eval.yaml", """
        execution:
          trials: {count: 3, strategy: mean}
        tests:
          - {id: c, input: Hi, assert: [{type: contains, value: Paris}]}
    """)
    ran = run_cli("run", "evals", cwd=repo)
    assert ran.returncode == 1
    row = by_id(repo)["c"]
    assert row["verdict"] == "error" and row["error"].startswith("trial 2 of 3: target default:")
    assert [t["execution_status"] for t in row["trials"]] == ["ok", "execution_error", "ok"]


def test_cost_limit_stops_further_trials(tmp_path: Path) -> None:
    repo = costly_repo(tmp_path)
    write(repo / "evals/s.eval.yaml", """
        execution:
          trials: {count: 5, cost_limit_usd: 1.0}
        tests:
          - {id: c, input: Hi, assert: [{type: contains, value: paid}]}
    """)
    run_cli("run", "evals", cwd=repo)
    row = by_id(repo)["c"]
    assert len(row["trials"]) == 2 and row["cost_limited"] is True
    assert row["cost_usd"] == pytest.approx(1.2)


def test_bad_trials_settings_are_located_errors(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    write(repo / "evals/s.eval.yaml", """
        tests:
          - id: c
            input: Hi
            criteria: Greets
            execution:
              trials: {count: 3, strategy: best_of}
    """)
    ran = run_cli("run", "evals", cwd=repo)
    assert ran.returncode == 2
    assert "evals/s.eval.yaml:6: trials.strategy:" in ran.stderr


def paris_repo(tmp_path: Path, fake_llm: FakeLLMServer) -> Path:
    """A repository whose one target is an OpenAI model on the loopback server that always says Paris."""
    fake_llm.set_default("/v1/chat/completions", lambda request: FakeReply.openai("Paris"))
    return make_repo(tmp_path, f"""
        targets:
          - name: default
            provider: openai
            base_url: {fake_llm.url}
            api_key: ${{{{ TEST_KEY }}}}
            model: m
    """)


def test_later_trials_bypass_the_response_cache(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    repo = paris_repo(tmp_path, fake_llm)
    write(repo / "evals/s.eval.yaml", """
        execution:
          trials: {count: 3, strategy: mean}
        tests:
          - {id: c, input: Capital of France?, assert: [{type: contains, value: Paris}]}
    """)
    assert run_cli("run", "evals", cwd=repo, env=KEY).returncode == 0
    assert len(fake_llm.requests) == 3
    assert run_cli("run", "evals", cwd=repo, env=KEY).returncode == 0
    assert len(fake_llm.requests) == 5  # trial 1 replayed from the cache; trials 2 and 3 asked again
    assert by_id(repo)["c"]["cache_hits"] == 1


def test_cache_false_turns_the_cache_off_for_the_suite(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    repo = paris_repo(tmp_path, fake_llm)
    write(repo / "evals/s.eval.yaml", """
        execution: {cache: false}
        tests:
          - {id: c, input: Capital of France?, assert: [{type: contains, value: Paris}]}
    """)
    for _ in range(2):
        assert run_cli("run", "evals", cwd=repo, env=KEY).returncode == 0
    assert len(fake_llm.requests) == 2
    assert not (repo / ".agentv-gate-cache").exists()


# ---------------------------------------------------------------- matrix

MATRIX_TARGETS = """
    targets:
      - name: gpt
        provider: mock
        response: Paris
      - name: claude
        provider: mock
        response: London
"""


def test_execution_targets_run_each_case_once_per_target(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, MATRIX_TARGETS)
    write(repo / "evals/s.eval.yaml", """
        execution:
          targets: [gpt, claude]
        tests:
          - {id: capital, input: Capital of France?, assert: [{type: contains, value: Paris}]}
          - {id: only-gpt, input: Capital?, execution: {targets: [gpt]}, assert: [{type: contains, value: Paris}]}
    """)
    ran = run_cli("run", "evals", cwd=repo)
    assert ran.returncode == 1
    got = sorted((r["eval_id"], r["target"], r["verdict"]) for r in rows(repo))
    assert got == [("capital", "claude", "fail"), ("capital", "gpt", "pass"), ("only-gpt", "gpt", "pass")]
    names = [tc.get("name") for tc in ET.parse(repo / ".agentv-gate/junit.xml").iter("testcase")]
    assert sorted(names) == ["capital [claude]", "capital [gpt]", "only-gpt [gpt]"]
    assert "capital [claude]" in ran.stdout  # the console names the target too


def test_repeated_target_flags_make_the_matrix_and_one_keeps_its_meaning(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, MATRIX_TARGETS)
    write(repo / "evals/s.eval.yaml", """
        execution:
          targets: [gpt, claude]
        tests:
          - {id: capital, input: Capital of France?, assert: [{type: contains, value: Paris}]}
    """)
    assert run_cli("run", "evals", "--target", "gpt", cwd=repo).returncode == 0
    assert [(r["eval_id"], r["target"]) for r in rows(repo)] == [("capital", "gpt")]
    assert run_cli("run", "evals", "--target", "claude", "--target", "gpt", cwd=repo).returncode == 1
    assert sorted(r["target"] for r in rows(repo)) == ["claude", "gpt"]


def test_an_unknown_matrix_target_stops_the_run_at_its_line(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, MATRIX_TARGETS)
    write(repo / "evals/s.eval.yaml", """
        tests:
          - id: c
            input: Hi
            criteria: Greets
            execution:
              targets: [gpt, gemini]
    """)
    ran = run_cli("run", "evals", cwd=repo)
    assert ran.returncode == 2
    assert "evals/s.eval.yaml:6: no target named 'gemini'" in ran.stderr
    ran = run_cli("run", "evals", "--target", "gpt", "--target", "nope", cwd=repo)
    assert ran.returncode == 2 and "--target: no target named 'nope'" in ran.stderr


# ---------------------------------------------------------------- budgets and fail_on_error

AGENT = """\
import json, pathlib, sys
with open(pathlib.Path(sys.argv[0]).parent / "ran.txt", "a") as ran:
    ran.write(sys.argv[1] + "\\n")
if sys.argv[2] == "broken":
    sys.exit("down")
print(json.dumps({"text": "ok", "cost_usd": 0.6}))
"""
"""Notes each case it answers in ran.txt, then answers `ok` at a cost of $0.60 (or fails, as `broken`)."""


def costly_repo(tmp_path: Path) -> Path:
    write(tmp_path / "agent.py", AGENT)
    return make_repo(tmp_path, f"""
        targets:
          - name: default
            provider: cli
            command_template: "python3 {tmp_path}/agent.py {{EVAL_ID}} ok"
            timeout_seconds: 10
          - name: broken
            provider: cli
            command_template: "python3 {tmp_path}/agent.py {{EVAL_ID}} broken"
            timeout_seconds: 10
    """)


def _ran(repo: Path) -> list[str]:
    path = repo / "ran.txt"
    return path.read_text().split() if path.exists() else []


def test_total_budget_stops_starting_cases_once_spent(tmp_path: Path) -> None:
    repo = costly_repo(tmp_path)
    write(repo / "evals/s.eval.yaml", """
        execution: {total_budget_usd: 1.0}
        tests:
          - {id: a, input: Hi, assert: [{type: contains, value: ok}]}
          - {id: b, input: Hi, assert: [{type: contains, value: ok}]}
          - {id: c, input: Hi, assert: [{type: contains, value: ok}]}
    """)
    ran = run_cli("run", "evals", "--workers", "1", cwd=repo)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert _ran(repo) == ["a", "b"]
    c = by_id(repo)["c"]
    assert c["verdict"] == "error" and c["budget_exceeded"] is True
    assert c["target"] == "default"  # the target it would have run on, named as on the rows that ran
    assert c["execution_status"] == "execution_error" and c["failure_reason_code"] == "budget_exceeded"
    assert "total_budget_usd (1) was spent" in c["error"]
    assert "total_budget_usd (1) was spent" in ran.stdout  # the summary says why


def test_fail_on_error_writes_the_rest_as_errors_without_running_them(tmp_path: Path) -> None:
    repo = costly_repo(tmp_path)
    write(repo / "evals/s.eval.yaml", """
        execution: {fail_on_error: true}
        tests:
          - {id: a, input: Hi, assert: [{type: contains, value: ok}]}
          - {id: b, input: Hi, target: broken, assert: [{type: contains, value: ok}]}
          - {id: c, input: Hi, assert: [{type: contains, value: ok}]}
    """)
    ran = run_cli("run", "evals", "--workers", "1", cwd=repo)
    assert ran.returncode == 1
    assert _ran(repo) == ["a", "b"]
    got = by_id(repo)
    assert got["a"]["verdict"] == "pass" and got["b"]["verdict"] == "error"
    assert got["c"]["failure_reason_code"] == "error_threshold_exceeded"
    assert got["c"]["verdict"] == "error" and "case 'b'" in got["c"]["error"]
    assert [got[i]["target"] for i in "abc"] == ["default", "broken", "default"]


def test_suite_only_execution_keys_in_a_test_are_located_errors(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    write(repo / "evals/s.eval.yaml", """
        tests:
          - id: c
            input: Hi
            criteria: Greets
            execution:
              total_budget_usd: 1
    """)
    ran = run_cli("run", "evals", cwd=repo)
    assert ran.returncode == 2
    assert "evals/s.eval.yaml:6: 'total_budget_usd' in 'execution' of test 'c' applies to the whole suite" in ran.stderr


def test_results_rows_are_json_with_the_agentv_names(tmp_path: Path) -> None:
    """The trial fields are plain JSON a tool written for AgentV reads (no pydantic leftovers)."""
    repo = make_repo(tmp_path, ATTEMPT_AGENT)
    write(repo / "evals/s.eval.yaml", """
        tests:
          - {id: c, input: Hi, assert: [{type: contains, value: attempt-0}]}
    """)
    run_cli("run", "evals", "--trials", "2", cwd=repo)
    line = (repo / ".agentv-gate/results.jsonl").read_text().splitlines()[0]
    row = json.loads(line)
    assert set(row["trials"][0]) >= {"attempt", "score", "verdict", "scores", "execution_status"}


def test_later_trials_ask_the_judge_afresh_too(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    """AgentV runs the target *and the evaluators* of every trial uncached: a judge verdict replayed from
    trial 1 (or from an earlier run) is not a sample, and under `mean` it turned one lenient verdict into
    three, passing a case whose judge failed it twice."""
    def verdict(score: float) -> FakeReply:
        return FakeReply.openai(json.dumps({"score": score, "hits": [], "misses": [], "reasoning": str(score)}))

    fake_llm.enqueue("/v1/chat/completions", verdict(1.0), verdict(0.0), verdict(0.0))
    repo = make_repo(tmp_path, f"""
        targets:
          - name: default
            provider: cli
            command: echo Paris
            judge_target: judge
          - name: judge
            provider: openai
            base_url: {fake_llm.url}
            api_key: ${{{{ TEST_KEY }}}}
            model: m
    """)
    write(repo / "evals/s.eval.yaml", """
        execution:
          trials: {count: 3, strategy: mean}
        tests:
          - {id: c, input: Capital of France?, criteria: Names Paris, assert: [{type: llm_judge}]}
    """)
    ran = run_cli("run", "evals", cwd=repo, env=KEY)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert len(fake_llm.requests) == 3
    row = by_id(repo)["c"]
    assert [t["score"] for t in row["trials"]] == [1.0, 0.0, 0.0] and not row.get("cache_hits")
