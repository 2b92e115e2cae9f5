"""The agent under test and its judges run in the team's environment, never in agentv-gate's.

A realistic layout, end to end, with two Pythons: the team's virtualenv (built from one Python)
holds a small marker package and is first on PATH, as after `source .venv/bin/activate` or a CI
job's setup; agentv-gate is installed in a separate virtualenv (built from another Python) that
is not on PATH. A `cli` agent that imports the marker package, and a code judge that imports it
and the agentv-gate SDK, must pass:

(a) through the CLI, called by its full path;
(b) through the composite action as the runner drives it: the install step (with the Python a
    `setup-python` step with `update-environment: false` reports, and PATH left as the job had it),
    then entrypoint.sh;
(c) through `pre-commit try-repo` with the `language: system` hook.

The team's virtualenv has neither pydantic nor agentv-gate: the judge finds the SDK only through
what agentv-gate puts on its PYTHONPATH. Virtualenvs are built once per module, without pip, and
"installed into" by writing files, to keep the suite fast on small machines.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
PRE_COMMIT = VENV_BIN / "pre-commit"
ANSWER = "the team-marker package says 42"
GATE_PYTHON = getattr(sys, "_base_executable", sys.executable)

AGENT = """\
import json, sys
import team_marker  # only the team's environment has it
print(json.dumps({"text": team_marker.ANSWER + " | agent python: " + sys.prefix}))
"""

JUDGE = """\
import sys
import team_marker
from agentv_gate.sdk import CodeJudgeInput, define_code_judge


@define_code_judge
def judge(payload: CodeJudgeInput) -> dict:
    ok = team_marker.ANSWER in payload.answer
    where = "judge python: " + sys.prefix
    return {"score": 1.0 if ok else 0.0, "hits": [where] if ok else [], "misses": [] if ok else [where]}
"""

TARGETS = """\
targets:
  - name: default
    provider: cli
    command: python3 agent.py {PROMPT}
    cwd: ..                  # relative to the eval file's folder (evals/): the project root
"""

SUITE = f"""\
tests:
  - id: team
    input: What does the team's package say?
    assert:
      - type: contains
        value: {ANSWER}
      - name: team-judge
        type: code_judge
        script: python3 judges/team_judge.py
"""


def _purelib(python: Path) -> Path:
    out = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, check=True, timeout=60)
    return Path(out.stdout.strip())


def _venv(base: str, where: Path) -> Path:
    subprocess.run([base, "-m", "venv", "--without-pip", str(where)], check=True, timeout=120,
                   capture_output=True)
    return where / "bin" / "python"


def _team_base_python() -> str:
    """Another Python than agentv-gate's when the machine has one; else the same (still two venvs)."""
    ours = os.path.realpath(GATE_PYTHON)
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3", shutil.which("python3") or ""):
        if candidate and os.path.exists(candidate) and os.path.realpath(candidate) != ours:
            version = subprocess.run([candidate, "-c", "import sys; print(sys.version_info >= (3, 10))"],
                                     capture_output=True, text=True, timeout=60)
            if version.stdout.strip() == "True":
                return candidate
    return GATE_PYTHON


class Layout:
    def __init__(self, root: Path) -> None:
        self.team = root / "team-venv"
        self.runner_temp = root / "runner-temp"
        self.gate = self.runner_temp / "agentv-gate-venv"  # where the action's install step puts it
        self.gate_cli = self.gate / "bin" / "agentv-gate"

    def env(self, *first: Path) -> dict[str, str]:
        """The user's environment: the team's virtualenv first on PATH, nothing of agentv-gate's."""
        drop = ("GITHUB_", "INPUT_", "RUNNER_", "PRE_COMMIT", "GIT_", "VIRTUAL_ENV", "PYTHON", "AGENTV_GATE")
        env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
        rest = [p for p in os.environ.get("PATH", os.defpath).split(os.pathsep) if p and Path(p) != VENV_BIN]
        env["PATH"] = os.pathsep.join([str(self.team / "bin"), *map(str, first), *rest])
        return env


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> Layout:
    lay = Layout(tmp_path_factory.mktemp("two-pythons"))
    team_python = _venv(_team_base_python(), lay.team)
    marker = _purelib(team_python) / "team_marker"
    marker.mkdir(parents=True)
    (marker / "__init__.py").write_text(f"ANSWER = {ANSWER!r}\n")

    gate_python = _venv(GATE_PYTHON, lay.gate)
    # agentv-gate "installed" by path: this checkout and the dependencies of the test virtualenv.
    (_purelib(gate_python) / "agentv_gate_checkout.pth").write_text(
        f"{ROOT}\n{sysconfig.get_paths()['purelib']}\n")
    lay.gate_cli.write_text(f"#!{gate_python}\nimport sys\nfrom agentv_gate.cli import main\nsys.exit(main())\n")
    lay.gate_cli.chmod(0o755)
    (lay.gate / ".agentv-gate-source").write_text(str(ROOT))  # the action's "already installed" mark

    probe = "import importlib.util as u; print([u.find_spec(m) is None for m in ('pydantic', 'agentv_gate')])"
    seen = subprocess.run([str(team_python), "-c", probe], capture_output=True, text=True, timeout=60, cwd=lay.team)
    assert seen.stdout.strip() == "[True, True]", "the team's Python must not see agentv-gate or its deps"
    return lay


