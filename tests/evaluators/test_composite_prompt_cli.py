"""An LLM aggregator's prompt without `{{EVALUATOR_RESULTS_JSON}}`, through the CLI, with a loopback judge.

AgentV 2.19 and 4.42 (`runLlmAggregator` in composite.ts) replace `{{EVALUATOR_RESULTS_JSON}}` in the
aggregator's prompt and send the rest as written: a prompt without it reaches the judge as it is, with none of
the members' results, and the case runs. agentv-gate refused such a prompt, even a prompt file, whose text the
docs' table says is used: a suite AgentV runs was not run. It is now sent exactly as AgentV sends
it, with a located warning that the judge sees no results (`--strict` makes it an error).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply, RecordedRequest
from tests.helpers.files import make_repo, write
from tests.helpers.reports import read_rows

KEY = {"TEST_KEY": "k"}
PROMPT = "You are the final judge.\nDecide whether the answer is acceptable.\n"


def _repo(tmp_path: Path, fake_llm: FakeLLMServer) -> Path:
    def judge(request: RecordedRequest) -> FakeReply:
        return FakeReply.openai(json.dumps({"score": 1, "hits": ["fine"], "misses": [], "reasoning": "ok"}))
    fake_llm.set_default("/v1/chat/completions", judge)
    repo = make_repo(tmp_path / "repo", f"""
        targets:
          - name: default
            provider: mock
            response: The capital is Paris.
            judge_target: judge
          - name: judge
            provider: openai
            base_url: {fake_llm.url}
            api_key: ${{{{ TEST_KEY }}}}
            model: m
    """)
    write(repo / "prompts" / "final.md", PROMPT)
    return repo


def _suite(aggregator: str, list_key: str = "assert") -> str:
    return (f"tests:\n  - id: c\n    input: Capital of France?\n    {list_key}:\n      - name: both\n"
            f"        type: composite\n        {list_key}: [{{name: paris, type: contains, value: Paris}}]\n"
            f"        aggregator:\n{aggregator}")


def _user_prompts(fake_llm: FakeLLMServer) -> list[str]:
    return [next(m["content"] for m in r.json["messages"] if m["role"] == "user")
            for r in fake_llm.requests_for("/v1/chat/completions")]


@pytest.mark.parametrize(("aggregator", "list_key"), [
    ("          type: llm_judge\n          prompt: ../prompts/final.md\n", "assert"),  # 2.x: a path that names a file
    ("          type: llm-grader\n          prompt: file://../prompts/final.md\n", "assertions"),  # 4.x's file://
], ids=["2.x-path", "4.x-file"])
def test_a_prompt_file_without_the_results_variable_is_sent_as_written(
        tmp_path: Path, fake_llm: FakeLLMServer, aggregator: str, list_key: str) -> None:
    repo = _repo(tmp_path, fake_llm)
    write(repo / "evals" / "c.eval.yaml", _suite(aggregator, list_key))
    done = run_cli("run", "evals/c.eval.yaml", "--no-cache", cwd=repo, env=KEY)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _user_prompts(fake_llm) == [PROMPT]  # the file's text, nothing replaced, nothing added
    (row,) = read_rows(repo / ".agentv-gate" / "results.jsonl")
    assert row["verdict"] == "pass" and row["score"] == 1.0
    assert ("evals/c.eval.yaml:10: warning: composite 'both': the aggregator prompt has no "
            "{{EVALUATOR_RESULTS_JSON}}, so the judge sees none of the members' results") in done.stderr


def test_inline_prompt_text_without_the_results_variable_is_sent_as_written(
        tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    repo = _repo(tmp_path, fake_llm)
    write(repo / "evals" / "c.eval.yaml", _suite("          type: llm_judge\n          prompt: Is the answer right?\n"))
    done = run_cli("run", "evals/c.eval.yaml", "--no-cache", cwd=repo, env=KEY)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _user_prompts(fake_llm) == ["Is the answer right?"]


def test_with_the_variable_the_results_replace_it(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    repo = _repo(tmp_path, fake_llm)
    write(repo / "prompts" / "final.md", "Results:\n{{EVALUATOR_RESULTS_JSON}}\nDecide.\n")
    write(repo / "evals" / "c.eval.yaml", _suite("          type: llm_judge\n          prompt: ../prompts/final.md\n"))
    done = run_cli("run", "evals/c.eval.yaml", "--no-cache", cwd=repo, env=KEY)
    assert done.returncode == 0, done.stdout + done.stderr
    (prompt,) = _user_prompts(fake_llm)
    assert prompt.startswith("Results:\n{") and prompt.endswith("}\nDecide.\n") and '"paris"' in prompt
    assert "{{EVALUATOR_RESULTS_JSON}}" not in prompt and "warning" not in done.stderr


def test_strict_refuses_a_prompt_without_the_results_variable(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    repo = _repo(tmp_path, fake_llm)
    write(repo / "evals" / "c.eval.yaml", _suite("          type: llm_judge\n          prompt: ../prompts/final.md\n"))
    done = run_cli("run", "evals/c.eval.yaml", "--no-cache", "--strict", cwd=repo, env=KEY)
    assert done.returncode == 2, done.stdout + done.stderr
    assert fake_llm.requests_for("/v1/chat/completions") == []


def test_a_path_that_names_no_file_is_still_refused(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    """AgentV 2.19 would send the text `../prompts/missing.md` as the prompt: the author meant a file."""
    repo = _repo(tmp_path, fake_llm)
    write(repo / "evals" / "c.eval.yaml", _suite("          type: llm_judge\n          prompt: ../prompts/missing.md\n"))
    done = run_cli("validate", "evals/c.eval.yaml", cwd=repo, env=KEY)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "evals/c.eval.yaml:10: composite 'both': aggregator prompt file '../prompts/missing.md' not found" \
        in done.stdout + done.stderr


THRESHOLD = """\
tests:
  - id: c
    input: Capital of France?
    {key}:
      - name: gate
        type: composite
        {key}: [{{name: p, type: contains, value: Paris}}, {{name: r, type: contains, value: Rome}}]
        aggregator: {{type: threshold, threshold: 0.5}}
"""


@pytest.mark.parametrize(("key", "hits"), [
    ("assertions", ["1/2 evaluators passed (threshold: 0.5)", "[p] Output contains \"Paris\""]),  # 4.42's first entry
    ("assert", ["[p] Output contains \"Paris\""]),  # 2.19 (the file pinned to it): the count is the reasoning only
])
def test_a_threshold_composite_lists_its_count_as_its_agentv_lists_it(
        tmp_path: Path, fake_llm: FakeLLMServer, key: str, hits: list[str]) -> None:
    """AgentV 4.42's threshold aggregator puts `k/n evaluators passed (threshold: t)` first among its assertions,
    passed when the composite passes (composite.ts); 2.19 gives it as the reasoning alone."""
    repo = _repo(tmp_path, fake_llm)
    if key == "assert":
        write(repo / ".agentv" / "gate.yaml", 'agentv:\n  version: "2.19"\n')
    write(repo / "evals" / "c.eval.yaml", THRESHOLD.format(key=key))
    done = run_cli("run", "evals/c.eval.yaml", "--no-cache", cwd=repo, env=KEY)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    (row,) = read_rows(repo / ".agentv-gate" / "results.jsonl")
    (composite,) = row["scores"]
    assert composite["hits"] == hits
    assert composite["reasoning"].startswith("1/2 evaluators passed (threshold: 0.5)")
