"""Composite evaluators: members run through the registry, then an AgentV aggregator combines them."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentv_gate.evaluators.composite import CompositeEvaluator, _map_on_daemon_threads
from agentv_gate.evaluators.registry import build_evaluator_registry, evaluate_safely
from agentv_gate.loader import load_eval_file
from agentv_gate.models import (
    CompositeConfig,
    ContainsConfig,
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

    def __init__(self, reply: str, retries: int = 0) -> None:
        self.reply = reply
        self.retries = retries
        self.requests: list[ProviderRequest] = []

    def invoke(self, request: ProviderRequest) -> TargetResponse:
        self.requests.append(request)
        return TargetResponse(text=self.reply, retries=self.retries)


class UnreachableJudge:
    """A judge model (Provider protocol) whose every call fails, as one whose host is down."""

    name = "unreachable-judge"
    kind = "mock"

    def invoke(self, request: ProviderRequest) -> TargetResponse:
        raise ConnectionError("judge host unreachable")


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
    f.write_text(head + "    assert:\n" + body + "\n")
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
    assert [c.verdict for c in score.children or []] == ["pass", "fail", "pass"]
    assert '[has_paris] Output contains "Paris"' in score.hits
    assert "[kw] mentions France" in score.hits
    assert score.misses == ['[has_berlin] Output does not contain "Berlin"']
    assert score.evaluator_raw_request == {"aggregator": "weighted_average", "weights": {"has_berlin": 2}}


def test_weighted_average_never_reads_a_members_own_weight(tmp_path: Path) -> None:
    """AgentV's runWeightedAverage weighs a member by `aggregator.weights[name] ?? 1.0`; a `weight` set on
    the member in code is not read (in a file it is refused at its line)."""
    case = composite_case(tmp_path, """
        - name: combo
          type: composite
          evaluators:
            - {name: a, type: contains, value: Paris}
            - {name: b, type: contains, value: Berlin}
    """)
    config = case.evaluators[0]
    assert isinstance(config, CompositeConfig)
    config.evaluators[0] = config.evaluators[0].model_copy(update={"weight": 3.0})
    score = evaluate(case)
    assert score.score == pytest.approx(0.5)
    assert [c.weight for c in score.children or []] == [1.0, 1.0]


def test_a_members_own_weight_is_refused_before_anything_runs(tmp_path: Path) -> None:
    """A member `weight: 3` scored 0.75 here where AgentV scores 0.5: a pass AgentV would not give."""
    repo = make_repo(tmp_path / "repo")
    write(repo / "evals/s.eval.yaml", """
        threshold: 0.6
        tests:
          - id: c
            input: What is the capital of France?
            criteria: Names Paris
            assert:
              - name: combo
                type: composite
                evaluators:
                  - {name: a, type: contains, value: ok, weight: 3}
                  - {name: b, type: contains, value: Berlin}
    """)
    ran = run_cli("run", "evals", cwd=repo)
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert "evals/s.eval.yaml:10: 'weight' on composite member 'a': AgentV weighs a member" in ran.stderr
    assert not (repo / ".agentv-gate/results.jsonl").exists()


def test_threshold_aggregator_scores_the_passing_fraction(tmp_path: Path) -> None:
    case = composite_case(tmp_path, """
        - name: combo
          type: composite
          aggregator: {type: threshold, threshold: 0.6}
    """, MEMBERS)
    score = evaluate(case)
    assert score.score == pytest.approx(2 / 3)
    assert score.reasoning is not None and score.reasoning.startswith("2/3 evaluators passed (threshold: 0.6)")
    # AgentV's verdict is the threshold's, not the label of the fraction (2/3 alone would be borderline)
    assert score.verdict == "pass"
    failing = composite_case(tmp_path, """
        - name: combo
          type: composite
          aggregator: {type: threshold, threshold: 0.9}
    """, MEMBERS)
    failed = evaluate(failing)
    assert failed.reasoning is not None and failed.reasoning.startswith("2/3 evaluators passed (threshold: 0.9)")
    assert failed.verdict == "fail"


NESTED_THRESHOLD = """
    threshold: 0.6
    tests:
      - id: c
        input: What is the capital of France?
        criteria: Names Paris
        assert:
          - name: outer
            type: composite
            aggregator: {type: threshold, threshold: 1.0}
            evaluators:
              - name: inner
                type: composite
                aggregator: {type: threshold, threshold: 0.9}
                evaluators:
                  - {name: a, type: contains, value: ok}
                  - {name: b, type: contains, value: o}
                  - {name: c, type: contains, value: Berlin}
              - {name: d, type: contains, value: ok}
