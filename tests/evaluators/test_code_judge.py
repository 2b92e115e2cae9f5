"""Code judges: the stdin payload every AgentV generation understands, and judges run for real."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

import agentv_gate
from agentv_gate.evaluators.code_judge import (
    CodeJudgeEvaluator,
    judge_cwd,
    parse_judge_output,
    run_judge_script,
    script_argv,
    trimmed_stderr,
)
from agentv_gate.judging.payload import build_judge_payload
from agentv_gate.loader import load_eval_file
from agentv_gate.models import CodeJudgeConfig, EvalCase, EvaluationContext
from agentv_gate.transport.process import run_script
from tests.helpers.evaluation import score_of
from tests.helpers.files import write
from tests.helpers.processes import pid_alive, wait_for

SPEC = Path("/work/shared/spec")
SAMPLE_218 = SPEC / "agentv-2.18-code-judge-stdin-sample.json"
SAMPLE_442 = SPEC / "agentv-4.42-code-judge-stdin-sample.json"
ANSWER = "Paris is the capital of France."
JUDGES = Path(__file__).resolve().parents[1] / "judges"
PY = sys.executable


def capital_case(repo: Path) -> EvalCase:
    """The case behind both spec samples, loaded from a real eval file by the real loader."""
    write(repo / "evals/judge.py", "print('{}')\n")
    f = write(repo / "evals/capital.eval.yaml", """
        tests:
          - id: capital
            criteria: Names Paris as the capital of France
            input:
              - role: system
                content: Answer in one sentence.
              - role: user
                content: What is the capital of France?
            expected_output: Paris is the capital of France.
            assert:
              - name: keywords
                type: code_judge
                script: python3 judge.py
                config:
                  keywords: [Paris, France]
    """)
    result = load_eval_file(f, repo)
    assert result.errors == []
    return result.cases[0]


def capital_context(case: EvalCase, duration_ms: int) -> EvaluationContext:
    return EvaluationContext(eval_case=case, candidate=ANSWER, evaluator=case.evaluators[0],
                             target="echo_cli", duration_ms=duration_ms)


# 4.42 sends `output` as a string where 2.18 sends messages; we keep 2.18's list (see payload.py)
# and offer the string as `output_text`. The sample's trace metadata names a provider kind that
# an evaluation context does not know.
KNOWN_DIFFERENCES = {"4.42": {"output", "trace.metadata.provider"}, "2.18": set()}


def assert_covers(sample: Any, ours: Any, where: str, skip: set[str], gaps: list[str]) -> None:
    """Every key of `sample` exists in `ours` (recursively), with the same value unless skipped."""
    if where in skip:
        return
    if isinstance(sample, dict):
        if not isinstance(ours, dict):
            gaps.append(f"{where}: expected an object, got {ours!r}")
            return
        for key, value in sample.items():
            path = f"{where}.{key}" if where else key
            if key not in ours:
                gaps.append(f"{path}: missing")
            else:
                assert_covers(value, ours[key], path, skip, gaps)
    elif isinstance(sample, list):
        if not isinstance(ours, list) or len(ours) != len(sample):
            gaps.append(f"{where}: expected {sample!r}, got {ours!r}")
            return
        for index, (a, b) in enumerate(zip(sample, ours, strict=True)):
            assert_covers(a, b, f"{where}[{index}]", skip, gaps)
    elif sample != ours:
        gaps.append(f"{where}: expected {sample!r}, got {ours!r}")


def test_payload_carries_every_field_of_agentv_2_18s_payload(repo: Path) -> None:
    sample = json.loads(SAMPLE_218.read_text())
    case = capital_case(repo)
    payload = build_judge_payload(capital_context(case, 183), {"keywords": ["Paris", "France"]})
    gaps: list[str] = []
    assert_covers(sample, payload, "", KNOWN_DIFFERENCES["2.18"], gaps)
    assert gaps == []
    json.dumps(payload)  # the wire form must be plain JSON


def test_payload_holds_agentv_2_19s_keys_and_no_other(repo: Path) -> None:
    """A key AgentV 2.19 does not send would let a judge pass here and fail there."""
    sample = json.loads(SAMPLE_218.read_text())
    payload = build_judge_payload(capital_context(capital_case(repo), 10), None)
    assert set(payload) == set(sample) | {"candidate_answer"}  # seed 003's name for the answer
    assert set(payload["trace"]) <= {"event_count", "tool_names", "tool_calls_by_name", "error_count",
                                     "tool_durations", "llm_call_count"}
    assert payload["output"] == [{"role": "assistant", "content": ANSWER}]


def test_payload_keeps_candidate_answer_beside_answer(repo: Path) -> None:
    case = capital_case(repo)
    payload = build_judge_payload(capital_context(case, 10), {"keywords": ["Paris"]})
    assert payload["candidate_answer"] == ANSWER == payload["answer"]
    assert payload["criteria"] == "Names Paris as the capital of France"
    assert [m["role"] for m in payload["input"]] == ["system", "user"]
    assert payload["expected_output"] == [{"role": "assistant", "content": ANSWER}]
    for key in ("event_count", "tool_names", "tool_calls_by_name", "error_count"):
        assert key in payload["trace"]
    assert payload["duration_ms"] == 10


def test_payload_summarises_tool_calls_and_snake_cases_keys(repo: Path) -> None:
    from agentv_gate.models import Message

    case = capital_case(repo)
    outputs = [
        Message(role="assistant", content="", tool_calls=[{"tool": "searchWeb", "input": {"maxResults": 3}},
                                                         {"tool": "searchWeb", "input": {}},
                                                         {"tool": "Read", "input": {}, "error": "denied"}]),
        Message(role="assistant", content=ANSWER),
    ]
    context = EvaluationContext(eval_case=case, candidate=ANSWER, evaluator=case.evaluators[0],
                                output_messages=outputs, target="t")
    payload = build_judge_payload(context, {"maxLength": 5})
    summary = payload["trace"]
    assert summary["event_count"] == 3
    assert summary["tool_names"] == ["Read", "searchWeb"]
    assert summary["tool_calls_by_name"] == {"search_web": 2, "Read": 1}  # AgentV snake-cases these keys too
    assert summary["error_count"] == 1
    assert summary["llm_call_count"] == 2
    first = payload["output"][0]
    assert first["tool_calls"][0]["input"] == {"max_results": 3}  # AgentV's toSnakeCaseDeep
    assert payload["config"] == {"max_length": 5}


# ---------------------------------------------------------------- the subprocess runner


def test_runner_passes_stdin_and_captures_both_streams() -> None:
    code = "import sys; d = sys.stdin.read(); print(d.upper()); print('warn', file=sys.stderr)"
    result = run_script([PY, "-c", code], "héllo", 10, env={"PYTHONIOENCODING": "utf-8"})
    assert result.ok and result.exit_code == 0
    assert result.stdout.strip() == "HÉLLO"
    assert result.stderr.strip() == "warn"


def test_runner_never_uses_a_shell() -> None:
    result = run_script(["echo", "$HOME", "&&", "false"], "", 10)
    assert result.stdout.strip() == "$HOME && false"


def test_runner_reports_missing_and_unexecutable_commands(tmp_path: Path) -> None:
    missing = run_script(["definitely-not-a-command-xyz"], "", 5)
    assert missing.spawn_error is not None and "not found" in missing.spawn_error
    assert missing.exit_code is None and not missing.ok
    script = write(tmp_path / "judge.py", "print(1)\n")  # not executable
    denied = run_script([str(script)], "", 5)
    assert denied.spawn_error is not None and "permission denied" in denied.spawn_error
    no_dir = run_script([PY, "-c", "print(1)"], "", 5, cwd=tmp_path / "nope")
    assert no_dir.spawn_error is not None and "does not exist" in no_dir.spawn_error


def test_runner_kills_a_hanging_script_at_the_timeout() -> None:
    result = run_script([PY, str(JUDGES / "hang.py")], "{}", 0.5)
    assert result.timed_out and result.exit_code is None
    assert "timed out" in (result.failure() or "")


@pytest.mark.parametrize("mode", ["hang", "exit"])
def test_runner_kills_the_whole_process_group(tmp_path: Path, mode: str) -> None:
    pid_file = tmp_path / "grandchild.pid"
    result = run_script([PY, str(JUDGES / "forks_grandchild.py"), str(pid_file), mode], "", 1.5)
    grandchild = int(pid_file.read_text())
    try:
        assert wait_for(lambda: not pid_alive(grandchild), 5), "the grandchild holding stdout survived"
        if mode == "hang":
            assert result.timed_out
        else:  # the judge answered and exited; its stray grandchild must not keep us waiting
            assert not result.timed_out and result.exit_code == 0
            assert json.loads(result.stdout)["score"] == 1.0
    finally:
        if pid_alive(grandchild):
            os.kill(grandchild, signal.SIGKILL)


def test_runner_survives_a_script_that_never_reads_stdin() -> None:
    result = run_script([PY, str(JUDGES / "ignores_stdin.py")], "x" * 5_000_000, 10)
    assert result.ok
    assert json.loads(result.stdout)["score"] == 0.75


def test_runner_caps_captured_output_but_drains_the_rest() -> None:
    code = "import sys; sys.stdout.write('x' * 30_000_000); sys.stderr.write('e' * 3_000_000)"
    result = run_script([PY, "-c", code], "", 30, max_output_bytes=1000)
    assert result.ok, result.failure()
    assert len(result.stdout) == 1000 and result.stdout_truncated and result.stdout_bytes == 30_000_000
    assert len(result.stderr) == 1000 and result.stderr_truncated


def test_runner_decodes_invalid_utf8_without_failing() -> None:
    result = run_script([PY, "-c", "import sys; sys.stdout.buffer.write(b'ok \\xff\\xfe')"], "", 10)
    assert result.stdout.startswith("ok ") and "\ufffd" in result.stdout


# ---------------------------------------------------------------- the code_judge evaluator


def judge_context(case: EvalCase, argv: list[str], **extra: Any) -> EvaluationContext:
    config = CodeJudgeConfig(name="judge", script=argv, resolved_script=argv, **extra)
    return EvaluationContext(eval_case=case, candidate=ANSWER, evaluator=config, target="t")


def test_code_judge_from_an_eval_file_splits_the_script_and_runs_in_cwd(repo: Path) -> None:
    # not beside the eval file: the loader finds it from the repository root, and that path is run
    write(repo / "judges/kw.py", (JUDGES / "keyword_judge.py").read_text())
    f = write(repo / "evals/suite.eval.yaml", """
        tests:
          - id: capital
            criteria: Names Paris
            input: What is the capital of France?
            assert:
              - name: kw
                type: code_judge
                script: python3 judges/kw.py --flag "two words"
                keywords: [Paris, Berlin]
    """)
    [case] = load_eval_file(f, repo).cases
    context = EvaluationContext(eval_case=case, candidate=ANSWER, evaluator=case.evaluators[0])
    score = score_of(CodeJudgeEvaluator(), context)
    assert score.error is None
    assert score.score == 0.5
    assert score.hits == ["mentions Paris"] and score.misses == ["does not mention Berlin"]
    seen = json.loads(score.reasoning or "{}")
    assert seen["argv"] == ["--flag", "two words"]  # shell-split, quotes respected, no shell
    assert Path(seen["cwd"]) == (repo / "evals").resolve()  # default cwd: the eval file's folder
    assert seen["question"] == "What is the capital of France?" and seen["criteria"] == "Names Paris"


def test_code_judge_in_node(repo: Path) -> None:
    case = capital_case(repo)
    context = judge_context(case, ["node", str(JUDGES / "keyword_judge.js")], config={"keywords": ["Paris"]})
    score = score_of(CodeJudgeEvaluator(), context)
    assert score.error is None, score.misses
    assert score.score == 1.0 and score.hits == ["mentions Paris"]
    assert score.reasoning == "node saw 2 input messages"


@pytest.mark.parametrize(("script", "reason"), [
    ("garbage.py", "not JSON"),
    ("exit3.py", "exited with code 3"),
    ("score7.py", "score of 7, outside 0..1"),
])
def test_broken_judges_score_zero_with_the_reason(repo: Path, script: str, reason: str) -> None:
    case = capital_case(repo)
    score = score_of(CodeJudgeEvaluator(), judge_context(case, [PY, str(JUDGES / script)]))
    assert score.score == 0.0
    assert score.error is not None and reason in score.error
    assert reason in score.misses[0]
    if script == "exit3.py":
        assert "stderr: Traceback: judge exploded while scoring" in score.misses


def test_hanging_judge_times_out_per_evaluator(repo: Path) -> None:
    case = capital_case(repo)
    evaluator = CodeJudgeEvaluator(default_timeout_seconds=300)
    score = score_of(evaluator, judge_context(case, [PY, str(JUDGES / "hang.py")], timeout_seconds=0.5))
    assert score.score == 0.0 and score.error is not None and "timed out" in score.error


def test_default_timeout_applies_without_a_per_evaluator_one(repo: Path) -> None:
    case = capital_case(repo)
    score = score_of(CodeJudgeEvaluator(default_timeout_seconds=0.5),
                     judge_context(case, [PY, str(JUDGES / "hang.py")]))
    assert score.error is not None and "timed out after 0.5s" in score.error


def test_missing_command_is_an_error_result_not_an_exception(repo: Path) -> None:
    case = capital_case(repo)
    score = score_of(CodeJudgeEvaluator(), judge_context(case, ["no-such-judge-binary"]))
    assert score.score == 0.0 and score.error is not None and "not found" in score.error


def test_empty_stdout_and_a_log_line_before_json(repo: Path) -> None:
    case = capital_case(repo)
    empty = score_of(CodeJudgeEvaluator(), judge_context(case, [PY, "-c", "pass"]))
    assert empty.error is not None and "printed nothing" in empty.error
    logged = score_of(CodeJudgeEvaluator(), judge_context(case, [PY, str(JUDGES / "logs_then_json.py")]))
    assert logged.score == 0.0 and logged.error is not None and "write logs to stderr" in logged.error


def test_a_judge_printing_a_byte_order_mark_is_scored_as_agentv_scores_it(repo: Path) -> None:
    """Windows tools and `encoding="utf-8-sig"` start stdout with U+FEFF; JavaScript's trim() drops it."""
    case = capital_case(repo)
    code = "import sys; sys.stdout.buffer.write('\\ufeff{\"score\": 0.75, \"hits\": [\"h\"]}\\r\\n'.encode())"
    score = score_of(CodeJudgeEvaluator(), judge_context(case, [PY, "-c", code]))
    assert (score.error, score.score, score.hits) == (None, 0.75, ["h"])


