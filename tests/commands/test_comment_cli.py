"""The sticky pull-request comment, through the real CLI against a loopback fake of GitHub's REST API.

`run --comment` and `agentv-gate comment` post one comment per workflow and suite set, find it
again by its hidden marker (past the first page of 100 comments too) and update it in place. What
can go wrong with GitHub (a fork's read-only token, a missing permission, a 422, a rate limit, a
5xx, an API that cannot be reached) is one warning line, and the exit code stays the gate's.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentv_gate.models import CaseResult
from tests.helpers.cli import run_cli
from tests.helpers.fake_github import FakeGitHub
from tests.helpers.files import make_repo, write
from tests.helpers.suites import PARIS_TARGETS, geo_suite

TOKEN = "ghs_faketoken1234567890"
PR = 7
HEAD_SHA = "0123456789abcdef0123456789abcdef01234567"
BASE_SHA = "fedcba9876543210fedcba9876543210fedcba98"



@pytest.fixture()
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN) as server:
        yield server


def actions_env(tmp_path: Path, github: FakeGitHub | None, event: dict[str, Any] | None = None,
                **extra: str) -> dict[str, str]:
    event_path = tmp_path / "event.json"
    event_path.write_text(json.dumps(event if event is not None else {
        "number": PR, "pull_request": {"number": PR, "head": {"sha": HEAD_SHA}, "base": {"ref": "main"}}}))
    env = {"GITHUB_ACTIONS": "true", "GITHUB_EVENT_PATH": str(event_path), "GITHUB_EVENT_NAME": "pull_request",
           "GITHUB_REPOSITORY": "octo/widgets", "GITHUB_SERVER_URL": "https://github.example",
           "GITHUB_RUN_ID": "99", "GITHUB_WORKFLOW": "agent evals", "GITHUB_SHA": HEAD_SHA,
           "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "AGENTV_GATE_GITHUB_TOKEN": TOKEN}
    if github is not None:
        env["GITHUB_API_URL"] = github.url
    env.update(extra)
    return env


def base_results(repo: Path, tmp_path: Path) -> Path:
    """main's results, as a run on main wrote them: both cases pass, stamped with main's commit."""
    write(repo / "evals" / "geo.yaml", geo_suite("Paris"))
    path = tmp_path / "base.jsonl"
    path.write_text("".join(json.dumps(CaseResult(eval_id=case, suite="evals/geo.yaml", file="evals/geo.yaml",
                                                  line=line, target="default", verdict="pass", score=1.0,
                                                  commit=BASE_SHA, timestamp="2026-11-26T09:30:00Z").to_json_row())
                            + "\n" for case, line in (("capital", 2), ("river", 7))))
    return path


def bodies(github: FakeGitHub) -> list[str]:
    return [c["body"] for c in github.comments.get(PR, [])]


def test_the_first_push_creates_the_comment_and_the_second_updates_it_in_place(
        tmp_path: Path, github: FakeGitHub) -> None:
    repo = make_repo(tmp_path / "repo", PARIS_TARGETS)
    base = base_results(repo, tmp_path)
    env = actions_env(tmp_path, github)
    first = run_cli("run", "evals", "--baseline", str(base), "--comment", cwd=repo, env=env)
    assert first.returncode == 0, first.stdout + first.stderr
    [created] = bodies(github)
    assert "### ✅ agentv-gate: PASSED against `main` at fedcba987654" in created
    assert "2 unchanged: 2 still passing, 0 still failing" in created
    quote = "> " + created.replace("\n", "\n> ") + "\n\nWhy did river not run?"
    github.add_comments(PR, [quote])  # a reviewer's reply quoting it, marker included: not ours to edit
    # The second push breaks `river`: the same comment now says so, at the eval file's line.
    write(repo / "evals" / "geo.yaml", geo_suite("Seine"))
    second = run_cli("run", "evals", "--baseline", str(base), "--comment", cwd=repo, env=env)
    assert second.returncode == 1, second.stdout + second.stderr
    updated, reply = bodies(github)
    assert reply == quote
    assert updated.splitlines()[0] == created.splitlines()[0]  # the marker found it again
    assert "### ❌ agentv-gate: FAILED against `main` at fedcba987654" in updated
    regressions = updated.split("#### Regressions (1)", 1)[1].split("####", 1)[0]
    assert (f"| river | [evals/geo.yaml:7](https://github.example/octo/widgets/blob/{HEAD_SHA}/evals/geo.yaml#L7) "
            "| 1.00 pass → 0.00 fail | Output does not contain &quot;Seine&quot; |") in regressions
    assert "| Pass rate | 100.0% (2 of 2) | 50.0% (1 of 2) | -50.0 pts |" in updated
    assert "[Run](https://github.example/octo/widgets/actions/runs/99)" in updated
    calls = [f"{method} {path.rsplit('/', 1)[-1]}" for method, path, *_ in github.requests]
    assert calls == ["GET user", "GET comments", "POST comments", "GET user", "GET comments", "PATCH 1001"]
    assert "pull-request comment updated" in second.stderr
    assert all(auth == f"Bearer {TOKEN}" for *_, auth in github.requests)
    for text in (first.stdout, first.stderr, second.stdout, second.stderr, (tmp_path / "summary.md").read_text()):
        assert TOKEN not in text


def test_the_comment_is_found_past_the_first_page_of_a_hundred_comments(tmp_path: Path, github: FakeGitHub) -> None:
    repo = make_repo(tmp_path / "repo", PARIS_TARGETS)
    base = base_results(repo, tmp_path)
    env = actions_env(tmp_path, github)
    github.add_comments(PR, [f"review note {i}" for i in range(130)])
    assert run_cli("run", "evals", "--baseline", str(base), "--comment", cwd=repo, env=env).returncode == 0
    github.add_comments(PR, [f"later note {i}" for i in range(20)])
    assert run_cli("run", "evals", "--baseline", str(base), "--comment", cwd=repo, env=env).returncode == 0
    ours = [b for b in bodies(github) if b.startswith("<!-- agentv-gate-comment:")]
    assert len(ours) == 1 and len(bodies(github)) == 151
    pages = [query.get("page", ["1"])[0] for method, path, query, _ in github.requests
             if method == "GET" and path.endswith("/comments")]
    assert pages == ["1", "2", "1", "2"]
    assert github.requests[-1][0] == "PATCH"


def test_another_workflow_or_suite_set_gets_a_comment_of_its_own(tmp_path: Path, github: FakeGitHub) -> None:
    repo = make_repo(tmp_path / "repo", PARIS_TARGETS)
    base = base_results(repo, tmp_path)
    for workflow in ("agent evals", "nightly evals"):
        env = actions_env(tmp_path, github, GITHUB_WORKFLOW=workflow)
        assert run_cli("run", "evals", "--baseline", str(base), "--comment", cwd=repo, env=env).returncode == 0
    assert run_cli("run", "evals/geo.yaml", "--baseline", str(base), "--comment", cwd=repo,
                   env=actions_env(tmp_path, github)).returncode == 0
    assert len(bodies(github)) == 3  # the same workflow and paths again is an update (the first test)


@pytest.mark.parametrize("river", ["Paris", "Seine"])
def test_a_forks_read_only_token_is_one_warning_and_the_exit_code_stays_the_gates(
        tmp_path: Path, github: FakeGitHub, river: str) -> None:
    repo = make_repo(tmp_path / "repo", PARIS_TARGETS)
    base = base_results(repo, tmp_path)
    write(repo / "evals" / "geo.yaml", geo_suite(river))
    github.fail("POST", 403, "Resource not accessible by integration")
    proc = run_cli("run", "evals", "--baseline", str(base), "--comment", cwd=repo, env=actions_env(tmp_path, github))
    assert proc.returncode == (0 if river == "Paris" else 1), proc.stdout + proc.stderr
    [warning] = [line for line in proc.stdout.splitlines() if line.startswith("::warning title=agentv-gate comment::")]
    assert ("GitHub answered 403 (Resource not accessible by integration): the token may not write pull-request "
            "comments. Give the job `permissions: pull-requests: write`") in warning, warning
    assert bodies(github) == []
    summary = (tmp_path / "summary.md").read_text()
    assert "## agentv-gate results" in summary and "the pull-request comment was not posted" in summary
    assert TOKEN not in proc.stdout + proc.stderr + summary


@pytest.mark.parametrize(("method", "status", "message", "headers", "said"), [
    ("GET", 404, "Not Found", {}, "GitHub answered 404 (Not Found) for octo/widgets"),
    ("PATCH", 422, "Validation Failed", {}, "GitHub refused the comment (422) (Validation Failed)"),
    ("GET", 403, "API rate limit exceeded for installation", {"x-ratelimit-remaining": "0",
                                                               "x-ratelimit-reset": "1700000000"},
     "GitHub's API rate limit was reached (403, resets at 22:13 UTC)"),
    ("PATCH", 500, "Server Error", {}, "GitHub's API failed (500) (Server Error)"),
    ("GET", 401, "Bad credentials", {}, "GitHub refused the token (401) (Bad credentials)"),
])
def test_each_fault_of_githubs_is_said_in_one_warning(tmp_path: Path, github: FakeGitHub, method: str, status: int,
                                                      message: str, headers: dict[str, str], said: str) -> None:
    base, head = tmp_path / "base.jsonl", tmp_path / "head.jsonl"
    base.write_text(_row("a", "pass", 1.0))
    head.write_text(_row("a", "fail", 0.0))
    github.add_comments(PR, [marker_body(tmp_path)], user="github-actions[bot]")  # ours: PATCH is the call that fails
    github.fail(method, status, message, headers)
    proc = run_cli("comment", str(head), "--baseline", str(base), cwd=tmp_path, env=actions_env(tmp_path, github))
    assert proc.returncode == 0, "the comment step is never a second verdict"
    [warning] = [line for line in proc.stdout.splitlines() if line.startswith("::warning")]
    assert said in warning, warning
    assert bodies(github) == [marker_body(tmp_path)]


def marker_body(tmp_path: Path) -> str:
    """What an earlier `comment` of this workflow (no eval paths) left: its marker and an old body."""
    from agentv_gate.commands._comment import comment_key
    from agentv_gate.report.comment import marker

    return marker(comment_key({"GITHUB_WORKFLOW": "agent evals"}, [])) + "\nold body"


def test_a_passing_gate_with_a_forks_read_only_token_still_exits_0_outside_actions_too(
        tmp_path: Path, github: FakeGitHub) -> None:
    """Another CI system (no GITHUB_ACTIONS): the warning is a stderr line, the exit code the gate's."""
    repo = make_repo(tmp_path / "repo", PARIS_TARGETS)
    base = base_results(repo, tmp_path)
    github.fail("POST", 403, "Resource not accessible by integration")
    env = actions_env(tmp_path, github)
    del env["GITHUB_ACTIONS"], env["AGENTV_GATE_GITHUB_TOKEN"]
    env["GITHUB_TOKEN"] = TOKEN
    proc = run_cli("run", "evals", "--baseline", str(base), "--comment", cwd=repo, env=env)
    assert proc.returncode == 0
    [warning] = [line for line in proc.stderr.splitlines() if "comment was not posted" in line]
    assert warning.startswith("agentv-gate: warning: the pull-request comment was not posted: GitHub answered 403")


