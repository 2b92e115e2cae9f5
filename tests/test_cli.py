"""The entry points themselves: `python -m agentv_gate`, and help texts that state the defaults the code uses."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from agentv_gate import __version__
from agentv_gate.cli import main
from agentv_gate.models import DEFAULT_JUDGE_TIMEOUT_SECONDS, DEFAULT_THRESHOLD, DEFAULT_WORKERS


def test_python_dash_m_runs_the_cli(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "agentv_gate", "--version"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"agentv-gate {__version__}"


def test_python_dash_m_passes_the_exit_code_through(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    proc = subprocess.run([sys.executable, "-m", "agentv_gate", "validate", "empty"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "agentv-gate: no eval files found" in proc.stderr


def test_run_help_states_the_defaults_the_code_uses(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines to the terminal width
    assert re.search(rf"--threshold THRESHOLD [^-]*\(default {DEFAULT_THRESHOLD}[;)]", help_text), help_text
    assert re.search(rf"--workers WORKERS [^-]*\(default {DEFAULT_WORKERS}\)", help_text), help_text
    assert re.search(rf"--judge-timeout JUDGE_TIMEOUT [^-]*\(default {DEFAULT_JUDGE_TIMEOUT_SECONDS:g}\)", help_text), help_text
    assert "0.8" not in help_text


def test_the_action_and_the_readme_state_the_same_defaults() -> None:
    root = Path(__file__).resolve().parents[1]
    action = (root / "action.yml").read_text(encoding="utf-8")
    readme = (root / "README.md").read_text(encoding="utf-8")
    assert f"(CLI default {DEFAULT_THRESHOLD})" in action
    assert f"(CLI default {DEFAULT_WORKERS})" in action
    assert f"`--threshold X` (default {DEFAULT_THRESHOLD}" in readme
    assert f"`--workers N` (default {DEFAULT_WORKERS}" in readme