def test_a_judge_s_assertions_and_details_are_read_as_agentv_reads_them(repo: Path) -> None:
    case = capital_case(repo)
    code = ("import json; print(json.dumps({'score': 1, 'hits': ['h'], 'details': {'checked': 2}, 'assertions': "
            "[{'text': 'names Paris', 'passed': True}, {'text': 'one sentence', 'passed': False, 'evidence': 'two'}]}))")
    score = score_of(CodeJudgeEvaluator(), judge_context(case, [PY, "-c", code]))
    assert score.error is None and score.score == 1.0
    # beside 2.x hits, AgentV 2.19 reads no assertions: joining both listed an SDK judge's every hit twice
    assert score.hits == ["h"] and score.misses == []
    assert score.details == {"checked": 2}
    only_4x = code.replace("'hits': ['h'], ", "")  # a judge written for AgentV 4: its assertions are its hits
    score = score_of(CodeJudgeEvaluator(), judge_context(case, [PY, "-c", only_4x]))
    assert score.hits == ["names Paris"] and score.misses == ["one sentence: two"]
    contradicts = "import json; print(json.dumps({'score': 1, 'verdict': 'fail'}))"
    refused = score_of(CodeJudgeEvaluator(), judge_context(case, [PY, "-c", contradicts]))
    assert refused.score == 0.0 and refused.error is not None and "verdict 'fail'" in refused.error


