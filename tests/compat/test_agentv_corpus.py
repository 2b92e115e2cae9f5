"""A compatibility corpus: suites written the AgentV 2.19 way run unchanged and score as AgentV scores them.

`corpus/` holds three eval files, a targets.yaml, a `.env`, an agent, a code judge and an executable
prompt template, each using a form AgentV 2.19 accepts (the comments in the files say which).
The test runs the real `agentv-gate` console script on a copy, offline: the agent is a `cli`
target, the judge model a `mock` target, the HTTP healthcheck a loopback server.

Expected scores, from AgentV's rules (reference, section 0): deterministic assertions score 0 or 1;
a case scores the weighted mean of its evaluators; a code judge's score is what it prints; an LLM
judge's is the judge model's reply. The gate passes a case at the default threshold, 0.5.
"""

from __future__ import annotations

import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply
from tests.helpers.reports import RESULTS, rows_by_id

CORPUS = Path(__file__).with_name("corpus")
OWN_VARIABLES = ("COMPAT_",)
"""The variables the corpus reads: set by these tests or left unset on purpose, never inherited."""

EXPECTED: dict[str, tuple[float, str]] = {
    # case id: (score, verdict), and the form it checks
    "capital": (1.0, "pass"),             # cli `command:`, `cwd:` and a command `healthcheck:` without `type:`
    "wrong-city": (0.0, "fail"),          # auto-name `contains-Lyon` in the failure text
    "word-from-dotenv": (1.0, "pass"),    # `${{ COMPAT_WORD }}` from .env, in input and in an assertion
    "environment-wins": (1.0, "pass"),    # a variable set in the environment is not overridden by .env
    "unset-is-empty": (1.0, "pass"),      # an unset variable is the empty string
    "attachments": (1.0, "pass"),         # {FILES} has the guideline file; the judge reads the segment's `value`
    "json-answer": (1.0, "pass"),         # is-json + contains-any: (1 + 1) / 2
    "working-folder": (1.0, "pass"),      # relative `cwd` is relative to the eval file's folder
    "scripted-prompt": (1.0, "pass"),     # `prompt: {command: [...]}`: the mock judge scores the template's prompt 1
    "more-yaml": (1.0, "pass"),           # `- file://cases/more.yaml`
    "more-jsonl": (1.0, "pass"),          # `- file://cases/more.jsonl`
    "more-jsonl-fails": (0.0, "fail"),    # ... interpolated there too: ends-with "banana" on a Paris answer
    "capital-http": (1.0, "pass"),        # an HTTP `healthcheck: {url}` read from `${{ COMPAT_HEALTH_URL }}`
    # verdicts.eval.yaml (reference sections 1-4; each case's comment there derives its score)
    "rubric-checklist": (0.75, "pass"),   # checklist: satisfied weight / reported weight, 3 / 4
    "rubric-required": (0.0, "fail"),     # a `required` rubric judge below 0.8 zeroes the case
    "rubric-bands": (0.6, "pass"),        # score bands: (8 + 4) / 10 / 2
    "required-gate": (0.0, "fail"),       # `required: true` assertion failed: 0, not the mean 0.5
    "required-mark": (0.5, "pass"),       # `required: 0.6` reached: the mean
    "trajectory": (0.6, "pass"),          # in_order with args_match and max_duration_ms: 3 / 5
    "trajectory-any-order": (0.5, "pass"),  # minimums: 1 of 2 tools
    "budgets": (0.625, "pass"),           # latency 1, cost 0, token-usage 1, execution-metrics 1/2
}

EVALUATOR_VERDICTS: dict[str, list[tuple[str, float, str]]] = {
    # case id: (evaluator, score, AgentV's verdict) for each evaluator, where the verdict is the point
    "rubric-checklist": [("rubrics", 0.75, "fail")],        # an unmet required item forces `fail`, not the score
    "rubric-required": [("rubrics", 0.75, "fail"), ("contains-Refund", 1.0, "pass")],
    "rubric-bands": [("depth", 0.6, "borderline")],         # 8 >= required_min_score 6: no forced fail
    "budgets": [("fast", 1.0, "pass"), ("cheap", 0.0, "fail"), ("small", 1.0, "pass"), ("lean", 0.5, "fail")],
}