"""


def test_threshold_aggregator_counts_a_member_by_its_verdict_not_its_score(tmp_path: Path) -> None:
    """AgentV's runThreshold counts members whose verdict is pass or borderline. The inner composite scores
    2/3 (0.667, borderline by score) but its own threshold (0.9) made its verdict `fail`: the outer one
    has 1 of 2 passing members, 0.5 below its 1.0, not 2 of 2 and a pass."""
    repo = make_repo(tmp_path / "repo")
    write(repo / "evals/s.eval.yaml", NESTED_THRESHOLD)
    ran = run_cli("run", "evals", cwd=repo)
    [row] = read_rows(repo / ".agentv-gate/results.jsonl")
    assert [(s["score"], s["verdict"]) for s in row["scores"][0]["scores"]] == [(pytest.approx(2 / 3), "fail"),
                                                                                 (1.0, "pass")]
    assert row["scores"][0]["verdict"] == "fail"
    assert row["score"] == 0.5 and row["verdict"] == "fail"
    assert ran.returncode == 1, ran.stdout + ran.stderr


def test_a_code_aggregator_sees_each_members_own_verdict(tmp_path: Path) -> None:
    """AgentV hands the aggregator each member's result as it is: a verdict the member forced (a threshold
    composite's `fail` at 0.667) is not replaced by the label of its score (`borderline`)."""
    (tmp_path / "echo.py").write_text(ECHO_AGGREGATOR)
    case = composite_case(tmp_path, """
        - name: combo
          type: composite
          aggregator: {type: code_judge, path: python3 echo.py}
          evaluators:
            - name: inner
              type: composite
              aggregator: {type: threshold, threshold: 0.9}
              evaluators:
                - {name: a, type: contains, value: Paris}
                - {name: b, type: contains, value: France}
                - {name: c, type: contains, value: Berlin}
    """)
    results = json.loads(evaluate(case).reasoning or "")["results"]
    assert results["inner"]["verdict"] == "fail"


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
    # The default prompt asks for a verdict too; as in AgentV, the score decides (0.7 is borderline, not "pass")
    reply = '{"score": 0.7, "verdict": "pass", "hits": ["mostly right"], "reasoning": "ok"}'
    judge = ScriptedJudge(f"Verdict:\n```json\n{reply}\n```")
    score = evaluate(case, judge)
    assert score.error is None and score.score == 0.7 and score.hits == ["mostly right"]
    assert score.verdict is None  # the score's own label
    assert score.retries == 0
    [request] = judge.requests
    block = request.question.split("evaluation results:\n", 1)[1].split("\n\nDecide", 1)[0]
    results = json.loads(block)
    assert set(results) == {"has_paris", "has_berlin", "kw"} and results["has_berlin"]["score"] == 0.0
    assert block == json.dumps(results, indent=2)  # AgentV's JSON.stringify(results, null, 2)
    assert '"score": <number between 0.0 and 1.0>' in (request.system_prompt or "")


@pytest.mark.parametrize("reply", [
    "no idea", '{"score": 1.5}',
    # a verdict, then a revised one: AgentV's greedy {...} span does not parse (score 0); the first must not pass
    '```json\n{"score": 0.9, "reasoning": "fine"}\n```\nOn reflection:\n```json\n{"score": 0.2}\n```',
    '{"score": 0.9}\nRevised: {"score": 0.2}',
    # AgentV parses the aggregator's reply with the judge's zod schema and scores a refused one 0: read
    # tolerantly, these scored 0.9 (hits as text, a score written as text)
    '{"score": 0.9, "hits": "all good"}', '{"score": "0.9"}', '{"score": 0.9, "reasoning": ["a"]}',
])
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


