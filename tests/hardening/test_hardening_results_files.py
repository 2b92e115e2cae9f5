"""Damaged results files never decide a verdict: `merge`, `compare` and `--baseline` refuse them, located.

A base file is an artefact restored from another job; a shard file is one a workflow uploaded.
Whatever is wrong with one (a complete but unreadable row, a row count short of what its run
wrote, a score no run can give, totals edited by hand, a line with no end) is exit 2 with the
file and line, never a case quietly read as "new" (which cannot regress) or a crash.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from agentv_gate.report.jsonl import MAX_ROW_BYTES
from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.hostile import no_traceback
from tests.helpers.reports import read_rows

SUITE = "tests:\n" + "".join(f"  - id: {name}\n    input: Say {name}\n    assertions:\n"
                             f"      - {{type: contains, value: {name}}}\n" for name in ("alpha", "beta"))


def answering(project: Path, response: str) -> None:
    make_repo(project, f"targets:\n  - name: default\n    provider: mock\n    response: {response}\n")


@pytest.fixture(scope="module")
def base_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Both cases pass on the base (base.jsonl); the change breaks beta, a regression. Run once:
    each test damages its own copy (`project`)."""
    root = make_repo(tmp_path_factory.mktemp("base") / "repo")
    write(root / "evals/suite.eval.yaml", SUITE)
    answering(root, "alpha beta")
    assert run_cli("run", "evals", cwd=root).returncode == 0
    shutil.copy(root / ".agentv-gate/results.jsonl", root / "base.jsonl")
    answering(root, "alpha only")
    return root


@pytest.fixture()
def project(tmp_path: Path, base_project: Path) -> Path:
    """A copy of `base_project` (a results file names no path of its repository)."""
    return Path(shutil.copytree(base_project, tmp_path / "repo", symlinks=True))


def gate(project: Path) -> Any:
    return run_cli("run", "evals", "--baseline", "base.jsonl", "--fail-on", "regression", cwd=project)


