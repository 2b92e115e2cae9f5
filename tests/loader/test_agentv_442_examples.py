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