def judged_with_an_aggregator_set_in_code(tmp_path: Path, aggregator: dict[str, Any]) -> EvaluationScore:
    """A composite loaded from a file, then given `aggregator` in code, where the loader never saw it."""
    case = composite_case(tmp_path, """
        - name: combo
          type: composite
          evaluators:
            - {name: has_paris, type: contains, value: Paris}
            - {name: has_berlin, type: contains, value: Berlin}
    """)
    config = case.evaluators[0]
    assert isinstance(config, CompositeConfig)
    config.aggregator = aggregator
    return evaluate(case)


def test_unknown_aggregator_is_a_config_error(tmp_path: Path) -> None:
    """Refused at load in a file (tests/loader/test_evaluator_parser.py); set in code, when judging."""
    score = judged_with_an_aggregator_set_in_code(tmp_path, {"type": "majority_vote"})
    assert score.score == 0.0
    assert "unknown aggregator type 'majority_vote'" in (score.error or "")


@pytest.mark.parametrize("weight", [-0.5, float("inf")])
def test_a_negative_or_infinite_member_weight_set_in_code_is_refused_when_judging(tmp_path: Path, weight: float) -> None:
    """The loader refuses it in a file; a config built in code meets the same refusal, never a score
    that a failing member raised."""
    score = judged_with_an_aggregator_set_in_code(tmp_path, {"type": "weighted_average", "weights": {"has_berlin": weight}})
    assert score.score == 0.0
    assert score.error == f"composite 'combo': weight {weight} for member 'has_berlin' is not a finite number >= 0"


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
    assert score.reasoning is not None and score.reasoning.startswith("2/3 evaluators passed (threshold: 0.5)")


def fixed(name: str, give: float) -> str:
    """A member scoring `give` through FIXED_SCORE_JUDGE (no hits, no misses, reasoning "fixed")."""
    return f"- {{name: {name}, type: code_judge, script: python3 fixed.py, give: {give}}}"


def test_a_single_member_composite_scores_as_its_member(tmp_path: Path) -> None:
    case = composite_case(tmp_path, """
        - name: combo
          type: composite
          evaluators:
            - {name: has_paris, type: contains, value: Paris}
    """)
    score = evaluate(case)
    assert score.error is None, score.error
    assert score.score == 1.0
    assert score.hits == ['[has_paris] Output contains "Paris"'] and score.misses == []


def test_weighted_average_joins_the_members_reasoning(tmp_path: Path) -> None:
    (tmp_path / "fixed.py").write_text(FIXED_SCORE_JUDGE)
    case = composite_case(tmp_path, """
        - name: combo
          type: composite
    """, f"""
        evaluators:
          {fixed("low", 0.2)}
          {fixed("high", 0.9)}
          - {{name: has_paris, type: contains, value: Paris}}
    """)
    score = evaluate(case)
    assert score.score == pytest.approx((0.2 + 0.9 + 1.0) / 3)
    assert score.reasoning == 'low: fixed; high: fixed; has_paris: Output contains "Paris"'


def test_weighted_average_with_zero_total_weight_scores_zero(tmp_path: Path) -> None:
    """AgentV: totalWeight > 0 ? weightedSum / totalWeight : 0, so weights all 0 can never pass."""
    case = composite_case(tmp_path, """
        - name: combo
          type: composite
          aggregator: {type: weighted_average, weights: {has_paris: 0, has_france: 0}}
          evaluators:
            - {name: has_paris, type: contains, value: Paris}
            - {name: has_france, type: contains, value: France}
    """)
    score = evaluate(case)
    assert score.error is None, score.error
    assert score.score == 0.0
    assert [c.weight for c in score.children or []] == [0.0, 0.0]


