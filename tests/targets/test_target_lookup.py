"""Which targets.yaml and gate.yaml a run reads: AgentV's lookup, bounded by the repository root.

AgentV's `discoverTargetsFile` walks from the eval file's folder up to the repository root, trying
`targets.yaml`, `targets.yml`, `.agentv/targets.yaml`, `.agentv/targets.yml` in each folder. A target
on a provider AgentV knows and the gate does not run is a warning while unused (AgentV's own
repository-root targets.yaml holds `pi-cli` and `cc-mirror` agents), and refused, naming it, when a run uses it.
Nothing above the repository root (a `~/.agentv/` on a self-hosted runner) is ever read.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply
from tests.helpers.reports import RESULTS, read_rows

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
                    + "  - name: pi\n    provider: pi-cli\n"
                    + "  - name: mirror\n    provider: cc-mirror\n", encoding="utf-8")
    return path


def test_unused_pi_cli_targets_are_located_warnings_not_a_refusal(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    _agents_targets(repo)
    (repo / "a.eval.yaml").write_text(CASE.format(target=""), encoding="utf-8")
    for command in ("run", "validate"):
        done = run_cli(command, "a.eval.yaml", cwd=repo)
        assert done.returncode == 0, done.stderr
        text = done.stdout + done.stderr
        assert ".agentv/targets.yaml:5: warning: target 'pi' (provider: pi-cli)" in text
        assert ".agentv/targets.yaml:7: warning: target 'mirror' (provider: cc-mirror)" in text


def test_a_run_using_a_pi_cli_target_is_refused_naming_it_before_any_call(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    _agents_targets(repo)
    (repo / "a.eval.yaml").write_text(CASE.format(target="    target: pi\n"), encoding="utf-8")
    for command, code in (("run", 2), ("validate", 1)):
        done = run_cli(command, "a.eval.yaml", cwd=repo)
        assert done.returncode == code, done.stdout + done.stderr
        assert ".agentv/targets.yaml:5: target 'pi': 'provider: pi-cli'" in done.stdout + done.stderr
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


@pytest.mark.parametrize("used", [False, True], ids=["unused", "used"])
def test_an_unknown_provider_with_a_custom_provider_script_is_refused_only_when_used(tmp_path: Path,
                                                                                     used: bool) -> None:
    """AgentV 4.42 runs `provider: file-output` with `.agentv/providers/file-output.ts` (found from the eval file's
    folder up): beside the suites that do not use it, the gate says so and runs them; a run using it is refused."""
    repo = _repo(tmp_path / "repo")
    (repo / ".agentv" / "providers").mkdir(parents=True)
    (repo / ".agentv" / "providers" / "file-output.ts").write_text("// AgentV runs me\n", encoding="utf-8")
    (repo / ".agentv" / "targets.yaml").write_text(MOCK.format(answer="Paris")
                                                   + "  - name: x\n    provider: file-output\n", encoding="utf-8")
    (repo / "a.eval.yaml").write_text(CASE.format(target="    target: x\n" if used else ""), encoding="utf-8")
    done = run_cli("run", "a.eval.yaml", cwd=repo)
    if used:
        assert done.returncode == 2
        assert "unsupported provider 'file-output'" in done.stderr
    else:
        assert done.returncode == 0, done.stdout + done.stderr
        assert (".agentv/targets.yaml:5: warning: target 'x' (provider: file-output) is unused here; AgentV 4.42 "
                "runs it with its custom provider script file-output.ts") in done.stderr


def test_a_custom_provider_script_above_the_repository_root_does_not_count(tmp_path: Path) -> None:
    """Project files are looked up to the repository root and never above: a `.agentv/providers/` script
    outside the repository is not the team's, so the unknown provider is still refused, unused or not."""
    (tmp_path / ".agentv" / "providers").mkdir(parents=True)
    (tmp_path / ".agentv" / "providers" / "file-output.ts").write_text("// not the team's\n", encoding="utf-8")
    repo = _repo(tmp_path / "repo")
    (repo / ".agentv").mkdir()
    (repo / ".agentv" / "targets.yaml").write_text(MOCK.format(answer="Paris")
                                                   + "  - name: x\n    provider: file-output\n", encoding="utf-8")
    (repo / "a.eval.yaml").write_text(CASE.format(target=""), encoding="utf-8")
    done = run_cli("run", "a.eval.yaml", cwd=repo)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "file-output" in done.stderr and "custom provider script" not in done.stderr


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


