"""`${{ VAR }}` is replaced once, in every value of a case wherever the case comes from (a YAML list,
a JSONL line, a `file://` entry, a case folder), and never in a key: AgentV replaces it in the file's
text before reading it. A variable's value that itself looks like `${{ OTHER }}` stays as it is."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentv_gate.loader import load_eval_file

ENV = {"GATE_CITY": "Lisbon", "GATE_VALUE": "${{ GATE_CITY }}", "GATE_FILE": "more"}


@pytest.fixture(autouse=True)
def _variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)


def _inputs_and_values(suite: Path, root: Path) -> list[tuple[str, object, object]]:
    result = load_eval_file(suite, repo_root=root)
    assert not result.errors, result.errors
    return [(case.id, case.input_messages[-1].content, case.evaluators[0].model_dump().get("value"))
            for case in result.cases]


def test_every_value_of_a_yaml_case_is_replaced_once_and_no_key(tmp_path: Path) -> None:
    (tmp_path / "s.eval.yaml").write_text("""\
tests:
  - id: case-${{ GATE_CITY }}
    input: "To ${{ GATE_CITY }}, then ${{ GATE_VALUE }}"
    metadata: {"${{ GATE_CITY }}": ["${{ GATE_CITY }}", 1]}
    assertions:
      - {type: contains, value: "${{ GATE_CITY }}"}
""")
    result = load_eval_file(tmp_path / "s.eval.yaml", repo_root=tmp_path)
    [case] = result.cases
    assert case.id == "case-Lisbon"
    assert case.input_messages[0].content == "To Lisbon, then ${{ GATE_CITY }}"  # the value is not read again
    assert case.metadata == {"${{ GATE_CITY }}": ["Lisbon", 1]}
    assert case.evaluators[0].model_dump()["value"] == "Lisbon"


def test_jsonl_lines_file_entries_and_case_folders_are_replaced_alike(tmp_path: Path) -> None:
    (tmp_path / "lines.jsonl").write_text(
        '{"id": "line", "input": "to ${{ GATE_CITY }}", "assert": [{"type": "contains", "value": "${{ GATE_VALUE }}"}]}\n')
    assert _inputs_and_values(tmp_path / "lines.jsonl", tmp_path) == [("line", "to Lisbon", "${{ GATE_CITY }}")]

    (tmp_path / "more.yaml").write_text("- id: included\n  input: in ${{ GATE_CITY }}\n"
                                        "  assert: [{type: contains, value: x}]\n")
    (tmp_path / "s.eval.yaml").write_text("tests:\n  - file://${{ GATE_FILE }}.yaml\n")
    assert _inputs_and_values(tmp_path / "s.eval.yaml", tmp_path) == [("included", "in Lisbon", "x")]

    (tmp_path / "cases" / "one").mkdir(parents=True)
    (tmp_path / "cases" / "one" / "case.yaml").write_text(
        "input: from ${{ GATE_CITY }}\nassertions: [{type: contains, value: '${{ GATE_VALUE }}'}]\n")
    (tmp_path / "folders.eval.yaml").write_text("tests: ./cases/\n")
    assert _inputs_and_values(tmp_path / "folders.eval.yaml", tmp_path) == [("one", "from Lisbon", "${{ GATE_CITY }}")]


def test_values_merged_into_a_4x_case_are_replaced(tmp_path: Path) -> None:
    (tmp_path / "s.eval.yaml").write_text("""\
category: travel
tests:
  - &base
    id: first
    input: to ${{ GATE_CITY }}
    assertions:
      - type: contains
        value: ${{ GATE_CITY }}
      - Says where it goes
  - <<: *base
    id: second
""")
    assert [(case_id, text) for case_id, text, _ in _inputs_and_values(tmp_path / "s.eval.yaml", tmp_path)] == [
        ("first", "to Lisbon"), ("second", "to Lisbon")]
