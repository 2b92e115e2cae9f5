"""The pre-commit hooks, run for real by pre-commit in throwaway git repositories.

A copy of this project (package, pyproject, .pre-commit-hooks.yaml) is committed to a temporary
hook repository, so the tests see exactly what a user's `repo:`/`rev:` would fetch and do not
depend on what else is uncommitted in the working tree. pre-commit then builds the hook's
virtualenv the way it does for users (pip install of the hook repository). That build is the slow
part, so it happens once, in a store shared by every real `git commit` below (`pre-commit try-repo`
would build it again in a throwaway store, for the same hooks).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.helpers.suites import CAPITAL_SUITE as GOOD_SUITE
from tests.helpers.suites import PARIS_TARGETS as TARGETS
from tests.helpers.suites import RIVER_CASE as FAILING_CASE

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
PRE_COMMIT = VENV_BIN / "pre-commit"

BROKEN_SUITE = """\
tests:
  - id: judged
    input: What is the capital of France?
    assert:
      - name: judge
        type: code_judge
        script: ./judges/missing.py
"""

pytestmark = pytest.mark.skipif(not PRE_COMMIT.exists(), reason="pre-commit is a dev dependency: pip install -e '.[dev]'")


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "PRE_COMMIT", "GIT_"))}
    gitconfig = home / "gitconfig"
    if not gitconfig.exists():
        gitconfig.write_text("[user]\n\tname = Test\n\temail = test@example.invalid\n"
                             "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n")
    env.update({
        "PRE_COMMIT_HOME": str(home / "pre-commit-store"),
        "PRE_COMMIT_COLOR": "never",
        "GIT_CONFIG_GLOBAL": str(gitconfig),
        "GIT_CONFIG_NOSYSTEM": "1",
        "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
    })
    return env


def _git(repo: Path, env: dict[str, str], *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=check,
                          timeout=300, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("precommit-home")


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory, home: Path) -> tuple[Path, str]:
    """This project as a hook repository: (path, commit)."""
    repo = tmp_path_factory.mktemp("hook-repo")
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy2(ROOT / name, repo / name)
    shutil.copytree(ROOT / "agentv_gate", repo / "agentv_gate",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    env = _env(home)
    _git(repo, env, "init", "-q")
    _git(repo, env, "add", "-A")
    _git(repo, env, "commit", "-q", "-m", "hook repo")
    sha = _git(repo, env, "rev-parse", "HEAD").stdout.strip()
    return repo, sha


def _consumer(path: Path, env: dict[str, str]) -> Path:
    path.mkdir()
    _git(path, env, "init", "-q")
    (path / ".agentv").mkdir()
    (path / ".agentv" / "targets.yaml").write_text(TARGETS)
    (path / "evals").mkdir()
    (path / "evals" / "geo.yaml").write_text(GOOD_SUITE)
    (path / "README.md").write_text("consumer\n")
    return path


def _status(output: str, hook_name: str) -> str:
    """'Passed', 'Failed' or 'Skipped' as pre-commit printed it for the hook."""
    match = re.search(rf"^{re.escape(hook_name)}\.*(?:\(no files to check\))?(Passed|Failed|Skipped)$",
                      output, re.MULTILINE)
    assert match, f"no status line for {hook_name!r} in:\n{output}"
    return match.group(1)


# ----------------------------------------------------------------------- the files: filter


HOOKS = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
EVAL_FILE_HOOKS = [h for h in HOOKS if not h["id"].startswith("agentv-gate-all")]
ALL_SUITES_HOOK = next(h for h in HOOKS if h["id"] == "agentv-gate-all")
SYSTEM_HOOKS = {"agentv-gate-system": "agentv-gate", "agentv-gate-all-system": "agentv-gate-all"}
"""Each hook that runs suites has a variant in the developer's own environment."""


def _selects(hook: dict, path: str) -> bool:
    """The same include/exclude logic pre-commit applies (re.search on the staged path)."""
    return bool(re.search(hook.get("files", ""), path)) and not re.search(hook.get("exclude", "^$"), path)


