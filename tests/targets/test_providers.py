"""HTTP providers against a real loopback server speaking each wire format; no mocked `requests`."""

from __future__ import annotations

from typing import Any

import pytest

from agentv_gate.errors import ProviderError, TargetsConfigError
from agentv_gate.models import Message
from agentv_gate.targets.anthropic import AnthropicProvider
from agentv_gate.targets.azure import AzureOpenAIProvider
from agentv_gate.targets.base import ProviderRequest
from agentv_gate.targets.config import RawTarget, TargetConfig, resolve_target
from agentv_gate.targets.mock import MockProvider
from agentv_gate.targets.openai_compat import OpenAICompatProvider
from agentv_gate.targets.registry import build_provider
from agentv_gate.transport.http import HttpCallError, RetryPolicy, http_call, parse_retry_after, post_json
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply

SECRET = "sk-test-SECRET-0123456789"
CHAT = "/v1/chat/completions"
FAST = {"retry_initial_delay_ms": 1, "retry_max_delay_ms": 5, "retry_jitter_ms": 1, "timeout_seconds": 0.3}


def target(**data: Any) -> TargetConfig:
    env = {"TEST_API_KEY": SECRET}
    data.setdefault("name", "t")
    return resolve_target(RawTarget(name=data["name"], data=data), env)


@pytest.fixture
def server():
    with FakeLLMServer() as srv:
        yield srv


def openai(server: FakeLLMServer, **extra: Any) -> OpenAICompatProvider:
    provider = build_provider(
        target(provider="openai", base_url=server.url, api_key="${{ TEST_API_KEY }}", model="gpt-test", **{**FAST, **extra})
    )
    assert isinstance(provider, OpenAICompatProvider)
    return provider


# ---------------------------------------------------------------- OpenAI-compatible


def test_openai_sends_chat_completion_and_reads_answer(server: FakeLLMServer) -> None:
    server.enqueue(CHAT, FakeReply.openai("Paris"))
    response = openai(server, temperature=0.2).invoke(
        ProviderRequest(question="Capital of France?", system_prompt="Be brief.", max_output_tokens=50)
    )
    assert response.text == "Paris"
    assert response.output_messages[-1].role == "assistant" and response.output_messages[-1].text() == "Paris"
    assert response.token_usage == {"input": 11, "output": 7}
    assert response.retries == 0
    [request] = server.requests
    assert request.path == CHAT
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    assert request.json == {
        "model": "gpt-test",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Capital of France?"}],
        "temperature": 0.2,
        "max_tokens": 50,
    }


def test_openai_base_url_gets_v1_and_case_messages_are_sent(server: FakeLLMServer) -> None:
    server.enqueue(CHAT, FakeReply.openai("ok"))
    provider = openai(server)
    assert provider.url == f"{server.url}/v1/chat/completions"
    messages = [
        Message(role="system", content="sys"),
        Message(role="user", content="q1"),
        Message(role="assistant", content="a1"),
        Message(role="tool", content="t"),
        Message(role="user", content=[{"type": "text", "value": "q2"}]),
    ]
    provider.invoke(ProviderRequest(question="ignored", messages=messages, model="override-model"))
    body = server.requests[0].json
    assert body["model"] == "override-model"
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "user", "user"]
    assert body["messages"][-1]["content"] == "q2"


def test_local_server_needs_no_key(server: FakeLLMServer) -> None:
    server.enqueue(CHAT, FakeReply.openai("ok"))
    provider = build_provider(target(provider="ollama", base_url=f"{server.url}/v1/", model="llama3", **FAST))
    assert provider.invoke(ProviderRequest(question="hi")).text == "ok"
    assert "authorization" not in server.requests[0].headers


def test_429_with_retry_after_is_retried_and_counted(server: FakeLLMServer) -> None:
    server.enqueue(CHAT, FakeReply.error(429, "slow down", retry_after="0"), FakeReply.openai("fine"))
    response = openai(server).invoke(ProviderRequest(question="q"))
    assert response.text == "fine"
    assert response.retries == 1
    assert len(server.requests) == 2


def test_500_then_success(server: FakeLLMServer) -> None:
    server.enqueue(CHAT, FakeReply.error(500), FakeReply.error(503), FakeReply.openai("fine"))
    response = openai(server).invoke(ProviderRequest(question="q"))
    assert (response.text, response.retries) == ("fine", 2)