@pytest.mark.parametrize("weight", ["-1", ".inf", ".nan"])
def test_a_negative_or_non_finite_aggregator_weight_is_a_config_error(tmp_path: Path, weight: str) -> None:
    """A weight of -1 on a failing member would raise the score; .inf would make it NaN, read as 1.0:
    refused where it is written, before anything runs."""
    suite = tmp_path / "w.eval.yaml"
    suite.write_text("tests:\n  - id: w\n    input: q\n    assert:\n      - name: combo\n        type: composite\n"
                     f"        aggregator: {{type: weighted_average, weights: {{has_paris: 2, has_berlin: {weight}}}}}\n"
                     "        evaluators:\n          - {name: has_paris, type: contains, value: Paris}\n"
                     "          - {name: has_berlin, type: contains, value: Berlin}\n")
    errors = load_eval_file(suite, tmp_path).errors
    shown = {"-1": "-1", ".inf": "inf", ".nan": "nan"}[weight]
    wanted = f"aggregator weight {shown} for member 'has_berlin' is not a finite number >= 0"
    assert [p.line for p in errors if wanted in p.message] == [5], errors


@pytest.mark.parametrize(("member_score", "expected"), [(1.5, 1.0), (-0.5, 0.0)])
def test_weighted_average_is_clamped_to_0_1(tmp_path: Path, member_score: float, expected: float) -> None:
    """AgentV's clampScore: whatever a member runner reports, the composite stays within 0..1."""
    case = composite_case(tmp_path, """
        - name: combo
          type: composite
          evaluators:
            - {name: a, type: contains, value: Paris}
            - {name: b, type: contains, value: France}
    """)
    composite = CompositeEvaluator(run_member=lambda context: EvaluationScore(score=member_score))
    config = case.evaluators[0]
    assert isinstance(config, CompositeConfig)
    score = composite.evaluate(config, EvaluationContext(eval_case=case, candidate=ANSWER, evaluator=config))
    assert score.score == expected
    assert score.reasoning is None  # no member gave any


def test_threshold_aggregator_defaults_to_half_and_passes_at_it(tmp_path: Path) -> None:
    """With no `threshold`, 0.5: one member of two passing reaches it exactly, so the summary is a hit."""
    case = composite_case(tmp_path, """
        - name: combo
          type: composite
          aggregator: {type: threshold}
          evaluators:
            - {name: has_paris, type: contains, value: Paris}
            - {name: has_berlin, type: contains, value: Berlin}
    """)
    score = evaluate(case)
    assert score.error is None, score.error
    assert score.score == 0.5
    # an `assertions:` file is 4.x: 4.42 lists the count first (a hit, the composite passing), then the members' lines
    assert score.hits == ["1/2 evaluators passed (threshold: 0.5)", '[has_paris] Output contains "Paris"']
    assert score.misses == ['[has_berlin] Output does not contain "Berlin"']
    assert score.reasoning == "1/2 evaluators passed (threshold: 0.5)"
    assert score.evaluator_raw_request == {"aggregator": "threshold", "threshold": 0.5}
    assert score.verdict == "pass"  # the threshold is met, though 0.5 alone would be labelled fail


@pytest.mark.parametrize(("threshold", "shown"), [(True, "True"), ("high", "'high'")])
def test_threshold_aggregator_refuses_a_threshold_that_is_not_a_number(threshold: Any, shown: str) -> None:
    # the loader refuses it at its line (tests/loader/test_evaluator_parser.py); a config built in code is refused here
    config = CompositeConfig(name="combo", evaluators=[ContainsConfig(name="has_paris", value="Paris")],
                             aggregator={"type": "threshold", "threshold": threshold})
    case = EvalCase(id="capital", source_file=Path("/tmp/x.eval.yaml"), suite="x", evaluators=[config])
    score = evaluate(case)
    assert score.score == 0.0
    assert score.error == f"aggregator threshold must be a number, got {shown}"


ECHO_AGGREGATOR = """\
import json, sys
raw = sys.stdin.buffer.read().decode("utf-8")
print(json.dumps({"score": 1.0, "hits": ["read the results"], "reasoning": raw}))
"""
"""A code aggregator that hands back, as its reasoning, the exact text it read on stdin."""


