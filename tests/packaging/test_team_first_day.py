"""The first day of a Python agent team, end to end through real `git commit`s.

A scratch team repository: a src-layout agent package (`support_agent`, installed editable in the
team's virtualenv as `pip install -e .` would, by a .pth file) that imports a third-party package
(`tinytext`) which only the team's virtualenv has, never agentv-gate's; a cli target running it, a
code judge that imports the team's package, an LLM judge whose key the developer does not have,
and a known gap listed in the gate's quarantine. agentv-gate lives in a virtualenv of its own, on
PATH after the team's, as when a developer installs it with pipx.

The hooks come from a copy of this project committed as a hook repository (as `repo:`/`rev:` fetch
it). Only `language: system` hooks and the validate hook's entry are used, and the validate hook
runs here as the system variant's command does, so no hook virtualenv has to be built (offline).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.packaging.test_user_environment import GATE_PYTHON, Layout, _purelib, _team_base_python, _venv

ROOT = Path(__file__).resolve().parents[2]
PRE_COMMIT = Path(sys.executable).parent / "pre-commit"

TINYTEXT = '''\
def polite(text):
    return "Hello! " + text
'''

AGENT_SOURCE = '''\
import json
import re
import sys

import tinytext  # a third-party package: only in the team's virtualenv

POLICY = "Refunds within 30 days."


def answer(question):
    if "refund" in question.lower():
        return tinytext.polite(POLICY)
    return tinytext.polite("How can I help?")


if __name__ == "__main__":
    print(json.dumps({"text": answer(sys.argv[1])}))
'''

JUDGE = '''\
from support_agent.agent import POLICY  # the team's own package
from agentv_gate.sdk import CodeJudgeInput, define_code_judge


@define_code_judge
def judge(payload: CodeJudgeInput) -> dict:
    ok = POLICY in payload.answer
    return {"score": 1.0 if ok else 0.0, "hits": ["states the policy"] if ok else [],
            "misses": [] if ok else ["does not state the policy"]}
'''

TARGETS = """\
targets:
  - name: default
    provider: cli
    command: python3 -m support_agent.agent {PROMPT}
    cwd: ..
    healthcheck:
      command: python3 -c "import support_agent.agent"
    judge_target: judge
  - name: judge
    provider: openai
    base_url: ${{ TEAM_JUDGE_URL }}
    api_key: ${{ TEAM_JUDGE_KEY }}
    model: gpt-4o
"""

SUPPORT_SUITE = """\
tests:
  - id: greets
    input: Hi there
    assert:
      - type: contains
        value: Hello!
  - id: refund-policy
    input: Can I get a refund?
    assert:
      - name: policy
        type: code_judge
        script: python3 evals/judges/policy_judge.py
  - id: speaks-french
    input: Bonjour, pouvez-vous m'aider ?
    assert:
      - type: contains
        value: Bonjour
"""

QUALITY_SUITE = """\
tests:
  - id: tone
    input: My order is late.
    criteria: Apologises and offers help
