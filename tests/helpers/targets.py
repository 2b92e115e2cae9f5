"""Targets built the way a targets.yaml entry is (resolved against an environment), for wire and retry tests.

`FAST` keeps retries and timeouts short, so a test of retrying a hang or a 5xx takes milliseconds.
"""

from __future__ import annotations

from typing import Any

from agentv_gate.targets.config import RawTarget, TargetConfig, resolve_target
from agentv_gate.targets.openai_compat import OpenAICompatProvider
from agentv_gate.targets.registry import build_provider
from tests.helpers.fake_llm_server import FakeLLMServer

SECRET = "sk-test-SECRET-0123456789"
"""The value of TEST_API_KEY: `api_key: ${{ TEST_API_KEY }}` resolves to it, and no message may show it."""
CHAT = "/v1/chat/completions"
RESPONSES = "/v1/responses"
FAST = {"retry_initial_delay_ms": 1, "retry_max_delay_ms": 5, "retry_jitter_ms": 1, "timeout_seconds": 0.3}


def target(**data: Any) -> TargetConfig:
    """One targets.yaml entry (`name` defaults to "t"), resolved with TEST_API_KEY set to SECRET."""
    env = {"TEST_API_KEY": SECRET}
    data.setdefault("name", "t")
    return resolve_target(RawTarget(name=data["name"], data=data), env)


def openai(server: FakeLLMServer, **extra: Any) -> OpenAICompatProvider:
    """An OpenAI-compatible provider talking to `server`, with FAST retries unless `extra` says otherwise."""
    provider = build_provider(
        target(provider="openai", base_url=server.url, api_key="${{ TEST_API_KEY }}", model="gpt-test", **{**FAST, **extra})
    )
    assert isinstance(provider, OpenAICompatProvider)
    return provider