@pytest.fixture(scope="module")
def corpus_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """One run over the whole corpus, shared by the tests below (a run costs a few seconds)."""
    repo = tmp_path_factory.mktemp("agentv-corpus") / "repo"
    shutil.copytree(CORPUS, repo)
    with FakeLLMServer() as server:
        server.set_default("/health", FakeReply.json({"status": "ok"}))
        env = {"COMPAT_OVERRIDE": "from-environment", "COMPAT_HEALTH_URL": f"{server.url}/health"}
        proc = run_cli("run", "suites", "--no-cache", "--workers", "4", cwd=repo, env=env, drop=OWN_VARIABLES,
                       timeout=120)
        health_checks = len(server.requests_for("/health"))
    assert health_checks == 1, "the HTTP healthcheck runs once, before the first case of its target"
    return repo, proc


def test_every_case_scores_as_agentv_scores_it(corpus_run: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    repo, proc = corpus_run
    assert proc.returncode == 1, proc.stderr  # two cases fail on purpose; nothing errors
    rows = rows_by_id(repo / RESULTS)
    got = {case_id: (round(float(row["score"]), 9), row["verdict"]) for case_id, row in rows.items()}
    assert got == EXPECTED, proc.stderr
    evaluators = {case_id: [(r["name"], round(r["score"], 9), r["verdict"]) for r in rows[case_id]["scores"]]
                  for case_id in EVALUATOR_VERDICTS}
    assert evaluators == EVALUATOR_VERDICTS
    assert "1 variable(s) set from" in proc.stderr and ".env" in proc.stderr


def test_auto_names_are_agentv_s(corpus_run: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    rows = rows_by_id(corpus_run[0] / RESULTS)
    names = {case_id: [r["name"] for r in row.get("evaluator_results") or []] for case_id, row in rows.items()}
    assert names["capital"] == ["contains-Paris", "regex-capital of (France|Spain|Italy"]
    assert names["json-answer"] == ["is-json", "contains-any-2"]
    assert rows["wrong-city"]["reasoning"] == 'contains-Lyon: Output does not contain "Lyon"'
    assert str(rows["more-jsonl-fails"]["reasoning"]).startswith("ends-with-banana: ")
    assert str(rows["word-from-dotenv"]["reasoning"]).startswith("equals-banana: ")


def test_junit_names_suites_as_agentv_does(corpus_run: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    root = ET.parse(corpus_run[0] / ".agentv-gate" / "junit.xml").getroot()
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert set(suites) == {"probe.eval", "geography", "verdicts.eval"}  # the file name without .yaml; `dataset:`
    assert suites["probe.eval"].get("file") == "suites/probe.eval.yaml"
    cases = {tc.get("name"): tc for tc in suites["probe.eval"].iter("testcase")}
    assert {tc.get("classname") for tc in cases.values()} == {"probe.eval"}
    # A case from an included case file points at that file and its line there.
    more = cases["more-jsonl-fails [agent]"]
    assert (more.get("file"), more.get("line")) == ("suites/cases/more.jsonl", "2")
    failure = cases["wrong-city [agent]"].find("failure")
    assert failure is not None and "contains-Lyon" in (failure.text or "")
    http_case = next(suites["geography"].iter("testcase"))
    assert http_case.get("classname") == "geography"


def test_validate_accepts_the_corpus_offline(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(CORPUS, repo)
    # validate checks targets too (preflight), so the variable targets.yaml reads must be set; nothing is called.
    proc = run_cli("validate", "suites", cwd=repo, env={"COMPAT_HEALTH_URL": "http://127.0.0.1:9/health"},
                   drop=OWN_VARIABLES)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ok: 21 case(s) in 3 file(s)" in proc.stderr