def test_judge_output_keeps_only_non_empty_string_hits(repo: Path) -> None:
    case = capital_case(repo)
    code = "import json; print(json.dumps({'score': 1, 'hits': ['a', '', 3, None, 'b'], 'reasoning': 5}))"
    score = score_of(CodeJudgeEvaluator(), judge_context(case, [PY, "-c", code]))
    assert score.score == 1.0 and score.hits == ["a", "b"] and score.reasoning is None
    assert score.evaluator_raw_request is not None and score.evaluator_raw_request["exit_code"] == 0


def test_trace_reported_by_the_run_wins_over_derived_counts(repo: Path) -> None:
    case = capital_case(repo)
    context = capital_context(case, 5)
    context.trace = {"llm_call_count": 4, "error_count": 2, "tool_names": ["x"], "provider_extra": True}
    payload = build_judge_payload(context, None)
    assert payload["trace"]["llm_call_count"] == 4 and payload["trace"]["error_count"] == 2
    assert "provider_extra" not in payload["trace"]  # AgentV 2.19's trace is its summary, nothing else


def test_a_run_gives_judges_the_trace_summary_derived_from_the_answer_s_messages(repo: Path) -> None:
    """Through the orchestrator, not just the payload builder: the summary a judge reads counts the
    answer's tool calls, their errors and its assistant turns, with tool names sorted, as AgentV's does."""
    from agentv_gate.evaluators.registry import build_evaluator_registry
    from agentv_gate.models import Message, TargetResponse
    from agentv_gate.orchestrator import Orchestrator, RunSettings
    from agentv_gate.targets.base import ProviderRequest

    class ToolUsingAgent:
        name, kind = "agent", "mock"

        def invoke(self, request: ProviderRequest) -> TargetResponse:
            calls = [{"tool": "searchWeb", "input": {}}, {"tool": "Read", "input": {}, "error": "denied"}]
            return TargetResponse(text=ANSWER, output_messages=[Message(role="assistant", content="", tool_calls=calls),
                                                                 Message(role="assistant", content=ANSWER)])

    class Providers:
        def target_for(self, case: EvalCase) -> ToolUsingAgent:
            return ToolUsingAgent()

        def target_name(self, case: EvalCase) -> str:
            return ToolUsingAgent.name

    write(repo / "evals/echo.py", """
        import json, sys
        summary = json.load(sys.stdin)["trace"]
        print(json.dumps({"score": 1.0, "reasoning": json.dumps(summary, sort_keys=True)}))
        """)
    f = write(repo / "evals/trace.eval.yaml", """
        tests:
          - id: tools
            criteria: c
            input: q
            assert: [{name: echo, type: code_judge, script: [python3, echo.py]}]
        """)
    [case] = load_eval_file(f, repo).cases
    registry = build_evaluator_registry(None, lambda context: None)
    [result] = Orchestrator(Providers(), registry, RunSettings()).run([case])
    summary = json.loads(result.reasoning.split(": ", 1)[1])
    assert summary["tool_names"] == ["Read", "searchWeb"]
    assert (summary["event_count"], summary["error_count"], summary["llm_call_count"]) == (2, 1, 2)


