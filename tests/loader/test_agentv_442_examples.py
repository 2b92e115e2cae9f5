"""Forms AgentV 4.42.4's own examples write that the gate refused: a suite `defaults:` holding YAML anchors,
an evaluator `id`, `tests:` naming a folder of case folders. Each is read as 4.42 reads it."""

from __future__ import annotations

from pathlib import Path

from agentv_gate.loader import load_eval_file
from agentv_gate.models import CodeJudgeConfig

ANCHORED = """\
defaults:
  system_message: &system_prompt |
    Classify the incident into P0, P1, P2, or P3.

tests:
  - id: outage
    criteria: P0
    input:
      - role: system
        content: *system_prompt
      - role: user
        content: Everything is down.
    assertions:
      - type: contains
        value: '"P0"'
        id: CLASSIFIES_P0
      - type: code-grader
        command: [python3, judge.py]
        id: handed-to-the-script
      - Reasoning mentions the outage
"""


def test_suite_defaults_and_an_evaluator_id_are_accepted_and_said_to_have_no_effect(tmp_path: Path) -> None:
    suite = tmp_path / "s.eval.yaml"
    suite.write_text(ANCHORED)
    (tmp_path / "judge.py").write_text("print('{\"score\": 1}')\n")
    result = load_eval_file(suite, repo_root=tmp_path)
    assert not result.errors, result.errors
    said = [(p.line, p.message.split(":")[0], p.no_effect) for p in result.problems]
    assert said == [(1, "'defaults' has no effect here", True), (16, "'id' has no effect here", True)]
    [case] = result.cases
    assert case.input_messages[0].content == "Classify the incident into P0, P1, P2, or P3.\n"  # the anchor reached it
    contains, grader, rubrics = case.evaluators
    assert contains.name != "CLASSIFIES_P0" and rubrics.type == "llm_judge"
    assert isinstance(grader, CodeJudgeConfig) and grader.model_extra == {"id": "handed-to-the-script"}


def test_an_unknown_suite_key_beside_defaults_is_still_refused(tmp_path: Path) -> None:
    suite = tmp_path / "s.eval.yaml"
    suite.write_text("defualts: {}\n" + ANCHORED)
    (tmp_path / "judge.py").write_text("print('{\"score\": 1}')\n")
    result = load_eval_file(suite, repo_root=tmp_path)
    assert [(e.line, e.message) for e in result.errors] == [(1, "unknown key 'defualts' in the suite (did you mean "
                                                                "'defaults'?)")]


def test_tests_naming_a_folder_reads_one_case_per_case_folder_in_name_order(tmp_path: Path) -> None:
    (tmp_path / "s.eval.yaml").write_text("name: discovery\ntests: ./cases/\n")
    cases = tmp_path / "cases"
    for folder, text in {"b-fix": "criteria: Fixes it\ninput: Fix the bug.\n",
                         "a-add": "id: own-id\ncriteria: Adds it\ninput: Add a greeting.\n",
                         "c-broken": "criteria: x\ninput: y\nasserts: []\n",
                         "d-workspace": "criteria: x\ninput: y\n"}.items():
        (cases / folder).mkdir(parents=True)
        (cases / folder / "case.yaml").write_text(text)
    (cases / "d-workspace" / "workspace").mkdir()
    (cases / "notes").mkdir()  # no case.yaml: skipped, as AgentV 4.42 skips it
    (cases / "stray.yaml").write_text("id: not-a-folder\n")
    result = load_eval_file(tmp_path / "s.eval.yaml", repo_root=tmp_path)
    assert [c.id for c in result.cases] == ["own-id", "b-fix", "c-broken", "d-workspace"]
    assert [c.expected_outcome for c in result.cases[:2]] == ["Adds it", "Fixes it"]
    assert result.cases[1].source_file == cases / "b-fix" / "case.yaml"
    assert [(e.file.relative_to(tmp_path).as_posix(), e.line, e.message.split(" (")[0]) for e in result.errors] == [
        ("cases/c-broken/case.yaml", 3, "unknown key 'asserts' in test 'c-broken'"),
        ("cases/d-workspace/case.yaml", 1, "'template' is an AgentV feature agentv-gate does not run yet")]