def test_hang_past_timeout_is_retried(server: FakeLLMServer) -> None:
    server.enqueue(CHAT, FakeReply.hang(5), FakeReply.openai("second try"))
    response = openai(server, timeout_seconds=0.2).invoke(ProviderRequest(question="q"))
    assert (response.text, response.retries) == ("second try", 1)


def test_retries_are_bounded_and_reported(server: FakeLLMServer) -> None:
    server.set_default(CHAT, FakeReply.error(502, "bad gateway"))
    with pytest.raises(HttpCallError) as caught:
        openai(server, max_retries=2).invoke(ProviderRequest(question="q"))
    assert caught.value.retries == 2
    assert caught.value.status == 502
    assert len(server.requests) == 3
    assert "failed after 3 attempt(s)" in str(caught.value) and "bad gateway" in str(caught.value)


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_client_errors_are_not_retried_and_secrets_never_leak(server: FakeLLMServer, status: int) -> None:
    server.enqueue(CHAT, FakeReply.error(status, f"Incorrect API key provided: {SECRET}"))
    with pytest.raises(ProviderError) as caught:
        openai(server).invoke(ProviderRequest(question="q"))
    assert len(server.requests) == 1
    assert getattr(caught.value, "retries", None) == 0
    assert f"HTTP {status}" in str(caught.value)
    assert SECRET not in str(caught.value) and "***" in str(caught.value)


def test_408_is_retried(server: FakeLLMServer) -> None:
    server.enqueue(CHAT, FakeReply.error(408), FakeReply.openai("ok"))
    assert openai(server).invoke(ProviderRequest(question="q")).retries == 1


def test_custom_retry_status_codes_replace_the_default(server: FakeLLMServer) -> None:
    server.enqueue(CHAT, FakeReply.error(409), FakeReply.openai("ok"))
    assert openai(server, retry_status_codes=[409]).invoke(ProviderRequest(question="q")).retries == 1
    server.enqueue(CHAT, FakeReply.error(500))
    with pytest.raises(HttpCallError):
        openai(server, retry_status_codes=[409]).invoke(ProviderRequest(question="q"))


def test_retry_after_longer_than_cap_is_capped(server: FakeLLMServer) -> None:
    # Uncapped, a 100 s Retry-After would not fit the 5 s budget and the call would give up.
    server.enqueue(CHAT, FakeReply.error(429, retry_after="100"), FakeReply.openai("ok"))
    response = openai(server, retry_after_max_seconds=0.01, retry_max_total_seconds=5).invoke(ProviderRequest(question="q"))
    assert (response.text, response.retries) == ("ok", 1)


def test_retry_after_is_honoured_over_backoff(server: FakeLLMServer) -> None:
    # Backoff would wait ~1 ms; the server's 30 s Retry-After does not fit a 2 s budget: no retry.
    server.enqueue(CHAT, FakeReply.error(429, retry_after="30"), FakeReply.openai("never reached"))
    with pytest.raises(HttpCallError) as caught:
        openai(server, retry_max_total_seconds=2).invoke(ProviderRequest(question="q"))
    assert caught.value.retries == 0 and caught.value.status == 429
    assert len(server.requests) == 1


def test_prose_instead_of_json_body_is_an_error(server: FakeLLMServer) -> None:
    server.enqueue(CHAT, FakeReply(status=200, body=b"Sure! Here is my answer.", headers={"Content-Type": "text/plain"}))
    with pytest.raises(HttpCallError, match="expected a JSON reply"):
        openai(server).invoke(ProviderRequest(question="q"))


def test_json_without_choices_is_an_error(server: FakeLLMServer) -> None:
    server.enqueue(CHAT, FakeReply.json({"object": "list", "data": []}))
    with pytest.raises(HttpCallError, match=r"choices\[0\]\.message\.content"):
        openai(server).invoke(ProviderRequest(question="q"))


def test_connection_refused_is_retried_then_reported() -> None:
    with FakeLLMServer() as srv:
        url = srv.url
    provider = build_provider(target(provider="openai", base_url=url, model="m", max_retries=1, **FAST))
    with pytest.raises(HttpCallError, match="connection failed") as caught:
        provider.invoke(ProviderRequest(question="q"))
    assert caught.value.retries == 1


# ---------------------------------------------------------------- Azure


