"""A renamed or moved case, and a case the base never judged, met by the other features, through the real CLI.

How each combination could give a wrong PASS (or a report that says less than the gate decided), and its test:

* a renamed case x --history x --trials: the history rows carry the old name, so read under the new one the
  guard would lose main's earlier passes (base evidence) and let a break through; read as flips, main's
  flips of the old version would excuse the renamed case's failures, which the docs say they do not
  -> `test_the_history_of_a_renamed_cases_old_name_is_base_evidence_for_the_guard` (pins),
  `test_flips_of_a_renamed_cases_old_name_excuse_none_of_its_failures` (pins).
* a renamed case x the pull-request comment: its regression listed under a name the reviewer no longer finds
  -> `test_the_comment_names_a_renamed_regression_as_it_is_called_now_and_was` (pins).
* a case the base never judged x the pull-request comment: the gate fails on it, while the comment listed it
  only under "New" (what `--fail-on regression` only warns about), its base side "0.00 error" (the base never
  started it) (found: fixed) -> `test_the_comment_lists_a_case_the_base_never_judged_as_what_fails_the_gate`.
  The console, the job summary, report.html and `compare` said `new` of it too, with a delta from a score the
  base never gave (found: fixed) -> `test_every_report_labels_a_case_the_base_never_judged_as_what_fails_the_gate`.
* `merge` of shards x --baseline: a case moved to another eval file lands in another shard, its base row
  read by neither shard's own name; a base stopped by --max-failures before a case, which fails now
  -> `test_merge_fails_on_a_case_moved_across_shards_and_on_one_the_base_never_judged` (pins).
* --affected-since x a renamed case x --baseline --fail-on regression: the renamed case has no base row under
  its new name, so it must run (never carried), and fail as the regression it is
  -> `test_affected_since_runs_a_renamed_case_and_fails_its_regression` (pins).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentv_gate.errors import EXIT_FAILED, EXIT_OK
from tests.commands import test_paired_cli as paired
from tests.commands.test_selection_combinations_cli import case, edit, keep, project, run, said, set_answers
from tests.helpers.cli import run_cli
from tests.helpers.fake_github import FakeGitHub
from tests.helpers.files import write
from tests.helpers.reports import RESULTS, read_rows, rows_by_id

GATE = ("--baseline", "base.jsonl", "--fail-on", "regression")
PR = 7


# ------------------------------------------------------------------ a renamed case x --history


NOISY = {f"c{i}": "PPPPPPPPPF" if i % 4 else "PPPFPPPPPP" for i in range(20)}
"""A judge that flips one verdict in ten (as in test_case_guard_cli.py)."""


def test_the_history_of_a_renamed_cases_old_name_is_base_evidence_for_the_guard(tmp_path: Path) -> None:
    # c1 passed 2 of 3 on the base, and every trial of main's run before it (the history, under the name c1)
    repo = paired.project(tmp_path, 20)
    paired.base_run(repo, NOISY, "--trials", "3", name="earlier.jsonl")
    paired.base_run(repo, {**NOISY, "c1": "PFPPPPPPPP"}, "--trials", "3")
    edit(repo / "evals/s.eval.yaml", "id: c1\n", "id: c1-renamed\n")  # the change renames c1 and breaks it
    paired.schedule(repo, {**NOISY, "c1-renamed": "FFFFFFFFFP"})
    gate = ("--trials", "3", *GATE, "--history", "earlier.jsonl")
    ran = paired.run(repo, *gate)
    # its old name's history is the guard's base evidence, as it is for the case not renamed
    assert ran.returncode == EXIT_FAILED, said(ran)
    assert "1 case(s) fail beyond what the base allows (per-case guard" in ran.stdout, said(ran)
    assert "c1-renamed (2/3 (3/3 in the history) -> 0/3 (" in ran.stdout, said(ran)


def test_flips_of_a_renamed_cases_old_name_excuse_none_of_its_failures(tmp_path: Path) -> None:
    # main flipped c1 (it failed every trial once, passed every one on the base): no excuse for the renamed case
    repo = paired.project(tmp_path, 4)
    steady = {f"c{i}": "P" for i in range(4)}
    gate = ("--trials", "3", *GATE, "--history", "earlier.jsonl")
    paired.base_run(repo, {**steady, "c1": "F"}, "--trials", "3", name="earlier.jsonl")
    paired.base_run(repo, steady, "--trials", "3")
    edit(repo / "evals/s.eval.yaml", "id: c1\n", "id: c1-renamed\n")
    paired.schedule(repo, {**steady, "c1-renamed": "F"})
    # no re-runs (`--max-trials 3`), as `compare` and `merge` decide: the stable-case rule holds it broken,
    # which it would not if the old name's flips made the case flaky
    ran = paired.run(repo, *gate, "--max-trials", "3")
    assert ran.returncode == EXIT_FAILED, said(ran)
    assert "1 case(s) fail beyond what the base allows (per-case guard" in ran.stdout, said(ran)
    assert "c1-renamed (3/3 -> 0/3, p=" in ran.stdout and "flaky" not in ran.stdout, said(ran)
    compared = run_cli("compare", "base.jsonl", str(RESULTS), "--history", "earlier.jsonl", cwd=repo)
    assert compared.returncode == EXIT_FAILED, said(compared)
    assert "c1-renamed (3/3 -> 0/3, p=" in compared.stdout and "flaky" not in compared.stdout, said(compared)
    # one trial a side: a regression, never `regressed (flaky)`
    repo = paired.project(tmp_path / "single", 4)
    paired.base_run(repo, {**steady, "c1": "F"}, name="earlier.jsonl")
    paired.base_run(repo, steady)
    edit(repo / "evals/s.eval.yaml", "id: c1\n", "id: c1-renamed\n")
    paired.schedule(repo, {**steady, "c1-renamed": "F"})
    ran = paired.run(repo, *GATE, "--history", "earlier.jsonl")
    assert ran.returncode == EXIT_FAILED, said(ran)
    assert "REGRESSED: c1-renamed (evals/s.eval.yaml:5) — renamed from 'c1'" in ran.stdout, said(ran)
    assert "flaky" not in ran.stdout, said(ran)


# ------------------------------------------------------------------ the pull-request comment


def _github_env(tmp_path: Path, github: FakeGitHub) -> dict[str, str]:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"number": PR, "pull_request": {"number": PR, "head": {"sha": "a" * 40},
                                                                "base": {"ref": "main"}}}))
    return {"GITHUB_ACTIONS": "true", "GITHUB_EVENT_PATH": str(event), "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_REPOSITORY": github.repository, "GITHUB_API_URL": github.url, "GITHUB_WORKFLOW": "evals",
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "AGENTV_GATE_GITHUB_TOKEN": github.token}


def _section(body: str, title: str) -> str:
    """The comment's section under `#### TITLE (n)`, up to the next section ("" when there is none)."""
    if f"#### {title} (" not in body:
        return ""
    return body.split(f"#### {title} (", 1)[1].split("####", 1)[0].split("<details>", 1)[0]


