"""Code judges: the stdin payload every AgentV generation understands, and judges run for real."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from agentv_gate.evaluators.base import EvaluationContext
from agentv_gate.judging.payload import build_judge_payload
from agentv_gate.loader import load_eval_file
from agentv_gate.models import EvalCase

SPEC = Path("/work/shared/spec")
SAMPLE_218 = SPEC / "agentv-2.18-code-judge-stdin-sample.json"
SAMPLE_442 = SPEC / "agentv-4.42-code-judge-stdin-sample.json"
ANSWER = "Paris is the capital of France."


def write(path: Path, text: str, executable: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    if executable:
        path.chmod(0o755)
    return path


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    return tmp_path


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
            assertions:
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


@pytest.mark.parametrize(("generation", "sample_file", "duration"), [("2.18", SAMPLE_218, 183),
                                                                      ("4.42", SAMPLE_442, 213)])
def test_payload_carries_every_field_of_each_agentv_generation(
    repo: Path, generation: str, sample_file: Path, duration: int
) -> None:
    sample = json.loads(sample_file.read_text())
    case = capital_case(repo)
    payload = build_judge_payload(capital_context(case, duration), {"keywords": ["Paris", "France"]})
    gaps: list[str] = []
    assert_covers(sample, payload, "", KNOWN_DIFFERENCES[generation], gaps)
    assert gaps == []
    json.dumps(payload)  # the wire form must be plain JSON


def test_payload_conflicts_resolved_towards_2_18_with_text_alongside(repo: Path) -> None:
    case = capital_case(repo)
    payload = build_judge_payload(capital_context(case, 10), None)
    assert payload["output"] == [{"role": "assistant", "content": ANSWER}]
    assert payload["output_text"] == json.loads(SAMPLE_442.read_text())["output"]
    assert payload["trace"]["metadata"]["eval_case_id"] == "capital"


def test_payload_keeps_seed_003_legacy_names(repo: Path) -> None:
    case = capital_case(repo)
    payload = build_judge_payload(capital_context(case, 10), {"keywords": ["Paris"]})
    assert payload["expected_outcome"] == "Names Paris as the capital of France"
    assert payload["candidate_answer"] == ANSWER
    assert payload["reference_answer"] == ANSWER
    assert [m["role"] for m in payload["input_messages"]] == ["system", "user"]
    assert payload["expected_messages"] == [{"role": "assistant", "content": ANSWER}]
    assert payload["output_messages"] == [{"role": "assistant", "content": ANSWER}]
    summary = payload["trace_summary"]
    for key in ("event_count", "tool_names", "tool_calls_by_name", "error_count"):
        assert key in summary
    assert summary["duration_ms"] == 10


def test_payload_summarises_tool_calls_and_snake_cases_keys(repo: Path) -> None:
    from agentv_gate.models import Message

    case = capital_case(repo)
    outputs = [
        Message(role="assistant", content="", toolCalls=[{"tool": "searchWeb", "input": {"maxResults": 3}},
                                                         {"tool": "searchWeb", "input": {}},
                                                         {"tool": "Read", "input": {}, "error": "denied"}]),
        Message(role="assistant", content=ANSWER),
    ]
    context = EvaluationContext(eval_case=case, candidate=ANSWER, evaluator=case.evaluators[0],
                                output_messages=outputs, target="t")
    payload = build_judge_payload(context, {"maxLength": 5})
    summary = payload["trace_summary"]
    assert summary["event_count"] == 3
    assert summary["tool_names"] == ["Read", "searchWeb"]
    assert summary["tool_calls_by_name"] == {"searchWeb": 2, "Read": 1}  # tool names are data: kept
    assert summary["error_count"] == 1
    assert summary["llm_call_count"] == 2
    first = payload["output_messages"][0]
    assert first["tool_calls"][0]["input"] == {"max_results": 3}  # AgentV's toSnakeCaseDeep
    assert payload["config"] == {"max_length": 5}
    kinds = [e["type"] for e in payload["trace"]["events"]]
    assert kinds.count("tool_call") == 3 and kinds[-1] == "final_response"
    assert payload["trace"]["events"][-1]["parent_event_id"] == "message-3"
