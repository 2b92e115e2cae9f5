"""`api_format` on an openai target (AgentV 4.x): `chat` runs as chat completions, `responses` is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentv_gate.errors import TargetsConfigError
from agentv_gate.targets.base import ProviderRequest
from agentv_gate.targets.config import parse_targets
from agentv_gate.targets.registry import build_provider
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply
from tests.helpers.targets import CHAT, FAST, openai, target


def _problems(entry: str) -> list[tuple[int, str]]:
    text = f"targets:\n  - name: a\n    provider: {entry}\n    base_url: http://127.0.0.1:9/v1\n    model: m\n"
    return [(p.line, p.message) for p in parse_targets(text, Path("t.yaml")).key_problems]


def test_api_format_chat_is_read_and_sends_chat_completions(fake_llm: FakeLLMServer) -> None:
    assert _problems("openai\n    api_format: chat") == []
    fake_llm.enqueue(CHAT, FakeReply.openai("Paris"))
    assert openai(fake_llm, api_format="chat").invoke(ProviderRequest(question="Capital?")).text == "Paris"
    assert fake_llm.requests[0].path == CHAT


@pytest.mark.parametrize(("entry", "message"), [
    ("openai\n    api_format: responses", "'api_format: responses' is an AgentV feature agentv-gate does not run yet"),
    ("openai\n    apiFormat: chatt", "'apiFormat' in target 'a' must be 'chat' or 'responses', got 'chatt'"),
    ("azure\n    api_format: chat", "unknown key 'api_format' in target 'a'"),
])
def test_api_format_other_than_chat_is_refused_at_its_line(entry: str, message: str) -> None:
    [(line, said)] = [p for p in _problems(entry) if "api_format" in p[1].lower() or "apiformat" in p[1].lower()]
    assert line == 4 and said.startswith(message)


def test_api_format_from_the_environment_is_checked_when_resolved() -> None:
    """A `${{ VAR }}` is unknown at load; once it reads `responses`, the provider refuses to be built."""
    assert _problems("openai\n    api_format: ${{ FORMAT }}") == []
    resolved = target(provider="openai", base_url="http://127.0.0.1:9/v1", model="m", api_format="responses", **FAST)
    with pytest.raises(TargetsConfigError, match="the OpenAI Responses API"):
        build_provider(resolved)
