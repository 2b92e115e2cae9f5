"""Shards and the per-case guard's re-runs through the real CLI: the merged verdict (the required check of a
sharded workflow) fails wherever the whole run would, though each shard decided its re-runs alone."""

from __future__ import annotations

import re
from pathlib import Path

from tests.commands.test_case_guard_cli import STABLE
from tests.commands.test_paired_cli import base_run, project, run, schedule
from tests.helpers.cli import run_cli
from tests.helpers.reports import read_rows

GATE = ("--trials", "3", "--baseline", "base.jsonl", "--fail-on", "regression")


def shards(repo: Path, count: int, *args: str) -> list[int]:
    codes = []
    for k in range(1, count + 1):
        ran = run(repo, "--shard", f"{k}/{count}", "--output-dir", f"shard-{k}", *args)
        assert ran.returncode in (0, 1), ran.stdout + ran.stderr
        codes.append(ran.returncode)
    return codes


def merge(repo: Path, count: int, *args: str):  # type: ignore[no-untyped-def]
    return run_cli("merge", *(f"shard-{k}/results.jsonl" for k in range(1, count + 1)), *args, cwd=repo,
                   timeout=120)


def shard_of(repo: Path, case: str, count: int) -> int:
    return next(k for k in range(1, count + 1)
                if case in {row["eval_id"] for row in read_rows(repo / f"shard-{k}/results.jsonl")})


def test_a_case_a_shard_found_broken_fails_the_merge(tmp_path: Path) -> None:
    """c3 passes its first head trial and fails every other: its shard re-runs it until it is broken at the
    shard's level (five cases), and stops there. The merge decides at the whole run's level (ten cases),
    which those trials did not reach: the case was only "suspicious", and the merge passed."""
    repo = project(tmp_path, 10)
    base_run(repo, STABLE, "--trials", "3")
    schedule(repo, {**STABLE, "c3": "P" + "F" * 60})
    codes = shards(repo, 2, *GATE)
    home = shard_of(repo, "c3", 2)
    assert codes[home - 1] == 1 and codes[2 - home] == 0
    merged = merge(repo, 2, "--baseline", "base.jsonl", "--fail-on", "regression")
    assert merged.returncode == 1, merged.stdout + merged.stderr
    assert ("gate (--fail-on regression): failed, 1 case(s) fail beyond what the base allows (per-case guard, "
            "posterior-predictive p <= 0.001 each") in merged.stdout
    # the shard re-ran c3 at the whole run's level (10 cases), not its own five's (0.002)
    rows = {row["eval_id"]: row for row in read_rows(repo / f"shard-{home}/results.jsonl")}
    assert rows["c3"]["reruns"] and "SUSPICIOUS" not in merged.stdout
    whole = run(repo, *GATE)  # the same head unsharded: the same verdict
    assert whole.returncode == 1, whole.stdout + whole.stderr


def test_a_case_a_shard_cleared_by_its_reruns_passes_the_merge(tmp_path: Path) -> None:
    """The path that ends normally: c3 fails two head trials and passes every later one; its shard re-runs it
    until cleared, and the merge passes."""
    repo = project(tmp_path, 10)
    base_run(repo, STABLE, "--trials", "3")
    schedule(repo, {**STABLE, "c3": "PFF" + "P" * 60})
    assert shards(repo, 2, *GATE) == [0, 0]
    merged = merge(repo, 2, "--baseline", "base.jsonl", "--fail-on", "regression")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert "gate (--fail-on regression): passed, no significant drop" in merged.stdout
    assert "SUSPICIOUS" not in merged.stdout and "c3 (3/3 -> 1/3 (" in merged.stdout


def test_breaks_in_one_shard_offset_by_fixes_in_another_fail_the_merge(tmp_path: Path) -> None:
    """Five cases of one shard each pass one head trial of three and then fail; five of the other were failing
    on the base and pass now. The first shard's suite test finds its drop, so the shard fails and re-runs
    nothing; over the whole run the fixes offset the drop and only the re-runs could tell the five apart."""
    repo = project(tmp_path, 20)
    base = {f"c{i}": "PPPPP" for i in range(20)}
    listed = run(repo, "--shard", "1/2", "--list")
    assert listed.returncode == 0, listed.stderr
    first = set(re.findall(r"\bc\d+\b", listed.stdout))
    assert len(first) == 10
    broken = sorted(first)[:5]
    fixed = sorted(set(base) - first)[:5]
    base_run(repo, {**base, **{case: "FFFFF" for case in fixed}}, "--trials", "3")
    schedule(repo, {**base, **{case: "P" + "F" * 60 for case in broken}})
    codes = shards(repo, 2, *GATE)
    assert codes == [1, 0]
    # the shard's own drop did not stop its re-runs: each of the five was decided
    rows = read_rows(repo / "shard-1/results.jsonl")
    assert all(row.get("reruns") for row in rows if row["eval_id"] in broken)
    merged = merge(repo, 2, "--baseline", "base.jsonl", "--fail-on", "regression")
    assert merged.returncode == 1, merged.stdout + merged.stderr
    whole = run(repo, *GATE)
    assert whole.returncode == 1, whole.stdout + whole.stderr


def test_shards_gated_against_a_base_are_not_merged_without_it(tmp_path: Path) -> None:
    """The shards ran with `--baseline`; the merge job (the required check) was given none, so it read each
    row alone: c3, which the guard found broken in its shard, passed its own row (1 of 3 trials, pass_at_k)
    and the merge exited 0. It is refused, saying what to pass; the shards of a run without a base merge."""
    repo = project(tmp_path, 10)
    base_run(repo, STABLE, "--trials", "3")
    schedule(repo, {**STABLE, "c3": "P" + "F" * 60})
    assert sorted(shards(repo, 2, *GATE)) == [0, 1]
    refused = merge(repo, 2)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "gated against a --baseline (--fail-on regression); merge them with the same --baseline" in refused.stderr
    assert merge(repo, 2, "--baseline", "base.jsonl", "--fail-on", "regression").returncode == 1
    shards(repo, 2, "--trials", "3")
    assert merge(repo, 2).returncode == 0  # no base on either side: the rows decide
