"""Conversation tests (AgentV 4.x `mode: conversation`), through the CLI against a model on 127.0.0.1."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply, RecordedRequest
from tests.helpers.files import make_repo, write
from tests.helpers.reports import rows_by_id
from tests.helpers.targets import CHAT

KEY = {"TEST_KEY": "sk-test"}


def _echo(request: RecordedRequest) -> FakeReply:
    """The model repeats the last user message, or fails when it says `boom`."""
    last = [m["content"] for m in request.json["messages"] if m["role"] == "user"][-1]
    if "boom" in last:
        return FakeReply.error(400, "scripted refusal")
    return FakeReply.openai(f"you said {last}")


def _repo(tmp_path: Path, fake_llm: FakeLLMServer, suite: str) -> Path:
    fake_llm.set_default(CHAT, _echo)
    repo = make_repo(tmp_path, f"""
        targets:
          - name: default
            provider: openai
            base_url: {fake_llm.url}
            api_key: ${{{{ TEST_KEY }}}}
            model: m
            max_retries: 0
    """)
    write(repo / "evals/c.eval.yaml", suite)
    return repo


def _calls(fake_llm: FakeLLMServer) -> list[list[tuple[str, str]]]:
    return [[(m["role"], m["content"]) for m in r.json["messages"]] for r in fake_llm.requests_for(CHAT)]


def _turns(row: dict[str, Any]) -> list[tuple[str, float, str]]:
    return [(s["name"], round(s["score"], 6), s["verdict"]) for s in row["scores"]]


CONVERSATION = """\
    tests:
      - id: talk
        mode: conversation
        {settings}
        input:
          - role: system
            content: Be brief.
        turns:
          - input: one
            assertions:
              - type: contains
                value: one
          - input: two
            assertions:
              - type: contains
                value: zwei
          - input: three