@pytest.mark.parametrize("hook", EVAL_FILE_HOOKS, ids=[h["id"] for h in EVAL_FILE_HOOKS])
@pytest.mark.parametrize("path, selected", [
    ("evals/geo.yaml", True),
    ("evals/nested/cases.jsonl", True),
    ("services/agent/evals/smoke.yml", True),
    ("tests/geo.eval.yaml", True),
    ("geo.eval.jsonl", True),
    ("evals/judges/check.py", False),  # judge scripts do not trigger (see .pre-commit-hooks.yaml)
    ("evals/prompts/judge.md", False),
    ("evals/targets.yaml", False),
    ("evals/.agentv/targets.yaml", False),
    (".agentv/targets.yaml", False),
    ("config/settings.yaml", False),
    (".github/workflows/ci.yml", False),
    ("my_evals/x.yaml", False),
])
def test_hooks_select_eval_files_only(hook: dict, path: str, selected: bool) -> None:
    assert _selects(hook, path) is selected


@pytest.mark.parametrize("path, selected", [
    ("evals/geo.yaml", True),
    ("tests/geo.eval.yaml", True),
    ("evals/judges/check.py", True),  # a judge script changes every score it gives
    ("judges/keywords.js", True),
    ("evals/prompts/judge.md", True),
    ("prompts/rubric.md", True),
    (".agentv/targets.yaml", True),  # a different model, endpoint or agent command
    ("config/targets.yml", True),
    ("README.md", True),  # by default every commit: a `files:` override narrows it
    ("src/agent/main.py", True),  # the agent's code, wherever it lives
    (".github/workflows/ci.yml", True),
])
def test_the_all_suites_hook_selects_what_the_suites_depend_on(path: str, selected: bool) -> None:
    assert _selects(ALL_SUITES_HOOK, path) is selected


def test_hook_definitions() -> None:
    by_id = {h["id"]: h for h in HOOKS}
    assert set(by_id) == {"agentv-gate-validate", "agentv-gate", "agentv-gate-system", "agentv-gate-all",
                          "agentv-gate-all-system"}
    assert by_id["agentv-gate-validate"]["entry"].split()[:2] == ["agentv-gate", "validate"]
    assert by_id["agentv-gate"]["entry"].split()[:2] == ["agentv-gate", "run"]
    assert by_id["agentv-gate-all"]["entry"].split()[:2] == ["agentv-gate", "run"]
    for hook_id in ("agentv-gate", "agentv-gate-all"):
        assert by_id[hook_id]["require_serial"] is True  # one run, one report folder
    for hook in HOOKS:
        assert hook["language"] == ("system" if hook["id"] in SYSTEM_HOOKS else "python")
    # The variant for the developer's own environment is the same run with the agentv-gate on PATH
    # (tests/packaging/test_user_environment.py and test_team_first_day.py run them).
    same = ("id", "name", "description", "language")
    for system_id, isolated_id in SYSTEM_HOOKS.items():
        assert {k: v for k, v in by_id[system_id].items() if k not in same} == \
            {k: v for k, v in by_id[isolated_id].items() if k not in same}
    for hook in EVAL_FILE_HOOKS:
        assert hook.get("pass_filenames", True) is True  # the touched eval files
    assert ALL_SUITES_HOOK["pass_filenames"] is False  # every suite, whatever file triggered it


# ----------------------------------------------------------------------- real commits


