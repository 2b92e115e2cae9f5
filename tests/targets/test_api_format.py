"""`api_format` on an openai target (AgentV 4.x): `chat` sends chat completions, `responses` the Responses API."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agentv_gate.errors import TargetsConfigError
from agentv_gate.models import Message
from agentv_gate.targets.base import ProviderRequest
from agentv_gate.targets.config import parse_targets
from agentv_gate.targets.openai_responses import OpenAIResponsesProvider
from agentv_gate.targets.registry import build_provider
from agentv_gate.transport.http_policy import HttpCallError
from tests.helpers.cli import run_cli
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply, responses_model
from tests.helpers.files import make_repo, write
from tests.helpers.reports import read_rows
from tests.helpers.targets import CHAT, FAST, RESPONSES, SECRET, openai, target


def _problems(entry: str) -> list[tuple[int, str]]:
    text = f"targets:\n  - name: a\n    provider: {entry}\n    base_url: http://127.0.0.1:9/v1\n    model: m\n"
    return [(p.line, p.message) for p in parse_targets(text, Path("t.yaml")).key_problems]


def test_api_format_chat_is_read_and_sends_chat_completions(fake_llm: FakeLLMServer) -> None:
    assert _problems("openai\n    api_format: chat") == []
    fake_llm.enqueue(CHAT, FakeReply.openai("Paris"))
    assert openai(fake_llm, api_format="chat").invoke(ProviderRequest(question="Capital?")).text == "Paris"
    assert fake_llm.requests[0].path == CHAT


@pytest.mark.parametrize(("entry", "message"), [
    ("openai\n    apiFormat: chatt", "'apiFormat' in target 'a' must be 'chat' or 'responses', got 'chatt'"),
    ("azure\n    api_format: chat", "unknown key 'api_format' in target 'a'"),
])
def test_api_format_other_than_chat_or_responses_is_refused_at_its_line(entry: str, message: str) -> None:
    [(line, said)] = [p for p in _problems(entry) if "api_format" in p[1].lower() or "apiformat" in p[1].lower()]
    assert line == 4 and said.startswith(message)


def test_api_format_responses_is_read() -> None:
    assert _problems("openai\n    api_format: responses") == []


def test_api_format_from_the_environment_is_checked_when_resolved() -> None:
    """A `${{ VAR }}` is unknown at load; once resolved, `responses` builds the Responses provider and a
    value AgentV does not know refuses to be built."""
    assert _problems("openai\n    api_format: ${{ FORMAT }}") == []
    resolved = target(provider="openai", base_url="http://127.0.0.1:9/v1", model="m", api_format="responses", **FAST)
    assert isinstance(build_provider(resolved), OpenAIResponsesProvider)
    wrong = target(provider="openai", base_url="http://127.0.0.1:9/v1", model="m", api_format="respones", **FAST)
    with pytest.raises(TargetsConfigError, match="must be 'chat' or 'responses'"):
        build_provider(wrong)


# ---------------------------------------------------------------- the Responses API on the wire


def test_responses_sends_input_items_and_reads_the_message_text(fake_llm: FakeLLMServer) -> None:
    fake_llm.set_default(RESPONSES, responses_model("Paris"))
    provider = openai(fake_llm, api_format="responses", temperature=0.2)
    response = provider.invoke(ProviderRequest(question="Capital of France?", system_prompt="Be brief.",
                                               max_output_tokens=50))
    assert response.text == "Paris" and response.output_messages[-1].text() == "Paris"
    assert response.token_usage == {"input": 11, "output": 7}
    [request] = fake_llm.requests
    assert request.path == RESPONSES and request.headers["authorization"] == f"Bearer {SECRET}"
    assert request.json == {
        "model": "gpt-test",
        "input": [{"role": "system", "content": "Be brief."},
                  {"role": "user", "content": [{"type": "input_text", "text": "Capital of France?"}]}],
        "store": False, "temperature": 0.2, "max_output_tokens": 50,
    }


def test_responses_sends_a_conversation_as_its_turns(fake_llm: FakeLLMServer) -> None:
    fake_llm.set_default(RESPONSES, responses_model("ok"))
    messages = [Message(role="system", content="sys"), Message(role="user", content="q1"),
                Message(role="assistant", content="a1"), Message(role="user", content="q2")]
    openai(fake_llm, api_format="responses").invoke(ProviderRequest(question="ignored", messages=messages))
    items = fake_llm.requests[0].json["input"]
    assert [(i.get("type"), i["role"]) for i in items] == [(None, "system"), (None, "user"), ("message", "assistant"),
                                                           (None, "user")]
    assert items[2]["content"] == [{"type": "output_text", "text": "a1", "annotations": []}]
    assert items[3]["content"] == [{"type": "input_text", "text": "q2"}]


def test_responses_reasoning_model_gets_developer_role_and_no_judge_temperature(fake_llm: FakeLLMServer) -> None:
    fake_llm.set_default(RESPONSES, responses_model("0.9", reasoning=True))
    provider = build_provider(target(provider="openai", base_url=fake_llm.url, api_key="${{ TEST_API_KEY }}",
                                     model="o3-mini", api_format="responses", reasoning_effort="low", **FAST))
    response = provider.invoke(ProviderRequest(question="Grade", system_prompt="You grade.", temperature=0,
                                               max_output_tokens=400))
    assert response.text == "0.9"
    assert response.token_usage == {"input": 11, "output": 71, "reasoning": 64}
    body = fake_llm.requests[0].json
    assert body["input"][0] == {"role": "developer", "content": "You grade."}
    assert "temperature" not in body and body["max_output_tokens"] == 400
    assert body["reasoning"] == {"effort": "low"}


def test_responses_reply_schema_goes_as_text_format(fake_llm: FakeLLMServer) -> None:
    fake_llm.set_default(RESPONSES, responses_model('{"score": 1}'))
    schema = {"name": "verdict", "schema": {"type": "object"}}
    openai(fake_llm, api_format="responses").invoke(ProviderRequest(question="q", reply_schema=schema))
    assert fake_llm.requests[0].json["text"] == {
        "format": {"type": "json_schema", "name": "verdict", "schema": {"type": "object"}, "strict": True}}


def test_responses_cached_input_and_tool_calls(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(RESPONSES, FakeReply.openai_responses("done", cached_tokens=4,
                                                           calls=(("search", '{"q": "x"}'),)))
    response = openai(fake_llm, api_format="responses").invoke(ProviderRequest(question="q"))
    assert response.token_usage == {"input": 7, "output": 7, "cached": 4}
    assert response.output_messages[-1].model_dump()["tool_calls"] == [
        {"tool": "search", "input": {"q": "x"}, "id": "call_0"}]


@pytest.mark.parametrize(("reply", "said"), [
    (FakeReply.openai_responses("", status="incomplete", incomplete_reason="content_filter"),
     "incomplete (content_filter) and has no text"),
    (FakeReply.json({"id": "r", "status": "failed", "output": [], "error": {"code": "server_error",
                                                                             "message": "boom"}}),
     "the response failed: boom"),
    (FakeReply.openai("chat shaped"), "expected a Responses API reply with an output list"),
])
def test_responses_reply_without_an_answer_is_an_error(fake_llm: FakeLLMServer, reply: FakeReply, said: str) -> None:
    fake_llm.enqueue(RESPONSES, reply)
    with pytest.raises(HttpCallError, match=re.escape(said)):
        openai(fake_llm, api_format="responses").invoke(ProviderRequest(question="q"))


def test_responses_incomplete_at_the_token_limit_keeps_its_text(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(RESPONSES, FakeReply.openai_responses("Par", status="incomplete",
                                                           incomplete_reason="max_output_tokens"))
    assert openai(fake_llm, api_format="responses").invoke(ProviderRequest(question="q")).text == "Par"


def test_responses_is_retried_under_the_targets_policy(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(RESPONSES, FakeReply.error(503), FakeReply.openai_responses("Paris"))
    response = openai(fake_llm, api_format="responses").invoke(ProviderRequest(question="q"))
    assert response.text == "Paris" and response.retries == 1 and len(fake_llm.requests) == 2


def test_responses_refused_structured_output_is_left_out_once(fake_llm: FakeLLMServer) -> None:
    refused = FakeReply.json({"error": {"message": "Invalid parameter: 'text.format' of type 'json_schema' is not "
                                                   "supported with this model.", "type": "invalid_request_error",
                                        "param": "text.format", "code": None}}, status=400)
    fake_llm.enqueue(RESPONSES, refused, FakeReply.openai_responses('{"score": 1}'))
    schema = {"name": "verdict", "schema": {"type": "object"}}
    response = openai(fake_llm, api_format="responses").invoke(ProviderRequest(question="q", reply_schema=schema))
    assert response.text == '{"score": 1}'
    assert "text" in fake_llm.requests[0].json and "text" not in fake_llm.requests[1].json


# ---------------------------------------------------------------- through the CLI


def _responses_repo(tmp_path: Path, fake_llm: FakeLLMServer) -> Path:
    fake_llm.set_default(RESPONSES, responses_model("Paris is the capital of France."))
    repo = make_repo(tmp_path, f"""
        targets:
          - name: default
            provider: openai
            api_format: responses
            base_url: {fake_llm.url}
            api_key: ${{{{ TEST_KEY }}}}
            model: m
    """)
    write(repo / "evals/s.eval.yaml", """
        tests:
          - id: capital
            input: What is the capital of France?
            assertions: [{type: contains, value: Paris}]
          - id: river
            input: Which river flows through Paris?
            assertions: [{type: contains, value: Seine}]
    """)
    return repo


def test_a_suite_on_a_responses_target_runs_through_the_cli(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    repo = _responses_repo(tmp_path, fake_llm)
    ran = run_cli("run", "evals", cwd=repo, env={"TEST_KEY": "sk-test"})
    assert ran.returncode == 1, ran.stderr
    rows = {row["eval_id"]: row for row in read_rows(repo / ".agentv-gate/results.jsonl")}
    assert (rows["capital"]["score"], rows["river"]["score"]) == (1.0, 0.0)
    assert {r.path for r in fake_llm.requests} == {RESPONSES}
    assert all(json.dumps(r.json).count("input_text") == 1 for r in fake_llm.requests)
