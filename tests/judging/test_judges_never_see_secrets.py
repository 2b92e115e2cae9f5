"""No configured secret is handed to a judge: what the agent echoed reaches every judge as `***`.

results.jsonl was always scrubbed (orchestrator.scrubbed), but only after the judges had run: an agent
that printed a key from its environment (a `${{ VAR }}` of targets.yaml, or any variable named like a
secret: redaction.py says what counts) had it sent on, whole, to each judge. The paths, each tested below:

* code judge / 4.x code-grader / suite assertion (`.agentv/assertions/`): the stdin payload
  (judging/payload.py, judging/grader_payload.py) carries the answer (`answer`, `candidate_answer`, 4.x
  `output`), the answer's messages with their tool calls' `input` and `output` (2.x `output`, 4.x
  `messages` and `trace.events`), the trace the target reported, `file_changes` (already redacted by the
  orchestrator, for this reason) and the case's own text (question, criteria, reference answer, metadata),
  which a `${{ VAR }}` may fill;
* LLM judge, 2.x and 4.x: the user prompt (judging/templates.py `template_variables`, judging/grader_prompts.py,
  with 4.x's `{{tool_calls}}` section listing each call's input) went in the HTTP body to the model provider;
  the rubric prompt (judging/rubric_protocol.py) likewise;
* executable prompt template: its stdin payload, as a code judge's, and so the prompt it printed from it;
* `provider: agentv` grader (evaluators/agent_grader.py): its prompt holds the answer, file changes and
  tool calls as the LLM judge's does (its workspace tools' results were already redacted: workspace_tools.py);
* 4.x llm-grader of an answer made of file blocks: the files' text, read from the workspace after the
  agent wrote them (evaluators/answer_files.py), became the answer the grader is sent;
* composite: each member is one of the above; a code aggregator's stdin and an LLM aggregator's prompt
  carry every member's result (hits, misses, reasoning, raw request), where a member that found the key
  elsewhere (a judge inherits the step's environment) could have quoted it.

All of them build what they send from one EvaluationContext, so the fix redacts that context once, where
every evaluator is run (evaluators/registry.py `evaluate_safely`, with judging/redacted.py `judged_context`)
for the kinds that hand it on; the two texts made after that point are redacted where they are made (the
answer files' text, a composite's aggregator input). Left as they are: what the eval file writes for the
judge itself (`config:`, prompt and rubric text), the step's environment a judge inherits, and what a code
judge sends its model through the target proxy (its own text; the replies it gets are redacted).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from agentv_gate.judging.redacted import judged_context
from agentv_gate.models import EvalCase, EvaluationContext, LlmJudgeConfig, Message
from agentv_gate.redaction import forget_secrets, register_secrets
from tests.helpers.cli import run_cli
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply, RecordedRequest
from tests.helpers.files import make_repo, write
from tests.helpers.reports import RESULTS, rows_by_id

AGENT = """
import json, os
token = os.environ["AGENT_TOKEN"]
print(json.dumps({"output_messages": [
    {"role": "assistant", "content": "looking it up",
     "tool_calls": [{"tool": "search", "id": "call-1", "input": {"query": "capital of France", "auth": token},
                     "output": "Paris (fetched with " + token + ")"}]},
    {"role": "assistant", "content": "Paris is the capital. My key is " + token},
]}))
"""

FILE_AGENT = """
import json, os
open("notes.md", "w").write("Paris, written with " + os.environ["AGENT_TOKEN"])
print(json.dumps({"output": [{"role": "assistant", "content": [
    {"type": "text", "text": "See the notes."}, {"type": "file", "media_type": "text/markdown", "path": "notes.md"}]}]}))
