"""The base comparison at its limits: `--max-drop` exactly met, AgentV's win/loss/tie line, and the
base file's name (in the gate line) kept as text in report.html."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentv_gate.models import CaseResult
from agentv_gate.report.baseline.compare import compare_results
from agentv_gate.report.baseline.gate import unknown_on_base
from agentv_gate.report.baseline.render import comparison_html, comparison_markdown, console_lines
from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.reports import case_result


@pytest.mark.parametrize(("base", "head", "max_drop", "status"), [
    (1.0, 0.75, 0.25, "passing"),      # dropped exactly the limit
    (1.0, 0.7499, 0.25, "regressed"),  # a hair more
    (1.0, 0.7501, 0.25, "passing"),    # a hair less
    (1.0, 0.7, 0.3, "passing"),        # 1.0 - 0.7 is 0.30000000000000004 in binary: still exactly 0.3 to a user
    (0.9, 0.7, 0.2, "passing"),
    (0.9, 0.69, 0.2, "regressed"),
    (0.9, 0.9, 0.0, "passing"),        # --max-drop 0: any fall regresses, none does not
    (0.9, 0.89, 0.0, "regressed"),
])
def test_max_drop_regresses_only_a_fall_beyond_the_limit(base: float, head: float, max_drop: float,
                                                        status: str) -> None:
    comparison = compare_results([case_result("c", score=base)], [case_result("c", score=head)], max_drop)
    assert [c.status for c in comparison.changes] == [status]
    if status == "regressed":
        assert f"dropped more than --max-drop {max_drop:g}" in comparison.changes[0].reason


def test_max_drop_leaves_a_case_that_rose_or_failed_on_both_alone() -> None:
    comparison = compare_results([case_result("up", score=0.8), case_result("low", "fail", score=0.5)],
                                 [case_result("up", score=1.0), case_result("low", "fail", score=0.0)], 0.1)
    assert [c.status for c in comparison.changes] == ["passing", "still failing"]


@pytest.mark.parametrize(("head", "outcome"), [(0.75, (0, 0, 1)), (0.76, (1, 0, 0)), (0.24, (0, 1, 0)),
                                               (0.25, (0, 0, 1))])
def test_a_delta_exactly_at_min_delta_is_a_tie(head: float, outcome: tuple[int, int, int]) -> None:
    """AgentV's compare: a win is a delta above the threshold, a loss one below minus it, else a tie."""
    comparison = compare_results([case_result("c", score=0.5)], [case_result("c", score=head)])
    got = comparison.outcome(0.25)
    assert (got.wins, got.losses, got.ties) == outcome
    assert got.mean_delta == pytest.approx(head - 0.5)


HOSTILE_BASE = "<img src=x onerror=alert(1)>&amp;.jsonl"


def test_the_gate_line_with_the_base_file_s_name_is_text_in_the_page() -> None:
    comparison = compare_results([case_result("c")], [case_result("c")])
    page = comparison_html(comparison, f"gate (--fail-on regression): passed, no case regressed against {HOSTILE_BASE}")
    assert "<img" not in page
    assert "against &lt;img src=x onerror=alert(1)&gt;&amp;amp;.jsonl</p>" in page
    markdown = comparison_markdown(comparison, f"against {HOSTILE_BASE}")
    assert "<img" not in markdown


def write_results(path: Path, rows: list[CaseResult]) -> Path:
    path.write_text("".join(json.dumps(r.to_json_row()) + "\n" for r in rows), encoding="utf-8")
    return path


