"""AgentV 4.42's agentic llm-grader (a `provider: agentv` grader): its tool loop over the case's workspace,
through the real CLI against a loopback model that asks for tools (chat completions and Anthropic Messages).

What AgentV 4.42.4 does, from llm-grader.ts and llm-providers.ts: the built-in grader offers `list_files`,
`read_file` and `search_files`, runs at most 10 model calls (whatever `max_steps` says), sends each tool's
result back as compact JSON, and reads the verdict from the last reply; `target:` naming an agentv target
asks it once without tools; any other grader is the plain LLM grader.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agentv_gate.evaluators.agent_grader import PARSE_FAILURE
from tests.helpers.cli import run_cli
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply, RecordedRequest
from tests.helpers.reports import RESULTS, rows_by_id

CHAT = "/v1/chat/completions"
MESSAGES = "/v1/messages"
KEY = "sk-agentic-test-0123456789abcdef"
ENV = {"OPENAI_API_KEY": KEY, "ANTHROPIC_API_KEY": KEY}
VERDICT = json.dumps({"score": 0.9, "assertions": [{"text": "subtract added", "passed": True}]})


def _project(tmp_path: Path, server: FakeLLMServer, grader: str = "", model: str = "openai:judge-model",
             files: dict[str, str] | None = None, extra: str = "") -> Path:
    root = tmp_path / "p"
    (root / ".agentv").mkdir(parents=True)
    (root / ".agentv" / "targets.yaml").write_text(f"""\
targets:
  - name: agent
    provider: mock
    response: Added subtract to src/calculator.ts
    grader_target: agentic
  - name: agentic
    provider: agentv
    model: {model}
    base_url: {server.url}{'/v1' if model.startswith('openai:') else ''}
    max_retries: 0
{extra}""")
    for name, text in (files or {"src/calculator.ts": "export function subtract(a, b) { return a - b; }\n"}).items():
        path = root / "ws" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / "evals").mkdir()
    (root / "evals" / "s.eval.yaml").write_text(f"""\
workspace:
  template: ../ws
execution:
  target: agent
