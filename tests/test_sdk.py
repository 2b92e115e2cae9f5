"""The Python SDK for judge authors, and the example judges, run as real programs."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentv_gate.evaluators.code_judge import CodeJudgeEvaluator
from agentv_gate.judging.payload import build_judge_payload
from agentv_gate.models import CodeJudgeConfig, EvalCase, EvaluationContext, Message
from agentv_gate.sdk import CodeJudgeInput, parse_judge_input, run_code_judge, run_prompt_template
from tests.helpers.evaluation import score_of

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "judges"
JUDGES = Path(__file__).parent / "judges"
SPEC = Path("/work/shared/spec")
ANSWER = "Paris is the capital of France."


def capital_case() -> EvalCase:
    return EvalCase(
        id="capital", source_file=ROOT / "x.eval.yaml", suite="x.eval.yaml",
        question="Answer in one sentence. What is the capital of France?",
        input_messages=[Message(role="system", content="Answer in one sentence."),
                        Message(role="user", content="What is the capital of France?")],
        expected_outcome="Names Paris as the capital of France",
        expected_messages=[Message(role="assistant", content=ANSWER)], reference_answer=ANSWER,
    )


def payload(config: dict[str, Any] | None = None, answer: str = ANSWER, **extra: Any) -> str:
    context = EvaluationContext(eval_case=capital_case(), candidate=answer,
                                evaluator=CodeJudgeConfig(name="j", script="x"), target="t", **extra)
    return json.dumps(build_judge_payload(context, config))


def run(script: Path, stdin: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`python3 examples/judges/x.py` from a folder that is not the repo, as a user would."""
    return subprocess.run([sys.executable, str(script)], input=stdin, capture_output=True, text=True,
                          cwd=cwd, timeout=60)


