"""A case renamed (its `id` changed) or moved to another eval file, content unchanged, through the real CLI.

Paired by (eval file, test id) alone, the case was `removed` (it passed on the base) and `new` (it fails now),
and `--fail-on regression` warns about a new failing case: renaming a broken case passed the gate. A new
case whose content (everything but its id and file) is a removed case's is that case.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from agentv_gate.models import CaseResult
from tests.commands.test_paired_cli import base_run, project, run, schedule
from tests.helpers.cli import run_cli
from tests.helpers.files import write
from tests.helpers.reports import case_result, read_rows

CASE = "  - id: {id}\n    input: Answer {n}\n    assertions: [{{type: contains, value: ok}}]\n"


def suite(ids: list[tuple[str, int]]) -> str:
    return "tests:\n" + "".join(CASE.format(id=case, n=n) for case, n in ids)


def renamed_project(tmp_path: Path, *trials: str) -> Path:
    """Four cases passing on the base (`base.jsonl`); then c1 renamed to `c1-renamed`, which now fails."""
    repo = project(tmp_path, 4)
    base_run(repo, {f"c{i}": "PPP" for i in range(4)}, *trials)
    write(repo / "evals/s.eval.yaml", suite([("c0", 0), ("c1-renamed", 1), ("c2", 2), ("c3", 3)]))
    schedule(repo, {"c0": "PPP", "c1-renamed": "FFF", "c2": "PPP", "c3": "PPP"})
    return repo


def test_a_renamed_case_that_now_fails_regresses(tmp_path: Path) -> None:
    repo = renamed_project(tmp_path)
    ran = run(repo, "--baseline", "base.jsonl", "--fail-on", "regression",
              env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")})
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "gate (--fail-on regression): failed, 1 case(s) regressed against base.jsonl" in ran.stdout
    assert "REGRESSED: c1-renamed (evals/s.eval.yaml:5) — renamed from 'c1': passed on base" in ran.stdout
    assert "against the base: 1 regressed, 3 still passing" in ran.stdout
    assert "REMOVED" not in ran.stdout and "NEW:" not in ran.stdout
    assert "::error file=evals/s.eval.yaml,line=5" in ran.stdout
    assert "c1-renamed failed (regressed (renamed from c1))" in ran.stdout
    assert "| regressed | c1-renamed (renamed from c1) |" in (tmp_path / "summary.md").read_text()
    # `compare` reads the same rows the same way
    again = run_cli("compare", "base.jsonl", ".agentv-gate/results.jsonl", "--fail-on", "regression", "--json",
                    cwd=repo)
    assert again.returncode == 1, again.stdout + again.stderr
    cases = {c["test_id"]: c for c in json.loads(again.stdout)["cases"]}
    assert cases["c1-renamed"]["status"] == "regressed" and cases["c1-renamed"]["renamed_from"] == {
        "suite": "evals/s.eval.yaml", "test_id": "c1"}
    assert "c1" not in cases


def test_a_case_moved_to_another_eval_file_that_now_fails_regresses(tmp_path: Path) -> None:
    repo = project(tmp_path, 4)
    base_run(repo, {f"c{i}": "P" for i in range(4)})
    write(repo / "evals/s.eval.yaml", suite([("c0", 0), ("c2", 2), ("c3", 3)]))
    write(repo / "evals/t.eval.yaml", suite([("c1", 1)]))
    schedule(repo, {"c0": "P", "c1": "F", "c2": "P", "c3": "P"})
    ran = run(repo, "--baseline", "base.jsonl", "--fail-on", "regression")
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "REGRESSED: c1 (evals/t.eval.yaml:2) — renamed from 'c1' of evals/s.eval.yaml: passed on base" in ran.stdout


def test_a_renamed_case_still_passing_is_no_new_case(tmp_path: Path) -> None:
    repo = renamed_project(tmp_path)
    schedule(repo, {"c0": "P", "c1-renamed": "P", "c2": "P", "c3": "P"})
    ran = run(repo, "--baseline", "base.jsonl", "--fail-on", "regression")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "against the base: 4 still passing" in ran.stdout


def _survivor_of_two(tmp_path: Path, b: str) -> Any:
    """Cases a and b of one content (b passing or failing on the base as `b` says), both gone; a-renamed fails."""
    repo = project(tmp_path, 1)
    write(repo / "evals/s.eval.yaml", suite([("c0", 0), ("a", 9), ("b", 9)]))
    base_run(repo, {"c0": "P", "a": "P", "b": b})
    write(repo / "evals/s.eval.yaml", suite([("c0", 0), ("a-renamed", 9)]))
    schedule(repo, {"c0": "P", "a-renamed": "F"})
    return run(repo, "--baseline", "base.jsonl", "--fail-on", "regression")


def test_two_removed_cases_of_one_content_that_agree_hold_their_renamed_survivor(tmp_path: Path) -> None:
    """Two base cases with one content, both gone, and one new case with it: which it was is unknown, but both
    passed, so a failing survivor regressed whichever it was (it read as new, and passed the gate)."""
    ran = _survivor_of_two(tmp_path, "P")
    assert "against the base: 1 regressed, 1 removed, 1 still passing" in ran.stdout, ran.stdout + ran.stderr
    assert ran.returncode == 1


def test_removed_cases_of_one_content_that_disagree_are_not_guessed_between(tmp_path: Path) -> None:
    """One of the two passed on the base and the other failed: which the survivor was decides its label, so
    neither is paired (the survivor is new, both are removed)."""
    ran = _survivor_of_two(tmp_path, "F")
    assert "against the base: 1 new, 2 removed, 1 still passing" in ran.stdout, ran.stdout + ran.stderr
    assert "renamed from" not in ran.stdout and ran.returncode == 0


def test_each_copy_of_a_removed_case_is_that_case(tmp_path: Path) -> None:
    """c1 gone, two copies of it in its place: each is c1 renamed, and a copy that fails regressed."""
    repo = project(tmp_path, 3)
    base_run(repo, {f"c{i}": "P" for i in range(3)})
    write(repo / "evals/s.eval.yaml", suite([("c0", 0), ("c1-a", 1), ("c1-b", 1), ("c2", 2)]))
    schedule(repo, {"c0": "P", "c1-a": "P", "c1-b": "F", "c2": "P"})
    ran = run(repo, "--baseline", "base.jsonl", "--fail-on", "regression")
    assert "against the base: 1 regressed, 3 still passing" in ran.stdout, ran.stdout + ran.stderr
    assert "REGRESSED: c1-b (evals/s.eval.yaml:8) — renamed from 'c1'" in ran.stdout
    assert ran.returncode == 1


def test_a_base_row_without_the_content_digest_is_never_paired(tmp_path: Path) -> None:
    """Rows of an older agentv-gate hold no `content_digest`: the case stays removed and new, as it was."""
    repo = renamed_project(tmp_path)
    rows = read_rows(repo / "base.jsonl")
    write(repo / "base.jsonl", "".join(json.dumps({k: v for k, v in row.items() if k != "content_digest"}) + "\n"
                                       for row in rows))
    ran = run(repo, "--baseline", "base.jsonl", "--fail-on", "regression")
    assert "against the base: 1 new, 1 removed, 3 still passing" in ran.stdout, ran.stdout + ran.stderr


def test_a_renamed_case_broken_in_every_trial_fails_the_paired_gate(tmp_path: Path) -> None:
    """With trials, the paired test and the per-case guard read the renamed case against its base trials."""
    repo = renamed_project(tmp_path, "--trials", "3")
    ran = run(repo, "--trials", "3", "--baseline", "base.jsonl", "--fail-on", "regression")
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "c1-renamed failed (regression (per-case guard))" in ran.stdout or \
        "1 case(s) fail beyond what the base allows (per-case guard" in ran.stdout
    assert "c1-renamed (3/3 -> 0/3" in ran.stdout


def test_a_copy_of_a_case_that_is_still_there_is_a_new_case(tmp_path: Path) -> None:
    """c1 kept and copied as `c1-copy` (the same content): the copy is new, never c1's base row renamed, which
    c1 itself still pairs with."""
    repo = project(tmp_path, 4)
    base_run(repo, {f"c{i}": "P" for i in range(4)})
    write(repo / "evals/s.eval.yaml", suite([("c0", 0), ("c1", 1), ("c1-copy", 1), ("c2", 2), ("c3", 3)]))
    schedule(repo, {"c0": "P", "c1": "P", "c1-copy": "F", "c2": "P", "c3": "P"})
    ran = run(repo, "--baseline", "base.jsonl", "--fail-on", "regression")
    assert "against the base: 1 new, 4 still passing" in ran.stdout, ran.stdout + ran.stderr
    assert "renamed from" not in ran.stdout and ran.returncode == 0


def test_a_renamed_matrix_case_pairs_each_target_with_its_own_base_row(tmp_path: Path) -> None:
    """One case run on two targets has one content digest on two rows a side: each target's row is paired by
    content and target, so the target the rename broke regresses."""
    def rows(eval_id: str, claude: Literal["pass", "fail"]) -> list[CaseResult]:
        return [case_result(eval_id, "pass", target="gpt", content_digest="d-a"),
                case_result(eval_id, claude, target="claude", content_digest="d-a"),
                case_result("other", "pass", content_digest="d-other")]

    for name, side in (("base.jsonl", rows("a", "pass")), ("head.jsonl", rows("a-renamed", "fail"))):
        write(tmp_path / name, "".join(json.dumps(r.to_json_row()) + "\n" for r in side))
    ran = run_cli("compare", "base.jsonl", "head.jsonl", "--json", cwd=tmp_path)
    cases = [(c["test_id"], c["target"], c["status"], c["renamed_from"]) for c in json.loads(ran.stdout)["cases"]]
    renamed = {"suite": "evals/a.yaml", "test_id": "a"}
    assert cases == [("a-renamed", "gpt", "passing", renamed), ("a-renamed", "claude", "regressed", renamed),
                     ("other", "", "passing", None)], ran.stdout + ran.stderr
    assert ran.returncode == 1
