"""Deterministic evaluators against AgentV 2.19's own code, through the real CLI: each case here is one
where agentv-gate once scored a pass that AgentV does not give (its JavaScript read the answer otherwise).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.reports import RESULTS, rows_by_id


def run_one(tmp_path: Path, answer: str, case_yaml: str) -> dict[str, Any]:
    """The result row of one case answered `answer` by a mock target (`case_yaml`: the test's keys
    after `id`, `input` and `criteria`, indented by 4)."""
    targets = "targets:\n  - name: default\n    provider: mock\n    response: " + json.dumps(answer) + "\n"
    project = make_repo(tmp_path / "p", targets)
    write(project / "evals" / "x.eval.yaml", "tests:\n  - id: c\n    input: q\n    criteria: c\n" + case_yaml)
    proc = run_cli("run", "evals", "--no-cache", cwd=project)
    assert proc.returncode in (0, 1), proc.stderr
    return rows_by_id(project / RESULTS)["c"]


FIELD_TOTAL = """\
    expected_output: [{role: assistant, content: {total: 5}}]
    assert:
      - {name: fa, type: field_accuracy, fields: [{path: total}]}
"""


@pytest.mark.parametrize("answer", [
    'Result: {"total": 5} (see {ref})',                                          # a brace after the object
    '```json\n{"total": 5}\n```\nthen run:\n```python\nx = {1: 2}\n```',          # a second fenced block
    '{placeholder} then {"total": 5}',                                          # a brace before the object
], ids=["brace-after", "second-fence", "brace-before"])
def test_field_accuracy_reads_the_answer_as_agentv_does_or_not_at_all(tmp_path: Path, answer: str) -> None:
    """AgentV strips the fence markers, takes the greedy `{...}` span and JSON.parses it; when that
    fails the answer is unreadable (score 0), not searched for another object that would pass."""
    row = run_one(tmp_path, answer, FIELD_TOTAL)
    assert row["score"] == 0.0
    assert row["scores"][0]["misses"] == ["Failed to parse candidate answer as JSON"]


def test_a_list_length_path_is_compared_as_javascript_reads_it(tmp_path: Path) -> None:
    """AgentV's resolvePath indexes with `current[part]`, so `items.length` is a list's length on both
    sides: 2 items against 3 expected is a miss, not a field with "no expected value" (a hit)."""
    row = run_one(tmp_path, '{"items": [1, 2]}', """\
    expected_output: [{role: assistant, content: {items: [1, 2, 3]}}]
    assert:
      - {name: fa, type: field_accuracy, fields: [{path: items.length}]}
""")
    assert row["score"] == 0.0
    assert row["scores"][0]["misses"] == ["items.length (value mismatch)"]


@pytest.mark.parametrize("expected", ['"null"', '"false"', '"0"'])
def test_expected_json_that_javascript_calls_false_is_no_expected_data(tmp_path: Path, expected: str) -> None:
    """AgentV returns the last expected message's parsed JSON and then tests `!expectedData`: null,
    false and 0 are "No expected data" (score 0), not data in which every field has no expected value."""
    row = run_one(tmp_path, '{"total": 5}', f"""\
    expected_output: [{{role: assistant, content: {expected}}}]
    assert:
      - {{name: fa, type: field_accuracy, fields: [{{path: total}}]}}
""")
    assert row["score"] == 0.0
    assert row["scores"][0]["misses"] == ["No expected data found in expected_output"]