def test_sdk_keyword_example_from_another_folder(tmp_path: Path) -> None:
    done = run(EXAMPLES / "keyword_judge.py", payload({"keywords": ["Paris", "Rome"]}), tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result == {"score": 0.5, "hits": ["mentions Paris"], "misses": ["does not mention Rome"],
                      "reasoning": "1/2 keywords present"}


def test_stdlib_example_matches_the_sdk_example(tmp_path: Path) -> None:
    stdin = payload({"keywords": ["Paris", "France", "Berlin"]})
    sdk = json.loads(run(EXAMPLES / "keyword_judge.py", stdin, tmp_path).stdout)
    plain = json.loads(run(EXAMPLES / "stdlib_keyword_judge.py", stdin, tmp_path).stdout)
    assert plain["score"] == sdk["score"] == pytest.approx(2 / 3)
    assert plain["hits"] == sdk["hits"] and plain["misses"] == sdk["misses"]


def test_stdlib_example_imports_nothing_outside_the_standard_library() -> None:
    source = (EXAMPLES / "stdlib_keyword_judge.py").read_text()
    imports = {line.split()[1] for line in source.splitlines() if line.startswith(("import ", "from "))}
    assert imports <= {"json", "sys"}
    done = subprocess.run([sys.executable, "-I", "-S", str(EXAMPLES / "stdlib_keyword_judge.py")],
                          input=payload({"keywords": ["Paris"]}), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and json.loads(done.stdout)["score"] == 1.0  # -S: no site-packages


def test_async_example_reads_the_trace_summary(tmp_path: Path) -> None:
    search = {"tool": "search", "input": {"q": "capital"}}
    outputs = [Message(role="assistant", content="", tool_calls=[search]),
               Message(role="assistant", content=ANSWER)]
    stdin = payload({"required_tools": ["search", "fetch"], "max_tool_calls": 1}, output_messages=outputs)
    done = run(EXAMPLES / "tool_usage_judge.py", stdin, tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["hits"] == ["called search", "1 tool calls (budget 1)"]
    assert result["misses"] == ["never called fetch"]
    assert result["score"] == pytest.approx(2 / 3)


def test_node_example(tmp_path: Path) -> None:
    stdin = payload({"keywords": ["Paris"]})
    done = subprocess.run(["node", str(EXAMPLES / "keyword_judge.mjs")], input=stdin,
                          capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"score": 1, "hits": ["mentions Paris"], "misses": []}


def test_prompt_template_example_prints_the_raw_prompt(tmp_path: Path) -> None:
    done = run(EXAMPLES / "rubric_prompt.py", payload({"rubric": ["names the capital"]}), tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Grade the answer against every rubric item.")
    assert "Question:\nAnswer in one sentence. What is the capital of France?" in done.stdout
    assert f"Answer:\n{ANSWER}" in done.stdout and "- names the capital" in done.stdout
    assert f"Reference answer:\n{ANSWER}" in done.stdout


def test_prompt_template_error_goes_to_stderr_with_exit_1(tmp_path: Path) -> None:
    done = run(EXAMPLES / "rubric_prompt.py", "not json", tmp_path)
    assert done.returncode == 1 and done.stdout == ""
    assert "prompt template failed" in done.stderr


def test_handler_error_exits_1_with_agentv_failure_result(tmp_path: Path) -> None:
    done = run(JUDGES / "sdk_raises.py", payload(), tmp_path)
    assert done.returncode == 1
    # The whole traceback on stderr; the miss names the exception and the judge's own line (a
    # bare `'rubric file missing'` said neither what was raised nor where).
    assert "Traceback (most recent call last):" in done.stderr and 'sdk_raises.py", line 7, in judge' in done.stderr
    miss = "KeyError: 'rubric file missing' (tests/judges/sdk_raises.py:7)"
    assert json.loads(done.stdout) == {"score": 0, "hits": [], "misses": [miss],
                                       "reasoning": f"Evaluation failed: {miss}"}


def test_a_result_without_score_is_an_error(tmp_path: Path) -> None:
    done = run(JUDGES / "sdk_bad_return.py", payload(), tmp_path)
    assert done.returncode == 1 and "score" in done.stderr


def test_bare_number_results_are_clamped(tmp_path: Path) -> None:
    done = run(JUDGES / "sdk_clamps.py", payload(), tmp_path)
    assert done.returncode == 0 and json.loads(done.stdout) == {"score": 1.0, "hits": [], "misses": []}


def test_what_a_judge_function_prints_goes_to_stderr_so_stdout_stays_one_object(tmp_path: Path) -> None:
    done = run(JUDGES / "sdk_prints.py", payload(), tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"score": 1.0, "hits": [], "misses": []}
    assert "checking the answer..." in done.stderr


@pytest.mark.parametrize("sample", ["agentv-2.18-code-judge-stdin-sample.json",
                                    "agentv-4.42-code-judge-stdin-sample.json"])
def test_sdk_input_is_the_same_whatever_generation_sent_it(tmp_path: Path, sample: str) -> None:
    """A judge written once sees the same attributes from AgentV 2.18, AgentV 4.42 and us."""
    ours = json.loads(json.loads(run(JUDGES / "sdk_echo.py", payload({"keywords": ["Paris", "France"]}),
                                     tmp_path).stdout)["reasoning"])
    theirs = json.loads(json.loads(run(JUDGES / "sdk_echo.py", (SPEC / sample).read_text(), tmp_path).stdout)
                        ["reasoning"])
    assert theirs == ours
    assert ours["answer"] == ours["candidate_answer"] == ours["output_text"] == ANSWER
    assert ours["criteria"] == ours["expected_outcome"] == "Names Paris as the capital of France"
    assert ours["input_roles"] == ["system", "user"] and ours["output_texts"] == [ANSWER]


def test_an_older_camel_case_payload_fills_the_current_names() -> None:
    data = parse_judge_input({"question": "q", "expectedOutcome": "be right", "candidateAnswer": "yes",
                              "inputMessages": [{"role": "user", "content": "q"}],
                              "traceSummary": {"eventCount": 2, "toolNames": ["a"],
                                               "toolCallsByName": {"a": 2},
                                               "errorCount": 0}})
    assert data.answer == "yes" and data.criteria == "be right" and data.input[0].role == "user"
    assert data.trace_summary is not None and data.trace_summary.tool_calls_by_name == {"a": 2}


def test_decorated_judge_stays_callable_when_imported() -> None:
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import keyword_judge as k; "
            "from agentv_gate.sdk import CodeJudgeInput; "
            "print(k.judge(CodeJudgeInput(answer='Paris', config={'keywords': ['Paris']})).score)")
    done = subprocess.run([sys.executable, "-c", code, str(EXAMPLES)], input="", capture_output=True,
                          text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1.0"  # imported: not run against stdin, just returned


def test_what_a_prompt_template_function_prints_stays_out_of_the_prompt(capsys: pytest.CaptureFixture[str]) -> None:
    def template(p: CodeJudgeInput) -> str:
        print("building the prompt...")
        return f"Judge: {p.answer}"

    assert run_prompt_template(template, payload()) == 0
    out = capsys.readouterr()
    assert out.out == f"Judge: {ANSWER}\n" and "building the prompt..." in out.err


def test_run_code_judge_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    async def judge(p: CodeJudgeInput) -> dict[str, Any]:
        return {"score": 0.25, "hits": [p.answer]}

    assert run_code_judge(judge, payload()) == 0
    assert json.loads(capsys.readouterr().out) == {"score": 0.25, "hits": [ANSWER], "misses": []}


def test_sdk_judge_end_to_end_through_code_judge_evaluator() -> None:
    argv = [sys.executable, str(EXAMPLES / "keyword_judge.py")]
    config = CodeJudgeConfig(name="kw", script=argv, resolved_script=argv, keywords=["Paris"],
                             case_sensitive=False)
    context = EvaluationContext(eval_case=capital_case(), candidate="PARIS, surely.", evaluator=config)
    score = score_of(CodeJudgeEvaluator(), context)
    assert score.error is None and score.score == 1.0 and score.hits == ["mentions Paris"]
    broken = CodeJudgeConfig(name="kw", script=argv, resolved_script=argv)  # no keywords configured
    failed = score_of(CodeJudgeEvaluator(), dataclasses.replace(context, evaluator=broken))
    assert failed.score == 0.0 and failed.error is not None and "exited with code 1" in failed.error
    assert any("config.keywords is empty" in m for m in failed.misses)
