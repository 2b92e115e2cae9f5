"""Scores AgentV 2.19 gives that the gate once gave otherwise (its own examples showed each), through the CLI.

AgentV's source decides: a code judge's written `config:` arrives nested (`config.config`), a model or
mock target reports no duration (so `latency` scores 0 with AgentV's miss), and the budget misses use
AgentV's words.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.reports import RESULTS, rows_by_id

MOCK = "targets:\n  - name: default\n    provider: mock\n    response: Paris\n"


def _evaluators(repo: Path, case: str) -> dict[str, dict[str, object]]:
    ran = run_cli("run", "evals", "--no-cache", cwd=repo)
    assert ran.returncode in (0, 1), ran.stdout + ran.stderr
    row = rows_by_id(repo / RESULTS)[case]
    return {r["name"]: r for r in row.get("evaluator_results") or row["scores"]}


def test_a_written_config_block_reaches_the_judge_nested_as_agentv_passes_it(tmp_path: Path) -> None:
    """AgentV 2.19 hands on every code-judge key it does not read as `config`, `config:` among them."""
    make_repo(tmp_path, MOCK)
    write(tmp_path / "evals/echo_config.py",
          "import json, sys\nconfig = json.load(sys.stdin)['config']\n"
          "print(json.dumps({'score': 1, 'hits': [json.dumps(config, sort_keys=True)]}))\n")
    write(tmp_path / "evals/c.eval.yaml", """
        tests:
          - id: c
            input: q
            assert:
              - name: echo
                type: code_judge
                script: [python3, echo_config.py]
                fallback: token
                config: {trialOutputs: [a, b]}
    """)
    echo = _evaluators(tmp_path, "c")["echo"]
    # (snake-cased on the way, as AgentV's payload is: its SDK gives a TypeScript judge camelCase back)
    assert echo["hits"] == ['{"config": {"trial_outputs": ["a", "b"]}, "fallback": "token"}']


def test_latency_on_a_target_that_reports_no_duration_scores_zero_as_agentv(tmp_path: Path) -> None:
    """AgentV's mock and model providers report no duration: its latency scores 0, "No duration data
    available in trace". Timing the call here passed what AgentV fails."""
    make_repo(tmp_path, MOCK)
    write(tmp_path / "evals/l.eval.yaml", """
        tests:
          - id: l
            input: q
            assert:
              - {name: fast, type: latency, threshold: 60000}
              - {name: cheap, type: cost, budget: 1}
              - {name: small, type: token-usage, max_total: 100}
              - {name: lean, type: execution-metrics, max_duration_ms: 60000, max_tool_calls: 3}
    """)
    found = _evaluators(tmp_path, "l")
    assert (found["fast"]["score"], found["fast"]["misses"]) == (0.0, ["No duration data available in trace"])
    assert (found["cheap"]["score"], found["cheap"]["misses"]) == (0.0, ["No cost data available in trace"])
    assert found["small"]["misses"] == ["No token usage data available in trace"]
    assert (found["lean"]["hits"], found["lean"]["misses"]) == (["Tool calls 0 <= 3 max"], ["Duration data not available"])
    assert found["lean"]["score"] == 0.5


def test_a_4x_file_s_model_target_is_timed_as_agentv_4_42_times_the_call(tmp_path: Path, fake_llm: Any) -> None:
    """AgentV 4.42's model providers time the call (llm-providers.ts), so `latency` scores it; 2.19's report
    none. The gate reported none for a 4.x file too: its latency failed what AgentV passes (43.6)."""
    from tests.helpers.fake_llm_server import FakeReply

    fake_llm.set_default("/v1/chat/completions", FakeReply.openai("Paris"))
    make_repo(tmp_path, f"targets:\n  - name: default\n    provider: openai\n    base_url: {fake_llm.url}\n"
                        "    api_key: ${{ TEST_KEY }}\n    model: m\n")
    for folder, key, grader in (("four", "assertions", "code-grader"), ("two", "assert", "code_judge")):
        write(tmp_path / f"{folder}/ok.py", "import json; print(json.dumps({'score': 1}))\n")
        write(tmp_path / f"{folder}/l.eval.yaml", f"""
            tests:
              - id: {folder}
                input: q
                {key}:
                  - {{name: fast, type: latency, threshold: 60000}}
                  - {{name: ok, type: {grader}, command: [python3, ok.py]}}
        """)
    ran = run_cli("run", "four", "two", "--no-cache", cwd=tmp_path, env={"TEST_KEY": "sk-test"})
    rows = rows_by_id(tmp_path / RESULTS)
    assert rows["four"]["scores"][0]["score"] == 1.0, ran.stdout + ran.stderr
    assert rows["two"]["scores"][0]["misses"] == ["No duration data available in trace"]
