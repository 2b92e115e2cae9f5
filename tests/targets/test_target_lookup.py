"""Which targets.yaml and gate.yaml a run reads: AgentV's lookup, bounded by the repository root.

AgentV's `discoverTargetsFile` walks from the eval file's folder up to the repository root, trying
`targets.yaml`, `targets.yml`, `.agentv/targets.yaml`, `.agentv/targets.yml` in each folder. A target
on a provider AgentV knows and the gate does not run is a warning while unused (AgentV's own
repository-root targets.yaml holds `claude-cli` agents), and refused, naming it, when a run uses it.
Nothing above the repository root (a `~/.agentv/` on a self-hosted runner) is ever read.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.helpers.cli import run_cli

MOCK = 'targets:\n  - name: default\n    provider: mock\n    response: "{answer}"\n'
CASE = "tests:\n  - id: paris\n    input: Capital of France?\n{target}    assertions:\n      - {{type: contains, value: Paris}}\n"


def _repo(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def _agents_targets(repo: Path) -> Path:
    """A targets.yaml shaped like AgentV 4.42.4's own: a model target beside agents the gate does not run."""
    (repo / ".agentv").mkdir(exist_ok=True)
    path = repo / ".agentv" / "targets.yaml"
    path.write_text(MOCK.format(answer="The capital is Paris.")
                    + "  - name: claude\n    provider: claude-cli\n"
                    + "  - name: mirror\n    provider: cc-mirror\n", encoding="utf-8")
    return path


