"""LlmJudgeEvaluator end to end against a real loopback LLM server, plus verdict parsing."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from agentv_gate.errors import JudgeReplyError
from agentv_gate.evaluators.llm_judge import LlmJudgeEvaluator
from agentv_gate.judging.judge_reply import parse_judge_reply
from agentv_gate.judging.templates import JUDGE_SYSTEM_PROMPT
from agentv_gate.models import (
    EvalCase,
    EvaluationContext,
    LlmJudgeConfig,
    Message,
    PromptScriptConfig,
    RubricItem,
    TargetResponse,
)
from agentv_gate.targets.base import Provider, ProviderRequest
from agentv_gate.targets.config import RawTarget, parse_targets, resolve_target
from agentv_gate.targets.registry import ProviderRegistry, build_provider
from tests.helpers.cli import run_cli
from tests.helpers.evaluation import score_of
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply
from tests.helpers.files import make_repo, write
from tests.helpers.reports import RESULTS, rows_by_id

CHAT = "/v1/chat/completions"
GOOD = {"score": 0.75, "hits": ["names Paris"], "misses": ["no source"], "reasoning": "Mostly right."}


def context(evaluator: Any = None, target: str = "agent") -> EvaluationContext:
    case = EvalCase(
        id="capital",
        source_file=Path("evals/geo.eval.yaml"),
        suite="evals/geo.eval.yaml",
        question="What is the capital of France?",
        input_messages=[Message(role="user", content="What is the capital of France?")],
        expected_outcome="Names Paris",
        reference_answer="Paris",
    )
    return EvaluationContext(
        eval_case=case,
        candidate="It is Paris.",
        evaluator=evaluator or LlmJudgeConfig(name="j"),
        target=target,
    )


@pytest.fixture
def judge(fake_llm: FakeLLMServer) -> Provider:
    config = resolve_target(
        RawTarget(
            name="judge",
            data={
                "name": "judge",
                "provider": "openai",
                "base_url": fake_llm.url,
                "model": "judge-model",
                "retry_initial_delay_ms": 1,
                "retry_jitter_ms": 1,
                "timeout_seconds": 0.3,
            },
        ),
        {},
    )
    return build_provider(config)


def evaluator_for(provider: Provider | None, **kwargs: Any) -> LlmJudgeEvaluator:
    return LlmJudgeEvaluator(resolve_judge_provider=lambda ctx: provider, **kwargs)


def test_good_verdict_and_raw_request(fake_llm: FakeLLMServer, judge: Provider) -> None:
    fake_llm.enqueue(CHAT, FakeReply.openai(json.dumps(GOOD)))
    score = score_of(evaluator_for(judge, max_output_tokens=300), context())
    assert score.error is None
    assert (score.score, score.hits, score.misses, score.reasoning) == (0.75, ["names Paris"], ["no source"], "Mostly right.")
    assert score.retries == 0
    raw = score.evaluator_raw_request
    assert raw is not None and raw["target"] == "judge" and raw["system_prompt"] == JUDGE_SYSTEM_PROMPT
    assert raw["prompt_source"] == "default" and "[[ ## answer ## ]]\nIt is Paris." in raw["user_prompt"]
    body = fake_llm.requests[0].json
    assert body["messages"] == [
        {"role": "system", "content": JUDGE_SYSTEM_PROMPT},
        {"role": "user", "content": raw["user_prompt"]},
    ]
    assert body["temperature"] == 0.0 and body["max_tokens"] == 300 and body["model"] == "judge-model"


def test_custom_prompt_and_model_override(fake_llm: FakeLLMServer, judge: Provider) -> None:
    fake_llm.enqueue(CHAT, FakeReply.openai(json.dumps(GOOD)))
    config = LlmJudgeConfig(name="j", prompt="Is {{answer}} right for {{question}}?", model="gpt-judge-2")
    score = score_of(evaluator_for(judge), context(config))
    assert score.evaluator_raw_request["user_prompt"] == "Is It is Paris. right for What is the capital of France??"
    assert score.evaluator_raw_request["model"] == "gpt-judge-2"
    assert fake_llm.requests[0].json["model"] == "gpt-judge-2"


def test_fenced_reply_with_prose_is_accepted(fake_llm: FakeLLMServer, judge: Provider) -> None:
    text = f"Here is my evaluation:\n```json\n{json.dumps(GOOD, indent=2)}\n```\nHope this helps!"
    fake_llm.enqueue(CHAT, FakeReply.openai(text))
    assert score_of(evaluator_for(judge), context()).score == 0.75


def test_prose_reply_is_retried_then_accepted(fake_llm: FakeLLMServer, judge: Provider) -> None:
    fake_llm.enqueue(CHAT, FakeReply.openai("The answer looks good to me, I'd say 8/10."), FakeReply.openai(json.dumps(GOOD)))
    score = score_of(evaluator_for(judge), context())
    assert score.score == 0.75 and score.error is None
    assert score.retries == 1 and len(fake_llm.requests) == 2
    assert score.evaluator_raw_request["attempts"] == 2


def test_prose_every_time_is_reported_not_guessed(fake_llm: FakeLLMServer, judge: Provider) -> None:
    fake_llm.set_default(CHAT, FakeReply.openai("I think it is fine."))
    score = score_of(evaluator_for(judge), context())
    assert score.score == 0.0 and score.error is not None
    assert "not a valid verdict after 3 attempt(s)" in score.error and "I think it is fine." in score.error
    assert score.retries == 2 and len(fake_llm.requests) == 3


def test_out_of_range_score_is_not_clamped(fake_llm: FakeLLMServer, judge: Provider) -> None:
    fake_llm.set_default(CHAT, FakeReply.openai(json.dumps({"score": 8, "hits": [], "misses": []})))
    score = score_of(evaluator_for(judge, max_reply_attempts=2), context())
    assert score.score == 0.0 and "'score' must be between 0 and 1, got 8" in (score.error or "")
    assert len(fake_llm.requests) == 2


def test_rubric_judge_scores_the_checks_and_an_unmet_required_item_fails_it(
    fake_llm: FakeLLMServer, judge: Provider
) -> None:
    checks = [{"id": "names", "satisfied": False, "reasoning": "no city"},
              {"id": "why", "satisfied": True, "reasoning": "explained"}]
    fake_llm.enqueue(CHAT, FakeReply.openai(json.dumps({"checks": checks, "overall_reasoning": "judged"})))
    config = LlmJudgeConfig(name="j", rubrics=[RubricItem(id="names", outcome="Names Paris", required=True),
                                               RubricItem(id="why", outcome="Explains", weight=3)])
    score = score_of(evaluator_for(judge), context(config))
    assert (score.score, score.verdict, score.reasoning, score.error) == (0.75, "fail", "judged", None)
    assert (score.hits, score.misses) == (["[why] Explains: explained"], ["[names] Names Paris: no city"])
    raw = score.evaluator_raw_request
    assert raw["prompt_source"] == "rubrics" and "- [names] (REQUIRED): Names Paris" in raw["user_prompt"]
    assert raw["target"] == "judge" and raw["attempts"] == 1


def test_network_retries_show_in_the_score(fake_llm: FakeLLMServer, judge: Provider) -> None:
    fake_llm.enqueue(CHAT, FakeReply.error(429, retry_after="0"), FakeReply.error(500), FakeReply.openai(json.dumps(GOOD)))
    score = score_of(evaluator_for(judge), context())
    assert score.score == 0.75 and score.retries == 2


def test_judge_that_keeps_failing_is_an_error_with_its_retries(fake_llm: FakeLLMServer, judge: Provider) -> None:
    fake_llm.set_default(CHAT, FakeReply.error(503, "overloaded"))
    score = score_of(evaluator_for(judge), context())
    assert score.score == 0.0 and score.retries == 3
    assert "judge target 'judge' failed" in (score.error or "") and "overloaded" in (score.error or "")


def test_hanging_judge_times_out_and_is_reported(fake_llm: FakeLLMServer, judge: Provider) -> None:
    fake_llm.set_default(CHAT, FakeReply.hang(5))
    score = score_of(evaluator_for(judge), context())
    assert score.error is not None and "no response within" in score.error


def test_no_judge_target_is_a_clear_error() -> None:
    score = score_of(evaluator_for(None), context(target="my-agent"))
    assert score.score == 0.0 and score.retries == 0
    assert score.error == (
        "no judge target configured: set judge_target on target 'my-agent' in "
        ".agentv/targets.yaml (or `target:` on the llm_judge evaluator)"
    )


def test_resolver_failure_becomes_the_case_error() -> None:
    def broken(ctx: EvaluationContext) -> Provider:
        raise ValueError("environment variable 'JUDGE_KEY' is not set")

    score = score_of(LlmJudgeEvaluator(resolve_judge_provider=broken), context())
    assert score.error == "judge target cannot be used: environment variable 'JUDGE_KEY' is not set"


class BuggyJudge:
    """A provider with a bug: it raises something other than ProviderError."""

    name, kind = "buggy", "plugin"

    def invoke(self, request: ProviderRequest) -> TargetResponse:
        raise KeyError("choices")


def test_a_provider_bug_is_the_case_error_not_a_crash() -> None:
    score = score_of(evaluator_for(BuggyJudge()), context())
    assert (score.score, score.error) == (0.0, "judge target 'buggy' failed: KeyError: 'choices'")
    assert score.evaluator_raw_request["attempts"] == 1


def test_failing_prompt_script_is_reported_without_calling_the_judge(
    tmp_path: Path, fake_llm: FakeLLMServer, judge: Provider
) -> None:
    script = tmp_path / "prompt.py"
    script.write_text("import sys\nsys.stderr.write('KeyError: rubric')\nsys.exit(1)\n", encoding="utf-8")
    config = LlmJudgeConfig(name="j", prompt=PromptScriptConfig(script=[sys.executable, str(script)]))
    score = score_of(evaluator_for(judge), context(config))
    assert score.score == 0.0 and "KeyError: rubric" in (score.error or "")
    assert score.evaluator_raw_request["prompt_source"] == "script"
    assert fake_llm.requests == []


def test_executable_prompt_goes_to_the_judge(tmp_path: Path, fake_llm: FakeLLMServer, judge: Provider) -> None:
    script = tmp_path / "prompt.py"
    script.write_text(
        "import json,sys\nc=json.load(sys.stdin)\nprint('Grade: ' + c['answer'] + ' | ' + c['config']['rubric'])\n",
        encoding="utf-8",
    )
    fake_llm.enqueue(CHAT, FakeReply.openai(json.dumps(GOOD)))
    config = LlmJudgeConfig(
        name="j", prompt=PromptScriptConfig(script=[sys.executable, str(script)], config={"rubric": "be strict"})
    )
    score = score_of(evaluator_for(judge), context(config))
    assert score.score == 0.75
    assert fake_llm.requests[0].json["messages"][1]["content"] == "Grade: It is Paris. | be strict"
    raw = score.evaluator_raw_request
    assert (raw["prompt_source"], raw["prompt_script"], raw["prompt_exit_code"]) == (
        "script", [sys.executable, str(script)], 0)


CLI_JUDGE = """\
import json, sys
attempt = sys.argv[1]
if attempt == "0":
    print("Let me think about it.")
