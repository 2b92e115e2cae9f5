"""GitHub reporting, exact text: annotation messages and lines, Markdown cells and their limits,
the job summary (rows, checks, totals, size budget, traffic, file links) and the step outputs."""

from __future__ import annotations

import io
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from agentv_gate.base.problems import Problem
from agentv_gate.errors import ReportWriteError
from agentv_gate.models import CaseResult
from agentv_gate.report import Summary, TargetTraffic, summarise
from agentv_gate.report.github import (
    annotation_line,
    annotation_lines,
    annotation_message,
    md_cell,
    output_values,
    problem_annotation,
    summary_markdown,
    totals_line,
    workspace_path,
    write_github_reports,
)
from agentv_gate.report.rows import ReportRow
from tests.helpers.reports import case_result

case = partial(case_result, suite="evals/a.yaml", file="evals/a.yaml")
BIG = 10**9
"""A summary budget nothing reaches."""


# ---------------------------------------------------------------- annotation message and line


def test_annotation_message_lists_ten_misses_then_counts_the_rest() -> None:
    misses = [f"m{i}" for i in range(13)]
    msg = annotation_message(case("c1", "fail", score=0.25, misses=misses, reasoning="too short"))
    assert msg == ("c1 scored 0.250, below the threshold 0.800.\nMisses:\n"
                   + "".join(f"- m{i}\n" for i in range(10)) + "- … and 3 more\nReasoning: too short")


@pytest.mark.parametrize("count", [9, 10])
def test_annotation_message_with_up_to_ten_misses_lists_them_all(count: int) -> None:
    msg = annotation_message(case("c1", "fail", misses=[f"m{i}" for i in range(count)]))
    assert msg.splitlines()[2:] == [f"- m{i}" for i in range(count)]


def test_annotation_message_of_an_error_with_and_without_target() -> None:
    r = case("c1", "error", error=None, target="gpt")
    assert annotation_message(r) == "c1 could not be scored: unknown error"
    assert annotation_message(r, with_target=True) == "c1 [gpt] could not be scored: unknown error"
    # a verdict sorting before "error" is still a failure, not an error
    assert annotation_message(case("c2", "fail")).startswith("c2 scored 0.000, below")


@pytest.mark.parametrize(("extra", "cut"), [(0, False), (1, True)])
def test_annotation_message_is_cut_at_4000_characters(extra: int, cut: bool) -> None:
    head = "c1 scored 0.000, below the threshold 0.800.\nReasoning: "
    reasoning = "r" * (4000 - len(head) + extra)
    msg = annotation_message(case("c1", "fail", reasoning=reasoning))
    assert msg == (head + reasoning)[:4000] + ("… [truncated: 1 more characters]" if cut else "")


def test_exact_annotation_lines_for_failure_error_warning_and_no_line() -> None:
    fail = case("c1", "fail", line=7, score=0.5)
    assert annotation_line(fail) == ("::error file=evals/a.yaml,line=7,title=agentv-gate%3A c1 failed::"
                                     "c1 scored 0.500, below the threshold 0.800.")
    err = case("c2", "error", line=0, error="boom", target="t1")
    assert annotation_line(err, label="regressed", level="warning") == (
        "::warning file=evals/a.yaml,title=agentv-gate%3A c2 error (regressed)::c2 could not be scored: boom")
    assert annotation_line(case("c3", "fail", line=-1)).startswith("::error file=evals/a.yaml,title=")
    assert annotation_line(err, with_target=True).startswith(
        "::error file=evals/a.yaml,title=agentv-gate%3A c2 [t1] error::c2 [t1] could not")


@pytest.mark.parametrize(("length", "cut"), [(200, False), (201, True)])
def test_annotation_title_keeps_200_characters_of_the_case(length: int, cut: bool) -> None:
    eval_id = "c" * length
    line = annotation_line(case(eval_id, "fail", line=1))
    title = line.split("title=", 1)[1].split("::", 1)[0]
    expected = "c" * 200 + ("… [truncated%3A 1 more characters]" if cut else "")
    assert title == f"agentv-gate%3A {expected} failed"


