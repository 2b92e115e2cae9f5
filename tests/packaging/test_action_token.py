"""No process the action's suites start can read the comment token, by any /proc file of any process.

The action is played as the runner plays it: entrypoint.sh with the gate step's environment (as
action.yml gives it), then with the comment step's. A `cli` agent and a code judge walk every
process they can see (their ancestors among them) and read its environ and cmdline, looking for
the token; the case fails when either finds it. The same probe, with the token in the gate step's
environment (where the action used to put it), finds it: the check can fail. The judge also leaves
a daemon behind (double fork, setsid) that watches for the comment step's token: the run ends it.
"""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

import pytest
import yaml

from tests.helpers.fake_github import FakeGitHub
from tests.helpers.files import make_repo, write
from tests.packaging.test_action import ACTION, run_entrypoint

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="walks /proc")

SNOOP = """\
import json, os, sys

TOKEN = {token!r}.encode()


def found():
    where = []
    pids = [p for p in os.listdir("/proc") if p.isdigit()]
    ancestors, pid = [], os.getppid()
    while pid > 1:  # the ancestors first, by name: they must be readable, or the probe proves nothing
        ancestors.append(str(pid))
        with open(f"/proc/{{pid}}/stat") as stat:
            pid = int(stat.read().rsplit(")", 1)[1].split()[1])
    readable = 0
    for p in ancestors + pids:
        for name in ("environ", "cmdline"):
            try:
                with open(f"/proc/{{p}}/{{name}}", "rb") as f:
                    data = f.read()
            except OSError:
                continue
            readable += p in ancestors and name == "environ"
            if TOKEN in data:
                where.append(f"{{p}}/{{name}}")
    assert readable >= len(ancestors), "an ancestor's environ could not be read"
    return where


def linger():
    # a daemon (double fork, setsid) that outlives the judge and watches for the comment step
    ready, done = os.pipe()  # the judge goes on once the daemon has looked once
    if os.fork():
        os.wait()
        os.close(done)
        os.read(ready, 1)
        return
    os.close(ready)
    os.setsid()
    if os.fork():
        os._exit(0)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    import time
    with open({log!r}, "a") as log:
        log.write("started\\n")
        log.flush()
        end = time.monotonic() + 30
        while time.monotonic() < end:
            try:
                hits = found()
            except Exception:
                hits = []
            if hits:
                log.write("FOUND " + " ".join(hits) + "\\n")
                log.flush()
            if done is not None:
                os.write(done, b"x")
                os.close(done)
                done = None
            if hits:
                break
            time.sleep(0.1)
    os._exit(0)


hits = found()
if sys.argv[1] == "judge":
    linger()
if sys.argv[1] == "agent":
    print("FOUND " + " ".join(hits) if hits else "clean")
else:
    sys.stdin.read()
    print(json.dumps({{"score": 0.0 if hits else 1.0, "hits": [], "misses": hits,
                      "reasoning": "token in " + " ".join(hits) if hits else "no token anywhere"}}))
"""


def _gate_step_env_names() -> set[str]:
    action = yaml.safe_load(ACTION.read_text())
    [gate] = [s for s in action["runs"]["steps"] if s.get("id") == "gate"]
    return set(gate["env"])


@pytest.mark.parametrize("token_in_gate_step", [False, True], ids=["as-the-action-runs", "token-in-the-gate-step"])
def test_no_process_of_the_suites_step_can_read_the_token(tmp_path: Path, token_in_gate_step: bool) -> None:
    assert not {n for n in _gate_step_env_names() if "TOKEN" in n}, "the gate step must not be given the token"
    token = f"ghs_{uuid.uuid4().hex}"  # unique: other tests' gates hold the fake's usual token
    snoop = tmp_path / "repo" / "snoop.py"
    repo = make_repo(tmp_path / "repo", f"""\
targets:
  - name: default
    provider: cli
    command: {sys.executable} {snoop} agent
""")
    lingered = tmp_path / "lingered.log"
    snoop.write_text(SNOOP.format(token=token, log=str(lingered)))
    write(repo / "evals" / "snoop.yaml", f"""\
tests:
  - id: snoop
    input: look around
    assert:
      - type: contains
        value: clean
      - name: walker
        type: code_judge
        script: ["python3", "{snoop}", "judge"]
""")
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"number": 7, "pull_request": {"number": 7, "head": {"sha": "a" * 40},
                                                               "base": {"ref": "main"}}}))
    with FakeGitHub(token=token) as github:
        job = {"GITHUB_EVENT_PATH": str(event), "GITHUB_EVENT_NAME": "pull_request",
               "GITHUB_REPOSITORY": "octo/widgets", "GITHUB_WORKFLOW": "agent evals",
               "GITHUB_API_URL": github.url, "GITHUB_WORKSPACE": str(repo)}
        inputs = {"paths": "evals", "comment": "true"}
        gate_env = {**job, **({"AGENTV_GATE_GITHUB_TOKEN": token} if token_in_gate_step else {})}
        gate = run_entrypoint(repo, inputs, env=gate_env)
        results = repo / ".agentv-gate" / "results.jsonl"
        assert results.is_file(), gate.stdout + gate.stderr
        rows = [json.loads(line) for line in results.read_text().splitlines()]
        if token_in_gate_step:
            assert gate.code == 1, "the probe must find a token that is there"
            assert "FOUND" in json.dumps(rows) or "token in" in json.dumps(rows)
            assert "FOUND" in lingered.read_text(), "the daemon's probe finds a token that is there"
            return
        assert gate.code == 0, gate.stdout + gate.stderr + json.dumps(rows)
        assert github.requests == [], "the suites' step posts nothing"
        post = run_entrypoint(repo, inputs, env={**job, "AGENTV_GATE_STEP": "comment",
                                                 "AGENTV_GATE_RESULTS": gate.outputs["results-path"],
                                                 "AGENTV_GATE_GITHUB_TOKEN": token})
        assert post.code == 0, post.stdout + post.stderr
        assert lingered.read_text() == "started\n", "the daemon ran, and was ended with the run before the comment step"
        [comment] = github.comments[7]
        assert "PASSED" in comment["body"] and "pull-request comment created" in post.stderr
        assert token not in gate.stdout + gate.stderr + post.stdout + post.stderr
