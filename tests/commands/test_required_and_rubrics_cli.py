"""`required` gates and rubric judges through the real CLI: a real `agentv-gate` process, a real
targets file, and a real loopback server playing the judge model."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers.cli import run_cli
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply
from tests.helpers.files import make_repo, write
from tests.helpers.reports import RESULTS, rows_by_id

CHAT = "/v1/chat/completions"
ANSWER = "Acme Corp is DENIED: it matches entry 42 on the consolidated list."
FAST = {"retry_initial_delay_ms": 1, "retry_max_delay_ms": 5, "retry_jitter_ms": 1, "timeout_seconds": 10}


def make_project(tmp_path: Path, suite: str, judge_url: str | None = None) -> Path:
    agent: dict[str, Any] = {"name": "default", "provider": "mock", "response": ANSWER}
    targets = [agent]
    if judge_url is not None:
        agent["judge_target"] = "judge"
        targets.append({"name": "judge", "provider": "openai", "base_url": judge_url, "model": "grader", **FAST})
    project = make_repo(tmp_path / "repo", yaml.safe_dump({"targets": targets}, sort_keys=False))
    write(project / "evals/screen.eval.yaml", suite)
    return project


def scores(row: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["name"]: entry for entry in row["scores"]}


def checks_reply(*checks: dict[str, Any], overall: str = "judged") -> FakeReply:
    return FakeReply.openai(json.dumps({"checks": list(checks), "overall_reasoning": overall}))


# ---------------------------------------------------------------- required


REQUIRED_SUITE = """
tests:
  - id: gate-fails
    criteria: Must approve
    input: Screen Acme
    assert:
      - {type: contains, value: APPROVED, required: true}
      - {type: contains, value: Acme}
      - {type: contains, value: entry 42}
  - id: gate-holds
    criteria: Must deny
    input: Screen Acme
    assert:
      - {type: contains, value: DENIED, required: true}
      - {type: contains, value: APPROVED}
  - id: own-mark
    criteria: Must name both
    input: Screen Acme
    assert:
      - {type: contains-all, value: [Acme, Globex], required: 0.5}
      - {type: contains, value: DENIED}
  - id: negated
    criteria: Must not approve
    input: Screen Acme
    assert:
      - {type: contains, value: DENIED, negate: true, required: true}
      - {type: contains, value: Acme}
"""


def test_a_required_evaluator_below_its_mark_zeroes_the_case_but_every_hit_and_miss_is_kept(tmp_path: Path) -> None:
    project = make_project(tmp_path, REQUIRED_SUITE)
    write(project / ".agentv/gate.yaml", 'agentv: {version: "2.19"}\n')  # 2.19's default pass mark, 0.5
    proc = run_cli("run", "evals", "--no-cache", cwd=project)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    found = rows_by_id(project / RESULTS)
    failed = found["gate-fails"]
    # Without the gate this would be (0 + 1 + 1) / 3 = 0.667, a pass at the default 0.5.
    assert (failed["score"], failed["verdict"]) == (0.0, "fail")
    # AgentV's misses are the evaluators' own; why the case is 0 leads the reasoning
    assert failed["reasoning"].startswith("required evaluator 'contains-APPROVED' scored 0.000, below its mark 0.8")
    assert 'Output does not contain "APPROVED"' in failed["misses"]
    assert failed["hits"] == ['Output contains "Acme"', 'Output contains "entry 42"']
    gate = scores(failed)["contains-APPROVED"]  # AgentV's auto-name of an unnamed `contains`
    assert gate["required"] == 0.8 and gate["verdict"] == "fail"
    assert failed["execution_status"] == "quality_failure"

    held = found["gate-holds"]
    assert (held["score"], held["verdict"]) == (0.5, "pass")  # the gate holds: the plain weighted mean

    # `required: 0.5`: contains-all of two scores 0 here (one missing), below 0.5.
    assert found["own-mark"]["score"] == 0.0
    assert scores(found["own-mark"])["contains-all-2"]["required"] == 0.5

    # negate first, then the gate: "must not contain DENIED" scored 0 < 0.8.
    assert found["negated"]["score"] == 0.0
    failure = ET.parse(project / ".agentv-gate/junit.xml").getroot().find(".//testcase[@name='gate-fails']/failure")
    assert failure is not None and "required evaluator 'contains-APPROVED' scored 0.000" in (failure.text or "")


# ---------------------------------------------------------------- rubrics


RUBRIC_SUITE = """
tests:
  - id: screening
    criteria: Must flag the denied party
    input: Screen "Acme Corp"
    assert:
      - name: checklist
        type: rubrics
        criteria:
          - Names the matching list entry
          - {id: why, outcome: Explains the denial, weight: 3}