def test_annotation_lines_sort_label_and_warn() -> None:
    results = [case("b", "fail", line=5, target="t"), case("a", "error", line=5, target="t"),
               case("z", "pass", line=1, target="t"), case("y", "fail", line=2, suite="evals/0.yaml", target="t")]
    lines = annotation_lines(results, labels={("evals/a.yaml", "b", "t"): "still failing"},
                             warn_only={"still failing"})
    assert [ln.split("title=")[1].split("::")[0] for ln in lines] == [
        "agentv-gate%3A y failed", "agentv-gate%3A a error", "agentv-gate%3A b failed (still failing)"]
    assert [ln.split(" ")[0] for ln in lines] == ["::error", "::error", "::warning"]


@pytest.mark.parametrize(("bad", "limit", "shown", "note"), [
    (3, 3, 3, None),
    (4, 3, 2, "2 more failing or erroring cases"),
    (1, 0, 0, "1 more failing or erroring case not"),
    (2, 1, 0, "2 more failing or erroring cases"),
    (2, 0, 0, "2 more failing or erroring cases"),
])
def test_annotation_cap_ends_with_the_count_of_what_was_cut(bad: int, limit: int, shown: int,
                                                            note: str | None) -> None:
    results = [case(f"c{i}", "fail", line=i + 1) for i in range(bad)]
    lines = annotation_lines(results, limit=limit)
    assert [ln for ln in lines if "title=agentv-gate%3A c" in ln] == lines[:shown]
    assert len(lines) == shown + (1 if note else 0)
    if note:
        assert lines[-1].startswith(f"::error title=agentv-gate::{note}")
        assert f"(GitHub shows {limit} error annotations per step)" in lines[-1]


# ---------------------------------------------------------------- Markdown cells


@pytest.mark.parametrize(("length", "cut"), [(300, False), (301, True)])
def test_md_cell_keeps_300_characters(length: int, cut: bool) -> None:
    assert md_cell("a" * length) == "a" * 300 + (r"… \[truncated: 1 more characters\]" if cut else "")


# ---------------------------------------------------------------- job summary


def checked(result: CaseResult, *checks: str) -> ReportRow:
    """The report row of a failing case with rubric check lines (`name: ✓ [..]` met, `✗` not met)."""
    return replace(ReportRow.of(result), checks=checks)


def _pass_rows(md: str) -> list[str]:
    return [ln for ln in md.splitlines() if ln.startswith("| ✅ pass")]


def test_exact_summary_of_a_failure_an_error_a_pass_checks_traffic_and_files() -> None:
    results = [
        checked(case("f1", "fail", line=3, score=0.5, misses=[f"m{i}" for i in range(7)]),
                "c1: ✓ [x]", "c2: ✗ [y]", "c3: ✓ [z]"),
        case("e1", "error", line=0, error=None),
        case("r1", "fail", line=4, reasoning="why not"),
        case("p1", line=1),
    ]
    md = summary_markdown(results, results_path="out/r.jsonl", junit_path="out/j.xml", report_path="out/h.html",
                          traffic=[TargetTraffic("t1", 3, 1, 2.25)])
    assert md == (
        "## agentv-gate results\n\n"
        "❌ **1 passed, 2 failed, 1 error** of 4 cases · pass rate 25.0%\n\n"
        "| Verdict | Case | Where | Score | Threshold | Misses / error |\n"
        "| --- | --- | --- | ---: | ---: | --- |\n"
        "| ⚠️ error | e1 | evals/a.yaml | 0.000 | 0.800 | error: unknown error |\n"
        "| ❌ fail | f1 | evals/a.yaml:3 | 0.500 | 0.800 | m0<br>m1<br>m2<br>m3<br>m4<br>… and 2 more |\n"
        "| ❌ fail | r1 | evals/a.yaml:4 | 0.000 | 0.800 | why not |\n"
        "\n#### Rubric checks\n\n"
        "<details><summary>f1 (evals/a.yaml:3): 2 of 3 checks met</summary>\n\n"
        "- c1: ✓ \\[x\\]\n- c2: ✗ \\[y\\]\n- c3: ✓ \\[z\\]\n\n</details>\n\n"
        "<details><summary>1 passed case</summary>\n\n"
        "| Verdict | Case | Where | Score | Threshold |\n| --- | --- | --- | ---: | ---: |\n"
        "| ✅ pass | p1 | evals/a.yaml:1 | 1.000 | 0.800 |\n"
        "\n</details>\n\n"
        "| Target | Calls | Answered 429 | Waiting for its limits |\n| --- | ---: | ---: | ---: |\n"
        "| t1 | 3 | 1 | 2.2 s |\n\n"
        "JUnit: out/j.xml · results: out/r.jsonl · report: out/h.html\n"
    )


