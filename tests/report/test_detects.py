"""The pull-request comment's footer states what the gate can detect: its figures are the docs'
table of `bench/stats_bench.py`, so a re-measured table cannot leave the comment promising the old
ones."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentv_gate.report.baseline.render import DETECTS

DOCS = Path(__file__).resolve().parents[2] / "docs" / "pull-request-loop.md"
STEADY = ("all stable", "30% flaky, p 0.5–0.95", "3 cases p 0.05–0.5, the rest stable")
NOISY = ("judge flips 10% of verdicts", "judge flips 10%, one case at 30%")


def figures() -> dict[str, list[list[float]]]:
    """noise model -> [unchanged, one broken, 10 of 50] -> the shares at 3 and 5 trials a side."""
    text = DOCS.read_text(encoding="utf-8")
    start = text.index("| noise model | unchanged rerun (false alarms) |")
    rows: dict[str, list[list[float]]] = {}
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        model, *cells = [cell.strip() for cell in line.strip("|").split("|")]
        rows[model] = [[float(share) / 100 for share in re.findall(r"([\d.]+)%", cell.split("(")[0])]
                       for cell in cells]
    return rows


TRIALS = {3: 0, 5: 1}


@pytest.mark.parametrize("trials", sorted(DETECTS))
def test_the_comment_states_the_docs_figures(trials: int) -> None:
    table = figures()
    assert set(STEADY) | set(NOISY) <= set(table) and all(len(cell) == 2 for row in table.values() for cell in row)
    at = TRIALS[trials]
    stated = DETECTS[trials]
    assert stated.false_alarms == pytest.approx(max(row[0][at] for row in table.values()))
    assert stated.broken == pytest.approx(min(table[model][1][at] for model in STEADY))
    assert stated.broken_noisy_judge == pytest.approx(min(table[model][1][at] for model in NOISY))
    assert stated.broad == pytest.approx((min(row[2][at] for row in table.values()), table["all stable"][2][at]))
