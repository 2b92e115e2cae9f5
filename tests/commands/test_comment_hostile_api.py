"""The comment step against a GitHub API (or a commenter) that does not play fair, through the real
`agentv-gate comment`: a comment copying the gate's marker is not the gate's, a reply that drips
costs a bounded time, and neither a redirect nor a pagination link takes the token or the comment
to another origin.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.commands.test_comment_cli import PR, TOKEN, _row, actions_env, bodies, marker_body
from tests.helpers.cli import run_cli
from tests.helpers.fake_github import FakeGitHub
from tests.helpers.wire_server import WireServer, drip_body, redirect, reply

FORBIDDEN_USER = json.dumps({"message": "Resource not accessible by integration"}).encode()


def _head(tmp_path: Path) -> Path:
    head = tmp_path / "head.jsonl"
    head.write_text(_row("a", "pass", 1.0))
    return head


@pytest.mark.parametrize("login", [None, "alice"])
def test_a_comment_copying_the_marker_by_someone_else_is_left_alone(tmp_path: Path, login: str | None) -> None:
    """Anyone may post a body starting with the marker (it is computable from the public workflow):
    the gate's comment is the one its own token's identity wrote, for the Actions token and a person's."""
    me = login or "github-actions[bot]"
    with FakeGitHub(token=TOKEN, login=login) as github:
        spoof = marker_body(tmp_path).replace("old body", "### ✅ agentv-gate: PASSED")
        github.add_comments(PR, [spoof], user="mallory")
        first = run_cli("comment", str(_head(tmp_path)), cwd=tmp_path, env=actions_env(tmp_path, github))
        assert first.returncode == 0 and "pull-request comment created" in first.stderr, first.stdout + first.stderr
        spoofed, ours = github.comments[PR]
        assert spoofed["body"] == spoof and spoofed["user"]["login"] == "mallory"
        assert ours["user"]["login"] == me and ours["body"].startswith(marker_body(tmp_path).split("\n")[0])
        assert [m for m, *_ in github.requests] == ["GET", "GET", "POST"]
        second = run_cli("comment", str(_head(tmp_path)), cwd=tmp_path, env=actions_env(tmp_path, github))
        assert "pull-request comment updated" in second.stderr, second.stdout + second.stderr
        assert github.requests[-1][:2] == ("PATCH", f"/repos/octo/widgets/issues/comments/{ours['id']}")
        assert bodies(github)[0] == spoof


def test_an_api_that_drips_its_reply_costs_the_comment_step_a_bounded_time(tmp_path: Path) -> None:
    """One byte every 2 s resets a per-read timeout for ever; the call's deadline cuts it."""
    with WireServer() as api:
        api.default(drip_body(b"[" + b" " * 10_000 + b"]", 2.0))
        url = api.url
        started = time.monotonic()
        proc = run_cli("comment", str(_head(tmp_path)), cwd=tmp_path,
                       env=actions_env(tmp_path, None, GITHUB_API_URL=api.url), timeout=90)
        took = time.monotonic() - started
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [warning] = [line for line in proc.stdout.splitlines() if line.startswith("::warning")]
    assert f"the GitHub API at {url} did not answer GET within 10s" in warning, warning
    assert took < 40, f"the comment step took {took:.0f}s"


def test_a_write_redirected_to_another_host_is_not_sent_there(tmp_path: Path) -> None:
    with WireServer() as api, WireServer() as elsewhere:
        elsewhere.default(reply(201, json.dumps({"id": 5, "html_url": "https://elsewhere/c/5"}).encode()))
        for status in (307, 308):
            api.script(reply(403, FORBIDDEN_USER), reply(200, b"[]"),
                       redirect(status, f"{elsewhere.url}/repos/octo/widgets/issues/{PR}/comments"))
            proc = run_cli("comment", str(_head(tmp_path)), cwd=tmp_path,
                           env=actions_env(tmp_path, None, GITHUB_API_URL=api.url))
            assert proc.returncode == 0
            assert "comment created" not in proc.stderr
            [warning] = [line for line in proc.stdout.splitlines() if line.startswith("::warning")]
            assert (f"GitHub's API answered POST with a redirect ({status}) to {elsewhere.url}, not followed"
                    in warning), warning
        assert elsewhere.requests == []


def test_a_pagination_link_to_another_origin_is_not_followed_with_the_token(tmp_path: Path) -> None:
    with WireServer() as api, WireServer() as elsewhere:
        elsewhere.default(reply(200, b"[]"))
        link = f'<{elsewhere.url}/repos/octo/widgets/issues/{PR}/comments?page=2>; rel="next"'
        api.script(reply(403, FORBIDDEN_USER), reply(200, b"[]", headers={"Link": link}))
        proc = run_cli("comment", str(_head(tmp_path)), cwd=tmp_path,
                       env=actions_env(tmp_path, None, GITHUB_API_URL=api.url))
        assert proc.returncode == 0
        [warning] = [line for line in proc.stdout.splitlines() if line.startswith("::warning")]
        assert f"GitHub's API pointed to another host ({elsewhere.url}), not followed" in warning, warning
        assert elsewhere.requests == []
        assert [r.method for r in api.requests] == ["GET", "GET"], "no comment posted on a list it could not read"
        assert all(r.headers.get("authorization") == f"Bearer {TOKEN}" for r in api.requests)