"""


def test_rubric_checklist_reaches_the_judge_as_items_and_is_scored_by_weight(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    fake_llm.enqueue(CHAT, checks_reply({"id": "rubric-1", "satisfied": True, "reasoning": "entry 42 named"},
                                      {"id": "why", "satisfied": False, "reasoning": "no reason given"}))
    project = make_project(tmp_path, RUBRIC_SUITE, fake_llm.url)
    write(project / ".agentv/gate.yaml", 'agentv: {version: "2.19"}\n')  # 2.19's rubric prompt and reply
    proc = run_cli("run", "evals", "--no-cache", cwd=project)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # 1 / 4 = 0.25 < 0.5

    body = fake_llm.requests_for(CHAT)[0].json
    prompt = body["messages"][1]["content"]
    assert "- [rubric-1] (REQUIRED): Names the matching list entry" in prompt
    assert "- [why] (weight: 3): Explains the denial" in prompt
    assert f"[[ ## answer ## ]]\n{ANSWER}" in prompt
    assert '"satisfied": boolean' in body["messages"][0]["content"]
    assert body["response_format"]["json_schema"]["name"] == "rubric_checks"

    row = rows_by_id(project / RESULTS)["screening"]
    assert row["score"] == 0.25 and row["verdict"] == "fail"
    assert row["hits"] == ["[rubric-1] Names the matching list entry: entry 42 named"]
    assert row["misses"] == ["[why] Explains the denial: no reason given"]
    entry = scores(row)["checklist"]
    assert (entry["type"], entry["verdict"]) == ("llm-judge", "fail")
    assert [c["id"] for c in entry["details"]["checks"]] == ["rubric-1", "why"]

    failure = ET.parse(project / ".agentv-gate/junit.xml").getroot().find(".//testcase[@name='screening']/failure")
    assert failure is not None
    assert "Checks:\n  checklist: ✓ [rubric-1] Names the matching list entry (required): entry 42 named\n" \
           "  checklist: ✗ [why] Explains the denial: no reason given" in (failure.text or "")


COMPOSITE_RUBRIC_SUITE = """
tests:
  - id: gated
    criteria: Must flag the denied party
    input: Screen "Acme Corp"
    assert:
      - name: gate
        type: composite
        aggregator: {type: threshold, threshold: 0.5}
        assert:
          - name: member
            type: rubrics
            criteria: [Names the matching list entry]
