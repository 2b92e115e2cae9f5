"""Small suites of AgentV 4.42 features that AgentV's own examples do not (or not offline) exercise, run side by
side with the real AgentV 4.42.4 on the same inputs.

Each suite's AgentV result (per case: score to 6 places and verdict) is written here, as
`compat/agentv_4_42/run_differential.py --record` would keep it. `test_the_gate_gives_agentvs_results` runs
the gate on the suite against the differential's loopback model, without node, and asks for exactly those;
`test_agentv_still_gives_the_recorded_results` runs the real AgentV 4.42.4 (cached, or `/tmp/av4`; skipped,
saying why, when neither is here) and asks the same of it, so a recording cannot drift from what AgentV does.
Both also check which API each tool called on the loopback model.
"""

from __future__ import annotations

import os
import subprocess
import textwrap
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from compat.agentv_4_42 import agentic_grader
from compat.agentv_4_42 import run_differential as harness
from compat.agentv_4_42.fake_model import FakeModel
from tests.execution import test_depends_on as depends_on
from tests.execution import test_workspace_4x as workspace
from tests.execution import test_workspace_4x_commands as commands
from tests.execution import test_workspace_per_test as per_test
from tests.execution import test_workspace_repos as repos
from tests.helpers.cli import run_cli
from tests.helpers.workspaces import agent_targets

MODEL = """\
base_url: ${{ FAKE_MODEL_URL }}
api_key: ${{ OPENAI_API_KEY }}
model: ${{ FAKE_MODEL_NAME }}
"""


def _target(name: str, extra: str) -> str:
    return textwrap.indent(f"name: {name}\nprovider: openai\n{extra}{MODEL}", "    ").replace("    name", "  - name", 1)


CONVERSATION = """\
description: Conversations
tests:
  - id: mean-rubrics
    mode: conversation
    criteria: Answers about France
    input:
      - role: system
        content: You are a geography expert.
    turns:
      - input: What is the capital of France?
        assertions:
          - Names Paris
          - Is one sentence
      - input: And its river?
      - input: Say it again
        assertions:
          - type: contains
            value: Paris
          - Mentions France
  - id: min-with-miss
    mode: conversation
    aggregation: min
    criteria: Geography
    input: Hello
    turns:
      - input: Capital of France?
        assertions:
          - type: contains
            value: Paris
      - input: Capital of Germany?
        assertions:
          - type: contains
            value: Berlin
  - id: stop-on-failure
    mode: conversation
    on_turn_failure: stop
    window_size: 1
    criteria: Geography
    input: Hello
    turns:
      - input: Capital of Germany?
        assertions:
          - type: contains
            value: Berlin
      - input: And of France?
        assertions:
          - type: contains
            value: Paris
  - id: whole-transcript
    mode: conversation
    criteria: Geography
    input: Hello
    turns:
      - input: Capital of France?
        expected_output: Paris is the capital of France.
      - input: Again?
    assertions:
      - type: contains
        value: "user: Again?"
"""
"""Conversation tests: string and structured turn assertions, a turn with none, `aggregation: min`,
`on_turn_failure: stop` with `window_size`, an expected output alone, the test's assertions on the transcript."""


SKILL_AGENT = """\
import json, sys
prompt, out = sys.argv[1], sys.argv[2]
calls = {
    "skill-tool": [{"tool": "Bash", "input": {"command": "ls"}},
                   {"tool": "skill", "input": {"skill": "acme-deploy"}}],
    "read-tool": [{"tool": "Read", "input": {"file_path": None, "path": ".claude/skills/acme-deploy/SKILL.md"}}],
    "output-path": [{"tool": "Bash", "input": {"command": "cat"}, "output": {"files": ["skills/acme-deploy/x"]}}],
    "no-calls": [],
    "other-calls": [{"tool": "Read", "input": {"file_path": "skills/acme-deployer.md"}},
                    {"tool": "Skill", "input": {"skill": "acme"}}],
    "prefix": [{"tool": "SKILL", "input": {"skill": "x-acme-deploy-2"}}],
}[prompt]
json.dump({"output": [{"role": "assistant", "content": "done", "tool_calls": calls}]}, open(out, "w"))
"""

SKILL_TRIGGER = """\
tests:
  - id: skill-tool
    input: skill-tool
    assertions: [{type: skill-trigger, skill: acme-deploy}]
  - id: read-tool
    input: read-tool
    assertions: [{type: skill-trigger, skill: acme-deploy, should_trigger: true}]
  - id: output-path
    input: output-path
    assertions: [{type: skill-trigger, skill: acme-deploy}]
  - id: no-calls
    input: no-calls
    assertions: [{type: skill-trigger, skill: acme-deploy}]
  - id: other-calls
    input: other-calls
    assertions: [{type: skill-trigger, skill: acme-deploy}]
  - id: not-expected
    input: skill-tool
    assertions: [{type: skill-trigger, skill: acme-deploy, should_trigger: false}]
  - id: rightly-absent
    input: other-calls
    assertions:
      - {type: skill-trigger, skill: acme-deploy, should_trigger: false}
      - {name: named, type: skill-trigger, skill: acme-deploy, should_trigger: false, negate: true}
  - id: substring
    input: prefix
    assertions: [{type: skill-trigger, skill: acme-deploy}]
"""
"""skill-trigger: each way 4.42 finds a skill (a Skill call, a Read of its file, a tool's output), a miss with and
without tool calls, `should_trigger: false` both ways, `negate`, and 4.42's substring match."""


