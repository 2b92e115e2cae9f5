"""Hostile text through the whole CLI, as a GitHub Actions step runs it.

Model output (a mock target's answer) and judge output (a code judge's misses and reasoning)
carry workflow commands (`::set-output`, `::add-mask::`, `%0A::error::`, `##[error]`), ANSI
escapes, characters XML forbids, CRLF, and a 1 MB answer. The run must leave:

* stdout and stderr with no workflow command but our own `::error file=...` annotations, each
  one line with the exact escaped text we expect (parsed the way the runner parses a log);
* a job summary whose table rows keep their shape, with nothing raw from the model;
* a JUnit file that parses and validates against the XSD;
* `$GITHUB_OUTPUT` parseable, holding exactly our keys next to what earlier steps wrote;
* results.jsonl with every answer exactly as the model gave it: nothing lost, nothing altered.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers.cli import run_cli
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply, RecordedRequest
from tests.helpers.files import make_repo, write
from tests.helpers.github_runner import parse_github_output, runner_commands
from tests.helpers.hostile import copy_judges, no_traceback
from tests.helpers.reports import checked_junit, junit_cases, read_rows

HOSTILE = ("::set-output name=x::y\n::add-mask::secret\n%0A::error::pwned\n  ::warning::x\r\n##[error]x "
           "\x1b[31mred\x1b[0m \x1b]0;title\x07nul\x00 vt\x0b end")
"""Every trick at once; `\\x1b]0;title\\x07` is an OSC sequence (sets a terminal's title)."""

BIG = (HOSTILE + "\n") * (1024 * 1024 // (len(HOSTILE) + 1) + 1)
"""A little over 1 MB of it."""

HOSTILE_ID = "id\n::add-mask::x ##[error]y"
OUR_KEYS = {"pass-rate", "passed", "failed", "errors", "quarantined", "advisory", "total", "not-run", "junit-path",
            "results-path", "report-path"}


def targets_yaml() -> str:
    target = {"name": "default", "provider": "mock", "response": "ok",
              "responses": [{"id": "model-text", "response": HOSTILE}, {"id": "big-answer", "response": BIG}]}
    return yaml.safe_dump({"targets": [target]}, allow_unicode=True)


def suite_yaml() -> str:
    judge = {"type": "code_judge", "name": "j", "script": ["python3", "judges/hostile_judge.py"]}
    cases: list[dict[str, Any]] = [
        {"id": "passes", "input": "q", "assert": [{"type": "contains", "value": "ok"}]},
        {"id": "judge-text", "input": "q", "assert": [{**judge, "text": HOSTILE}]},
        {"id": "model-text", "input": "q", "assert": [judge]},
        {"id": "big-answer", "input": "q", "assert": [{**judge, "text": "echo", "echo_answer": True}]},
        {"id": "judge-crash", "input": "q", "assert": [{**judge, "text": HOSTILE, "crash": True}]},
        {"id": HOSTILE_ID, "input": "q", "assert": [{"type": "contains", "value": "NEVER"}]},
    ]
    return yaml.safe_dump({"tests": cases}, allow_unicode=True, width=10**9)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One run of the hostile suite in a GitHub-Actions-like environment, shared by the checks below."""
    repo = make_repo(tmp_path_factory.mktemp("hostile") / "repo", targets_yaml())
    copy_judges(repo)
    write(repo / "evals/hostile.eval.yaml", suite_yaml())
    output, summary = repo.parent / "github_output", repo.parent / "step_summary"
    output.write_text("earlier=from a previous step\n", encoding="utf-8")
    env = {"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary),
           "GITHUB_WORKSPACE": str(repo)}
    proc = run_cli("run", "evals", "--judge-timeout", "30", cwd=repo, env=env)
    lines = {row["eval_id"]: row["line"] for row in read_rows(repo / ".agentv-gate/results.jsonl")}
    return {"repo": repo, "proc": proc, "output": output, "summary": summary, "lines": lines}


def test_the_run_finishes_and_reports_every_case(run: dict[str, Any]) -> None:
    proc = run["proc"]
    assert proc.returncode == 1, proc.stderr
    assert no_traceback(proc.stdout + proc.stderr)
    rows = {r["eval_id"]: r["verdict"] for r in read_rows(run["repo"] / ".agentv-gate/results.jsonl")}
    assert rows == {"passes": "pass", "judge-text": "fail", "model-text": "fail", "big-answer": "fail", HOSTILE_ID: "fail",
                    "judge-crash": "error"}


def test_only_our_annotations_are_workflow_commands(run: dict[str, Any]) -> None:
    proc = run["proc"]
    # The judges' own stderr is never passed through; our live log folds the passed case in a group.
    assert runner_commands(proc.stderr) == ["::group::evals/hostile.eval.yaml (passed cases)", "::endgroup::"]
    assert "\x1b" not in proc.stdout + proc.stderr and "\x00" not in proc.stdout + proc.stderr
    commands = runner_commands(proc.stdout)
    assert len(commands) == 5, commands  # one per case that did not pass
    for command in commands:
        assert re.match(r"::error file=evals/hostile\.eval\.yaml,line=\d+,title=agentv-gate%3A [^:,\r\n]* (failed|error)::",
                        command), command[:300]
        assert "##[" not in command and "\x1b" not in command and "\x00" not in command
        assert len(command) < 6000, "an annotation must stay bounded whatever the answer's size"


def test_annotation_text_is_escaped_exactly(run: dict[str, Any]) -> None:
    line = run["lines"]["judge-text"]
    shown = "::set-output name=x::y ::add-mask::secret %250A::error::pwned ::warning::x ## [error]x red nul\ufffd vt\ufffd end"
    multi = ("::set-output name=x::y%0A::add-mask::secret%0A%250A::error::pwned%0A  ::warning::x%0A## [error]x red "
             "nul\ufffd vt\ufffd end")
    expected = (f"::error file=evals/hostile.eval.yaml,line={line},title=agentv-gate%3A judge-text failed::"
                f"judge-text scored 0.000, below the threshold 0.500.%0AMisses:%0A- {shown}%0A- ok%0A"
                f"Reasoning: j: {multi}")
    assert expected in run["proc"].stdout.split("\n")


def test_a_crashing_judge_s_hostile_stderr_is_escaped_in_the_error_annotation(run: dict[str, Any]) -> None:
    line = run["lines"]["judge-crash"]
    flat = "::set-output name=x::y ::add-mask::secret %250A::error::pwned ::warning::x ## [error]x red nul\ufffd vt\ufffd end"
    prefix = (f"::error file=evals/hostile.eval.yaml,line={line},title=agentv-gate%3A judge-crash error::"
              f"judge-crash could not be scored: evaluator 'j': judge 'j' (python3) exited with code 3")
    annotation = next(c for c in runner_commands(run["proc"].stdout) if c.startswith(prefix))
    assert f"%0A- stderr: {flat}" in annotation, annotation


def test_a_hostile_case_id_cannot_break_out_of_the_title(run: dict[str, Any]) -> None:
    line = run["lines"][HOSTILE_ID]
    expected = (f"::error file=evals/hostile.eval.yaml,line={line},title=agentv-gate%3A id %3A%3Aadd-mask%3A%3Ax "
                f"## [error]y failed::id ::add-mask::x ## [error]y scored 0.000, below the threshold 0.500.%0A"
                f'Misses:%0A- Output does not contain "NEVER"%0AReasoning: contains-NEVER: Output does not contain "NEVER"')
    assert expected in run["proc"].stdout.split("\n")


def test_github_output_holds_exactly_our_keys_after_earlier_steps(run: dict[str, Any]) -> None:
    values = parse_github_output(run["output"].read_text(encoding="utf-8"))
    assert set(values) == OUR_KEYS | {"earlier"}
    assert values["earlier"] == "from a previous step"
    assert (values["passed"], values["failed"], values["errors"], values["total"]) == ("1", "4", "1", "6")
    assert values["pass-rate"] == "0.1667"
    assert values["junit-path"].endswith("junit.xml") and values["results-path"].endswith("results.jsonl")


def test_summary_rows_keep_their_shape_and_carry_nothing_raw(run: dict[str, Any]) -> None:
    text = run["summary"].read_text(encoding="utf-8")
    assert len(text.encode()) < 1024 * 1024, "GitHub rejects a step summary over 1 MiB"
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", text), "control characters or ANSI escapes in the summary"
    assert "##[" not in text.replace("##\\[", "")
    tables = [line for line in text.splitlines() if line.startswith("|")]
    assert tables, text
    for row in tables:
        cells = re.split(r"(?<!\\)\|", row)[1:-1]
        assert len(cells) in (5, 6), row[:300]  # passed table / not-passed table
    # Raw HTML from the model would render: only our own tags may appear.
    assert set(re.findall(r"</?([a-zA-Z]+)", text)) <= {"br", "details", "summary"}
    assert "judge-text" in text and "big-answer" in text


def test_junit_is_well_formed_valid_and_bounded(run: dict[str, Any]) -> None:
    path = run["repo"] / ".agentv-gate/junit.xml"
    root = checked_junit(path)
    assert junit_cases(root) == {"passes": "pass", "judge-text": "fail", "model-text": "fail", "big-answer": "fail",
                                 "id ::add-mask::x ##[error]y": "fail", "judge-crash": "error"}
    assert path.stat().st_size < 200_000, "a 1 MB answer must not be copied whole into JUnit"


def test_results_keep_every_answer_exactly_as_the_model_gave_it(run: dict[str, Any]) -> None:
    rows = {r["eval_id"]: r for r in read_rows(run["repo"] / ".agentv-gate/results.jsonl")}
    assert rows["model-text"]["candidate_answer"] == HOSTILE
    assert rows["big-answer"]["candidate_answer"] == BIG
    assert rows["judge-text"]["misses"][0] == HOSTILE


def test_a_provider_s_hostile_refusal_is_noticed_inert(tmp_path: Path) -> None:
    """A server refusing a parameter is told on stderr, quoting its error's type, code and message:
    text of the provider's (or of whatever sits at the endpoint) that the CI log must not take for a
    legacy `##[command]`, and with no terminal escape or control character left in it."""
    def refuse_temperature(request: RecordedRequest) -> FakeReply:
        if "temperature" not in (request.json or {}):
            return FakeReply.openai("Paris")
        return FakeReply.json({"error": {
            "message": "Unsupported value: 'temperature' does not support 0.5. ##[add-mask]everything",
            "type": "invalid\x1b[2J_request ##[stop-commands]x", "param": "temperature",
            "code": "unsupported_value\x07\x00"}}, status=400)

    with FakeLLMServer() as server:
        server.set_default("/v1/chat/completions", refuse_temperature)
        repo = make_repo(tmp_path / "repo", f"""
            targets:
              - name: m
                provider: openai
                endpoint: {server.url}/v1
                model: fake
                temperature: 0.5
            """)
        write(repo / "evals/a.eval.yaml", """
            tests:
              - {id: c, input: q, assert: [{type: contains, value: Paris}]}
            """)
        proc = run_cli("run", "evals", "--no-cache", cwd=repo, env={"GITHUB_ACTIONS": "true"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    refused = [line for line in proc.stderr.splitlines() if "the server refused 'temperature'" in line]
    assert len(refused) == 1, proc.stderr
    assert "add-mask]everything" in refused[0] and "stop-commands]x" in refused[0]
    assert runner_commands(refused[0]) == []
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", proc.stderr), repr(proc.stderr)


def test_lone_surrogates_in_a_judge_s_free_form_details_do_not_stop_the_run(tmp_path: Path) -> None:
    """A code judge's `details` is free-form JSON; `\\ud800` in it (a key inside a nested object, next
    to one in its reasoning) is a lone surrogate once parsed, which UTF-8 cannot encode. The case is
    reported like any other (results.jsonl writes such a character as `\\ud800` text) instead of the
    run stopping on an internal error with no row written."""
    repo = make_repo(tmp_path / "repo")
    write(repo / "evals" / "judge.py", r"""
        import json, sys
        json.load(sys.stdin)
        sys.stdout.write('{"score": 0.2, "reasoning": "r \\ud83d", "misses": ["m \\udfff"], '
                         '"details": {"\\ud800k": "\\udc00", "nested": {"\\udbff": ["\\ud800"]}}}')
        """)
    write(repo / "evals" / "a.eval.yaml", """
        tests:
          - id: surrogates
            input: q
            assert: [{type: code_judge, name: j, script: [python3, judge.py]}]
        """)
    proc = run_cli("run", "evals", cwd=repo, env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(tmp_path / "s.md")})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    rows = read_rows(repo / ".agentv-gate/results.jsonl")
    assert [(r["eval_id"], r["verdict"]) for r in rows] == [("surrogates", "fail")]
    assert rows[0]["scores"][0]["details"]["nested"] == {"\udbff": ["\ud800"]}  # read back as written
    checked_junit(repo / ".agentv-gate/junit.xml")