def test_summary_without_failures_or_files_has_only_the_passes() -> None:
    md = summary_markdown([case("p1", line=1, target="a"), case("p2", line=2, target="b")])
    assert md == (
        "## agentv-gate results\n\n✅ **2 passed, 0 failed, 0 errors** of 2 cases · pass rate 100.0%\n\n"
        "<details><summary>2 passed cases</summary>\n\n"
        "| Verdict | Case | Where | Score | Threshold |\n| --- | --- | --- | ---: | ---: |\n"
        "| ✅ pass | p1 \\[a\\] | evals/a.yaml:1 | 1.000 | 0.800 |\n"
        "| ✅ pass | p2 \\[b\\] | evals/a.yaml:2 | 1.000 | 0.800 |\n"
        "\n</details>\n\n"
    )


@pytest.mark.parametrize(("count", "more"), [(5, None), (6, "… and 1 more")])
def test_summary_cell_lists_five_misses(count: int, more: str | None) -> None:
    md = summary_markdown([case("f", "fail", misses=[f"m{i}" for i in range(count)])])
    cell = md.split(" | 0.800 | ", 1)[1].split(" |\n", 1)[0]
    assert cell == "<br>".join([f"m{i}" for i in range(5)] + ([more] if more else []))
    assert "Rubric checks" not in md  # no failure has checks: no heading


@pytest.mark.parametrize(("length", "cut"), [(200, False), (201, True)])
def test_summary_paths_keep_200_characters(length: int, cut: bool) -> None:
    path = "p" * (length - 5) + ".yaml"
    shown = path[:200] + (r"… \[truncated: 1 more characters\]" if cut else "")
    md = summary_markdown([checked(case("f", "fail", line=0, suite=path, file=path), "k: ✓ [x]"),
                           case("g", "pass", line=0, suite=path, file=path)],
                          results_path=path, junit_path=path, report_path=path,
                          traffic=[TargetTraffic(path, 1, 0, 0.0)])
    assert f"| ❌ fail | f | {shown} | 0.000 |" in md
    assert f"| ✅ pass | g | {shown} | 1.000 |" in md
    assert f"<details><summary>f ({shown}): 1 of 1 checks met</summary>" in md
    assert f"| {shown} | 1 | 0 | 0.0 s |" in md
    assert f"JUnit: {shown} · results: {shown} · report: {shown}\n" in md
    cut_md = summary_markdown([case(f"x{i}", "fail") for i in range(3)], results_path=path, budget_bytes=700)
    assert f"every case is in {shown}._" in cut_md


@pytest.mark.parametrize(("summary", "line"), [
    (Summary(1, 1, 0, 0, 1.0), "✅ **1 passed, 0 failed, 0 errors** of 1 case · pass rate 100.0%"),
    (Summary(0, 0, 0, 0, 0.0), "❌ **0 passed, 0 failed, 0 errors** of 0 cases · pass rate 0.0%"),
    (Summary(3, 1, 1, 1, 1 / 3), "❌ **1 passed, 1 failed, 1 error** of 3 cases · pass rate 33.3%"),
    (Summary(2, 0, 0, 2, 0.0), "❌ **0 passed, 0 failed, 2 errors** of 2 cases · pass rate 0.0%"),
    (Summary(2, 2, 0, 0, 1.0, not_run=1),
     "⚠️ **2 passed, 0 failed, 0 errors** of 2 cases · pass rate 100.0% · **interrupted: 1 not run**"),
])
def test_totals_line(summary: Summary, line: str) -> None:
    assert totals_line(summary) == line


