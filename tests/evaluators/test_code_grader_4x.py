"""AgentV 4.x code-graders get 4.42's payload and reply rules; 2.x code judges keep theirs, in one suite.

The bug: a `code-grader` copied from AgentV 4.42's docs reads the answer as the string `output`;
the gate sent it 2.x's message list there, so it found no answer and scored 0 where AgentV scores 1.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.reports import RESULTS, rows_by_id

PY = "python3"
SPEC_SAMPLE = Path(__file__).resolve().parents[3] / "shared" / "spec" / "agentv-4.42-code-judge-stdin-sample.json"

TARGETS = """\
targets:
  - name: default
    provider: mock
    response: "Paris is the capital of France."
"""

RECORDER = """\
import json, sys
payload = json.load(sys.stdin)
open(sys.argv[1], "w").write(json.dumps(payload))
print(json.dumps({"score": 1}))
"""

DOCS_GRADER = """\
import json, sys
payload = json.load(sys.stdin)
output = payload.get("output") or ""
ok = isinstance(output, str) and "Paris" in output
print(json.dumps({"score": 1 if ok else 0, "assertions": [{"text": "Mentions Paris", "passed": ok}]}))
"""


MIGRATING = 'agentv:\n  version: "2.19"\n'
"""A 2.19 team's pin (.agentv/gate.yaml): unpinned, a file mixing both generations' judges is refused."""


def _project(tmp_path: Path, suite: str, judges: dict[str, str], gate: str | None = None) -> Path:
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "targets.yaml").write_text(TARGETS)
    if gate is not None:
        (tmp_path / ".agentv" / "gate.yaml").write_text(gate)
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "suite.eval.yaml").write_text(suite)
    for name, text in judges.items():
        (tmp_path / "evals" / name).write_text(text)
    return tmp_path


def test_a_4x_grader_from_the_docs_reads_the_answer_as_text_and_passes(tmp_path: Path) -> None:
    """Fails before the fix: `output` was the 2.x message list, the grader saw no "Paris" and scored 0."""
    repo = _project(tmp_path, f"""\
tests:
  - id: capital
    input: What is the capital of France?
    criteria: Names Paris
    assertions:
      - name: docs
        type: code-grader
        command: [{PY}, docs_grader.py]
""", {"docs_grader.py": DOCS_GRADER})
    proc = run_cli("run", "evals", "--no-cache", cwd=repo)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    row = rows_by_id(repo / RESULTS)["capital"]
    assert row["score"] == 1.0
    assert row["scores"][0]["hits"] == ["Mentions Paris"]


def test_a_suite_mixing_code_judge_and_code_grader_gives_each_its_own_payload(tmp_path: Path) -> None:
    repo = _project(tmp_path, f"""\
tests:
  - id: capital
    input:
      - role: system
        content: Answer in one sentence.
      - role: user
        content: What is the capital of France?
    criteria: Names Paris as the capital of France
    expected_output: Paris is the capital of France.
    metadata: {{owner: geo}}
    assertions:
      - name: old
        type: code_judge
        script: [{PY}, recorder.py, old.json]
      - name: new
        type: code-grader
        command: [{PY}, recorder.py, new.json]
        keywords: [Paris, France]
