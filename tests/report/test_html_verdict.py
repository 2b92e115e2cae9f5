"""report.html's verdict line: what a reader sees first must never say PASSED for a run that did not pass,
and the case table keeps each row's own verdict, order and caps at their limits."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agentv_gate.errors import ReportWriteError
from agentv_gate.report.html import STYLE, build_html, write_html
from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.reports import case_result


def headline(page: str) -> tuple[str, str]:
    """(the verdict word of the title, the class and text of the totals line)."""
    title = re.search(r"<title>agentv-gate (\w+):", page)
    totals = re.search(r'<p class="totals (\w+)">([^<]*)</p>', page)
    assert title and totals, page[:2000]
    return title.group(1), f"{totals.group(1)} {totals.group(2)}"


def words(page: str) -> str:
    """The page without its style sheet (which names every verdict's colour)."""
    return page.replace(STYLE, "")


def data_rows(page: str) -> list[list[object]]:
    match = re.search(r'<script type="application/json" id="agentv-gate-data">(.*?)</script>', page, re.DOTALL)
    assert match
    return json.loads(match.group(1))["rows"]


@pytest.mark.parametrize(("rows", "word"), [
    ([case_result("a"), case_result("b")], "PASSED"),
    ([case_result("a"), case_result("b", "error", error="judge exited 1")], "FAILED"),
    ([case_result("a"), case_result("b", "fail")], "FAILED"),
    ([case_result("b", "error", error="timeout")], "FAILED"),
    ([], "FAILED"),
])
def test_the_verdict_line_says_passed_only_when_every_case_passed(rows: list, word: str) -> None:
    title, totals = headline(build_html(rows))
    assert title == word and totals.startswith(f"{word} agentv-gate {word}: ")
    assert ("PASSED" in words(build_html(rows))) is (word == "PASSED")


def test_a_run_cut_short_says_interrupted_even_when_every_finished_case_passed() -> None:
    title, totals = headline(build_html([case_result("a")], planned=2))
    assert title == "INTERRUPTED" and "1 not run (interrupted)" in totals


def test_the_cases_that_did_not_pass_come_first_errors_before_failures() -> None:
    """By verdict first, whatever the ids, files and lines say (each would sort the other way)."""
    rows = [case_result("a-pass", line=1), case_result("b-fail", "fail", line=2),
            case_result("c-error", "error", error="x", line=3)]
    assert [r[1] for r in data_rows(build_html(rows))] == ["c-error", "b-fail", "a-pass"]


def test_a_page_that_cannot_be_written_is_a_report_error_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("a file, not a folder")
    with pytest.raises(ReportWriteError, match="cannot write HTML report to .*taken/report.html"):
        write_html([case_result("c")], tmp_path / "taken" / "report.html")


def test_a_passed_case_shows_its_reasoning_and_misses_as_a_failed_one_does() -> None:
    """A reviewer reads why a case passed too (a 0.967 is explained by its misses), not only failures."""
    rows = [case_result("p", reasoning="fine", misses=["m"]), case_result("f", "fail", reasoning="why", misses=["n"])]
    by_id = {r[1]: r for r in data_rows(build_html(rows))}
    assert (by_id["p"][9], by_id["p"][10]) == ("fine", ["m"])
    assert (by_id["f"][9], by_id["f"][10]) == ("why", ["n"])


@pytest.mark.parametrize(("count", "shown", "note"), [(29, 29, False), (30, 30, False), (31, 31, True)])
def test_the_first_30_misses_are_listed_then_the_rest_counted(count: int, shown: int, note: bool) -> None:
    misses = [f"miss {n}" for n in range(count)]
    listed = data_rows(build_html([case_result("f", "fail", misses=misses)]))[0][10]
    assert len(listed) == shown
    assert listed[0] == "miss 0" and listed[min(count, 30) - 1] == f"miss {min(count, 30) - 1}"  # the first ones
    assert listed[-1].startswith("… and 1 more misses") is note


def test_the_verdict_filter_counts_the_cases_that_did_not_pass() -> None:
    page = build_html([case_result("p"), case_result("f", "fail"), case_result("g", "fail"),
                       case_result("e", "error", error="x")])
    assert '<option value="not-passed">not passed (3)</option>' in page
    assert '<option value="all">all (4)</option>' in page and '<option value="error">error (1)</option>' in page


@pytest.mark.parametrize(("line", "where"), [(0, "evals/a.yaml"), (1, "evals/a.yaml:1"), (12, "evals/a.yaml:12")])
def test_the_eval_file_column_has_the_line_when_there_is_one(line: int, where: str) -> None:
    assert data_rows(build_html([case_result("c", line=line)]))[0][2] == where


@pytest.mark.parametrize(("field", "limit", "index"), [("candidate_answer", 4000, 11), ("reasoning", 4000, 9),
                                                       ("error", 4000, 8)])
def test_long_texts_are_kept_whole_at_their_cap_and_cut_past_it(field: str, limit: int, index: int) -> None:
    whole = data_rows(build_html([case_result("f", "error", **{field: "x" * limit})]))[0][index]
    cut = data_rows(build_html([case_result("f", "error", **{field: "x" * (limit + 1)})]))[0][index]
    assert whole == "x" * limit
    assert cut != "x" * (limit + 1) and len(cut) <= limit + 40


def test_a_miss_is_cut_at_its_own_cap() -> None:
    listed = data_rows(build_html([case_result("f", "fail", misses=["y" * 500, "z" * 501])]))
    assert listed[0][10][0] == "y" * 500 and listed[0][10][1] != "z" * 501


def test_a_score_that_is_not_a_number_is_written_as_zero_and_the_row_keeps_its_verdict() -> None:
    rows = data_rows(build_html([case_result("n", "error", score=float("nan"), error="bad score")]))
    assert rows[0][0] == "error" and rows[0][4] == 0.0


def test_a_run_with_an_errored_case_writes_a_page_that_says_failed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "targets:\n  - name: default\n    provider: mock\n    response: ok\n"
                               "  - name: broken\n    provider: cli\n    command_template: 'sh -c \"exit 3\"'\n"
                               "    timeout_seconds: 10\n")
    write(repo / "evals/s.eval.yaml", """
        tests:
          - {id: fine, input: Hi, assert: [{type: contains, value: ok}]}
          - {id: broken, input: Hi, target: broken, assert: [{type: contains, value: ok}]}
    """)
    ran = run_cli("run", "evals", cwd=repo)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    page = (repo / ".agentv-gate/report.html").read_text(encoding="utf-8")
    assert headline(page)[0] == "FAILED" and "PASSED" not in words(page)
    assert "<li>errors: <strong>1</strong></li>" in page