def _used(md: str) -> int:
    """Bytes the budget counts: all but the closing newline after the table."""
    return len(md.encode()) - 1


@pytest.mark.parametrize(("slack", "left_out"), [(0, 0), (-1, 1)])
def test_summary_budget_keeps_600_bytes_in_reserve(slack: int, left_out: int) -> None:
    results = [case("f1", "fail", line=1), case("f2", "fail", line=2)]
    budget = _used(summary_markdown(results, budget_bytes=BIG)) + 600 + slack
    md = summary_markdown(results, budget_bytes=budget)
    assert ("| ❌ fail | f2 |" in md) == (left_out == 0)
    assert ("_1 more row left out to keep this summary under GitHub's size limit; "
            "every case is in the results JSONL._") in md or left_out == 0


@pytest.mark.parametrize(("pad", "left_out"), [(0, 0), (1, 1)])
def test_default_summary_budget_is_512_kib(pad: int, left_out: int) -> None:
    def rows(n: int) -> list[CaseResult]:
        return [case(f"c{i:05}", "fail", line=1) for i in range(n)]

    def room(n: int) -> int:  # bytes left under 512 KiB less the reserve with n rows
        return 512 * 1024 - 600 - _used(summary_markdown(rows(n), budget_bytes=BIG))

    row_size = room(2) - room(3)
    n = 3 + room(3) // row_size
    while room(n) < 0:
        n -= 1
    results = rows(n)
    left = room(n)
    assert 0 <= left < 2 * row_size < 200
    results[-1] = case(f"c{n - 1:05}{'x' * (left + pad)}", "fail", line=1)
    md = summary_markdown(results)
    assert ("more row left out" in md) == bool(left_out)
    assert md.count("| ❌ fail |") == n - left_out


def test_summary_over_budget_counts_rows_of_passes_left_out() -> None:
    bad = [case(f"f{i}", "fail", line=i) for i in range(3)]
    good = [case(f"p{i}", line=i) for i in range(5)]
    full = summary_markdown(bad + good, budget_bytes=BIG)
    # room for the failures, the passes' header and two passes: three passes left out
    cut_at = full.index("| ✅ pass | p2 |")
    md = summary_markdown(bad + good, budget_bytes=len(full[:cut_at].encode()) + 600)
    assert len(_pass_rows(md)) == 2
    assert "_3 more rows left out" in md
    # room for the failures only: the passes' header does not fit and all five are counted
    header_at = full.index("<details>")
    md = summary_markdown(bad + good, budget_bytes=len(full[:header_at].encode()) + 600)
    assert "<details>" not in md and "_5 more rows left out" in md
    # the first failure does not fit: every row is left out
    md = summary_markdown(bad + good, budget_bytes=len(full[:full.index("| ❌ fail | f0")].encode()) + 600)
    assert "| ❌" not in md and "_8 more rows left out" in md


def test_summary_checks_stop_at_the_first_that_does_not_fit() -> None:
    bad = [checked(case("f0", "fail", line=0), "k0: ✓ [x]"), checked(case("f1", "fail", line=1), "k" * 290),
           checked(case("f2", "fail", line=2), "k2: ✓ [x]")]
    full = summary_markdown(bad, budget_bytes=BIG)
    # room for f0's section and for f2's, not for f1's: nothing after the first one that does not fit
    md = summary_markdown(bad, budget_bytes=len(full[:full.index("<details><summary>f1")].encode()) + 600 + 120)
    assert "<summary>f0 (evals/a.yaml)" in md and "<summary>f1 " not in md and "<summary>f2 " not in md
    no_heading = summary_markdown(bad, budget_bytes=len(full[:full.index("#### Rubric")].encode()) + 600)
    assert "Rubric checks" not in no_heading and "<summary>f0 " not in no_heading