@dataclass(frozen=True)
class Suite:
    targets: str
    suite: str
    agentv: dict[str, tuple[float, str]]
    """AgentV 4.42.4's result per case: (score, verdict)."""
    paths: dict[str, int] = field(default_factory=dict)
    """How many calls each tool makes on each path of the loopback model."""
    files: dict[str, str] = field(default_factory=dict)
    """Other files of the repository (an agent script)."""
    redirected: bool = False
    """AgentV's calls to api.openai.com go to the loopback model (an `agentv` grader: pi-ai fixes that URL)."""
    prepare: Callable[[Path], None] | None = None
    """What the repository needs beyond its files (a git repository to clone), run once they are written."""
    gate: dict[str, tuple[float, str]] = field(default_factory=dict)
    """The gate's result where it differs from AgentV's on purpose (each said where it is set)."""


def _with_library(repo: Path) -> None:
    """`vendor/lib`, a local repository of two commits, and the suite's `{first}` and `{repo}` filled in."""
    first = repos.make_library(repo)
    suite = repo / "evals" / "s.eval.yaml"
    suite.write_text(suite.read_text().replace("{first}", first).replace("{repo}", str(repo)))


SUITES: dict[str, Suite] = {
    "responses-api": Suite(
        targets="targets:\n" + _target("default", "api_format: responses\ngrader_target: grader\n")
        + _target("grader", "api_format: responses\n"),
        suite="""\
            description: An agent and its grader on the OpenAI Responses API
            tests:
              - id: capital
                input: What is the capital of France?
                criteria: Names Paris
                assertions:
                  - type: contains
                    value: Paris
                  - name: judged
                    type: llm-grader
              - id: river
                input: Which river flows through Paris?
                criteria: Names the Seine
                assertions:
                  - type: contains
                    value: Seine
              - id: graded
                input: Say something
                criteria: Says something
            """,
        agentv={"capital": (0.9, "pass"), "river": (0.0, "fail"), "graded": (0.8, "pass")},
        paths={"/v1/responses": 5},
    ),
    "conversation": Suite(
        targets="targets:\n" + _target("default", "grader_target: grader\n") + _target("grader", ""),
        suite=CONVERSATION,
        agentv={"mean-rubrics": (1.0, "pass"), "min-with-miss": (0.0, "fail"), "stop-on-failure": (0.0, "fail"),
                "whole-transcript": (0.933333, "pass")},
        paths={"/v1/chat/completions": 11},
    ),
    "workspace-template": Suite(
        targets=agent_targets(Path("{repo}")), suite=workspace.suite(pin="execution: {workers: 1}\n"),
        files={k: v for k, v in workspace.files(Path("{repo}"), "").items() if not k.startswith((".agentv", "evals/w"))},
        agentv={"a": (1.0, "pass"), "b": (1.0, "pass")},
    ),
    "workspace-reset": Suite(
        targets=agent_targets(Path("{repo}")), files={k: v for k, v in workspace.files(Path("{repo}"), "").items()
                                          if not k.startswith((".agentv", "evals/w"))},
        suite=workspace.suite(pin="execution: {workers: 1}\n", reset=", reset: fast", b_notes="second,"),
        agentv={"a": (1.0, "pass"), "b": (1.0, "pass")},
    ),
    "hook-commands": Suite(
        targets=agent_targets(Path("{repo}")), suite=commands.SUITE,
        files={k: v for k, v in commands.files(Path("{repo}"), "").items() if not k.startswith((".agentv", "evals/s"))},
        agentv={"list-shell": (1.0, "pass")},
    ),
    "per-test": Suite(
        targets=agent_targets(Path("{repo}")), suite=per_test.SUITE,
        files={k: v for k, v in per_test.files(Path("{repo}"), "").items() if not k.startswith((".agentv", "evals/s"))},
        agentv={"a": (1.0, "pass"), "b": (1.0, "pass")},
    ),
    "skill-trigger": Suite(
        targets=depends_on.TARGETS, suite=SKILL_TRIGGER, files={"agent.py": SKILL_AGENT},
        agentv={"skill-tool": (1.0, "pass"), "read-tool": (1.0, "pass"), "output-path": (1.0, "pass"),
                "no-calls": (0.0, "fail"), "other-calls": (0.0, "fail"), "not-expected": (0.0, "fail"),
                "rightly-absent": (0.5, "fail"), "substring": (1.0, "pass")},
    ),
    **{name: Suite(
        targets=f"""targets:
  - name: agent
    provider: cli
    command: sh {{repo}}/agent.sh {{PROMPT}} {{OUTPUT_FILE}}
    grader_target: explorer
  - name: explorer
    provider: agentv
    model: {model}
    base_url: ${{{{ FAKE_MODEL_URL }}}}
""",
        suite=agentic_grader.SUITE, files={"agent.sh": agentic_grader.AGENT, **agentic_grader.FILES},
        agentv={"adds-subtract": (1.0, "pass"), "no-change": (0.0, "fail"), "tool-edges": (0.5, "fail"),
                "calls-forever": (0.0, "fail")},
        # a grader out of steps never judged: the same 0 and failed assertion, and an error (agent_grader.py)
        gate={"calls-forever": (0.0, "error")},
        paths={path: 16}, redirected=True,
    ) for name, model, path in (("agentic-grader", "openai:fake-model", "/v1/chat/completions"),
                                ("agentic-grader-anthropic", "anthropic:claude-sonnet-4-20250514", "/v1/messages"))},
    "repos": Suite(
        targets=agent_targets(Path("{repo}")), suite=repos.SUITE, files={"agent.py": repos.AGENT}, prepare=_with_library,
        agentv={"cloned": (1.0, "pass")},
    ),
    "depends-on": Suite(
        targets=depends_on.TARGETS, suite=depends_on.SUITE, files={"agent.py": depends_on.AGENT},
        agentv={"setup": (0.0, "error"), "second": (0.0, "error"), "failing": (0.0, "error"),
                "runs-anyway": (1.0, "pass"), "chain": (1.0, "pass"), "lowscore": (0.0, "fail"),
                "after-low": (1.0, "pass")},
    ),
}


