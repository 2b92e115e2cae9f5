"""A pull request cannot reach outside the repository, and secrets never reach a report.

Paths: every way an eval file names a file - a code judge's `script` and `cwd`, an LLM judge's
`prompt` file, a `type: file` segment, `input_files`, an external `tests:` file - is refused when
it resolves outside the repository root, directly, by `..`, by an absolute path, or through a
symlink inside the repo that points out; `agentv-gate validate` says so (exit 1), `run` refuses
to start (exit 2) and runs nothing, and `--allow-outside-root` lets it through.

Secrets: an `api_key` from `${{ VAR }}` sent to a loopback server that echoes it back in a 401
body must not appear in stdout, stderr, results, JUnit, the job summary, outputs or the cache.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply, RecordedRequest
from tests.helpers.files import make_repo, write
from tests.helpers.hostile import no_traceback
from tests.helpers.reports import read_rows

OUTSIDE_SECRET = "outside-the-repo-" + uuid.uuid4().hex
"""Content of a file outside the repository: it must never be read into any output."""


@pytest.fixture()
def layout(tmp_path: Path) -> dict[str, Path]:
    """tmp/outside/{judge.py,prompt.md,notes.txt,cases.jsonl} next to tmp/repo (the repository root)."""
    outside = tmp_path / "outside"
    marker = tmp_path / "judge-ran"
    write(outside / "judge.py", f"""
        import json, sys
        sys.stdin.read()
        open({str(marker)!r}, "w").write("ran")
        print(json.dumps({{"score": 1.0}}))
        """)
    write(outside / "prompt.md", f"Grade {{{{answer}}}} {OUTSIDE_SECRET}\n")
    write(outside / "notes.txt", OUTSIDE_SECRET + "\n")
    write(outside / "cases.jsonl", '{"id": "c", "input": "q", "criteria": "' + OUTSIDE_SECRET + '"}\n')
    repo = make_repo(tmp_path / "repo", "targets:\n  - name: default\n    provider: mock\n"
                     "    response: ok\n    judge_response: '{\"score\": 1.0}'\n")
    (repo / "evals" / "inside").mkdir()
    write(repo / "evals" / "inside" / "judge.py", "import json, sys\nsys.stdin.read()\nprint(json.dumps({'score': 1.0}))\n")
    (repo / "evals" / "link_judge.py").symlink_to(outside / "judge.py")
    (repo / "evals" / "link_dir").symlink_to(outside, target_is_directory=True)
    (repo / "evals" / "link_notes.txt").symlink_to(outside / "notes.txt")
    (repo / "evals" / "link_prompt.md").symlink_to(outside / "prompt.md")
    return {"repo": repo, "outside": outside, "marker": marker}


def escapes(outside: Path) -> dict[str, str]:
    """name -> a case (YAML) whose one reference leaves the repository."""
    judge = "assert: [{type: code_judge, name: j, script: %s}]"
    return {
        "script ..": judge % "[python3, ../../outside/judge.py]",
        "script string": judge % '"python3 ../../outside/judge.py"',
        "script absolute": judge % f"[python3, {outside / 'judge.py'}]",
        "script symlink": judge % "[python3, link_judge.py]",
        "script via symlinked folder": judge % "[python3, link_dir/judge.py]",
        "cwd ..": "assert: [{type: code_judge, name: j, script: [python3, judge.py], cwd: ../../outside}]",
        "cwd symlink": "assert: [{type: code_judge, name: j, script: [python3, judge.py], cwd: link_dir}]",
        "prompt ..": "assert: [{type: llm_judge, name: q, prompt: ../../outside/prompt.md}]",
        "prompt symlink": "assert: [{type: llm_judge, name: q, prompt: link_prompt.md}]",
        "file segment ..": "input: [{role: user, content: [{type: file, value: ../../outside/notes.txt}]}]",
        "file segment absolute": f"input: [{{role: user, content: [{{type: file, value: {outside / 'notes.txt'}}}]}}]",
        "file segment symlink": "input: [{role: user, content: [{type: file, value: link_notes.txt}]}]",
        "input_files symlinked folder": "input_files: [link_dir/notes.txt]",
        "composite aggregator ..": ("assert: [{type: composite, name: c, evaluators: [{name: m, type: contains, value: x}], "
                                    "aggregator: {type: code_judge, path: python3 ../../outside/judge.py}}]"),
    }


def eval_file(layout: dict[str, Path], names: list[str]) -> dict[str, int]:
    """One eval file with a case per named escape; returns name -> the line a problem should point at."""
    refs = escapes(layout["outside"])
    lines: dict[str, int] = {}
    text = "tests:\n"
    for index, name in enumerate(names):
        reference = refs[name]
        text += f"  - id: case{index}\n    criteria: anything\n"
        if not reference.startswith("input:"):
            text += "    input: question\n"
        lines[name] = text.count("\n") + 1  # the reference's own line (an `input_files` entry's too)
        text += f"    {reference}\n"
    write(layout["repo"] / "evals" / "escape.eval.yaml", text)
    return lines


def test_every_reference_outside_the_repository_is_refused_by_validate_and_run(layout: dict[str, Path]) -> None:
    names = list(escapes(layout["outside"]))
    lines = eval_file(layout, names)
    repo = layout["repo"]
    validate = run_cli("validate", "evals", cwd=repo)
    assert validate.returncode == 1, validate.stdout + validate.stderr
    refused = [line for line in validate.stdout.splitlines() if "outside the repository root" in line]
    # One located problem per case, on its reference's line, saying how to allow it.
    assert sorted(int(r.split(":")[1]) for r in refused) == sorted(lines.values()), validate.stdout
    assert all("escape.eval.yaml:" in r and "--allow-outside-root" in r for r in refused), validate.stdout

    run = run_cli("run", "evals", cwd=repo)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "outside the repository root" in run.stderr and "nothing was run" in run.stderr
    assert not layout["marker"].exists(), "a judge outside the repository was executed"
    for text in (validate.stdout, validate.stderr, run.stdout, run.stderr):
        assert OUTSIDE_SECRET not in text and no_traceback(text)


def test_an_external_tests_file_outside_the_repository_is_refused(layout: dict[str, Path]) -> None:
    write(layout["repo"] / "evals" / "external.eval.yaml", "tests: ../../outside/cases.jsonl\n")
    validate = run_cli("validate", "evals", cwd=layout["repo"])
    assert validate.returncode == 1 and "outside the repository root" in validate.stdout
    assert OUTSIDE_SECRET not in validate.stdout + validate.stderr


def test_allow_outside_root_lets_the_references_through(layout: dict[str, Path]) -> None:
    eval_file(layout, ["script ..", "script symlink", "cwd symlink", "prompt symlink", "file segment symlink"])
    repo = layout["repo"]
    validate = run_cli("validate", "evals", "--allow-outside-root", cwd=repo)
    assert validate.returncode == 0, validate.stdout + validate.stderr
    run = run_cli("run", "evals", "--allow-outside-root", cwd=repo)
    assert run.returncode == 0, run.stdout + run.stderr
    assert layout["marker"].exists(), "the allowed judge outside the repository did not run"
    assert {r["verdict"] for r in read_rows(repo / ".agentv-gate/results.jsonl")} == {"pass"}


def test_references_inside_the_repository_still_work(layout: dict[str, Path]) -> None:
    write(layout["repo"] / "evals" / "escape.eval.yaml", "tests:\n  - id: inside\n    input: q\n    criteria: c\n"
          "    assert: [{type: code_judge, name: j, script: [python3, judge.py], cwd: inside}]\n")
    run = run_cli("run", "evals", cwd=layout["repo"])
    assert run.returncode == 0, run.stdout + run.stderr


# ---------------------------------------------------------------- secrets


SECRET_ENV = "AGENTV_HARDENING_API_KEY"


def leaky_server(server: FakeLLMServer) -> None:
    """`/denied/...` answers 401 echoing the Authorization header; the rest answer as model and judge."""

    def denied(request: RecordedRequest) -> FakeReply:
        auth = request.headers.get("authorization", "")
        return FakeReply.error(401, f"Incorrect API key provided: {auth.removeprefix('Bearer ')} ({auth})")

    server.set_default("/denied/v1/chat/completions", denied)
    server.set_default("/v1/chat/completions",
                       FakeReply.openai('{"score": 1.0, "hits": ["Paris"], "reasoning": "Paris, as expected"}'))


def files_under(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()]


def test_an_api_key_never_reaches_any_output_even_when_the_server_echoes_it(tmp_path: Path,
                                                                            fake_llm: FakeLLMServer) -> None:
    secret = "sk-hardening-" + uuid.uuid4().hex
    leaky_server(fake_llm)
    repo = make_repo(tmp_path / "repo", f"""
        targets:
          - name: allowed
            provider: openai
            endpoint: {fake_llm.url}/v1
            api_key: ${{{{ {SECRET_ENV} }}}}
            model: fake
            max_retries: 0
          - name: denied
            provider: openai
            endpoint: {fake_llm.url}/denied/v1
            api_key: ${{{{ {SECRET_ENV} }}}}
            model: fake
            max_retries: 0
        """)
    write(repo / "evals/secret.eval.yaml", """
        tests:
          - id: allowed
            target: allowed
            input: What is the capital of France?
            assert:
              - {type: contains, value: Paris}
              - {type: llm_judge, name: quality}
          - id: denied
            target: denied
            input: What is the capital of France?
            assert: [{type: contains, value: Paris}]
        """)
    summary, output = tmp_path / "summary.md", tmp_path / "output.txt"
    env = {SECRET_ENV: secret, "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary),
           "GITHUB_OUTPUT": str(output)}
    proc = run_cli("run", "evals", cwd=repo, env=env)
    requests = fake_llm.requests

    # The key was really sent (so the test could catch a leak), and really echoed back.
    assert any(r.headers.get("authorization") == f"Bearer {secret}" for r in requests)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    rows = {r["eval_id"]: r for r in read_rows(repo / ".agentv-gate/results.jsonl")}
    assert rows["allowed"]["verdict"] == "pass", rows["allowed"]
    assert rows["denied"]["verdict"] == "error" and "HTTP 401" in str(rows["denied"]["error"])
    assert "***" in str(rows["denied"]["error"]), "the echoed key should show as redacted"

    outputs: dict[str, Any] = {"stdout": proc.stdout, "stderr": proc.stderr}
    for path in [summary, output, *files_under(repo)]:
        if path != repo / ".agentv" / "targets.yaml":
            outputs[str(path)] = path.read_bytes().decode("utf-8", "replace")
    assert len(outputs) > 5  # results, junit, cache entries, summary, outputs, stdout, stderr
    leaked = [name for name, text in outputs.items() if secret in text]
    assert leaked == [], f"the API key leaked into: {leaked}"
