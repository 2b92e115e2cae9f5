"""The fork-PR example workflow under act: main records with its key, a fork's pull request replays with none.

`examples/workflows/agentv-gate-fork-prs.yml` as it is, with only what cannot run offline swapped
(as tests/packaging/test_act.py does): the action is `uses: ./`, the Actions cache is a shared
folder, the artifact upload is left out. A push to main runs the suite live against a loopback
model server with `OPENAI_API_KEY` as a secret, and keeps its results and recording. The server is
then stopped, and a fork's pull request (no secrets, `head.repo.fork: true`) that edits one case's
assertion and adds one case gets a real verdict from the recording: the edited case judged afresh,
the new one "needing a new answer", the comment saying so.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

from tests.helpers.fake_github import FakeGitHub
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply
from tests.helpers.files import write
from tests.helpers.git import commit_all, git
from tests.packaging.test_act import (  # noqa: F401 - pytestmark: skipped where act is not installed
    ACT,
    SEED,
    VENV_BIN,
    _action_cache,
    _copy_repository,
    _example,
    pytestmark,
)

TOKEN = "ghs_actfaketoken0123456789"
KEY = "sk-main-only-0123456789abcdef"
PR = 7
VERDICT = json.dumps({"score": 1.0, "hits": ["names the city"], "misses": [], "reasoning": "fine"})


def _targets(url: str) -> str:
    return f"""\
targets:
  - name: default
    provider: openai
    base_url: {url}/agent
    api_key: ${{{{ OPENAI_API_KEY }}}}
    model: fake-agent
    judge_target: grader
  - name: grader
    provider: openai
    base_url: {url}/judge
    api_key: ${{{{ OPENAI_API_KEY }}}}
    model: fake-judge
"""


def _case(name: str, question: str, value: str, judged: bool = True) -> str:
    judge = "      - {name: quality, type: llm_judge}\n" if judged else ""
    return (f"  - id: {name}\n    input: {question}\n    criteria: Names the city\n    assert:\n{judge}"
            f"      - {{type: contains, value: {value}}}\n")


def _offline(steps: list[dict[str, Any]], shared: Path) -> list[dict[str, Any]]:
    """The example's steps with the action from `./` and the cache as a shared folder."""
    cache = shared / "cache"
    out: list[dict[str, Any]] = []
    for step in steps:
        uses = step.get("uses", "")
        if uses.startswith("actions/checkout@"):
            out += [step, {"name": "Seed agentv-gate's virtualenv", "shell": "bash", "run": SEED}]
        elif uses.startswith("actions/cache/restore@"):
            out.append({"name": step["name"], "if": step["if"], "shell": "bash",
                        "run": f'if [[ -d "{cache}/agentv-base" ]]; then cp -R "{cache}/agentv-base" .; fi'})
        elif uses.startswith("actions/cache/save@"):
            out.append({"name": step["name"], "if": step["if"], "shell": "bash",
                        "run": f'mkdir -p "{cache}" && rm -rf "{cache}/agentv-base" && cp -R agentv-base "{cache}/"'})
        elif uses.startswith("your-org/agentv-gate@"):
            out.append({**step, "uses": "./", "with": {**step["with"], "python-version": ""}})
            out.append({"name": "Record the exit code", "if": "${{ always() }}", "shell": "bash",
                        "env": {"CODE": "${{ steps.gate.outputs.exit-code }}"},
                        "run": f'printf %s "$CODE" >"{shared}/exit-code-$GITHUB_EVENT_NAME"'})
        elif uses:
            continue  # the artifact upload: GitHub's storage
        else:
            out.append(step)
    return out


def _act(repo: Path, event_name: str, event: dict[str, Any], github: FakeGitHub,
         secrets: dict[str, str]) -> subprocess.CompletedProcess[str]:
    assert ACT is not None
    path = repo.parent / f"{event_name}.json"
    path.write_text(json.dumps(event))
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GITHUB_", "RUNNER_", "INPUT_")) and k != "OPENAI_API_KEY"}
    cache = repo.parent / "act-cache"
    if not cache.exists():
        _action_cache(cache)
    command = [ACT, event_name, "-e", str(path), "-P", "ubuntu-latest=-self-hosted", "--action-offline-mode",
               "--action-cache-path", str(cache), "-W", ".github/workflows/gate.yml",
               "--env", f"AGENTV_GATE_TEST_BIN={VENV_BIN / 'agentv-gate'}",
               "--env", f"GITHUB_API_URL={github.url}", "--env", "GITHUB_REPOSITORY=octo/widgets",
               "-s", f"GITHUB_TOKEN={TOKEN}"]
    for name, value in secrets.items():
        command += ["-s", f"{name}={value}"]
    return subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, encoding="utf-8",
                          errors="replace", timeout=300, stdin=subprocess.DEVNULL)


