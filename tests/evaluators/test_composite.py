"""Composite evaluators: members run through the registry, then an AgentV aggregator combines them."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest

from agentv_gate.evaluators.registry import build_evaluator_registry, evaluate_safely
from agentv_gate.loader import load_eval_file
from agentv_gate.models import (
    CompositeConfig,
    EvalCase,
    EvaluationContext,
    EvaluationScore,
    LlmJudgeConfig,
    TargetResponse,
)
from agentv_gate.targets.base import ProviderRequest
from tests.helpers.cli import run_cli
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply
from tests.helpers.files import make_repo, write
from tests.helpers.reports import read_rows

JUDGES = Path(__file__).resolve().parents[1] / "judges"
ANSWER = "Paris is the capital of France."


class NoLlm:
    """Stands in for llm_judge where a test must not reach a model."""

    def evaluate(self, config: LlmJudgeConfig, context: EvaluationContext) -> EvaluationScore:
        raise AssertionError("llm_judge should not be called here")


class ScriptedJudge:
    """A judge model (Provider protocol) that replies with fixed text and records the prompts."""

    name = "scripted-judge"
    kind = "mock"

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.requests: list[ProviderRequest] = []

    def invoke(self, request: ProviderRequest) -> TargetResponse:
        self.requests.append(request)
        return TargetResponse(text=self.reply)


def composite_case(tmp_path: Path, composite_yaml: str, members: str = "") -> EvalCase:
    """An eval file whose one case has the composite written in `composite_yaml` (+ `members`)."""
    make_repo(tmp_path)
    shutil.copy(JUDGES / "keyword_judge.py", tmp_path / "kw.py")
    shutil.copy(JUDGES / "exit3.py", tmp_path / "exit3.py")
    shutil.copy(JUDGES / "aggregator.py", tmp_path / "agg.py")
    text = textwrap.dedent(composite_yaml).strip("\n")
    if members:
        text += "\n" + textwrap.indent(textwrap.dedent(members).strip("\n"), "  ")
    body = textwrap.indent(text, " " * 6)
    f = tmp_path / "suite.eval.yaml"
    head = "tests:\n  - id: capital\n    criteria: Names Paris\n    input: What is the capital of France?\n"
    f.write_text(head + "    assertions:\n" + body + "\n")
    result = load_eval_file(f, tmp_path)
    assert result.errors == [], result.errors
    return result.cases[0]


def evaluate(case: EvalCase, judge: Any = None, answer: str = ANSWER) -> EvaluationScore:
    registry = build_evaluator_registry({LlmJudgeConfig: NoLlm()}, lambda context: judge)
    context = EvaluationContext(eval_case=case, candidate=answer, evaluator=case.evaluators[0], target="t")
    return evaluate_safely(registry, context)


MEMBERS = """
    evaluators:
      - {name: has_paris, type: contains, value: Paris}
      - {name: has_berlin, type: contains, value: Berlin}
      - name: kw
        type: code_judge
        script: python3 kw.py
        keywords: [Paris, France]
