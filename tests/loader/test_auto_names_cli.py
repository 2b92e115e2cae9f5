"""An unnamed evaluator's name, as the AgentV its file is written for names it.

AgentV 4.42.4 (`generateAssertionName` in grader-parser.ts) names an unnamed assertion by its value
(`contains-Paris`, `icontains-any-2`, `equals-...`) and every other grader by its type as written, `_` read
as `-` (`llm-grader`, `code-grader`, `latency`, `token-usage`), the same name again for a second one: checked
with `agentv eval` on the 4.x file below (names `contains-Paris, latency, latency, code-grader, code-grader,
token-usage, is-json, equals-...`). agentv-gate once numbered them as for 2.x files (`latency_2`,
`code_judge_4`), so 61 cases of AgentV 4.42's own examples differed in their evaluators' names alone. A 2.x
file keeps the names it always had (2.19's own for assertions).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.reports import read_rows

TARGETS = "targets:\n  - name: default\n    provider: mock\n    response: \"The capital is Paris.\"\n"
JUDGE = 'import json, sys\njson.load(sys.stdin)\nprint(json.dumps({"score": 1, "hits": ["ok"], ' \
        '"assertions": [{"text": "ok", "passed": True}]}))\n'
ENTRIES = """\
      - {type: contains, value: Paris}
      - {type: latency, threshold: 60000}
      - {type: latency, threshold: 50000}
      - {type: code_grader, command: [python3, judge.py]}
      - {type: code-grader, command: [python3, judge.py]}
      - {type: token-usage, max_total: 100000}
      - {type: is_json}
      - {type: equals, value: The capital is Paris.}
"""
AGENTV_4_42_NAMES = ["contains-Paris", "latency", "latency", "code-grader", "code-grader", "token-usage", "is-json",
                     "equals-The capital is Paris."]
"""What AgentV 4.42.4 itself named `ENTRIES` (its index.jsonl's scores[].name)."""


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "repo", TARGETS)
    write(root / "evals" / "judge.py", JUDGE)
    return root


def _names(repo: Path, suite: str) -> list[str]:
    done = run_cli("run", f"evals/{suite}", "-q", cwd=repo)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    (row,) = read_rows(repo / ".agentv-gate" / "results.jsonl")
    return [score["name"] for score in row["scores"]]


def test_a_4x_file_s_unnamed_evaluators_get_agentv_4_42_s_names(repo: Path) -> None:
    write(repo / "evals" / "four.eval.yaml", "tests:\n  - id: names\n    input: Capital of France?\n"
                                             "    assertions:\n" + ENTRIES)
    assert _names(repo, "four.eval.yaml") == AGENTV_4_42_NAMES


def test_a_file_read_as_4x_by_default_names_them_as_4_42_too(repo: Path) -> None:
    """No pin and no sign (`assert:`, `latency`, `contains`): read as 4.42, so named as 4.42 names them."""
    write(repo / "evals" / "plain.eval.yaml", "tests:\n  - id: names\n    input: Capital of France?\n    assert:\n"
          "      - {type: latency, threshold: 60000}\n      - {type: contains, value: Paris}\n"
          "      - {type: latency, threshold: 50000}\n      - {type: cost, budget: 1}\n")
    done = run_cli("validate", "evals/plain.eval.yaml", "-v", cwd=repo)
    assert "AgentV 4.x" in done.stdout + done.stderr, done.stdout + done.stderr
    assert _names(repo, "plain.eval.yaml") == ["latency", "contains-Paris", "latency", "cost"]


def test_a_suite_level_list_of_a_4x_file_is_named_as_4_42_names_it(repo: Path) -> None:
    write(repo / "evals" / "suite.eval.yaml", "assertions:\n  - {type: latency, threshold: 60000}\n"
          "  - {type: token_usage, max_total: 100000}\ntests:\n  - id: names\n    input: Capital of France?\n"
          "    assertions:\n      - {type: contains, value: Paris}\n")
    assert _names(repo, "suite.eval.yaml") == ["contains-Paris", "latency", "token-usage"]


def test_a_file_pinned_to_2_19_keeps_its_2x_names(repo: Path) -> None:
    """The same entries read as 2.19 reads them (pinned in gate.yaml): 2.19's `contains-Paris`, `is-json` and
    `equals-...`; the kinds 2.19 leaves unnamed it skips ("Skipping evaluator with missing name"), and so does
    the gate, with a warning at each (it once ran them as `latency_2`, `code_judge_4`, ...)."""
    write(repo / ".agentv" / "gate.yaml", 'agentv:\n  version: "2.19"\n')
    write(repo / "evals" / "two.eval.yaml", "tests:\n  - id: names\n    input: Capital of France?\n"
                                            "    assertions:\n" + ENTRIES)
    assert _names(repo, "two.eval.yaml") == ["contains-Paris", "is-json", "equals-The capital is Paris."]
    done = run_cli("validate", "evals/two.eval.yaml", cwd=repo)
    skipped = [line for line in done.stdout.splitlines() + done.stderr.splitlines() if "has no name" in line]
    assert [line.split(": warning")[0] for line in skipped] == [f"evals/two.eval.yaml:{n}" for n in range(6, 11)]