def test_azure_deployment_url_version_and_key_header(server: FakeLLMServer) -> None:
    server.enqueue("/openai/deployments/my-gpt/chat/completions", FakeReply.openai("azure says hi"))
    provider = build_provider(
        target(
            provider="azure-openai",
            endpoint=server.url,
            api_key="${{ TEST_API_KEY }}",
            deployment_name="my-gpt",
            version="api-version=2024-10-21",
            **FAST,
        )
    )
    assert isinstance(provider, AzureOpenAIProvider)
    response = provider.invoke(ProviderRequest(question="hello", system_prompt="sys"))
    assert response.text == "azure says hi"
    [request] = server.requests
    assert request.query == {"api-version": ["2024-10-21"]}
    assert request.headers["api-key"] == SECRET
    assert "authorization" not in request.headers
    assert request.json["messages"][0] == {"role": "system", "content": "sys"}
    assert "model" not in request.json


def test_azure_defaults_and_resource_name() -> None:
    provider = build_provider(target(provider="azure", endpoint="myres", api_key="${{ TEST_API_KEY }}", model="dep"))
    assert isinstance(provider, AzureOpenAIProvider)
    assert provider.url == (
        "https://myres.openai.azure.com/openai/deployments/dep/chat/completions?api-version=2024-12-01-preview"
    )


def test_azure_retries_on_429(server: FakeLLMServer) -> None:
    path = "/openai/deployments/d/chat/completions"
    server.enqueue(path, FakeReply.error(429, retry_after="0"), FakeReply.openai("ok"))
    provider = build_provider(
        target(provider="azure", endpoint=f"{server.url}/openai/", api_key="${{ TEST_API_KEY }}", deployment="d", **FAST)
    )
    assert provider.invoke(ProviderRequest(question="q")).retries == 1


# ---------------------------------------------------------------- Anthropic


def test_anthropic_messages_wire_format(server: FakeLLMServer) -> None:
    server.enqueue("/v1/messages", FakeReply.anthropic("Bonjour"))
    provider = build_provider(
        target(provider="anthropic", base_url=server.url, api_key="${{ TEST_API_KEY }}", model="claude-test", **FAST)
    )
    assert isinstance(provider, AnthropicProvider)
    response = provider.invoke(ProviderRequest(question="Say hello in French", system_prompt="Judge strictly", temperature=0.0))
    assert response.text == "Bonjour"
    assert response.token_usage == {"input": 13, "output": 5}
    [request] = server.requests
    assert request.headers["x-api-key"] == SECRET
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.json == {
        "model": "claude-test",
        "max_tokens": 4096,
        "messages": [{"role": "user", "content": "Say hello in French"}],
        "system": "Judge strictly",
        "temperature": 0.0,
    }


def test_anthropic_folds_messages_into_alternating_turns(server: FakeLLMServer) -> None:
    server.enqueue("/v1/messages", FakeReply.anthropic("ok"))
    provider = build_provider(
        target(provider="anthropic", base_url=server.url, api_key="${{ TEST_API_KEY }}", model="c", thinking_budget=1000, **FAST)
    )
    messages = [
        Message(role="system", content="S"),
        Message(role="assistant", content="hello"),
        Message(role="user", content="a"),
        Message(role="user", content="b"),
    ]
    provider.invoke(ProviderRequest(question="", messages=messages, temperature=0.5))
    body = server.requests[0].json
    assert body["system"] == "S"
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][-1]["content"] == "a\n\nb"
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 1000} and "temperature" not in body


def test_anthropic_500_then_success_and_bad_shape(server: FakeLLMServer) -> None:
    server.enqueue(
        "/v1/messages", FakeReply.error(529, "overloaded"), FakeReply.anthropic("ok"), FakeReply.json({"type": "message"})
    )
    provider = build_provider(target(provider="anthropic", base_url=server.url, api_key="${{ TEST_API_KEY }}", model="c", **FAST))
    assert provider.invoke(ProviderRequest(question="q")).retries == 1
    with pytest.raises(HttpCallError, match="'content' list"):
        provider.invoke(ProviderRequest(question="q"))


# ---------------------------------------------------------------- mock