else:
    verdict = {"score": 1.0, "hits": [], "misses": [], "reasoning": "attempt " + attempt}
    print(json.dumps({"text": "", "output_messages": [
        {"role": "user", "content": "grade this"},
        {"role": "assistant", "content": json.dumps(verdict)},
        {"role": "tool", "content": "graded"},
        {"role": "agent", "content": "done"}]}))
"""


def test_cli_judge_sees_each_attempt_and_its_reply_is_read_from_its_transcript(tmp_path: Path) -> None:
    """The judge is told which ask this is ({ATTEMPT} from 0), and a reply whose `text` is empty is its
    last message whose role is exactly `assistant`. A judge command that fails made no network retries."""
    script = tmp_path / "judge.py"
    script.write_text(CLI_JUDGE, encoding="utf-8")

    def cli_judge(command: str) -> Provider:
        return build_provider(resolve_target(RawTarget(name="cli-judge", data={
            "name": "cli-judge", "provider": "cli", "command": command}), {}))

    answering = cli_judge(f"{sys.executable} {script} {{ATTEMPT}}")
    score = score_of(evaluator_for(answering), context())
    assert (score.score, score.reasoning, score.error) == (1.0, "attempt 1", None)
    assert score.retries == 1 and score.evaluator_raw_request["attempts"] == 2
    once = score_of(evaluator_for(answering, max_reply_attempts=0), context())  # asked at least once
    assert once.verdict == "skip" and "after 1 attempt(s): expected a JSON object" in (once.error or "")
    failing = score_of(evaluator_for(cli_judge("exit 3")), context())
    assert failing.error is not None and "judge target 'cli-judge' failed" in failing.error
    assert failing.retries == 0


def test_offline_mock_judge_from_targets_yaml() -> None:
    text = """
