"""Judge prompts: AgentV 2.19's default template, {{variable}} text and files, executable templates."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from agentv_gate.judging.templates import (
    DEFAULT_EVALUATOR_TEMPLATE,
    JUDGE_SYSTEM_PROMPT,
    PromptTemplateError,
    render_template,
    resolve_prompt,
    template_variables,
)
from agentv_gate.models import EvalCase, EvaluationContext, LlmJudgeConfig, Message, PromptScriptConfig


def make_context(
    tmp_path: Path,
    evaluator: LlmJudgeConfig | None = None,
    candidate: str = "  Paris.  ",
    output_messages: list[Message] | None = None,
) -> EvaluationContext:
    case = EvalCase(
        id="capital",
        source_file=tmp_path / "suite.eval.yaml",
        suite="suite.eval.yaml",
        question="What is the capital of France?",
        input_messages=[Message(role="user", content="What is the capital of France?")],
        expected_outcome=" Names Paris as the capital. ",
        expected_messages=[Message(role="assistant", content="Paris")],
        reference_answer="Paris",
        input_files=["docs/france.md"],
    )
    return EvaluationContext(
        eval_case=case,
        candidate=candidate,
        evaluator=evaluator or LlmJudgeConfig(name="j"),
        output_messages=output_messages or [],
        target="default",
    )


def test_variables_cover_both_generations(tmp_path: Path) -> None:
    v = template_variables(make_context(tmp_path), {"rubric": "be exact"})
    assert v["question"] == "What is the capital of France?"
    assert v["expected_outcome"] == v["criteria"] == "Names Paris as the capital."
    assert v["candidate_answer"] == v["answer"] == "Paris."
    assert v["reference_answer"] == "Paris"
    assert json.loads(v["input_messages"]) == [{"role": "user", "content": "What is the capital of France?"}]
    # AgentV 2.19's {{input}}: the input segments, as its llm-judge builds them
    assert json.loads(v["input"]) == [{"type": "text", "value": "What is the capital of France?"}]
    assert json.loads(v["output_messages"]) == json.loads(v["output"]) == [{"role": "assistant", "content": "  Paris.  "}]
    assert json.loads(v["expected_messages"]) == json.loads(v["expected_output"]) == [{"role": "assistant", "content": "Paris"}]
    assert json.loads(v["input_files"]) == ["docs/france.md"]
    assert json.loads(v["config"]) == {"rubric": "be exact"}


def test_output_messages_from_the_target_are_used(tmp_path: Path) -> None:
    outputs = [
        Message(role="assistant", content="Let me check.", tool_calls=[{"tool": "search"}]),
        Message(role="assistant", content="Paris."),
    ]
    v = template_variables(make_context(tmp_path, output_messages=outputs))
    assert json.loads(v["output_messages"])[0]["tool_calls"] == [{"tool": "search"}]


def test_render_is_single_pass_and_keeps_unknown_names() -> None:
    rendered = render_template(
        "Q: {{ question }} / A: {{answer}} / {{unknown_thing}} / {{question}}", {"question": "{{answer}}", "answer": "42"}
    )
    assert rendered == "Q: {{answer}} / A: 42 / {{unknown_thing}} / {{answer}}"


def test_default_template_is_agentv_2_19_s(tmp_path: Path) -> None:
    prompt = resolve_prompt(make_context(tmp_path), LlmJudgeConfig(name="j"))
    assert prompt.source == "default"
    assert prompt.text.startswith("You are an expert evaluator. Your goal is to grade the answer based on how well "
                                  "it achieves the criteria")
    assert "[[ ## criteria ## ]]\nNames Paris as the capital.\n\n[[ ## question ## ]]\n" in prompt.text
    assert prompt.text.endswith("[[ ## answer ## ]]\nParis.")
    assert "{{" not in prompt.text
    assert DEFAULT_EVALUATOR_TEMPLATE.count("{{") == 4
    assert '"score": <number between 0.0 and 1.0>' in JUDGE_SYSTEM_PROMPT


def test_inline_prompt(tmp_path: Path) -> None:
    config = LlmJudgeConfig(name="j", prompt="Grade {{answer}} against {{criteria}}. Ref: {{reference_answer}}")
    prompt = resolve_prompt(make_context(tmp_path, config), config)
    assert (prompt.source, prompt.text) == ("inline", "Grade Paris. against Names Paris as the capital.. Ref: Paris")


def test_prompt_file_resolved_by_loader_and_by_path(tmp_path: Path) -> None:
    (tmp_path / "judge.md").write_text("# Rubric\nQuestion: {{question}}\nAnswer: {{candidate_answer}}\n", encoding="utf-8")
    loaded = LlmJudgeConfig(
        name="j",
        prompt="judge.md",
        resolved_prompt_text=(tmp_path / "judge.md").read_text(),
        resolved_prompt_path=tmp_path / "judge.md",
    )
    prompt = resolve_prompt(make_context(tmp_path, loaded), loaded)
    assert prompt.source == "file" and prompt.details == {"file": str(tmp_path / "judge.md")}
    assert prompt.text == "# Rubric\nQuestion: What is the capital of France?\nAnswer: Paris.\n"
    by_path = LlmJudgeConfig(name="j", prompt="judge.md")  # built in code: relative to the eval file
    assert resolve_prompt(make_context(tmp_path, by_path), by_path).text == prompt.text
    missing = LlmJudgeConfig(name="j", prompt="nope.txt")
    with pytest.raises(PromptTemplateError, match="prompt file 'nope.txt' cannot be read"):
        resolve_prompt(make_context(tmp_path, missing), missing)


def write_script(tmp_path: Path, body: str, name: str = "template.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


def test_executable_template_reads_payload_and_config(tmp_path: Path) -> None:
    script = write_script(
        tmp_path,
        """
        import json, os, sys
        ctx = json.load(sys.stdin)
        print(f"Question: {ctx['question']}")
        print(f"Answer: {ctx['candidate_answer']} / {ctx['answer']}")
        print(f"Rubric: {ctx['config']['rubric']} / {ctx['config']['extra']}")
        print(f"cwd={os.path.basename(os.getcwd())}")
        print()
        print()
    """,
    )
    config = LlmJudgeConfig(
        name="j",
        config={"extra": "from evaluator", "rubric": "overridden"},
        prompt=PromptScriptConfig(script=[sys.executable, str(script)], config={"rubric": "must be factual"}),
    )
    prompt = resolve_prompt(make_context(tmp_path, config), config)
    assert prompt.source == "script"
    assert prompt.text == (
        "Question: What is the capital of France?\nAnswer:   Paris.   /   Paris.  \n"
        f"Rubric: must be factual / from evaluator\ncwd={tmp_path.name}"
    )
    assert prompt.details["script"] == [sys.executable, str(script)] and prompt.details["exit_code"] == 0


def test_loader_resolved_script_is_used(tmp_path: Path) -> None:
    script = write_script(tmp_path, "import sys; sys.stdin.read(); print('from resolved argv')")
    config = LlmJudgeConfig(name="j", prompt="template.py", resolved_prompt_script=[sys.executable, str(script)])
    assert resolve_prompt(make_context(tmp_path, config), config).text == "from resolved argv"


def test_failing_script_error_carries_stderr(tmp_path: Path) -> None:
    script = write_script(
        tmp_path,
        """
        import sys
        sys.stderr.write("rubric file missing: rubric.md\\n")
        sys.exit(3)
    """,
    )
    config = LlmJudgeConfig(name="j", prompt=PromptScriptConfig(script=[sys.executable, str(script)]))
    with pytest.raises(PromptTemplateError) as caught:
        resolve_prompt(make_context(tmp_path, config), config)
    assert "exited with code 3" in str(caught.value)
    assert "rubric file missing: rubric.md" in str(caught.value)
    assert caught.value.raw["exit_code"] == 3


def test_empty_stdout_is_an_empty_prompt(tmp_path: Path) -> None:
    script = write_script(tmp_path, "import sys; sys.stdin.read(); print('   ')")
    config = LlmJudgeConfig(name="j", prompt=PromptScriptConfig(script=[sys.executable, str(script)]))
    assert resolve_prompt(make_context(tmp_path, config), config).text == ""


def test_script_timeout_and_missing_command(tmp_path: Path) -> None:
    script = write_script(tmp_path, "import time; time.sleep(30)")
    config = LlmJudgeConfig(name="j", prompt=PromptScriptConfig(script=[sys.executable, str(script)], timeout_seconds=0.3))
    with pytest.raises(PromptTemplateError, match="timed out"):
        resolve_prompt(make_context(tmp_path, config), config)
    config = LlmJudgeConfig(name="j", prompt=PromptScriptConfig(script=["no-such-runtime-xyz", "t.ts"]))
    with pytest.raises(PromptTemplateError, match="command not found: 'no-such-runtime-xyz'"):
        resolve_prompt(make_context(tmp_path, config), config)


def test_trace_summary_lists_each_tools_reported_durations() -> None:
    from agentv_gate.judging.trace import trace_summary

    summary = trace_summary([{"role": "assistant", "content": "", "tool_calls": [
        {"tool": "search", "duration_ms": 120}, {"tool": "search", "duration_ms": 80}, {"tool": "fetch"},
        {"tool": "fetch", "duration_ms": "slow"}]}])
    assert summary["tool_durations"] == {"search": [120.0, 80.0]}
    assert summary["tool_calls_by_name"] == {"search": 2, "fetch": 2} and summary["llm_call_count"] == 1
    assert "tool_durations" not in trace_summary([{"role": "assistant", "content": "hi"}])


def test_input_is_agentv_s_input_segments_with_files_as_it_shows_them() -> None:
    """AgentV 2.19's `{{input}}` is JSON of its input segments: a file as {type, path, text, resolvedPath}."""
    from agentv_gate.judging.templates import input_segments

    messages = [Message(role="system", content="Be brief."),
                Message(role="user", content=[{"type": "file", "value": "a.md", "path": "evals/a.md", "text": "A",
                                               "resolved_path": "/r/evals/a.md"},
                                              {"type": "text", "value": "Summarise."}])]
    assert input_segments(messages) == [
        {"type": "text", "value": "Be brief."},
        {"type": "file", "path": "evals/a.md", "text": "A", "resolvedPath": "/r/evals/a.md"},
        {"type": "text", "value": "Summarise."},
    ]
