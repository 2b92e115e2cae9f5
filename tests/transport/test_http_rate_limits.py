"""How the HTTP client treats a 429 now that each target has a rate limiter: waited out within
the time budget, not counted against `max_retries`, shared by every call of the target."""

from __future__ import annotations

import pytest

from agentv_gate.targets.base import ProviderRequest
from agentv_gate.transport.http_policy import HttpCallError
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply
from tests.helpers.targets import CHAT, openai


def quota_exhausted() -> FakeReply:
    return FakeReply.json({"error": {"message": "You exceeded your current quota, please check your plan.",
                                     "type": "insufficient_quota", "param": None, "code": "insufficient_quota"}},
                          status=429)


def test_429s_do_not_use_up_max_retries(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(CHAT, *[FakeReply.error(429, retry_after="0")] * 5, FakeReply.openai("waited"))
    response = openai(fake_llm, max_retries=0).invoke(ProviderRequest(question="q"))
    assert (response.text, response.retries) == ("waited", 5)


def test_other_failures_still_count_between_429s(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(CHAT, FakeReply.error(429, retry_after="0"), FakeReply.error(500), FakeReply.error(502))
    with pytest.raises(HttpCallError) as caught:
        openai(fake_llm, max_retries=1).invoke(ProviderRequest(question="q"))
    assert caught.value.status == 502 and len(fake_llm.requests) == 3


def test_a_429_wait_past_the_budget_fails_and_says_so(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(CHAT, FakeReply.error(429, retry_after="30"))
    with pytest.raises(HttpCallError) as caught:
        openai(fake_llm, retry_max_total_seconds=2).invoke(ProviderRequest(question="q"))
    assert "past retry_max_total_seconds (2s)" in str(caught.value)


def test_one_429_pauses_the_next_call_of_the_same_target(fake_llm: FakeLLMServer) -> None:
    provider = openai(fake_llm, retry_max_total_seconds=2)
    fake_llm.enqueue(CHAT, FakeReply.error(429, retry_after="30"))
    with pytest.raises(HttpCallError):
        provider.invoke(ProviderRequest(question="first"))
    fake_llm.enqueue(CHAT, FakeReply.openai("never sent"))
    with pytest.raises(HttpCallError, match="no slot under the target's rate limit") as caught:
        provider.invoke(ProviderRequest(question="second"))  # another call: the target is paused for 30 s
    assert caught.value.status is None and len(fake_llm.requests) == 1
    assert provider.limiter.stats.rate_limited == 1 and provider.limiter.stats.calls == 1


def test_insufficient_quota_is_not_waited_for(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(CHAT, quota_exhausted(), FakeReply.openai("never sent"))
    provider = openai(fake_llm)
    with pytest.raises(HttpCallError, match="quota is used up, which waiting will not change") as caught:
        provider.invoke(ProviderRequest(question="q"))
    assert caught.value.status == 429 and caught.value.retries == 0 and len(fake_llm.requests) == 1
    assert provider.limiter.pause_remaining() == 0


@pytest.mark.parametrize("error", [
    {"message": "quota", "type": "insufficient_quota", "code": None},  # the form OpenAI-compatible servers send
    {"message": "quota", "type": "requests", "code": "insufficient_quota"},
])
def test_insufficient_quota_in_either_the_type_or_the_code_is_not_waited_for(fake_llm: FakeLLMServer,
                                                                            error: dict[str, object]) -> None:
    fake_llm.enqueue(CHAT, FakeReply.json({"error": error}, status=429), FakeReply.openai("never sent"))
    with pytest.raises(HttpCallError, match="quota is used up, which waiting will not change") as caught:
        openai(fake_llm).invoke(ProviderRequest(question="q"))
    assert caught.value.retries == 0 and len(fake_llm.requests) == 1


def test_a_429_of_another_type_is_waited_out(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(CHAT, FakeReply.json({"error": {"message": "slow down", "type": "requests", "code": "rate_limit"}},
                                          status=429, headers={"Retry-After": "0"}), FakeReply.openai("waited"))
    response = openai(fake_llm).invoke(ProviderRequest(question="q"))
    assert (response.text, response.retries) == ("waited", 1)