def rows_text(project: Path) -> list[str]:
    return (project / "base.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)


def test_a_readable_base_fails_the_regression(project: Path) -> None:
    """The path that ends normally: the same base, undamaged, catches beta."""
    proc = gate(project)
    assert proc.returncode == 1 and "REGRESSED: beta" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.parametrize("damage", ["huge-score", "cut-with-newline"])
def test_a_complete_but_unreadable_last_base_row_is_refused_at_its_line(project: Path, damage: str) -> None:
    """Ends in a newline, so no writer was cut off there: it is damage, and beta's base row is in it."""
    lines = rows_text(project)
    last = json.loads(lines[-1])
    if damage == "huge-score":
        bad = json.dumps(last).replace(f'"score": {json.dumps(last["score"])}', '"score": ' + "9" * 5000) + "\n"
        assert bad != json.dumps(last) + "\n"
    else:
        bad = lines[-1][:40] + "\n"
    (project / "base.jsonl").write_text("".join(lines[:-1]) + bad, encoding="utf-8")
    where = f"base.jsonl:{len(lines)}:"
    for proc in (gate(project), run_cli("compare", "base.jsonl", ".agentv-gate/results.jsonl", cwd=project),
                 run_cli("merge", "base.jsonl", "--output-dir", "merged", cwd=project)):
        assert proc.returncode == 2 and no_traceback(proc.stderr), proc.stdout + proc.stderr
        assert where in proc.stderr and "not a JSON results row" in proc.stderr, proc.stderr


def test_a_last_line_without_a_newline_is_still_a_cut_write(project: Path) -> None:
    lines = rows_text(project)
    (project / "base.jsonl").write_text("".join(lines[:-1]) + lines[-1][:40], encoding="utf-8")
    proc = run_cli("compare", "base.jsonl", ".agentv-gate/results.jsonl", cwd=project)
    assert proc.returncode in (0, 1) and f"base.jsonl:{len(lines)}: skipped a truncated last line" in proc.stderr


def test_a_base_holding_fewer_rows_than_its_run_wrote_is_refused(project: Path) -> None:
    """A base job killed outright: beta's row never written, so beta would read as "new", never regressed."""
    lines = rows_text(project)
    kept = [line for line in lines if json.loads(line)["eval_id"] != "beta"]
    assert len(kept) == 1 and json.loads(kept[0])["run_rows"] == 2
    (project / "base.jsonl").write_text("".join(kept), encoding="utf-8")
    proc = gate(project)
    assert proc.returncode == 2 and no_traceback(proc.stderr), proc.stdout + proc.stderr
    assert "--baseline base.jsonl is incomplete" in proc.stderr and "wrote 1 of its 2 row(s)" in proc.stderr


# ---------------------------------------------------------------- merge recomputes


def row(eval_id: str, score: Any, **extra: Any) -> str:
    data = {"eval_id": eval_id, "suite": "evals/a.eval.yaml", "file": "evals/a.eval.yaml", "line": 2,
            "target": "default", "score": score, "threshold": 0.5, "verdict": "pass", **extra}
    return json.dumps(data) + "\n"


@pytest.mark.parametrize("score", [5, -0.5, 1.0000001])
def test_merge_refuses_a_score_outside_zero_to_one_at_its_line(tmp_path: Path, score: float) -> None:
    (tmp_path / "a.jsonl").write_text(row("ok", 1.0) + row("odd", score))
    proc = run_cli("merge", "a.jsonl", cwd=tmp_path)
    assert proc.returncode == 2 and no_traceback(proc.stderr), proc.stderr
    assert "a.jsonl:2:" in proc.stderr and "score" in proc.stderr and "0..1" in proc.stderr, proc.stderr


def test_merge_scores_at_the_bounds_are_read(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text(row("top", 1) + row("bottom", 0.0))
    proc = run_cli("merge", "a.jsonl", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr  # bottom fails
    assert {r["eval_id"]: r["verdict"] for r in read_rows(tmp_path / ".agentv-gate/results.jsonl")} == {
        "top": "pass", "bottom": "fail"}


def test_merge_of_one_shard_whose_totals_were_lowered_by_hand_is_refused(tmp_path: Path) -> None:
    """Shard 1/2's rows say the whole run has 2 rows (it has 3): shard 2/2 is still absent."""
    shard = {"shard": "1/2", "shard_total": 2, "run_id": "r1", "run_rows": 2}
    (tmp_path / "s1.jsonl").write_text(row("alpha", 1.0, **shard) + row("gamma", 1.0, **shard))
    proc = run_cli("merge", "s1.jsonl", cwd=tmp_path)
    assert proc.returncode == 2 and no_traceback(proc.stderr), proc.stdout + proc.stderr
    assert "incomplete shard results" in proc.stderr and "shard(s) 2/2" in proc.stderr, proc.stderr
    two = {"shard": "2/2", "shard_total": 2, "run_id": "r2", "run_rows": 1}
    (tmp_path / "s2.jsonl").write_text(row("beta", 1.0, **two))
    proc = run_cli("merge", "s1.jsonl", "s2.jsonl", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # every shard there: the rows decide, 3 cases
    assert len(read_rows(tmp_path / ".agentv-gate/results.jsonl")) == 3


# ---------------------------------------------------------------- lines with no end


def test_results_readers_refuse_an_endless_line(project: Path) -> None:
    """/dev/zero is one line that never ends: read with a cap, not into memory until it runs out."""
    for argv in (("merge", "/dev/zero", "--output-dir", "merged"),
                 ("compare", "/dev/zero", ".agentv-gate/results.jsonl"),
                 ("compare", "base.jsonl", "/dev/zero"),
                 ("run", "evals", "--baseline", "/dev/zero")):
        proc = run_cli(*argv, cwd=project)
        assert proc.returncode == 2 and no_traceback(proc.stderr), (argv, proc.stderr)
        assert f"/dev/zero:1: not a results file (line over {MAX_ROW_BYTES} bytes)" in proc.stderr, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_a_long_row_under_the_cap_is_read(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text(row("long", 1.0, candidate_answer="x" * 3_000_000) + row("b", 1.0))
    proc = run_cli("merge", "a.jsonl", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert len(read_rows(tmp_path / ".agentv-gate/results.jsonl")[0]["candidate_answer"]) == 3_000_000