tests:
  - id: calc
    input: Add a subtract function to src/calculator.ts
    criteria: src/calculator.ts has a subtract function
    assertions:
      - name: explore
        type: llm-grader
{grader}""")
    return root


def _run(root: Path, *args: str) -> Any:
    return run_cli("run", "evals", "--no-cache", *args, cwd=root, env=ENV)


def _score(root: Path) -> dict[str, Any]:
    row = rows_by_id(root / RESULTS)["calc"]
    return row["scores"][0]  # type: ignore[no-any-return]


def _tool_results(request: RecordedRequest) -> list[dict[str, Any]]:
    return [m for m in request.json["messages"] if m["role"] == "tool"]


def test_the_grader_reads_the_workspace_through_its_tools_and_its_verdict_is_the_last_reply(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        server.enqueue(CHAT, FakeReply.openai_tool_calls(("c1", "list_files", '{"path": "src"}')),
                       FakeReply.openai_tool_calls(("c2", "read_file", '{"path": "src/calculator.ts"}'),
                                                   ("c3", "search_files", '{"pattern": "SUBTRACT"}')),
                       FakeReply.openai(VERDICT))
        root = _project(tmp_path, server)
        proc = _run(root)
        sent = server.requests_for(CHAT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(sent) == 3
    first = sent[0].json
    assert first["temperature"] == 0
    assert [t["function"]["name"] for t in first["tools"]] == ["list_files", "read_file", "search_files"]
    assert first["tools"][1]["function"]["parameters"] == {
        "type": "object", "properties": {"path": {"type": "string", "description": "Relative path to file within workspace"}},
        "required": ["path"]}
    assert first["messages"][0]["content"].startswith("You are an expert grader with access to the workspace filesystem.")
    assert first["messages"][1]["content"].startswith("Evaluate the candidate answer by investigating the workspace.")
    assert first["messages"][1]["content"].endswith(
        "Investigate the workspace to verify the criteria. Provide a score between 0.0 and 1.0.")
    assert _tool_results(sent[1]) == [{"role": "tool", "content": '[{"name":"calculator.ts","type":"file"}]',
                                       "tool_call_id": "c1"}]
    echoed = sent[1].json["messages"][2]
    assert echoed["tool_calls"][0]["function"] == {"name": "list_files", "arguments": '{"path":"src"}'}
    results = _tool_results(sent[2])
    assert json.loads(results[1]["content"]) == {
        "content": "export function subtract(a, b) { return a - b; }\n", "truncated": False, "size": 49}
    assert json.loads(results[2]["content"]) == {"matches": [{"file": "src/calculator.ts", "line": 1, "text":
                                                              "export function subtract(a, b) { return a - b; }"}],
                                                 "total": 1}
    score = _score(root)
    assert (score["score"], score["hits"]) == (0.9, ["subtract added"])
    assert score["details"]["steps"] == 3 and score["details"]["tool_calls"] == 3


def _calls_forever(request: RecordedRequest) -> FakeReply:
    return FakeReply.openai_tool_calls((f"c{len(request.json['messages'])}", "list_files", "{}"), text="looking")


@pytest.mark.parametrize("written", ["", "        max_steps: 3\n", "        maxSteps: 50\n"])
def test_a_model_that_calls_tools_forever_stops_at_10_calls_whatever_max_steps_says(tmp_path: Path,
                                                                                    written: str) -> None:
    with FakeLLMServer() as server:
        server.set_default(CHAT, _calls_forever)
        root = _project(tmp_path, server, written)
        proc = _run(root)
        sent = server.requests_for(CHAT)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert len(sent) == 10  # AgentV 4.42.4's DEFAULT_MAX_STEPS: its shared grader never reads max_steps
    assert len(_tool_results(sent[-1])) == 9  # the 10th reply's calls are never run
    score = _score(root)
    assert (score["score"], score["misses"]) == (0.0, [PARSE_FAILURE])  # AgentV's 0 and its failed assertion
    # and the grader's error (it never judged): never negated, quarantined or averaged into a pass
    assert score["error"].startswith(f"{PARSE_FAILURE}: no verdict in the grader's last reply after 10 of its 10")
    assert rows_by_id(root / RESULTS)["calc"]["verdict"] == "error"
    assert score["details"] == {"mode": "built-in", "steps": 10, "tool_calls": 9}


@pytest.mark.parametrize(("written", "refused"), [("max_steps: 50", False), ("max_steps: 51", True),
                                                   ("max_steps: 1", False), ("max_steps: 0", True),
                                                   ("maxSteps: 51", True), ("max_steps: 2.5", True)])
def test_max_steps_is_checked_as_agentv_checks_it_from_1_to_50(tmp_path: Path, written: str, refused: bool) -> None:
    with FakeLLMServer() as server:
        root = _project(tmp_path, server, f"        {written}\n")
        proc = run_cli("validate", "evals", cwd=root, env=ENV)
    out = proc.stdout + proc.stderr
    assert (proc.returncode != 0) is refused, out
    if refused:
        assert "s.eval.yaml:" in out and "max_steps" in out
    else:
        assert "has no effect here" in out and "10 model calls" in out


SECRET_OUTSIDE = "outside-the-workspace-7f3a"


def test_no_tool_reads_outside_the_workspace(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET_OUTSIDE)
    paths = ["../../secret.txt", str(outside / "secret.txt"), "/proc/self/environ", "src/../../secret.txt",
             "link.txt", "linkdir", "linkdir/secret.txt", "/"]
    agent = tmp_path / "agent.sh"  # the agent under test leaves links out of its workspace (its cwd)
    agent.write_text(f'#!/bin/sh\nln -s {outside}/secret.txt link.txt\nln -s {outside} linkdir\necho done > "$1"\n')
    agent.chmod(0o755)
    with FakeLLMServer() as server:
        server.enqueue(CHAT, FakeReply.openai_tool_calls(
            *[(f"r{i}", "read_file", json.dumps({"path": p})) for i, p in enumerate(paths)],
            ("l1", "list_files", json.dumps({"path": "linkdir"})), ("l2", "list_files", '{"path": ".."}'),
            ("s1", "search_files", json.dumps({"pattern": "outside", "path": ".."})),
            ("s2", "search_files", '{"pattern": "outside"}'), ("l3", "list_files", "{}")), FakeReply.openai(VERDICT))
        root = _project(tmp_path, server, extra=f"""\
  - name: linker
    provider: cli
    command: {agent} {{OUTPUT_FILE}}
    grader_target: agentic
