"""The composite action's `comment: true` on a pull_request event, under act, against a loopback fake of GitHub.

act runs the job as host processes (`-P ubuntu-latest=-self-hosted`, as tests/packaging/test_act.py
does: no Docker, no network), so the action's steps reach the fake on 127.0.0.1; `--env
GITHUB_API_URL=` points them at it (act passes it through as a GitHub Enterprise runner's would be
set) and `-s GITHUB_TOKEN=` is the job's token, which the action's `github-token` input defaults to.
Three pushes to one pull request: the first creates the comment, the second (which breaks a case)
updates that same comment to show the regression at its eval-file line with base -> head scores
and the cost totals, the third meets a fork's read-only token (403): a warning in the log, and the
step's exit code is the gate's, 0.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import yaml

from agentv_gate.models import CaseResult
from tests.helpers.fake_github import FakeGitHub
from tests.helpers.files import write
from tests.helpers.suites import geo_suite
from tests.packaging.test_act import (  # noqa: F401 - pytestmark: skipped where act is not installed
    ACT,
    SEED,
    VENV_BIN,
    _action_cache,
    _copy_repository,
    _git_commit,
    pytestmark,
)

TOKEN = "ghs_actfaketoken0123456789"
PR = 12
HEAD_SHA = "0123456789abcdef0123456789abcdef01234567"

AGENT = """\
import json
print(json.dumps({"text": "Paris is the capital of France.", "token_usage": {"input": 120, "output": 30},
                  "cost_usd": 0.0021}))
"""
TARGETS = """\
targets:
  - name: default
    provider: cli
    command: python3 agent.py
"""


def _workflow(shared: Path) -> dict[str, object]:
    return {"name": "agent evals", "on": "pull_request", "jobs": {"evals": {"runs-on": "ubuntu-latest", "steps": [
        {"uses": "actions/checkout@v4"},  # act copies the local repository: no network
        {"name": "Seed agentv-gate's virtualenv", "shell": "bash", "run": SEED},
        {"id": "gate", "uses": "./", "with": {"python-version": "", "baseline": "base.jsonl", "comment": True}},
        {"name": "Record the exit code", "if": "${{ always() }}", "shell": "bash",
         "env": {"CODE": "${{ steps.gate.outputs.exit-code }}"},
         "run": f'printf %s "$CODE" >"{shared}/exit-code"'},
    ]}}}


def _base_rows() -> str:
    rows = [CaseResult(eval_id=case, suite="evals/geo.yaml", file="evals/geo.yaml", line=line, target="default",
                       verdict="pass", score=1.0, commit="fedcba9876543210fedcba9876543210fedcba98",
                       timestamp="2026-11-26T09:30:00Z", token_usage={"input": 100, "output": 20}, cost_usd=0.0015)
            for case, line in (("capital", 2), ("river", 7))]
    return "".join(json.dumps(r.to_json_row()) + "\n" for r in rows)


def _act(repo: Path, github: FakeGitHub) -> tuple[subprocess.CompletedProcess[str], str]:
    assert ACT is not None
    event = repo.parent / "event.json"
    event.write_text(json.dumps({"number": PR, "pull_request": {
        "number": PR, "head": {"sha": HEAD_SHA}, "base": {"ref": "main"}}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_", "INPUT_"))}
    cache = repo.parent / "act-cache"
    if not cache.exists():
        _action_cache(cache)
    proc = subprocess.run(
        [ACT, "pull_request", "-e", str(event), "-P", "ubuntu-latest=-self-hosted", "--action-offline-mode",
         "--action-cache-path", str(cache), "-W", ".github/workflows/gate.yml",
         "--env", f"AGENTV_GATE_TEST_BIN={VENV_BIN / 'agentv-gate'}",
         "--env", f"GITHUB_API_URL={github.url}", "--env", "GITHUB_REPOSITORY=octo/widgets",
         "-s", f"GITHUB_TOKEN={TOKEN}"],
        cwd=repo, env=env, capture_output=True, text=True, encoding="utf-8", errors="replace", timeout=240,
        stdin=subprocess.DEVNULL)
    return proc, (repo.parent / "shared" / "exit-code").read_text()


def test_two_pushes_leave_one_comment_showing_the_regression_and_a_forks_403_only_warns(tmp_path: Path) -> None:
    repo, shared = tmp_path / "repo", tmp_path / "shared"
    repo.mkdir()
    shared.mkdir()
    _copy_repository(repo)
    write(repo / ".agentv" / "targets.yaml", TARGETS)
    write(repo / "evals" / "agent.py", AGENT)
    write(repo / "evals" / "geo.yaml", geo_suite("Paris"))
    write(repo / "base.jsonl", _base_rows())
    write(repo / ".github" / "workflows" / "gate.yml", yaml.safe_dump(_workflow(shared), sort_keys=False))
    _git_commit(repo)
    with FakeGitHub(token=TOKEN, repository="octo/widgets") as github:
        first, code = _act(repo, github)
        log = first.stdout + first.stderr
        assert first.returncode == 0 and code == "0", log
        assert len(github.comments[PR]) == 1, log

        write(repo / "evals" / "geo.yaml", geo_suite("Seine"))
        _git_commit(repo)
        second, code = _act(repo, github)
        log = second.stdout + second.stderr
        assert second.returncode != 0 and code == "1", log
        [comment] = github.comments[PR]
        body = comment["body"]
        assert "### ❌ agentv-gate: FAILED against `main` at fedcba987654" in body, body
        assert (f"| river | [evals/geo.yaml:7](https://github.com/octo/widgets/blob/{HEAD_SHA}/evals/geo.yaml#L7) "
                "| 1.00 pass → 0.00 fail | Output does not contain &quot;Seine&quot; |") in body, body
        assert "| target default | 200 in / 40 out | 240 in / 60 out | $0.0030 | $0.0042 |" in body, body
        assert [method for method, *_ in github.requests] == ["GET", "GET", "POST", "GET", "GET", "PATCH"]

        write(repo / "evals" / "geo.yaml", geo_suite("Paris"))
        _git_commit(repo)
        github.fail("PATCH", 403, "Resource not accessible by integration")
        third, code = _act(repo, github)
        log = third.stdout + third.stderr
        assert third.returncode == 0 and code == "0", "a fork's 403 does not fail a passing gate:\n" + log
        assert "the pull-request comment was not posted: GitHub answered 403" in log, log
        assert "permissions: pull-requests: write" in log
        assert github.comments[PR] == [comment], "the comment of the second push stays as it was"
        assert TOKEN not in first.stdout + second.stdout + third.stdout