""", {"recorder.py": RECORDER}, gate=MIGRATING)
    proc = run_cli("run", "evals", "--no-cache", cwd=repo)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    old = json.loads((repo / "evals" / "old.json").read_text())
    new = json.loads((repo / "evals" / "new.json").read_text())
    # 2.x: the answer's messages in `output`, the text in `answer`, and the 2.x names
    assert old["output"] == [{"role": "assistant", "content": "Paris is the capital of France."}]
    assert old["answer"] == "Paris is the capital of France."
    assert old["question"] == "Answer in one sentence. What is the capital of France?"
    # 4.x: the answer as text, the transcript in `messages`, and none of the 2.x names
    assert new["output"] == "Paris is the capital of France."
    assert [m["role"] for m in new["messages"]] == ["system", "user", "assistant"]
    assert new["metadata"] == {"owner": "geo"}
    assert new["config"] == {"keywords": ["Paris", "France"]}
    assert not {"answer", "question", "reference_answer", "candidate_answer", "output_messages"} & set(new)
    events = new["trace"]["events"]
    assert [e["type"] for e in events] == ["message", "message", "message", "final_response"]
    assert events[-1]["parent_event_id"] == "message-2"
    assert new["trace_summary"] == {"event_count": 0, "tool_calls": {}, "error_count": 0, "llm_call_count": 1}
    assert new["trace"]["metadata"] == {"provider": "mock", "target": "default", "eval_case_id": "capital"}
    # each row names the type as its own AgentV does: 2.19 `code-judge`, 4.42 `code-grader`
    assert [entry["type"] for entry in rows_by_id(repo / RESULTS)["capital"]["scores"]] == ["code-judge", "code-grader"]


def test_a_4x_grader_s_written_config_is_merged_flat_as_4_42_merges_it(tmp_path: Path) -> None:
    """AgentV 4.42 (grader-parser.ts) merges a code-grader's `config:` over its other keys: `config.limit`, the
    written `config` winning (checked with `agentv eval`: `{"limit": 3, "mode": "slow"}`). The gate nested it as
    2.19 does (`config.config.limit`), so AgentV's own trace-evaluation graders never saw their `maxLlmCalls` and
    checked their defaults instead (a limit of 5 read as 10: a pass where AgentV fails). A 2.x code judge keeps
    2.19's nesting."""
    repo = _project(tmp_path, f"""\
tests:
  - id: capital
    input: What is the capital of France?
    assertions:
      - name: new
        type: code-grader
        command: [{PY}, recorder.py, new.json]
        mode: fast
        config: {{limit: 3, mode: slow}}
      - name: old
        type: code_judge
        script: [{PY}, recorder.py, old.json]
        mode: fast
        config: {{limit: 3}}
""", {"recorder.py": RECORDER}, gate=MIGRATING)
    proc = run_cli("run", "evals", "--no-cache", cwd=repo)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert json.loads((repo / "evals" / "new.json").read_text())["config"] == {"limit": 3, "mode": "slow"}
    assert json.loads((repo / "evals" / "old.json").read_text())["config"] == {"mode": "fast", "config": {"limit": 3}}


@pytest.mark.skipif(not SPEC_SAMPLE.is_file(), reason="../shared/spec (AgentV 4.42's payload sample) is not here")
def test_the_4x_payload_has_the_keys_of_agentv_4_42s_sample_and_no_other(tmp_path: Path) -> None:
    sample = json.loads(SPEC_SAMPLE.read_text())
    repo = _project(tmp_path, f"""\
tests:
  - id: capital
    input:
      - role: system
        content: Answer in one sentence.
      - role: user
        content: What is the capital of France?
    criteria: Names Paris as the capital of France
    expected_output: Paris is the capital of France.
    assertions:
      - name: new
        type: code_grader
        command: [{PY}, recorder.py, new.json]
        keywords: [Paris, France]
""", {"recorder.py": RECORDER}, gate=MIGRATING)
    proc = run_cli("run", "evals", "--no-cache", cwd=repo)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    new = json.loads((repo / "evals" / "new.json").read_text())
    assert set(new) == set(sample)
    for key in ("criteria", "expected_output", "output", "messages", "input", "input_files", "metadata", "config",
                "trace_summary", "file_changes", "workspace_path"):
        assert new[key] == sample[key], key
    assert [e["event_id"] for e in new["trace"]["events"]] == [e["event_id"] for e in sample["trace"]["events"]]
    assert new["trace"]["events"] == sample["trace"]["events"]