def _comments(github: FakeGitHub) -> list[str]:
    return [c["body"] for c in github.comments.get(PR, [])]


def _failed_and_commented(tmp_path: Path, repo: Path, token: str) -> tuple[str, str]:
    """The comment `run --comment` posts on a head that fails the gate, then the same comment as the action's
    comment step (`agentv-gate comment`) updates it: each run, each exit checked."""
    with FakeGitHub(token=token) as github:
        env = _github_env(tmp_path, github)
        head = run(repo, *GATE, "--comment", env=env)
        assert head.returncode == EXIT_FAILED, said(head)
        keep(repo, "head.jsonl")
        [posted] = _comments(github)
        again = run_cli("comment", "head.jsonl", "evals", *GATE, cwd=repo, env=env)
        assert again.returncode == EXIT_OK, said(again)
        [updated] = _comments(github)
    return posted, updated


def test_the_comment_names_a_renamed_regression_as_it_is_called_now_and_was(tmp_path: Path) -> None:
    repo = project(tmp_path, {"a": "ok-a", "b": "ok-b"})
    assert run(repo).returncode == EXIT_OK
    keep(repo, "base.jsonl")
    edit(repo / "evals/s.eval.yaml", "id: a\n", "id: a-renamed\n")  # renamed; the agent fails it now
    for body in _failed_and_commented(tmp_path, repo, "ghs_renamecombo1234567890"):
        assert "### ❌ agentv-gate: FAILED" in body, body
        regressions = _section(body, "Regressions")
        assert "| a-renamed (renamed from a) | [evals/s.eval.yaml:2](" in regressions, body
        assert "| 1.00 pass → 0.00 fail | Output does not contain &quot;ok-a&quot; |" in regressions, body
        assert "#### New" not in body and "#### Removed" not in body, body


