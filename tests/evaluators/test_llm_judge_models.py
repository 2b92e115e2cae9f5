"""`agentv-gate run` with agents and llm_judges on the models teams use today: OpenAI reasoning
models (on OpenAI and Azure) and servers without structured output. Real CLI process, real
loopback server answering with the providers' own 400 bodies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from tests.helpers.cli import run_cli
from tests.helpers.fake_llm_server import (
    REASONING_TOKENS,
    FakeLLMServer,
    RecordedRequest,
    reasoning_model,
    without_json_schema,
)
from tests.helpers.files import make_repo, write
from tests.helpers.reports import RESULTS, read_rows

CHAT = "/v1/chat/completions"
AZURE_CHAT = "/openai/deployments/grader/chat/completions"
VERDICT = {"score": 0.9, "hits": ["names Paris"], "misses": [], "reasoning": "Correct."}
FAST = {"retry_initial_delay_ms": 1, "retry_max_delay_ms": 5, "retry_jitter_ms": 1, "timeout_seconds": 10}
USAGE_JUDGE = """\
import json, sys
usage = json.load(sys.stdin)["token_usage"] or {}
ok = isinstance(usage.get("reasoning"), int) and usage["reasoning"] > 0
print(json.dumps({"score": 1.0 if ok else 0.0, "reasoning": json.dumps(usage)}))
"""


def is_judge_call(request: RecordedRequest) -> bool:
    messages = (request.json or {}).get("messages", [])
    return any('"score"' in str(m.get("content")) for m in messages)


def answer(request: RecordedRequest) -> str:
    return json.dumps(VERDICT) if is_judge_call(request) else "Paris is the capital of France."


AZURE_KEY = {"AZ_KEY": "az-SECRET-key-42"}
"""The judge's key, set for the run and never to be seen in its output."""


def make_project(tmp_path: Path, targets: list[dict[str, Any]], cases: int = 6, usage_judge: bool = False) -> Path:
    spelled = [{**target, **FAST} for target in targets]
    project = make_repo(tmp_path / "repo", yaml.safe_dump({"targets": spelled}, sort_keys=False))
    write(project / "evals/usage.py", USAGE_JUDGE)
    extra = "\n      - {name: usage, type: code_judge, script: [python3, usage.py]}" if usage_judge else ""
    body = "tests:\n" + "".join(
        f"  - id: capital-{i}\n    criteria: Names Paris\n    input: What is the capital of France?\n"
        f"    assert:\n      - {{name: quality, type: llm_judge}}{extra}\n"
        for i in range(cases)
    )
    write(project / "evals/capital.eval.yaml", body)
    return project


def adjustment_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "the server refused" in line]


def test_reasoning_model_agent_and_azure_judge_pass_with_one_line_per_adjustment(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.set_default(CHAT, reasoning_model(answer))
    fake_llm.set_default(AZURE_CHAT, reasoning_model(answer))
    project = make_project(
        tmp_path,
        [
            {
                "name": "default",
                "provider": "openai",
                "base_url": fake_llm.url,
                "model": "house-agent",
                "max_output_tokens": 200,
                "judge_target": "judge",
            },
            {
                "name": "judge",
                "provider": "azure",
                "endpoint": fake_llm.url,
                "api_key": "${{ AZ_KEY }}",
                "deployment": "grader",
            },
        ],
        usage_judge=True,
    )
    proc = run_cli("run", "evals", "--no-cache", cwd=project, env=AZURE_KEY)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = read_rows(project / RESULTS)
    assert len(rows) == 6 and {row["verdict"] for row in rows} == {"pass"}
    usage = json.loads(rows[0]["evaluator_results"][1]["reasoning"])
    assert usage["reasoning"] == REASONING_TOKENS  # reasoning tokens reach judges beside input and output
    lines = adjustment_lines(proc.stderr)
    assert len(lines) == 2, proc.stderr
    assert any(
        line.startswith("agentv-gate: openai target 'default': the server refused 'max_tokens'") for line in lines
    )
    assert any(
        line.startswith("agentv-gate: azure target 'judge': the server refused 'temperature'")
        and "Unsupported value: 'temperature' does not support 0.0 with this model" in line
        for line in lines
    )
    assert AZURE_KEY["AZ_KEY"] not in proc.stdout + proc.stderr
    judge_bodies = [r.json for r in fake_llm.requests_for(AZURE_CHAT)]
    assert judge_bodies[-1]["response_format"]["json_schema"]["name"] == "verdict"
    assert "temperature" not in judge_bodies[-1]


def test_judge_named_like_a_reasoning_model_needs_no_adjustment(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.set_default(CHAT, reasoning_model(answer))
    project = make_project(
        tmp_path,
        [
            {
                "name": "default",
                "provider": "openai",
                "base_url": fake_llm.url,
                "model": "gpt-5-mini",
                "reasoning_effort": "minimal",
            },
        ],
        cases=3,
    )
    proc = run_cli("run", "evals", "--no-cache", cwd=project, env=AZURE_KEY)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert adjustment_lines(proc.stderr) == []
    assert len(fake_llm.requests) == 6  # one call per answer and per verdict, none refused
    assert all(r.json["reasoning_effort"] == "minimal" for r in fake_llm.requests)


def test_judge_on_a_server_without_json_schema_falls_back_to_prompt_only_json(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.set_default(CHAT, without_json_schema(answer))
    project = make_project(
        tmp_path,
        [
            {"name": "default", "provider": "ollama", "base_url": fake_llm.url, "model": "llama3.1"},
        ],
    )
    proc = run_cli("run", "evals", "--no-cache", cwd=project, env=AZURE_KEY)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert {row["verdict"] for row in read_rows(project / RESULTS)} == {"pass"}
    [line] = adjustment_lines(proc.stderr)
    assert line.startswith("agentv-gate: openai target 'default': the server refused 'response_format'")
    judge_calls = [r for r in fake_llm.requests if is_judge_call(r)]
    refused = [r for r in judge_calls if "response_format" in r.json]
    assert 1 <= len(refused) <= 8 and len(judge_calls) == 6 + len(refused)  # a 400 once per racing worker at most


def test_structured_output_false_keeps_the_verdict_in_the_prompt(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.set_default(CHAT, without_json_schema(answer))
    project = make_project(
        tmp_path,
        [
            {
                "name": "default",
                "provider": "openai",
                "base_url": fake_llm.url,
                "model": "llama3.1",
                "structured_output": False,
            },
        ],
        cases=2,
    )
    proc = run_cli("run", "evals", "--no-cache", cwd=project, env=AZURE_KEY)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert adjustment_lines(proc.stderr) == []
    assert not any("response_format" in r.json for r in fake_llm.requests)


def test_a_refusal_it_cannot_adjust_is_the_case_error_quoting_the_provider(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    from tests.helpers.fake_llm_server import content_filtered

    fake_llm.set_default(AZURE_CHAT, content_filtered())
    fake_llm.set_default(CHAT, reasoning_model(answer))
    project = make_project(
        tmp_path,
        [
            {"name": "default", "provider": "openai", "base_url": fake_llm.url, "model": "o3", "judge_target": "judge"},
            {
                "name": "judge",
                "provider": "azure",
                "endpoint": fake_llm.url,
                "api_key": "${{ AZ_KEY }}",
                "deployment": "grader",
            },
        ],
        cases=1,
    )
    proc = run_cli("run", "evals", "--no-cache", cwd=project, env=AZURE_KEY)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    [row] = read_rows(project / RESULTS)
    assert row["verdict"] == "error"
    assert "HTTP 400" in row["error"] and "code content_filter" in row["error"]
    assert "content management policy" in row["error"]
