"""Reasoning models, structured output, Azure's v1 API and provider errors, against a real loopback
server that answers like OpenAI's reasoning models and like a server without json_schema."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from agentv_gate.errors import TargetsConfigError
from agentv_gate.targets.base import ProviderRequest
from agentv_gate.targets.cache import request_identity
from agentv_gate.targets.config import RawTarget, TargetConfig, resolve_target
from agentv_gate.targets.openai_compat import HttpChatProvider
from agentv_gate.targets.registry import build_provider
from agentv_gate.transport.http_policy import HttpCallError
from tests.helpers.fake_llm_server import (
    MAX_TOKENS_REFUSED,
    REASONING_TOKENS,
    FakeLLMServer,
    FakeReply,
    content_filtered,
    reasoning_model,
    without_json_schema,
)

SECRET = "sk-test-SECRET-0123456789"
CHAT = "/v1/chat/completions"
FAST = {"retry_initial_delay_ms": 1, "retry_max_delay_ms": 5, "retry_jitter_ms": 1, "timeout_seconds": 2}
SCHEMA = {"name": "verdict", "schema": {"type": "object", "properties": {"score": {"type": "number"}},
                                        "required": ["score"], "additionalProperties": False}}


def target(**data: Any) -> TargetConfig:
    data.setdefault("name", "t")
    return resolve_target(RawTarget(name=data["name"], data=data), {"TEST_API_KEY": SECRET})


def provider(**data: Any) -> HttpChatProvider:
    built = build_provider(target(api_key="${{ TEST_API_KEY }}", **{**FAST, **data}))
    assert isinstance(built, HttpChatProvider)
    return built


def openai(fake_llm: FakeLLMServer, model: str, **extra: Any) -> HttpChatProvider:
    return provider(provider="openai", base_url=fake_llm.url, model=model, **extra)


def judge_like(**extra: Any) -> ProviderRequest:
    """What an llm_judge sends: temperature 0 and (optionally) a token limit."""
    return ProviderRequest(question="Grade this.", system_prompt="Reply in JSON.", temperature=0.0, **extra)


def notices(text: str) -> list[str]:
    return [line for line in text.splitlines() if "the server refused" in line]


# ---------------------------------------------------------------- recognised by name


@pytest.mark.parametrize("model", ["o1", "o3-mini", "o4-mini-2025-04-16", "gpt-5", "gpt-5-mini", "gpt-5.1",
                                   "openai/gpt-5-nano"])
def test_a_reasoning_model_named_as_such_gets_max_completion_tokens_and_no_temperature(
    fake_llm: FakeLLMServer, capsys: pytest.CaptureFixture[str], model: str
) -> None:
    fake_llm.set_default(CHAT, reasoning_model("Paris"))
    response = openai(fake_llm, model, reasoning_effort="low").invoke(judge_like(max_output_tokens=300))
    assert response.text == "Paris"
    [request] = fake_llm.requests
    body = request.json
    assert body["max_completion_tokens"] == 300 and body["reasoning_effort"] == "low"
    assert "max_tokens" not in body and "temperature" not in body
    assert response.token_usage == {"input": 11, "output": 7 + REASONING_TOKENS, "reasoning": REASONING_TOKENS}
    assert response.retries == 0
    assert notices(capsys.readouterr().err) == []


@pytest.mark.parametrize("model", ["gpt-4o", "gpt-4.1-mini", "llama3.1", "omni-7b", "o", "gpt-50x"])
def test_other_models_keep_max_tokens_and_temperature(fake_llm: FakeLLMServer, model: str) -> None:
    fake_llm.enqueue(CHAT, FakeReply.openai("ok"))
    openai(fake_llm, model).invoke(judge_like(max_output_tokens=300))
    body = fake_llm.requests[0].json
    assert body["max_tokens"] == 300 and body["temperature"] == 0.0
    assert "max_completion_tokens" not in body and "reasoning_effort" not in body


def test_reasoning_model_key_overrides_the_name_list(fake_llm: FakeLLMServer) -> None:
    fake_llm.set_default(CHAT, FakeReply.openai("ok"))
    openai(fake_llm, "judge-prod", reasoning_model=True).invoke(judge_like(max_output_tokens=10))
    openai(fake_llm, "o3-mini", reasoning_model=False).invoke(judge_like(max_output_tokens=10))
    first, second = (r.json for r in fake_llm.requests)
    assert first["max_completion_tokens"] == 10 and "temperature" not in first
    assert second["max_tokens"] == 10 and second["temperature"] == 0.0


def test_a_temperature_written_on_a_reasoning_target_is_still_sent(fake_llm: FakeLLMServer) -> None:
    fake_llm.set_default(CHAT, FakeReply.openai("ok"))
    openai(fake_llm, "gpt-5", temperature=1).invoke(judge_like())
    assert fake_llm.requests[0].json["temperature"] == 1


@pytest.mark.parametrize("bad", ["extreme", 3, True])
def test_reasoning_effort_must_be_a_known_level(bad: Any) -> None:
    with pytest.raises(TargetsConfigError, match="reasoning_effort must be one of none, minimal, low, medium, high"):
        provider(provider="openai", model="o3", reasoning_effort=bad)


def test_reasoning_keys_on_an_anthropic_target_are_refused_not_ignored() -> None:
    with pytest.raises(TargetsConfigError, match="thinking_budget"):
        provider(provider="anthropic", model="claude-x", reasoning_effort="high")


def test_structured_output_must_be_a_boolean() -> None:
    with pytest.raises(TargetsConfigError, match="structured_output must be true or false, got 'no'"):
        provider(provider="openai", model="m", structured_output="no")


# ---------------------------------------------------------------- learned from the server


def test_unrecognised_reasoning_model_is_learned_from_its_400s_once(
    fake_llm: FakeLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_llm.set_default(CHAT, reasoning_model("Paris"))
    chat = openai(fake_llm, "house-model", max_output_tokens=200)
    first = chat.invoke(judge_like())
    assert first.text == "Paris" and first.retries == 2
    sent = [r.json for r in fake_llm.requests]
    assert [("max_tokens" in b, "max_completion_tokens" in b, "temperature" in b) for b in sent] == [
        (True, False, True), (False, True, True), (False, True, False)]
    lines = notices(capsys.readouterr().err)
    assert len(lines) == 2
    assert lines[0].startswith("agentv-gate: openai target 't': the server refused 'max_tokens'")
    assert "Unsupported parameter: 'max_tokens' is not supported with this model." in lines[0]
    assert "sending 'max_completion_tokens' instead of 'max_tokens' for the rest of this run" in lines[0]
    assert "refused 'temperature'" in lines[1] and "does not support 0.0 with this model" in lines[1]
    assert "leaving 'temperature' out" in lines[1]

    second = chat.invoke(judge_like())  # remembered: one request, already adjusted, nothing said
    assert second.retries == 0 and len(fake_llm.requests) == 4
    assert fake_llm.requests[-1].json["max_completion_tokens"] == 200 and "temperature" not in fake_llm.requests[-1].json
    assert notices(capsys.readouterr().err) == []


def test_a_target_with_only_a_token_limit_passes_with_one_adjustment_line(
    fake_llm: FakeLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_llm.set_default(CHAT, reasoning_model("Paris"))
    chat = openai(fake_llm, "house-model", max_output_tokens=200)
    for _ in range(3):
        assert chat.invoke(ProviderRequest(question="Capital of France?")).text == "Paris"
    assert len(notices(capsys.readouterr().err)) == 1


def test_eight_threads_learn_together_and_the_notice_is_printed_once(
    fake_llm: FakeLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_llm.set_default(CHAT, reasoning_model("Paris"))
    chat = openai(fake_llm, "house-model", max_output_tokens=50)
    barrier = threading.Barrier(8)
    answers: list[str] = []
    failures: list[BaseException] = []

    def work() -> None:
        barrier.wait()
        try:
            for _ in range(3):
                answers.append(chat.invoke(judge_like()).text)
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            failures.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == [] and answers == ["Paris"] * 24
    lines = notices(capsys.readouterr().err)
    assert sorted(line.split("refused ")[1].split(" ")[0] for line in lines) == ["'max_tokens'", "'temperature'"]


def test_a_400_about_something_else_is_not_retried_and_quotes_the_provider(fake_llm: FakeLLMServer) -> None:
    refused_messages = {"error": {"message": "Unsupported parameter: 'messages' is not supported with this model.",
                                  "type": "invalid_request_error", "param": "messages",
                                  "code": "unsupported_parameter"}}
    fake_llm.enqueue(CHAT, FakeReply.json(refused_messages, status=400))
    with pytest.raises(HttpCallError) as caught:
        openai(fake_llm, "m").invoke(judge_like())
    assert len(fake_llm.requests) == 1
    message = str(caught.value)
    assert "HTTP 400" in message
    assert ("provider error (type invalid_request_error, code unsupported_parameter, param messages): "
            "\"Unsupported parameter: 'messages' is not supported with this model.\"") in message


def test_a_refused_replacement_is_not_tried_twice(fake_llm: FakeLLMServer) -> None:
    fake_llm.set_default(CHAT, FakeReply.json(MAX_TOKENS_REFUSED, status=400))  # refuses max_tokens whatever is sent
    with pytest.raises(HttpCallError, match="Unsupported parameter: 'max_tokens'") as caught:
        openai(fake_llm, "m", max_output_tokens=5).invoke(judge_like())
    assert len(fake_llm.requests) == 2 and caught.value.retries == 1


# ---------------------------------------------------------------- structured output


def test_a_reply_schema_is_asked_for_as_strict_json_schema(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(CHAT, FakeReply.openai('{"score": 1}'))
    openai(fake_llm, "gpt-4o").invoke(judge_like(reply_schema=SCHEMA))
    assert fake_llm.requests[0].json["response_format"] == {
        "type": "json_schema", "json_schema": {"name": "verdict", "schema": SCHEMA["schema"], "strict": True}}


def test_a_server_without_json_schema_falls_back_once_and_remembers(
    fake_llm: FakeLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_llm.set_default(CHAT, without_json_schema('{"score": 1}'))
    chat = openai(fake_llm, "llama3.1")
    assert chat.invoke(judge_like(reply_schema=SCHEMA)).text == '{"score": 1}'
    assert chat.invoke(judge_like(reply_schema=SCHEMA)).text == '{"score": 1}'
    assert ["response_format" in r.json for r in fake_llm.requests] == [True, False, False]
    [line] = notices(capsys.readouterr().err)
    assert "refused 'response_format'" in line and "of type 'json_schema' is not supported" in line
    assert "asking for the JSON reply in the prompt only (no structured output) for the rest of this run" in line


def test_structured_output_false_never_sends_a_schema(
    fake_llm: FakeLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_llm.set_default(CHAT, without_json_schema('{"score": 1}'))
    openai(fake_llm, "llama3.1", structured_output=False).invoke(judge_like(reply_schema=SCHEMA))
    assert len(fake_llm.requests) == 1 and "response_format" not in fake_llm.requests[0].json
    assert notices(capsys.readouterr().err) == []


# ---------------------------------------------------------------- Azure


def azure(fake_llm: FakeLLMServer, **extra: Any) -> HttpChatProvider:
    return provider(provider="azure", **{"endpoint": fake_llm.url, **extra})


def test_azure_deployment_named_like_a_reasoning_model(fake_llm: FakeLLMServer) -> None:
    path = "/openai/deployments/o4-mini/chat/completions"
    fake_llm.set_default(path, reasoning_model("ok"))
    response = azure(fake_llm, deployment_name="o4-mini").invoke(judge_like(max_output_tokens=40))
    assert response.text == "ok" and response.token_usage and response.token_usage["reasoning"] == REASONING_TOKENS
    [request] = fake_llm.requests
    assert request.query == {"api-version": ["2024-12-01-preview"]}
    assert request.json["max_completion_tokens"] == 40 and "temperature" not in request.json


def test_azure_custom_deployment_of_a_reasoning_model_by_reasoning_model(fake_llm: FakeLLMServer) -> None:
    fake_llm.set_default("/openai/deployments/judge-prod/chat/completions", reasoning_model("ok"))
    azure(fake_llm, deployment="judge-prod", reasoning_model=True).invoke(judge_like(max_output_tokens=40))
    assert len(fake_llm.requests) == 1 and "max_completion_tokens" in fake_llm.requests[0].json


def test_azure_model_alone_is_the_deployment(fake_llm: FakeLLMServer) -> None:
    """AgentV reads `deployment ?? deploymentName ?? model`: a lone `model` names the deployment."""
    fake_llm.set_default("/openai/deployments/gpt-5-mini/chat/completions", reasoning_model("ok"))
    azure(fake_llm, model="gpt-5-mini").invoke(judge_like(max_output_tokens=40))
    assert len(fake_llm.requests) == 1 and "max_completion_tokens" in fake_llm.requests[0].json


def test_azure_custom_deployment_learns_from_the_server(
    fake_llm: FakeLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_llm.set_default("/openai/deployments/judge-prod/chat/completions", reasoning_model("ok"))
    chat = azure(fake_llm, deployment="judge-prod")
    assert chat.invoke(judge_like()).text == "ok"
    assert chat.invoke(judge_like()).text == "ok"
    assert len(fake_llm.requests) == 3
    [line] = notices(capsys.readouterr().err)
    assert line.startswith("agentv-gate: azure target 't': the server refused 'temperature'")


def test_azure_v1_endpoint_puts_the_model_in_the_body_and_sends_no_api_version(fake_llm: FakeLLMServer) -> None:
    fake_llm.set_default("/openai/v1/chat/completions", reasoning_model("ok"))
    chat = azure(fake_llm, endpoint=f"{fake_llm.url}/openai/v1/", deployment_name="gpt-5-mini")
    assert chat.url == f"{fake_llm.url}/openai/v1/chat/completions"
    chat.invoke(judge_like(max_output_tokens=40))
    chat.invoke(judge_like(model="o3"))  # a judge's model override applies with the v1 API
    first, second = fake_llm.requests
    assert first.path == "/openai/v1/chat/completions" and first.query == {}
    assert first.headers["api-key"] == SECRET and "authorization" not in first.headers
    assert first.json["model"] == "gpt-5-mini" and first.json["max_completion_tokens"] == 40
    assert second.json["model"] == "o3"


def test_azure_version_v1_on_a_resource_endpoint_uses_the_v1_api() -> None:
    chat = provider(provider="azure", endpoint="https://contoso.openai.azure.com", deployment="gpt-4o",
                    version="v1")
    assert chat.url == "https://contoso.openai.azure.com/openai/v1/chat/completions"
    by_name = provider(provider="azure", resource="contoso", deployment="gpt-4o", version="preview",
                       endpoint="https://contoso.openai.azure.com/openai/v1")
    assert by_name.url == "https://contoso.openai.azure.com/openai/v1/chat/completions?api-version=preview"


def test_azure_v1_endpoint_with_a_dated_version_is_refused() -> None:
    with pytest.raises(TargetsConfigError, match="is Azure's v1 API, which takes no dated api-version"):
        provider(provider="azure", endpoint="https://contoso.openai.azure.com/openai/v1", deployment="gpt-4o",
                 version="2024-12-01-preview")


def test_azure_content_filter_is_what_the_user_reads(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue("/openai/deployments/gpt-4o/chat/completions", content_filtered())
    with pytest.raises(HttpCallError) as caught:
        azure(fake_llm, deployment="gpt-4o").invoke(judge_like())
    message = str(caught.value)
    assert "HTTP 400" in message and "code content_filter" in message
    assert "inner code ResponsibleAIPolicyViolation" in message
    assert "triggering Azure OpenAI's content management policy" in message


def test_a_reply_withheld_by_the_content_filter_is_an_error_not_an_empty_answer(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(CHAT, FakeReply.json({"choices": [{"message": {"role": "assistant", "content": None},
                                                      "finish_reason": "content_filter"}]}))
    with pytest.raises(HttpCallError, match="withheld the reply \\(finish_reason content_filter\\)"):
        openai(fake_llm, "gpt-4o").invoke(judge_like())


def test_provider_error_fields_are_scrubbed_of_secrets(fake_llm: FakeLLMServer) -> None:
    echo = {"error": {"message": f"Incorrect API key provided: {SECRET}.", "type": "invalid_request_error",
                      "code": f"invalid_api_key:{SECRET}"}}
    fake_llm.enqueue(CHAT, FakeReply.json(echo, status=401))
    with pytest.raises(HttpCallError) as caught:
        openai(fake_llm, "gpt-4o").invoke(judge_like())
    message = str(caught.value)
    assert SECRET not in message and "Incorrect API key provided: ***" in message
    assert caught.value.detail is not None and SECRET not in repr(caught.value.detail)


def test_vllm_style_top_level_error_is_quoted(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(CHAT, FakeReply.json({"object": "error", "message": "This model's maximum context length is 4096",
                                         "type": "BadRequestError", "param": None, "code": 400}, status=400))
    with pytest.raises(HttpCallError, match=r"provider error \(type BadRequestError, code 400\): \"This model's max"):
        openai(fake_llm, "llama").invoke(judge_like())


# ---------------------------------------------------------------- response cache key


def test_cache_key_holds_the_new_parameters_but_not_what_the_run_learned(fake_llm: FakeLLMServer) -> None:
    request = judge_like(max_output_tokens=30, reply_schema=SCHEMA)
    low = openai(fake_llm, "o3", reasoning_effort="low")
    identity = request_identity(low, request)
    assert identity["body"]["max_completion_tokens"] == 30
    assert identity["body"]["reasoning_effort"] == "low"
    assert identity["body"]["response_format"]["type"] == "json_schema"
    assert request_identity(openai(fake_llm, "o3", reasoning_effort="high"), request) != identity
    assert request_identity(openai(fake_llm, "o3", reasoning_effort="low", structured_output=False), request) != identity

    fake_llm.set_default(CHAT, without_json_schema("{}"))
    low.invoke(request)  # learns to leave response_format out ...
    assert "response_format" not in fake_llm.requests[-1].json
    assert request_identity(low, request) == identity  # ... but the cache key is the request as intended