def test_one_5xx_is_asked_again_and_the_comment_is_posted(tmp_path: Path, github: FakeGitHub) -> None:
    repo = make_repo(tmp_path / "repo", PARIS_TARGETS)
    base = base_results(repo, tmp_path)
    github.fail("GET", 502, "Bad Gateway", times=1)
    proc = run_cli("run", "evals", "--baseline", str(base), "--comment", cwd=repo, env=actions_env(tmp_path, github))
    assert proc.returncode == 0 and "::warning" not in proc.stdout
    assert len(bodies(github)) == 1


def test_an_unreachable_api_warns_and_the_gate_still_decides(tmp_path: Path) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    repo = make_repo(tmp_path / "repo", PARIS_TARGETS)
    base = base_results(repo, tmp_path)
    write(repo / "evals" / "geo.yaml", geo_suite("Seine"))
    env = actions_env(tmp_path, None, GITHUB_API_URL=f"http://127.0.0.1:{port}")
    proc = run_cli("run", "evals", "--baseline", str(base), "--comment", cwd=repo, env=env)
    assert proc.returncode == 1
    [warning] = [line for line in proc.stdout.splitlines() if line.startswith("::warning")]
    assert f"the GitHub API at http://127.0.0.1:{port} could not be reached (connection failed (connection refused))" in warning