"""

GATE = """\
quarantine:
  - id: speaks-french
    file: evals/support/support.eval.yaml
    reason: the agent answers in English only (#7)
"""

HOOK_FILES = r"^src/support_agent/|(^|/)(evals|judges|prompts|\.agentv)/|(^|/)targets\.ya?ml$|\.eval\.(ya?ml|jsonl)$"


def _git(repo: Path, env: dict[str, str], *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=check,
                          timeout=300, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> Layout:
    """The team's virtualenv (with tinytext) and agentv-gate's own (without), as test_user_environment builds them."""
    lay = Layout(tmp_path_factory.mktemp("team-day"))
    team_python = _venv(_team_base_python(), lay.team)
    (_purelib(team_python) / "tinytext.py").write_text(TINYTEXT)
    gate_python = _venv(GATE_PYTHON, lay.gate)
    import sysconfig

    (_purelib(gate_python) / "agentv_gate_checkout.pth").write_text(f"{ROOT}\n{sysconfig.get_paths()['purelib']}\n")
    lay.gate_cli.write_text(f"#!{gate_python}\nimport sys\nfrom agentv_gate.cli import main\nsys.exit(main())\n")
    lay.gate_cli.chmod(0o755)
    seen = subprocess.run([str(gate_python), "-c", "import tinytext"], capture_output=True, text=True, timeout=60)
    assert seen.returncode != 0, "agentv-gate's environment must not have the team's third-party package"
    return lay


@pytest.mark.skipif(not PRE_COMMIT.exists(), reason="pre-commit is a dev dependency: pip install -e '.[dev]'")
def test_a_python_team_commits_with_the_system_hooks(layout: Layout, tmp_path: Path) -> None:
    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_text("[user]\n\tname = Test\n\temail = test@example.invalid\n"
                         "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n")
    env = {**layout.env(layout.gate / "bin"), "PRE_COMMIT_HOME": str(tmp_path / "store"),
           "PRE_COMMIT_COLOR": "never", "GIT_CONFIG_GLOBAL": str(gitconfig), "GIT_CONFIG_NOSYSTEM": "1"}
    env = {k: v for k, v in env.items() if not k.startswith("TEAM_JUDGE")}  # no secrets at all

    hooks = tmp_path / "hook-repo"
    hooks.mkdir()
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy2(ROOT / name, hooks / name)
    _git(hooks, env, "init", "-q")
    _git(hooks, env, "add", "-A")
    _git(hooks, env, "commit", "-q", "-m", "hooks")
    sha = _git(hooks, env, "rev-parse", "HEAD").stdout.strip()
    system_hooks = {h["id"]: h for h in yaml.safe_load((hooks / ".pre-commit-hooks.yaml").read_text())}

    team = tmp_path / "team"
    package = team / "src" / "support_agent"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "agent.py").write_text(AGENT_SOURCE)
    (_purelib(layout.team / "bin" / "python") / "__editable__.support_agent.pth").write_text(f"{team / 'src'}\n")
    (team / "pyproject.toml").write_text('[project]\nname = "support-agent"\nversion = "0.1.0"\n'
                                         'dependencies = ["tinytext"]\n')
    (team / ".agentv").mkdir()
    (team / ".agentv" / "targets.yaml").write_text(TARGETS)
    (team / ".agentv" / "gate.yaml").write_text(GATE)
    (team / "evals" / "support").mkdir(parents=True)
    (team / "evals" / "judges").mkdir()
    (team / "evals" / "quality").mkdir()
    (team / "evals" / "support" / "support.eval.yaml").write_text(SUPPORT_SUITE)
    (team / "evals" / "judges" / "policy_judge.py").write_text(JUDGE)
    (team / "evals" / "quality" / "tone.eval.yaml").write_text(QUALITY_SUITE)
    (team / ".gitignore").write_text(".agentv-gate/\n__pycache__/\n")
    # The README's "Python agent team" configuration: validate everything, run the suites the
    # developer can run (the LLM-judged ones run in CI, where the key is) in their own environment.
    (team / ".pre-commit-config.yaml").write_text(yaml.safe_dump({"repos": [{
        "repo": str(hooks), "rev": sha,
        "hooks": [
            {"id": "agentv-gate-all-system", "files": HOOK_FILES, "args": ["evals/support"]},
        ]}, {"repo": "local", "hooks": [
            {"id": "agentv-gate-validate", "name": "agentv-gate validate",
             "entry": system_hooks["agentv-gate-validate"]["entry"], "language": "system",
             "files": system_hooks["agentv-gate-validate"]["files"],
             "exclude": system_hooks["agentv-gate-validate"]["exclude"]},
        ]}]}, sort_keys=False))
    _git(team, env, "init", "-q")
    installed = subprocess.run([str(PRE_COMMIT), "install"], cwd=team, env=env, capture_output=True, text=True,
                               timeout=120)
    assert installed.returncode == 0, installed.stdout + installed.stderr

    # 1. The first commit: validate passes without the judge's key; the suite runs in the team's
    #    environment and passes, the known gap reported as quarantined.
    _git(team, env, "add", "-A")
    first = _git(team, env, "commit", "-m", "agent and evals", check=False)
    out = first.stdout + first.stderr
    assert first.returncode == 0, out
    assert "agentv-gate validate" in out and "agentv-gate run (all suites, your environment)" in out
    validated = subprocess.run([str(PRE_COMMIT), "run", "agentv-gate-validate", "--all-files", "--verbose"], cwd=team,
                               env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert "needed by `run`: TEAM_JUDGE_KEY, TEAM_JUDGE_URL (target(s) judge)" in validated.stdout
    rows = {r["eval_id"]: r for r in map(json.loads, (team / ".agentv-gate/results.jsonl").read_text().splitlines())}
    assert set(rows) == {"greets", "refund-policy", "speaks-french"}
    assert rows["refund-policy"]["score"] == 1.0, rows["refund-policy"]
    assert rows["speaks-french"]["verdict"] == "fail"
    assert rows["speaks-french"]["quarantined"] == "the agent answers in English only (#7)"

    # 2. Only the agent's source changes, and breaks the refund answer: the suite runs again and
    #    the commit is blocked on that case.
    (package / "agent.py").write_text(AGENT_SOURCE.replace('POLICY = "Refunds within 30 days."',
                                                           'POLICY = "Refunds within 30 days."\nSAID = "No refunds."')
                                      .replace("tinytext.polite(POLICY)", "tinytext.polite(SAID)"))
    _git(team, env, "add", "-A")
    second = _git(team, env, "commit", "-m", "agent: new wording", check=False)
    out = second.stdout + second.stderr
    assert second.returncode != 0, out
    assert "files were modified by this hook" not in out
    assert "agentv-gate run (all suites, your environment)" in out and "Failed" in out
    assert "does not state the policy" in out, out
    assert "FAIL refund-policy (evals/support/support.eval.yaml:7" in out, out  # once (--quiet: no table)
    assert "QUARANTINED speaks-french" in out  # still failing, still not what blocks
    assert _git(team, env, "log", "--oneline").stdout.count("\n") == 1  # the change was not committed


def _walkthrough_blocks() -> dict[str, str]:
    """The walkthrough's code blocks that start with a `# path` comment, by that path."""
    text = (ROOT / "docs" / "walkthrough-python-team.md").read_text(encoding="utf-8")
    blocks = {}
    for body in re.findall(r"```(?:yaml|python)\n(.*?)```", text, re.DOTALL):
        first = body.splitlines()[0]
        if first.startswith("# ") and " " not in first[2:].split(" (")[0]:
            blocks[first[2:].split(" ")[0]] = body
    return blocks


def test_the_walkthrough_shows_the_set_up_this_test_commits_with() -> None:
    """docs/walkthrough-python-team.md is this test's team, block for block (what it shows is what runs)."""
    blocks = _walkthrough_blocks()
    assert yaml.safe_load(blocks[".agentv/targets.yaml"]) == yaml.safe_load(TARGETS)
    assert yaml.safe_load(blocks["evals/support/support.eval.yaml"]) == yaml.safe_load(SUPPORT_SUITE)
    assert " ".join(blocks["evals/judges/policy_judge.py"].split()[2:]) == " ".join(JUDGE.split())
    shown = yaml.safe_load(blocks[".agentv/gate.yaml"])["quarantine"][0]
    assert {k: v for k, v in shown.items() if k != "until"} == yaml.safe_load(GATE)["quarantine"][0]
    hooks = {h["id"]: h for h in yaml.safe_load(blocks[".pre-commit-config.yaml"])["repos"][0]["hooks"]}
    assert hooks["agentv-gate-all-system"] == {"id": "agentv-gate-all-system", "files": HOOK_FILES,
                                               "args": ["evals/support"]}
    assert "agentv-gate-validate" in hooks