targets:
  - name: default
    provider: mock
    response: Paris
    judge_target: grader
  - name: grader
    provider: mock
    judge_response: {score: 1.0, hits: [correct capital], misses: [], reasoning: Matches.}
    responses:
      - id: capital
        contains: "[[ ## answer ## ]]\\nLondon"
        judge_response: {score: 0.0, hits: [], misses: [wrong capital], reasoning: Wrong.}
"""
    registry = ProviderRegistry(parse_targets(text), {})
    evaluator = LlmJudgeEvaluator(resolve_judge_provider=registry.judge_resolver())
    good = score_of(evaluator, context(target="default"))
    assert (good.score, good.hits, good.evaluator_raw_request["target"]) == (1.0, ["correct capital"], "grader")
    ctx = context(target="default")
    ctx.candidate = "London"
    bad = score_of(evaluator, ctx)
    assert (bad.score, bad.misses) == (0.0, ["wrong capital"])


# ---------------------------------------------------------------- verdict parsing


@pytest.mark.parametrize(
    "text",
    [
        '{"score": 0.5, "hits": ["a"], "misses": [], "reasoning": "r"}',
        '```json\n{"score": 0.5, "hits": ["a"], "misses": [], "reasoning": "r"}\n```',
        '```\n{"score": 0.5, "hits": ["a"], "reasoning": "r"}\n```',
        'Sure. {"score": 0.5, "hits": ["a"], "reasoning": "r"} Anything else?',
        '<think>maybe {"score": 0.1}? no</think>\n{"score": 0.5, "hits": ["a"], "reasoning": "r"}',
        'Context {"note": "x"} then verdict {"score": 0.5, "hits": ["a"], "reasoning": "r"}',
    ],
)
def test_tolerant_parsing(text: str) -> None:
    reply = parse_judge_reply(text)
    assert (reply.score, reply.hits, reply.reasoning) == (0.5, ["a"], "r")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "empty reply"),
        ("Looks great!", "no JSON object"),
        ('{"verdict": "pass"}', "no 'score'"),
        ('{"score": 1.2}', "between 0 and 1, got 1.2"),
        ('{"score": -0.1}', "between 0 and 1"),
        ('{"score": true}', "must be a number"),
        ('{"score": "high"}', "must be a number"),
        ('{"score": 0.5, "hits": {"a": 1}}', "'hits' must be a list"),
    ],
)
def test_invalid_verdicts_say_why(text: str, expected: str) -> None:
    with pytest.raises(JudgeReplyError, match=expected):
        parse_judge_reply(text)


def test_hits_are_cleaned_not_truncated() -> None:
    reply = parse_judge_reply(json.dumps({"score": 1, "hits": ["a", "", " b ", "c", "d", "e"]}))
    assert reply.hits == ["a", "b", "c", "d", "e"] and reply.misses == [] and reply.score == 1.0


def test_a_judge_that_writes_a_verdict_and_then_a_revised_one_is_asked_again_not_passed(
        fake_llm: FakeLLMServer, judge: Provider) -> None:
    """AgentV cannot parse a reply holding two objects and asks again; taking the first would pass the
    case on the verdict the judge took back. Asked again, one clear verdict is read."""
    revised = '{"score": 0.9, "reasoning": "good"}\nOn reflection it misses the point:\n{"score": 0.2, "reasoning": "bad"}'
    fake_llm.enqueue(CHAT, FakeReply.openai(revised), FakeReply.openai(json.dumps({"score": 0.2, "reasoning": "bad"})))
    score = score_of(evaluator_for(judge), context())
    assert (score.score, score.reasoning, score.error, score.retries) == (0.2, "bad", None, 1)
    fake_llm.set_default(CHAT, FakeReply.openai(revised))
    skipped = score_of(evaluator_for(judge), context())
    assert skipped.verdict == "skip" and "holds 2 verdicts with different scores (0.9, 0.2)" in (skipped.error or "")


def test_a_judge_that_writes_its_score_as_text_is_skipped_not_passed(tmp_path: Path) -> None:
    """`{"score": "0.9"}` fails AgentV's schema (`z.number()`): its judge is asked three times and then
    skipped. Here the text was read as 0.9 and the case passed; now it is asked again, skipped, and
    the case, with nothing left to score it, is an error."""
    make_repo(tmp_path, """
targets:
  - name: default
    provider: mock
    response: Paris
    judge_target: grader
  - name: grader
    provider: mock
    judge_response: '{"score": "0.9", "hits": ["names Paris"], "reasoning": "right"}'
""")
    write(tmp_path / "evals/j.eval.yaml", """
        tests:
          - id: text-score
            criteria: Names Paris
            input: Capital of France?
            assert: [{type: llm_judge}]
    """)
    proc = run_cli("run", "evals", cwd=tmp_path)
    row = rows_by_id(tmp_path / RESULTS)["text-score"]
    assert proc.returncode == 1 and row["verdict"] == "error", proc.stdout + proc.stderr
    judged = row["scores"][0]
    assert judged["verdict"] == "skip" and "'score' must be a number between 0 and 1, got \"0.9\"" in judged["error"]