"""


def test_each_turn_sees_the_conversation_so_far_with_the_agents_own_replies(tmp_path: Path,
                                                                             fake_llm: FakeLLMServer) -> None:
    repo = _repo(tmp_path, fake_llm, CONVERSATION.format(settings="criteria: talks"))
    ran = run_cli("run", "evals", cwd=repo, env=KEY)
    assert ran.returncode == 1, ran.stderr
    assert _calls(fake_llm) == [
        [("system", "Be brief."), ("user", "one")],
        [("system", "Be brief."), ("user", "one"), ("assistant", "you said one"), ("user", "two")],
        [("system", "Be brief."), ("user", "one"), ("assistant", "you said one"), ("user", "two"),
         ("assistant", "you said two"), ("user", "three")],
    ]
    row = rows_by_id(repo / ".agentv-gate/results.jsonl")["talk"]
    assert _turns(row) == [("turn-1", 1.0, "pass"), ("turn-2", 0.0, "fail"), ("turn-3", 1.0, "pass")]
    assert row["scores"][0]["scores"][0]["name"] == "contains-one"
    assert round(row["score"], 6) == 0.666667 and row["verdict"] == "fail"
    assert row["candidate_answer"] == "you said three"
    [case] = list(ET.parse(repo / ".agentv-gate/junit.xml").iter("testcase"))
    failure = case.find("failure")
    assert failure is not None and "turn-2 failed (score 0.000 < 0.8)" in (failure.get("message") or "")


def test_window_size_keeps_the_system_messages_and_the_last_exchanges(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    repo = _repo(tmp_path, fake_llm, CONVERSATION.format(settings="window_size: 1"))
    run_cli("run", "evals", cwd=repo, env=KEY)
    assert _calls(fake_llm)[2] == [("system", "Be brief."), ("assistant", "you said two"), ("user", "three")]


@pytest.mark.parametrize(("settings", "score"), [("aggregation: min", 0.0), ("aggregation: max", 1.0),
                                                  ("aggregation: mean", 0.666667)])
def test_aggregation(tmp_path: Path, fake_llm: FakeLLMServer, settings: str, score: float) -> None:
    repo = _repo(tmp_path, fake_llm, CONVERSATION.format(settings=settings))
    run_cli("run", "evals", cwd=repo, env=KEY)
    row = rows_by_id(repo / ".agentv-gate/results.jsonl")["talk"]
    assert round(row["score"], 6) == score
    assert row["verdict"] == ("pass" if score >= 0.8 else "fail")


def test_on_turn_failure_stop_skips_the_rest_unasked(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    repo = _repo(tmp_path, fake_llm, CONVERSATION.format(settings="on_turn_failure: stop"))
    run_cli("run", "evals", cwd=repo, env=KEY)
    assert len(_calls(fake_llm)) == 2
    row = rows_by_id(repo / ".agentv-gate/results.jsonl")["talk"]
    assert _turns(row) == [("turn-1", 1.0, "pass"), ("turn-2", 0.0, "fail"), ("turn-3", 0.0, "skip")]
    assert "turn-3: Skipped due to previous turn failure" in row["misses"]


def test_a_turn_whose_agent_broke_makes_the_case_an_error_never_a_pass(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    """AgentV scores such a turn 0 and the mean of 1, 1, 1, 1, 0 passes (0.8); here the case is an error."""
    turns = "".join(f"          - input: {word}\n" for word in ("a", "b", "c", "d", "boom"))
    repo = _repo(tmp_path, fake_llm, f"""\
    tests:
      - id: talk
        mode: conversation
        input: hi
        turns:
{turns}""")
    ran = run_cli("run", "evals", cwd=repo, env=KEY)
    assert ran.returncode == 1
    row = rows_by_id(repo / ".agentv-gate/results.jsonl")["talk"]
    assert round(row["score"], 6) == 0.8 and row["verdict"] == "error"
    assert row["error"].startswith("turn-5: target default:")
    assert row["scores"][4]["misses"][0].startswith("Provider error:")


def test_the_tests_own_assertions_judge_the_transcript(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    repo = _repo(tmp_path, fake_llm, """\
    tests:
      - id: talk
        mode: conversation
        input: hi
        turns:
          - input: one
          - input: two
        assertions:
          - type: contains
            value: "user: hi\\n\\nuser: one\\n\\nassistant: you said one\\n\\nuser: two\\n\\nassistant: you said two"
    """)
    assert run_cli("run", "evals", cwd=repo, env=KEY).returncode == 0
    row = rows_by_id(repo / ".agentv-gate/results.jsonl")["talk"]
    assert _turns(row) == [("turn-1", 1.0, "pass"), ("turn-2", 1.0, "pass"), ("conversation", 1.0, "pass")]


@pytest.mark.parametrize(("keys", "line", "message"), [
    ("mode: chat\n    turns: [{input: x}]", 4, "'mode' must be conversation, got 'chat'"),
    ("mode: conversation\n    turns: []", 5, "'turns' must be a list of one or more turns"),
    ("mode: conversation\n    aggregation: median\n    turns: [{input: x}]", 5, "'aggregation' must be mean or min or max"),
    ("mode: conversation\n    window_size: 0\n    turns: [{input: x}]", 5, "'window_size' must be a whole number from 1"),
    ("mode: conversation\n    turns:\n      - {input: x, expect: y}", 6, "unknown key 'expect' in a turn"),
])
def test_a_conversation_agentv_refuses_is_refused_at_its_line(tmp_path: Path, fake_llm: FakeLLMServer, keys: str,
                                                              line: int, message: str) -> None:
    repo = _repo(tmp_path, fake_llm, f"tests:\n  - id: talk\n    input: hi\n    {keys}\n")
    ran = run_cli("run", "evals", cwd=repo, env=KEY)
    assert ran.returncode == 2, ran.stderr
    assert f"evals/c.eval.yaml:{line}: {message}" in ran.stderr
    assert fake_llm.requests == []


def test_turns_without_mode_conversation_have_no_effect_as_in_agentv(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    repo = _repo(tmp_path, fake_llm, """\
    tests:
      - id: talk
        input: hi
        turns: [{input: one}]
        assertions: [{type: contains, value: hi}]
    """)
    ran = run_cli("run", "evals", cwd=repo, env=KEY)
    assert ran.returncode == 0
    assert "evals/c.eval.yaml:4: warning: 'turns' has no effect here: the test has no mode: conversation" in ran.stderr
    assert _calls(fake_llm) == [[("user", "hi")]]
    assert run_cli("run", "evals", "--strict", cwd=repo, env=KEY).returncode == 2
