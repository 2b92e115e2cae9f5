"""The Gemini provider against a real loopback server speaking `generateContent`; no mocked `requests`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentv_gate.errors import ProviderError, TargetsConfigError
from agentv_gate.judging.judge_reply import VERDICT_SCHEMA
from agentv_gate.models import Message
from agentv_gate.targets.base import ProviderRequest
from agentv_gate.targets.cache import ResponseCache, caching_wrapper
from agentv_gate.targets.config import RawTarget, TargetConfig, parse_targets, resolve_target
from agentv_gate.targets.gemini import GeminiProvider, gemini_schema
from agentv_gate.targets.registry import build_provider
from tests.helpers.cli import run_cli
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply, gemini_model, gemini_path
from tests.helpers.files import make_repo, write
from tests.helpers.reports import RESULTS, read_rows

SECRET = "AIza-test-SECRET-0123456789"
FAST = {"retry_initial_delay_ms": 1, "retry_max_delay_ms": 5, "retry_jitter_ms": 1, "timeout_seconds": 2}
FLASH = gemini_path("gemini-2.5-flash")


def target(**data: Any) -> TargetConfig:
    data.setdefault("name", "g")
    return resolve_target(RawTarget(name=data["name"], data=data), {"GEMINI_API_KEY": SECRET})


def gemini(fake_llm: FakeLLMServer, **extra: Any) -> GeminiProvider:
    settings = {"provider": "gemini", "base_url": fake_llm.url, "api_key": "${{ GEMINI_API_KEY }}",
                "model": "gemini-2.5-flash", **FAST, **extra}
    provider = build_provider(target(**settings))
    assert isinstance(provider, GeminiProvider)
    return provider


def test_generate_content_wire_format_key_header_and_usage(fake_llm: FakeLLMServer) -> None:
    fake_llm.set_default(FLASH, gemini_model("Paris", SECRET))
    response = gemini(fake_llm, temperature=0.3, max_output_tokens=256).invoke(
        ProviderRequest(question="Capital of France?", system_prompt="Be brief.")
    )
    assert response.text == "Paris"
    assert response.token_usage == {"input": 17, "output": 4}
    assert response.raw == {"model": "gemini-fake", "id": "gemini-fake-id", "finish_reason": "STOP"}
    [request] = fake_llm.requests
    assert request.path == FLASH and request.query == {}  # the key is never in the URL
    assert request.headers["x-goog-api-key"] == SECRET
    assert "authorization" not in request.headers
    assert request.json == {
        "contents": [{"role": "user", "parts": [{"text": "Capital of France?"}]}],
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "generationConfig": {"temperature": 0.3, "maxOutputTokens": 256},
    }


def test_alias_google_and_a_versioned_base_url_reach_the_same_endpoint(fake_llm: FakeLLMServer) -> None:
    fake_llm.set_default(FLASH, gemini_model("ok", SECRET))
    provider = build_provider(target(provider="Google", base_url=f"{fake_llm.url}/v1beta/", api_key="${{ GEMINI_API_KEY }}",
                                     model="gemini-2.5-flash", **FAST))
    assert provider.kind == "gemini"
    assert provider.invoke(ProviderRequest(question="q")).text == "ok"


def test_case_messages_become_alternating_user_and_model_turns(fake_llm: FakeLLMServer) -> None:
    fake_llm.set_default(FLASH, gemini_model("fine", SECRET))
    messages = [Message(role="system", content="S"), Message(role="assistant", content="hello"),
                Message(role="user", content="a"), Message(role="tool", content="b")]
    assert gemini(fake_llm).invoke(ProviderRequest(question="", messages=messages)).text == "fine"
    body = fake_llm.requests[0].json
    assert body["systemInstruction"] == {"parts": [{"text": "S"}]}
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user"]
    assert body["contents"][-1]["parts"] == [{"text": "a\n\nb"}]


def test_a_judge_verdict_is_asked_for_with_response_schema(fake_llm: FakeLLMServer) -> None:
    fake_llm.set_default(FLASH, gemini_model('{"score": 1, "hits": [], "misses": [], "reasoning": "ok"}', SECRET))
    gemini(fake_llm).invoke(ProviderRequest(question="grade", reply_schema=VERDICT_SCHEMA))
    config = fake_llm.requests[0].json["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseSchema"] == {
        "type": "OBJECT",
        "properties": {"score": {"type": "NUMBER", "description": "0 to 1"},
                       "hits": {"type": "ARRAY", "items": {"type": "STRING"}},
                       "misses": {"type": "ARRAY", "items": {"type": "STRING"}},
                       "reasoning": {"type": "STRING"}},
        "required": ["score", "hits", "misses", "reasoning"],
    }


def test_structured_output_false_sends_no_schema(fake_llm: FakeLLMServer) -> None:
    fake_llm.set_default(FLASH, gemini_model("{}", SECRET))
    gemini(fake_llm, structured_output=False).invoke(ProviderRequest(question="grade", reply_schema=VERDICT_SCHEMA))
    assert "generationConfig" not in fake_llm.requests[0].json


def test_schema_conversion_keeps_what_gemini_knows_and_drops_the_rest() -> None:
    schema = {"type": "object", "additionalProperties": False, "$schema": "x",
              "properties": {"note": {"type": ["string", "null"], "enum": ["a", "b"]}}, "required": ["note"]}
    assert gemini_schema(schema) == {"type": "OBJECT", "required": ["note"],
                                     "properties": {"note": {"type": "STRING", "nullable": True, "enum": ["a", "b"]}}}


def test_a_judge_model_override_goes_to_that_models_url(fake_llm: FakeLLMServer) -> None:
    fake_llm.set_default(gemini_path("gemini-2.5-pro"), gemini_model("pro", SECRET))
    assert gemini(fake_llm).invoke(ProviderRequest(question="q", model="gemini-2.5-pro")).text == "pro"
    assert fake_llm.requests[0].path == gemini_path("gemini-2.5-pro")


def test_thought_parts_are_not_the_answer_and_thinking_tokens_count_as_output(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(FLASH, FakeReply.gemini("42", thoughts=30))
    response = gemini(fake_llm).invoke(ProviderRequest(question="q"))
    assert response.text == "42"
    assert response.token_usage == {"input": 17, "output": 34, "reasoning": 30}


def test_503_then_success_is_retried_and_counted(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(FLASH, FakeReply.gemini_error(503, "The model is overloaded.", "UNAVAILABLE"), FakeReply.gemini("ok"))
    response = gemini(fake_llm).invoke(ProviderRequest(question="q"))
    assert response.text == "ok" and response.retries == 1


def test_400_is_not_retried_and_quotes_googles_error(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(FLASH, FakeReply.gemini_error(400, "API key not valid. Please pass a valid API key."))
    with pytest.raises(ProviderError) as caught:
        gemini(fake_llm).invoke(ProviderRequest(question="q"))
    message = str(caught.value)
    assert "type INVALID_ARGUMENT" in message and "API key not valid" in message
    assert SECRET not in message
    assert len(fake_llm.requests) == 1


@pytest.mark.parametrize("reply, said", [
    (FakeReply.json({"promptFeedback": {"blockReason": "SAFETY"}}), "blocked the prompt (blockReason SAFETY)"),
    (FakeReply.json({"candidates": [{"finishReason": "SAFETY", "index": 0}]}), "withheld the reply (finishReason SAFETY)"),
    (FakeReply.json({"text": "not gemini"}), "with candidates"),
])
def test_blocked_or_shapeless_replies_are_errors_not_empty_answers(
        fake_llm: FakeLLMServer, reply: FakeReply, said: str) -> None:
    fake_llm.enqueue(FLASH, reply)
    with pytest.raises(ProviderError, match=said.replace("(", r"\(").replace(")", r"\)")):
        gemini(fake_llm).invoke(ProviderRequest(question="q"))


def test_missing_key_or_model_and_openai_only_keys_are_configuration_errors() -> None:
    with pytest.raises(TargetsConfigError, match="GEMINI_API_KEY"):
        build_provider(resolve_target(RawTarget("g", {"provider": "gemini", "api_key": "${{ GEMINI_API_KEY }}",
                                                      "model": "m"}), {}))
    with pytest.raises(TargetsConfigError, match="model is required"):
        build_provider(target(provider="gemini", api_key="${{ GEMINI_API_KEY }}"))
    with pytest.raises(TargetsConfigError, match="not Gemini's"):
        build_provider(target(provider="gemini", api_key="${{ GEMINI_API_KEY }}", model="m", reasoning_effort="low"))


def test_a_literal_key_in_targets_yaml_is_refused() -> None:
    with pytest.raises(TargetsConfigError, match="literal secret"):
        parse_targets("targets:\n  - name: g\n    provider: gemini\n    api_key: AIzaLiteral\n    model: m\n"
                      ).resolve("g", {})


def test_answers_are_cached_per_model_and_prompt(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.set_default(FLASH, gemini_model("flash", SECRET))
    fake_llm.set_default(gemini_path("gemini-2.5-pro"), gemini_model("pro", SECRET))
    wrap = caching_wrapper(ResponseCache(tmp_path / "cache"))
    cached = wrap(gemini(fake_llm))
    assert cached.invoke(ProviderRequest(question="q")).text == "flash"
    assert cached.invoke(ProviderRequest(question="q", model="gemini-2.5-pro")).text == "pro"
    again = cached.invoke(ProviderRequest(question="q"))
    assert again.text == "flash" and (again.raw or {}).get("cached") is True
    assert len(fake_llm.requests) == 2
    stored = "".join(p.read_text() for p in (tmp_path / "cache").rglob("*.json"))
    assert SECRET not in stored and "gemini-2.5-pro" in json.dumps(stored)


# ---------------------------------------------------------------- through the CLI


def run_gate(project: Path, fake_llm: FakeLLMServer, judge_answer: str) -> tuple[int, list[dict[str, Any]], str]:
    targets = [{"name": "default", "provider": "mock", "response": "Paris is the capital of France.",
                "judge_target": "gemini-judge"},
               {"name": "gemini-judge", "provider": "google", "base_url": fake_llm.url,
                "api_key": "${{ GEMINI_API_KEY }}", "model": "gemini-2.5-flash", **FAST}]
    make_repo(project, yaml.safe_dump({"targets": targets}, sort_keys=False))
    write(project / "evals/capital.eval.yaml",
          "tests:\n  - id: capital\n    criteria: Names Paris\n    input: Capital of France?\n"
          "    assert:\n      - {name: quality, type: llm_judge}\n")
    fake_llm.set_default(FLASH, gemini_model(judge_answer, SECRET))
    done = run_cli("run", "evals", "--no-cache", cwd=project, env={"GEMINI_API_KEY": SECRET})
    return done.returncode, read_rows(project / RESULTS), done.stdout + done.stderr


def test_cli_llm_judge_on_gemini_passes_and_fails_as_the_verdict_says(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    good = json.dumps({"score": 0.9, "hits": ["names Paris"], "misses": [], "reasoning": "Correct."})
    code, [row], output = run_gate(tmp_path / "pass", fake_llm, good)
    assert code == 0 and row["verdict"] == "pass" and row["hits"] == ["names Paris"], output
    judge_call = fake_llm.requests[-1].json
    assert judge_call["generationConfig"]["responseMimeType"] == "application/json"
    assert "score" in judge_call["systemInstruction"]["parts"][0]["text"]
    bad = json.dumps({"score": 0.1, "hits": [], "misses": ["says Lyon"], "reasoning": "Wrong."})
    code, [row], output = run_gate(tmp_path / "fail", fake_llm, bad)
    assert code == 1 and row["verdict"] == "fail" and row["misses"] == ["says Lyon"], output
    assert SECRET not in output and SECRET not in json.dumps(row)