def test_summary_shows_no_line_for_a_case_without_one() -> None:
    md = summary_markdown([checked(case("f", "fail", line=-1), "k: ✓ [x]"), checked(case("g", "fail", line=1), "k: ✗")])
    assert "| ❌ fail | f | evals/a.yaml | 0.000 |" in md and "| ❌ fail | g | evals/a.yaml:1 | 0.000 |" in md
    assert "<details><summary>f (evals/a.yaml): 1 of 1 checks met</summary>" in md
    assert "<details><summary>g (evals/a.yaml:1): 0 of 1 checks met</summary>" in md


# ---------------------------------------------------------------- configuration problems


def _problem(**fields: Any) -> Problem:
    defaults: dict[str, Any] = {"file": Path("evals/a.yaml"), "line": 3, "message": "bad key"}
    return Problem(**{**defaults, **fields})


@pytest.mark.parametrize(("fields", "line"), [
    ({"expected": "a number"}, "::error file=evals/a.yaml,line=3,title=agentv-gate%3A configuration error::"
                               "bad key (expected a number)"),
    ({"severity": "warning", "line": 1}, "::warning file=evals/a.yaml,line=1,"
                                         "title=agentv-gate%3A configuration warning::bad key"),
    ({"line": 0}, "::error file=evals/a.yaml,title=agentv-gate%3A configuration error::bad key"),
    ({"line": -1}, "::error file=evals/a.yaml,title=agentv-gate%3A configuration error::bad key"),
])
def test_exact_problem_annotation(fields: dict[str, Any], line: str) -> None:
    assert problem_annotation(_problem(**fields)) == line


# ---------------------------------------------------------------- step outputs


def test_workspace_path_relative_inside_absolute_outside(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "out").mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    assert workspace_path(None, real) == "" and workspace_path("", real) == ""
    assert workspace_path("out/j.xml") == "out/j.xml"
    assert workspace_path(real / "out" / "j.xml", real) == "out/j.xml"
    assert workspace_path(real / "out" / "j.xml", link) == "out/j.xml"  # the checkout through a symlink
    outside = tmp_path / "elsewhere" / "j.xml"
    assert workspace_path(outside, real) == str(outside)


def test_output_values_are_exact() -> None:
    summary = summarise([case("a"), case("b", "fail"), case("c", "error")])
    assert output_values(summary, "j.xml", None, "") == {
        "pass-rate": "0.3333", "passed": "1", "failed": "1", "errors": "1", "quarantined": "0", "advisory": "0",
        "total": "3", "not-run": "0",
        "junit-path": "j.xml", "results-path": "", "report-path": ""}


def test_reports_link_the_files_relative_to_the_workspace_and_raise_on_an_unwritable_output(
        tmp_path: Path) -> None:
    summary_file = tmp_path / "summary.md"
    env = {"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(tmp_path), "GITHUB_STEP_SUMMARY": str(summary_file),
           "GITHUB_OUTPUT": str(tmp_path)}  # a directory: the outputs cannot be written
    results: list[CaseResult] = [case("a")]
    with pytest.raises(ReportWriteError, match="step outputs"):
        write_github_reports(results, junit_path=tmp_path / "j.xml", results_path=tmp_path / "r.jsonl",
                             report_path=tmp_path / "h.html", env=env, stream=io.StringIO())
    assert summary_file.read_text(encoding="utf-8").endswith("JUnit: j.xml · results: r.jsonl · report: h.html\n")


def test_when_the_summary_and_the_outputs_both_fail_the_error_names_both(tmp_path: Path) -> None:
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(tmp_path), "GITHUB_OUTPUT": str(tmp_path)}
    with pytest.raises(ReportWriteError) as caught:
        write_github_reports([case("a")], env=env, stream=io.StringIO())
    message = str(caught.value)
    assert message.startswith("cannot write the job summary to ") and "; cannot write step outputs to " in message
