"""The pull-request comment's footer states what the gate can detect: its figures are the docs'
table of `bench/stats_bench.py`, so a re-measured table cannot leave the comment promising the old
ones."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentv_gate.report.baseline.render import DETECTS, DETECTS_WITH_HISTORY, Detects

DOCS = Path(__file__).resolve().parents[2] / "docs" / "pull-request-loop.md"
STEADY = ("all stable", "30% flaky, p 0.5–0.95", "3 cases p 0.05–0.5, the rest stable")
NOISY = ("judge flips 10% of verdicts", "judge flips 10%, one case at 30%")


TABLES = {"without": "| noise model | unchanged rerun (false alarms) |",
          "with": "| noise model, `--history` of one earlier run | unchanged rerun (false alarms) |"}


def figures(table: str) -> dict[str, list[list[float]]]:
    """noise model -> [unchanged, one broken, 10 of 50] -> the shares at 3 and 5 trials a side, in the docs'
    table without or with history."""
    text = DOCS.read_text(encoding="utf-8")
    start = text.index(TABLES[table])
    rows: dict[str, list[list[float]]] = {}
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        model, *cells = [cell.strip() for cell in line.strip("|").split("|")]
        rows[model] = [[float(share) / 100 for share in re.findall(r"([\d.]+)%", cell.split("(")[0])]
                       for cell in cells]
    return rows


TRIALS = {3: 0, 5: 1}


STATED: dict[str, dict[int, Detects]] = {"without": DETECTS, "with": DETECTS_WITH_HISTORY}


@pytest.mark.parametrize("history", sorted(STATED))
@pytest.mark.parametrize("trials", sorted(TRIALS))
def test_the_comment_states_the_docs_figures(trials: int, history: str) -> None:
    table = figures(history)
    assert set(STEADY) | set(NOISY) <= set(table) and all(len(cell) == 2 for row in table.values() for cell in row)
    at = TRIALS[trials]
    stated = STATED[history][trials]
    assert stated.false_alarms == pytest.approx(max(row[0][at] for row in table.values()))
    assert stated.broken == pytest.approx(min(table[model][1][at] for model in STEADY))
    assert stated.broken_noisy_judge == pytest.approx(min(table[model][1][at] for model in NOISY))
    assert stated.broad == pytest.approx((min(row[2][at] for row in table.values()), table["all stable"][2][at]))


def test_the_footer_states_the_history_figures_when_every_case_had_history() -> None:
    from agentv_gate.report.baseline.compare import compare_results
    from agentv_gate.report.baseline.paired import SuiteTest, paired_test
    from agentv_gate.report.baseline.render import detection_line
    from tests.report.test_paired import row

    base = [row(f"c{i}", 3, 3, digest="d") for i in range(4)]
    comparison = compare_results(base, [row(f"c{i}", 3, 3, digest="d") for i in range(4)])
    for earlier, shown in (({}, DETECTS[3]), ({("evals/s.eval.yaml", f"c{i}"): (True,) * 3 for i in range(4)},
                                                DETECTS_WITH_HISTORY[3]),
                           ({("evals/s.eval.yaml", "c0"): (True,) * 3}, DETECTS[3])):  # not every case
        test = paired_test(comparison, earlier=earlier)
        assert isinstance(test, SuiteTest)
        line = detection_line(test)
        assert line is not None
        assert (", --history of an earlier run)" in line) is (shown is DETECTS_WITH_HISTORY[3])
        assert f"({shown.broken_noisy_judge:.1%} when the judge flips".replace(".0%", "%") in line