def _repo(tmp_path: Path, suite: Suite) -> Path:
    repo = tmp_path / "repo"
    (repo / "evals").mkdir(parents=True)
    (repo / ".agentv").mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".agentv" / "targets.yaml").write_text(suite.targets.replace("{repo}", str(repo)))
    (repo / "evals" / "s.eval.yaml").write_text(textwrap.dedent(suite.suite))
    for name, text in suite.files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    if suite.prepare is not None:
        suite.prepare(repo)
    return repo


def _env(model: FakeModel, home: Path) -> dict[str, str]:
    return {"AGENTV_NO_UPDATE_CHECK": "1", "NO_COLOR": "1", "OPENAI_API_KEY": "fake-key", "ANTHROPIC_API_KEY": "fake-key",
            "FAKE_MODEL_URL": model.url, "FAKE_MODEL_NAME": "fake-model", "HOME": str(home)}


def _results(rows: dict[str, dict[str, Any]]) -> dict[str, tuple[float, str]]:
    return {case: (row["score"], row["verdict"]) for case, row in rows.items() if "@" not in case}  # not a matrix


@pytest.mark.parametrize("name", sorted(SUITES))
def test_the_gate_gives_agentvs_results(tmp_path: Path, name: str) -> None:
    suite = SUITES[name]
    repo = _repo(tmp_path, suite)
    with FakeModel() as model:
        ran = run_cli("run", "evals/s.eval.yaml", "--output-dir", str(tmp_path / "gate"), cwd=repo,
                      env=_env(model, tmp_path / "home"))
        paths = Counter(model.paths)
    assert ran.returncode in (0, 1), ran.stderr
    assert _results(harness.gate_rows(tmp_path / "gate" / "results.jsonl")) == {**suite.agentv, **suite.gate}
    assert dict(paths) == suite.paths


def _agentv() -> Path | None:
    home = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "agentv-gate-compat"
    for cli in (home / f"agentv-{harness.VERSION}" / "node_modules/.bin/agentv",
                harness.INSTALLED / "node_modules/.bin/agentv"):
        if cli.exists():
            return cli
    return None


@pytest.mark.skipif(_agentv() is None, reason="AgentV 4.42.4 is not installed here (~/.cache/agentv-gate-compat "
                                               "or /tmp/av4)")
@pytest.mark.parametrize("name", sorted(SUITES))
def test_agentv_still_gives_the_recorded_results(tmp_path: Path, name: str) -> None:
    suite, cli = SUITES[name], _agentv()
    assert cli is not None
    repo = _repo(tmp_path, suite)
    with FakeModel() as model:
        env = {key: value for key, value in os.environ.items() if not key.startswith(("OPENAI_", "AGENTV_"))}
        if suite.redirected:
            env["NODE_OPTIONS"] = f"--require {agentic_grader.REDIRECT}"
        done = subprocess.run([str(cli), "eval", "evals/s.eval.yaml", "-o", str(tmp_path / "av")], cwd=repo,
                              env={**env, **_env(model, tmp_path / "home")}, capture_output=True, text=True,
                              timeout=180, stdin=subprocess.DEVNULL)
        paths = Counter(model.paths)
    assert done.returncode == 0, done.stderr[-2000:]
    assert _results(harness.agentv_rows(tmp_path / "av")) == suite.agentv
    assert dict(paths) == suite.paths
