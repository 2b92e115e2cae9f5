"""AgentV 4.42's answer preprocessors, through the CLI: an agent answers with a file block, and its llm-graders
read the file as text through the suite's (or their own) `preprocessors`, a command per media type.

AgentV 4.42 (content-preprocessor.ts, `LlmGrader.prepareContext`): the last assistant message's content blocks
become `[[ file: PATH ]]` and the preprocessor's trimmed stdout (it gets `{path, original_path, media_type}` on
stdin), text blocks their text; other graders read the answer as it is. A grader's own entry replaces the suite's
of the same type. The gate adds: a preprocessor that fails, or outlives the judge timeout, is that case's error at
the entry's line, never a note the grader might pass; a file outside the repository is not read.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply, RecordedRequest
from tests.helpers.files import make_repo, write
from tests.helpers.reports import rows_by_id

KEY = {"TEST_KEY": "k"}
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"

AGENT = """\
import json, os, sys
out = sys.argv[1]
answer = json.load(open("answers.json"))[open(sys.argv[2]).read().strip()]
os.makedirs("generated", exist_ok=True)
open("generated/report.xlsx", "wb").write(bytes([0, 159, 146, 150]))
open("generated/notes.md", "w").write("line one\\r\\nline two\\n")
json.dump({"output": [{"role": "assistant", "content": answer}]}, open(out, "w"))
"""
"""A `cli` agent: writes a binary spreadsheet and a text file in the repository, and answers its case (by id)
with the content blocks `answers.json` holds for it."""

CONVERT = """\
import json, sys
payload = json.load(sys.stdin)
open("seen-{name}.json", "w").write(json.dumps(payload))
print("  {name}: revenue,total")
print("Q1,42  ")
"""


def _judge(request: RecordedRequest) -> FakeReply:
    """A rubric grader satisfied when the answer holds the converted rows."""
    prompt = next(m["content"] for m in request.json["messages"] if m["role"] == "user")
    ok = "Q1,42" in prompt
    return FakeReply.openai(json.dumps({"checks": [{"id": "rubric-1", "satisfied": ok, "reasoning": "r"}],
                                        "overall_reasoning": "seen" if ok else "missing", "score": 1 if ok else 0,
                                        "assertions": [{"text": "rows", "passed": ok}]}))


def _repo(tmp_path: Path, fake_llm: FakeLLMServer, answers: dict[str, list[dict[str, str]]]) -> Path:
    fake_llm.set_default("/v1/chat/completions", _judge)
    repo = make_repo(tmp_path / "repo", f"""
        targets:
          - name: default
            provider: cli
            command: python3 agent.py {{OUTPUT_FILE}} {{PROMPT_FILE}}
            cwd: ..
            judge_target: judge
          - name: judge
            provider: openai
            base_url: {fake_llm.url}
            api_key: ${{{{ TEST_KEY }}}}
            model: m
    """)
    write(repo / "agent.py", AGENT)
    write(repo / "answers.json", json.dumps(answers))
    for name in ("suite", "own"):
        write(repo / "scripts" / f"{name}.py", CONVERT.replace("{name}", name))
    return repo


def _prompts(fake_llm: FakeLLMServer) -> list[str]:
    return [next(m["content"] for m in r.json["messages"] if m["role"] == "user")
            for r in fake_llm.requests_for("/v1/chat/completions")]


SHEET = [{"type": "file", "media_type": XLSX, "path": "generated/report.xlsx"}]


def test_a_suite_preprocessor_turns_the_file_block_into_the_graders_text(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    repo = _repo(tmp_path, fake_llm, {"sheet": SHEET})
    write(repo / "evals" / "x.eval.yaml", """
        preprocessors:
          - type: xlsx
            command: [python3, ../scripts/suite.py]
        tests:
          - id: c
            input: sheet
            assertions:
              - The spreadsheet holds the revenue rows
              - {type: contains, value: "Q1,42"}
    """)
    done = run_cli("run", "evals", "--no-cache", cwd=repo, env=KEY)
    row = rows_by_id(repo / ".agentv-gate" / "results.jsonl")["c"]
    (prompt,) = _prompts(fake_llm)
    assert "[[ ## answer ## ]]\n[[ file: generated/report.xlsx ]]\nsuite: revenue,total\nQ1,42\n" in prompt
    seen = json.loads((repo / "seen-suite.json").read_text())
    assert seen == {"path": str(repo / "generated" / "report.xlsx"), "original_path": "generated/report.xlsx",
                    "media_type": XLSX}
    scores = {s["name"]: s["score"] for s in row["scores"]}
    assert scores["rubrics"] == 1.0
    assert scores["contains-Q1,42"] == 0.0  # the other graders read the answer as it is, not the converted text
    assert done.returncode == 1, done.stdout + done.stderr


def test_a_graders_own_entry_replaces_the_suites_of_its_type(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    repo = _repo(tmp_path, fake_llm, {"sheet": SHEET})
    write(repo / "evals" / "x.eval.yaml", """
        preprocessors:
          - {type: xlsx, command: [python3, ../scripts/suite.py]}
          - {type: pdf, command: [python3, ../scripts/suite.py]}
        tests:
          - id: c
            input: sheet
            assertions:
              - name: own
                type: llm-grader
                preprocessors:
                  - {type: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
                     command: [python3, ../scripts/own.py]}
              - name: inherited
                type: llm-grader
    """)
    done = run_cli("run", "evals", "--no-cache", cwd=repo, env=KEY)
    assert done.returncode == 0, done.stdout + done.stderr
    prompts = _prompts(fake_llm)
    assert sum("own: revenue,total" in p for p in prompts) == 1
    assert sum("suite: revenue,total" in p for p in prompts) == 1


def test_of_two_entries_of_one_type_the_last_written_runs(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    """AgentV merges the entries by media type, a later one replacing an earlier one in place."""
    repo = _repo(tmp_path, fake_llm, {"sheet": SHEET})
    write(repo / "evals" / "x.eval.yaml", """
        preprocessors:
          - {type: xlsx, command: [python3, ../scripts/suite.py]}
          - {type: XLSX, command: [python3, ../scripts/own.py]}
        tests:
          - id: c
            input: sheet
            assertions:
              - The spreadsheet holds the revenue rows
              - name: own-list
                type: llm-grader
                preprocessors:
                  - {type: xlsx, command: [python3, ../scripts/own.py]}
                  - {type: xlsx, command: [python3, ../scripts/suite.py]}
    """)
    run_cli("run", "evals", "--no-cache", cwd=repo, env=KEY)
    prompts = _prompts(fake_llm)
    assert sorted("own: revenue" in p for p in prompts) == [False, True]
    assert sorted("suite: revenue" in p for p in prompts) == [False, True]


def test_the_default_grader_of_a_test_without_assertions_reads_through_the_suites(
        tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    repo = _repo(tmp_path, fake_llm, {"sheet": SHEET})
    write(repo / "evals" / "x.eval.yaml", """
        preprocessors: [{type: xlsx, command: [python3, ../scripts/suite.py]}]
        tests:
          - id: c
            input: sheet
            criteria: The spreadsheet holds the revenue rows
    """)
    run_cli("run", "evals", "--no-cache", cwd=repo, env=KEY)
    (prompt,) = _prompts(fake_llm)
    assert "[[ file: generated/report.xlsx ]]\nsuite: revenue,total\nQ1,42" in prompt


def test_without_a_preprocessor_a_text_file_is_read_and_a_binary_one_is_a_note(
        tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    blocks = [{"type": "text", "text": "Here it is."}, {"type": "file", "media_type": "text/markdown",
                                                          "path": "generated/notes.md"}, *SHEET]
    repo = _repo(tmp_path, fake_llm, {"both": blocks})
    write(repo / "evals" / "x.eval.yaml", """
        tests:
          - id: c
            input: both
            assertions: [The answer lists the notes]
    """)
    run_cli("run", "evals", "--no-cache", cwd=repo, env=KEY)
    (prompt,) = _prompts(fake_llm)
    assert ("[[ ## answer ## ]]\nHere it is.\n[[ file: generated/notes.md ]]\nline one\nline two\n\n"
            f"[file preprocessing warning] generated/report.xlsx ({XLSX}): default UTF-8 read produced binary or "
            "invalid text; configure a preprocessor\n") in prompt


def test_a_file_outside_the_repository_is_not_read(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    secret = write(tmp_path / "outside.txt", "TOP SECRET")
    repo = _repo(tmp_path, fake_llm, {"out": [{"type": "file", "media_type": "text/plain", "path": str(secret)}]})
    write(repo / "evals" / "x.eval.yaml", "tests:\n  - id: c\n    input: out\n    assertions: [Shows the file]\n")
    run_cli("run", "evals", "--no-cache", cwd=repo, env=KEY)
    (prompt,) = _prompts(fake_llm)
    assert "TOP SECRET" not in prompt
    assert "outside the repository and the case's workspace, so agentv-gate does not read it" in prompt


FAILING = {
    "exits non-zero": ("import sys\nsys.stderr.write('boom')\nsys.exit(3)\n", "exited with code 3 on the answer's "
                       "file generated/report.xlsx; stderr: boom", "60"),
    "hangs": ("import time\ntime.sleep(30)\n", "timed out after 1s and was killed", "1"),
}
"""How each preprocessor fails, what the case's error says, and the `--judge-timeout` it runs under (a short one
only where the timeout is the point: a loaded machine takes longer than 1 s to start `python3`)."""


@pytest.mark.parametrize("how", list(FAILING))
def test_a_failing_preprocessor_is_that_cases_error_at_its_line(tmp_path: Path, fake_llm: FakeLLMServer,
                                                                 how: str) -> None:
    script, said, timeout = FAILING[how]
    repo = _repo(tmp_path, fake_llm, {"sheet": SHEET, "text": [{"type": "text", "text": "Q1,42"}]})
    write(repo / "scripts" / "bad.py", script)
    write(repo / "evals" / "x.eval.yaml", """
        preprocessors:
          - type: xlsx
            command: [python3, ../scripts/bad.py]
        tests:
          - id: bad
            input: sheet
            assertions: [The spreadsheet holds the revenue rows]
          - id: fine
            input: text
            assertions: [The spreadsheet holds the revenue rows]
    """)
    done = run_cli("run", "evals", "--no-cache", "--judge-timeout", timeout, cwd=repo, env=KEY)
    rows = rows_by_id(repo / ".agentv-gate" / "results.jsonl")
    assert rows["fine"]["verdict"] == "pass"  # the other case still runs, and passes
    assert rows["bad"]["verdict"] == "error"
    assert f"evals/x.eval.yaml:2: preprocessor 'xlsx' (python3 ../scripts/bad.py) {said}" in rows["bad"]["error"]
    assert len(_prompts(fake_llm)) == 1  # the failing case's grader was never asked
    assert done.returncode != 0


def test_a_preprocessor_that_prints_nothing_gives_the_file_header_alone(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    repo = _repo(tmp_path, fake_llm, {"sheet": SHEET})
    write(repo / "scripts" / "quiet.py", "import sys\nsys.stdin.read()\n")
    write(repo / "evals" / "x.eval.yaml", """
        preprocessors: [{type: xlsx, command: [python3, ../scripts/quiet.py]}]
        tests:
          - id: c
            input: sheet
            assertions: [The spreadsheet holds the revenue rows]
    """)
    done = run_cli("run", "evals", "--no-cache", cwd=repo, env=KEY)
    (prompt,) = _prompts(fake_llm)
    assert "[[ ## answer ## ]]\n[[ file: generated/report.xlsx ]]\n\n\n[[ ## rubrics ## ]]" in prompt  # no text
    assert rows_by_id(repo / ".agentv-gate" / "results.jsonl")["c"]["verdict"] == "fail"
    assert done.returncode == 1


def test_a_preprocessor_whose_program_cannot_start_is_the_cases_error(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    repo = _repo(tmp_path, fake_llm, {"sheet": SHEET})
    write(repo / "evals" / "x.eval.yaml", """
        preprocessors: [{type: xlsx, command: [no-such-runner-xyz, ../scripts/suite.py]}]
        tests:
          - id: c
            input: sheet
            assertions: [The spreadsheet holds the revenue rows]
    """)
    run_cli("run", "evals", "--no-cache", cwd=repo, env=KEY)
    row = rows_by_id(repo / ".agentv-gate" / "results.jsonl")["c"]
    assert row["verdict"] == "error"
    assert "evals/x.eval.yaml:1: preprocessor 'xlsx' (no-such-runner-xyz ../scripts/suite.py) command not found: " \
           "'no-such-runner-xyz'" in row["error"]


def test_a_text_answer_is_graded_as_it_is(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    """The offline AgentV 4.42.4 example's reason to pass: its model answers text, so no preprocessor runs."""
    fake_llm.set_default("/v1/chat/completions", _judge)
    repo = make_repo(tmp_path / "repo", f"""
        targets:
          - name: default
            provider: openai
            base_url: {fake_llm.url}
            api_key: ${{{{ TEST_KEY }}}}
            model: m
            judge_target: default
    """)
    write(repo / "evals" / "x.eval.yaml", """
        preprocessors: [{type: xlsx, command: [bun, run, ../scripts/never.ts]}]
        tests:
          - id: c
            input: sheet
            assertions: [The spreadsheet holds the revenue rows]
    """)
    write(repo / "scripts" / "never.ts", "throw new Error('never run')\n")
    done = run_cli("run", "evals", "--no-cache", cwd=repo, env={**KEY, "PATH": "/usr/bin:/bin"})
    assert done.returncode == 1, done.stdout + done.stderr  # graded on the model's text; bun is not needed
    assert "never run" not in done.stdout + done.stderr