def test_no_token_or_no_pull_request_posts_nothing_and_changes_nothing(tmp_path: Path, github: FakeGitHub) -> None:
    repo = make_repo(tmp_path / "repo", PARIS_TARGETS)
    base = base_results(repo, tmp_path)
    push = run_cli("run", "evals", "--baseline", str(base), "--comment", cwd=repo,
                   env=actions_env(tmp_path, github, event={"ref": "refs/heads/main"}, GITHUB_EVENT_NAME="push"))
    assert push.returncode == 0 and "no pull-request comment: the push event is not a pull request's" in push.stderr
    env = actions_env(tmp_path, github)
    del env["AGENTV_GATE_GITHUB_TOKEN"]
    tokenless = run_cli("run", "evals", "--baseline", str(base), "--comment", cwd=repo, env=env)
    assert tokenless.returncode == 0
    assert "a token (the github-token input, AGENTV_GATE_GITHUB_TOKEN or GITHUB_TOKEN) is not set" in tokenless.stdout
    assert github.requests == []


@pytest.mark.parametrize("flags", [["--comment"], []])
def test_the_agent_under_test_never_sees_the_token(tmp_path: Path, github: FakeGitHub, flags: list[str]) -> None:
    """The token can write to the repository: it leaves the environment before any target runs,
    also in a run that does not comment."""
    repo = make_repo(tmp_path / "repo", """\
targets:
  - name: default
    provider: cli
    command: python3 agent.py
""")
    write(repo / "evals" / "agent.py",
          "import os\nprint('env: [' + os.environ.get('AGENTV_GATE_GITHUB_TOKEN', '') + '] Paris')\n")
    write(repo / "evals" / "geo.yaml", geo_suite("Paris"))
    proc = run_cli("run", "evals", *flags, cwd=repo, env=actions_env(tmp_path, github))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = (repo / ".agentv-gate" / "results.jsonl").read_text()
    assert "env: [] Paris" in rows and TOKEN not in rows