"""
"""Answers with a file block: a 4.x grader reads the file the agent wrote, the key in it included."""

RECORDER = """
import json, pathlib, sys
data = sys.stdin.read()
name = sys.argv[1] if len(sys.argv) > 1 else "assertion"
pathlib.Path(name + ".stdin.json").write_text(data, encoding="utf-8")  # in its cwd: the eval file's folder
print(json.dumps({"score": 1.0, "hits": ["recorded"], "reasoning": "recorded"}))
"""

PROMPT_SCRIPT = """
import json, pathlib, sys
data = sys.stdin.read()
pathlib.Path(__file__).with_name(sys.argv[1] + ".stdin.json").write_text(data, encoding="utf-8")
print("Grade this answer: " + json.loads(data)["answer"])
"""

ENV_QUOTING_MEMBER = """
import json, os
print(json.dumps({"score": 1.0, "hits": ["saw " + os.environ["JUDGED_TOKEN"]], "reasoning": "ok"}))
"""


def verdicts(request: RecordedRequest) -> FakeReply:
    """A passing reply in the shape each judge prompt asks for (2.x verdict, 4.x assertions, rubric checks)."""
    system = " ".join(str(m.get("content")) for m in (request.json or {}).get("messages", []) if m.get("role") == "system")
    if '"checks"' in system:
        reply: dict[str, Any] = {"checks": [{"id": "paris", "satisfied": True, "reasoning": "ok"}],
                                 "overall_reasoning": "ok"}
    elif '"assertions"' in system:
        reply = {"score": 1.0, "assertions": [{"text": "names Paris", "passed": True}]}
    else:
        reply = {"score": 1.0, "hits": ["names Paris"], "misses": [], "reasoning": "ok"}
    return FakeReply.openai(json.dumps(reply))


def _repo(tmp_path: Path, server: FakeLLMServer, judge: str = "judge") -> Path:
    repo = make_repo(tmp_path / "repo", f"""
        targets:
          - name: agent
            provider: cli
            command: python3 agent.py
            judge_target: {judge}
            env:
              AGENT_TOKEN: ${{{{ JUDGED_TOKEN }}}}
          - name: filer
            provider: cli
            command: python3 file_agent.py
            judge_target: judge
            env:
              AGENT_TOKEN: ${{{{ JUDGED_TOKEN }}}}
          - name: judge
            provider: openai
            endpoint: {server.url}/v1
            api_key: ${{{{ JUDGE_MODEL_KEY }}}}
            model: fake-judge
            max_retries: 0
          - name: agentic
            provider: agentv
            model: openai:judge-model
            base_url: {server.url}/v1
            max_retries: 0
        """)
    write(repo / "evals" / "agent.py", AGENT)
    write(repo / "evals" / "file_agent.py", FILE_AGENT)
    write(repo / "evals" / "recorder.py", RECORDER)
    write(repo / ".agentv" / "assertions" / "recorded.py", RECORDER)  # `type: recorded`, a suite's own assertion
    write(repo / "evals" / "prompt.py", PROMPT_SCRIPT)
    write(repo / "evals" / "member.py", ENV_QUOTING_MEMBER)
    return repo


def _run(repo: Path, token: str) -> dict[str, dict[str, Any]]:
    proc = run_cli("run", "evals", "--no-cache", env={"JUDGED_TOKEN": token, "JUDGE_MODEL_KEY": "judge-model-key-1234"}, cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return rows_by_id(repo / RESULTS)


def _received(repo: Path, server: FakeLLMServer) -> dict[str, str]:
    """Every stdin a judge script recorded and every request body the judge model received."""
    texts = {path.name: path.read_text(encoding="utf-8") for path in sorted((repo / "evals").glob("*.stdin.json"))}
    texts.update({f"request {i}": r.body.decode("utf-8") for i, r in enumerate(server.requests)})
    return texts


def _user_prompts(server: FakeLLMServer) -> list[str]:
    return [str(m["content"]) for r in server.requests for m in (r.json or {})["messages"] if m["role"] == "user"]


@dataclass
class Judged:
    """One run of a suite whose agent echoes `token`, and what its judges were given."""

    repo: Path
    token: str
    rows: dict[str, dict[str, Any]]
    received: dict[str, str]
    prompts: list[str]

    def leaked(self) -> list[str]:
        """What a judge received that holds the key: the names of the stdin files and requests."""
        return [name for name, text in self.received.items() if self.token in text]


def _judged(tmp_path: Path, name: str, suite: str) -> Judged:
    """`suite` written as evals/NAME and run against the loopback judge model, its agent echoing a fresh key."""
    token = f"tok-{uuid.uuid4().hex}"
    with FakeLLMServer() as server:
        server.set_default("/v1/chat/completions", verdicts)
        repo = _repo(tmp_path, server)
        write(repo / "evals" / name, suite)
        rows = _run(repo, token)
        return Judged(repo, token, rows, _received(repo, server), _user_prompts(server))


def test_a_2x_code_judge_llm_judge_and_prompt_template_never_receive_the_echoed_key(tmp_path: Path) -> None:
    judged = _judged(tmp_path, "judged.eval.yaml", """
        tests:
          - id: echo
            target: agent
            input: What is the capital of France?
            criteria: Names Paris
            assert:
              - {type: code_judge, name: code, script: [python3, recorder.py, code]}
              - {type: recorded}
              - {type: llm_judge, name: model}
              - type: llm_judge
                name: templated
                prompt: {script: [python3, prompt.py, template]}
              - type: llm_judge
                name: rubric
                rubrics: [{id: paris, outcome: Names Paris}]
        """)

    assert judged.rows["echo"]["verdict"] == "pass", judged.rows
    assert judged.rows["echo"]["candidate_answer"] == "Paris is the capital. My key is ***"  # as results.jsonl always had it
    assert judged.token not in (judged.repo / RESULTS).read_text(encoding="utf-8")
    assert set(judged.received) == {"code.stdin.json", "assertion.stdin.json", "template.stdin.json",
                                    "request 0", "request 1", "request 2"}
    assert judged.leaked() == []
    # the rest of the answer, and of its tool call, still reached each of them
    code = json.loads(judged.received["code.stdin.json"])
    assert code["answer"] == "Paris is the capital. My key is ***"
    call = code["output"][0]["tool_calls"][0]
    assert call["input"] == {"query": "capital of France", "auth": "***"}
    assert call["output"] == "Paris (fetched with ***)"
    assert json.loads(judged.received["assertion.stdin.json"])["answer"] == "Paris is the capital. My key is ***"
    assert json.loads(judged.received["template.stdin.json"])["candidate_answer"] == "Paris is the capital. My key is ***"
    assert "Grade this answer: Paris is the capital. My key is ***" in judged.prompts
    assert sum("Paris is the capital. My key is ***" in p for p in judged.prompts) == 3


def test_4x_graders_never_receive_the_key_in_the_answer_or_a_tool_call_argument(tmp_path: Path) -> None:
    judged = _judged(tmp_path, "graded.eval.yaml", """
        tests:
          - id: echo
            target: agent
            input: What is the capital of France?
            criteria: Names Paris
            assertions:
              - {type: code-grader, name: code, command: [python3, recorder.py, grader]}
              - {type: llm-grader, name: model}
        """)

    assert judged.rows["echo"]["verdict"] == "pass", judged.rows
    assert set(judged.received) == {"grader.stdin.json", "request 0"}
    assert judged.leaked() == []
    grader = json.loads(judged.received["grader.stdin.json"])
    assert grader["output"] == "Paris is the capital. My key is ***"
    calls = [e["tool"] for e in grader["trace"]["events"] if e["type"] == "tool_call"]
    assert calls == [{"name": "search", "call_id": "call-1", "input": {"query": "capital of France", "auth": "***"},
                      "output": "Paris (fetched with ***)", "status": "ok"}]
    assert "Paris is the capital. My key is ***" in judged.prompts[0]
    assert "search" in judged.prompts[0] and "capital of France" in judged.prompts[0]  # the {{tool_calls}} section, redacted


def test_a_4x_grader_reading_a_file_the_agent_wrote_never_receives_the_key_in_it(tmp_path: Path) -> None:
    """AgentV 4.42 grades an answer of file blocks as the files' text, read after the agent wrote them."""
    judged = _judged(tmp_path, "files.eval.yaml", """
        tests:
          - id: notes
            target: filer
            input: What is the capital of France?
            assertions:
              - {type: llm-grader, name: model}
        """)

    assert judged.rows["notes"]["verdict"] == "pass", judged.rows
    assert judged.token in (judged.repo / "evals" / "notes.md").read_text(encoding="utf-8")
    assert judged.leaked() == []
    assert "See the notes.\n[[ file: notes.md ]]\nParis, written with ***" in judged.prompts[0]