def test_a_relative_file_is_read_in_the_cases_workspace(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    """AgentV's content base path is the workspace first: the agent wrote its file in the template's copy (outside
    the repository), and that copy's file is the one converted, never a file of that name in the repository."""
    repo = _repo(tmp_path, fake_llm, {"sheet": SHEET})
    write(repo / "generated" / "report.xlsx", "the repository's own, not the agent's")
    template = repo / "evals" / "ws"
    write(template / "agent.py", AGENT.replace('"answers.json"', repr(str(repo / "answers.json"))))
    targets = repo / ".agentv" / "targets.yaml"
    targets.write_text(targets.read_text().replace("    cwd: ..\n", ""))
    write(repo / "evals" / "x.eval.yaml", """
        workspace:
          template: ./ws
        preprocessors: [{type: xlsx, command: [python3, ../scripts/ws.py]}]
        tests:
          - id: c
            input: sheet
            assertions: [The spreadsheet holds the revenue rows]
    """)
    write(repo / "scripts" / "ws.py", "import json, sys\npayload = json.load(sys.stdin)\n"
          "open('seen-ws.json', 'w').write(json.dumps({**payload, 'hex': open(payload['path'], 'rb').read().hex()}))\n"
          "print('Q1,42')\n")
    done = run_cli("run", "evals", "--no-cache", cwd=repo, env=KEY)
    assert done.returncode == 0, done.stdout + done.stderr
    seen = json.loads((repo / "seen-ws.json").read_text())
    assert seen["original_path"] == "generated/report.xlsx"
    assert not seen["path"].startswith(str(repo)), seen["path"]  # the workspace's copy
    assert seen["hex"] == bytes([0, 159, 146, 150]).hex()
