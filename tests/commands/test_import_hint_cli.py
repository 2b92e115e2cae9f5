"""A run where every case breaks the same way says it once, and says why.

The first-day failure of a Python team: the agent's healthcheck imports the team's package in an
environment that does not have it, and every case errors with the same ModuleNotFoundError.
"""

from __future__ import annotations

from pathlib import Path

from agentv_gate.commands._hints import import_hint
from agentv_gate.errors import EXIT_FAILED
from agentv_gate.models import CaseResult
from agentv_gate.report.rows import ReportRow
from tests.helpers.cli import run_cli
from tests.helpers.files import write

TARGETS = """\
targets:
  - name: default
    provider: cli
    command: python3 -c "print('hi')" {PROMPT}
    healthcheck:
      command: python3 -c "import support_agent_not_installed"
"""

SUITE = "tests:\n" + "".join(f"""\
  - id: case-{n}
    input: question {n}
    assertions:
      - type: contains
        value: hi
""" for n in range(4))


def test_the_same_error_is_said_once_with_the_reason(repo: Path) -> None:
    write(repo / ".agentv/targets.yaml", TARGETS)
    write(repo / "evals/s.eval.yaml", SUITE)
    ran = run_cli("run", "evals", "--no-cache", "--quiet", cwd=repo)
    assert ran.returncode == EXIT_FAILED
    out = ran.stdout + ran.stderr
    # The traceback's last line, in full, once in the details (under --quiet the details come first, no table)
    details = ran.stdout.split("\n\n")[0]
    assert details.count("healthcheck failed") == 1, details
    assert details.count("error: the same as case-0 (evals/s.eval.yaml:2) above") == 3, details
    assert "the same error as" not in ran.stderr, ran.stderr  # --quiet: no live line per case, said once above
    hint = [line for line in ran.stderr.splitlines() if "could not import" in line]
    assert len(hint) == 1, out
    assert "'support_agent_not_installed' (4 cases)" in hint[0] and "python3 first on PATH" in hint[0]


def _row(error: str) -> ReportRow:
    return ReportRow.of(CaseResult(eval_id="a", suite="evals/a.yaml", file="evals/a.yaml", line=1, verdict="error",
                                   error=error))


def test_inside_pre_commit_s_virtualenv_the_hint_names_the_system_hooks() -> None:
    rows = [_row("cli target 'default': healthcheck failed: ModuleNotFoundError: No module named 'support_agent'")]
    hint = import_hint(rows, {"PRE_COMMIT": "1", "PATH": ""}, "/home/dev/.cache/pre-commit/repo1/py_env-python3.11")
    assert hint is not None and "pre-commit's own virtualenv" in hint
    assert "`agentv-gate-system` or `agentv-gate-all-system`" in hint and "repo: local" in hint
    # Outside pre-commit (or in a system hook), the Python that ran them
    plain = import_hint(rows, {"PATH": ""}, "/home/dev/.venv")
    assert plain is not None and "pre-commit" not in plain and "python3 first on PATH" in plain
    assert import_hint([_row("HTTP 500")], {"PRE_COMMIT": "1"}, "/x/py_env-python3") is None
