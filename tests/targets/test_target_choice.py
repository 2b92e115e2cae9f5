"""Which target answers a case, as AgentV 2.19 picks it (apps/cli/src/commands/eval/targets.ts,
`pickTargetName`): `--target default` is the flag's own default value there, so it chooses nothing and
an eval file's `target:` still wins. Taking it as a choice ran another agent than the one AgentV runs."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.reports import RESULTS, read_rows

TARGETS = """\
targets:
  - name: default
    provider: mock
    response: Paris
  - name: agent
    provider: mock
    response: London
"""


def test_target_default_on_the_command_line_leaves_the_files_target(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", TARGETS)
    write(repo / "evals/s.eval.yaml", """
        target: agent
        tests:
          - {id: capital, input: Capital of France?, assert: [{type: contains, value: Paris}]}
    """)
    ran = run_cli("run", "evals", "--target", "default", cwd=repo)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    [row] = read_rows(repo / RESULTS)
    assert (row["target"], row["verdict"], row["candidate_answer"]) == ("agent", "fail", "London")
    # Another name is a choice, and wins over the file's.
    assert run_cli("run", "evals", "--target", "default2", cwd=repo).returncode == 2
    write(repo / ".agentv/targets.yaml", TARGETS + "  - {name: other, provider: mock, response: Paris}\n")
    assert run_cli("run", "evals", "--target", "other", cwd=repo).returncode == 0
