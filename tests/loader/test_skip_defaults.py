"""`execution.skip_defaults: true` on a test drops the suite's `assert` list, the suite's `input`
messages and the suite's `input_files` for that test (AgentV); other tests of the suite keep them."""

from __future__ import annotations

import json
from pathlib import Path

from agentv_gate.loader import load_eval_file
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


def test_skip_defaults_drops_the_suite_input_files_too(repo: Path) -> None:
    """AgentV passes the suite's `input_files` to a test only without skip_defaults: a test that skips the
    defaults gets neither the files nor the refusal a list-of-messages input would get with them."""
    write(repo / "evals/ctx.md", "context\n")
    f = write(repo / "evals/s.eval.yaml", """
        input_files: [ctx.md]
        tests:
          - id: with-files
            criteria: c
            input: q
          - id: text
            criteria: c
            input: q
            execution: {skip_defaults: true}
          - id: messages
            criteria: c
            input: [{role: user, content: q}]
            execution: {skip_defaults: true}
    """)
    result = load_eval_file(f, repo)
    assert result.errors == []
    with_files, text, messages = result.cases
    assert [Path(p).name for p in with_files.input_files] == ["ctx.md"]
    assert (text.input_files, messages.input_files) == ([], [])
    assert [(m.role, m.content) for m in text.input_messages] == [("user", "q")]
