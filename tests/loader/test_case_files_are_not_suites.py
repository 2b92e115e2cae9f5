"""A case file a suite loads (`- file://cases/x.yaml`, `tests: ./cases.yaml`) is part of that suite,
never a suite of its own, even where its name or folder would make it one (`evals/`, `*.eval.yaml`).

Run as a suite, its cases ran twice, the second time without the suite's assertions and defaults:
a case the suite fails could so PASS, or a case file fail with a confusing error of its own.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.reports import read_rows

TARGETS = "targets:\n  - name: default\n    provider: mock\n    response: Paris\n"


def test_a_file_entry_case_file_inside_evals_runs_once_with_its_suite(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", TARGETS)
    write(repo / "evals/geo.eval.yaml", """
        assert:
          - type: contains
            value: Paris
        tests:
          - id: inline
            input: Capital of France?
          - file://cases/more.yaml
    """)
    # Alone this file is not a valid suite: its cases have nothing to judge against.
    write(repo / "evals/cases/more.yaml", """
        - id: from-file
          input: Capital of France, again?
    """)
    ran = run_cli("run", "evals", "--output-dir", "out", "--no-cache", cwd=repo)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert sorted(str(row["test_id"]) for row in read_rows(repo / "out/results.jsonl")) == ["from-file", "inline"]
    checked = run_cli("validate", "evals", "--verbose", cwd=repo)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "ok: 2 case(s) in 1 file(s)" in checked.stderr


def test_an_eval_yaml_named_as_the_tests_file_runs_once(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", TARGETS)
    write(repo / "suites/geo.eval.yaml", """
        assert:
          - type: contains
            value: Paris
        tests: ./shared.eval.yaml
    """)
    write(repo / "suites/shared.eval.yaml", """
        - id: one
          input: Capital of France?
    """)
    ran = run_cli("run", "suites", "--output-dir", "out", "--no-cache", cwd=repo)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    [row] = read_rows(repo / "out/results.jsonl")
    assert row["test_id"] == "one"


def test_a_case_file_named_alone_runs_the_suites_that_load_it(tmp_path: Path) -> None:
    """What a pre-commit hook does when a commit touches only the case file."""
    repo = make_repo(tmp_path / "repo", TARGETS)
    write(repo / "evals/geo.eval.yaml", """
        assert:
          - type: contains
            value: Berlin
        tests:
          - file://cases/more.yaml
    """)
    write(repo / "evals/cases/more.yaml", """
        - id: from-file
          input: Capital of France?
    """)
    ran = run_cli("run", "evals/cases/more.yaml", "--output-dir", "out", "--no-cache", cwd=repo)
    # The suite's assertion applies: the mock answers Paris, the suite wants Berlin.
    assert ran.returncode == 1, ran.stdout + ran.stderr
    [row] = read_rows(repo / "out/results.jsonl")
    assert row["test_id"] == "from-file"
    checked = run_cli("validate", "evals/cases/more.yaml", cwd=repo)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "ok: 1 case(s) in 1 file(s)" in checked.stderr


def test_a_file_that_is_a_suite_and_loaded_by_none_still_runs(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", TARGETS)
    write(repo / "evals/a.eval.yaml", """
        tests:
          - id: a
            input: Capital of France?
            assert: [{type: contains, value: Paris}]
    """)
    write(repo / "evals/b.yaml", """
        tests:
          - id: b
            input: Capital of France?
            assert: [{type: contains, value: Paris}]
    """)
    ran = run_cli("run", "evals", "--output-dir", "out", "--no-cache", cwd=repo)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert sorted(str(row["test_id"]) for row in read_rows(repo / "out/results.jsonl")) == ["a", "b"]