""")
        suite = root / "evals" / "s.eval.yaml"
        suite.write_text(suite.read_text().replace("target: agent\n", "target: linker\n"))
        proc = _run(root)
        sent = server.requests_for(CHAT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = {m["tool_call_id"]: json.loads(m["content"]) for m in _tool_results(sent[1])}
    for i, path in enumerate(paths):
        assert results[f"r{i}"] == {"error": f"Path '{path}' is outside the workspace"}
    assert results["l1"] == {"error": "Path 'linkdir' is outside the workspace"}
    assert results["l2"] == {"error": "Path '..' is outside the workspace"}
    assert results["s1"] == {"error": "Path '..' is outside the workspace"}
    assert results["s2"] == {"matches": [], "total": 0}  # a search never follows a link out
    assert {"name": "link.txt", "type": "file"} in results["l3"]  # listed, as AgentV lists a link, never read
    assert SECRET_OUTSIDE not in sent[1].body.decode()


@pytest.mark.parametrize(("size", "truncated"), [(51_199, False), (51_200, False), (51_201, True)])
def test_read_file_keeps_the_first_50kb_and_search_skips_a_file_over_it(tmp_path: Path, size: int,
                                                                        truncated: bool) -> None:
    text = "needle" + "x" * (size - 6)
    with FakeLLMServer() as server:
        server.enqueue(CHAT, FakeReply.openai_tool_calls(("r", "read_file", '{"path": "big.txt"}'),
                                                         ("s", "search_files", '{"pattern": "needle"}')),
                       FakeReply.openai(VERDICT))
        root = _project(tmp_path, server, files={"big.txt": text})
        proc = _run(root)
        sent = server.requests_for(CHAT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = {m["tool_call_id"]: json.loads(m["content"]) for m in _tool_results(sent[1])}
    assert results["r"] == {"content": text[:51_200], "truncated": truncated, "size": size}
    assert results["s"]["total"] == (0 if truncated else 1)


def test_an_unknown_tool_and_arguments_that_are_not_json_get_agentvs_results(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        server.enqueue(CHAT, FakeReply.openai_tool_calls(("u", "delete_file", '{"path": "x"}'),
                                                         ("b", "read_file", '{"path": '),
                                                         ("n", "read_file", '{"path": 5}'),
                                                         ("r", "search_files", '{"pattern": "("}')),
                       FakeReply.openai(VERDICT))
        root = _project(tmp_path, server)
        proc = _run(root)
        sent = server.requests_for(CHAT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = {m["tool_call_id"]: m["content"] for m in _tool_results(sent[1])}
    assert results["u"] == "pi-ai adapter: model called unknown tool 'delete_file'"
    assert json.loads(results["b"]) == {"error": "'' is a directory, not a file"}  # arguments read as {}
    assert "error" in json.loads(results["n"])
    assert json.loads(results["r"]) == {  # V8's words, as AgentV 4.42.4 sent them (compat/agentv_4_42/agentic_grader.py)
        "error": "Invalid regex pattern: Invalid regular expression: /(/gi: Unterminated group"}
    echoed = sent[1].json["messages"][2]["tool_calls"]
    assert [c["function"]["arguments"] for c in echoed] == ['{"path":"x"}', "{}", '{"path":5}', '{"pattern":"("}']


def test_a_secret_in_a_workspace_file_never_reaches_the_model_or_the_results(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        server.enqueue(CHAT, FakeReply.openai_tool_calls(("r", "read_file", '{"path": ".env"}'),
                                                         ("s", "search_files", '{"pattern": "KEY"}')),
                       FakeReply.openai(VERDICT))
        root = _project(tmp_path, server, files={".env": f"OPENAI_API_KEY={KEY}\n"})
        proc = _run(root)
        sent = server.requests_for(CHAT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert KEY not in sent[1].body.decode()
    assert "OPENAI_API_KEY=" in sent[1].body.decode()
    assert sent[0].headers["authorization"] == f"Bearer {KEY}"  # the key goes where it belongs, only there
    for name in os.listdir(root / ".agentv-gate"):
        path = root / ".agentv-gate" / name
        if path.is_file():
            assert KEY not in path.read_text(errors="replace"), name


def test_the_anthropic_wire_sends_tool_use_back_with_tool_results(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        server.enqueue(MESSAGES, FakeReply.anthropic_tool_use(("t1", "read_file", {"path": "src/calculator.ts"}),
                                                              text="Let me look."),
                       FakeReply.anthropic(VERDICT))
        root = _project(tmp_path, server, model="anthropic:claude-judge")
        proc = _run(root)
        sent = server.requests_for(MESSAGES)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    first, second = sent[0].json, sent[1].json
    assert sent[0].headers["x-api-key"] == KEY
    assert first["tools"][0] == {"name": "list_files", "description": first["tools"][0]["description"],
                                 "input_schema": {"type": "object", "properties": {"path": {
                                     "type": "string", "description": 'Relative path within workspace (use "." for root)',
                                     "default": "."}}, "required": []}}
    assert first["tools"][-1]["cache_control"] == {"type": "ephemeral"}  # pi-ai's prompt-cache marks
    assert first["messages"][0]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert first["system"][0]["text"].startswith("You are an expert grader with access to the workspace filesystem.")
    assert second["messages"][1] == {"role": "assistant", "content": [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "src/calculator.ts"}}]}
    assert "cache_control" not in second["messages"][0]["content"][-1]  # only the last user turn is marked
    result = second["messages"][2]["content"][0]
    assert (result["type"], result["tool_use_id"], result["is_error"]) == ("tool_result", "t1", False)
    assert json.loads(result["content"])["size"] == 49
    assert _score(root)["score"] == 0.9


def test_target_naming_an_agentv_target_asks_it_once_without_tools(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        server.set_default(CHAT, FakeReply.openai(VERDICT))
        root = _project(tmp_path, server, "        target: agentic\n        max_steps: 5\n")
        proc = _run(root)
        sent = server.requests_for(CHAT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(sent) == 1 and "tools" not in sent[0].json
    system, user = (m["content"] for m in sent[0].json["messages"])
    assert system == "You are a careful assistant. Follow all provided instructions and do not fabricate results."
    assert user.startswith("You are an expert grader. Investigate the workspace to verify the criteria are met.")
    assert user.endswith('"details": {<optional object with domain-specific structured metrics>}\n}')
    assert _score(root)["details"] == {"mode": "grader_target", "grader_target": "agentic"}


def test_max_steps_on_an_llm_grader_of_a_plain_model_changes_nothing(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        server.set_default(CHAT, FakeReply.openai(VERDICT))
        root = _project(tmp_path, server, "        max_steps: 3\n        target: plain\n", extra=f"""\
  - name: plain
    provider: openai
    base_url: {server.url}/v1
    model: plain-model
