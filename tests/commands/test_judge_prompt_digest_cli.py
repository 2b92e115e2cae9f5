"""A judge's prompt is part of its case: edit the prompt text, the prompt file or an executable template's
script and the case is a changed case (its `case_digest` changes), so a rerun runs it again rather than carry
its old pass over, and `--history` no longer counts the old verdicts as the same case's."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.helpers.cli import run_cli
from tests.helpers.fake_llm_server import FakeLLMServer
from tests.helpers.files import make_repo, write
from tests.helpers.noisy_judge import NoisyJudge
from tests.helpers.reports import RESULTS, read_rows

CHAT = "/v1/chat/completions"
FAST = {"retry_initial_delay_ms": 1, "retry_max_delay_ms": 5, "retry_jitter_ms": 1, "timeout_seconds": 10}
SUITE = """
tests:
  - id: inline
    input: Hi
    criteria: Greets
    assert:
      - {name: inline, type: llm_judge, prompt: "Grade this answer: {{answer}}"}
  - id: text-file
    input: Hi
    criteria: Greets
    assert:
      - {name: file, type: llm_judge, prompt: ../prompts/rubric.md}
  - id: template
    input: Hi
    criteria: Greets
    assert:
      - name: template
        type: llm_judge
        prompt:
          command: [python3, ../prompts/build.py]
"""


@pytest.mark.parametrize("edit, changed", [
    (lambda root: write(root / "evals/a.eval.yaml", SUITE.replace("Grade this answer", "Grade the answer")), "inline"),
    (lambda root: write(root / "prompts/rubric.md", "Grade strictly: {{answer}}\n"), "text-file"),
    (lambda root: write(root / "prompts/build.py", "print('Grade strictly: ' + 'the answer')\n"), "template"),
])
def test_a_changed_judge_prompt_is_a_changed_case(tmp_path: Path, edit, changed: str) -> None:  # type: ignore[no-untyped-def]
    server = FakeLLMServer()
    server.set_default(CHAT, NoisyJudge(0.0))
    targets = [{"name": "default", "provider": "mock", "response": "Hello!", "judge_target": "judge"},
               {"name": "judge", "provider": "openai", "base_url": server.url, "model": "grader", **FAST}]
    root = make_repo(tmp_path / "repo", yaml.safe_dump({"targets": targets}, sort_keys=False))
    write(root / "evals/a.eval.yaml", SUITE)
    write(root / "prompts/rubric.md", "Grade: {{answer}}\n")
    write(root / "prompts/build.py", "print('Grade: the answer')\n")
    first = run_cli("run", "evals", "--no-cache", cwd=root)
    assert first.returncode == 0, first.stdout + first.stderr
    before = {row["eval_id"]: row["case_digest"] for row in read_rows(root / RESULTS)}
    (root / "prev.jsonl").write_text((root / RESULTS).read_text(encoding="utf-8"), encoding="utf-8")
    edit(root)
    calls = len(server.requests_for(CHAT))
    rerun = run_cli("run", "evals", "--no-cache", "--rerun-failed", "prev.jsonl", cwd=root)
    server.close()
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    after = {row["eval_id"]: row["case_digest"] for row in read_rows(root / RESULTS)}
    assert {case for case in before if before[case] != after[case]} == {changed}
    assert len(server.requests_for(CHAT)) - calls == 1, "only the case whose judge changed is judged again"
