"""`rejudge_on_fail` through the real CLI: a failing LLM-judge verdict is asked again, fresh, and the
majority decides; a pass costs nothing; code judges are never asked again. The judge is a loopback
model failing answers at random, seeded (`tests/helpers/noisy_judge.py`)."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import yaml

from agentv_gate.models import CaseResult
from agentv_gate.report.comment import Verdict, render_comment
from tests.helpers.cli import run_cli
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply
from tests.helpers.files import make_repo, write
from tests.helpers.noisy_judge import NoisyJudge, case_marker
from tests.helpers.reports import RESULTS, read_rows

CHAT = "/v1/chat/completions"
FAST = {"retry_initial_delay_ms": 1, "retry_max_delay_ms": 5, "retry_jitter_ms": 1, "timeout_seconds": 10}
CASES = 200


def project(tmp_path: Path, judge_url: str, suite: str) -> Path:
    targets = [{"name": "default", "provider": "mock", "response": "A fine answer.", "judge_target": "judge"},
               {"name": "judge", "provider": "openai", "base_url": judge_url, "model": "grader", **FAST}]
    root = make_repo(tmp_path / "repo", yaml.safe_dump({"targets": targets}, sort_keys=False))
    write(root / "evals/noisy.eval.yaml", suite)
    return root


def judged_suite(count: int, evaluator: str = "{name: tone, type: llm_judge}", header: str = "") -> str:
    tests = "\n".join(f"  - id: c{n}\n    input: 'Answer well {case_marker(f'c{n}')}'\n    criteria: Answers well\n"
                      f"    assert:\n      - {evaluator}" for n in range(count))
    return f"{header}tests:\n{tests}\n"


def failed_ids(root: Path) -> set[str]:
    return {row["eval_id"] for row in read_rows(root / RESULTS) if row["verdict"] != "pass"}


def run_noisy(tmp_path: Path, judge: NoisyJudge, suite: str, *flags: str) -> tuple[Path, Any, FakeLLMServer]:
    server = FakeLLMServer()
    server.set_default(CHAT, judge)
    root = project(tmp_path, server.url, suite)
    proc = run_cli("run", "evals", *flags, "--workers", "8", cwd=root)
    server.close()
    return root, proc, server


def test_rejudge_on_fail_2_brings_false_failures_down_as_the_binomial_says(tmp_path: Path) -> None:
    """Every answer is good; the judge fails 30% of its calls at random. One call: 30% of cases fail.
    With 2 more calls on a failure, a case fails when its first call and at least one of the other two
    fail: 0.3 * (1 - 0.7^2) = 0.153. (Asking all three calls every time and taking the majority would
    fail 3 * 0.3^2 * 0.7 + 0.3^3 = 0.216: a first pass is never asked again, so it cannot be outvoted.)"""
    suite = judged_suite(CASES)
    once, proc, server = run_noisy(tmp_path / "once", NoisyJudge(0.3, seed=47), suite, "--no-cache")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    judge = NoisyJudge(0.3, seed=47)
    expected_once = {f"c{n}" for n in range(CASES) if judge.fails(f"c{n}", 0)}
    assert failed_ids(once) == expected_once
    assert len(server.requests_for(CHAT)) == CASES

    confirmed, proc, server = run_noisy(tmp_path / "confirmed", NoisyJudge(0.3, seed=47), suite, "--no-cache",
                                        "--rejudge-on-fail", "2")
    expected = {f"c{n}" for n in range(CASES)
                if judge.fails(f"c{n}", 0) and (judge.fails(f"c{n}", 1) or judge.fails(f"c{n}", 2))}
    assert failed_ids(confirmed) == expected
    # passes cost nothing: one call per case, and more only for a first verdict that failed
    second = {name for name in expected_once if not judge.fails(name, 1)}
    assert len(server.requests_for(CHAT)) == CASES + len(expected_once) + len(second)
    rate_once, rate_confirmed = len(expected_once) / CASES, len(expected) / CASES
    print(f"false-failure rate: one call {rate_once:.1%} (binomial 30%), rejudge_on_fail 2 "
          f"{rate_confirmed:.1%} (binomial 15.3%)")
    # The seeded sample sits where the binomial puts it (200 cases: 2.5 to 3.3 points a standard deviation).
    assert abs(rate_once - 0.3) < 0.08 and abs(rate_confirmed - 0.153) < 0.08
    assert rate_confirmed < rate_once

    rows = {row["eval_id"]: row for row in read_rows(confirmed / RESULTS)}
    for name in expected_once:  # every confirmed verdict keeps its votes
        votes = rows[name]["judge_votes"]["tone"]
        assert votes[0] == {"score": 0.0, "passed": False}
        assert len(votes) in (2, 3)
    for name in set(rows) - expected_once:
        assert "judge_votes" not in rows[name]


def test_a_judge_that_always_fails_still_fails_the_case_and_says_so(tmp_path: Path) -> None:
    root, proc, server = run_noisy(tmp_path, NoisyJudge(1.0), judged_suite(3), "--no-cache",
                                   "--rejudge-on-fail", "2")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert failed_ids(root) == {"c0", "c1", "c2"}
    # the second failing call settles the majority of 3: the third is never asked
    assert len(server.requests_for(CHAT)) == 6
    row = read_rows(root / RESULTS)[0]
    assert row["judge_votes"] == {"tone": [{"score": 0.0, "passed": False}, {"score": 0.0, "passed": False}]}
    assert row["misses"][0] == "judge 'tone' failed 2 of 2 judge calls"
    assert row["scores"][0]["judge_votes"] == row["judge_votes"]["tone"]
    assert "judge 'tone' failed 2 of 2 judge calls" in proc.stdout


def test_the_majority_of_three_says_failed_2_of_3_everywhere(tmp_path: Path) -> None:
    """Fail, pass, fail: the case fails on 2 of 3 calls, which the console, the job summary and report.html say."""
    verdicts = {0: 0.0, 1: 1.0, 2: 0.0}
    judge = NoisyJudge(0.0, scores=lambda name, k: verdicts[k] if name == "c0" else 1.0)
    summary = tmp_path / "summary.md"
    server = FakeLLMServer()
    server.set_default(CHAT, judge)
    root = project(tmp_path, server.url, judged_suite(2, header="execution:\n  rejudge_on_fail: 2\n"))
    proc = run_cli("run", "evals", "--no-cache", cwd=root, env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)})
    server.close()
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert failed_ids(root) == {"c0"}
    assert "judge 'tone' failed 2 of 3 judge calls" in proc.stdout
    assert "judge 'tone' failed 2 of 3 judge calls" in summary.read_text(encoding="utf-8")
    page = html.unescape((root / ".agentv-gate/report.html").read_text(encoding="utf-8"))
    assert "judge 'tone' failed 2 of 3 judge calls" in page
    # the pull-request comment's body, from the rows the run wrote (what `agentv-gate comment` reads)
    rows = [CaseResult.model_validate(row) for row in read_rows(root / RESULTS)]
    body = html.unescape(render_comment(rows, Verdict(False, "gate (--fail-on all): failed"), key="k"))
    assert "| c0 |" in body and "judge 'tone' failed 2 of 3 judge calls" in body
    assert len(server.requests_for(CHAT)) == 2 + 2


def test_pass_fail_pass_passes_and_a_tie_fails(tmp_path: Path) -> None:
    """A majority of passing calls passes (the passing call's verdict is kept); with one extra call, a
    fail and a pass are a tie, which fails: never a pass on half the evidence."""
    judge = NoisyJudge(0.0, scores=lambda name, k: 0.0 if k == 0 else 1.0)
    root, proc, _ = run_noisy(tmp_path / "majority", judge,
                              judged_suite(1, "{name: tone, type: llm_judge, rejudge_on_fail: 2}"), "--no-cache")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    row = read_rows(root / RESULTS)[0]
    assert row["score"] == 1.0 and row["hits"][0] == "judge 'tone' passed 2 of 3 judge calls"
    tie = NoisyJudge(0.0, scores=lambda name, k: 0.0 if k == 0 else 1.0)
    root, proc, _ = run_noisy(tmp_path / "tie", tie,
                              judged_suite(1, "{name: tone, type: llm_judge, rejudge_on_fail: 1}"), "--no-cache")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert read_rows(root / RESULTS)[0]["misses"][0] == "judge 'tone' failed 1 of 2 judge calls"


def test_the_evaluator_key_wins_over_the_suite_and_the_command_line(tmp_path: Path) -> None:
    judge = NoisyJudge(1.0)
    suite = judged_suite(1, "{name: tone, type: llm_judge, rejudge_on_fail: 0}",
                         header="execution:\n  rejudge_on_fail: 3\n")
    root, proc, server = run_noisy(tmp_path, judge, suite, "--no-cache", "--rejudge-on-fail", "2")
    assert proc.returncode == 1
    assert len(server.requests_for(CHAT)) == 1, "rejudge_on_fail: 0 on the judge asks it once"
    assert "judge_votes" not in read_rows(root / RESULTS)[0]


def test_re_asks_never_come_from_the_cache(tmp_path: Path) -> None:
    """The first verdict may be replayed from the response cache; a confirming call is always a new one."""
    server = FakeLLMServer()
    server.set_default(CHAT, NoisyJudge(1.0))
    root = project(tmp_path, server.url, judged_suite(1, header="execution:\n  rejudge_on_fail: 2\n"))
    first = run_cli("run", "evals", cwd=root)
    assert first.returncode == 1, first.stdout + first.stderr
    assert len(server.requests_for(CHAT)) == 2
    again = run_cli("run", "evals", cwd=root)
    server.close()
    assert again.returncode == 1
    assert len(server.requests_for(CHAT)) == 3, "the cached first verdict replayed, the re-ask sent afresh"


def test_code_judges_are_never_asked_again(tmp_path: Path) -> None:
    server = FakeLLMServer()
    root = project(tmp_path, server.url, "execution:\n  rejudge_on_fail: 2\ntests:\n  - id: a\n    input: Hi\n"
                   "    criteria: Greets\n    assert:\n      - {name: strict, type: code_judge, "
                   "script: [python3, judge.py]}\n")
    write(root / "judge.py", "import json, pathlib\n"
          "with open(pathlib.Path(__file__).with_name('ran.txt'), 'a') as f: f.write('x')\n"
          "print(json.dumps({'score': 0, 'hits': [], 'misses': ['no'], 'reasoning': 'no'}))\n")
    proc = run_cli("run", "evals", "--no-cache", "--rejudge-on-fail", "3", cwd=root)
    server.close()
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert (root / "ran.txt").read_text() == "x"
    assert "judge_votes" not in read_rows(root / RESULTS)[0]


def test_rejudge_on_fail_values_are_checked_where_written(tmp_path: Path) -> None:
    root = project(tmp_path, "http://127.0.0.1:9", judged_suite(1, header="execution:\n  rejudge_on_fail: '2'\n"))
    proc = run_cli("validate", "evals", cwd=root)
    assert proc.returncode == 1
    assert "evals/noisy.eval.yaml:2: 'rejudge_on_fail' must be a whole number from 0 to 10, got '2'" in proc.stdout
    write(root / "evals/noisy.eval.yaml", judged_suite(1, "{name: tone, type: llm_judge, rejudge_on_fail: 11}"))
    assert run_cli("validate", "evals", cwd=root).returncode == 1
    write(root / "evals/noisy.eval.yaml", judged_suite(1, "{name: tone, type: llm-grader, rejudge_on_fail: 2}"))
    checked = run_cli("validate", "evals", cwd=root)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert run_cli("run", "evals", "--rejudge-on-fail", "11", cwd=root).returncode == 2
    write(root / "evals/noisy.eval.yaml", judged_suite(1, "{name: says-hi, type: contains, value: Hi, rejudge_on_fail: 2}"))
    checked = run_cli("validate", "evals", cwd=root)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert ("'rejudge_on_fail' has no effect here: contains evaluator 'says-hi': only an LLM judge is asked again"
            in checked.stdout)


def test_a_re_ask_that_errors_makes_the_case_an_error_never_a_pass(tmp_path: Path) -> None:
    """Fail, then a judge that answers 500 on every retry: the case is an error (the judge broke), and its
    votes say one call failed and one errored."""
    judge = NoisyJudge(1.0)
    answered: list[int] = []

    def respond(request):  # type: ignore[no-untyped-def]
        answered.append(1)
        return judge(request) if len(answered) == 1 else FakeReply.error(500, "judge down")

    server = FakeLLMServer()
    server.set_default(CHAT, respond)
    root = project(tmp_path, server.url, judged_suite(1, "{name: tone, type: llm_judge, rejudge_on_fail: 2}"))
    proc = run_cli("run", "evals", "--no-cache", "--workers", "1", cwd=root)
    server.close()
    assert proc.returncode == 1, proc.stdout + proc.stderr
    row = read_rows(root / RESULTS)[0]
    assert row["verdict"] == "error" and "judge down" in row["error"]
    assert row["judge_votes"]["tone"][0] == {"score": 0.0, "passed": False}
    assert row["judge_votes"]["tone"][1]["error"]
    assert row["misses"][0] == "judge 'tone' failed 1 of 2 judge calls (1 errored)"


def test_a_verdict_exactly_at_the_threshold_passes_and_is_not_asked_again(tmp_path: Path) -> None:
    for score, calls, code in ((0.5, 1, 0), (0.49, 2, 1)):  # two failing calls settle a majority of three
        judge = NoisyJudge(0.0, scores=lambda name, k, s=score: s)
        root, proc, server = run_noisy(tmp_path / str(score), judge,
                                       judged_suite(1, header="threshold: 0.5\nexecution:\n  rejudge_on_fail: 2\n"),
                                       "--no-cache")
        assert proc.returncode == code, proc.stdout + proc.stderr
        assert len(server.requests_for(CHAT)) == calls, score


def test_rejudge_on_fail_takes_0_to_10_on_the_command_line(tmp_path: Path) -> None:
    root = project(tmp_path, "http://127.0.0.1:9", judged_suite(1))
    assert run_cli("run", "evals", "--list", "--rejudge-on-fail", "10", cwd=root).returncode == 0
    refused = run_cli("run", "evals", "--list", "--rejudge-on-fail", "-1", cwd=root)
    assert refused.returncode == 2 and "--rejudge-on-fail -1 is not in 0..10" in refused.stderr