def test_a_forks_pull_request_gets_a_verdict_from_mains_recording_without_secrets(tmp_path: Path) -> None:
    repo, shared = tmp_path / "repo", tmp_path / "shared"
    repo.mkdir()
    shared.mkdir()
    _copy_repository(repo)
    workflow = _example("agentv-gate-fork-prs.yml")
    for job in workflow["jobs"].values():
        job["steps"] = _offline(job["steps"], shared)
    write(repo / ".github" / "workflows" / "gate.yml", yaml.safe_dump(workflow, sort_keys=False))
    # The agent's files are src/ alone (the copy of this repository around it is not the agent).
    write(repo / ".agentv" / "gate.yaml", "agent_paths: [src/**]\n")
    write(repo / "src" / "agent_prompt.md", "Answer with the city.\n")
    write(repo / "evals" / "geo.yaml", "tests:\n" + _case("capital", "Capital of France?", "Paris")
          + _case("river", "Which city does the Seine cross?", "Paris"))
    with FakeLLMServer() as server, FakeGitHub(token=TOKEN, repository="octo/widgets") as github:
        server.set_default("/agent/v1/chat/completions", FakeReply.openai("Paris"))
        server.set_default("/judge/v1/chat/completions", FakeReply.openai(VERDICT))
        write(repo / ".agentv" / "targets.yaml", _targets(server.url))
        git(repo, "init", "-q", "-b", "main")
        main_sha = commit_all(repo, "main")
        push = _act(repo, "push", {"ref": "refs/heads/main", "after": main_sha}, github, {"OPENAI_API_KEY": KEY})
        log = push.stdout + push.stderr
        assert push.returncode == 0 and (shared / "exit-code-push").read_text() == "0", log
        assert len(server.requests_for("/agent/v1/chat/completions")) == 2, log
        url = server.url
    recording = shared / "cache" / "agentv-base" / "recording"
    assert (recording / "manifest.json").is_file() and (shared / "cache" / "agentv-base" / "results.jsonl").is_file()
    assert len(list(recording.iterdir())) == 5, list(recording.iterdir())  # 2 answers, 2 verdicts, the manifest
    assert all(KEY not in p.read_text() for p in recording.iterdir())

    # The fork: river's assertions are now "Seine" alone (judged afresh on main's answer "Paris": it fails),
    # and a new case, whose question main's agent was never asked.
    write(repo / "evals" / "geo.yaml", "tests:\n" + _case("capital", "Capital of France?", "Paris")
          + _case("river", "Which city does the Seine cross?", "Seine", judged=False)
          + _case("lyon", "Where is Lyon?", "France"))
    head = commit_all(repo, "a fork's change")
    event = {"number": PR, "pull_request": {"number": PR, "head": {"sha": head, "repo": {"fork": True}},
                                            "base": {"ref": "main", "sha": main_sha}}}
    with FakeGitHub(token=TOKEN, repository="octo/widgets") as github:
        fork = _act(repo, "pull_request", event, github, {})
        log = fork.stdout + fork.stderr
        assert fork.returncode != 0 and (shared / "exit-code-pull_request").read_text() == "1", log
        [comment] = github.comments[PR]
    body = comment["body"]
    # (`@` is followed by a zero-width space in a comment, so that it notifies nobody)
    line = (f"replayed: agent answers from main@&#8203;{main_sha[:7]}; agent code changed? no; cases needing new "
            "answers: 1 (not run)")
    assert line in body, body
    assert "1 case(s) need new answers" in body, body
    assert "#### Regressions (1)" in body and "| river |" in body, body
    assert "| lyon |" in body and "not in the recording" in body, body
    assert "Connection refused" not in log and url not in body  # nothing tried the stopped server
    assert f"replayed: agent answers from main@{main_sha[:7]}" in log  # the console, the job summary
    assert KEY not in log
    shutil.rmtree(shared / "cache")
