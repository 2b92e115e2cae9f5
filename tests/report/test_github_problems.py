"""Configuration problems in GitHub Actions: the annotations, the job summary section, and the files written.

A run that never starts (an eval file or targets.yaml that does not load) annotates each located
problem at its file:line, errors before warnings, at most GitHub's 10 per step with a last one
saying how many more there are; the job summary lists them all in a table cut to its size budget.
These are the exact lines the runner parses as workflow commands and the Markdown it renders.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from agentv_gate.base.problems import Problem
from agentv_gate.report.github import (
    append_step_summary,
    problem_annotations,
    problems_markdown,
    write_github_problems,
)

ERROR_TITLE = "title=agentv-gate%3A configuration error"
WARNING_TITLE = "title=agentv-gate%3A configuration warning"


def error(root: Path, name: str, line: int = 3) -> Problem:
    return Problem(root / "evals" / f"{name}.yaml", line, f"{name} is broken")


def warning(root: Path, name: str, line: int = 4) -> Problem:
    return Problem(root / "evals" / f"{name}.yaml", line, f"{name} looks odd", severity="warning")


# ---------------------------------------------------------------- annotations


def test_an_unlocated_message_is_one_error_annotation_and_nothing_is_none(tmp_path: Path) -> None:
    assert problem_annotations([], "targets.yaml: cannot read it") == [
        f"::error {ERROR_TITLE}::targets.yaml: cannot read it"]
    assert problem_annotations([], None) == []
    assert problem_annotations([], "") == []
    # Located problems are annotated where they are; the message is not repeated beside them.
    assert problem_annotations([error(tmp_path, "a")], "1 problem", tmp_path) == [
        f"::error file=evals/a.yaml,line=3,{ERROR_TITLE}::a is broken"]


def test_errors_are_annotated_before_warnings_each_with_its_own_command(tmp_path: Path) -> None:
    problems = [warning(tmp_path, "w1"), error(tmp_path, "e1"), warning(tmp_path, "w2"), error(tmp_path, "e2")]
    assert problem_annotations(problems, None, tmp_path) == [
        f"::error file=evals/e1.yaml,line=3,{ERROR_TITLE}::e1 is broken",
        f"::error file=evals/e2.yaml,line=3,{ERROR_TITLE}::e2 is broken",
        f"::warning file=evals/w1.yaml,line=4,{WARNING_TITLE}::w1 looks odd",
        f"::warning file=evals/w2.yaml,line=4,{WARNING_TITLE}::w2 looks odd",
    ]


def test_past_githubs_ten_per_step_the_last_annotation_says_how_many_more(tmp_path: Path) -> None:
    errors = [error(tmp_path, f"e{i:02}") for i in range(12)]
    lines = problem_annotations([*errors, warning(tmp_path, "w")], None, tmp_path)
    assert lines == [
        *(f"::error file=evals/e{i:02}.yaml,line=3,{ERROR_TITLE}::e{i:02} is broken" for i in range(9)),
        f"::error {ERROR_TITLE}::3 more configuration errors not annotated (GitHub shows 10 per step); "
        "the job summary lists them all.",
        f"::warning file=evals/w.yaml,line=4,{WARNING_TITLE}::w looks odd",
    ]


@pytest.mark.parametrize(("limit", "count", "shown", "note"), [
    (3, 2, 2, None),
    (3, 3, 3, None),
    (3, 4, 2, "2 more configuration warnings not annotated (GitHub shows 3 per step)"),
    (3, 5, 2, "3 more configuration warnings not annotated (GitHub shows 3 per step)"),
    (1, 2, 0, "2 more configuration warnings not annotated (GitHub shows 1 per step)"),
    (0, 1, 0, "1 more configuration warning not annotated (GitHub shows 0 per step)"),
    (0, 2, 0, "2 more configuration warnings not annotated (GitHub shows 0 per step)"),
])
def test_each_kind_stays_within_the_limit_with_a_note_of_the_rest(
        tmp_path: Path, limit: int, count: int, shown: int, note: str | None) -> None:
    warnings = [warning(tmp_path, f"w{i}") for i in range(count)]
    lines = problem_annotations([error(tmp_path, "e"), *warnings], None, tmp_path, limit=limit)
    expected = [f"::warning file=evals/w{i}.yaml,line=4,{WARNING_TITLE}::w{i} looks odd" for i in range(shown)]
    if note:
        expected.append(f"::warning {WARNING_TITLE}::{note}; the job summary lists them all.")
    # The one error is its own kind: within every limit but 0, where only the note of it remains.
    error_lines = ([f"::error file=evals/e.yaml,line=3,{ERROR_TITLE}::e is broken"] if limit else
                   [f"::error {ERROR_TITLE}::1 more configuration error not annotated (GitHub shows 0 per step); "
                    "the job summary lists them all."])
    assert lines == error_lines + expected


# ---------------------------------------------------------------- job summary section

HEADER = "| | Where | Problem |\n| --- | --- | --- |\n"


def test_the_summary_section_lists_errors_before_warnings_at_file_and_line(tmp_path: Path) -> None:
    problems = [warning(tmp_path, "w1", line=1), error(tmp_path, "e1", line=12), warning(tmp_path, "w2"),
                Problem(tmp_path / "evals" / "gone.yaml", 0, "no such file or folder", "an eval file")]
    assert problems_markdown("configuration error", "The run did not start.", problems, tmp_path) == (
        "### agentv-gate: configuration error\n\nThe run did not start.\n\n" + HEADER
        + "| ❌ error | evals/e1.yaml:12 | e1 is broken |\n"
        "| ❌ error | evals/gone.yaml | no such file or folder (expected an eval file) |\n"
        "| ⚠️ warning | evals/w1.yaml:1 | w1 looks odd |\n"
        "| ⚠️ warning | evals/w2.yaml:4 | w2 looks odd |\n\n")


def test_a_summary_without_problems_has_no_table() -> None:
    assert problems_markdown("validate", "2 files, 5 cases: all valid.", []) == (
        "### agentv-gate: validate\n\n2 files, 5 cases: all valid.\n\n\n")


def _long(length: int) -> str:
    return ("abcdefghij" * (length // 10 + 1))[:length]


@pytest.mark.parametrize("length", [200, 201])
def test_the_where_cell_is_cut_past_200_characters(tmp_path: Path, length: int) -> None:
    # evals/<name>.yaml:3 is `length` characters long.
    name = _long(length - len("evals/.yaml:3"))
    where = f"evals/{name}.yaml:3"
    markdown = problems_markdown("h", "l", [error(tmp_path, name)], tmp_path)
    cell = where if length <= 200 else f"{where[:200]}… \\[truncated: {length - 200} more characters\\]"
    assert f"| ❌ error | {cell} | {name} is broken |\n" in markdown


@pytest.mark.parametrize("length", [2000, 2001])
def test_the_problem_cell_is_cut_past_2000_characters(tmp_path: Path, length: int) -> None:
    message = _long(length)
    markdown = problems_markdown("h", "l", [Problem(tmp_path / "a.yaml", 1, message)], tmp_path)
    cell = message if length <= 2000 else f"{message[:2000]}… \\[truncated: {length - 2000} more characters\\]"
    assert f"| ❌ error | a.yaml:1 | {cell} |\n" in markdown


def test_rows_stop_600_bytes_short_of_the_budget_with_a_note_of_the_rest(tmp_path: Path) -> None:
    problems = [error(tmp_path, f"e{i}") for i in range(3)]
    full = problems_markdown("h", "l", problems, tmp_path)
    size = len(full.encode()) - 1  # all but the closing newline counts against the budget
    # Exactly at the budget less its 600-byte margin: every row fits.
    assert problems_markdown("h", "l", problems, tmp_path, budget_bytes=size + 600) == full
    # One byte over: the last row is left out, and the note says so.
    assert problems_markdown("h", "l", problems, tmp_path, budget_bytes=size + 599) == (
        full[:-len("| ❌ error | evals/e2.yaml:3 | e2 is broken |\n\n")]
        + "\n_1 more problem left out to keep this summary under GitHub's size limit; "
        "the log of this step lists them all._\n\n")


def test_a_summary_over_budget_counts_every_problem_left_out(tmp_path: Path) -> None:
    problems = [error(tmp_path, "e0"), *(error(tmp_path, f"long{i}", line=7) for i in range(2)),
                error(tmp_path, "e1")]
    full = problems_markdown("h", "l", problems[:1], tmp_path)
    # Room for the first row only; the short last one would fit after the long ones, but rows stop at the first cut.
    budget = len(full.encode()) - 1 + 600 + len("| ❌ error | evals/e1.yaml:3 | e1 is broken |\n".encode())
    markdown = problems_markdown("h", "l", problems, tmp_path, budget_bytes=budget)
    assert markdown == (full[:-1] + "\n_3 more problems left out to keep this summary under GitHub's size limit; "
                        "the log of this step lists them all._\n\n")


# ---------------------------------------------------------------- writing them in a job


def _runner_env(tmp_path: Path) -> dict[str, str]:
    summary = tmp_path / "step-summary.md"
    summary.write_text("## earlier step\n", encoding="utf-8")
    return {"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(tmp_path), "GITHUB_STEP_SUMMARY": str(summary)}


def test_in_a_job_problems_are_annotated_and_appended_to_the_summary(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)  # the `env` given is the one that counts
    env = _runner_env(tmp_path)
    stream = io.StringIO()
    problems = [warning(tmp_path, "w"), error(tmp_path, "e")]
    ran = write_github_problems(heading="configuration error", lead="The run did not start.", problems=problems,
                                message="2 problems", env=env, stream=stream)
    assert ran is True
    assert stream.getvalue() == (f"::error file=evals/e.yaml,line=3,{ERROR_TITLE}::e is broken\n"
                                 f"::warning file=evals/w.yaml,line=4,{WARNING_TITLE}::w looks odd\n")
    assert Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8") == (
        "## earlier step\n" + problems_markdown("configuration error", "The run did not start.", problems, tmp_path))


def test_without_a_summary_file_only_the_annotation_is_written(tmp_path: Path) -> None:
    stream = io.StringIO()
    ran = write_github_problems(heading="h", lead="l", problems=[], message="no eval file found",
                                env={"GITHUB_ACTIONS": "true"}, stream=stream)
    assert ran is True
    assert stream.getvalue() == f"::error {ERROR_TITLE}::no eval file found\n"
    assert list(tmp_path.iterdir()) == []


def test_the_job_environment_is_read_when_none_is_given(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    for name, value in _runner_env(tmp_path).items():
        monkeypatch.setenv(name, value)
    assert write_github_problems(heading="h", lead="l", problems=[error(tmp_path, "e")]) is True
    assert capsys.readouterr().out == f"::error file=evals/e.yaml,line=3,{ERROR_TITLE}::e is broken\n"
    assert "| ❌ error | evals/e.yaml:3 | e is broken |" in (tmp_path / "step-summary.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("actions", [None, "", "false", "1"])
def test_outside_github_actions_nothing_is_written(tmp_path: Path, actions: str | None) -> None:
    env = _runner_env(tmp_path)
    if actions is None:
        del env["GITHUB_ACTIONS"]
    else:
        env["GITHUB_ACTIONS"] = actions
    stream = io.StringIO()
    assert write_github_problems(heading="h", lead="l", problems=[error(tmp_path, "e")], message="m",
                                 env=env, stream=stream) is False
    assert stream.getvalue() == ""
    assert Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8") == "## earlier step\n"


def test_the_step_summary_is_appended_to_and_ends_each_section_with_a_newline(tmp_path: Path) -> None:
    summary = tmp_path / "step-summary.md"
    summary.write_text("earlier\n", encoding="utf-8")
    append_step_summary("first", summary)
    append_step_summary("second\n", str(summary))
    assert summary.read_text(encoding="utf-8") == "earlier\nfirst\nsecond\n"
