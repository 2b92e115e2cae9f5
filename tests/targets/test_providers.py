"""HTTP providers against a real loopback server speaking each wire format; no mocked `requests`."""

from __future__ import annotations

from typing import Any

import pytest

from agentv_gate.errors import TargetsConfigError
from agentv_gate.models import Message
from agentv_gate.targets.anthropic import AnthropicProvider
from agentv_gate.targets.azure import AzureOpenAIProvider
from agentv_gate.targets.base import ProviderRequest
from agentv_gate.targets.mock import MockProvider
from agentv_gate.targets.registry import build_provider
from agentv_gate.transport.http_policy import HttpCallError
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply
from tests.helpers.targets import CHAT, FAST, SECRET, openai, target

# ---------------------------------------------------------------- OpenAI-compatible


def test_openai_sends_chat_completion_and_reads_answer(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(CHAT, FakeReply.openai("Paris"))
    response = openai(fake_llm, temperature=0.2).invoke(
        ProviderRequest(question="Capital of France?", system_prompt="Be brief.", max_output_tokens=50)
    )
    assert response.text == "Paris"
    assert response.output_messages[-1].role == "assistant" and response.output_messages[-1].text() == "Paris"
    assert response.token_usage == {"input": 11, "output": 7}
    assert response.retries == 0
    [request] = fake_llm.requests
    assert request.path == CHAT
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    assert request.json == {
        "model": "gpt-test",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Capital of France?"}],
        "temperature": 0.2,
        "max_tokens": 50,
    }


def test_openai_base_url_gets_v1_and_case_messages_are_sent(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(CHAT, FakeReply.openai("ok"))
    provider = openai(fake_llm)
    assert provider.url == f"{fake_llm.url}/v1/chat/completions"
    messages = [
        Message(role="system", content="sys"),
        Message(role="user", content="q1"),
        Message(role="assistant", content="a1"),
        Message(role="tool", content="t"),
        Message(role="user", content=[{"type": "text", "value": "q2"}]),
    ]
    provider.invoke(ProviderRequest(question="ignored", messages=messages, model="override-model"))
    body = fake_llm.requests[0].json
    assert body["model"] == "override-model"
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "user", "user"]
    assert body["messages"][-1]["content"] == "q2"


def test_local_server_needs_no_key(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(CHAT, FakeReply.openai("ok"))
    provider = build_provider(target(provider="ollama", base_url=f"{fake_llm.url}/v1/", model="llama3", **FAST))
    assert provider.invoke(ProviderRequest(question="hi")).text == "ok"
    assert "authorization" not in fake_llm.requests[0].headers


def test_prose_instead_of_json_body_is_an_error(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(CHAT, FakeReply(status=200, body=b"Sure! Here is my answer.", headers={"Content-Type": "text/plain"}))
    with pytest.raises(HttpCallError, match="expected a JSON reply"):
        openai(fake_llm).invoke(ProviderRequest(question="q"))


def test_json_without_choices_is_an_error(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(CHAT, FakeReply.json({"object": "list", "data": []}))
    with pytest.raises(HttpCallError, match=r"choices\[0\]\.message\.content"):
        openai(fake_llm).invoke(ProviderRequest(question="q"))


# ---------------------------------------------------------------- Azure


def test_azure_deployment_url_version_and_key_header(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue("/openai/deployments/my-gpt/chat/completions", FakeReply.openai("azure says hi"))
    provider = build_provider(
        target(
            provider="azure-openai",
            endpoint=fake_llm.url,
            api_key="${{ TEST_API_KEY }}",
            deployment_name="my-gpt",
            version="api-version=2024-10-21",
            **FAST,
        )
    )
    assert isinstance(provider, AzureOpenAIProvider)
    response = provider.invoke(ProviderRequest(question="hello", system_prompt="sys"))
    assert response.text == "azure says hi"
    [request] = fake_llm.requests
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


def test_azure_retries_on_429(fake_llm: FakeLLMServer) -> None:
    path = "/openai/deployments/d/chat/completions"
    fake_llm.enqueue(path, FakeReply.error(429, retry_after="0"), FakeReply.openai("ok"))
    provider = build_provider(
        target(provider="azure", endpoint=f"{fake_llm.url}/openai/", api_key="${{ TEST_API_KEY }}", deployment="d", **FAST)
    )
    assert provider.invoke(ProviderRequest(question="q")).retries == 1


# ---------------------------------------------------------------- Anthropic


def test_anthropic_messages_wire_format(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue("/v1/messages", FakeReply.anthropic("Bonjour"))
    provider = build_provider(
        target(provider="anthropic", base_url=fake_llm.url, api_key="${{ TEST_API_KEY }}", model="claude-test", **FAST)
    )
    assert isinstance(provider, AnthropicProvider)
    response = provider.invoke(ProviderRequest(question="Say hello in French", system_prompt="Judge strictly", temperature=0.0))
    assert response.text == "Bonjour"
    assert response.token_usage == {"input": 13, "output": 5}
    [request] = fake_llm.requests
    assert request.headers["x-api-key"] == SECRET
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.json == {
        "model": "claude-test",
        "max_tokens": 4096,
        "messages": [{"role": "user", "content": "Say hello in French"}],
        "system": "Judge strictly",
        "temperature": 0.0,
    }


def test_anthropic_folds_messages_into_alternating_turns(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue("/v1/messages", FakeReply.anthropic("ok"))
    provider = build_provider(
        target(provider="anthropic", base_url=fake_llm.url, api_key="${{ TEST_API_KEY }}", model="c", thinking_budget=1000,
               **FAST)
    )
    messages = [
        Message(role="system", content="S"),
        Message(role="assistant", content="hello"),
        Message(role="user", content="a"),
        Message(role="user", content="b"),
    ]
    provider.invoke(ProviderRequest(question="", messages=messages, temperature=0.5))
    body = fake_llm.requests[0].json
    assert body["system"] == "S"
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][-1]["content"] == "a\n\nb"
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 1000} and "temperature" not in body


def test_anthropic_500_then_success_and_bad_shape(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(
        "/v1/messages", FakeReply.error(529, "overloaded"), FakeReply.anthropic("ok"), FakeReply.json({"type": "message"})
    )
    provider = build_provider(
        target(provider="anthropic", base_url=fake_llm.url, api_key="${{ TEST_API_KEY }}", model="c", **FAST)
    )
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
    judge = ask(ProviderRequest(question="grade this", eval_case_id="case-1", role="judge"))
    assert judge.text == '{"score": 0.9, "hits": ["ok"], "misses": [], "reasoning": "fine"}'
    assert ask(ProviderRequest(question="grade", eval_case_id="case-9", role="judge")).text == '{"score": 0.1}'
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


# ---------------------------------------------------------------- secrets


def test_providers_never_show_their_key() -> None:
    for kind, extra in (("openai", {}), ("azure", {"endpoint": "r"}), ("anthropic", {}), ("gemini", {})):
        provider = build_provider(target(provider=kind, api_key="${{ TEST_API_KEY }}", model="m", **extra))
        assert SECRET not in repr(provider)
        assert SECRET not in repr(provider.target)


def test_missing_key_names_the_variable_not_a_value() -> None:
    with pytest.raises(TargetsConfigError) as caught:
        build_provider(target(provider="anthropic", api_key="${{ UNSET_KEY_FOR_TEST }}", model="m"))
    assert "UNSET_KEY_FOR_TEST" in str(caught.value) and "api_key" in str(caught.value)