@pytest.mark.parametrize(("script", "score", "verdict", "evaluator_error"), [
    # no score: passed / total, as 4.42 derives it
    ('print(\'{"assertions": [{"text": "a", "passed": true}, {"text": "b", "passed": false}, 7]}\')', 0.5,
     "fail", False),  # 0.5 is below a 4.x case's pass mark, 0.8 (AgentV 4.42's default)
    ('print(\'{"assertions": [{"text": "a", "passed": true}]}\')', 1.0, "pass", False),
    ('print("{}")', 0.0, "fail", False),  # neither: 0
    ('print("looks right to me")', 1.0, "pass", False),  # exit 0, plain text: a pass
    ('import sys; print("missing Paris"); sys.exit(1)', 0.0, "fail", False),  # exit 1, plain text: a fail
    ('import sys; print(\'{"score": 1}\'); sys.exit(1)', 0.0, "error", True),  # exit 1 with JSON: it broke
    ('import sys; sys.stderr.write("boom"); sys.exit(2)', 0.0, "error", True),  # exit 2 with stderr: it broke
    ('print(\'{"score": 7}\')', 0.0, "error", True),  # 4.42 clamps to 1; a 7 must not pass here
    ('print(\'{"assertions": [{"text": "a", "passed": "false"}]}\')', 0.0, "error", True),  # JS truth would pass
])
def test_a_4x_grader_reply_is_read_as_agentv_4_42_reads_it(tmp_path: Path, script: str, score: float,
                                                            verdict: str, evaluator_error: bool) -> None:
    repo = _project(tmp_path, f"""\
tests:
  - id: capital
    input: What is the capital of France?
    assertions:
      - name: g
        type: code-grader
        command: [{PY}, grader.py]
""", {"grader.py": script + "\n"})
    run_cli("run", "evals", "--no-cache", cwd=repo)
    row = rows_by_id(repo / RESULTS)["capital"]
    assert (row["score"], row["verdict"]) == (score, verdict)
    assert ("error" in row["scores"][0]) is evaluator_error


def test_the_same_replies_keep_their_2x_reading_on_a_code_judge(tmp_path: Path) -> None:
    """2.19's rules are unchanged: prose on stdout is a broken judge, not a pass."""
    repo = _project(tmp_path, f"""\
tests:
  - id: capital
    input: What is the capital of France?
    assert:
      - name: g
        type: code_judge
        script: [{PY}, grader.py]
""", {"grader.py": 'print("looks right to me")\n'})
    run_cli("run", "evals", "--no-cache", cwd=repo)
    row = rows_by_id(repo / RESULTS)["capital"]
    assert (row["score"], row["verdict"]) == (0.0, "error")


def test_a_long_answer_reaches_a_4x_grader_in_output_path(tmp_path: Path) -> None:
    long_answer = "Paris " * 10_000
    repo = _project(tmp_path, f"""\
tests:
  - id: long
    input: Say Paris many times.
    assertions:
      - name: g
        type: code-grader
        command: [{PY}, grader.py]
""", {"grader.py": """\
import json, sys
payload = json.load(sys.stdin)
text = json.loads(open(payload["output_path"]).read())
ok = payload["output"] is None and text.count("Paris") == 10000
print(json.dumps({"score": 1 if ok else 0}))
"""})
    (repo / ".agentv" / "targets.yaml").write_text(
        f"targets:\n  - name: default\n    provider: mock\n    response: {json.dumps(long_answer)}\n")
    proc = run_cli("run", "evals", "--no-cache", cwd=repo)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert rows_by_id(repo / RESULTS)["long"]["score"] == 1.0


SDK_GRADER = """\
from agentv_gate.sdk import CodeGraderInput, define_code_grader


@define_code_grader
def grade(payload: CodeGraderInput) -> dict:
    names = payload.config["cities"]
    return {"assertions": [{"text": f"mentions {name}", "passed": name in payload.output_text} for name in names]}
"""


def test_a_python_grader_on_the_4x_sdk_flavour_scores_the_share_of_its_assertions(tmp_path: Path) -> None:
    repo = _project(tmp_path, f"""\
tests:
  - id: capital
    input: What is the capital of France?
    assertions:
      - name: sdk
        type: code-grader
        command: [{PY}, sdk_grader.py]
        cities: [Paris, Lyon, France, Nice]
""", {"sdk_grader.py": SDK_GRADER})
    run_cli("run", "evals", "--no-cache", cwd=repo)
    score = rows_by_id(repo / RESULTS)["capital"]["scores"][0]
    assert score["score"] == 0.5
    assert score["hits"] == ["mentions Paris", "mentions France"]
    assert score["misses"] == ["mentions Lyon", "mentions Nice"]


def test_the_4x_sdk_flavour_refuses_a_2x_payload_rather_than_grading_no_answer(tmp_path: Path) -> None:
    repo = _project(tmp_path, f"""\
tests:
  - id: capital
    input: What is the capital of France?
    assert:
      - name: sdk
        type: code_judge
        script: [{PY}, sdk_grader.py]
        cities: [Paris]
""", {"sdk_grader.py": SDK_GRADER})
    run_cli("run", "evals", "--no-cache", cwd=repo)
    row = rows_by_id(repo / RESULTS)["capital"]
    assert row["verdict"] == "error"
    assert "define_code_judge" in " ".join(row["scores"][0]["misses"])


