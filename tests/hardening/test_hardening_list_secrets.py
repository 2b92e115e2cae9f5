"""`run --list` goes through the one redactor, as every other output does.

A case id may read a variable named like a secret (`id: "case-${{ SHORT_KEY }}"`): the run's
reports write `case-***`, so the list of cases the run would execute must too.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write

VALUE = "abcd9876"


def test_run_list_hides_a_secret_named_value_an_id_reads(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    write(repo / "evals/a.eval.yaml", 'tests:\n  - id: "case-${{ SHORT_KEY }}"\n    input: hi\n'
          "    assertions:\n      - {type: contains, value: ok}\n")
    listed = run_cli("run", "evals", "--list", cwd=repo, env={"SHORT_KEY": VALUE})
    assert listed.returncode == 0, listed.stderr
    assert VALUE not in listed.stdout + listed.stderr
    assert listed.stdout == "evals/a.eval.yaml:2\tcase-***\n"
    ran = run_cli("run", "evals", cwd=repo, env={"SHORT_KEY": VALUE})  # the same run, listed as it reports
    assert ran.returncode == 0 and "case-***" in ran.stdout and VALUE not in ran.stdout + ran.stderr
    write(repo / "evals/a.eval.yaml", 'tests:\n  - id: "case-${{ SHORT_NAME }}"\n    input: hi\n'
          "    assertions:\n      - {type: contains, value: ok}\n")
    plain = run_cli("run", "evals", "--list", cwd=repo, env={"SHORT_NAME": VALUE})  # not named like a secret
    assert plain.stdout == f"evals/a.eval.yaml:2\tcase-{VALUE}\n"
