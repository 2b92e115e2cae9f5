"""A workspace template in an AgentV 4.x file, through the CLI: 4.42's lifecycle of one shared copy per suite,
a fresh baseline after each `before_each` (each test's file changes its own), and a hook's `reset`."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.reports import rows_by_id
from tests.helpers.workspaces import ADDED_LINES_GRADER, agent_targets

AGENT = """\
import os, sys
prompt, out = sys.argv[1], sys.argv[2]
with open("notes.txt", "a") as f:
    f.write(prompt + "\\n")
notes = open("notes.txt").read().replace("\\n", ",")
open(out, "w").write(f"cwd-has-seed={os.path.exists('seed.txt')} notes={notes}")
"""
HOOK = """\
import json, sys
payload = json.load(sys.stdin)
open(payload["workspace_path"] + "/hook.txt", "a").write(payload["test_id"] + "\\n")
"""
SUITE = """\
{pin}workspace:
  template: ./tpl
  hooks:
    before_all: {command: [python3, ../hook.py]}
    before_each: {command: [python3, ../hook.py]{reset}}
tests:
  - id: a
    input: first
    assertions:
      - {type: contains, value: "cwd-has-seed=True notes=first,"}
      - {name: changes, type: code-grader, command: [python3, ../grader.py]}
  - id: b
    input: second
    assertions:
      - {type: contains, value: "notes={b_notes}"}
      - {name: changes, type: code-grader, command: [python3, ../grader.py]}
"""
"""Checked side by side with AgentV 4.42.4 (with `reset: fast` and without): the same scores and each test's
file changes word for word (tests/compat/test_agentv_442_side_by_side.py)."""


def files(repo: Path, suite: str) -> dict[str, str]:
    return {"agent.py": AGENT, "grader.py": ADDED_LINES_GRADER, "hook.py": HOOK, "evals/tpl/seed.txt": "seed\n",
            ".agentv/targets.yaml": agent_targets(repo), "evals/w.eval.yaml": suite}


def suite(pin: str = "", reset: str = "", b_notes: str = "first,second,") -> str:
    return SUITE.replace("{pin}", pin).replace("{reset}", reset).replace("{b_notes}", b_notes)


def _run(tmp_path: Path, text: str) -> dict[str, dict]:
    repo = make_repo(tmp_path)
    for name, body in files(repo, text).items():
        write(repo / name, body)
    ran = run_cli("run", "evals", "--workers", "1", cwd=repo)  # a before b, as the assertions expect
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return rows_by_id(repo / ".agentv-gate/results.jsonl")


def _added(row: dict) -> str:
    [grader] = [s for s in row["scores"] if s["name"] == "changes"]
    return grader["hits"][0]


def test_the_suite_shares_one_copy_and_each_test_sees_only_its_own_changes(tmp_path: Path) -> None:
    rows = _run(tmp_path, suite())
    assert (rows["a"]["score"], rows["b"]["score"]) == (1.0, 1.0)  # b saw a's note: one copy, shared
    assert _added(rows["a"]) == "added: first"
    assert _added(rows["b"]) == "added: second"  # the baseline was taken again after b's before_each


def test_a_before_each_reset_puts_the_workspace_back_to_its_baseline(tmp_path: Path) -> None:
    rows = _run(tmp_path, suite(reset=", reset: fast", b_notes="second,"))
    assert (rows["a"]["score"], rows["b"]["score"]) == (1.0, 1.0)  # a's note is gone when b starts
    assert _added(rows["b"]) == "added: second"


def test_a_2x_file_keeps_2_19s_lifecycle(tmp_path: Path) -> None:
    """AgentV 2.19 takes no baseline after before_each: what b's before_each wrote counts as b's change."""
    rows = _run(tmp_path, suite(pin='requires: {agentv: "^2.19"}\n'))
    assert "b" in _added(rows["b"]).split(": ")[1].split(",")
