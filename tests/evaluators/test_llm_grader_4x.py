"""AgentV 4.x llm-graders get 4.42's prompts (plain-text variables, its default template and reply), through
the real CLI against a loopback judge; `llm_judge` keeps 2.19's."""

from __future__ import annotations

import json
from pathlib import Path

from agentv_gate.judging.grader_prompts import GRADER_SYSTEM_PROMPT, GRADER_TEMPLATE
from tests.helpers.cli import run_cli
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply
from tests.helpers.reports import RESULTS, rows_by_id

CHAT = "/v1/chat/completions"
VERDICT_4X = {"score": 1, "assertions": [{"text": "Names Paris", "passed": True, "evidence": "says Paris"},
                                         {"text": "One sentence", "passed": False}]}


def _repo(tmp_path: Path, server: FakeLLMServer, suite: str, files: dict[str, str] | None = None) -> Path:
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "targets.yaml").write_text(f"""\
targets:
  - name: default
    provider: mock
    response: "  Paris is the capital of France.  "
    judge_target: judge
  - name: judge
    provider: openai
    base_url: {server.url}
    model: judge-model
""")
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "s.eval.yaml").write_text(suite)
    for name, text in (files or {}).items():
        (tmp_path / "evals" / name).write_text(text)
    return tmp_path


def _messages(server: FakeLLMServer) -> list[dict[str, str]]:
    return {m["role"]: m["content"] for m in server.requests_for(CHAT)[0].json["messages"]}  # type: ignore[return-value]


CASE = """\
tests:
  - id: capital
    input: What is the capital of France?
    criteria: Names Paris
    expected_output: Paris.
    metadata: {owner: geo}
    assertions:
"""