""")
        proc = _run(root)
        sent = server.requests_for(CHAT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(sent) == 1 and "tools" not in sent[0].json
    assert sent[0].json["messages"][1]["content"].startswith("You are an expert grader. Your goal is to grade")


def test_the_tool_loop_ends_at_the_targets_whole_call_deadline(tmp_path: Path) -> None:
    slow = replace(FakeReply.openai_tool_calls(("c", "list_files", "{}")), delay=0.6)
    with FakeLLMServer() as server:
        server.set_default(CHAT, slow)
        root = _project(tmp_path, server, extra="    retry_max_total_seconds: 1.5\n")
        proc = _run(root)
        sent = server.requests_for(CHAT)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert 2 <= len(sent) <= 4  # 0.6 s a call against 1.5 s in all: never the 10 calls of the budget
    error = _score(root).get("error") or ""
    assert "llm-grader built-in evaluation failed" in error and ("1.5" in error or "deadline" in error), error


def test_a_case_without_a_workspace_is_an_error_naming_what_is_missing(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        root = _project(tmp_path, server)
        suite = root / "evals" / "s.eval.yaml"
        suite.write_text(suite.read_text().replace("workspace:\n  template: ../ws\n", ""))
        proc = _run(root)
        sent = server.requests_for(CHAT)
    assert proc.returncode == 1 and not sent
    assert "requires a workspace" in (_score(root).get("error") or "")


def test_a_grader_whose_target_is_an_agent_the_gate_does_not_run_errors_and_the_rest_runs(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        server.set_default(CHAT, FakeReply.openai(VERDICT))
        root = _project(tmp_path, server, "        target: codex_grader\n      - {name: plain, type: contains, "
                        "value: subtract}\n", extra="  - name: codex_grader\n    provider: codex\n")
        checked = run_cli("validate", "evals", cwd=root, env=ENV)
        proc = _run(root)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "warning: the grader's target 'codex_grader' runs the Codex agent provider" in checked.stdout
    assert proc.returncode == 1, proc.stdout + proc.stderr
    row = rows_by_id(root / RESULTS)["calc"]
    scores = {s["name"]: s for s in row["scores"]}
    assert "'provider: codex' is an AgentV feature agentv-gate does not run yet" in scores["explore"]["error"]
    assert scores["plain"]["score"] == 1.0  # the suite's other graders ran


@pytest.mark.parametrize(("model", "said"), [
    ("gpt-4", 'model: Invalid agentv model "gpt-4". Expected "provider:model"'),
    ("azure:gpt-4", "model 'azure:gpt-4': an agentv model on 'azure:' is an AgentV feature agentv-gate does not run yet"),
    ("google:gemini", "model 'google:gemini': an agentv model on 'google:' is an AgentV feature agentv-gate does not run yet"),
    ("mistral:x", 'model: Unsupported agentv provider "mistral" in "mistral:x"'),
])
def test_an_agentv_model_the_gate_cannot_call_is_refused_at_its_line(tmp_path: Path, model: str, said: str) -> None:
    with FakeLLMServer() as server:
        root = _project(tmp_path, server, model=model)
        proc = run_cli("validate", "evals", cwd=root, env=ENV)
    assert proc.returncode == 1
    assert f".agentv/targets.yaml:8: agentv target 'agentic': {said}" in proc.stdout, proc.stdout + proc.stderr


def test_without_its_api_key_the_run_stops_before_the_first_call_naming_the_variable(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        root = _project(tmp_path, server)
        proc = run_cli("run", "evals", "--no-cache", cwd=root, drop=("OPENAI_API_KEY",))
        sent = server.requests
    assert proc.returncode == 2 and not sent, proc.stdout + proc.stderr
    assert "target 'agentic': environment variable 'OPENAI_API_KEY' (the agentv provider's API key" in proc.stderr


def test_a_rubric_grader_explores_too_and_is_scored_from_its_checks(tmp_path: Path) -> None:
    checks = json.dumps({"checks": [{"id": "subtract", "satisfied": True, "reasoning": "found it"},
                                    {"id": "tests", "satisfied": False, "reasoning": "none"}],
                         "overall_reasoning": "half"})
    with FakeLLMServer() as server:
        server.enqueue(CHAT, FakeReply.openai_tool_calls(("c", "search_files", '{"pattern": "subtract"}')),
                       FakeReply.openai(checks))
        root = _project(tmp_path, server)
        suite = root / "evals" / "s.eval.yaml"
        suite.write_text(suite.read_text().replace("        type: llm-grader\n", """\
        type: rubrics
        criteria:
          - {id: subtract, outcome: Adds subtract, required: true}
          - {id: tests, outcome: Adds a test, weight: 0.5, required: false}
