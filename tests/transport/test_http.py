"""The HTTP client every provider and LLM judge calls through: what it retries, how long it waits, what it reports.

Against a real loopback server (`fake_llm`), first through an OpenAI-compatible provider as a run
uses it, then `http_call` / `post_json` and `RetryPolicy` directly.
"""

from __future__ import annotations

import pytest

from agentv_gate.errors import ProviderError
from agentv_gate.targets.base import ProviderRequest
from agentv_gate.targets.http_settings import retry_policy_from_settings
from agentv_gate.targets.registry import build_provider
from agentv_gate.transport.http_policy import HttpCallError, RetryPolicy, http_call, parse_retry_after, post_json
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply
from tests.helpers.targets import CHAT, FAST, SECRET, openai, target

# ---------------------------------------------------------------- retries, through a provider


def test_429_with_retry_after_is_retried_and_counted(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(CHAT, FakeReply.error(429, "slow down", retry_after="0"), FakeReply.openai("fine"))
    response = openai(fake_llm).invoke(ProviderRequest(question="q"))
    assert response.text == "fine"
    assert response.retries == 1
    assert len(fake_llm.requests) == 2


def test_500_then_success(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(CHAT, FakeReply.error(500), FakeReply.error(503), FakeReply.openai("fine"))
    response = openai(fake_llm).invoke(ProviderRequest(question="q"))
    assert (response.text, response.retries) == ("fine", 2)


def test_hang_past_timeout_is_retried(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(CHAT, FakeReply.hang(5), FakeReply.openai("second try"))
    response = openai(fake_llm, timeout_seconds=0.2).invoke(ProviderRequest(question="q"))
    assert (response.text, response.retries) == ("second try", 1)


def test_retries_are_bounded_and_reported(fake_llm: FakeLLMServer) -> None:
    fake_llm.set_default(CHAT, FakeReply.error(502, "bad gateway"))
    with pytest.raises(HttpCallError) as caught:
        openai(fake_llm, max_retries=2).invoke(ProviderRequest(question="q"))
    assert caught.value.retries == 2
    assert caught.value.status == 502
    assert len(fake_llm.requests) == 3
    assert "failed after 3 attempt(s)" in str(caught.value) and "bad gateway" in str(caught.value)


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_client_errors_are_not_retried_and_secrets_never_leak(fake_llm: FakeLLMServer, status: int) -> None:
    fake_llm.enqueue(CHAT, FakeReply.error(status, f"Incorrect API key provided: {SECRET}"))
    with pytest.raises(ProviderError) as caught:
        openai(fake_llm).invoke(ProviderRequest(question="q"))
    assert len(fake_llm.requests) == 1
    assert getattr(caught.value, "retries", None) == 0
    assert f"HTTP {status}" in str(caught.value)
    assert SECRET not in str(caught.value) and "***" in str(caught.value)


def test_408_is_retried(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(CHAT, FakeReply.error(408), FakeReply.openai("ok"))
    assert openai(fake_llm).invoke(ProviderRequest(question="q")).retries == 1


def test_custom_retry_status_codes_replace_the_default(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(CHAT, FakeReply.error(409), FakeReply.openai("ok"))
    assert openai(fake_llm, retry_status_codes=[409]).invoke(ProviderRequest(question="q")).retries == 1
    fake_llm.enqueue(CHAT, FakeReply.error(500))
    with pytest.raises(HttpCallError):
        openai(fake_llm, retry_status_codes=[409]).invoke(ProviderRequest(question="q"))


def test_retry_after_longer_than_cap_is_capped(fake_llm: FakeLLMServer) -> None:
    # Uncapped, a 100 s Retry-After would not fit the 5 s budget and the call would give up.
    fake_llm.enqueue(CHAT, FakeReply.error(429, retry_after="100"), FakeReply.openai("ok"))
    response = openai(fake_llm, retry_after_max_seconds=0.01, retry_max_total_seconds=5).invoke(ProviderRequest(question="q"))
    assert (response.text, response.retries) == ("ok", 1)


def test_retry_after_is_honoured_over_backoff(fake_llm: FakeLLMServer) -> None:
    # Backoff would wait ~1 ms; the server's 30 s Retry-After does not fit a 2 s budget: no retry.
    fake_llm.enqueue(CHAT, FakeReply.error(429, retry_after="30"), FakeReply.openai("never reached"))
    with pytest.raises(HttpCallError) as caught:
        openai(fake_llm, retry_max_total_seconds=2).invoke(ProviderRequest(question="q"))
    assert caught.value.retries == 0 and caught.value.status == 429
    assert len(fake_llm.requests) == 1


def test_connection_refused_is_retried_then_reported() -> None:
    with FakeLLMServer() as srv:
        url = srv.url
    provider = build_provider(target(provider="openai", base_url=url, model="m", max_retries=1, **FAST))
    with pytest.raises(HttpCallError, match="connection failed") as caught:
        provider.invoke(ProviderRequest(question="q"))
    assert caught.value.retries == 1


# ---------------------------------------------------------------- the client


def test_parse_retry_after_forms() -> None:
    assert parse_retry_after({"Retry-After": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "250", "Retry-After": "9"}) == 0.25
    assert parse_retry_after({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # in the past
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None


def test_policy_from_agentv_keys() -> None:
    policy = retry_policy_from_settings(
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
        retry_policy_from_settings({"max_retries": "lots"})


def test_http_call_get_without_json(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue("/health", FakeReply(status=200, body=b"OK"))
    result = http_call("GET", f"{fake_llm.url}/health", expect_json=False, policy=RetryPolicy(request_timeout_seconds=1))
    assert result.data == "OK" and fake_llm.requests[0].method == "GET"


def test_post_json_scrubs_secrets_from_connection_messages(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue("/x", FakeReply.error(418, f"teapot {SECRET}"))
    with pytest.raises(HttpCallError) as caught:
        post_json(f"{fake_llm.url}/x", {"a": 1}, secrets=[SECRET], describe="probe")
    assert str(caught.value).startswith("probe: HTTP 418") and SECRET not in str(caught.value)
