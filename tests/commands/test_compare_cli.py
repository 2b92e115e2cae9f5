"""`agentv-gate compare BASE.jsonl HEAD.jsonl` through the real CLI: pairing, deltas, wins/losses/ties, exit code."""

from __future__ import annotations

import json
from pathlib import Path

from agentv_gate.models import CaseResult
from tests.helpers.cli import run_cli
from tests.helpers.reports import case_result


def write_results(path: Path, rows: list[CaseResult]) -> Path:
    path.write_text("".join(json.dumps(r.to_json_row()) + "\n" for r in rows), encoding="utf-8")
    return path


BASE = [
    case_result("steady", score=0.9),
    case_result("breaks", score=0.95),
    case_result("mends", "fail", score=0.3),
    case_result("stuck", "fail", score=0.2),
    case_result("slides", score=1.0),
    case_result("dropped", score=1.0),
]
HEAD = [
    case_result("steady", score=0.92),
    case_result("breaks", "fail", score=0.4),
    case_result("mends", score=0.85),
    case_result("stuck", "fail", score=0.15),
    case_result("slides", score=0.81),
    case_result("added", "fail", score=0.0),
]


def test_compare_reports_each_case_and_exits_1_on_a_regression(tmp_path: Path) -> None:
    base = write_results(tmp_path / "base.jsonl", BASE)
    head = write_results(tmp_path / "head.jsonl", HEAD)
    proc = run_cli("compare", str(base), str(head), "--json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    status = {c["test_id"]: c["status"] for c in report["cases"]}
    assert status == {"steady": "passing", "breaks": "regressed", "mends": "fixed", "stuck": "still failing",
                      "slides": "passing", "added": "new", "dropped": "removed"}
    by_id = {c["test_id"]: c for c in report["cases"]}
    assert by_id["breaks"]["delta"] == -0.55 and by_id["breaks"]["head_verdict"] == "fail"
    # AgentV's totals over the 5 paired cases: beyond 0.1 a win (mends) or a loss (breaks, slides), else a tie
    assert (report["wins"], report["losses"], report["ties"]) == (1, 2, 2)
    assert report["regressed"] == 1
    page = (tmp_path / ".agentv-gate/report.html").read_text()
    assert "Against the base results" in page and "regressed" in page


def test_min_delta_moves_cases_between_ties_and_wins_or_losses(tmp_path: Path) -> None:
    base = write_results(tmp_path / "base.jsonl", BASE)
    head = write_results(tmp_path / "head.jsonl", HEAD)
    proc = run_cli("compare", str(base), str(head), "--json", "--min-delta", "0.5", cwd=tmp_path)
    report = json.loads(proc.stdout)
    assert (report["wins"], report["losses"], report["ties"]) == (1, 1, 3)
    proc = run_cli("compare", str(base), str(head), "--json", "--threshold", "0", cwd=tmp_path)  # AgentV's name
    report = json.loads(proc.stdout)
    assert (report["wins"], report["losses"], report["ties"]) == (2, 3, 0)


def test_cases_an_interrupted_head_run_never_finished_are_regressions_and_on_the_base_are_new(tmp_path: Path) -> None:
    """An interrupted run writes a row per case it never finished (`failure_reason_code:
    interrupted`). In HEAD such a case passed on the base and was not run now: a regression, not
    "removed" (which would let a cut-short run compare green). In BASE it has no result: "new"."""
    def not_run(eval_id: str) -> CaseResult:
        return case_result(eval_id, "error", error="not run: the run was interrupted (SIGTERM)",
                           failure_reason_code="interrupted")

    base = write_results(tmp_path / "base.jsonl", [case_result("a"), case_result("b")])
    head = write_results(tmp_path / "head.jsonl", [case_result("a"), not_run("b")])
    proc = run_cli("compare", str(base), str(head), "--json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert {c["test_id"]: c["status"] for c in json.loads(proc.stdout)["cases"]} == {"a": "passing", "b": "regressed"}
    base = write_results(tmp_path / "base.jsonl", [case_result("a"), not_run("b")])
    head = write_results(tmp_path / "head.jsonl", [case_result("a"), case_result("b", "fail")])
    proc = run_cli("compare", str(base), str(head), "--json", cwd=tmp_path)
    report = json.loads(proc.stdout)
    assert {c["test_id"]: c["status"] for c in report["cases"]} == {"a": "passing", "b": "new"}
    # yet the base cannot show the change did not break b: it fails the comparison while it fails
    assert proc.returncode == 1 and "(the base run was interrupted before it): b" in report["gate"]["line"], proc.stdout
    head = write_results(tmp_path / "head.jsonl", [case_result("a"), case_result("b")])
    assert run_cli("compare", str(base), str(head), "--json", cwd=tmp_path).returncode == 0


def test_no_regression_exits_0_and_the_text_names_every_change(tmp_path: Path) -> None:
    base = write_results(tmp_path / "base.jsonl", [case_result("a", "fail", score=0.2), case_result("b")])
    head = write_results(tmp_path / "head.jsonl", [case_result("a", score=0.9), case_result("b"),
                                                   case_result("c", "fail")])
    proc = run_cli("compare", str(base), str(head), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "FIXED: a" in proc.stdout and "NEW: c" in proc.stdout
    assert "1 win(s), 0 loss(es), 1 tie(s)" in proc.stdout
    assert "no case regressed" in proc.stdout


def test_max_drop_makes_a_big_score_drop_a_regression(tmp_path: Path) -> None:
    base = write_results(tmp_path / "base.jsonl", [case_result("a", score=1.0)])
    head = write_results(tmp_path / "head.jsonl", [case_result("a", score=0.81)])
    assert run_cli("compare", str(base), str(head), cwd=tmp_path).returncode == 0
    proc = run_cli("compare", str(base), str(head), "--max-drop", "0.1", cwd=tmp_path)
    assert proc.returncode == 1
    assert "REGRESSED: a" in proc.stdout


def test_rows_pair_by_suite_and_test_id(tmp_path: Path) -> None:
    """Two eval files may both have a case `smoke`: each is paired with its own."""
    base = write_results(tmp_path / "base.jsonl", [case_result("smoke", suite="evals/a.yaml"),
                                                   case_result("smoke", "fail", suite="evals/b.yaml")])
    head = write_results(tmp_path / "head.jsonl", [case_result("smoke", "fail", suite="evals/a.yaml"),
                                                   case_result("smoke", suite="evals/b.yaml")])
    report = json.loads(run_cli("compare", str(base), str(head), "--json", cwd=tmp_path).stdout)
    assert {(c["suite"], c["status"]) for c in report["cases"]} == {("evals/a.yaml", "regressed"),
                                                                    ("evals/b.yaml", "fixed")}


def test_files_without_a_common_case_are_refused(tmp_path: Path) -> None:
    base = write_results(tmp_path / "base.jsonl", [case_result("a")])
    head = write_results(tmp_path / "head.jsonl", [case_result("b", "fail")])
    proc = run_cli("compare", str(base), str(head), cwd=tmp_path)
    assert proc.returncode == 2
    assert "share no case" in proc.stderr


def test_a_bad_results_file_is_a_located_error(tmp_path: Path) -> None:
    base = write_results(tmp_path / "base.jsonl", [case_result("a")])
    head = tmp_path / "head.jsonl"
    head.write_text('{"eval_id": "a"}\n{"eval_id": "b", "suite": "s", "file": "f", "line": 1}\n')
    proc = run_cli("compare", str(base), str(head), cwd=tmp_path)
    assert proc.returncode == 2
    assert f"{head}:1" in proc.stderr


def test_job_summary_and_annotations_under_github_actions(tmp_path: Path) -> None:
    base = write_results(tmp_path / "base.jsonl", BASE)
    head = write_results(tmp_path / "head.jsonl", HEAD)
    summary = tmp_path / "summary.md"
    proc = run_cli("compare", str(base), str(head), cwd=tmp_path,
                   env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)})
    assert proc.returncode == 1
    text = summary.read_text()
    assert "## agentv-gate compare" in text
    assert "| regressed | breaks |" in text and "| still failing (also on base) | stuck |" in text
    annotations = [line for line in proc.stdout.splitlines() if line.startswith("::")]
    assert len(annotations) == 1 and "breaks failed (regressed)" in annotations[0]
    # the summary states the verdict (it stated the last annotation's workflow command instead)
    assert "compare: failed, 1 case(s) regressed against" in text and "::error" not in text, text


def test_json_output_runs_no_legacy_workflow_command_and_parses_to_the_same_ids(tmp_path: Path) -> None:
    """The runner's legacy parser takes `##[command]` anywhere in a log line, inside a JSON string
    too; `--json` prints ids a pull request wrote, so `##[` is written with `[` as a JSON escape."""
    hostile = "a ##[add-mask]everything ###[set-output name=x;]y"
    base = write_results(tmp_path / "base.jsonl", [case_result(hostile), case_result("b")])
    head = write_results(tmp_path / "head.jsonl", [case_result(hostile, "fail"), case_result("b")])
    proc = run_cli("compare", str(base), str(head), "--json", cwd=tmp_path, env={"GITHUB_ACTIONS": "true"})
    assert proc.returncode == 1, proc.stderr
    assert "##[" not in proc.stdout
    assert {c["test_id"] for c in json.loads(proc.stdout)["cases"]} == {hostile, "b"}


def test_json_output_stays_parseable_in_github_actions(tmp_path: Path) -> None:
    """`compare --json > comparison.json` in a workflow: the annotations of regressed cases go to
    stderr (the runner reads both streams), so stdout is the JSON document alone."""
    base = write_results(tmp_path / "base.jsonl", BASE)
    head = write_results(tmp_path / "head.jsonl", HEAD)
    proc = run_cli("compare", str(base), str(head), "--json", cwd=tmp_path, env={"GITHUB_ACTIONS": "true"})
    assert proc.returncode == 1, proc.stderr
    assert json.loads(proc.stdout)["regressed"] >= 1
    assert any(line.startswith("::error ") for line in proc.stderr.splitlines()), proc.stderr


def test_one_shard_of_a_sharded_run_is_refused_where_the_other_side_has_cases_it_lacks(tmp_path: Path) -> None:
    """HEAD = shard 1/2's results: the base's cases dealt to shard 2 are absent from it, not removed,
    and one of them may have regressed; as BASE, shard 2's cases would read as "new". Either way a
    green exit would judge only half the cases, so the comparison is refused (exit 2); comparing a
    shard with the same shard of the other side still works."""
    def shard(eval_id: str, verdict: str = "pass", k: int = 1) -> CaseResult:
        return case_result(eval_id, verdict, shard=f"{k}/2", shard_total=2)

    whole = write_results(tmp_path / "whole.jsonl", [case_result("a"), case_result("b")])
    first = write_results(tmp_path / "first.jsonl", [shard("a")])
    for base, head in ((whole, first), (first, whole)):
        proc = run_cli("compare", str(base), str(head), cwd=tmp_path)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert "shard" in proc.stderr and "agentv-gate merge" in proc.stderr, proc.stderr
    again = write_results(tmp_path / "again.jsonl", [shard("a", "fail")])
    proc = run_cli("compare", str(first), str(again), cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr


def test_a_case_the_gate_fails_on_though_its_row_passed_is_annotated_and_failed_in_the_page(tmp_path: Path) -> None:
    """`--fail-on inconclusive` fails on a stable case passing 1 of 3 head trials, whose own row passes
    (pass_at_k): its annotation is an error and report.html shows it failed, not a green page."""
    from tests.commands.test_paired_cli import base_run, project, run, schedule

    repo = project(tmp_path, 6)
    stable = {f"c{i}": "PPP" for i in range(6)}
    base_run(repo, stable, "--trials", "3")
    schedule(repo, {**stable, "c2": "PFF"})
    assert run(repo, "--trials", "3").returncode == 0  # its row passes on the one passing trial
    proc = run_cli("compare", "base.jsonl", ".agentv-gate/results.jsonl", "--fail-on", "inconclusive", cwd=repo,
                   env={"GITHUB_ACTIONS": "true"})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    annotations = [line for line in proc.stdout.splitlines() if line.startswith("::")]
    assert len(annotations) == 1 and annotations[0].startswith("::error file=evals/s.eval.yaml,line=8,")
    assert "c2 failed (inconclusive)" in annotations[0] and "inconclusive against the base: 3/3 -> 1/3" in annotations[0]
    assert 'class="totals FAILED">agentv-gate FAILED: 6 cases: 5 passed, 1 failed' in \
        (repo / ".agentv-gate/report.html").read_text()


def test_compare_reaches_the_verdict_of_run_against_the_same_base(tmp_path: Path) -> None:
    """One verdict for both: a quarantined failure fails no comparison, a head stopped early fails it though
    the cases it left unstarted failed on the base too, and only cases left out make it exit 5."""
    base = write_results(tmp_path / "base.jsonl", [case_result("a"), case_result("b", "fail")])
    quarantined = write_results(tmp_path / "q.jsonl", [case_result("a", "fail", quarantined="known flaky"),
                                                       case_result("b", "fail")])
    proc = run_cli("compare", str(base), str(quarantined), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout
    stopped = write_results(tmp_path / "s.jsonl", [case_result("a"), case_result(
        "b", "error", error="the run stopped after 1 failed case(s)", failure_reason_code="max_failures")])
    proc = run_cli("compare", str(base), str(stopped), cwd=tmp_path)
    assert proc.returncode == 1 and "compare: failed, the run stopped early" in proc.stdout, proc.stdout
    left_out = write_results(tmp_path / "m.jsonl", [case_result("a", "error", error="OPENAI_KEY unset",
                                                                failure_reason_code="missing_env"),
                                                    case_result("b", "fail")])
    proc = run_cli("compare", str(base), str(left_out), cwd=tmp_path)
    assert proc.returncode == 5 and "compare: incomplete, 1 case(s) not run" in proc.stdout, proc.stdout


def _interrupted(eval_id: str) -> CaseResult:
    return case_result(eval_id, "error", error="not run: the run was interrupted (SIGTERM)",
                       failure_reason_code="interrupted")


def _trials(eval_id: str, outcomes: str) -> CaseResult:
    """A row of one trial per letter of `outcomes` (P passes, F fails), its verdict their mean's."""
    scores = [1.0 if o == "P" else 0.0 for o in outcomes]
    return case_result(eval_id, "pass" if all(scores) else "fail", score=sum(scores) / len(scores),
                       trials=[{"attempt": n, "score": s, "verdict": "pass" if s else "fail"}
                               for n, s in enumerate(scores, 1)], aggregation={"strategy": "mean"})


def test_a_case_the_base_never_judged_that_errors_now_fails_the_comparison(tmp_path: Path) -> None:
    """An execution error is no pass either: the case the base never judged may be what the change broke."""
    base = write_results(tmp_path / "base.jsonl", [case_result("a"), _interrupted("b")])
    head = write_results(tmp_path / "head.jsonl", [case_result("a"), case_result("b", "error", error="agent crashed")])
    proc = run_cli("compare", str(base), str(head), "--json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "have no result on the base (the base run was interrupted before it): b" in \
        json.loads(proc.stdout)["gate"]["line"], proc.stdout


def test_a_case_the_base_never_judged_fails_the_paired_comparison_too(tmp_path: Path) -> None:
    """With trials on both sides the paired test decides the cases both sides judged; it sees nothing of a
    case the base never judged, which must fail the comparison before the test's pass is read."""
    base = write_results(tmp_path / "base.jsonl", [*(_trials(f"c{i}", "PPP") for i in range(4)), _interrupted("b")])
    head = write_results(tmp_path / "head.jsonl", [*(_trials(f"c{i}", "PPP") for i in range(4)), _trials("b", "FFF")])
    proc = run_cli("compare", str(base), str(head), "--json", cwd=tmp_path)
    report = json.loads(proc.stdout)
    assert report["paired"] is not None and report["paired"].get("cases"), report["paired"]  # the paired test ran
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "have no result on the base (the base run was interrupted before it): b" in report["gate"]["line"]


def test_a_case_the_base_never_judged_is_annotated_as_the_error_that_fails_the_comparison(tmp_path: Path) -> None:
    """Its status is "new", a warning under --fail-on regression; the annotation says why it fails instead."""
    base = write_results(tmp_path / "base.jsonl", [case_result("a"), _interrupted("b")])
    head = write_results(tmp_path / "head.jsonl", [case_result("a"), case_result("b", "fail")])
    proc = run_cli("compare", str(base), str(head), cwd=tmp_path, env={"GITHUB_ACTIONS": "true"})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    annotations = [line for line in proc.stdout.splitlines() if line.startswith("::")]
    assert len(annotations) == 1 and annotations[0].startswith("::error file=evals/a.yaml,line=1,"), annotations
    assert "b failed (no result on the base)" in annotations[0], annotations


def test_a_case_renamed_since_an_interrupted_base_fails_the_comparison_while_it_fails(tmp_path: Path) -> None:
    """The interrupted base's row of the case is no result, yet it is the case's old name: the renamed case
    pairs with it, and is held as a case the base never judged, not let by as new."""
    cut = case_result("b", "error", error="not run: the run was interrupted (SIGTERM)",
                      failure_reason_code="interrupted", content_digest="d-b")
    base = write_results(tmp_path / "base.jsonl", [case_result("a", content_digest="d-a"), cut])
    head = write_results(tmp_path / "head.jsonl", [case_result("a", content_digest="d-a"),
                                                   case_result("b-renamed", "fail", content_digest="d-b")])
    proc = run_cli("compare", str(base), str(head), "--json", cwd=tmp_path)
    report = json.loads(proc.stdout)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "(the base run was interrupted before it): b-renamed" in report["gate"]["line"], report["gate"]
    assert {c["test_id"]: c["status"] for c in report["cases"]} == {"a": "passing", "b-renamed": "new"}
    assert (report["wins"], report["losses"], report["ties"]) == (0, 0, 1)  # AgentV's totals: a alone