PROMPT_RECORDER = """\
import json, pathlib, sys
payload = json.load(sys.stdin)
pathlib.Path(__file__).with_suffix(".json").write_text(json.dumps(payload))
print('Grade the answer. Reply {"score": 0..1}')
"""


def test_a_4x_prompt_script_gets_4_42s_payload_and_a_2x_one_keeps_its_own(tmp_path: Path) -> None:
    """Fails before the fix: an llm-grader's executable prompt template got 2.19's judge payload (`output` as
    messages, `question`, `reference_answer`), where 4.42 sends the answer as text beside the transcript."""
    repo = _project(tmp_path, f"""\
tests:
  - id: capital
    input: What is the capital of France?
    criteria: Names Paris
    expected_output: Paris
    metadata: {{owner: geo}}
    assertions:
      - name: old
        type: llm_judge
        prompt: {{script: [{PY}, old.py]}}
      - name: new
        type: llm-grader
        config: {{ignored: true}}
        prompt: {{command: [{PY}, new.py], config: {{strictMode: true}}}}
""", {"old.py": PROMPT_RECORDER, "new.py": PROMPT_RECORDER}, gate=MIGRATING)
    (repo / ".agentv" / "targets.yaml").write_text(TARGETS + '    judge_response: \'{"score": 1, "assertions": []}\'\n')
    proc = run_cli("run", "evals", "--no-cache", cwd=repo)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    old = json.loads((repo / "evals" / "old.json").read_text())
    new = json.loads((repo / "evals" / "new.json").read_text())
    assert old["output"] == [{"role": "assistant", "content": "Paris is the capital of France."}]
    assert "question" in old and "reference_answer" in old
    assert list(new) == ["criteria", "expected_output", "output", "answer", "messages", "input_files", "input",
                         "metadata", "trace", "file_changes", "workspace_path", "config"]
    assert new["output"] == new["answer"] == "Paris is the capital of France."
    assert [m["role"] for m in new["messages"]] == ["user", "assistant"]
    assert new["expected_output"] == [{"role": "assistant", "content": "Paris"}]
    assert new["metadata"] == {"owner": "geo"} and new["config"] == {"strict_mode": True}
    assert new["file_changes"] is None and new["workspace_path"] is None
    assert new["trace"]["metadata"] == {"provider": "mock", "target": "default", "eval_case_id": "capital"}
    assert [entry["type"] for entry in rows_by_id(repo / RESULTS)["capital"]["scores"]] == ["llm-judge", "llm-grader"]


GRADER_SUITE = f"""\
tests:
  - id: capital
    input: What is the capital of France?
    assertions:
      - name: g
        type: code-grader
        command: [{PY}, grader.py]
"""


def _graded(tmp_path: Path, script: str) -> tuple[int, dict]:
    repo = _project(tmp_path, GRADER_SUITE, {"grader.py": script + "\n"})
    proc = run_cli("run", "evals", "--no-cache", cwd=repo)
    return proc.returncode, rows_by_id(repo / RESULTS)["capital"]


