"""report/baseline/compare.py and render.py: how rows of two runs pair up, and that case text stays inert in
every report of the comparison."""

from __future__ import annotations

from agentv_gate.report.baseline.compare import compare_results
from agentv_gate.report.baseline.render import comparison_html, comparison_markdown, console_lines
from tests.helpers.github_runner import runner_commands
from tests.helpers.reports import case_result


def test_a_target_matrix_pairs_each_targets_row_with_the_same_target() -> None:
    base = [case_result("a", target="small"), case_result("a", "fail", target="large")]
    head = [case_result("a", "fail", target="small"), case_result("a", target="large")]
    status = {c.row.target: c.status for c in compare_results(base, head).changes}
    assert status == {"small": "regressed", "large": "fixed"}


def test_an_error_or_not_run_row_where_the_base_passed_is_a_regression() -> None:
    base = [case_result("a"), case_result("b")]
    head = [case_result("a", "error", error="target: timeout"),
            case_result("b", "error", error="not run: the run stopped after 1 failed or errored case(s)")]
    comparison = compare_results(base, head)
    assert [c.status for c in comparison.changes] == ["regressed", "regressed"]
    assert "errors now" in comparison.changes[0].reason


def test_hostile_case_ids_stay_text_in_console_summary_and_page() -> None:
    evil = "x ##[error]boom | <img src=x onerror=alert(1)> `code`\n::error::forged"
    comparison = compare_results([case_result(evil)], [case_result(evil, "fail")])
    assert runner_commands("\n".join(console_lines(comparison))) == []
    markdown = comparison_markdown(comparison, "gate")
    row = next(line for line in markdown.splitlines() if line.startswith("| regressed"))
    assert row.count(" | ") == 5  # the id's `|` did not add a cell
    assert "<img" not in markdown and "<img" not in comparison_html(comparison, "gate")