def test_a_composite_aggregator_never_receives_a_key_a_member_quoted(tmp_path: Path) -> None:
    """A member judge inherits the step's environment and may quote the key it finds there: the results the
    aggregator reads are redacted as they are built, whatever each member said."""
    judged = _judged(tmp_path, "composite.eval.yaml", """
        tests:
          - id: echo
            target: agent
            input: What is the capital of France?
            criteria: Names Paris
            assert:
              - name: both
                type: composite
                assert:
                  - {name: paris, type: contains, value: Paris}
                  - {name: quoting, type: code_judge, script: [python3, member.py]}
                aggregator: {type: code_judge, path: python3 recorder.py aggregator}
              - name: summed
                type: composite
                assert:
                  - {name: quoting, type: code_judge, script: [python3, member.py]}
                aggregator: {type: llm_judge}
        """)

    assert judged.rows["echo"]["verdict"] == "pass", judged.rows
    assert set(judged.received) == {"aggregator.stdin.json", "request 0"}
    assert judged.leaked() == []
    results = json.loads(judged.received["aggregator.stdin.json"])["results"]
    assert results["quoting"]["hits"] == ["saw ***"]
    assert results["paris"]["score"] == 1.0
    assert "saw ***" in judged.received["request 0"]


def test_an_agentic_grader_never_receives_the_key_in_its_prompt(tmp_path: Path) -> None:
    """A `provider: agentv` grader (AgentV 4.42's built-in agent mode) is sent the answer and its tool calls."""
    token = f"tok-{uuid.uuid4().hex}"
    with FakeLLMServer() as server:
        server.set_default("/v1/chat/completions", verdicts)
        repo = _repo(tmp_path, server, judge="agentic")
        write(repo / "ws" / "agent.py", AGENT)  # the agent runs in the case's workspace
        write(repo / "evals" / "agentic.eval.yaml", """
            workspace:
              template: ../ws
            tests:
              - id: echo
                target: agent
                input: What is the capital of France?
                criteria: Names Paris
                assertions:
                  - {type: llm-grader, name: explore}
            """)
        proc = run_cli("run", "evals", "--no-cache", cwd=repo,
                       env={"JUDGED_TOKEN": token, "JUDGE_MODEL_KEY": "judge-model-key-1234",
                            "OPENAI_API_KEY": "sk-agentic-test-0123456789abcdef"})
        received = _received(repo, server)
        prompts = _user_prompts(server)

    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert set(received) == {"request 0"}
    assert [name for name, text in received.items() if token in text] == []
    assert "Paris is the capital. My key is ***" in prompts[0]


