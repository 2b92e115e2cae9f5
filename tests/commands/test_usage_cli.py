"""What a run used and cost, per target and per judge, through the real CLI against loopback model servers.

Each row keeps the target's usage and its judges' apart, as the providers reported them; dollars
come from the target's prices when the provider reports none. The totals reach the console's last
lines, the job summary and report.html; a provider that reports nothing gives nulls, never 0.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.cli import run_cli
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply
from tests.helpers.files import make_repo, write
from tests.helpers.suites import CAPITAL_SUITE, PARIS_TARGETS

VERDICT = json.dumps({"score": 1.0, "hits": ["says Paris"], "misses": [], "reasoning": "fine"})


def priced_project(root: Path, server: FakeLLMServer) -> Path:
    repo = make_repo(root, f"""\
targets:
  - name: agent
    provider: openai
    base_url: {server.url}/agent
    model: fake-agent
    judge_target: grader
    price_per_1k_input: 0.5
    price_per_1k_output: 1.5
  - name: grader
    provider: openai
    base_url: {server.url}/judge
    model: fake-judge
""")
    write(repo / "evals" / "capital.yaml", "tests:\n" + "".join(
        f"  - id: case-{i}\n    input: Capital of France? ({i})\n    criteria: Says Paris\n"
        "    assert:\n      - {name: quality, type: llm_judge}\n" for i in range(2)))
    server.set_default("/agent/v1/chat/completions", FakeReply.openai("Paris"))  # 11 tokens in, 7 out
    server.set_default("/judge/v1/chat/completions", FakeReply.openai(VERDICT))
    return repo


def test_rows_keep_target_and_judge_usage_apart_and_price_the_targets_tokens(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        repo = priced_project(tmp_path / "repo", server)
        summary = tmp_path / "summary.md"
        proc = run_cli("run", "evals", "--target", "agent", cwd=repo,
                       env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [json.loads(line) for line in (repo / ".agentv-gate" / "results.jsonl").read_text().splitlines()]
    for row in rows:
        assert row["token_usage"] == {"input": 11, "output": 7}
        assert abs(row["cost_usd"] - (11 / 1000 * 0.5 + 7 / 1000 * 1.5)) < 1e-12
        # The judge's provider reports tokens and no cost, and the judge has no prices: null, not 0.
        assert row["judge_usage"] == {"grader": {"input": 11, "output": 7, "cost_usd": None}}
    lines = proc.stdout.splitlines()
    assert "agentv-gate: target 'agent': 22 in / 14 out tokens, $0.0320 (2 cases)" in lines
    assert "agentv-gate: judge 'grader': 22 in / 14 out tokens, cost not reported (2 judged cases)" in lines
    text = summary.read_text()
    assert "#### Tokens and cost" in text
    assert "| target agent | 22 in / 14 out | $0.0320 |" in text
    assert "| judge grader | 22 in / 14 out | not reported |" in text
    page = (repo / ".agentv-gate" / "report.html").read_text()
    assert "<h2>Tokens and cost</h2>" in page and "<td>agent</td><td>22 in / 14 out</td><td>$0.0320</td>" in page


def test_a_provider_that_reports_nothing_leaves_nulls_and_no_totals(repo: Path) -> None:
    make_repo(repo, PARIS_TARGETS)
    write(repo / "evals" / "geo.yaml", CAPITAL_SUITE)
    proc = run_cli("run", "evals", cwd=repo)
    assert proc.returncode == 0
    [row] = [json.loads(line) for line in (repo / ".agentv-gate" / "results.jsonl").read_text().splitlines()]
    assert "token_usage" not in row and "cost_usd" not in row and "judge_usage" not in row
    assert "tokens" not in proc.stdout and "$" not in proc.stdout


def test_merged_shards_add_up_their_usage(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        repo = priced_project(tmp_path / "repo", server)
        for k in (1, 2):
            shard = run_cli("run", "evals", "--target", "agent", "--shard", f"{k}/2", "--output-dir", f"s{k}",
                            cwd=repo)
            assert shard.returncode == 0, shard.stdout + shard.stderr
    merged = run_cli("merge", "s1/results.jsonl", "s2/results.jsonl", cwd=repo)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert "agentv-gate: target 'agent': 22 in / 14 out tokens, $0.0320 (2 cases)" in merged.stdout.splitlines()