def test_the_comment_lists_a_case_the_base_never_judged_as_what_fails_the_gate(tmp_path: Path) -> None:
    repo = project(tmp_path, {"a": "nope", "b": "ok-b", "c": "ok-c"})
    base = run(repo, "--workers", "1", "--max-failures", "1")  # a fails (also on main): b and c never start
    assert rows_by_id(repo / RESULTS)["b"]["failure_reason_code"] == "max_failures", said(base)
    keep(repo, "base.jsonl")
    set_answers(repo, {"b": "no"})  # the change breaks b, which main never judged
    for body in _failed_and_commented(tmp_path, repo, "ghs_unjudgedcombo1234567890"):
        assert "### ❌ agentv-gate: FAILED" in body, body
        assert "have no result on the base (the base run stopped (--max-failures) before it): b" in body, body
        failing = _section(body, "No result on the base, failing now")
        assert "_The base run never judged these cases (the base run stopped (--max-failures) before it)" in failing
        assert "| b | [evals/s.eval.yaml:6](" in failing, body
        assert "| not judged → 0.00 fail | Output does not contain &quot;ok-b&quot; |" in failing, body
        # never among what the gate lets by
        assert "| b |" not in _section(body, "New") and "| b |" not in _section(body, "Still failing, also on base")
        assert "| c | [evals/s.eval.yaml:10](" in _section(body, "New"), body  # c passes: new, as the console says
        assert "| not judged → 1.00 pass |" in _section(body, "New"), body


# ------------------------------------------------------------------ merge of shards x --baseline


def _merge(repo: Path, *shards: str) -> Any:
    return run_cli("merge", *shards, "--output-dir", "merged", *GATE, cwd=repo)


def test_merge_fails_on_a_case_moved_across_shards_and_on_one_the_base_never_judged(tmp_path: Path) -> None:
    # (s, a) (s, b) (t, c): a and c are shard 1's; moved to t, a sorts after c's file mates: shard 2's
    repo = project(tmp_path, {"a": "ok-a", "b": "ok-b", "c": "ok-c"}, cases="")
    write(repo / "evals/s.eval.yaml", "tests:\n" + case("a") + case("b"))
    write(repo / "evals/t.eval.yaml", "tests:\n" + case("c"))
    assert run(repo).returncode == EXIT_OK
    keep(repo, "base.jsonl")
    write(repo / "evals/s.eval.yaml", "tests:\n" + case("b"))
    write(repo / "evals/t.eval.yaml", "tests:\n" + case("a") + case("c"))
    set_answers(repo, {"a": "no"})  # the change moves a and breaks it
    for k in (1, 2):
        run(repo, "--shard", f"{k}/2", "--results", f"s{k}.jsonl", "--junit", f"j{k}.xml")
    assert "a" in {r["eval_id"] for r in read_rows(repo / "s2.jsonl")}, "a is not shard 2's"
    merged = _merge(repo, "s1.jsonl", "s2.jsonl")
    assert merged.returncode == EXIT_FAILED, said(merged)
    assert "REGRESSED: a (evals/t.eval.yaml:2) — renamed from 'a' of evals/s.eval.yaml" in merged.stdout, said(merged)

    # the base run stopped by --max-failures before b, which fails now
    repo = project(tmp_path / "stopped", {"a": "nope", "b": "ok-b", "c": "ok-c", "d": "ok-d"})
    run(repo, "--workers", "1", "--max-failures", "1")
    assert rows_by_id(repo / RESULTS)["b"]["failure_reason_code"] == "max_failures"
    keep(repo, "base.jsonl")
    set_answers(repo, {"b": "no"})
    for k in (1, 2):
        run(repo, "--shard", f"{k}/2", "--results", f"s{k}.jsonl", "--junit", f"j{k}.xml")
    merged = _merge(repo, "s1.jsonl", "s2.jsonl")
    assert merged.returncode == EXIT_FAILED, said(merged)
    assert "have no result on the base (the base run stopped (--max-failures) before it): b" in merged.stdout, \
        said(merged)
    set_answers(repo, {"b": "ok-b"})  # and passes once b passes
    for k in (1, 2):
        run(repo, "--shard", f"{k}/2", "--results", f"s{k}.jsonl", "--junit", f"j{k}.xml")
    assert _merge(repo, "s1.jsonl", "s2.jsonl").returncode == EXIT_OK