@pytest.mark.parametrize(("script", "said"), [
    # json.dumps writes NaN and Infinity, which JSON.parse refuses: the exit-code fallback passed them with 1.0
    ('import json; print(json.dumps({"score": float("nan"), "assertions": [{"text": "a", "passed": False}]}))',
     "NaN is not valid JSON"),
    ('import json; print(json.dumps({"score": float("inf")}))', "Infinity is not valid JSON"),
    ('import json; print(json.dumps({"score": -float("inf")}))', "-Infinity is not valid JSON"),
    ('print(\'{"score": 1e999}\')', "score that is not a number"),  # parses, to Infinity: not finite
    ('print("checking the answer"); print(\'{"score": 0}\')', "looks like JSON"),  # a log line before
    ('print(\'{"score": 0}\'); print("done")', "Extra data"),  # a log line after
    ('print(\'{"score": 0}\'); print(\'{"score": 0}\')', "Extra data"),  # two objects
    ('print(\'[{"text": "Paris", "passed": false}]\')', "a JSON list, not an object"),
    ('print("[" * 100000 + "]" * 100000)', "nested too deeply"),
    ('print(\'{"a":\' * 100000 + "0" + "}" * 100000)', "nested too deeply"),
    ('print(\'{"score": 0, \')', "Expecting"),  # cut short
])
def test_a_4x_grader_reply_that_is_not_one_readable_object_is_an_error_never_a_pass(
        tmp_path: Path, script: str, said: str) -> None:
    """Fails before the fix: each was read as plain text with exit 0, a pass scored 1.0, and the run exited 0."""
    code, row = _graded(tmp_path, script)
    assert code == 1, row
    assert (row["score"], row["verdict"]) == (0.0, "error"), row
    error = row["scores"][0]["error"]
    assert said in error, error
    if "score that is not a number" not in error:
        assert "expected exactly one JSON object" in error and "write logs to stderr" in error, error
        assert "\n" not in error and len(error) < 1200, error  # the reply is shown escaped and cut


@pytest.mark.parametrize("script", [
    'print("[PASS] the answer names Paris")',  # a shell check's prose in brackets stays prose
    'print("Paris: {ok}")',
    'print("42")',  # a bare JSON scalar is the plain-text path in 4.42 too
])
def test_prose_that_is_not_json_shaped_keeps_the_exit_code_reading(tmp_path: Path, script: str) -> None:
    code, row = _graded(tmp_path, script)
    assert (code, row["score"], row["verdict"]) == (0, 1.0, "pass"), row


CAP = 8 * 1024 * 1024  # DEFAULT_MAX_RESPONSE_BYTES, the judge's stdout cap


def test_a_4x_grader_reply_exactly_at_the_stdout_cap_is_read(tmp_path: Path) -> None:
    head = '{"score": 1}'
    code, row = _graded(tmp_path, f'import sys; sys.stdout.write({head!r} + " " * ({CAP} - {len(head)}))')
    assert (code, row["score"], row["verdict"]) == (0, 1.0, "pass"), row


def test_a_4x_grader_reply_one_byte_over_the_stdout_cap_is_an_error(tmp_path: Path) -> None:
    """Plain text over the cap would be an exit-code pass if it were read cut: the cap makes it an error."""
    code, row = _graded(tmp_path, f'import sys; sys.stdout.write("x" * ({CAP} + 1))')
    assert (code, row["verdict"]) == (1, "error"), row
    assert f"printed more than {CAP} bytes on stdout (the cap; it printed {CAP + 1})" in row["scores"][0]["error"]


def test_a_4x_grader_killed_by_a_signal_is_an_error_not_an_exit_code_fail(tmp_path: Path) -> None:
    """Plain stdout and no stderr would read a non-zero exit as the grader's fail; a signal is a crash."""
    code, row = _graded(tmp_path, 'import os, signal, sys; print("looks right"); sys.stdout.flush(); '
                                  'os.kill(os.getpid(), signal.SIGKILL)')
    assert (code, row["verdict"]) == (1, "error"), row
    assert "was killed by SIGKILL" in row["scores"][0]["error"]


EVIDENCE_GRADER = """\
import json, sys
json.load(sys.stdin)
print(json.dumps({"score": 0.5, "assertions": [{"text": "Mentions Paris", "passed": True, "evidence": "says Paris"},
                                               {"text": "One word", "passed": False, "evidence": "six words"}]}))
"""


def test_a_4x_graders_assertion_texts_are_4_42s_with_the_evidence_kept_apart(tmp_path: Path) -> None:
    """4.42 writes an assertion's text as the grader wrote it and its evidence apart (`assertions[].evidence`);
    the gate once wrote `text: evidence` into a 4.x code-grader's hits and misses."""
    repo = _project(tmp_path, f"""\
tests:
  - id: capital
    input: What is the capital of France?
    assertions:
      - {{name: g, type: code-grader, command: [{PY}, grader.py]}}
""", {"grader.py": EVIDENCE_GRADER})
    run_cli("run", "evals", "--no-cache", cwd=repo)
    (entry,) = rows_by_id(repo / RESULTS)["capital"]["scores"]
    assert (entry["hits"], entry["misses"]) == (["Mentions Paris"], ["One word"])