def _row(case: str, verdict: str, score: float, **fields: Any) -> str:
    return json.dumps(CaseResult(eval_id=case, suite="evals/big.yaml", file="evals/big.yaml", line=3,
                                 target="default", verdict=verdict, score=score, **fields).to_json_row()) + "\n"


def test_case_text_cannot_mention_anyone_inject_html_or_break_the_table(tmp_path: Path, github: FakeGitHub) -> None:
    hostile = "@octocat|`rm`<img src=x onerror=alert(1)>[link](http://x)"
    base, head = tmp_path / "base.jsonl", tmp_path / "head.jsonl"
    base.write_text(_row(hostile, "pass", 1.0) + _row("plain", "pass", 1.0))
    head.write_text(_row(hostile, "fail", 0.2, misses=["cc @org/team <b>now</b> | `x`"]) + _row("plain", "pass", 1.0))
    proc = run_cli("comment", str(head), "--baseline", str(base), cwd=tmp_path, env=actions_env(tmp_path, github))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [body] = bodies(github)
    [row] = [line for line in body.splitlines() if "octocat" in line]
    assert "@&#8203;octocat" in row and "@&#8203;org/team" in row
    assert "<img" not in body and "<b>" not in body and "`rm`" not in body
    assert row.count(" | ") == 3 and row.startswith("| ") and row.endswith(" |")  # four cells, no more
    assert "\\|" in row and "\\[link\\]" in row


def test_a_body_past_githubs_limit_folds_its_longest_sections_instead_of_being_refused(
        tmp_path: Path, github: FakeGitHub) -> None:
    base, head = tmp_path / "base.jsonl", tmp_path / "head.jsonl"
    base.write_text("".join(_row(f"case-{i:04d}-" + "x" * 80, "pass", 1.0) for i in range(1200)))
    head.write_text("".join(_row(f"case-{i:04d}-" + "x" * 80, "fail" if i < 900 else "pass", 0.1 if i < 900 else 1.0,
                                 misses=["the answer " + "y" * 150])
                            for i in range(1200)))
    proc = run_cli("comment", str(head), "--baseline", str(base), cwd=tmp_path, env=actions_env(tmp_path, github))
    assert proc.returncode == 0 and "::warning" not in proc.stdout, proc.stdout + proc.stderr
    [body] = bodies(github)
    assert len(body) <= 65_536
    assert "#### Regressions (900)\n\n_900 case(s), listed in [report.html](" in body
    assert "300 unchanged: 300 still passing, 0 still failing" in body
    assert "| Pass rate | 100.0% (1,200 of 1,200) | 25.0% (300 of 1,200) | -75.0 pts |" in body


