"""Sharded CI end to end: N real `agentv-gate run --shard K/N` processes, then `agentv-gate merge`.

What must hold is that the merged report is the one a single run would have produced: every
case once, the same verdict, the same exit code, and the summary counting the whole.
"""

from __future__ import annotations

import json
import subprocess
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo
from tests.helpers.suites import PARIS_TARGETS as TARGETS


def suite(ids: list[str], failing: set[str]) -> str:
    rows = []
    for case_id in ids:
        word = "Berlin" if case_id in failing else "Paris"
        rows.append(f"  - id: {case_id}\n    input: question {case_id}\n    assertions:\n"
                    f"      - type: contains\n        value: {word}\n")
    return "tests:\n" + "".join(rows)


FULL = {"evals/geo.eval.yaml": ["g1", "g2", "g3", "g4", "g5"], "evals/more.eval.yaml": ["m1", "m2", "m3"]}


def project(root: Path, failing: set[str], layout: dict[str, list[str]] = FULL) -> list[tuple[str, str]]:
    """Eval files (two suites, 8 cases by default); returns every (suite, id) the run must report."""
    make_repo(root, TARGETS)
    for name, ids in layout.items():
        (root / name).write_text(suite(ids, failing))
    return sorted((name, case_id) for name, ids in layout.items() for case_id in ids)


def run_shards(root: Path, count: int, *extra: str) -> list[subprocess.CompletedProcess[str]]:
    """All shards at once, as a CI matrix would run them, each in its own output folder (each its own
    process, forked from the warm CLI)."""
    def shard(k: int) -> subprocess.CompletedProcess[str]:
        return run_cli("run", "evals", "--shard", f"{k}/{count}", "--output-dir", f"shard-{k}", "--quiet", *extra,
                       cwd=root, timeout=120)

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(shard, range(1, count + 1)))


def merge(root: Path, *files: str) -> subprocess.CompletedProcess[str]:
    return run_cli("merge", *files, "--output-dir", "merged", cwd=root, timeout=120)


def junit_outcomes(path: Path) -> list[tuple[str, str, str]]:
    """(classname, name, outcome) of every testcase."""
    out = []
    for case in ET.parse(path).getroot().iter("testcase"):
        outcome = "failure" if case.find("failure") is not None else "error" if case.find("error") is not None else "pass"
        out.append((case.get("classname", ""), case.get("name", ""), outcome))
    return out


def test_three_shards_merge_into_one_report_with_the_failure(tmp_path: Path) -> None:
    expected = project(tmp_path, failing={"g4"})
    shards = run_shards(tmp_path, 3)

    # Each shard gates only its own cases: the one holding g4 fails, the others pass.
    per_shard = [[json.loads(line) for line in (tmp_path / f"shard-{k}" / "results.jsonl").read_text().splitlines()]
                 for k in (1, 2, 3)]
    assert sorted(len(rows) for rows in per_shard) == [2, 3, 3]
    for k, (proc, rows) in enumerate(zip(shards, per_shard, strict=True), start=1):
        assert {row["shard"] for row in rows} == {f"{k}/3"}
        holds_failure = any(row["eval_id"] == "g4" for row in rows)
        assert proc.returncode == (1 if holds_failure else 0), proc.stderr
    seen = sorted((row["suite"], row["eval_id"]) for rows in per_shard for row in rows)
    assert seen == expected, "every case ran in exactly one shard"

    merged = merge(tmp_path, *(f"shard-{k}/results.jsonl" for k in (3, 1, 2)))
    assert merged.returncode == 1, merged.stderr
    assert "8 cases: 7 passed, 1 failed, 0 errors" in merged.stdout

    root = ET.parse(tmp_path / "merged" / "junit.xml").getroot()
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("8", "1", "0")
    cases = junit_outcomes(tmp_path / "merged" / "junit.xml")
    assert len(cases) == 8
    assert [c for c in cases if c[2] != "pass"] == [("geo.eval", "g4", "failure")]
    assert sorted((c[0], c[1]) for c in cases) == sorted(
        (name.rsplit("/", 1)[-1].removesuffix(".yaml"), case_id) for name, case_id in expected)
    merged_rows = (tmp_path / "merged" / "results.jsonl").read_text().splitlines()
    assert sorted((r["suite"], r["eval_id"]) for r in map(json.loads, merged_rows)) == expected


