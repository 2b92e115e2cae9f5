"""A `${{ VAR }}` whose name names a secret (`*_KEY`, `*_TOKEN`, `*_SECRET`, `*_PASSWORD`, ...) is
a secret wherever it is read: interpolated into an eval file, its value is hidden (`***`) from every
output of the run, as a targets.yaml secret is. Other variables are shown as they are.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers.agents import ECHO_TARGETS
from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write

SECRET = "sk-live-4f9a8b7c6d5e"


def outputs(repo: Path, ran_out: str) -> str:
    return ran_out + "".join(path.read_text(errors="replace") for path in (repo / "out").rglob("*") if path.is_file())


def test_an_interpolated_secret_variable_is_hidden_from_every_output(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", ECHO_TARGETS)
    write(repo / "evals/echo.eval.yaml", """
        threshold: 1
        description: uses ${{ SUPPORT_API_TOKEN }} for ${{ SUPPORT_CITY }}
        tests:
          - id: echo
            input: "Call with ${{ SUPPORT_API_TOKEN }} from ${{ SUPPORT_CITY }}"
            assert:
              - type: contains
                value: "${{ SUPPORT_API_TOKEN }} from"
              - type: equals
                value: "never ${{ SUPPORT_API_TOKEN }}"
    """)
    env = {"SUPPORT_API_TOKEN": SECRET, "SUPPORT_CITY": "Lisbon"}
    ran = run_cli("run", "evals", "--output-dir", "out", "--no-cache", "--verbose", cwd=repo, env=env)
    assert ran.returncode == 1, ran.stdout + ran.stderr  # equals fails: the failure text names the value
    seen = outputs(repo, ran.stdout + ran.stderr)
    assert "Lisbon" in seen  # not a secret: shown
    assert "***" in seen
    assert SECRET not in seen


def secret_threshold_repo(tmp_path: Path) -> Path:
    """A case whose threshold is a secret variable: not a number, so its value ends up in the problem."""
    repo = make_repo(tmp_path / "repo")
    write(repo / "evals/bad.eval.yaml", """
        tests:
          - id: a
            input: hi
            criteria: says hi
            threshold: "${{ SUPPORT_API_TOKEN }}"
    """)
    return repo


def test_a_secret_variable_in_a_broken_value_is_hidden_from_the_problem(tmp_path: Path) -> None:
    repo = secret_threshold_repo(tmp_path)
    for command in ("validate", "run"):
        ran = run_cli(command, "evals", "--no-cache" if command == "run" else "--quiet", cwd=repo,
                      env={"SUPPORT_API_TOKEN": SECRET})
        assert ran.returncode in (1, 2), ran.stdout + ran.stderr
        assert "evals/bad.eval.yaml:5: threshold '***' is not a number" in ran.stdout + ran.stderr
        assert SECRET not in ran.stdout + ran.stderr


def test_a_secret_variable_in_a_broken_value_is_hidden_from_the_annotations_and_summary(tmp_path: Path) -> None:
    """Under GitHub Actions a configuration problem also becomes an annotation and a summary row: the
    secret is hidden there too, not only on the log line."""
    repo = secret_threshold_repo(tmp_path)
    for command in ("validate", "run"):
        summary = tmp_path / f"{command}-summary.md"
        ran = run_cli(command, "evals", cwd=repo, env={"SUPPORT_API_TOKEN": SECRET, "GITHUB_ACTIONS": "true",
                                                       "GITHUB_STEP_SUMMARY": str(summary)})
        assert ran.returncode in (1, 2), ran.stdout + ran.stderr
        seen = ran.stdout + ran.stderr + summary.read_text()
        assert "::error file=evals/bad.eval.yaml,line=5" in seen
        assert "threshold '\\*\\*\\*' is not a number" in summary.read_text()  # `***`, escaped for Markdown
        assert SECRET not in seen