# ------------------------------------------------------------------ --affected-since x a renamed case


def test_affected_since_runs_a_renamed_case_and_fails_its_regression(tmp_path: Path) -> None:
    repo = project(tmp_path, {"a": "ok-a", "b": "ok-b"}, git=True)
    assert run(repo).returncode == EXIT_OK
    keep(repo, "base.jsonl")
    edit(repo / "evals/s.eval.yaml", "id: a\n", "id: a-renamed\n")  # the agent answers a-renamed "none"
    head = run(repo, "--affected-since", "base.jsonl", *GATE)
    found = rows_by_id(repo / RESULTS)
    assert found["b"].get("carried") and not found["a-renamed"].get("carried"), found
    assert found["a-renamed"]["verdict"] == "fail", found["a-renamed"]
    assert head.returncode == EXIT_FAILED, said(head)
    assert "REGRESSED: a-renamed (evals/s.eval.yaml:2) — renamed from 'a': passed on base" in head.stdout, said(head)


def test_every_report_labels_a_case_the_base_never_judged_as_what_fails_the_gate(tmp_path: Path) -> None:
    """The console, the job summary, report.html and `compare` said `new` of it (what `--fail-on regression`
    lets by), with a base side of "0.000 error" and a delta from a score the base never gave, while the gate
    failed on it and its annotation said `no result on the base`."""
    repo = project(tmp_path, {"a": "nope", "b": "ok-b", "c": "ok-c"})
    run(repo, "--workers", "1", "--max-failures", "1")  # a fails (also on main): b and c never start
    keep(repo, "base.jsonl")
    set_answers(repo, {"b": "no"})
    summary = tmp_path / "summary.md"
    head = run(repo, *GATE, env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)})
    assert head.returncode == EXIT_FAILED, said(head)
    why = "no result on base (the base run stopped (--max-failures) before it)"
    assert f"NO RESULT ON THE BASE: b (evals/s.eval.yaml:6) — {why}" in head.stdout, said(head)
    assert "NEW: b" not in head.stdout and f"NEW: c (evals/s.eval.yaml:10) — {why}" in head.stdout, said(head)
    table = summary.read_text()
    assert "| no result on the base | b | evals/s.eval.yaml:6 | not judged | 0.000 fail |  |" in table, table
    assert "| new | c | evals/s.eval.yaml:10 | not judged | 1.000 pass |  |" in table, table
    page = (repo / ".agentv-gate/report.html").read_text()
    assert "<tr><td>no result on the base</td><td>b</td><td>evals/s.eval.yaml:6</td><td>not judged</td>" in page
    keep(repo, "head.jsonl")
    compared = run_cli("compare", "base.jsonl", "head.jsonl", cwd=repo)
    assert compared.returncode == EXIT_FAILED, said(compared)
    assert "NO RESULT ON THE BASE: b [evals/s.eval.yaml] not judged -> 0.000 fail\n" in compared.stdout, said(compared)
    assert "NEW: c [evals/s.eval.yaml] not judged -> 1.000 pass\n" in compared.stdout, said(compared)