def test_the_default_4x_prompt_is_4_42s_template_word_for_word_and_the_reply_is_read(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        server.set_default(CHAT, FakeReply.openai(json.dumps(VERDICT_4X)))
        repo = _repo(tmp_path, server, CASE + "      - {name: q, type: llm-grader}\n")
        proc = run_cli("run", "evals", "--no-cache", cwd=repo)
        sent = _messages(server)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    expected = (GRADER_TEMPLATE.replace("{{criteria}}", "Names Paris")
                .replace("{{input}}", "What is the capital of France?")
                .replace("{{expected_output}}", "Paris.").replace("{{output}}", "Paris is the capital of France."))
    assert sent["user"] == expected
    assert sent["user"].startswith("You are an expert grader. Your goal is to grade the answer")
    assert sent["system"] == GRADER_SYSTEM_PROMPT
    score = rows_by_id(repo / RESULTS)["capital"]["scores"][0]
    assert (score["score"], score["hits"], score["misses"]) == (1.0, ["Names Paris"], ["One sentence"])  # evidence apart, as 4.42


def test_4x_variables_are_plain_text_where_2x_gave_json_messages(tmp_path: Path) -> None:
    prompt = "Q={{input}}\nA={{output}}\nREF={{expected_output}}\nMETA={{metadata_json}}\nX={{unknown}}"
    with FakeLLMServer() as server:
        server.set_default(CHAT, FakeReply.openai(json.dumps(VERDICT_4X)))
        repo = _repo(tmp_path, server, CASE + f"      - {{name: q, type: llm-grader, prompt: {json.dumps(prompt)}}}\n")
        run_cli("run", "evals", "--no-cache", cwd=repo)
        sent = _messages(server)
    assert sent["user"] == ("Q=What is the capital of France?\nA=Paris is the capital of France.\nREF=Paris.\n"
                            'META={"owner":"geo"}\nX={{unknown}}')


def test_the_same_prompt_on_llm_judge_keeps_2_19s_json_messages(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        server.set_default(CHAT, FakeReply.openai(json.dumps({"score": 1, "hits": ["ok"]})))
        # `assert:`, the list both AgentVs read: beside `assertions:` (4.x only) the llm_judge is refused
        repo = _repo(tmp_path, server, CASE.replace("assertions:", "assert:")
                     + '      - {name: q, type: llm_judge, prompt: "A={{output}}"}\n')
        run_cli("run", "evals", "--no-cache", cwd=repo)
        sent = _messages(server)
    assert json.loads(sent["user"][2:]) == [{"role": "assistant", "content": "  Paris is the capital of France.  "}]


def test_a_bare_prompt_path_is_text_as_in_4_42_said_and_file_prefix_reads_the_file(tmp_path: Path) -> None:
    """4.42 reads `prompt: grader.md` as inline text without variables: the default template with that text as
    its criteria. The gate does the same, with a located warning; `file://grader.md` is the file."""
    with FakeLLMServer() as server:
        server.set_default(CHAT, FakeReply.openai(json.dumps(VERDICT_4X)))
        repo = _repo(tmp_path, server, CASE + "      - {name: bare, type: llm-grader, prompt: grader.md}\n"
                                              "      - {name: file, type: llm-grader, prompt: 'file://grader.md'}\n",
                     {"grader.md": "Grade {{output}} strictly."})
        validate = run_cli("validate", "evals", cwd=repo)
        run_cli("run", "evals", "--no-cache", cwd=repo)
        users = [r.json["messages"][1]["content"] for r in server.requests_for(CHAT)]
    assert "evals/s.eval.yaml:8: warning: llm-grader 'bare': prompt 'grader.md' is read as the prompt's text" \
        in validate.stdout + validate.stderr
    assert "[[ ## criteria ## ]]\ngrader.md\n" in users[0]
    assert users[1] == "Grade Paris is the capital of France. strictly."


def test_a_4x_rubric_prompt_says_grader_and_carries_operator_guidance(tmp_path: Path) -> None:
    checks = {"checks": [{"id": "paris", "satisfied": True, "reasoning": "yes"},
                         {"id": "no-lyon", "satisfied": True, "reasoning": "no claim"}], "overall_reasoning": "ok"}
    with FakeLLMServer() as server:
        server.set_default(CHAT, FakeReply.openai(json.dumps(checks)))
        repo = _repo(tmp_path, server, CASE.replace("    assertions:\n", "    assertions:\n"
                     "      - name: r\n        type: llm-grader\n        rubrics:\n"
                     "          - {id: paris, outcome: Names Paris}\n"
                     "          - {id: no-lyon, outcome: Says Lyon is the capital, operator: contradiction}\n"))
        proc = run_cli("run", "evals", "--no-cache", cwd=repo)
        sent = _messages(server)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert sent["user"].startswith("You are an expert grader. Evaluate the candidate answer against each rubric")
    assert "Operator guidance:\n- Contradiction guard: mark satisfied when the answer" in sent["user"]
    # 4.42 makes an object item required unless it says otherwise
    assert "- [paris] (REQUIRED): Names Paris" in sent["user"]
    assert "- [no-lyon] (REQUIRED) (operator: contradiction): Says Lyon is the capital" in sent["user"]
    assert sent["system"].startswith("You are an expert grader. Evaluate the candidate answer against each rubric item.")


def test_a_4x_grader_keeps_its_first_8_assertions_as_4_42_does_and_no_more(tmp_path: Path) -> None:
    """4.42 keeps `data.assertions.slice(0, 8)` (llm-grader.ts); at the line (8) all are kept, past it the
    ninth is dropped, whichever of hits or misses it would have been; the score is the grader's."""
    for count in (8, 9):
        entries = [{"text": f"check {i}", "passed": i % 2 == 0} for i in range(1, count + 1)]
        with FakeLLMServer() as server:
            server.set_default(CHAT, FakeReply.openai(json.dumps({"score": 0.9, "assertions": entries})))
            (tmp_path / str(count)).mkdir()
            repo = _repo(tmp_path / str(count), server, CASE + "      - {name: q, type: llm-grader}\n")
            run_cli("run", "evals", "--no-cache", cwd=repo)
        (entry,) = rows_by_id(repo / RESULTS)["capital"]["scores"]
        assert entry["hits"] == [f"check {i}" for i in (2, 4, 6, 8)]
        assert entry["misses"] == [f"check {i}" for i in (1, 3, 5, 7)]
        assert entry["score"] == 0.9