def _project(where: Path) -> Path:
    where.mkdir()
    (where / ".agentv").mkdir()
    (where / ".agentv" / "targets.yaml").write_text(TARGETS)
    (where / "agent.py").write_text(AGENT)
    (where / "evals" / "judges").mkdir(parents=True)
    (where / "evals" / "team.eval.yaml").write_text(SUITE)
    (where / "evals" / "judges" / "team_judge.py").write_text(JUDGE)
    return where


def _assert_ran_in_the_team_environment(results: Path, layout: Layout, output: str) -> None:
    rows = [json.loads(line) for line in results.read_text().splitlines() if line.strip()]
    assert len(rows) == 1, output
    row = rows[0]
    assert row.get("error") in (None, ""), f"{row.get('error')}\n{output}"
    assert row["score"] == 1.0, json.dumps(row, indent=1)
    team_prefix = str(layout.team)
    assert f"agent python: {team_prefix}" in json.dumps(row)
    assert f"judge python: {team_prefix}" in json.dumps(row)


def test_a_cli_run_uses_the_team_python(layout: Layout, tmp_path: Path) -> None:
    project = _project(tmp_path / "project")
    proc = subprocess.run([str(layout.gate_cli), "run", "evals", "--output-dir", "out"], cwd=project,
                          env=layout.env(), capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    _assert_ran_in_the_team_environment(project / "out" / "results.jsonl", layout, out)


def _step(name: str) -> dict:
    steps = yaml.safe_load((ROOT / "action.yml").read_text())["runs"]["steps"]
    return next(s for s in steps if s.get("id") == name)


def test_the_action_leaves_the_job_python_to_the_agent(layout: Layout, tmp_path: Path) -> None:
    project = _project(tmp_path / "project")
    output = tmp_path / "github-output"
    output.write_text("")
    # setup-python with update-environment: false: PATH stays the job's; its python-path output
    # names the Python agentv-gate's virtualenv is built from.
    runner = {**layout.env(), "GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": str(output),
              "RUNNER_TEMP": str(layout.runner_temp)}
    setup = _step("python")
    assert setup["with"]["update-environment"] is False
    install = _step("install")
    step_env = {"ACTION_PATH": str(ROOT), "VENV": str(layout.gate), "PYTHON": GATE_PYTHON}
    assert set(step_env) <= set(install["env"])
    proc = subprocess.run(["bash", "-e", "-c", install["run"]], env={**runner, **step_env}, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    binary = dict(line.split("=", 1) for line in output.read_text().splitlines())["bin"]
    assert binary == str(layout.gate_cli)

    summary = tmp_path / "summary"
    summary.write_text("")
    gate = {**runner, "GITHUB_STEP_SUMMARY": str(summary), "AGENTV_GATE_BIN": binary,
            "INPUT_COMMAND": "run", "INPUT_PATHS": "evals", "INPUT_OUTPUT_DIR": "out"}
    proc = subprocess.run(["bash", str(ROOT / "entrypoint.sh")], cwd=project, env=gate, capture_output=True,
                          text=True, timeout=300, stdin=subprocess.DEVNULL)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "exit-code=0" in output.read_text()
    _assert_ran_in_the_team_environment(project / "out" / "results.jsonl", layout, out)


def _git(repo: Path, env: dict[str, str], *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True,
                          timeout=120, stdin=subprocess.DEVNULL).stdout


@pytest.mark.skipif(not PRE_COMMIT.exists(), reason="pre-commit is a dev dependency: pip install -e '.[dev]'")
def test_the_system_pre_commit_hook_uses_the_developer_environment(layout: Layout, tmp_path: Path) -> None:
    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_text("[user]\n\tname = Test\n\temail = test@example.invalid\n"
                         "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n")
    # The developer installed agentv-gate in their environment: on PATH, after the team's python3.
    env = {**layout.env(layout.gate / "bin"), "PRE_COMMIT_HOME": str(tmp_path / "store"),
           "PRE_COMMIT_COLOR": "never", "GIT_CONFIG_GLOBAL": str(gitconfig), "GIT_CONFIG_NOSYSTEM": "1"}
    hooks = tmp_path / "hook-repo"
    hooks.mkdir()
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy2(ROOT / name, hooks / name)
    _git(hooks, env, "init", "-q")
    _git(hooks, env, "add", "-A")
    _git(hooks, env, "commit", "-q", "-m", "hooks")
    sha = _git(hooks, env, "rev-parse", "HEAD").strip()

    project = _project(tmp_path / "project")
    (project / ".gitignore").write_text(".agentv-gate/\n")
    _git(project, env, "init", "-q")
    _git(project, env, "add", "-A")
    proc = subprocess.run([str(PRE_COMMIT), "try-repo", str(hooks), "agentv-gate-system", "--ref", sha, "--verbose"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "agentv-gate run (your environment)" in out and "Passed" in out
    _assert_ran_in_the_team_environment(project / ".agentv-gate" / "results.jsonl", layout, out)
