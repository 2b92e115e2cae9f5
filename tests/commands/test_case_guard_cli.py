"""The per-case guard through the real CLI: a case stable on the base that breaks in every head trial
fails `--fail-on regression` (and the stricter modes) at any trial count, where the suite-level
sign-flip test over ten cases cannot reach alpha for one case alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.commands.test_paired_cli import base_run, project, run, schedule

STABLE = {f"c{i}": "PPPPP" for i in range(10)}


@pytest.mark.parametrize(("trials", "fail_on"), [("3", "regression"), ("5", "regression"),
                                                 ("5", "case-regression"), ("3", "inconclusive")])
def test_one_stable_case_broken_in_every_trial_fails_the_gate(tmp_path: Path, trials: str, fail_on: str) -> None:
    repo = project(tmp_path, 10)
    base_run(repo, STABLE, "--trials", trials)
    schedule(repo, {**STABLE, "c3": "FFFFF"})
    ran = run(repo, "--trials", trials, "--baseline", "base.jsonl", "--fail-on", fail_on,
              env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")})
    assert ran.returncode == 1, ran.stdout + ran.stderr
    # annotated as an error (the suite test's "inconclusive" would be only a warning)
    assert "::error file=evals/s.eval.yaml,line=" in ran.stdout
    assert "c3 failed (regression (broken in every trial))::" in ran.stdout
    assert (f"gate (--fail-on {fail_on}): failed, 1 case(s) that passed every base trial failed every head "
            f"trial: c3 ({trials}/{trials} -> 0/{trials})") in ran.stdout


def test_a_stable_case_failing_two_of_three_is_suspicious_not_a_regression(tmp_path: Path) -> None:
    repo = project(tmp_path, 10)
    base_run(repo, STABLE, "--trials", "3")
    schedule(repo, {**STABLE, "c3": "FFP"})
    ran = run(repo, "--trials", "3", "--baseline", "base.jsonl", "--fail-on", "regression")
    assert "SUSPICIOUS: c3 (3/3 -> 1/3)" in ran.stdout, ran.stdout + ran.stderr
    assert ran.returncode == 0, ran.stdout + ran.stderr


@pytest.mark.parametrize("alpha", ["1e-300", "1e-320"])
def test_a_tiny_alpha_computes_instead_of_an_internal_error(tmp_path: Path, alpha: str) -> None:
    repo = project(tmp_path, 3)
    three = {f"c{i}": "PPP" for i in range(3)}
    base_run(repo, three, "--trials", "3")
    schedule(repo, {**three, "c1": "PPF"})
    ran = run(repo, "--trials", "3", "--baseline", "base.jsonl", "--fail-on", "regression", "--alpha", alpha)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert f"> alpha {float(alpha):g})" in ran.stdout


def test_an_alpha_too_small_for_a_float_is_refused_before_anything_runs(tmp_path: Path) -> None:
    repo = project(tmp_path, 3)
    base_run(repo, {f"c{i}": "P" for i in range(3)})
    ran = run(repo, "--baseline", "base.jsonl", "--fail-on", "regression", "--alpha", "5e-324")
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert "--alpha 5e-324 is too small to compute with" in ran.stderr