def test_run_with_a_hostilely_named_base_writes_its_name_as_text_in_report_html(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    write(repo / "evals/s.eval.yaml", "tests:\n  - {id: c, input: Hi, assert: [{type: contains, value: ok}]}\n")
    base = write_results(repo / HOSTILE_BASE, [case_result("c", suite="evals/s.eval.yaml", file="evals/s.eval.yaml")])
    ran = run_cli("run", "evals", "--baseline", base.name, "--fail-on", "regression", cwd=repo)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    page = (repo / ".agentv-gate/report.html").read_text(encoding="utf-8")
    assert "no case regressed against &lt;img src=x onerror=alert(1)&gt;&amp;amp;.jsonl" in page
    assert "<img" not in page


def test_compare_of_a_drop_exactly_at_max_drop_exits_0(tmp_path: Path) -> None:
    base = write_results(tmp_path / "base.jsonl", [case_result("c", score=1.0, threshold=0.5),
                                                    case_result("d", score=0.9, threshold=0.5)])
    head = write_results(tmp_path / "head.jsonl", [case_result("c", score=0.7, threshold=0.5),
                                                    case_result("d", score=0.9, threshold=0.5)])
    proc = run_cli("compare", str(base), str(head), "--json", "--max-drop", "0.3", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["regressed"] == 0
    proc = run_cli("compare", str(base), str(head), "--json", "--max-drop", "0.29", cwd=tmp_path)
    assert proc.returncode == 1 and json.loads(proc.stdout)["regressed"] == 1


def test_a_case_run_once_on_each_side_pairs_even_when_its_target_was_renamed() -> None:
    comparison = compare_results([case_result("c", target="old")], [case_result("c", "fail", target="new")])
    assert [c.status for c in comparison.changes] == ["regressed"]
    assert comparison.labels() == {("evals/a.yaml", "c", "new"): "regressed"}


def test_nothing_in_common_is_said_and_scores_nothing() -> None:
    comparison = compare_results([case_result("gone")], [case_result("new")])
    assert [c.status for c in comparison.changes] == ["new", "removed"]
    assert comparison.describe() == "against the base: 1 new, 1 removed"
    assert compare_results([], []).describe() == "against the base: no case in common"
    outcome = comparison.outcome()
    assert (outcome.wins, outcome.losses, outcome.ties, outcome.mean_delta) == (0, 0, 0, 0.0)


@pytest.mark.parametrize(("line", "where"), [(0, "(evals/a.yaml)"), (1, "(evals/a.yaml:1)")])
def test_the_console_names_the_line_when_the_row_has_one(line: int, where: str) -> None:
    comparison = compare_results([case_result("c", line=line)], [case_result("c", "fail", line=line)])
    assert console_lines(comparison)[0].startswith(f"REGRESSED: c {where} — passed on base (1.000), fails now")


@pytest.mark.parametrize(("count", "note"), [(200, False), (201, True)])
def test_the_comparison_tables_list_200_changed_cases_then_count_the_rest(count: int, note: bool) -> None:
    base = [case_result(f"c{n:03}") for n in range(count)] + [case_result("steady")]
    head = [case_result(f"c{n:03}", "fail") for n in range(count)] + [case_result("steady")]
    comparison = compare_results(base, head)
    markdown, page = comparison_markdown(comparison, "gate"), comparison_html(comparison, "gate")
    assert markdown.count("| regressed |") == page.count("<tr><td>regressed</td>") == 200
    assert ("1 more changed case(s) not listed" in markdown) is note
    assert ("<p>1 more changed case(s) not listed.</p>" in page) is note
    assert ("more changed case(s)" in markdown) is note and ("more changed case(s)" in page) is note
    assert "steady" not in markdown and "steady" not in page  # still passing: never listed


def test_the_tables_list_regressions_first_and_say_wins_and_losses_when_asked() -> None:
    base = [case_result("a-fixed", "fail", score=0.2), case_result("b-new-base-only"), case_result("z-regressed")]
    head = [case_result("a-fixed", score=0.9), case_result("z-regressed", "fail", score=0.4), case_result("m-new")]
    comparison = compare_results(base, head)
    page = comparison_html(comparison, "gate", min_delta=0.1)
    order = [page.index(f"<td>{case_id}</td>") for case_id in ("z-regressed", "a-fixed", "m-new", "b-new-base-only")]
    assert order == sorted(order)
    assert "<p>1 wins, 1 losses, 0 ties (a score change beyond 0.1); mean delta +0.050</p>" in page
    assert "<td>+0.700</td>" in page and "<td>0.200 fail</td><td>0.900 pass</td>" in page
    markdown = comparison_markdown(comparison, "gate", min_delta=0.1)
    assert "1 wins, 1 losses, 0 ties (a score change beyond 0.1); mean delta +0.050" in markdown
    assert "wins" not in comparison_markdown(comparison, "gate") and "wins" not in comparison_html(comparison, "gate")


def test_the_tables_keep_the_first_200_changed_cases_in_order() -> None:
    base = [case_result(f"c{n:03}") for n in range(201)]
    comparison = compare_results(base, [case_result(f"c{n:03}", "fail") for n in range(201)])
    for text in (comparison_markdown(comparison, "gate"), comparison_html(comparison, "gate")):
        assert "c000" in text and "c199" in text and "c200" not in text


@pytest.mark.parametrize(("chars", "whole"), [(1000, True), (1001, False)])
def test_the_job_summary_keeps_a_gate_line_of_1000_characters_whole(chars: int, whole: bool) -> None:
    comparison = compare_results([case_result("c")], [case_result("c")])
    assert ("g" * chars in comparison_markdown(comparison, "g" * chars)) is whole


def test_the_tables_name_a_row_s_line_only_when_it_has_one_and_json_deltas_keep_six_decimals() -> None:
    from agentv_gate.report.baseline.render import comparison_json

    comparison = compare_results([case_result("c", line=0, score=0.9)], [case_result("c", "fail", line=0, score=0.9 - 1 / 3)])
    assert "| evals/a.yaml |" in comparison_markdown(comparison, "gate")
    assert "<td>evals/a.yaml</td>" in comparison_html(comparison, "gate")
    assert comparison_json(comparison, 0.1)["cases"][0]["delta"] == -0.333333


def test_by_default_a_change_within_a_tenth_is_a_tie() -> None:
    """AgentV's `compare --threshold` default, 0.1."""
    small = compare_results([case_result("c", score=0.5)], [case_result("c", score=0.55)]).outcome()
    large = compare_results([case_result("c", score=0.5)], [case_result("c", score=0.75)]).outcome()
    assert (small.wins, small.ties) == (0, 1) and (large.wins, large.ties) == (1, 0)


def test_a_target_matrix_on_the_base_alone_still_pairs_each_row_with_its_own_target() -> None:
    """The base ran the case on two targets, the head on one: the head's row is paired with the same
    target's base row (not whichever came last), and the other target's row is removed."""
    base = [case_result("c", target="gpt"), case_result("c", "fail", target="claude")]
    head = [case_result("c", target="gpt")]
    changes = compare_results(base, head).changes
    assert [(c.status, c.row.target) for c in changes] == [("passing", "gpt"), ("removed", "claude")]
    flipped = compare_results(head, base).changes  # and the matrix on the head alone
    assert [(c.status, c.row.target) for c in flipped] == [("passing", "gpt"), ("new", "claude")]


@pytest.mark.parametrize(("code", "unjudged"), [
    ("interrupted", True), ("max_failures", True), ("missing_env", True), ("not_recorded", True),
    ("budget_exceeded", True), ("error_threshold_exceeded", True),
    ("dependency_failed", False),  # main's dependency failed: the head runs it the same way, main's state
])
def test_a_base_row_that_judged_nothing_holds_the_gate_to_the_head_s_own_verdict(code: str, unjudged: bool) -> None:
    base = [case_result("a"), case_result("b", "error", failure_reason_code=code)]
    judged_fail = compare_results(base, [case_result("a"), case_result("b", "fail")])
    assert [c.row.eval_id for c in unknown_on_base(judged_fail)] == (["b"] if unjudged else [])
    # the head refused it too (its suite's error again), passed it, or quarantined its failure: nothing to hold
    for head in (case_result("b", "error", failure_reason_code=code), case_result("b"),
                 case_result("b", "fail", quarantined="known flaky")):
        assert unknown_on_base(compare_results(base, [case_result("a"), head])) == []


def test_a_renamed_case_the_base_never_judged_is_held_under_its_old_name() -> None:
    base = [case_result("a"), case_result("b", "error", failure_reason_code="max_failures", content_digest="d1")]
    head = [case_result("a"), case_result("b-renamed", "fail", content_digest="d1")]
    comparison = compare_results(base, head)
    assert [c.row.eval_id for c in unknown_on_base(comparison)] == ["b-renamed"]


def test_a_survivor_of_agreeing_removed_cases_is_held_to_the_best_of_them() -> None:
    """Two removed cases of one content both passed, at 1.0 and 0.85; the renamed survivor passes at 0.9. Held to
    the best (the strictest base), it fell 0.1, past `--max-drop 0.05`; against the other it would have risen."""
    base = [case_result("a", score=1.0, content_digest="d"), case_result("b", score=0.85, content_digest="d")]
    head = [case_result("a-renamed", score=0.9, content_digest="d")]
    changes = compare_results(base, head, max_drop=0.05).changes
    assert [(c.row.eval_id, c.status) for c in changes] == [("a-renamed", "regressed"), ("b", "removed")]