def test_a_tests_folder_outside_the_repository_is_refused(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (tmp_path / "cases" / "one").mkdir(parents=True)
    (tmp_path / "cases" / "one" / "case.yaml").write_text("criteria: x\ninput: y\n")
    (repo / "s.eval.yaml").write_text("tests: ../cases/\n")
    result = load_eval_file(repo / "s.eval.yaml", repo_root=repo)
    assert not result.cases
    assert [(e.line, e.message.split(" (")[0]) for e in result.errors] == [
        (1, "tests folder '../cases/' resolves outside the repository root")]


VARS_SUITE = """\
input:
  - role: system
    content: "You answer {{category}} questions."
tests:
  - id: capital
    vars:
      category: geography
      question: What is the capital of France?
      expected: {answer: Paris, score: 1.0}
      nothing: null
    criteria: "Answers {{question}} correctly; {{ unknown.name }} stays"
    input: "Question: {{question}} ({{expected}}, {{expected.score}}, {{nothing}})"
    expected_output: "{{expected.answer}}"
    assertions:
      - type: contains
        value: "{{expected.answer}}"
  - id: no-vars
    criteria: "{{question}}"
    input: "{{question}}"
  - id: bad-vars
    vars: [not, a, mapping]
    criteria: c
    input: "{{question}}"
"""


def test_vars_fill_the_tests_fields_and_the_suites_input_never_its_assertions(tmp_path: Path) -> None:
    suite = tmp_path / "s.eval.yaml"
    suite.write_text(VARS_SUITE)
    result = load_eval_file(suite, repo_root=tmp_path)
    assert not result.errors, result.errors
    capital, plain, bad = result.cases
    assert [m.content for m in capital.input_messages] == [
        "You answer geography questions.",
        'Question: What is the capital of France? ({"answer":"Paris","score":1}, 1, null)']
    assert capital.expected_outcome == "Answers What is the capital of France? correctly; {{ unknown.name }} stays"
    assert capital.reference_answer == "Paris"
    assert capital.evaluators[0].value == "{{expected.answer}}"  # as 4.42: assertions are not templated
    assert [m.content for m in plain.input_messages] == ["You answer {{category}} questions.", "{{question}}"]
    assert plain.expected_outcome == "{{question}}"
    assert [(p.line, p.message.split(":")[0], p.no_effect) for p in result.problems] == [
        (21, "'vars' has no effect here", True)]
    assert bad.input_messages[-1].content == "{{question}}"


def test_an_llm_aggregator_prompt_after_file_is_the_files_text_and_must_exist(tmp_path: Path) -> None:
    """AgentV 4.42 reads a composite's aggregator prompt from a file after `file://` (a missing one is its load
    error); the gate refused the prompt as text without the members' results."""
    (tmp_path / "agg.md").write_text("Decide from {{EVALUATOR_RESULTS_JSON}}\n")
    suite = tmp_path / "s.eval.yaml"
    template = """\
tests:
  - id: t
    input: q
    criteria: c
    assertions:
      - name: both
        type: composite
        assertions:
          - {{name: contains-a, type: contains, value: a}}
          - {{name: contains-b, type: contains, value: b}}
        aggregator: {{type: llm-grader, prompt: "file://{name}"}}
"""
    suite.write_text(template.format(name="agg.md"))
    result = load_eval_file(suite, repo_root=tmp_path)
    assert not result.errors, result.errors
    [composite] = result.cases[0].evaluators
    assert composite.aggregator == {"type": "llm-grader", "prompt": "Decide from {{EVALUATOR_RESULTS_JSON}}\n"}
    suite.write_text(template.format(name="missing.md"))
    [error] = load_eval_file(suite, repo_root=tmp_path).errors
    assert (error.line, error.message.split(" (")[0]) == (11, "aggregator prompt file 'missing.md' not found")