def test_code_judge_aggregator_reads_agentv_formatted_member_results(tmp_path: Path) -> None:
    (tmp_path / "fixed.py").write_text(FIXED_SCORE_JUDGE)
    (tmp_path / "echo.py").write_text(ECHO_AGGREGATOR)
    case = composite_case(tmp_path, """
        - name: combo
          type: composite
          aggregator: {type: code_judge, path: python3 echo.py}
    """, f"""
        evaluators:
          - name: kw
            type: code_judge
            script: python3 kw.py
            keywords: [Paris, France, Berlin]
          {fixed("quiet", 0.5)}
          - {{name: café, type: contains, value: café}}
    """)
    score = evaluate(case)
    assert score.error is None, score.error
    raw = score.reasoning or ""
    payload = json.loads(raw)
    # As AgentV's JSON.stringify(payload, null, 2): two-space indent, non-ASCII text as it is.
    assert raw.strip() == json.dumps(payload, indent=2, ensure_ascii=False)
    assert '"café": {' in raw
    results = payload["results"]
    assert results["kw"]["hits"] == ["mentions Paris", "mentions France"]
    # hits + misses, at least 1 (a member that lists nothing still counts one aspect)
    assert {name: r["expected_aspect_count"] for name, r in results.items()} == {"kw": 3, "quiet": 1, "café": 1}
    assert results["café"]["misses"] == ['Output does not contain "café"']


@pytest.mark.parametrize("path", ["path: [python3, agg.py]", "script: python3 agg.py"])
def test_code_judge_aggregator_takes_a_list_or_the_script_key(tmp_path: Path, path: str) -> None:
    case = composite_case(tmp_path, f"""
        - name: combo
          type: composite
          aggregator: {{type: code_judge, {path}}}
    """, MEMBERS)
    score = evaluate(case)
    assert score.error is None, score.error
    assert score.score == 0.0 and score.misses == ["weakest: has_berlin"]


@pytest.mark.parametrize("path", ["", ", path: 7", ", path: []"])
def test_code_judge_aggregator_without_a_script_is_an_error(tmp_path: Path, path: str) -> None:
    case = composite_case(tmp_path, f"""
        - name: combo
          type: composite
          aggregator: {{type: code_judge{path}}}
    """, MEMBERS)
    score = evaluate(case)
    assert score.score == 0.0
    assert score.error is not None
    assert score.error.startswith("code_judge aggregator needs 'path' (the script to run)")


def test_a_failing_code_judge_aggregator_names_its_program(tmp_path: Path) -> None:
    case = composite_case(tmp_path, """
        - name: combo
          type: composite
          aggregator: {type: code_judge, path: python3 exit3.py}
    """, MEMBERS)
    score = evaluate(case)
    assert score.score == 0.0
    assert score.error is not None and score.error.startswith("aggregator (python3) exited with code 3")


def code_built(case: EvalCase, script: str) -> CompositeConfig:
    """The case's composite as code would build it (no loader): the aggregator script left unresolved."""
    config = case.evaluators[0]
    assert isinstance(config, CompositeConfig)
    return CompositeConfig(name="combo", evaluators=config.evaluators, source_file=case.source_file,
                           aggregator={"type": "code_judge", "path": script})


def test_code_judge_aggregator_built_in_code_splits_its_script(tmp_path: Path) -> None:
    case = composite_case(tmp_path, """
        - name: combo
          type: composite
    """, MEMBERS)
    registry = build_evaluator_registry({LlmJudgeConfig: NoLlm()})
    for script, expected_error in [("python3 agg.py", None),
                                   ('python3 "agg.py', "code_judge aggregator script cannot be split into "
                                                       "arguments: No closing quotation")]:
        config = code_built(case, script)
        score = evaluate_safely(registry, EvaluationContext(eval_case=case, candidate=ANSWER, evaluator=config))
        assert score.error == expected_error
        if expected_error is None:
            assert score.score == 0.0 and score.misses == ["weakest: has_berlin"]
            assert (score.evaluator_raw_request or {})["script"] == ["python3", str((tmp_path / "agg.py").resolve())]


@pytest.mark.parametrize("retries", [0, 2])
def test_llm_judge_aggregator_keeps_four_hits_and_misses_and_counts_retries(tmp_path: Path, retries: int) -> None:
    """As AgentV, the aggregating judge's first four hits and misses are kept; its retries are counted."""
    case = composite_case(tmp_path, """
        - name: combo
          type: composite
          aggregator: {type: llm_judge}
    """, MEMBERS)
    reply = {"score": 0.5, "hits": [f"h{i}" for i in range(1, 7)], "misses": [f"m{i}" for i in range(1, 7)],
             "reasoning": "mixed"}
    score = evaluate(case, ScriptedJudge(json.dumps(reply), retries=retries))
    assert score.error is None, score.error
    assert score.hits == ["h1", "h2", "h3", "h4"] and score.misses == ["m1", "m2", "m3", "m4"]
    assert score.retries == retries