@pytest.mark.parametrize(("count", "title"), [(0, "0 cases"), (1, "1 case"), (2, "2 cases")])
def test_the_title_counts_cases_in_words(count: int, title: str) -> None:
    page = build_html([case_result(f"c{n}") for n in range(count)])
    assert f": {title}</title>" in page


def test_the_time_column_is_seconds_to_two_decimals_and_the_first_200_rows_are_drawn_at_once() -> None:
    page = build_html([case_result("c", duration_ms=1234)])
    assert data_rows(page)[0][6] == 1.23
    assert data_rows(build_html([case_result("c", duration_ms=100_000)]))[0][6] == 100.0
    match = re.search(r'<script type="application/json" id="agentv-gate-data">(.*?)</script>', page, re.DOTALL)
    assert match and json.loads(match.group(1))["page"] == 200


@pytest.mark.parametrize("score", [float("inf"), float("-inf"), float("nan")])
def test_a_score_that_is_not_finite_still_writes_a_page(score: float) -> None:
    rows = data_rows(build_html([case_result("n", "error", score=score, threshold=score, error="bad score")]))
    assert rows[0][4] == 0.0 and rows[0][5] == 0.0


def test_the_run_metadata_shows_a_hostile_target_name_and_commit_as_text() -> None:
    """A target's name (targets.yaml is in the pull request under review) and the commit reach the
    summary's plain HTML, which no script draws: each must be escaped there."""
    from agentv_gate.report.run_info import RunInfo

    hostile = "<img src=x onerror=alert(1)>"
    page = build_html([case_result("a", target=hostile)], info=RunInfo(commit=f"{hostile}&amp;", wall_seconds=1.0))
    meta = re.search(r'<dl class="meta" id="run">(.*?)</dl>', page)
    assert meta is not None
    assert "<img" not in page
    assert "<dt>Targets</dt><dd>&lt;img src=x onerror=alert(1)&gt;</dd>" in meta.group(1)
    assert "<dt>Commit</dt><dd>&lt;img src=x onerror=alert(1)&gt;&amp;amp;</dd>" in meta.group(1)


@pytest.mark.parametrize(("seconds", "shown"), [(59.9, "59.9 s"), (60.0, "1 min 00 s"), (60.4, "1 min 00 s"),
                                                (61.0, "1 min 01 s"), (3599.6, "60 min 00 s")])
def test_the_wall_time_turns_to_minutes_at_exactly_60_seconds(seconds: float, shown: str) -> None:
    from agentv_gate.report.html import run_metadata
    from agentv_gate.report.run_info import RunInfo

    assert dict(run_metadata([], RunInfo(wall_seconds=seconds)))["Wall time"] == shown