def test_eval_files_finding_different_targets_files_each_run_on_their_own(tmp_path: Path) -> None:
    """AgentV runs each eval file on its nearest targets file (`discoverTargetsFile`), so one run over both
    files asks a/'s `default` for a/'s case and b/'s `default` (same name, another agent) for b/'s; each row
    names its file, since the target's name alone no longer says which agent answered."""
    repo = _repo(tmp_path / "repo")
    (repo / ".agentv").mkdir()
    (repo / ".agentv" / "targets.yaml").write_text(MOCK.format(answer="Paris"), encoding="utf-8")
    (repo / "a").mkdir()
    (repo / "b").mkdir()
    (repo / "a" / "x.eval.yaml").write_text(CASE.format(target=""), encoding="utf-8")
    (repo / "b" / "x.eval.yaml").write_text(CASE.format(target="    target: rome\n")
                                            + "  - id: default-here\n    input: q\n    assertions:\n"
                                              "      - {type: contains, value: Rome}\n", encoding="utf-8")
    (repo / "b" / "targets.yaml").write_text(MOCK.format(answer="Rome")
                                             + '  - name: rome\n    provider: mock\n    response: "Paris, not Rome"\n',
                                             encoding="utf-8")
    assert run_cli("validate", "a", "b", cwd=repo).returncode == 0  # `rome` is checked against b/'s file only
    done = run_cli("run", "a", "b", cwd=repo)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {(r["suite"], r["eval_id"]): r for r in read_rows(repo / RESULTS)}
    assert {key: (r["target"], r["targets_file"], r["candidate_answer"]) for key, r in rows.items()} == {
        ("a/x.eval.yaml", "paris"): ("default", ".agentv/targets.yaml", "Paris"),
        ("b/x.eval.yaml", "paris"): ("rome", "b/targets.yaml", "Paris, not Rome"),
        ("b/x.eval.yaml", "default-here"): ("default", "b/targets.yaml", "Rome")}
    (repo / "b" / "x.eval.yaml").write_text(CASE.format(target="    target: rome\n").replace("rome", "roma"),
                                            encoding="utf-8")
    (repo / "a" / "x.eval.yaml").write_text(CASE.format(target="    target: defualt\n"), encoding="utf-8")
    done = run_cli("run", "a", "b", cwd=repo)  # a typo is still refused, each against its own file's names
    assert done.returncode == 2, done.stdout + done.stderr
    assert "'roma'" in done.stderr and "'rome'" in done.stderr and "'defualt'" in done.stderr, done.stderr
    assert run_cli("run", "b", "--targets", ".agentv/targets.yaml", cwd=repo).returncode == 2  # --targets: one file


def test_each_eval_file_s_judge_is_its_own_targets_file_s_even_under_one_name(tmp_path: Path,
                                                                             fake_llm: FakeLLMServer) -> None:
    """Both files name their judge `judge`, at different endpoints: each case is judged at its own file's."""
    repo = _repo(tmp_path / "repo")
    for folder in ("a", "b"):
        (repo / folder).mkdir()
        (repo / folder / "x.eval.yaml").write_text(f"tests:\n  - id: {folder}\n    input: q\n    criteria: c\n",
                                                   encoding="utf-8")
        (repo / folder / "targets.yaml").write_text(
            f"targets:\n  - name: default\n    provider: mock\n    response: hi\n    judge_target: judge\n"
            f"  - name: judge\n    provider: openai\n    base_url: {fake_llm.url}/{folder}/v1\n    model: m\n",
            encoding="utf-8")
        fake_llm.set_default(f"/{folder}/v1/chat/completions", FakeReply.openai(
            json.dumps({"score": 1.0 if folder == "a" else 0.25, "assertions": []})))
    done = run_cli("run", "a", "b", "--no-cache", cwd=repo)
    assert done.returncode == 1, done.stdout + done.stderr
    rows = {r["eval_id"]: r for r in read_rows(repo / RESULTS)}
    assert {k: (r["score"], r["targets_file"]) for k, r in rows.items()} == {
        "a": (1.0, "a/targets.yaml"), "b": (0.25, "b/targets.yaml")}
    assert [len(fake_llm.requests_for(f"/{f}/v1/chat/completions")) for f in ("a", "b")] == [1, 1]