def test_llm_judge_aggregator_whose_model_fails_is_an_error_that_keeps_the_prompt(tmp_path: Path) -> None:
    case = composite_case(tmp_path, """
        - name: combo
          type: composite
          aggregator: {type: llm_judge}
    """, MEMBERS)
    score = evaluate(case, UnreachableJudge())
    assert score.score == 0.0
    assert score.error == "llm_judge aggregator failed: judge host unreachable"
    raw = score.evaluator_raw_request or {}
    assert raw["target"] == "unreachable-judge" and "has_berlin" in raw["userPrompt"]


def direct_composite(case: EvalCase, run_member: Callable[[EvaluationContext], EvaluationScore]) -> EvaluationScore:
    """The case's composite run by a CompositeEvaluator whose members are run by `run_member`."""
    config = case.evaluators[0]
    assert isinstance(config, CompositeConfig)
    context = EvaluationContext(eval_case=case, candidate=ANSWER, evaluator=config)
    return CompositeEvaluator(run_member=run_member).evaluate(config, context)


def members_yaml(count: int) -> str:
    return "evaluators:\n" + "".join(f"  - {{name: m{i}, type: contains, value: Paris}}\n" for i in range(count))


def test_eight_members_run_at_once_and_no_more(tmp_path: Path) -> None:
    """Members run concurrently, at most MAX_PARALLEL_MEMBERS (8) at a time, on that many threads."""
    count = 8 * 8
    case = composite_case(tmp_path, "- name: combo\n  type: composite\n", members_yaml(count))
    changed = threading.Condition()
    arrived = running = peak = 0
    met: list[bool] = []
    threads: set[int] = set()

    def run_member(context: EvaluationContext) -> EvaluationScore:
        nonlocal arrived, running, peak
        with changed:
            wave_end = (arrived // 8 + 1) * 8
            arrived += 1
            running += 1
            peak = max(peak, running)
            threads.add(threading.get_ident())
            changed.notify_all()
            # The members go in waves of eight, each holding its thread until its whole wave has started:
            # a ninth thread, were there one, joins in while the others wait. (The timeout guards a hang.)
            met.append(changed.wait_for(lambda: arrived >= wave_end or False in met, timeout=60))
            changed.notify_all()  # after a timeout, the others stop waiting too
            running -= 1
        return EvaluationScore(score=1.0)

    score = direct_composite(case, run_member)
    assert met == [True] * count, "eight members never ran at once"
    assert peak == 8 and len(threads) == 8
    assert score.score == 1.0 and len(score.children or []) == count


def test_a_member_runner_that_raises_raises_in_the_callers_thread(tmp_path: Path) -> None:
    """run_member never raises in the product (evaluate_safely); if it ever did, the bug is not lost."""
    case = composite_case(tmp_path, "- name: combo\n  type: composite\n", members_yaml(3))

    def run_member(context: EvaluationContext) -> EvaluationScore:
        if context.evaluator.name == "m1":
            raise RuntimeError("member runner bug")
        return EvaluationScore(score=1.0)

    with pytest.raises(RuntimeError, match="member runner bug"):
        direct_composite(case, run_member)


def test_member_threads_raise_the_first_failure() -> None:
    def fail_after_zero(item: int) -> int:
        if item:
            raise ValueError(f"item {item} failed")
        return item

    with pytest.raises(ValueError, match="item 1 failed"):
        _map_on_daemon_threads(fail_after_zero, [0, 1, 2], 1)  # one worker: the failures come in order
    assert _map_on_daemon_threads(lambda item: item * 10, [3, 1, 2], 2) == [30, 10, 20]


STUCK_MEMBERS = """\
import threading
from agentv_gate.evaluators.composite import _map_on_daemon_threads
started, never = threading.Event(), threading.Event()
def stuck(item):
    started.set()
    never.wait()  # a member stuck in a network read
threading.Thread(target=_map_on_daemon_threads, args=(stuck, [1, 2], 2), daemon=True).start()
started.wait()
print("main thread done", flush=True)  # as after Ctrl-C or SIGTERM: the main thread ends, the members do not
"""


def test_the_process_ends_while_a_member_is_stuck(tmp_path: Path) -> None:
    """Members run on daemon threads: when the main thread ends (after Ctrl-C, say), the process
    exits at once instead of waiting for a member stuck in a network read."""
    script = tmp_path / "stuck.py"
    script.write_text(STUCK_MEMBERS)
    # The timeout guards a hang (non-daemon member threads would hold the process forever).
    ended = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60,
                           cwd=Path(__file__).resolve().parents[2])
    assert (ended.returncode, ended.stdout, ended.stderr) == (0, "main thread done\n", "")


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


