"""`merge` trusts no row's verdict: it recomputes it, refuses duplicates and non-numbers, located.

A shard file is an artefact anyone in the workflow could have written (or a broken run left):
a row with score NaN, or 0.0 against threshold 0.5, that says `"verdict": "pass"` must not merge
as a pass, and the same case twice must not be counted twice.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.helpers.cli import run_cli
from tests.helpers.hostile import no_traceback
from tests.helpers.reports import read_rows


def row(eval_id: str, score: Any, verdict: str = "pass", threshold: float = 0.5, **extra: Any) -> str:
    data = {"eval_id": eval_id, "suite": "evals/a.eval.yaml", "file": "evals/a.eval.yaml", "line": 2,
            "target": "default", "score": score, "threshold": threshold, "verdict": verdict, **extra}
    return json.dumps(data) + "\n"


def test_merge_recomputes_verdicts_from_score_and_threshold(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text(row("low", 0.0) + row("high", 0.9, verdict="fail")
                                      + row("errored", 1.0, error="judge crashed"))
    proc = run_cli("merge", "a.jsonl", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    verdicts = {r["eval_id"]: r["verdict"] for r in read_rows(tmp_path / ".agentv-gate/results.jsonl")}
    assert verdicts == {"low": "fail", "high": "pass", "errored": "error"}


def test_merge_refuses_non_finite_scores_and_duplicates_with_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "nan.jsonl").write_text(row("ok", 1.0) + row("nan", float("nan")))
    proc = run_cli("merge", "nan.jsonl", cwd=tmp_path)
    assert proc.returncode == 2 and no_traceback(proc.stderr), proc.stderr
    assert "nan.jsonl:2:" in proc.stderr and "score" in proc.stderr

    (tmp_path / "a.jsonl").write_text(row("one", 1.0) + row("two", 1.0))
    (tmp_path / "b.jsonl").write_text(row("three", 1.0) + row("one", 1.0))
    proc = run_cli("merge", "a.jsonl", "b.jsonl", cwd=tmp_path)
    assert proc.returncode == 2 and no_traceback(proc.stderr), proc.stderr
    assert "b.jsonl:2:" in proc.stderr and "duplicate" in proc.stderr and "a.jsonl:1" in proc.stderr


def test_an_incomplete_merge_names_absent_shards_only_from_well_formed_labels(tmp_path: Path) -> None:
    """Rows that say how many cases there are but carry no usable `K/N` label: still refused, no shard named."""
    for name, label in (("unlabelled", {}), ("malformed", {"shard": "1/x"}), ("three-part", {"shard": "1/2/x"})):
        (tmp_path / f"{name}.jsonl").write_text(row("a", 1.0, shard_total=3, **label) + row("b", 1.0, shard_total=3, **label))
        proc = run_cli("merge", f"{name}.jsonl", cwd=tmp_path)
        assert proc.returncode == 2 and no_traceback(proc.stderr), proc.stderr
        assert "incomplete shard results: 1 of 3 case(s) have no result;" in proc.stderr, proc.stderr


def test_merge_warns_about_a_cut_last_line_and_merges_the_rest(tmp_path: Path) -> None:
    (tmp_path / "cut.jsonl").write_text(row("whole", 1.0) + row("cut", 0.0)[:25])
    proc = run_cli("merge", "cut.jsonl", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "agentv-gate: warning: cut.jsonl:2:" in proc.stderr
    assert [r["eval_id"] for r in read_rows(tmp_path / ".agentv-gate/results.jsonl")] == ["whole"]


def test_unfinished_runs_are_those_with_fewer_rows_than_they_set_out_to_write() -> None:
    from agentv_gate.report.jsonl import unfinished_runs
    from tests.helpers.reports import case_result

    def rows(run_id: str | None, planned: int | None, count: int) -> list[Any]:
        return [case_result(f"{run_id}-{i}", run_id=run_id, run_rows=planned) for i in range(count)]

    assert unfinished_runs(rows("a", 2, 2) + rows("b", 1, 1)) is None
    assert unfinished_runs(rows(None, None, 3) + rows("a", None, 1) + rows(None, 5, 1)) is None  # older rows say nothing
    assert unfinished_runs(rows("b", 3, 2) + rows("a", 2, 2) + rows("c", 4, 1)) == (
        "run b wrote 2 of its 3 row(s); run c wrote 1 of its 4 row(s) (a job killed before the end? "
        "`grep -l RUN_ID` finds its file)")