def test_mock_static_per_case_and_judge_answers() -> None:
    provider = build_provider(
        target(
            provider="mock",
            response="default answer",
            responses=[
                {"id": "case-2", "response": "two"},
                {"contains": "Spain", "response": "Madrid"},
                {"regex": "(?i)planet", "response": {"answer": "Jupiter"}},
                {"id": "case-9", "judge_response": {"score": 0.1}},
            ],
            judge_response={"score": 0.9, "hits": ["ok"], "misses": [], "reasoning": "fine"},
            delay_ms=1,
        )
    )
    assert isinstance(provider, MockProvider)
    ask = provider.invoke
    assert ask(ProviderRequest(question="anything", eval_case_id="case-1")).text == "default answer"
    assert ask(ProviderRequest(question="anything", eval_case_id="case-2")).text == "two"
    assert ask(ProviderRequest(question="Capital of Spain?", eval_case_id="x")).text == "Madrid"
    assert ask(ProviderRequest(question="Largest PLANET?")).text == '{"answer": "Jupiter"}'
    judge = ask(ProviderRequest(question="grade this", eval_case_id="case-1", extra={"role": "judge"}))
    assert judge.text == '{"score": 0.9, "hits": ["ok"], "misses": [], "reasoning": "fine"}'
    assert ask(ProviderRequest(question="grade", eval_case_id="case-9", extra={"role": "judge"})).text == '{"score": 0.1}'
    assert ask(ProviderRequest(question="q", eval_case_id="case-9")).text == "default answer"
    assert ask(ProviderRequest(question="q")).output_messages[0].role == "assistant"


def test_mock_defaults_and_mapping_form() -> None:
    assert "Mock provider response" in build_provider(target(provider="mock")).invoke(ProviderRequest(question="")).text
    provider = build_provider(target(provider="mock", responses={"a": "A"}))
    assert provider.invoke(ProviderRequest(question="", eval_case_id="a")).text == "A"


@pytest.mark.parametrize(
    "bad",
    [
        {"responses": [{"contains": "x"}]},
        {"responses": [{"response": "x"}]},
        {"responses": [{"regex": "(", "response": "x"}]},
        {"responses": "nope"},
        {"delay_ms": -1},
    ],
)
def test_mock_bad_config_is_a_clear_error(bad: dict[str, Any]) -> None:
    with pytest.raises(TargetsConfigError, match="mock target 't'"):
        build_provider(target(provider="mock", **bad))


# ---------------------------------------------------------------- client and secrets


def test_providers_never_show_their_key() -> None:
    for kind, extra in (("openai", {}), ("azure", {"endpoint": "r"}), ("anthropic", {}), ("gemini", {})):
        provider = build_provider(target(provider=kind, api_key="${{ TEST_API_KEY }}", model="m", **extra))
        assert SECRET not in repr(provider)
        assert SECRET not in repr(provider.target)


def test_missing_key_names_the_variable_not_a_value() -> None:
    with pytest.raises(TargetsConfigError) as caught:
        build_provider(target(provider="anthropic", api_key="${{ UNSET_KEY_FOR_TEST }}", model="m"))
    assert "UNSET_KEY_FOR_TEST" in str(caught.value) and "api_key" in str(caught.value)


def test_parse_retry_after_forms() -> None:
    assert parse_retry_after({"Retry-After": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "250", "Retry-After": "9"}) == 0.25
    assert parse_retry_after({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # in the past
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None


def test_policy_from_agentv_keys() -> None:
    policy = RetryPolicy.from_settings(
        {
            "max_retries": 5,
            "retry_initial_delay_ms": 200,
            "retry_max_delay_ms": 800,
            "retry_backoff_factor": 3,
            "retry_status_codes": [429],
        }
    )
    assert (policy.max_attempts, policy.initial_delay_seconds, policy.max_delay_seconds) == (6, 0.2, 0.8)
    assert policy.backoff_factor == 3 and policy.is_retryable_status(429) and not policy.is_retryable_status(500)
    assert RetryPolicy().is_retryable_status(503) and not RetryPolicy().is_retryable_status(404)
    with pytest.raises(ValueError, match="max_retries"):
        RetryPolicy.from_settings({"max_retries": "lots"})


def test_http_call_get_without_json(server: FakeLLMServer) -> None:
    server.enqueue("/health", FakeReply(status=200, body=b"OK"))
    result = http_call("GET", f"{server.url}/health", expect_json=False, policy=RetryPolicy(request_timeout_seconds=1))
    assert result.data == "OK" and server.requests[0].method == "GET"


def test_post_json_scrubs_secrets_from_connection_messages(server: FakeLLMServer) -> None:
    server.enqueue("/x", FakeReply.error(418, f"teapot {SECRET}"))
    with pytest.raises(HttpCallError) as caught:
        post_json(f"{server.url}/x", {"a": 1}, secrets=[SECRET], describe="probe")
    assert str(caught.value).startswith("probe: HTTP 418") and SECRET not in str(caught.value)