RUBRIC_JUDGE_TARGETS = """\
targets:
  - name: default
    provider: mock
    response: Paris
    judge_target: judge
  - name: judge
    provider: mock
    response: unused
    judge_response:
      checks:
        - {id: cites, satisfied: false, reasoning: no source given}
        - {id: names, satisfied: true, reasoning: says Paris}
      overall_reasoning: names the city, cites nothing
"""
"""A judge that finds the required rubric item unmet and the heavier optional one met: score 0.75, `fail`."""

def rubric_member_suite(tmp_path: Path, aggregator: str) -> Path:
    """A suite whose composite holds a rubric member that scores 0.75 yet is `fail` (its required item
    unmet) and a `contains` member that passes."""
    repo = make_repo(tmp_path, RUBRIC_JUDGE_TARGETS)
    write(repo / "evals/s.eval.yaml", f"""
        threshold: 0.8
        tests:
          - id: c1
            input: What is the capital of France?
            criteria: Names Paris and cites a source
            assert:
              - name: combo
                type: composite
                aggregator: {aggregator}
                evaluators:
                  - name: rub
                    type: rubrics
                    criteria:
                      - {{id: cites, outcome: Cites a source, required: true}}
                      - {{id: names, outcome: Names Paris, weight: 3}}
                  - {{name: has, type: contains, value: Paris}}
    """)
    return repo


def test_threshold_aggregator_counts_a_rubric_member_failing_its_required_item_as_failing(tmp_path: Path) -> None:
    """AgentV's threshold counts members whose verdict is pass or borderline: a rubric member at 0.75
    whose required item is unmet is `fail`, so 1 of 2 passed and threshold 1.0 is not met."""
    repo = rubric_member_suite(tmp_path, "{type: threshold, threshold: 1.0}")
    ran = run_cli("run", "evals", cwd=repo)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    [row] = read_rows(repo / ".agentv-gate/results.jsonl")
    [combo] = row["scores"]
    assert (combo["score"], combo["verdict"]) == (0.5, "fail")
    # a 4.x file (no pin, no 2.x sign): 4.42 lists the count first, a miss as the composite fails
    # its rubric item's text without the judge's reasoning (4.42 keeps it apart)
    assert combo["misses"][:2] == ["1/2 evaluators passed (threshold: 1.0)", "[rub] [cites] Cites a source"]
    assert row["verdict"] == "fail"


def test_code_aggregator_gets_each_members_own_verdict(tmp_path: Path) -> None:
    """As AgentV hands the aggregator each member's result whole: the rubric member's `fail`, not the
    label of its 0.75 score, so an aggregator that goes by verdicts cannot pass it."""
    repo = rubric_member_suite(tmp_path, "{type: code_judge, path: python3 by_verdict.py}")
    write(repo / "evals/by_verdict.py", """
        import json, sys
        results = json.load(sys.stdin)["results"]
        failed = sorted(name for name, r in results.items() if r["verdict"] == "fail")
        print(json.dumps({"score": 0.0 if failed else 1.0, "misses": [f"{n} failed" for n in failed]}))
    """)
    ran = run_cli("run", "evals", cwd=repo)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    [row] = read_rows(repo / ".agentv-gate/results.jsonl")
    [combo] = row["scores"]
    assert (combo["score"], combo["misses"]) == (0.0, ["rub failed"])