"""


def test_weighted_average_uses_aggregator_weights_and_keeps_children(tmp_path: Path) -> None:
    case = composite_case(tmp_path, """
        - name: combo
          type: composite
          aggregator: {type: weighted_average, weights: {has_berlin: 2}}
    """, MEMBERS)
    score = evaluate(case)
    # has_paris 1 (w1) + has_berlin 0 (w2) + kw 1 (w1) -> 2/4
    assert score.score == pytest.approx(0.5)
    assert score.error is None
    assert [c.name for c in score.children or []] == ["has_paris", "has_berlin", "kw"]
    assert [c.weight for c in score.children or []] == [1.0, 2.0, 1.0]
    assert [c.type for c in score.children or []] == ["contains", "contains", "code_judge"]
    assert '[has_paris] Output contains "Paris"' in score.hits
    assert "[kw] mentions France" in score.hits
    assert score.misses == ['[has_berlin] Output does not contain "Berlin"']
    assert score.evaluator_raw_request == {"aggregator": "weighted_average", "weights": {"has_berlin": 2}}


def test_default_aggregator_is_weighted_average_with_member_weights(tmp_path: Path) -> None:
    case = composite_case(tmp_path, """
        - name: combo
          type: composite
          evaluators:
            - {name: a, type: contains, value: Paris, weight: 3}
            - {name: b, type: contains, value: Berlin}
    """)
    assert evaluate(case).score == pytest.approx(0.75)


def test_threshold_aggregator_scores_the_passing_fraction(tmp_path: Path) -> None:
    case = composite_case(tmp_path, """
        - name: combo
          type: composite
          aggregator: {type: threshold, threshold: 0.6}
    """, MEMBERS)
    score = evaluate(case)
    assert score.score == pytest.approx(2 / 3)
    assert score.hits[0] == "2/3 evaluators passed (threshold: 0.6)"
    failing = composite_case(tmp_path, """
        - name: combo
          type: composite
          aggregator: {type: threshold, threshold: 0.9}
    """, MEMBERS)
    assert evaluate(failing).misses[0] == "2/3 evaluators passed (threshold: 0.9)"


def test_code_judge_aggregator_receives_member_results(tmp_path: Path) -> None:
    case = composite_case(tmp_path, """
        - name: combo
          type: composite
          aggregator: {type: code-judge, path: python3 agg.py}
    """, MEMBERS)
    score = evaluate(case)
    assert score.error is None
    assert score.score == 0.0 and score.misses == ["weakest: has_berlin"]
    assert len(score.children or []) == 3


def test_llm_judge_aggregator_asks_the_judge_model(tmp_path: Path) -> None:
    case = composite_case(tmp_path, """
        - name: combo
          type: composite
          aggregator: {type: llm_judge}
    """, MEMBERS)
    reply = '{"score": 0.7, "hits": ["mostly right"], "reasoning": "ok"}'
    judge = ScriptedJudge(f"Verdict:\n```json\n{reply}\n```")
    score = evaluate(case, judge)
    assert score.error is None and score.score == 0.7 and score.hits == ["mostly right"]
    [request] = judge.requests
    results = json.loads(request.question.split("evaluation results:\n", 1)[1].split("\n\nDecide", 1)[0])
    assert set(results) == {"has_paris", "has_berlin", "kw"} and results["has_berlin"]["score"] == 0.0
    assert '"score": <number between 0.0 and 1.0>' in (request.system_prompt or "")


@pytest.mark.parametrize("reply", ["no idea", '{"score": 1.5}'])
def test_llm_judge_aggregator_with_a_bad_reply_is_an_error(tmp_path: Path, reply: str) -> None:
    case = composite_case(tmp_path, """
        - name: combo
          type: composite
          aggregator: {type: llm_judge}
    """, MEMBERS)
    score = evaluate(case, ScriptedJudge(reply))
    assert score.score == 0.0 and score.error is not None and "aggregator" in score.error


def test_a_broken_member_makes_the_composite_an_error(tmp_path: Path) -> None:
    case = composite_case(tmp_path, """
        - name: combo
          type: composite
          evaluators:
            - {name: has_paris, type: contains, value: Paris}
            - {name: crash, type: code_judge, script: python3 exit3.py}
    """)
    score = evaluate(case)
    assert score.score == pytest.approx(0.5)
    assert score.error is not None and "member 'crash'" in score.error and "exited with code 3" in score.error
    crash = (score.children or [])[1]
    assert crash.error is not None and crash.score == 0.0


def test_unknown_aggregator_is_a_config_error(tmp_path: Path) -> None:
    case = composite_case(tmp_path, """
        - name: combo
          type: composite
          aggregator: {type: majority_vote}
          evaluators:
            - {name: has_paris, type: contains, value: Paris}
    """)
    score = evaluate(case)
    assert score.score == 0.0
    assert "unknown aggregator type 'majority_vote'" in (score.error or "")


def test_nested_composites_report_grandchildren(tmp_path: Path) -> None:
    case = composite_case(tmp_path, """
        - name: outer
          type: composite
          evaluators:
            - {name: has_paris, type: contains, value: Paris}
            - name: inner
              type: composite
              evaluators:
                - {name: has_france, type: contains, value: France}
                - {name: is_json, type: is_json}
    """)
    score = evaluate(case)
    assert score.score == pytest.approx((1.0 + 0.5) / 2)
    inner = (score.children or [])[1]
    assert inner.type == "composite"
    assert [g.name for g in inner.evaluator_results or []] == ["has_france", "is_json"]


FIXED_SCORE_JUDGE = """\
import json, sys
d = json.load(sys.stdin)
print(json.dumps({"score": d["config"]["give"], "hits": [], "misses": [], "reasoning": "fixed"}))
"""


def test_threshold_aggregator_member_passes_at_exactly_0_6_and_not_below(tmp_path: Path) -> None:
    """AgentV's pass-or-borderline mark: a member scoring 0.6 passes, one scoring 0.59 does not."""
    (tmp_path / "fixed.py").write_text(FIXED_SCORE_JUDGE)
    case = composite_case(tmp_path, """
        - name: combo
          type: composite
          aggregator: {type: threshold, threshold: 0.5}
    """, """
        evaluators:
          - {name: at-mark, type: code_judge, script: python3 fixed.py, give: 0.6}
          - {name: just-under, type: code_judge, script: python3 fixed.py, give: 0.59}
          - {name: at-mark-too, type: code_judge, script: python3 fixed.py, give: 0.6}
    """)
    score = evaluate(case)
    assert score.error is None, score.error
    assert score.score == pytest.approx(2 / 3)
    assert score.hits[0] == "2/3 evaluators passed (threshold: 0.5)"