def test_shards_of_a_filtered_run_merge_into_the_filtered_cases(tmp_path: Path) -> None:
    """`--test-id`/`--suite` choose the cases, `--shard` deals out those: every job runs (one has none
    of them), and the merge counts the cases chosen, not every case in the files."""
    project(tmp_path, failing=set())
    shards = run_shards(tmp_path, 3, "--test-id", "g[12]")
    assert [p.returncode for p in shards] == [0] * 3, [p.stderr for p in shards]
    assert "shard 3/3 has no cases (2 case(s) in all)" in shards[2].stderr
    merged = merge(tmp_path, *(f"shard-{k}/results.jsonl" for k in range(1, 4)))
    assert merged.returncode == 0, merged.stderr
    assert "2 cases: 2 passed, 0 failed, 0 errors" in merged.stdout


def test_merge_of_passing_shards_passes_even_with_an_empty_shard(tmp_path: Path) -> None:
    expected = project(tmp_path, failing=set(), layout={"evals/geo.eval.yaml": ["g1"], "evals/more.eval.yaml": ["m1"]})
    shards = run_shards(tmp_path, 3)  # 2 cases on 3 machines: one job has nothing to run
    assert [p.returncode for p in shards] == [0] * 3, [p.stderr for p in shards]
    assert "shard 3/3 has no cases" in shards[2].stderr

    merged = merge(tmp_path, *(f"shard-{k}/results.jsonl" for k in range(1, 4)))
    assert merged.returncode == 0, merged.stderr
    assert "2 cases: 2 passed, 0 failed, 0 errors" in merged.stdout
    assert len(junit_outcomes(tmp_path / "merged" / "junit.xml")) == len(expected) == 2


def test_shards_gated_on_regressions_merge_into_a_regression_verdict(tmp_path: Path) -> None:
    """`--baseline`/`--fail-on` reach the merged verdict, as in the shard jobs (it used to judge
    every case, so a case failing on main too failed the merge the shards had passed); a shard
    stopped by --max-failures still fails it."""
    project(tmp_path, failing={"g2", "g4", "m1", "m3"})  # shard 2/2's cases: all failing on main too
    run_cli("run", "evals", "--output-dir", "base", cwd=tmp_path)
    gate = ("--baseline", "base/results.jsonl", "--fail-on", "regression")
    shards = run_shards(tmp_path, 2, *gate)
    assert [p.returncode for p in shards] == [0, 0], [p.stderr for p in shards]
    files = ("shard-1/results.jsonl", "shard-2/results.jsonl")
    merged = merge(tmp_path, *files, *gate)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert "gate (--fail-on regression): passed, no case regressed" in merged.stdout
    assert "STILL FAILING (ALSO ON BASE): g2" in merged.stdout
    assert merge(tmp_path, *files, "--baseline", "base/results.jsonl").returncode == 1  # --fail-on all
    stopped = run_cli("run", "evals", "--shard", "2/2", "--output-dir", "shard-2", "--workers", "1",
                      "--max-failures", "1", *gate, cwd=tmp_path)
    assert stopped.returncode == 1, stopped.stderr
    merged = merge(tmp_path, *files, *gate)
    assert merged.returncode == 1, merged.stdout + merged.stderr
    assert ("gate (--fail-on regression): failed, the run stopped early (shard 2/2 stopped early (--max-failures): "
            "its cases not started did not run)") in merged.stdout


def test_a_base_at_the_path_the_merge_writes_is_read_before_it_is_replaced(tmp_path: Path) -> None:
    """`merge --baseline merged/results.jsonl` with the merged results going there too: the base must
    be read first, else the shards are compared with themselves and every regression passes."""
    project(tmp_path, failing=set())
    assert run_cli("run", "evals", "--output-dir", "merged", cwd=tmp_path).returncode == 0  # main: all pass
    project(tmp_path, failing={"g1"})  # the change breaks g1
    run_shards(tmp_path, 2)
    merged = merge(tmp_path, "shard-1/results.jsonl", "shard-2/results.jsonl",
                   "--baseline", "merged/results.jsonl", "--fail-on", "regression")
    assert merged.returncode == 1, merged.stdout + merged.stderr
    assert "REGRESSED: g1" in merged.stdout


def test_merging_the_results_of_an_unsharded_run_stopped_by_max_failures_fails_and_says_so(tmp_path: Path) -> None:
    project(tmp_path, failing={"g1", "g2"})
    assert run_cli("run", "evals", "--workers", "1", "--max-failures", "1", cwd=tmp_path).returncode == 1
    merged = merge(tmp_path, ".agentv-gate/results.jsonl")
    assert merged.returncode == 1, merged.stdout + merged.stderr
    assert ("agentv-gate: the run (no --shard) stopped early (--max-failures): its cases not started did not run"
            in merged.stderr)


def test_merge_refuses_regression_options_without_a_base(tmp_path: Path) -> None:
    proc = merge(tmp_path, "x.jsonl", "--fail-on", "regression")
    assert proc.returncode == 2 and "--fail-on regression needs --baseline" in proc.stderr


