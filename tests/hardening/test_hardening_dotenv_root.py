"""A committed `.env` is a reference like any other: one that resolves outside the repository is refused.

A pull request can commit `evals/.env -> /home/runner/.some-file`; its values would reach prompts
and results through `${{ VAR }}`. The symlink is refused (exit 2, naming it) before anything is
read through it, unless `--allow-outside-root`; a `.env` linking inside the repository loads.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.reports import RESULTS, read_rows

LEAK = "outside-value-7f3a"


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "repo")
    write(root / "evals/a.eval.yaml", 'tests:\n  - id: "case-${{ DOTENV_PLAIN }}"\n    input: hi\n'
          "    assertions:\n      - {type: contains, value: ok}\n")
    write(tmp_path / "outside/.env", f"DOTENV_PLAIN={LEAK}\n")
    return root


@pytest.mark.parametrize("command", ["run", "validate"])
def test_a_dotenv_symlinked_outside_the_repository_is_refused(repo: Path, command: str) -> None:
    (repo / "evals/.env").symlink_to(repo.parent / "outside/.env")
    proc = run_cli(command, "evals", cwd=repo, drop=("DOTENV_",))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "evals/.env" in proc.stderr and "outside the repository root" in proc.stderr, proc.stderr
    assert LEAK not in proc.stdout + proc.stderr
    assert not (repo / RESULTS).exists()


def test_allow_outside_root_lets_it_through(repo: Path) -> None:
    (repo / "evals/.env").symlink_to(repo.parent / "outside/.env")
    proc = run_cli("run", "evals", "--allow-outside-root", cwd=repo, drop=("DOTENV_",))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [r["eval_id"] for r in read_rows(repo / RESULTS)] == [f"case-{LEAK}"]


def test_a_dotenv_linking_inside_the_repository_loads(repo: Path) -> None:
    write(repo / "config/shared.env", "DOTENV_PLAIN=inside\n")
    (repo / "evals/.env").symlink_to(repo / "config/shared.env")
    proc = run_cli("run", "evals", cwd=repo, drop=("DOTENV_",))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [r["eval_id"] for r in read_rows(repo / RESULTS)] == ["case-inside"]