def test_a_python_judge_runs_with_the_users_python3_and_finds_the_sdk(repo: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """`python3 judge.py` is the python3 first on the user's PATH (so it can import the team's
    packages), never agentv-gate's own interpreter; the SDK comes from a folder on PYTHONPATH that
    pulls in none of agentv-gate's dependencies."""
    team_bin = tmp_path / "team-bin"
    team_bin.mkdir()
    (team_bin / "python3").symlink_to(PY)
    monkeypatch.setenv("PATH", f"{team_bin}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "team-lib"))
    write(repo / "judge.py", """
        import json, os, sys
        import agentv_gate
        from agentv_gate.sdk import define_code_judge
        seen = {"python": sys.executable, "pydantic_loaded": "pydantic" in sys.modules,
                "package": agentv_gate.__path__[0], "pythonpath": os.environ["PYTHONPATH"]}
        define_code_judge(lambda payload: {"score": 1, "reasoning": json.dumps(seen)})
    """)
    score = score_of(CodeJudgeEvaluator(), judge_context(capital_case(repo), ["python3", str(repo / "judge.py")]))
    assert score.error is None, score.misses
    seen = json.loads(score.reasoning or "{}")
    assert seen["python"] == str(team_bin / "python3")
    assert seen["pydantic_loaded"] is False
    assert Path(seen["package"]) == Path(agentv_gate.__file__).parent
    sdk_folder, *rest = seen["pythonpath"].split(os.pathsep)
    assert sorted(p.name for p in Path(sdk_folder).iterdir()) == ["agentv_gate"]  # nothing else to shadow
    assert rest == [str(tmp_path / "team-lib")]  # the user's own PYTHONPATH is kept, after it


# ---------------------------------------------------------------- what a judge prints, read strictly


ONE_OBJECT = " (stdout must hold one JSON object and nothing else, as AgentV reads it: write logs to stderr)"
VERDICT_RULE = (": the score decides (pass >= 0.8, borderline >= 0.6, else fail; AgentV 2.19 ignores a code "
                "judge's verdict and reports a composite aggregator's beside a score that says otherwise), so "
                "print a verdict that agrees, or none")
ASSERTIONS_RULE = " (expected a list of {\"text\": ..., \"passed\": true|false, \"evidence\"?: ...})"


@pytest.mark.parametrize(("stdout", "problem"), [
    ("  \n", "printed nothing on stdout (expected a JSON object with a score)"),
    ("[1]", "printed a JSON list, expected an object with a score"),
    ('{"hits": ["a"]}', "printed JSON without a 'score' field"),
    ('{"score": true}', "printed a score that is not a number: True"),  # JSON true is no 1
    ('{"score": "1"}', "printed a score that is not a number: '1'"),
    ('{"score": 1e999}', "printed a score that is not a number: inf"),
    # an integer too large for a float is JavaScript's Infinity, not a crash of the gate
    ('{"score": 1' + "0" * 400 + "}", "printed a score that is not a number: inf"),
    ('{"score": -0.01}', "printed a score of -0.01, outside 0..1"),
    ('{"score": 1.01}', "printed a score of 1.01, outside 0..1"),
    ("loading...\n[1]", "printed something that is not JSON (Expecting value: line 1 column 1 (char 0)): "
                        "'loading...\\n[1]'"),  # after a log line only an object is taken
    ("one\ntwo", "printed something that is not JSON (Expecting value: line 1 column 1 (char 0)): 'one\\ntwo'"),
    ("x" * 200, f"printed something that is not JSON (Expecting value: line 1 column 1 (char 0)): {'x' * 200!r}"),
    ("x" * 201, "printed something that is not JSON (Expecting value: line 1 column 1 (char 0)): "
                f"{'x' * 200 + '...'!r}"),
    # AgentV 2.19 parses the whole of stdout as one JSON value and scores anything else 0: a log line
    # before the result, or a second object, is an error, never the last line's pass
    ('log\n{"score": 1}', "printed something that is not JSON (Expecting value: line 1 column 1 (char 0)): "
                          "'log\\n{\"score\": 1}'" + ONE_OBJECT),
    ('{"score": 0}\n{"score": 1}', "printed something that is not JSON (Extra data: line 2 column 1 (char 13)): "
                                  "'{\"score\": 0}\\n{\"score\": 1}'" + ONE_OBJECT),
    # `verdict` is not read by AgentV 2.19 (the score decides), so one that disagrees is an error
    ('{"score": 1, "verdict": "fail"}', "printed verdict 'fail' beside a score of 1, which AgentV labels 'pass'"
                                        + VERDICT_RULE),
    ('{"score": 0.5, "verdict": "pass"}', "printed verdict 'pass' beside a score of 0.5, which AgentV labels "
                                          "'fail'" + VERDICT_RULE),
    ('{"score": 0.7, "verdict": "skip"}', "printed verdict 'skip' beside a score of 0.7, which AgentV labels "
                                          "'borderline'" + VERDICT_RULE),
    ('{"score": 1, "verdict": true}', "printed verdict true beside a score of 1, which AgentV labels 'pass'"
                                      + VERDICT_RULE),
    ('{"score": 1, "verdict": "pass"}', None), ('{"score": 0.6, "verdict": "Borderline"}', None),
    ('{"score": 0, "verdict": null}', None),
    # AgentV's `assertions: [{text, passed, evidence?}]`
    ('{"score": 1, "assertions": "all good"}', "printed 'assertions' that is not a list: str" + ASSERTIONS_RULE),
    ('{"score": 1, "assertions": [{"text": "a", "passed": "no"}]}',
     "printed assertions[0] without a true/false 'passed'" + ASSERTIONS_RULE),
    ('{"score": 1, "assertions": [{"text": "a", "passed": true}, {"passed": false}]}',
     "printed assertions[1] without a 'text' string" + ASSERTIONS_RULE),
    ('{"score": 1, "assertions": [{"text": "a", "passed": true}, "b"]}',
     "printed assertions[1] without a 'text' string" + ASSERTIONS_RULE),
    ('{"score": 0.5, "assertions": [{"text": "a", "passed": true}, {"text": "b", "passed": false}]}', None),
    ('{"score": 0}', None), ('{"score": 1}', None), ('{"score": 0.0}', None), ('{"score": 1.0}', None),
    ('\n  {"score": 0.25}  \n', None),
    # trimmed as AgentV's JavaScript trims: a byte-order mark (a judge writing UTF-8 with BOM) and
    # Unicode spaces go; U+001C and U+0085, which Python's strip() also takes, do not
    ('\ufeff{"score": 0.25}\r\n', None), ('\u00a0\u3000{"score": 0.25}\u2028', None),
    ('\x1c{"score": 1}', "printed something that is not JSON (Expecting value: line 1 column 1 (char 0)): "
                         "'\\x1c{\"score\": 1}'" + ONE_OBJECT),
    ('{"score": 1}\x85', "printed something that is not JSON (Extra data: line 1 column 13 (char 12)): "
                         "'{\"score\": 1}\\x85'" + ONE_OBJECT),
], ids=lambda value: repr(value)[:30])
def test_judge_output_is_a_score_in_0_to_1_or_says_why_not(stdout: str, problem: str | None) -> None:
    data, why = parse_judge_output(stdout)
    assert why == problem
    assert (data is None) == (problem is not None)


def test_a_judge_s_stderr_keeps_its_last_2000_characters() -> None:
    assert trimmed_stderr(" " + "a" * 2000 + "\n") == "a" * 2000
    assert trimmed_stderr("b" + "a" * 2000) == "...(truncated, last 2000 chars)\n" + "a" * 2000


def test_a_script_built_in_code_is_split_and_its_files_found_in_cwd(repo: Path) -> None:
    """Configs built without the loader: `cwd` is relative to the config's eval file, else the case's;
    the script is shell-split, and a token naming a file in `cwd` becomes its absolute path unless it
    looks like an option."""
    context = EvaluationContext(eval_case=capital_case(repo), candidate=ANSWER, evaluator=CodeJudgeConfig(
        name="j", script="x"))
    other = repo / "other/x.eval.yaml"
    assert judge_cwd(CodeJudgeConfig(name="j", script="x"), context) == (repo / "evals").resolve()
    assert judge_cwd(CodeJudgeConfig(name="j", script="x", cwd="sub"), context) == (repo / "evals/sub").resolve()
    assert judge_cwd(CodeJudgeConfig(name="j", script="x", cwd="..", source_file=other), context) == repo.resolve()
    folder = repo / "judges"
    write(folder / "judge.py", "")
    write(folder / "-v", "")
    config = CodeJudgeConfig(name="j", script='python3 judge.py -v "two words"')
    assert script_argv(config, folder) == ["python3", str((folder / "judge.py").resolve()), "-v", "two words"]
    listed = CodeJudgeConfig(name="j", script=["python3", "judge.py"])
    assert script_argv(listed, folder) == ["python3", str((folder / "judge.py").resolve())]


def test_a_script_that_cannot_be_split_is_the_case_s_error(repo: Path) -> None:
    config = CodeJudgeConfig(name="j", script='python3 "judge.py')
    context = EvaluationContext(eval_case=capital_case(repo), candidate=ANSWER, evaluator=config)
    score = score_of(CodeJudgeEvaluator(), context)
    assert (score.score, score.error) == (0.0, "script cannot be split into arguments: No closing quotation")


def test_a_failing_judge_is_explained_by_its_own_misses(repo: Path) -> None:
    """Exit 1 with its own verdict on stdout and nothing on stderr: the reason names the judge and
    its program, the judge's misses follow it, no empty stderr is recorded. The payload it read
    came as AgentV writes it: indented by two spaces, non-ASCII text as it is."""
    code = ("import json, sys; text = sys.stdin.buffer.read().decode(); "
            "note = next(line.strip() for line in text.splitlines() if 'note' in line); "
            "print(json.dumps({'score': 0, 'misses': ['rubric file missing', text[:16], note]})); sys.exit(1)")
    context = judge_context(capital_case(repo), [PY, "-c", code], config={"note": "café"})
    score = score_of(CodeJudgeEvaluator(), context)
    reason = f"judge 'judge' ({Path(PY).name}) exited with code 1"
    assert (score.score, score.error) == (0.0, reason)
    assert score.misses == [f"Code evaluator failed: {reason}", "rubric file missing", '{\n  "question": ',
                            '"note": "café"']
    assert score.evaluator_raw_request is not None and "stderr" not in score.evaluator_raw_request


@pytest.mark.parametrize("extra", [0, 1])
def test_a_judge_may_print_8_mib_and_not_a_byte_more(repo: Path, tmp_path: Path, extra: int) -> None:
    """Past the cap the end of the output is lost, so even a valid score at its start is an error,
    for code judges and for the custom assertions and aggregators that share the runner."""
    judge = write(tmp_path / "pad.py", """
        import sys
        sys.stdin.read()
        sys.stdout.write('{"score": 1}'.ljust(int(sys.argv[1])))
    """)
    argv = [PY, str(judge), str(8 * 1024 * 1024 + extra)]
    by_evaluator = score_of(CodeJudgeEvaluator(), judge_context(capital_case(repo), argv))
    by_runner = run_judge_script(argv, "{}", 60, tmp_path, "judge 'pad' (python)", {})
    for score in (by_evaluator, by_runner):
        if extra:
            assert score.score == 0.0 and score.error is not None
            assert "printed more than 8388608 bytes on stdout (the cap; it printed 8388609)" in score.error
            assert "stdout was cut at 8388608 of 8388609 bytes" in score.misses
        else:
            assert (score.score, score.error) == (1.0, None)


def test_a_judge_reads_tool_durations_from_the_times_an_agent_gave_its_calls(tmp_path: Path) -> None:
    """AgentV's computeTraceSummary: a call without `duration_ms` but with `start_time` and `end_time` lasted
    end - start, so a judge rejecting a slow tool sees the 9 s search; reading `duration_ms` alone left it out
    and the judge passed an answer AgentV fails."""
    from tests.helpers.agents import scripted_agent
    from tests.helpers.cli import run_cli
    from tests.helpers.reports import RESULTS, rows_by_id

    calls = [{"tool": "search", "input": {}, "start_time": "2026-01-05T10:00:00.000Z",
              "end_time": "2026-01-05T10:00:09.250Z"},
             {"tool": "search", "input": {}, "duration_ms": 40},
             {"tool": "read", "input": {}, "start_time": "2026-01-05T10:00:10Z"}]
    project = scripted_agent(tmp_path / "p", {"q": {"output": [
        {"role": "assistant", "content": "", "tool_calls": calls}, {"role": "assistant", "content": "Done."}]}})
    write(project / "evals/slow.py", """
        import json, sys
        durations = json.load(sys.stdin)["trace"].get("tool_durations") or {}
        slow = [ms for values in durations.values() for ms in values if ms > 5000]
        print(json.dumps({"score": 0 if slow else 1, "reasoning": json.dumps(durations, sort_keys=True)}))
        """)
    write(project / "evals/slow.eval.yaml", """
        tests:
          - id: slow
            criteria: c
            input: q
            assert: [{name: slow, type: code_judge, script: [python3, slow.py]}]
        """)
    proc = run_cli("run", "evals", cwd=project)
    row = rows_by_id(project / RESULTS)["slow"]
    assert json.loads(row["reasoning"].split(": ", 1)[1]) == {"search": [9250, 40]}
    assert proc.returncode == 1 and row["score"] == 0


def test_a_judge_gets_the_start_and_end_times_on_the_agent_s_messages_and_calls(tmp_path: Path) -> None:
    """AgentV's computeTraceSummary takes `start_time` / `end_time` from the earliest start and the latest end
    on the output messages and their tool calls (a time the target reports wins), and sends them to judges as
    JavaScript's toISOString writes them; a judge timing the run from them read null and passed."""
    from tests.helpers.agents import scripted_agent
    from tests.helpers.cli import run_cli
    from tests.helpers.reports import RESULTS, rows_by_id

    output = [{"role": "assistant", "content": "", "start_time": "2026-01-05T10:00:01Z",
               "tool_calls": [{"tool": "search", "input": {}, "start_time": "2026-01-05T10:00:00.5Z",
                               "end_time": "2026-01-05T10:00:30Z"}]},
              {"role": "assistant", "content": "Done.", "end_time": "2026-01-05T10:01:00.250+00:00"}]
    project = scripted_agent(tmp_path / "p", {"q": {"output": output}})
    write(project / "evals/timed.py", """
        import json, sys
        payload = json.load(sys.stdin)
        times = {k: payload[k] for k in ("start_time", "end_time")}
        print(json.dumps({"score": 1, "reasoning": json.dumps(times, sort_keys=True)}))
        """)
    write(project / "evals/timed.eval.yaml", """
        tests:
          - id: timed
            criteria: c
            input: q
            assert: [{name: timed, type: code_judge, script: [python3, timed.py]}]
        """)
    run_cli("run", "evals", cwd=project)
    row = rows_by_id(project / RESULTS)["timed"]
    assert json.loads(row["reasoning"].split(": ", 1)[1]) == {
        "start_time": "2026-01-05T10:00:00.500Z", "end_time": "2026-01-05T10:01:00.250Z"}


def test_a_2x_judge_reading_keys_agentv_2_19_does_not_send_finds_nothing_and_fails(tmp_path: Path) -> None:
    """A 2.x judge gets only what AgentV 2.19 sends: were `expected_outcome`, `input_messages`,
    `expected_messages`, `output_messages` or `trace_summary` sent too, a judge reading them would pass here
    and fail under AgentV 2.19, which sends none."""
    from tests.helpers.agents import scripted_agent
    from tests.helpers.cli import run_cli
    from tests.helpers.reports import RESULTS, rows_by_id

    project = scripted_agent(tmp_path / "p", {"q": {"output": [{"role": "assistant", "content": "Paris."}]}})
    write(project / "evals/legacy.py", """
        import json, sys
        payload = json.load(sys.stdin)
        keys = ("expected_outcome", "input_messages", "expected_messages", "output_messages", "trace_summary")
        found = [k for k in keys if payload.get(k)]
        print(json.dumps({"score": len(found) / len(keys), "hits": found}))
        """)
    write(project / "evals/legacy.eval.yaml", """
        tests:
          - id: legacy
            criteria: names Paris
            input: q
            expected_output: Paris.
            assert: [{name: legacy, type: code_judge, script: [python3, legacy.py]}]
        """)
    proc = run_cli("run", "evals", cwd=project)
    row = rows_by_id(project / RESULTS)["legacy"]
    assert row["score"] == 0 and row["verdict"] == "fail" and proc.returncode == 1


def test_a_reference_written_as_content_segments_reaches_judges_as_agentv_s_json(tmp_path: Path) -> None:
    """AgentV's loader: the last expected message's content, when not text, is the reference answer as
    `JSON.stringify(content, null, 2)` of its resolved segments (a file as `{type, path, text, resolvedPath}`).
    Its text alone made `reference_answer in answer` true here, a pass AgentV's judge never gives."""
    from tests.helpers.cli import run_cli
    from tests.helpers.files import make_repo
    from tests.helpers.reports import RESULTS, rows_by_id

    project = make_repo(tmp_path / "p", "targets:\n  - name: default\n    provider: mock\n    response: ok Paris\n")
    write(project / "evals/notes.md", "Seine\r\n")
    write(project / "evals/ref.py", """
        import json, sys
        payload = json.load(sys.stdin)
        reference = payload["reference_answer"]
        print(json.dumps({"score": 1 if reference in payload["answer"] else 0, "reasoning": json.dumps(reference)}))
        """)
    write(project / "evals/ref.eval.yaml", """
        tests:
          - id: text-segment
            criteria: c
            input: q
            expected_output: [{role: assistant, content: [{type: text, value: Paris}]}]
            assert: [{name: ref, type: code_judge, script: [python3, ref.py]}]
          - id: file-segment
            criteria: c
            input: q
            expected_output: [{role: assistant, content: [{type: file, value: ./notes.md}, {type: text, value: é}]}]
            assert: [{name: ref, type: code_judge, script: [python3, ref.py]}]
        """)
    proc = run_cli("run", "evals", cwd=project)
    rows = rows_by_id(project / RESULTS)
    reference = {key: json.loads(row["reasoning"].split(": ", 1)[1]) for key, row in rows.items()}
    assert reference["text-segment"] == '[\n  {\n    "type": "text",\n    "value": "Paris"\n  }\n]'
    notes = str((project / "evals/notes.md").resolve())
    assert json.loads(reference["file-segment"]) == [
        {"type": "file", "path": "evals/notes.md", "text": "Seine\n", "resolvedPath": notes}, {"type": "text", "value": "é"}]
    assert '"value": "é"' in reference["file-segment"]  # not \\u00e9: JSON.stringify leaves it as it is
    assert proc.returncode == 1 and rows["text-segment"]["score"] == 0


def test_tool_names_keying_the_summary_are_snake_cased_as_agentv_sends_them(tmp_path: Path) -> None:
    """AgentV's toSnakeCaseDeep converts every key, tool names keying `tool_calls_by_name`, `tool_calls` and
    `tool_durations` included (a capitalised name, `Read`, stays): a judge written against AgentV looks for
    `delete_file` there; sending `deleteFile` hid the forbidden call from it and it passed."""
    from tests.helpers.agents import scripted_agent
    from tests.helpers.cli import run_cli
    from tests.helpers.reports import RESULTS, rows_by_id

    calls = [{"tool": "deleteFile", "input": {}, "duration_ms": 5}, {"tool": "Read", "input": {}}]
    project = scripted_agent(tmp_path / "p", {"q": {"output": [
        {"role": "assistant", "content": "", "tool_calls": calls}, {"role": "assistant", "content": "Done."}]}})
    write(project / "evals/forbid.py", """
        import json, sys
        payload = json.load(sys.stdin)
        keys = {where + "." + name: sorted(payload[where].get(name) or {}) for where in ("trace",)
                for name in ("tool_calls_by_name", "tool_durations")}
        bad = "delete_file" in payload["trace"]["tool_calls_by_name"]
        print(json.dumps({"score": 0 if bad else 1, "reasoning": json.dumps(keys, sort_keys=True)}))
        """)
    write(project / "evals/forbid.eval.yaml", """
        tests:
          - id: forbid
            criteria: c
            input: q
            assert: [{name: forbid, type: code_judge, script: [python3, forbid.py]}]
        """)
    proc = run_cli("run", "evals", cwd=project)
    row = rows_by_id(project / RESULTS)["forbid"]
    keys = json.loads(row["reasoning"].split(": ", 1)[1])
    assert keys == {f"{where}.{name}": ["Read", "delete_file"] if name != "tool_durations" else ["delete_file"]
                    for where in ("trace",)
                    for name in ("tool_calls_by_name", "tool_durations")}
    assert proc.returncode == 1 and row["score"] == 0