@pytest.mark.parametrize("files, message", [
    (["missing.jsonl"], "cannot read results from missing.jsonl"),
    (["empty.jsonl"], "no results to merge"),
])
def test_merge_without_usable_results_exits_2(tmp_path: Path, files: list[str], message: str) -> None:
    (tmp_path / "empty.jsonl").write_text("")
    proc = merge(tmp_path, *files)
    assert proc.returncode == 2
    assert message in proc.stderr


def test_merging_one_shard_twice_with_the_other_missing_exits_2(tmp_path: Path) -> None:
    """Enough rows to look whole, but half the cases never ran: refused, never judged."""
    project(tmp_path, failing=set(), layout={"evals/geo.eval.yaml": ["g1", "g2"], "evals/more.eval.yaml": ["m1", "m2"]})
    shards = run_shards(tmp_path, 2)
    assert [p.returncode for p in shards] == [0, 0], [p.stderr for p in shards]
    twice = merge(tmp_path, "shard-1/results.jsonl", "shard-1/results.jsonl")
    assert twice.returncode == 2, twice.stdout + twice.stderr
    assert "duplicate result" in twice.stderr  # read first; a missing shard is refused too (below)
    for present, absent in (("1", "2"), ("2", "1")):
        alone = merge(tmp_path, f"shard-{present}/results.jsonl")
        assert alone.returncode == 2, alone.stderr
        assert (f"incomplete shard results: 2 of 4 case(s) have no result (no results at all from shard(s) {absent}/2);"
                in alone.stderr), alone.stderr
    assert not (tmp_path / "merged" / "junit.xml").exists()


def test_a_matrix_shard_cut_short_between_targets_is_refused(tmp_path: Path) -> None:
    """A matrix case has a row per target: a shard interrupted after `c2 [a]` but before `c2 [b]`
    still has a row for every case, yet a merge of it would drop a row and could pass."""
    make_repo(tmp_path, "targets:\n" + "".join(f"  - name: {t}\n    provider: mock\n    response: Paris\n"
                                               for t in ("a", "b")))
    (tmp_path / "evals/m.eval.yaml").write_text("execution:\n  targets: [a, b]\n" + suite(["c1", "c2"], set()))
    shards = run_shards(tmp_path, 2)
    assert [p.returncode for p in shards] == [0, 0], [p.stderr for p in shards]
    cut = tmp_path / "shard-2/results.jsonl"
    cut.write_text(cut.read_text().splitlines(keepends=True)[0])  # one of its case's two rows
    proc = merge(tmp_path, "shard-1/results.jsonl", "shard-2/results.jsonl")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "incomplete shard results: 1 of 4 case(s) have no result" in proc.stderr


def test_a_complete_merge_where_two_suites_reuse_a_case_id_passes(tmp_path: Path) -> None:
    expected = project(tmp_path, failing=set(), layout={"evals/geo.eval.yaml": ["same", "g2"],
                                                        "evals/more.eval.yaml": ["same"]})
    shards = run_shards(tmp_path, 2)
    assert [p.returncode for p in shards] == [0, 0], [p.stderr for p in shards]
    merged = merge(tmp_path, "shard-1/results.jsonl", "shard-2/results.jsonl")
    assert merged.returncode == 0, merged.stderr
    assert "3 cases: 3 passed, 0 failed, 0 errors" in merged.stdout
    rows = [json.loads(line) for line in (tmp_path / "merged" / "results.jsonl").read_text().splitlines()]
    assert sorted((r["suite"], r["eval_id"]) for r in rows) == expected


def test_shard_totals_lowered_by_hand_do_not_hide_a_shards_lost_case(tmp_path: Path) -> None:
    """Shard 1 of 2 lost a case's row, and every row's totals were lowered to match: the counts the
    rows themselves show (round-robin: shard 1 holds as many cases as shard 2, or one more) still
    say a case is missing."""
    project(tmp_path, failing=set(), layout={"evals/geo.eval.yaml": ["g1", "g2", "g3", "g4"]})
    shards = run_shards(tmp_path, 2)
    assert [p.returncode for p in shards] == [0, 0], [p.stderr for p in shards]
    first = tmp_path / "shard-1/results.jsonl"
    rows = [json.loads(line) for line in first.read_text().splitlines()][:1]
    for path, kept in ((first, rows), (tmp_path / "shard-2/results.jsonl", None)):
        kept = kept if kept is not None else [json.loads(line) for line in path.read_text().splitlines()]
        for row in kept:
            row["shard_total"] = 3
            row["run_rows"] = len(kept)
        path.write_text("".join(json.dumps(row) + "\n" for row in kept))
    proc = merge(tmp_path, "shard-1/results.jsonl", "shard-2/results.jsonl")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "incomplete shard results" in proc.stderr