"""))
        proc = _run(root)
        sent = server.requests_for(CHAT)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # 1 of 1.5 weight met: under 0.8
    system, user = (m["content"] for m in sent[0].json["messages"][:2])
    assert system.endswith('"overall_reasoning": "string (summary)"\n}')
    assert "[[ ## rubrics ## ]]\n- [subtract] (REQUIRED): Adds subtract\n- [tests] (weight: 0.5): Adds a test\n" in user
    assert user.endswith("For each rubric, investigate the workspace to determine if it is satisfied. "
                         "Provide brief reasoning.")
    score = _score(root)
    assert score["score"] == pytest.approx(1 / 1.5)
    assert score["details"]["mode"] == "built-in"


@pytest.mark.parametrize("count", [19, 20, 21])
def test_search_keeps_20_matches_and_list_files_100_entries(tmp_path: Path, count: int) -> None:
    files = {"hits.txt": "".join(f"needle {i} " + "y" * 250 + "\n" for i in range(count))}
    files.update({f"many/f{i:03}.txt": "" for i in range(count + 80)})  # 99, 100, 101 entries
    with FakeLLMServer() as server:
        server.enqueue(CHAT, FakeReply.openai_tool_calls(("s", "search_files", '{"pattern": "needle"}'),
                                                         ("l", "list_files", '{"path": "many"}')),
                       FakeReply.openai(VERDICT))
        root = _project(tmp_path, server, files=files)
        proc = _run(root)
        sent = server.requests_for(CHAT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = {m["tool_call_id"]: json.loads(m["content"]) for m in _tool_results(sent[1])}
    matches = results["s"]["matches"]
    assert results["s"]["total"] == len(matches) == min(count, 20)
    assert [m["line"] for m in matches] == list(range(1, min(count, 20) + 1))  # the first ones, in file order
    assert len(matches[0]["text"]) == 200 and matches[0]["text"].startswith("needle 0 ")
    listed = results["l"]
    assert len(listed) == min(count + 80, 100)
    assert listed[0] == {"name": "f000.txt", "type": "file"}  # sorted by name, the first 100 kept