@pytest.fixture()
def registered() -> Iterator[str]:
    """A secret registered in this process, as a run registers its targets' (forgotten afterwards)."""
    secret = f"tok-{uuid.uuid4().hex}"
    forget_secrets()
    register_secrets([secret])
    yield secret
    forget_secrets()


def test_every_text_a_judge_reads_of_the_context_is_redacted_and_nothing_else(registered: str) -> None:
    """The fields each judge's payload or prompt is built from; ordinary text is given back as it was."""
    secret = registered
    case = EvalCase(id="c", source_file=Path("s.eval.yaml"), suite="s.eval.yaml", question=f"use {secret}",
                    input_messages=[Message(role="user", content=[{"type": "text", "value": f"use {secret}"}])],
                    expected_outcome=f"mentions {secret}", expected_messages=[Message(role="assistant", content="ok")],
                    reference_answer=f"ref {secret}", metadata={"owner": secret, "team": "geo"})
    context = EvaluationContext(
        eval_case=case, candidate=f"key {secret}", evaluator=LlmJudgeConfig(name="j"),
        output_messages=[Message(role="assistant", content="", tool_calls=[{"tool": "t", "input": {"k": secret}}]),
                         Message(role="assistant", content="plain")],
        trace={"events": [{"tool": {"output": f"got {secret}"}}]}, file_changes=f"+KEY={secret}\n")

    judged = judged_context(context)

    assert secret not in repr(judged)
    assert (judged.candidate, judged.file_changes) == ("key ***", "+KEY=***\n")
    assert judged.output_messages[0].model_extra == {"tool_calls": [{"tool": "t", "input": {"k": "***"}}]}
    assert judged.output_messages[1] is context.output_messages[1]
    assert judged.trace == {"events": [{"tool": {"output": "got ***"}}]}
    hidden = judged.eval_case
    assert (hidden.question, hidden.expected_outcome, hidden.reference_answer) == ("use ***", "mentions ***", "ref ***")
    assert hidden.input_messages[0].content == [{"type": "text", "value": "use ***"}]
    assert hidden.expected_messages is case.expected_messages and hidden.metadata == {"owner": "***", "team": "geo"}
    assert context.candidate == f"key {secret}"  # the case's own result is graded from the original
    plain = replace(context, candidate="Paris", eval_case=EvalCase(id="c", source_file=Path("s"), suite="s"),
                    output_messages=[], trace=None, file_changes=None)
    assert judged_context(plain) == plain


def test_without_a_registered_secret_the_judge_gets_the_context_itself() -> None:
    forget_secrets()
    context = EvaluationContext(eval_case=EvalCase(id="c", source_file=Path("s"), suite="s"), candidate="Paris",
                                evaluator=LlmJudgeConfig(name="j"))
    assert judged_context(context) is context