"""


@pytest.mark.parametrize("suite, name", [(RUBRIC_SUITE, "checklist"), (COMPOSITE_RUBRIC_SUITE, "member")])
def test_type_rubrics_in_a_sign_less_file_is_4_42s_llm_grader(
    tmp_path: Path, fake_llm: FakeLLMServer, suite: str, name: str
) -> None:
    """A file with no sign of either AgentV is read as 4.42 reads it: `type: rubrics` is its llm-grader with
    rubrics (4.42's prompt, its object items required unless they say otherwise, reported as `llm-grader`),
    also as a composite's member; it was once 2.19's rubric judge because the type name is shared."""
    fake_llm.set_default(CHAT, checks_reply({"id": "rubric-1", "satisfied": True, "reasoning": "entry 42 named"},
                                            {"id": "why", "satisfied": True, "reasoning": "explained"}))
    project = make_project(tmp_path, suite, fake_llm.url)
    proc = run_cli("run", "evals", "--no-cache", cwd=project)
    body = fake_llm.requests_for(CHAT)[0].json
    assert body["messages"][0]["content"].startswith("You are an expert grader. Evaluate the candidate answer")
    prompt = body["messages"][1]["content"]
    assert prompt.startswith("You are an expert grader. Evaluate the candidate answer against each rubric item")
    if name == "checklist":
        assert "- [why] (REQUIRED) (weight: 3): Explains the denial" in prompt
    row = next(iter(rows_by_id(project / RESULTS).values()))
    entries = {e["name"]: e for e in row["scores"]}
    member = entries[name] if name in entries else {c["name"]: c for c in entries["gate"]["scores"]}[name]
    assert member["type"] == "llm-grader"
    assert member["hits"][0] == "[rubric-1] Names the matching list entry"  # 4.42 keeps the reasoning apart
    assert proc.returncode == 0, proc.stdout + proc.stderr


TYPE_WORD_SUITE = """
tests:
  - id: word
    criteria: Must flag the denied party
    input: Screen "Acme Corp"
    assert:
      - {type: contains, value: Acme}
      - is-json
"""


def test_a_one_word_string_in_a_sign_less_files_assertions_is_a_criterion_as_in_4_42(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    """4.42's grader-parser reads every string entry of an assertion list as a rubric criterion, one word or a
    sentence; a sign-less file (read as 4.42) once ran `- is-json` as the is-json type (the answer is no JSON:
    a fail here, where 4.42 asks its grader)."""
    fake_llm.set_default(CHAT, checks_reply({"id": "rubric-1", "satisfied": True, "reasoning": "fine"}))
    project = make_project(tmp_path, TYPE_WORD_SUITE, fake_llm.url)
    proc = run_cli("run", "evals", "--no-cache", cwd=project)
    prompts = [r.json["messages"][1]["content"] for r in fake_llm.requests_for(CHAT)]
    assert len(prompts) == 1 and "- [rubric-1] (REQUIRED): is-json" in prompts[0]
    row = rows_by_id(project / RESULTS)["word"]
    assert [(e["name"], e["type"]) for e in row["scores"]] == [("contains-Acme", "contains"), ("rubrics", "llm-grader")]
    assert (row["score"], row["verdict"]) == (1.0, "pass")
    assert proc.returncode == 0, proc.stdout + proc.stderr

    write(project / ".agentv/gate.yaml", 'agentv: {version: "2.19"}\n')  # 2.19 skips a string entry
    skipped = run_cli("run", "evals", "--no-cache", cwd=project)
    assert [e["type"] for e in rows_by_id(project / RESULTS)["word"]["scores"]] == ["contains"]
    assert "evals/screen.eval.yaml:7: warning: entry 'is-json' (text) has no effect here" in skipped.stderr


def test_an_unmet_required_item_fails_the_evaluator_and_a_required_evaluator_then_zeroes_the_case(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    suite = RUBRIC_SUITE.replace("weight: 3}", "weight: 3}\n        required: 0.7").replace(
        "      - name: checklist", "      - {type: contains, value: Acme}\n      - name: checklist")
    reply = checks_reply({"id": "rubric-1", "satisfied": False, "reasoning": "no entry"},
                         {"id": "why", "satisfied": True, "reasoning": "explained"})
    fake_llm.set_default(CHAT, reply)
    project = make_project(tmp_path, suite, fake_llm.url)
    run_cli("run", "evals", "--no-cache", cwd=project)
    row = rows_by_id(project / RESULTS)["screening"]
    entry = scores(row)["checklist"]
    # 3 / 4 = 0.75 stays the evaluator's score; the unmet required item makes its verdict fail.
    assert (entry["score"], entry["verdict"]) == (0.75, "fail")
    assert row["score"] == 0.0 and row["reasoning"].startswith(
        "required evaluator 'checklist' failed: a required rubric item was not met")

    # Not required itself: the case keeps the weighted mean.
    (project / "evals/screen.eval.yaml").write_text(
        (project / "evals/screen.eval.yaml").read_text().replace("        required: 0.7\n", ""))
    run_cli("run", "evals", "--no-cache", cwd=project)
    assert rows_by_id(project / RESULTS)["screening"]["score"] == pytest.approx((1 + 0.75) / 2)


SCORE_RANGE_SUITE = """
tests:
  - id: depth
    criteria: A structured answer
    input: Screen "Acme Corp"
    assert:
      - name: depth
        type: llm-judge
        rubrics:
          - id: structure
            score_ranges:
              - {score_range: [0, 4], outcome: Unstructured}
              - {score_range: [5, 10], outcome: Clear sections}
            required_min_score: 6
          - {id: tone, outcome: Neutral tone, weight: 2, score_ranges: [{score_range: [0, 10], outcome: Any}]}
"""


def test_score_ranges_score_each_item_out_of_ten_and_keep_raw_scores(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(CHAT, FakeReply.openai(json.dumps({"checks": [
        {"id": "structure", "score": 5, "reasoning": "two sections"},
        {"id": "tone", "score": 9, "reasoning": "neutral"}], "overall_reasoning": "ok"})))
    project = make_project(tmp_path, SCORE_RANGE_SUITE, fake_llm.url)
    run_cli("run", "evals", "--no-cache", cwd=project)
    body = fake_llm.requests_for(CHAT)[0].json
    prompt = body["messages"][1]["content"]
    assert "### Criterion: structure [REQUIRED: min score 6]" in prompt and "  - Score 5-10: Clear sections" in prompt
    assert body["response_format"]["json_schema"]["name"] == "rubric_scores"
    row = rows_by_id(project / RESULTS)["depth"]
    entry = scores(row)["depth"]
    assert entry["score"] == pytest.approx((0.5 * 1 + 0.9 * 2) / 3)
    assert entry["verdict"] == "fail"  # 5 < required_min_score 6, whatever the mean
    assert entry["details"]["raw_scores"] == {"structure": 5, "tone": 9}
    assert "[structure] structure - Score: 5/10 (Clear sections): two sections" in row["misses"]
    assert "[tone] Neutral tone - Score: 9/10 (Any): neutral" in row["hits"]


@pytest.mark.parametrize("key", ["assertions", "assert"])  # a 4.x file, and a sign-less one (read as 4.x)
def test_a_score_range_item_without_required_has_no_minimum_as_in_agentv(tmp_path: Path, fake_llm: FakeLLMServer,
                                                                         key: str) -> None:
    """AgentV (2.19 and 4.42, parseRubricItems) defaults `required: true` for a checklist item only; a score-range
    item without `required` or `min_score` has no minimum: a hit from 7/10. The gate read 4.x object items as
    required, which for a scored item means 10/10, so 8/10 failed the case AgentV passes (0.8, its pass mark)."""
    fake_llm.enqueue(CHAT, checks_reply({"id": "brevity", "score": 8, "reasoning": "short"}))
    suite = (f"tests:\n  - id: c\n    input: q\n    {key}:\n      - name: depth\n        type: rubrics\n"
             "        criteria:\n          - id: brevity\n            score_ranges:\n"
             "              - {score_range: [0, 6], outcome: Long}\n              - {score_range: [7, 10], outcome: Short}\n")
    project = make_project(tmp_path, suite, fake_llm.url)
    proc = run_cli("run", "evals", "--no-cache", cwd=project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    row = rows_by_id(project / RESULTS)["c"]
    assert (row["score"], row["verdict"]) == (0.8, "pass")
    assert row["hits"] == ["[brevity] brevity - Score: 8/10 (Short)"]  # 4.42: the reasoning apart


def test_unparseable_replies_are_asked_three_times_then_skipped_and_the_case_is_an_error(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    suite = RUBRIC_SUITE.replace("      - name: checklist", "      - {type: contains, value: Acme}\n      - name: checklist")
    fake_llm.set_default(CHAT, checks_reply({"id": "rubric-1", "satisfied": "maybe", "reasoning": "?"}))
    project = make_project(tmp_path, suite, fake_llm.url)
    proc = run_cli("run", "evals", "--no-cache", cwd=project)
    assert proc.returncode == 1
    assert len(fake_llm.requests_for(CHAT)) == 3
    row = rows_by_id(project / RESULTS)["screening"]
    entry = scores(row)["checklist"]
    assert entry["verdict"] == "skip" and "not a valid rubric checks after 3 attempt(s)" in entry["error"]
    assert "'satisfied' must be true or false" in entry["error"]
    # A sign-less file is read as AgentV 4.42, which scores a case with a skipped grader 0 (2.19 leaves the
    # grader out of the mean: tests/commands/test_file_generation_cli.py); the case cannot pass on it either way.
    assert row["score"] == 0.0 and row["verdict"] == "error" and row["execution_status"] == "execution_error"


@pytest.mark.parametrize("reply", [
    {"score": "0.9", "hits": ["denied"], "misses": [], "reasoning": "ok"},
    {"score": 0.9, "hits": "denied", "misses": [], "reasoning": "ok"},
])
def test_a_verdict_agentvs_schema_refuses_is_never_scored(tmp_path: Path, fake_llm: FakeLLMServer,
                                                         reply: dict[str, Any]) -> None:
    """AgentV's zod schema (`score: z.number()`, `hits: z.array(z.string())`) refuses these replies: it asks
    again, then skips the judge. Read tolerantly, the 0.9 passed the case; now it is asked three times and
    skipped, so the case is an error, never a pass."""
    suite = """
    tests:
      - id: judged
        criteria: Must deny
        input: Screen Acme
        assert: [{name: quality, type: llm_judge}]
    """
    fake_llm.set_default(CHAT, FakeReply.openai(json.dumps(reply)))
    project = make_project(tmp_path, suite, fake_llm.url)
    proc = run_cli("run", "evals", "--no-cache", cwd=project)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert len(fake_llm.requests_for(CHAT)) == 3
    row = rows_by_id(project / RESULTS)["judged"]
    assert scores(row)["quality"]["verdict"] == "skip"
    assert row["verdict"] == "error" and row["execution_status"] == "execution_error"


def test_a_rubric_judge_without_a_judge_target_stops_the_run_before_the_agent_is_called(tmp_path: Path) -> None:
    """Preflight: a rubric judge is an llm_judge, so a missing judge is a configuration error (exit 2)."""
    project = make_project(tmp_path, RUBRIC_SUITE)
    (project / ".agentv/targets.yaml").write_text(yaml.safe_dump({"targets": [
        {"name": "default", "provider": "cli", "command": "echo Acme", "timeout_seconds": 10}]}))
    proc = run_cli("run", "evals", "--no-cache", cwd=project)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "no judge target configured" in proc.stderr
    assert not (project / ".agentv-gate" / "results.jsonl").exists() or not rows_by_id(project / RESULTS)


def test_case_level_rubrics_are_a_required_checklist_placed_first_with_a_deprecation_warning(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    suite = """
    tests:
      - id: legacy
        criteria: Must flag the denied party
        input: Screen "Acme Corp"
        rubrics:
          - {id: entry, outcome: Names the entry}
          - {id: extra, outcome: Mentions sources, required: false}
        assert:
          - {type: contains, value: Acme}
    """
    fake_llm.set_default(CHAT, checks_reply({"id": "entry", "satisfied": False, "reasoning": "missing"},
                                          {"id": "extra", "satisfied": True, "reasoning": "yes"}))
    project = make_project(tmp_path, suite, fake_llm.url)
    checked = run_cli("validate", "evals", cwd=project)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "evals/screen.eval.yaml:5: warning: a test's 'rubrics' is deprecated" in checked.stdout
    run_cli("run", "evals", "--no-cache", cwd=project)
    row = rows_by_id(project / RESULTS)["legacy"]
    assert [entry["name"] for entry in row["scores"]] == ["rubric", "contains-Acme"]
    assert scores(row)["rubric"]["verdict"] == "fail"  # objects default to required in this list
    assert "- [entry] (REQUIRED): Names the entry" in fake_llm.requests_for(CHAT)[0].json["messages"][1]["content"]


# ---------------------------------------------------------------- bad config: located, nothing runs


@pytest.mark.parametrize(
    ("assertion", "line", "message"),
    [
        ("- {type: contains, value: x,\n         required: sure}", 6,
         "contains evaluator 'contains-x': required 'sure' is not true, false or a number in (0, 1]"),
        ("- {type: contains, value: x, required: 0}", 5, "required 0 is not true, false or a number in (0, 1]"),
        ("- {type: contains, value: x, required: 1.5}", 5, "required 1.5 is not true"),
        ("- type: rubrics", 5, "`type: rubrics` evaluator has no 'criteria'"),
        ("- type: rubrics\n        criteria: []", 6, "'criteria' must be a non-empty list of rubric items"),
        ("- type: rubrics\n        criteria:\n          - ok\n          - {outcome: x, wieght: 2}", 8,
         "unknown key 'wieght' in rubric item 2"),
        ("- type: rubrics\n        criteria:\n          - {id: a, weight: 2}", 7, "rubric 'a' has no 'outcome'"),
        ("- type: rubrics\n        criteria: [a, {id: rubric-1, outcome: b}]", 6, "rubric id 'rubric-1' is used twice"),
        ("- type: rubrics\n        criteria:\n          - {id: a, outcome: b, required_min_score: 6}", 7,
         "required_min_score, which only score-range rubrics use"),
        ("- type: rubrics\n        criteria:\n          - id: a\n            required_min_score: 11\n"
         "            score_ranges: [{score_range: [0, 10], outcome: any}]", 8,
         "required_min_score 11 is not an integer from 0 to 10"),
        ("- type: rubrics\n        criteria:\n          - id: a\n"
         "            score_ranges: [{score_range: [0, 5], outcome: low}, {score_range: [5, 10], outcome: hi}]", 8,
         "score ranges [0, 5] and [5, 10] overlap"),
        ("- type: rubrics\n        criteria:\n          - id: a\n"
         "            score_ranges: [{score_range: [3, 12], outcome: x}]", 8,
         "score_range must be [low, high], integers 0-10"),
        ("- name: j\n        type: llm_judge\n        prompt: Grade it\n        rubrics: [a]", 7,
         "has both 'prompt' and 'rubrics'"),  # named: 2.19 skips an unnamed llm_judge
        ("- type: composite\n        evaluators:\n          - {name: x, type: contains, value: x, required: true}", 7,
         "'required' on composite member 'x'"),  # named: AgentV skips an unnamed member
    ],
)
def test_bad_required_and_rubric_config_is_a_located_error(tmp_path: Path, assertion: str, line: int,
                                                           message: str) -> None:
    suite = f"tests:\n  - id: c\n    input: q\n    assert:\n      {assertion}\n"
    project = make_project(tmp_path, suite)
    proc = run_cli("validate", "evals", cwd=project)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"evals/screen.eval.yaml:{line}: " in proc.stdout and message in proc.stdout, proc.stdout
    ran = run_cli("run", "evals", cwd=project)
    assert ran.returncode == 2 and not (project / ".agentv-gate/results.jsonl").exists()


# ---------------------------------------------------------------- the prompts AgentV 2.19 sends

AGENTV_SUITE = """
tests:
  - id: screening
    criteria: Must flag the denied party
    input: Screen "Acme Corp"
    expected_output: Acme Corp is denied.
    assert:
      - name: free
        type: llm_judge
      - name: checklist
        type: rubrics
        criteria:
          - Names the matching list entry
      - name: depth
        type: llm_judge
        rubrics:
          - id: structure
            outcome: Organised answer
            required: true
            score_ranges:
              - {score_range: [0, 4], outcome: Unstructured}
              - {score_range: [5, 10], outcome: Clear sections}
"""


def test_judges_get_agentv_2_19_prompts_word_for_word(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    """AgentV 2.19's llm-judge.ts (DEFAULT_EVALUATOR_TEMPLATE, buildRubricPrompt, buildScoreRangePrompt): the
    sections are `criteria` and `answer`, as its payload names them, not gen2's `expected_outcome` and
    `candidate_answer`; a score-range criterion is headed by its bare id and says `REQUIRED: min score` only
    when `required_min_score` is written."""
    fake_llm.enqueue(CHAT, FakeReply.openai(json.dumps({"score": 1, "hits": [], "misses": [], "reasoning": "ok"})))
    fake_llm.enqueue(CHAT, checks_reply({"id": "rubric-1", "satisfied": True, "reasoning": "named"}))
    fake_llm.enqueue(CHAT, FakeReply.openai(json.dumps({"checks": [
        {"id": "structure", "score": 10, "reasoning": "clear"}], "overall_reasoning": "ok"})))
    project = make_project(tmp_path, AGENTV_SUITE, fake_llm.url)
    proc = run_cli("run", "evals", "--no-cache", "--workers", "1", cwd=project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    free, checklist, scored = (body.json["messages"][1]["content"] for body in fake_llm.requests_for(CHAT))
    assert free == (
        "You are an expert evaluator. Your goal is to grade the answer based on how well it achieves the criteria "
        "for the original task.\n\n"
        "Use the reference_answer as a gold standard for a high-quality response (if provided). The reference_answer "
        "may be a simple text response, or it may contain a sequence of expected agent messages including tool calls. "
        "When it contains multiple messages, the last message represents the final expected answer. The answer does "
        "not need to match it verbatim, but should capture the key points and follow the same spirit.\n\n"
        "Be concise and focused in your evaluation. Provide succinct, specific feedback rather than verbose "
        "explanations.\n\n"
        "[[ ## criteria ## ]]\nMust flag the denied party\n\n"
        "[[ ## question ## ]]\nScreen \"Acme Corp\"\n\n"
        "[[ ## reference_answer ## ]]\nAcme Corp is denied.\n\n"
        f"[[ ## answer ## ]]\n{ANSWER}")
    assert checklist == "\n".join([
        "You are an expert evaluator. Evaluate the candidate answer against each rubric item below.", "",
        "[[ ## question ## ]]", 'Screen "Acme Corp"', "",
        "[[ ## criteria ## ]]", "Must flag the denied party", "",
        "[[ ## reference_answer ## ]]", "Acme Corp is denied.", "",
        "[[ ## answer ## ]]", ANSWER, "",
        "[[ ## rubrics ## ]]",
        "- [rubric-1] (REQUIRED): Names the matching list entry", "",
        "For each rubric, determine if it is satisfied and provide brief reasoning."])
    assert "\n".join([
        "[[ ## criteria ## ]]", "Must flag the denied party", "",
        "[[ ## reference_answer ## ]]", "Acme Corp is denied.", "",
        "[[ ## answer ## ]]", ANSWER, "",
        "[[ ## scoring_criteria ## ]]", "",
        "### Criterion: structure",
        "Description: Organised answer"]) in scored


# ---------------------------------------------------------------- unnamed evaluators AgentV skips


UNNAMED_JUDGE_SUITE = """
tests:
  - id: unnamed
    criteria: Must flag the denied party
    input: Screen "Acme Corp"
    assert:
      - {type: contains, value: Acme}
      - {type: llm_judge, prompt: "Grade {{ answer }}"}
"""


def test_a_2x_files_unnamed_llm_judge_is_skipped_with_a_located_warning_as_2_19_skips_it(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    """2.19 names only assertion types when `name:` is missing (`generateAssertionName`) and skips any other
    evaluator ("Skipping evaluator with missing name"): the judge that would fail the case never runs there."""
    fake_llm.set_default(CHAT, FakeReply.openai(json.dumps({"score": 0.0, "hits": [], "misses": ["bad"]})))
    project = make_project(tmp_path, UNNAMED_JUDGE_SUITE, fake_llm.url)
    write(project / ".agentv/gate.yaml", 'agentv: {version: "2.19"}\n')
    proc = run_cli("run", "evals", "--no-cache", cwd=project)
    assert fake_llm.requests_for(CHAT) == []
    row = rows_by_id(project / RESULTS)["unnamed"]
    assert [e["name"] for e in row["scores"]] == ["contains-Acme"] and row["verdict"] == "pass"
    assert "evals/screen.eval.yaml:7: warning:" in proc.stderr and "no effect" in proc.stderr
    assert proc.returncode == 0, proc.stdout + proc.stderr
    strict = run_cli("run", "evals", "--no-cache", "--strict", cwd=project)
    assert strict.returncode == 2 and "evals/screen.eval.yaml:7: 'type: llm_judge' has no effect" in strict.stderr, strict.stderr


UNNAMED_MEMBER_SUITE = """
tests:
  - id: member
    criteria: Must flag the denied party
    input: Screen "Acme Corp"
    assert:
      - name: gate
        type: composite
        aggregator: {type: threshold, threshold: 1.0}
        assert:
          - {type: contains, value: Globex}
          - {name: acme, type: contains, value: Acme}
"""


@pytest.mark.parametrize("version", ["2.19", "4.42"])
def test_an_unnamed_composite_member_is_skipped_with_a_located_warning_as_agentv_skips_it(
    tmp_path: Path, version: str
) -> None:
    """Both AgentVs skip a composite member without `name:` ("Skipping member evaluator with invalid
    name/type"), an assertion type too; the gate once ran it under its generated name (here a miss: a fail)."""
    project = make_project(tmp_path, UNNAMED_MEMBER_SUITE)
    write(project / ".agentv/gate.yaml", f'agentv: {{version: "{version}"}}\n')
    proc = run_cli("run", "evals", "--no-cache", cwd=project)
    row = rows_by_id(project / RESULTS)["member"]
    assert [m["name"] for m in row["scores"][0]["scores"]] == ["acme"]
    assert (row["score"], row["verdict"]) == (1.0, "pass")
    assert "evals/screen.eval.yaml:10: warning:" in proc.stderr
    assert proc.returncode == 0, proc.stdout + proc.stderr



NO_MEMBER_LEFT_SUITE = """
tests:
  - id: unnamed
    criteria: Must flag the denied party
    input: Screen "Acme Corp"
    assert:
      - {name: acme, type: contains, value: Acme}
      - name: gate
        type: composite
        aggregator: {type: weighted_average}
        assert:
          - {type: contains, value: Globex}
          - {type: contains, value: Initech}
  - id: empty
    criteria: Must flag the denied party
    input: Screen "Acme Corp"
    assert:
      - {name: acme, type: contains, value: Acme}
      - {name: gate, type: composite, aggregator: {type: weighted_average}, assert: []}
"""


@pytest.mark.parametrize("version", ["2.19", "4.42"])
def test_a_composite_with_no_member_left_is_skipped_with_a_located_warning_as_agentv_skips_it(
    tmp_path: Path, version: str
) -> None:
    """Both AgentVs skip a composite none of whose members they keep ("Skipping composite evaluator 'gate' ...: no
    valid member evaluators"): the case is scored on its other evaluators (here a pass). The gate once ran it as
    an evaluator error, failing a case AgentV passes."""
    project = make_project(tmp_path, NO_MEMBER_LEFT_SUITE)
    write(project / ".agentv/gate.yaml", f'agentv: {{version: "{version}"}}\n')
    proc = run_cli("run", "evals", "--no-cache", cwd=project)
    rows = rows_by_id(project / RESULTS)
    for case in ("unnamed", "empty"):
        assert [e["name"] for e in rows[case]["scores"]] == ["acme"], rows[case]
        assert (rows[case]["score"], rows[case]["verdict"]) == (1.0, "pass")
    assert "evals/screen.eval.yaml:7: warning: composite 'gate' has no effect here" in proc.stderr, proc.stderr
    assert "evals/screen.eval.yaml:18: warning: composite 'gate' has no effect here" in proc.stderr, proc.stderr
    assert proc.returncode == 0, proc.stdout + proc.stderr


UNREPORTED_SUITE = """
tests:
  - id: partial
    criteria: Must flag the denied party
    input: Screen "Acme Corp"
    assertions:
      - name: quality
        type: rubrics
        criteria:
          - {id: aa, outcome: Names the entry}
          - {id: bb, outcome: Says denied}
          - {id: cc, outcome: Is short, required: false}
"""


@pytest.mark.parametrize(("reported", "score", "verdict", "hits", "misses"), [
    # the required aa never reported: out of the total, no line, no fail (4.42 `calculateRubricScore` walks the
    # judge's checks only); the lines in the judge's order
    ([("cc", False), ("zz", True), ("bb", True)], 0.5, "fail", ["[bb] Says denied"], ["[cc] Is short"]),
    ([("bb", True)], 1.0, "pass", ["[bb] Says denied"], []),
    ([("cc", True), ("bb", True)], 1.0, "pass", ["[cc] Is short", "[bb] Says denied"], []),
    ([("zz", True)], 0.0, "fail", [], []),  # nothing of the rubric reported: 0, as 4.42 scores it
])
def test_a_4x_rubric_item_the_judge_did_not_report_is_left_out_as_4_42_leaves_it(
    tmp_path: Path, fake_llm: FakeLLMServer, reported: list[tuple[str, bool]], score: float, verdict: str,
    hits: list[str], misses: list[str],
) -> None:
    """Checked with agentv 4.42.4 on a loopback judge replying `cc` unmet, `zz`, `bb` met: score 0.5, assertions
    `[cc] Is short` (failed), `[bb] Says denied` (passed); replying `bb` alone: 1.0, a pass. The gate once listed
    `[aa] ...: not assessed by the judge` as a miss and failed the grader on it (aa is required)."""
    fake_llm.set_default(CHAT, checks_reply(*({"id": i, "satisfied": met, "reasoning": "r"} for i, met in reported)))
    project = make_project(tmp_path, UNREPORTED_SUITE, fake_llm.url)
    proc = run_cli("run", "evals", "--no-cache", cwd=project)
    row = rows_by_id(project / RESULTS)["partial"]
    [grader] = row["scores"]
    assert (grader["score"], grader["hits"], grader["misses"]) == (score, hits, misses)
    assert (grader.get("verdict") or ("pass" if score >= 0.8 else "fail")) == verdict
    assert row["verdict"] == verdict, proc.stdout + proc.stderr
