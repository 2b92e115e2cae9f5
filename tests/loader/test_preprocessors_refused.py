"""`preprocessors` (AgentV 4.42's answer preprocessors) are not run yet: a suite or grader that has them stops
the run at their line, saying what AgentV does with them and what the gate lacks, never scoring without them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.files import write

SUITE = """\
preprocessors:
  - type: xlsx
    command: [bun, run, x.ts]
tests:
  - id: a
    input: hi
    criteria: says hi
"""

GRADER = """\
tests:
  - id: a
    input: hi
    assertions:
      - type: llm-grader
        preprocessors: [{type: xlsx, command: [bun, run, x.ts]}]
"""


@pytest.mark.parametrize(("body", "line"), [(SUITE, 1), (GRADER, 6)], ids=["suite", "grader"])
def test_preprocessors_stop_the_run_saying_what_is_missing(repo: Path, body: str, line: int) -> None:
    write(repo / "evals/x.eval.yaml", body)
    ran = run_cli("run", "evals", "--no-cache", cwd=repo)
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert f"x.eval.yaml:{line}: 'preprocessors' is an AgentV feature agentv-gate does not run yet" in ran.stderr
    assert "file content blocks of the agent's last message" in ran.stderr
    assert "running a command per media type" in ran.stderr
