"""A results row's trial entries are checked as the row is: a score in 0..1 and finite, a verdict
that agrees with its score and the row's threshold, attempts numbered 1..N in order; a bad one is
a located error (exit 2 through `compare`), never read as a trial that passed or failed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.reports import case_result


def trials_row(case: str, trials: list[dict[str, object]]) -> str:
    row = case_result(case, score=1.0, threshold=0.5).to_json_row()
    row.update(trials=trials, aggregation={"strategy": "mean"})
    return json.dumps(row)


GOOD = [{"attempt": 1, "score": 1.0, "verdict": "pass"}, {"attempt": 2, "score": 1.0, "verdict": "pass"}]


@pytest.mark.parametrize(("trials", "message"), [
    ([{"attempt": 1, "score": 5, "verdict": "pass"}, GOOD[1]], "trial 1: score 5 is not in 0..1"),
    ([GOOD[0], {"attempt": 2, "score": -1, "verdict": "fail"}], "trial 2: score -1 is not in 0..1"),
    ([{"attempt": 1, "score": 1.0, "verdict": "fail"}, GOOD[1]],
     "trial 1: verdict fail with score 1 at threshold 0.5"),
    ([GOOD[0], {"attempt": 1, "score": 1.0, "verdict": "pass"}], "trial 2 is numbered attempt 1"),
    ([GOOD[0], {"attempt": 2, "score": float("nan"), "verdict": "pass"}], "trial 2: score nan is not a finite number"),
    ([GOOD[0], "pass"], "not a case result: trials.1: Input should be a valid dictionary"),
])
@pytest.mark.parametrize("side", ["base", "head"])
def test_a_bad_trial_entry_is_a_located_error(tmp_path: Path, trials: list[dict[str, object]], message: str,
                                             side: str) -> None:
    good = "\n".join(trials_row(c, GOOD) for c in ("a", "b")) + "\n"
    bad = trials_row("a", trials) + "\n" + trials_row("b", GOOD) + "\n"
    (tmp_path / "base.jsonl").write_text(bad if side == "base" else good)
    (tmp_path / "head.jsonl").write_text(bad if side == "head" else good)
    ran = run_cli("compare", "base.jsonl", "head.jsonl", cwd=tmp_path)
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert f"{side}.jsonl:1: {message}" in ran.stderr, ran.stderr


def test_good_trial_entries_read(tmp_path: Path) -> None:
    good = "\n".join(trials_row(c, GOOD) for c in ("a", "b")) + "\n"
    (tmp_path / "base.jsonl").write_text(good)
    (tmp_path / "head.jsonl").write_text(good)
    ran = run_cli("compare", "base.jsonl", "head.jsonl", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