@pytest.fixture(scope="module")
def committing_repo(tmp_path_factory: pytest.TempPathFactory, home: Path,
                    hook_repo: tuple[Path, str]) -> Iterator[tuple[Path, dict[str, str]]]:
    """A repository with the hooks installed from the hook repo's commit, as a user configures them."""
    repo, sha = hook_repo
    env = _env(home)
    work = _consumer(tmp_path_factory.mktemp("committing") / "repo", env)
    (work / ".pre-commit-config.yaml").write_text(yaml.safe_dump({"repos": [{
        "repo": str(repo), "rev": sha,
        "hooks": [{"id": "agentv-gate-validate"}, {"id": "agentv-gate"}],
    }]}))
    (work / ".gitignore").write_text(".agentv-gate/\n")
    proc = subprocess.run([str(PRE_COMMIT), "install"], cwd=work, env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    yield work, env


def _commit(work: Path, env: dict[str, str], message: str) -> tuple[int, str]:
    _git(work, env, "add", "-A")
    proc = _git(work, env, "commit", "-m", message, check=False)
    return proc.returncode, proc.stdout + proc.stderr


def _commit_count(work: Path, env: dict[str, str]) -> int:
    proc = _git(work, env, "rev-list", "--count", "HEAD", check=False)
    return int(proc.stdout.strip()) if proc.returncode == 0 else 0


def test_commits_pass_fail_and_skip(committing_repo: tuple[Path, dict[str, str]]) -> None:
    work, env = committing_repo

    # 1. A passing suite: both hooks run and pass, the commit is made.
    code, out = _commit(work, env, "add evals")
    assert code == 0, out
    assert _status(out, "agentv-gate validate") == "Passed"
    assert _status(out, "agentv-gate run") == "Passed"
    assert _commit_count(work, env) == 1

    # 2. A case below its threshold: validation passes, the run fails, no commit.
    (work / "evals" / "geo.yaml").write_text(GOOD_SUITE + FAILING_CASE)
    code, out = _commit(work, env, "add a failing case")
    assert code == 1, out
    assert _status(out, "agentv-gate validate") == "Passed"
    assert _status(out, "agentv-gate run") == "Failed"
    assert "river" in out
    assert _commit_count(work, env) == 1

    # 3. A suite whose judge script is missing: validation fails with the file and line.
    (work / "evals" / "geo.yaml").write_text(GOOD_SUITE)
    (work / "evals" / "judged.yaml").write_text(BROKEN_SUITE)
    code, out = _commit(work, env, "add a broken suite")
    assert code == 1, out
    assert _status(out, "agentv-gate validate") == "Failed"
    assert re.search(r"evals/judged\.yaml:\d+", out), out
    assert "missing.py" in out  # the located validation error names the script it could not find
    # The run refuses a commit whose eval files do not load (exit 2) rather than gate on part of it.
    assert _status(out, "agentv-gate run") == "Failed"
    assert "- exit code: 2" in out
    assert _commit_count(work, env) == 1

    # 4. Fixed with an executable judge: both pass.
    judges = work / "evals" / "judges"
    judges.mkdir()
    judge = judges / "missing.py"
    judge.write_text("#!/usr/bin/env python3\nimport json, sys\njson.load(sys.stdin)\n"
                     "print(json.dumps({'score': 1.0, 'hits': ['ok'], 'misses': []}))\n")
    judge.chmod(0o755)
    code, out = _commit(work, env, "add the judge")
    assert code == 0, out
    assert _status(out, "agentv-gate validate") == "Passed"
    assert _commit_count(work, env) == 2

    # 5. No eval file touched (a README and a judge script): both hooks are skipped.
    (work / "README.md").write_text("consumer, edited\n")
    judge.write_text(judge.read_text() + "# tweak\n")
    code, out = _commit(work, env, "docs")
    assert code == 0, out
    assert _status(out, "agentv-gate validate") == "Skipped"
    assert _status(out, "agentv-gate run") == "Skipped"
    assert _commit_count(work, env) == 3


# ----------------------------------------------------------------------- the all-suites hook

AGENT = """\
import sys
print("Paris is the capital of France.")
"""

AGENT_SUITE = """\
tests:
  - id: capital
    input: What is the capital of France?
    target: agent
    assert:
      - name: judged
        type: code_judge
        script: [python3, judges/check.py]
"""

AGENT_TARGETS = TARGETS + """\
  - name: agent
    provider: cli
    command_template: python3 ../agent/agent.py
"""

PASSING_JUDGE = """\
import json, sys
answer = json.load(sys.stdin)["answer"]
print(json.dumps({"score": 1.0 if "Paris" in answer else 0.0, "misses": [] if "Paris" in answer else ["not Paris"]}))
"""


def test_the_all_suites_hook_reruns_the_suites_when_their_dependencies_change(
        tmp_path_factory: pytest.TempPathFactory, home: Path, hook_repo: tuple[Path, str]) -> None:
    """A judge script, targets.yaml, or (through a `files:` override) the agent's code: each re-runs every suite."""
    repo, sha = hook_repo
    env = _env(home)
    work = _consumer(tmp_path_factory.mktemp("all-suites") / "repo", env)
    (work / ".pre-commit-config.yaml").write_text(yaml.safe_dump({"repos": [{
        "repo": str(repo), "rev": sha,
        "hooks": [{"id": "agentv-gate-all",
                   "files": r"^agent/|(^|/)(evals|judges|prompts|\.agentv)/|(^|/)targets\.ya?ml$"}],
    }]}))
    (work / ".gitignore").write_text(".agentv-gate/\n")
    (work / ".agentv" / "targets.yaml").write_text(AGENT_TARGETS)
    (work / "evals" / "geo.yaml").write_text(AGENT_SUITE)
    (work / "evals" / "judges").mkdir()
    judge = work / "evals" / "judges" / "check.py"
    judge.write_text(PASSING_JUDGE)
    (work / "agent").mkdir()
    agent = work / "agent" / "agent.py"
    agent.write_text(AGENT)
    proc = subprocess.run([str(PRE_COMMIT), "install"], cwd=work, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    hook = "agentv-gate run (all suites)"

    code, out = _commit(work, env, "the agent and its suite")
    assert code == 0 and _status(out, hook) == "Passed", out

    # 1. Only the judge changes, and now fails the answer: the suite runs again and the commit stops.
    judge.write_text(PASSING_JUDGE.replace('"Paris" in answer', '"Paris, France" in answer'))
    code, out = _commit(work, env, "stricter judge")
    assert code == 1 and _status(out, hook) == "Failed", out
    judge.write_text(PASSING_JUDGE)

    # 2. Only the agent's code changes (the override names agent/): a regression is caught.
    agent.write_text(AGENT.replace("Paris", "Lyon"))
    code, out = _commit(work, env, "agent regression")
    assert code == 1 and _status(out, hook) == "Failed", out
    assert "capital" in out

    # 3. Only targets.yaml changes: the suites run with the new target.
    agent.write_text(AGENT)  # back to the committed agent
    (work / ".agentv" / "targets.yaml").write_text(AGENT_TARGETS + "    timeout_seconds: 30\n")
    code, out = _commit(work, env, "agent timeout")
    assert code == 0 and _status(out, hook) == "Passed", out

    # 4. Nothing the suites depend on: skipped without starting anything.
    (work / "README.md").write_text("consumer, edited\n")
    code, out = _commit(work, env, "docs")
    assert code == 0 and _status(out, hook) == "Skipped", out
    assert _commit_count(work, env) == 3

    # 5. The agent imports the team's own package, which pre-commit's virtualenv cannot have: the
    #    hook fails saying so once, and names the hooks that run in the developer's environment.
    agent.write_text("import support_agent_of_the_team\n" + AGENT)
    code, out = _commit(work, env, "agent imports its package")
    assert code == 1 and _status(out, hook) == "Failed", out
    hints = [line for line in out.splitlines() if "could not import 'support_agent_of_the_team'" in line]
    assert len(hints) == 1, out
    assert "pre-commit's own virtualenv" in hints[0] and "`agentv-gate-all-system`" in hints[0], hints[0]


# ----------------------------------------------------------------------- the README's own snippet


def _readme_precommit_config(repo: Path, sha: str) -> str:
    """The README's `.pre-commit-config.yaml` block, verbatim but for `repo:` and `rev:`."""
    readme = (ROOT / "README.md").read_text()
    block = next(b for b in re.findall(r"```yaml\n(.*?)```", readme, re.DOTALL)
                 if b.startswith("# .pre-commit-config.yaml"))
    block = re.sub(r"(?m)^(\s*- repo: ).*$", lambda m: m.group(1) + str(repo), block)
    return re.sub(r"(?m)^(\s*rev: ).*$", lambda m: m.group(1) + sha, block)


def _agent_project(work: Path, agent_dir: str) -> Path:
    """A consumer whose agent (a cli target) lives in `agent_dir`; returns the agent's file."""
    (work / ".gitignore").write_text(".agentv-gate/\n.agentv-gate-cache/\n")
    (work / ".agentv" / "targets.yaml").write_text(AGENT_TARGETS.replace("../agent/agent.py",
                                                                         f"../{agent_dir}/agent.py"))
    (work / "evals" / "geo.yaml").write_text(AGENT_SUITE)
    (work / "evals" / "judges").mkdir()
    (work / "evals" / "judges" / "check.py").write_text(PASSING_JUDGE)
    (work / agent_dir).mkdir(parents=True)
    agent = work / agent_dir / "agent.py"
    agent.write_text(AGENT)
    return agent


@pytest.mark.parametrize("config", ["readme", "hook default"])
def test_an_agent_only_commit_that_breaks_a_case_is_blocked(
        config: str, tmp_path_factory: pytest.TempPathFactory, home: Path, hook_repo: tuple[Path, str]) -> None:
    """The README's snippet pasted as is, and `agentv-gate-all-system` with no override at all: a
    commit that changes only the agent's code re-runs the suites and a regression stops it."""
    repo, sha = hook_repo
    env = _env(home)
    work = _consumer(tmp_path_factory.mktemp("readme-snippet") / "repo", env)
    if config == "readme":
        (work / ".pre-commit-config.yaml").write_text(_readme_precommit_config(repo, sha))
        agent = _agent_project(work, "src/support_agent")
    else:
        (work / ".pre-commit-config.yaml").write_text(yaml.safe_dump({"repos": [{
            "repo": str(repo), "rev": sha, "hooks": [{"id": "agentv-gate-all-system"}]}]}))
        agent = _agent_project(work, "service")
    proc = subprocess.run([str(PRE_COMMIT), "install"], cwd=work, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    hook = "agentv-gate run (all suites, your environment)"
    code, out = _commit(work, env, "the agent and its suite")
    assert code == 0 and _status(out, hook) == "Passed", out

    agent.write_text(AGENT.replace("Paris", "Lyon"))
    code, out = _commit(work, env, "agent regression")
    assert code == 1 and _status(out, hook) == "Failed", out
    assert "capital" in out
    assert _commit_count(work, env) == 1


def test_a_hook_stopped_by_unset_variables_says_what_to_do(
        tmp_path_factory: pytest.TempPathFactory, home: Path, hook_repo: tuple[Path, str]) -> None:
    repo, sha = hook_repo
    env = _env(home)
    env.pop("GATE_TEST_UNSET_KEY", None)
    work = _consumer(tmp_path_factory.mktemp("unset-env") / "repo", env)
    (work / ".pre-commit-config.yaml").write_text(yaml.safe_dump({"repos": [{
        "repo": str(repo), "rev": sha, "hooks": [{"id": "agentv-gate-all-system"}]}]}))
    (work / ".gitignore").write_text(".agentv-gate/\n.agentv-gate-cache/\n")
    (work / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: default\n    provider: openai\n    endpoint: http://127.0.0.1:9/v1\n"
        "    api_key: ${{ GATE_TEST_UNSET_KEY }}\n    model: m\n")
    proc = subprocess.run([str(PRE_COMMIT), "install"], cwd=work, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    code, out = _commit(work, env, "needs a key")
    assert code == 1, out
    assert "- exit code: 2" in out and "GATE_TEST_UNSET_KEY" in out
    assert "args:" in out and "--skip-missing-env" in out, out
