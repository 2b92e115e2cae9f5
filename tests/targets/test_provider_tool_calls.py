"""Tool calls in the HTTP providers' replies become AgentV's `tool_calls` on the answer message.

OpenAI and Azure send `choices[0].message.tool_calls[{id, function: {name, arguments}}]` (arguments a
JSON string), Anthropic `content[{type: tool_use, id, name, input}]`; all three come out as
`{tool, input, id}`, which `tool_trajectory` and code judges read. Real loopback servers throughout.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentv_gate.targets.base import ProviderRequest
from agentv_gate.targets.config import RawTarget, resolve_target
from agentv_gate.targets.registry import build_provider
from tests.helpers.cli import run_cli
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply
from tests.helpers.files import make_repo, write
from tests.helpers.reports import RESULTS, read_rows

FAST = {"retry_initial_delay_ms": 1, "retry_max_delay_ms": 5, "retry_jitter_ms": 1, "timeout_seconds": 5}
SECRET = "sk-tool-calls-SECRET-42"


def openai_tool_reply(*calls: tuple[str, str]) -> FakeReply:
    return FakeReply.json({
        "id": "chatcmpl-tools", "model": "fake-model",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": None,
            "tool_calls": [{"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": arguments}}
                           for i, (name, arguments) in enumerate(calls)]}}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 9}})


def provider_for(server: FakeLLMServer, **data: Any) -> Any:
    data = {"name": "t", "api_key": "${{ KEY }}", **FAST, **data}
    return build_provider(resolve_target(RawTarget(name="t", data=data), {"KEY": SECRET}))


def test_openai_tool_calls_are_mapped_with_decoded_arguments() -> None:
    with FakeLLMServer() as server:
        server.enqueue("/v1/chat/completions",
                       openai_tool_reply(("search", '{"query": "refunds", "limit": 3}'), ("broken", "{not json")))
        response = provider_for(server, provider="openai", base_url=server.url, model="m").invoke(
            ProviderRequest(question="q"))
    [message] = response.output_messages
    assert message.model_dump()["tool_calls"] == [
        {"tool": "search", "input": {"query": "refunds", "limit": 3}, "id": "call_0"},
        {"tool": "broken", "input": "{not json", "id": "call_1"},  # kept as sent: a malformed call is seen
    ]
    assert response.text == "" and response.token_usage == {"input": 20, "output": 9}


def test_azure_tool_calls_are_mapped() -> None:
    with FakeLLMServer() as server:
        server.enqueue("/openai/deployments/d/chat/completions", openai_tool_reply(("lookup", '{"id": 7}')))
        response = provider_for(server, provider="azure", endpoint=server.url, deployment="d").invoke(
            ProviderRequest(question="q"))
    assert response.output_messages[0].model_dump()["tool_calls"] == [{"tool": "lookup", "input": {"id": 7},
                                                                      "id": "call_0"}]


def test_anthropic_tool_use_blocks_are_mapped() -> None:
    with FakeLLMServer() as server:
        server.enqueue("/v1/messages", FakeReply.json({
            "id": "msg_1", "model": "claude-fake", "stop_reason": "tool_use",
            "content": [{"type": "text", "text": "Let me look."},
                        {"type": "tool_use", "id": "toolu_1", "name": "search", "input": {"query": "refunds"}}],
            "usage": {"input_tokens": 5, "output_tokens": 6}}))
        response = provider_for(server, provider="anthropic", base_url=server.url, model="m").invoke(
            ProviderRequest(question="q"))
    [message] = response.output_messages
    assert response.text == "Let me look."
    assert message.model_dump()["tool_calls"] == [{"tool": "search", "input": {"query": "refunds"}, "id": "toolu_1"}]


def test_a_plain_reply_has_no_tool_calls_key() -> None:
    with FakeLLMServer() as server:
        server.enqueue("/v1/chat/completions", FakeReply.openai("hi"))
        response = provider_for(server, provider="openai", base_url=server.url, model="m").invoke(
            ProviderRequest(question="q"))
    assert response.output_messages[0].model_dump() == {"role": "assistant", "content": "hi"}


@pytest.mark.parametrize(("arguments", "verdict"), [('{"query": "refunds"}', "pass"), ('{"query": "other"}', "fail")])
def test_trajectory_of_an_openai_target_through_the_cli(repo: Path, fake_llm: FakeLLMServer, arguments: str,
                                                        verdict: str) -> None:
    fake_llm.set_default("/v1/chat/completions", openai_tool_reply(("search", arguments)))
    make_repo(repo, f"""
        targets:
          - name: default
            provider: openai
            base_url: {fake_llm.url}
            model: agent-model
            api_key: ${{{{ AGENT_KEY }}}}
            max_retries: 0
    """)
    write(repo / "evals/tools.eval.yaml", """
        tests:
          - id: refund
            input: Find the refund policy
            assert:
              - {name: searches, type: tool-trajectory, mode: exact, expected: [{tool: search, args: {query: refunds}}]}
    """)
    proc = run_cli("run", "evals", "--no-cache", cwd=repo, env={"AGENT_KEY": SECRET}, timeout=120)
    assert proc.returncode == (0 if verdict == "pass" else 1), proc.stdout + proc.stderr
    [row] = read_rows(repo / RESULTS)
    assert row["verdict"] == verdict
    assert SECRET not in (repo / RESULTS).read_text()