def test_without_a_base_the_comment_lists_what_does_not_pass(tmp_path: Path, github: FakeGitHub) -> None:
    head = tmp_path / "head.jsonl"
    head.write_text(_row("a", "pass", 1.0) + _row("b", "fail", 0.1, misses=["says Lyon"]))
    proc = run_cli("comment", str(head), cwd=tmp_path, env=actions_env(tmp_path, github))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [body] = bodies(github)
    assert "### ❌ agentv-gate: FAILED\n" in body and "gate: failed" in body
    assert "#### Not passing (1)" in body and "| b | [evals/big.yaml:3](" in body and "| 0.10 fail | says Lyon |" in body
    assert "| Pass rate | 50.0% (1 of 2) |" in body


def test_a_shard_does_not_comment_its_part_of_the_run(tmp_path: Path, github: FakeGitHub) -> None:
    repo = make_repo(tmp_path / "repo", PARIS_TARGETS)
    write(repo / "evals" / "geo.yaml", geo_suite("Paris"))
    proc = run_cli("run", "evals", "--shard", "1/2", "--comment", cwd=repo, env=actions_env(tmp_path, github))
    assert proc.returncode == 2
    assert "comment from the job that merges the shards (`merge --comment`)" in proc.stderr
    assert github.requests == []


def test_the_merge_of_the_shards_posts_the_whole_runs_comment(tmp_path: Path, github: FakeGitHub) -> None:
    repo = make_repo(tmp_path / "repo", PARIS_TARGETS)
    base = base_results(repo, tmp_path)
    write(repo / "evals" / "geo.yaml", geo_suite("Seine"))
    for k in (1, 2):
        run_cli("run", "evals", "--shard", f"{k}/2", "--output-dir", f"s{k}", cwd=repo)
    merged = run_cli("merge", "s1/results.jsonl", "s2/results.jsonl", "--baseline", str(base), "--comment",
                     cwd=repo, env=actions_env(tmp_path, github))
    assert merged.returncode == 1, merged.stdout + merged.stderr
    [body] = bodies(github)
    assert "#### Regressions (1)" in body and "| river | [evals/geo.yaml:7](" in body
    assert "| Pass rate | 100.0% (2 of 2) | 50.0% (1 of 2) | -50.0 pts |" in body


def test_one_shards_results_are_refused_rather_than_commented_as_the_whole_run(
        tmp_path: Path, github: FakeGitHub) -> None:
    head = tmp_path / "head.jsonl"
    head.write_text(_row("a", "pass", 1.0, shard="1/2", shard_total=2))
    proc = run_cli("comment", str(head), cwd=tmp_path, env=actions_env(tmp_path, github))
    assert proc.returncode == 2 and "are incomplete" in proc.stderr, proc.stderr
    assert github.requests == []


def test_a_quarantined_case_is_listed_apart_with_its_reason_and_until_never_as_a_failure(
        tmp_path: Path, github: FakeGitHub) -> None:
    repo = make_repo(tmp_path / "repo", PARIS_TARGETS)
    write(repo / "evals" / "geo.yaml", geo_suite("Lyon"))  # capital passes, river fails
    write(repo / ".agentv" / "gate.yaml", "quarantine:\n  - id: river\n    reason: the agent is moving (#4)\n"
                                          "    until: 2999-12-31\n")
    proc = run_cli("run", "evals", "--comment", "--no-cache", cwd=repo, env=actions_env(tmp_path, github))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [body] = bodies(github)
    assert "### ✅ agentv-gate: PASSED" in body
    assert "Not passing" not in body and "fail |" not in body, body
    assert "#### Quarantined (1)" in body, body
    [row] = [line for line in body.splitlines() if line.startswith("| river |")]
    assert "the agent is moving (#4)" in row and "2999-12-31" in row, row