@pytest.mark.parametrize("weight", ["-1", ".inf", ".nan"])
def test_a_negative_or_non_finite_aggregator_weight_is_a_config_error(tmp_path: Path, weight: str) -> None:
    """A weight of -1 on a failing member would raise the score; .inf would make it NaN, read as 1.0."""
    case = composite_case(tmp_path, f"""
        - name: combo
          type: composite
          aggregator: {{type: weighted_average, weights: {{has_paris: 2, has_berlin: {weight}}}}}
          evaluators:
            - {{name: has_paris, type: contains, value: Paris}}
            - {{name: has_berlin, type: contains, value: Berlin}}
    """)
    score = evaluate(case)
    assert score.score == 0.0
    shown = {"-1": "-1.0", ".inf": "inf", ".nan": "nan"}[weight]
    assert score.error == f"composite 'combo': weight {shown} for member 'has_berlin' is not a finite number >= 0"
    assert score.children is None  # refused before any member ran


JUDGE_VERDICT = '{"score": 1.0, "hits": ["names Paris"], "misses": [], "reasoning": "Correct."}'


def judged_repo(tmp_path: Path, fake_llm: FakeLLMServer, cache: bool) -> Path:
    """An openai agent and judge on the loopback server; one case judged by a composite of nine llm_judges
    (more members than run at once, so some member threads judge twice)."""
    repo = make_repo(tmp_path, f"""
        targets:
          - name: default
            provider: openai
            base_url: {fake_llm.url}/agent
            api_key: ${{{{ TEST_KEY }}}}
            model: agent-model
            judge_target: grader
          - name: grader
            provider: openai
            base_url: {fake_llm.url}/judge
            api_key: ${{{{ TEST_KEY }}}}
            model: judge-model
    """)
    fake_llm.set_default("/agent/v1/chat/completions", FakeReply.openai(ANSWER))
    fake_llm.set_default("/judge/v1/chat/completions", FakeReply.openai(JUDGE_VERDICT))
    judges = "".join(f"                  - {{name: j{i}, type: llm_judge, prompt: 'Check {i}: {{{{ answer }}}}'}}\n"
                     for i in range(9))  # nine different requests, so none replays another's answer
    write(repo / "evals/s.eval.yaml", f"""
        execution: {{cache: {str(cache).lower()}}}
        tests:
          - id: c
            input: What is the capital of France?
            criteria: Names Paris
            assert:
              - name: combo
                type: composite
                evaluators:
""" + judges)
    composite = load_eval_file(repo / "evals/s.eval.yaml", repo).cases[0].evaluators[0]
    assert isinstance(composite, CompositeConfig) and len(composite.evaluators) == 9
    return repo


def run_judged(repo: Path) -> dict[str, Any]:
    ran = run_cli("run", "evals", cwd=repo, env={"TEST_KEY": "sk-test"})
    assert ran.returncode == 0, ran.stdout + ran.stderr
    [row] = read_rows(repo / ".agentv-gate/results.jsonl")
    return row


def test_composite_members_follow_the_suites_cache_setting(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    """The members' judges run on the composite's threads, yet `execution.cache: false` holds for them."""
    repo = judged_repo(tmp_path, fake_llm, cache=False)
    for _ in range(2):
        assert run_judged(repo)["verdict"] == "pass"
    assert len(fake_llm.requests) == 2 * (1 + 9)  # every run asks the agent and all nine judges
    assert not (repo / ".agentv-gate-cache").exists()


def test_composite_members_cache_hits_count_for_the_case(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    repo = judged_repo(tmp_path, fake_llm, cache=True)
    assert "cache_hits" not in run_judged(repo)
    asked = len(fake_llm.requests)
    row = run_judged(repo)
    assert len(fake_llm.requests) == asked  # the second run replays everything
    assert row["verdict"] == "pass" and row["cache_hits"] == 1 + 9
