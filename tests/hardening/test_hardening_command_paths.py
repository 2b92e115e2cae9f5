"""A command word that is a path obeys the repository rule; reports never leave through a symlink.

`script: [/abs/outside/tool]` (and the prompt-script and composite-aggregator forms) once passed
`validate` and ran, because the first word fell back to a PATH lookup. A word with a `/` is a
path and resolves under the containment rule; a bare name (`python3`) is looked up on PATH.
A report path that is a symlink committed in the repository and pointing out of it is refused.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.hostile import no_traceback


def outside_tool(tmp_path: Path) -> tuple[Path, Path]:
    marker = tmp_path / "tool-ran"
    tool = write(tmp_path / "outside" / "tool", f"""
        #!/bin/sh
        cat > /dev/null
        echo ran > {marker}
        echo '{{"score": 1.0}}'
        """, executable=True)
    return tool, marker


def test_an_absolute_command_outside_the_repository_is_refused_in_every_form(tmp_path: Path) -> None:
    tool, marker = outside_tool(tmp_path)
    repo = make_repo(tmp_path / "repo", "targets:\n  - name: default\n    provider: mock\n    response: ok\n"
                     "    judge_response: 'Grade {\"score\": 1.0}'\n")
    write(repo / "evals" / "cmd.eval.yaml", f"""
        tests:
          - id: judge-list
            input: q
            assert: [{{type: code_judge, name: j, script: [{tool}]}}]
          - id: judge-string
            input: q
            assert: [{{type: code_judge, name: j, script: "{tool} --flag"}}]
          - id: prompt-script
            input: q
            assert: [{{type: llm_judge, name: p, prompt: {{script: [{tool}]}}}}]
          - id: aggregator
            input: q
            assert: [{{type: composite, name: c, evaluators: [{{name: ok, type: contains, value: ok}}],
                      aggregator: {{type: code_judge, path: {tool}}}}}]
          - id: bare-name-on-path
            input: q
            assert: [{{type: code_judge, name: j,
                      script: [python3, -c, "import sys; sys.stdin.read(); print('{{\\"score\\": 1}}')"]}}]
        """)
    validate = run_cli("validate", "evals", cwd=repo)
    assert validate.returncode == 1, validate.stdout + validate.stderr
    refused = [line for line in validate.stdout.splitlines() if "outside the repository root" in line]
    assert len(refused) == 4, validate.stdout
    assert all(line.startswith("evals/cmd.eval.yaml:") or "cmd.eval.yaml:" in line for line in refused)
    run = run_cli("run", "evals", cwd=repo)
    assert run.returncode == 2 and "nothing was run" in run.stderr, run.stderr
    assert not marker.exists(), "an executable outside the repository ran"
    allowed = run_cli("run", "evals", "--allow-outside-root", cwd=repo)
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    assert marker.exists()


def test_a_report_symlink_leading_out_of_the_repository_is_refused(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    write(repo / "evals" / "ok.eval.yaml", "tests:\n  - {id: a, input: q, assert: [{type: contains, value: ok}]}\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (repo / ".agentv-gate").mkdir()
    (repo / ".agentv-gate" / "junit.xml").symlink_to(elsewhere / "junit.xml")
    (repo / "reports").symlink_to(elsewhere, target_is_directory=True)
    for args in ((), ("--results", "reports/results.jsonl")):
        proc = run_cli("run", "evals", *args, cwd=repo)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert "symlink" in proc.stderr and "outside the repository" in proc.stderr, proc.stderr
        assert no_traceback(proc.stderr)
        assert list(elsewhere.iterdir()) == [], "a report was written outside the repository"
    # A symlink that stays inside the repository is fine.
    (repo / ".agentv-gate" / "junit.xml").unlink()
    (repo / "inside").mkdir()
    (repo / ".agentv-gate" / "junit.xml").symlink_to(repo / "inside" / "junit.xml")
    proc = run_cli("run", "evals", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert (repo / ".agentv-gate" / "junit.xml").exists()
