"""In GitHub Actions a configuration problem is annotated at its file:line and listed in the job summary.

Before, a run stopped by an unknown evaluator type, a missing judge script, an unknown target or
a broken targets.yaml printed its located problems to the log only: no annotation on the pull
request, and a job summary saying "the log of this step says why". Now `run`, `validate` and
`merge` annotate each problem where it is (escaped like every annotation) and put them all in
the job summary; `validate` also writes a summary when everything is valid.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.github_runner import runner_commands

GOOD = """
tests:
  - id: capital
    input: What is the capital of France?
    assert:
      - {type: contains, value: ok}
"""


@dataclass
class GithubRun:
    proc: subprocess.CompletedProcess[str]
    summary: str

    @property
    def commands(self) -> list[str]:
        return runner_commands(self.proc.stdout + self.proc.stderr)

    def annotation(self, where: str) -> str:
        """The one `::error` annotation at `file=...,line=...` (`where` is `file,line=N`)."""
        found = [c for c in self.commands if c.startswith(f"::error file={where},")]
        assert len(found) == 1, self.commands
        return found[0]


def github_cli(repo: Path, *args: str) -> GithubRun:
    summary = repo.parent / "step-summary.md"
    summary.write_text("")
    output = repo.parent / "github-output"
    output.write_text("")
    proc = run_cli(*args, cwd=repo, env={"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(repo),
                                         "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(output)})
    return GithubRun(proc, summary.read_text())


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


@pytest.mark.parametrize("command", ["run", "validate"])
def test_eval_file_problems_are_annotated_where_they_are(project: Path, command: str) -> None:
    write(project / "evals" / "bad.eval.yaml", """
        tests:
          - id: a
            input: q
            assert:
              - type: nonsense
          - id: b
            input: q
            assert:
              - {name: code_judge, type: code_judge,
                 script: [python3, judges/missing.py]}
          - id: c
            input: q
            target: nope
            assert:
              - {type: contains, value: ok}
        """)
    gh = github_cli(project, command, "evals")
    assert gh.proc.returncode == (2 if command == "run" else 1), gh.proc.stderr
    unknown = gh.annotation("evals/bad.eval.yaml,line=5")
    assert "title=agentv-gate%3A configuration error" in unknown
    assert "unknown evaluator type 'nonsense'" in unknown
    assert "missing.py" in gh.annotation("evals/bad.eval.yaml,line=10")  # at `script:`
    assert "### agentv-gate: " + ("configuration error" if command == "run" else "eval files have problems") in gh.summary
    assert "evals/bad.eval.yaml:5" in gh.summary and "unknown evaluator type 'nonsense'" in gh.summary
    assert "evals/bad.eval.yaml:10" in gh.summary
    if command == "validate":  # `run` stops at the eval files; `validate` goes on to check the targets
        assert "no target named 'nope'" in gh.annotation("evals/bad.eval.yaml,line=13")
        assert "evals/bad.eval.yaml:13" in gh.summary


def test_an_unknown_target_stops_the_run_with_an_annotation(project: Path) -> None:
    write(project / "evals" / "ok.eval.yaml", GOOD.replace("    input:", "    target: nope\n    input:"))
    gh = github_cli(project, "run", "evals")
    assert gh.proc.returncode == 2
    assert "no target named 'nope'" in gh.annotation("evals/ok.eval.yaml,line=3")
    assert "evals/ok.eval.yaml:3" in gh.summary and "`run` command stopped" in gh.summary


def test_a_targets_file_problem_is_annotated_in_targets_yaml(project: Path) -> None:
    write(project / ".agentv" / "targets.yaml", """
        targets:
          - name: default
            provider: openai
            model: gpt-4o-mini
            api_key: sk-literal-secret-in-the-file
        """)
    write(project / "evals" / "ok.eval.yaml", GOOD)
    gh = github_cli(project, "run", "evals")
    assert gh.proc.returncode == 2
    annotation = gh.annotation(".agentv/targets.yaml,line=5")  # at `api_key:`
    assert "api_key must use ${{ VARIABLE_NAME }}" in annotation
    assert "sk-literal-secret-in-the-file" not in gh.proc.stdout + gh.summary
    assert ".agentv/targets.yaml:5" in gh.summary


def test_a_problem_without_a_place_is_still_annotated_and_summarised(project: Path) -> None:
    (project / ".agentv" / "targets.yaml").unlink()
    write(project / "evals" / "ok.eval.yaml", GOOD)
    gh = github_cli(project, "run", "evals")
    assert gh.proc.returncode == 2
    errors = [c for c in gh.commands if c.startswith("::error ")]
    assert len(errors) == 1 and "no targets file" in errors[0] and "file=" not in errors[0]
    assert "no targets file" in gh.summary


def test_validate_summarises_a_valid_suite(project: Path) -> None:
    write(project / "evals" / "ok.eval.yaml", GOOD)
    write(project / "evals" / "more.eval.yaml", GOOD + GOOD.replace("tests:\n", "").replace("capital", "city"))
    gh = github_cli(project, "validate", "evals")
    assert gh.proc.returncode == 0, gh.proc.stderr
    assert "2 files, 3 cases valid" in gh.summary
    assert not [c for c in gh.commands if c.startswith("::error")]


def test_validate_annotates_warnings_as_warnings(project: Path) -> None:
    write(project / "evals" / "old.eval.yaml", "tests:\n  - id: a\n    criteria: c\n    input: q\n    grader: llm_judge\n")
    gh = github_cli(project, "validate", "evals")
    assert gh.proc.returncode == 0
    assert any(c.startswith("::warning file=evals/old.eval.yaml,line=5,") and "deprecated" in c for c in gh.commands)
    assert "1 file, 1 case valid" in gh.summary and "deprecated" in gh.summary


def test_merge_annotates_a_corrupt_shard_at_its_line(project: Path) -> None:
    write(project / "evals" / "ok.eval.yaml", GOOD)
    assert run_cli("run", "evals", cwd=project).returncode == 0
    results = project / ".agentv-gate" / "results.jsonl"
    row = results.read_text().splitlines()[0]
    results.write_text(f"{row}\n{{not json\n{json.dumps({**json.loads(row), 'eval_id': 'other'})}\n")
    gh = github_cli(project, "merge", ".agentv-gate/results.jsonl", "--output-dir", "merged")
    assert gh.proc.returncode == 2
    assert "not valid JSON" in gh.annotation(".agentv-gate/results.jsonl,line=2") or \
        "JSON" in gh.annotation(".agentv-gate/results.jsonl,line=2")
    assert ".agentv-gate/results.jsonl:2" in gh.summary


def test_merge_with_a_missing_shard_says_so_in_the_summary(project: Path) -> None:
    write(project / "evals" / "ok.eval.yaml", GOOD + GOOD.replace("tests:\n", "").replace("capital", "city"))
    assert run_cli("run", "--shard", "1/2", "evals", cwd=project).returncode == 0
    gh = github_cli(project, "merge", ".agentv-gate/results.jsonl", "--output-dir", "merged")
    assert gh.proc.returncode == 2
    assert any(c.startswith("::error title=") and "incomplete shard results" in c for c in gh.commands)
    assert "incomplete shard results" in gh.summary and "`merge` command" in gh.summary


def test_problem_text_cannot_become_a_workflow_command(project: Path) -> None:
    write(project / "evals" / "evil.eval.yaml", """
        tests:
          - id: a
            input: q
            assert:
              - type: "x\\n::add-mask::stolen\\n##[set-output name=a;]b"
        """)
    gh = github_cli(project, "run", "evals")
    assert gh.proc.returncode == 2
    commands = gh.commands
    assert commands and all(c.startswith(("::error ", "::warning ")) for c in commands), commands
    assert "%0A::add-mask::stolen" in gh.annotation("evals/evil.eval.yaml,line=5")
    assert "##[" not in gh.summary and "<" not in gh.summary.replace("<br>", "")
