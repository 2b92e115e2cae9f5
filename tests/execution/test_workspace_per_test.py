"""`isolation: per_test` in an AgentV 4.x file, through the CLI, as 4.42 runs it: each case gets its own copy of
the template, its own `before_all` (with its own test_id and input), `before_each` and `after_each`, file
changes against its own copy; the suite's `after_all` never runs (4.42 runs it only on a shared workspace)."""

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
hooks = open("hook.txt").read().replace("\\n", ",") if os.path.exists("hook.txt") else ""
open(out, "w").write(f"seed={os.path.exists('seed.txt')} notes={notes} hooks={hooks}")
"""
HOOK = """\
import json, sys
payload = json.load(sys.stdin)
open(payload["workspace_path"] + "/hook.txt", "a").write(sys.argv[1] + ":" + payload["test_id"] + ":"
                                                         + str(payload["case_input"]) + "\\n")
"""
AFTER = """\
import json, sys
payload = json.load(sys.stdin)
open(sys.argv[1], "a").write(payload["test_id"] + "\\n")
"""
SUITE = """\
workspace:
  template: ./tpl
  isolation: per_test
  hooks:
    before_all: {command: [python3, ../hook.py, all]}
    before_each: {command: [python3, ../hook.py, each]}
    after_each: {command: [python3, ../after.py, ../after-each.txt]}
    after_all: {command: [python3, ../after.py, ../after-all.txt]}
tests:
  - id: a
    input: first
    assertions:
      - {type: contains, value: "seed=True notes=first, hooks=all:a:first,each:a:first,"}
      - {name: changes, type: code-grader, command: [python3, ../grader.py]}
  - id: b
    input: second
    assertions:
      - {type: contains, value: "seed=True notes=second, hooks=all:b:second,each:b:second,"}
      - {name: changes, type: code-grader, command: [python3, ../grader.py]}
"""
"""Checked side by side with AgentV 4.42.4 (tests/compat/test_agentv_442_side_by_side.py): a and b 1.0 pass,
each grader's 'added: first' / 'added: second', after-each.txt holding a and b, no after-all.txt."""


def files(repo: Path, suite: str) -> dict[str, str]:
    return {"agent.py": AGENT, "grader.py": ADDED_LINES_GRADER, "hook.py": HOOK, "after.py": AFTER,
            "evals/tpl/seed.txt": "seed\n", ".agentv/targets.yaml": agent_targets(repo), "evals/s.eval.yaml": suite}


def _run(tmp_path: Path, text: str) -> tuple[Path, int, str]:
    repo = make_repo(tmp_path)
    for name, body in files(repo, text).items():
        write(repo / name, body)
    ran = run_cli("run", "evals", "--workers", "2", cwd=repo)
    return repo, ran.returncode, ran.stdout + ran.stderr


def _added(row: dict) -> str:
    [grader] = [s for s in row["scores"] if s["name"] == "changes"]
    return grader["hits"][0]


def test_each_case_gets_its_own_copy_and_its_own_before_all(tmp_path: Path) -> None:
    repo, code, out = _run(tmp_path, SUITE)
    assert code == 0, out
    rows = rows_by_id(repo / ".agentv-gate/results.jsonl")
    assert (rows["a"]["score"], rows["b"]["score"]) == (1.0, 1.0)  # b did not see a's note: two copies
    assert (_added(rows["a"]), _added(rows["b"])) == ("added: first", "added: second")
    assert sorted((repo / "after-each.txt").read_text().split()) == ["a", "b"]
    assert not (repo / "after-all.txt").exists()  # 4.42 runs after_all only on a shared workspace
    assert "after_all" in out and "per_test" in out  # said, at its line
    assert not (repo / "evals" / "hook.txt").exists() and not (repo / "evals/tpl/hook.txt").exists()


def test_a_shared_suite_still_shares_one_copy(tmp_path: Path) -> None:
    """The same suite with `isolation: shared`: one before_all for the suite (`__before_all__`), b sees a's
    note, so both assertions fail (the check can fail), and after_all runs."""
    repo, code, out = _run(tmp_path, SUITE.replace("per_test", "shared"))
    assert code == 1, out
    rows = rows_by_id(repo / ".agentv-gate/results.jsonl")
    assert sorted(row["verdict"] for row in rows.values()) == ["fail", "fail"]
    assert (repo / "after-all.txt").read_text().split() == ["__after_all__"]


def test_an_unknown_isolation_is_refused_at_its_line(tmp_path: Path) -> None:
    _repo, code, out = _run(tmp_path, SUITE.replace("per_test", "per-test"))
    assert code == 2, out
    assert "evals/s.eval.yaml:3:" in out and "isolation" in out


def test_per_test_in_a_2x_file_or_in_a_test_is_refused_at_its_line(tmp_path: Path) -> None:
    """AgentV 2.19's per_test is not run here; a test's own `isolation` 4.42 does not read (it reads the suite's)."""
    _repo, code, out = _run(tmp_path, 'requires: {agentv: "^2.19"}\n' + SUITE)
    assert code == 2, out
    assert "evals/s.eval.yaml:4: 'isolation' is an AgentV feature agentv-gate does not run yet" in out
    own = SUITE.replace("  isolation: per_test\n", "").replace("    input: first\n", "    input: first\n"
                                                                  "    workspace: {isolation: per_test}\n")
    _repo, code, out = _run(tmp_path / "own", own)
    assert code == 2, out
    assert "a test's own workspace isolation" in out
