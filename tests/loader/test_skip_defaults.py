"""`execution.skip_defaults: true` on a test drops *both* the suite's `assert` list and the suite's
`input` messages for that test (AgentV 2.19); other tests of the suite keep both."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.agents import ECHO_TARGETS
from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.reports import rows_by_id


def test_skip_defaults_drops_the_suite_input_and_assertions(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", ECHO_TARGETS)
    write(repo / "evals/s.eval.yaml", """
        threshold: 1
        input: SUITE-PREAMBLE
        assert:
          - type: contains
            value: SUITE-PREAMBLE
        tests:
          - id: with-defaults
            input: own question
          - id: skipped
            input: own question
            execution:
              skip_defaults: true
            assert:
              - type: contains
                value: SUITE-PREAMBLE
                negate: true
    """)
    ran = run_cli("run", "evals", "--output-dir", "out", "--no-cache", cwd=repo)
    rows = rows_by_id(repo / "out/results.jsonl", key="test_id")
    assert ran.returncode == 0, ran.stdout + ran.stderr + json.dumps(rows, indent=1)
    # One assertion each: the suite's for the first, only its own for the second.
    assert len(rows["with-defaults"]["scores"]) == 1 and len(rows["skipped"]["scores"]) == 1
    assert "SUITE-PREAMBLE" not in json.dumps(rows["skipped"]["input"])