def test_unused_claude_cli_targets_are_located_warnings_not_a_refusal(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    _agents_targets(repo)
    (repo / "a.eval.yaml").write_text(CASE.format(target=""), encoding="utf-8")
    for command in ("run", "validate"):
        done = run_cli(command, "a.eval.yaml", cwd=repo)
        assert done.returncode == 0, done.stderr
        text = done.stdout + done.stderr
        assert ".agentv/targets.yaml:5: warning: target 'claude' (provider: claude-cli)" in text
        assert ".agentv/targets.yaml:7: warning: target 'mirror' (provider: cc-mirror)" in text


def test_a_run_using_a_claude_cli_target_is_refused_naming_it_before_any_call(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    _agents_targets(repo)
    (repo / "a.eval.yaml").write_text(CASE.format(target="    target: claude\n"), encoding="utf-8")
    for command, code in (("run", 2), ("validate", 1)):
        done = run_cli(command, "a.eval.yaml", cwd=repo)
        assert done.returncode == code, done.stdout + done.stderr
        assert ".agentv/targets.yaml:5: target 'claude': 'provider: claude-cli'" in done.stdout + done.stderr
    assert not (repo / ".agentv-gate" / "results.jsonl").exists()


def test_a_provider_no_agentv_knows_is_still_refused(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    (repo / ".agentv").mkdir()
    (repo / ".agentv" / "targets.yaml").write_text(MOCK.format(answer="Paris")
                                                   + "  - name: x\n    provider: claude-clii\n", encoding="utf-8")
    (repo / "a.eval.yaml").write_text(CASE.format(target=""), encoding="utf-8")
    done = run_cli("run", "a.eval.yaml", cwd=repo)
    assert done.returncode == 2
    assert "unsupported provider 'claude-clii'" in done.stderr


def test_targets_are_found_as_agentv_finds_them_nearest_the_eval_file(tmp_path: Path) -> None:
    """examples/targets.yaml (nearest the eval file) wins over the root's .agentv/targets.yaml, and in one
    folder `targets.yaml` wins over `.agentv/targets.yaml`, as AgentV's candidate order says."""
    repo = _repo(tmp_path / "repo")
    (repo / ".agentv").mkdir()
    (repo / ".agentv" / "targets.yaml").write_text(MOCK.format(answer="Rome"), encoding="utf-8")
    examples = repo / "examples"
    (examples / "feature" / ".agentv").mkdir(parents=True)
    (examples / "targets.yaml").write_text(MOCK.format(answer="Paris"), encoding="utf-8")
    (examples / "feature" / "a.eval.yaml").write_text(CASE.format(target=""), encoding="utf-8")
    done = run_cli("run", "examples/feature/a.eval.yaml", cwd=repo)
    assert done.returncode == 0, done.stdout + done.stderr
    (examples / "feature" / ".agentv" / "targets.yaml").write_text(MOCK.format(answer="Rome"), encoding="utf-8")
    assert run_cli("run", "examples/feature/a.eval.yaml", cwd=repo).returncode == 1
    (examples / "feature" / "targets.yaml").write_text(MOCK.format(answer="Paris"), encoding="utf-8")
    assert run_cli("run", "examples/feature/a.eval.yaml", cwd=repo).returncode == 0
    # --targets given explicitly still wins
    assert run_cli("run", "examples/feature/a.eval.yaml", "--targets", ".agentv/targets.yaml",
                   cwd=repo).returncode == 1


def _hostile_home(outer: Path) -> None:
    """Files a self-hosted runner's home (or any folder above the checkout) may hold."""
    (outer / ".agentv").mkdir(parents=True)
    (outer / ".agentv" / "targets.yaml").write_text(MOCK.format(answer="Paris"), encoding="utf-8")
    (outer / "targets.yaml").write_text(MOCK.format(answer="Paris"), encoding="utf-8")
    (outer / ".agentv" / "gate.yaml").write_text("quarantine:\n  - id: '*'\n    reason: hostile\n", encoding="utf-8")
    (outer / ".agentv" / "config.yaml").write_text("guideline_patterns: ['**/*.md']\n", encoding="utf-8")


def test_no_targets_or_gate_file_is_read_above_the_repository_root(tmp_path: Path) -> None:
    outer = tmp_path / "home"
    _hostile_home(outer)
    repo = _repo(outer / "checkout")
    (repo / "evals").mkdir()
    (repo / "evals" / "a.eval.yaml").write_text(CASE.format(target=""), encoding="utf-8")
    for command in ("run", "validate"):
        done = run_cli(command, "evals/a.eval.yaml", cwd=repo)
        assert done.returncode == 2, (command, done.stdout, done.stderr)
        assert "no targets file" in done.stderr
        assert str(outer / ".agentv") not in done.stdout + done.stderr
    # with its own failing target, the quarantine above the root does not hide the failure
    (repo / ".agentv").mkdir()
    (repo / ".agentv" / "targets.yaml").write_text(MOCK.format(answer="Rome"), encoding="utf-8")
    done = run_cli("run", "evals/a.eval.yaml", cwd=repo)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "hostile" not in done.stdout + done.stderr


def test_without_git_the_working_folder_is_the_root(tmp_path: Path) -> None:
    outer = tmp_path / "home"
    _hostile_home(outer)
    project = outer / "project"
    (project / "evals").mkdir(parents=True)
    (project / "evals" / "a.eval.yaml").write_text(CASE.format(target=""), encoding="utf-8")
    done = run_cli("run", "evals/a.eval.yaml", cwd=project)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "no targets file" in done.stderr


def test_project_files_symlinked_outside_the_repository_are_refused_located(tmp_path: Path) -> None:
    outer = tmp_path / "home"
    _hostile_home(outer)
    repo = _repo(outer / "checkout")
    (repo / ".agentv").mkdir()
    (repo / ".agentv" / "targets.yaml").write_text(MOCK.format(answer="Rome"), encoding="utf-8")
    (repo / "a.eval.yaml").write_text(CASE.format(target=""), encoding="utf-8")
    (repo / ".agentv" / "gate.yaml").symlink_to(outer / ".agentv" / "gate.yaml")
    for command in ("run", "validate"):
        done = run_cli(command, "a.eval.yaml", cwd=repo)
        assert done.returncode == 2, (command, done.stdout, done.stderr)
        assert "gate.yaml" in done.stderr and "resolves outside the repository" in done.stderr
    (repo / ".agentv" / "gate.yaml").unlink()
    (repo / "targets.yaml").symlink_to(outer / "targets.yaml")
    for command in ("run", "validate"):
        done = run_cli(command, "a.eval.yaml", cwd=repo)
        assert done.returncode == 2, (command, done.stdout, done.stderr)
        assert "targets.yaml:1:" in done.stderr and "resolves outside the repository" in done.stderr


def test_eval_files_finding_different_targets_files_are_refused_together(tmp_path: Path) -> None:
    """AgentV runs each eval file on its nearest targets file; one run here has one, so a run mixing them
    is refused (running one file's cases on the other's targets would call agents AgentV never calls)."""
    repo = _repo(tmp_path / "repo")
    (repo / ".agentv").mkdir()
    (repo / ".agentv" / "targets.yaml").write_text(MOCK.format(answer="Paris"), encoding="utf-8")
    (repo / "a").mkdir()
    (repo / "b").mkdir()
    (repo / "a" / "x.eval.yaml").write_text(CASE.format(target=""), encoding="utf-8")
    (repo / "b" / "x.eval.yaml").write_text(CASE.format(target=""), encoding="utf-8")
    (repo / "b" / "targets.yaml").write_text(MOCK.format(answer="Rome"), encoding="utf-8")
    done = run_cli("run", "a", "b", cwd=repo)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "find different targets files" in done.stderr and "b/targets.yaml" in done.stderr
    assert run_cli("run", "a", "b", "--targets", ".agentv/targets.yaml", cwd=repo).returncode == 0
    assert run_cli("run", "b", cwd=repo).returncode == 1
