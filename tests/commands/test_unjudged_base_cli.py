"""A base run that never judged a case (stopped by `--max-failures`, interrupted) against a head that fails it.

The base row of such a case holds no verdict, so the comparison would call the case "still failing (also on
base)" or "new", which `--fail-on regression` lets by, though main may have passed it and the change broken
it. The gate fails on it, and passes when the case passes now.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from agentv_gate.errors import EXIT_FAILED, EXIT_OK
from agentv_gate.models import CaseResult
from tests.commands.test_selection_combinations_cli import (
    edit,
    interrupt_when_hung,
    keep,
    project,
    run,
    said,
    set_answers,
)
from tests.helpers.cli import run_cli
from tests.helpers.files import write
from tests.helpers.reports import RESULTS, case_result, junit_cases, rows_by_id

GATE = ("--baseline", "base.jsonl", "--fail-on", "regression")


def test_a_case_the_base_stopped_before_fails_the_gate_while_it_fails(tmp_path: Path) -> None:
    repo = project(tmp_path, {"a": "nope", "b": "ok-b", "c": "ok-c"})
    base = run(repo, "--workers", "1", "--max-failures", "1")  # a fails (also on main): b and c never start
    assert {r["eval_id"]: r.get("failure_reason_code") for r in rows_by_id(repo / RESULTS).values()} == {
        "a": None, "b": "max_failures", "c": "max_failures"}, said(base)
    keep(repo, "base.jsonl")
    set_answers(repo, {"b": "no"})  # the change breaks b
    head = run(repo, *GATE, env={"GITHUB_ACTIONS": "true"})
    assert head.returncode == EXIT_FAILED, said(head)
    assert ("1 case(s) do not pass now and have no result on the base (the base run stopped (--max-failures) "
            "before it): b" in head.stdout), said(head)
    # b fails the gate, counted apart; c, never judged either, passes: new
    assert "against the base: 1 no result on the base, 1 still failing (also on base), 1 new" in head.stdout, said(head)
    # annotated as the error it is, not as a "new" case's warning
    annotations = [line for line in head.stdout.splitlines() if line.startswith("::") and "b failed" in line]
    assert len(annotations) == 1 and annotations[0].startswith("::error ") and \
        "b failed (no result on the base)" in annotations[0], said(head)
    cases = junit_cases(ET.parse(repo / ".agentv-gate" / "junit.xml").getroot())
    assert (cases["b"], cases["c"]) == ("fail", "pass"), cases

    set_answers(repo, {"b": "ok-b"})  # b passes: nothing the base did not judge fails now
    fixed = run(repo, *GATE)
    assert fixed.returncode == EXIT_OK and "no result on the base" not in fixed.stdout, said(fixed)


def test_a_case_an_interrupted_base_cut_short_fails_the_paired_gate_while_it_fails(tmp_path: Path) -> None:
    repo = project(tmp_path, {"a": "ok-a", "b": "ok-b", "c": "ok-c"})
    write(repo / "answers" / "c.hang", "")
    interrupt_when_hung(repo, "c", "--workers", "1", "--trials", "2", finished=("a", "b"))
    assert rows_by_id(repo / RESULTS)["c"]["failure_reason_code"] == "interrupted"
    keep(repo, "base.jsonl")
    (repo / "answers" / "c.hang").unlink()
    set_answers(repo, {"c": "no"})  # main never judged c; the change breaks it
    head = run(repo, "--trials", "2", *GATE)
    assert head.returncode == EXIT_FAILED, said(head)
    assert "(the base run was interrupted before it): c" in head.stdout, said(head)
    edit(repo / "evals/s.eval.yaml", "id: c\n", "id: c-renamed\n")  # renamed too: paired with its cut-short row
    set_answers(repo, {"c-renamed": "no"})
    renamed = run(repo, "--trials", "2", *GATE)
    assert renamed.returncode == EXIT_FAILED, said(renamed)
    assert "(the base run was interrupted before it): c-renamed" in renamed.stdout, said(renamed)


def test_a_case_renamed_since_the_base_stopped_before_it_fails_the_gate_while_it_fails(tmp_path: Path) -> None:
    """Paired with its old name's base row, which holds no verdict: "still failing (also on base)" would let
    it by, as it would the same case not renamed."""
    repo = project(tmp_path, {"a": "nope", "b": "ok-b", "c": "ok-c"})
    run(repo, "--workers", "1", "--max-failures", "1")  # a fails: b and c never start
    keep(repo, "base.jsonl")
    edit(repo / "evals/s.eval.yaml", "id: b\n", "id: b-renamed\n")  # the same question and check
    set_answers(repo, {"b-renamed": "no"})
    head = run(repo, *GATE)
    assert "renamed from 'b'" in head.stdout, said(head)
    assert head.returncode == EXIT_FAILED, said(head)
    assert ("have no result on the base (the base run stopped (--max-failures) before it): b-renamed"
            in head.stdout), said(head)


@pytest.mark.parametrize("code", ["missing_env", "max_failures", "interrupted"])
def test_a_target_the_base_never_judged_fails_compare_while_it_fails_there(tmp_path: Path, code: str) -> None:
    """One case on two targets; the base judged it on gpt only (claude's key unset, or its run stopped before
    claude's row). The gpt row's verdict says nothing of claude's."""
    def side(claude: CaseResult) -> list[CaseResult]:
        return [case_result("a", target="gpt"), claude, case_result("other")]

    base = side(case_result("a", "error", target="claude", failure_reason_code=code, error="not run"))
    head = side(case_result("a", "fail", target="claude"))
    for name, rows in (("base.jsonl", base), ("head.jsonl", head)):
        write(tmp_path / name, "".join(json.dumps(r.to_json_row()) + "\n" for r in rows))
    proc = run_cli("compare", "base.jsonl", "head.jsonl", cwd=tmp_path)
    assert proc.returncode == EXIT_FAILED, said(proc)
    assert "1 case(s) do not pass now and have no result on the base" in proc.stdout, said(proc)
    write(tmp_path / "head.jsonl", "".join(json.dumps(r.to_json_row()) + "\n" for r in side(
        case_result("a", target="claude"))))
    assert run_cli("compare", "base.jsonl", "head.jsonl", cwd=tmp_path).returncode == EXIT_OK  # passes there now
