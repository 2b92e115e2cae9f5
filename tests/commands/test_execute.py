"""Each command on its own: `execute(args)` returns the exit code, or raises the error `cli.main` turns into one.

The CLI tests beside this file go through the console script; these call a command module directly, in
process, with the Namespace the real parser builds, so a command can be read and tested without the rest.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from agentv_gate.cli import build_parser
from agentv_gate.commands import init, merge, run, validate
from agentv_gate.errors import EXIT_FAILED, EXIT_OK, ConfigError, NoCasesError, ReportError, UsageError
from tests.helpers.files import make_repo
from tests.helpers.suites import PARIS_TARGETS

PASSING = "tests:\n  - id: a\n    input: q\n    assertions: [{type: contains, value: Paris}]\n"
FAILING = "tests:\n  - id: b\n    input: q\n    assertions: [{type: contains, value: Berlin}]\n"


def args_for(*argv: str) -> argparse.Namespace:
    """What `cli.main` hands a command: the real parser's Namespace."""
    return build_parser().parse_args(list(argv))


@pytest.fixture()
def repo(repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The shared repository with the Paris agent, as the working folder; no GitHub environment."""
    make_repo(repo, PARIS_TARGETS)
    monkeypatch.chdir(repo)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    return repo


# ---------------------------------------------------------------- validate


def test_validate_returns_ok_for_a_valid_suite(repo: Path) -> None:
    (repo / "evals" / "ok.eval.yaml").write_text(PASSING)
    assert validate.execute(args_for("validate", "evals")) == EXIT_OK


def test_validate_returns_failed_for_a_broken_file(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "evals" / "bad.eval.yaml").write_text("tests: [\n")
    assert validate.execute(args_for("validate", "evals")) == EXIT_FAILED
    assert "evals/bad.eval.yaml:2: malformed YAML" in capsys.readouterr().out


def test_validate_raises_no_cases_error_when_nothing_is_found(repo: Path) -> None:
    (repo / "empty").mkdir()
    with pytest.raises(NoCasesError, match="no eval files found in empty"):
        validate.execute(args_for("validate", "empty"))


# ---------------------------------------------------------------- run


def test_run_returns_ok_when_every_case_passes(repo: Path) -> None:
    (repo / "evals" / "ok.eval.yaml").write_text(PASSING)
    assert run.execute(args_for("run", "evals", "--quiet")) == EXIT_OK
    assert json.loads((repo / ".agentv-gate" / "results.jsonl").read_text())["verdict"] == "pass"


def test_run_returns_failed_when_a_case_fails(repo: Path) -> None:
    (repo / "evals" / "ok.eval.yaml").write_text(PASSING + FAILING.removeprefix("tests:\n"))
    assert run.execute(args_for("run", "evals", "--quiet")) == EXIT_FAILED


@pytest.mark.parametrize(("argv", "error", "message"), [
    (["--threshold", "1.5"], UsageError, "--threshold 1.5 is not in 0..1"),
    (["--shard", "4/3"], UsageError, "K must be between 1 and N"),
    (["--targets", "missing.yaml"], ConfigError, "cannot read targets file"),
    (["--target", "nope"], ConfigError, "no target named 'nope'"),
])
def test_run_raises_before_running_anything(repo: Path, argv: list[str], error: type[Exception], message: str) -> None:
    (repo / "evals" / "ok.eval.yaml").write_text(PASSING)
    with pytest.raises(error, match=message):
        run.execute(args_for("run", "evals", *argv))
    assert not (repo / ".agentv-gate" / "results.jsonl").exists()


def test_run_raises_config_error_for_problems_in_eval_files(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "evals" / "bad.eval.yaml").write_text(
        "tests:\n  - id: x\n    criteria: c\n    input: q\n    assert: [{type: nonsense}]\n")
    with pytest.raises(ConfigError, match=r"1 problem\(s\) in eval files; nothing was run"):
        run.execute(args_for("run", "evals"))
    assert "evals/bad.eval.yaml:5: unknown evaluator type 'nonsense'" in capsys.readouterr().err


def test_run_raises_no_cases_error_when_there_are_no_cases(repo: Path) -> None:
    (repo / "empty").mkdir()
    with pytest.raises(NoCasesError, match="no eval cases found in empty"):
        run.execute(args_for("run", "empty"))


def test_run_raises_config_error_without_a_targets_file(repo: Path) -> None:
    (repo / ".agentv" / "targets.yaml").unlink()
    (repo / "evals" / "ok.eval.yaml").write_text(PASSING)
    with pytest.raises(ConfigError, match="no targets file"):
        run.execute(args_for("run", "evals"))


def test_run_raises_report_error_when_results_cannot_be_written(repo: Path) -> None:
    (repo / "evals" / "ok.eval.yaml").write_text(PASSING)
    (repo / "taken").write_text("a file where the output folder should be")
    with pytest.raises(ReportError, match="taken"):
        run.execute(args_for("run", "evals", "--output-dir", "taken", "--quiet"))


# ---------------------------------------------------------------- merge


def test_merge_joins_shards_into_one_verdict(repo: Path) -> None:
    (repo / "evals" / "two.eval.yaml").write_text(PASSING + FAILING.removeprefix("tests:\n"))
    for k in (1, 2):
        run.execute(args_for("run", "evals", "--shard", f"{k}/2", "--output-dir", f"s{k}", "--quiet"))
    code = merge.execute(args_for("merge", "s1/results.jsonl", "s2/results.jsonl", "--output-dir", "merged"))
    assert code == EXIT_FAILED
    merged = [json.loads(line) for line in (repo / "merged" / "results.jsonl").read_text().splitlines()]
    assert sorted(r["eval_id"] for r in merged) == ["a", "b"]


def test_merge_raises_report_error_when_a_shard_is_missing(repo: Path) -> None:
    (repo / "evals" / "two.eval.yaml").write_text(PASSING + FAILING.removeprefix("tests:\n"))
    run.execute(args_for("run", "evals", "--shard", "1/2", "--output-dir", "s1", "--quiet"))
    with pytest.raises(ReportError, match="incomplete shard results"):
        merge.execute(args_for("merge", "s1/results.jsonl"))


@pytest.mark.parametrize(("name", "message"), [
    ("missing.jsonl", "cannot read results from missing.jsonl"),
    ("empty.jsonl", "no results to merge"),
])
def test_merge_raises_report_error_without_usable_results(repo: Path, name: str, message: str) -> None:
    (repo / "empty.jsonl").write_text("")
    with pytest.raises(ReportError, match=message):
        merge.execute(args_for("merge", name))


# ---------------------------------------------------------------- init


def test_init_writes_a_starter_that_validates(repo: Path) -> None:
    (repo / ".agentv" / "targets.yaml").unlink()
    assert init.execute(args_for("init", "fresh")) == EXIT_OK
    assert (repo / "fresh" / ".agentv" / "targets.yaml").is_file()
    assert validate.execute(args_for("validate", "fresh/evals")) == EXIT_OK
