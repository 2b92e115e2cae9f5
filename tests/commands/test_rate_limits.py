"""A suite bigger than its provider's rate limit, through the real CLI against a rate-limited loopback judge.

The judge server enforces a token bucket and answers 429 with the headers real providers send
(`tests.helpers.fake_llm_server.RateLimited`). What matters, and is counted rather than timed:
no case errors because of the limit, 429s stay few, the per-target line and the job summary
report what the server saw, and `workers:` caps the calls in flight.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.cli import run_cli
from tests.helpers.docs import DOCS
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply, RateLimited
from tests.helpers.files import make_repo, write

VERDICT = json.dumps({"score": 1.0, "hits": ["ok"], "misses": [], "reasoning": "fine"})
JUDGE = "/judge/v1/chat/completions"


def project(root: Path, server: FakeLLMServer, cases: int, judge_keys: str = "") -> Path:
    repo = make_repo(root, f"""\
targets:
  - name: default
    provider: mock
    response: Paris
    judge_target: grader
  - name: grader
    provider: openai
    base_url: {server.url}/judge
    model: fake-judge
    timeout_seconds: 10
    retry_max_total_seconds: 60
{judge_keys}""")
    lines = ["tests:"]
    for i in range(cases):
        lines += [f"  - id: case-{i:03d}", f"    input: Capital of France? ({i})", "    criteria: Says Paris",
                  "    assert:", "      - {name: quality, type: llm_judge}"]
    write(repo / "evals" / "capital.eval.yaml", "\n".join(lines) + "\n")
    return repo


def verdicts(repo: Path) -> list[str]:
    rows = (repo / "out" / "results.jsonl").read_text().splitlines()
    return [json.loads(row)["verdict"] for row in rows]


def test_a_suite_over_the_limit_finishes_without_errors_learning_the_limit_from_headers(tmp_path: Path) -> None:
    # Without the limiter, 8 workers against 20 requests/s with a burst of 4 got most calls a 429,
    # and cases errored once each call's retries ran out.
    with FakeLLMServer() as server:
        limited = RateLimited(FakeReply.openai(VERDICT), rpm=1200, burst=4)
        server.set_default(JUDGE, limited)
        repo = project(tmp_path / "repo", server, cases=40)
        summary = tmp_path / "summary.md"
        result = run_cli("run", "evals", "--workers", "8", "--output-dir", "out", cwd=repo,
                         env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}, timeout=120)
        refused, answered = limited.refused, limited.answered
    assert result.returncode == 0, result.stdout + result.stderr
    assert verdicts(repo) == ["pass"] * 40
    assert answered == 40
    assert refused < 20, f"{refused} requests answered 429 for 40 cases"
    line = f"agentv-gate: target 'grader': {40 + refused} calls, {refused} answered 429,"
    assert line in result.stderr
    assert f"| grader | {40 + refused} | {refused} |" in summary.read_text()


def test_a_configured_max_rpm_under_the_provider_limit_gets_no_429(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        limited = RateLimited(FakeReply.openai(VERDICT), rpm=1200, burst=20)
        server.set_default(JUDGE, limited)
        repo = project(tmp_path / "repo", server, cases=30, judge_keys="    max_rpm: 900\n")
        result = run_cli("run", "evals", "--workers", "8", "--output-dir", "out", cwd=repo, timeout=120)
        refused = limited.refused
    assert result.returncode == 0, result.stdout + result.stderr
    assert verdicts(repo) == ["pass"] * 30
    assert refused == 0
    assert "agentv-gate: target 'grader': 30 calls, 0 answered 429," in result.stderr


def test_max_tpm_is_honoured_with_the_tokens_corrected_from_usage(tmp_path: Path) -> None:
    # Each reply uses 18 tokens (usage.total_tokens); the server allows 900 a minute (15 a second).
    # max_tpm 800 keeps under it, though each request is estimated at far more before it is sent.
    with FakeLLMServer() as server:
        limited = RateLimited(FakeReply.openai(VERDICT), rpm=100000, tpm=900, headers=False)
        server.set_default(JUDGE, limited)
        repo = project(tmp_path / "repo", server, cases=6, judge_keys="    max_tpm: 800\n    max_output_tokens: 5\n")
        result = run_cli("run", "evals", "--workers", "4", "--output-dir", "out", cwd=repo, timeout=120)
        refused = limited.refused
    assert result.returncode == 0, result.stdout + result.stderr
    assert verdicts(repo) == ["pass"] * 6
    assert refused <= 1


def test_workers_in_targets_yaml_caps_the_calls_in_flight(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        server.set_default(JUDGE, FakeReply.openai(VERDICT, delay=0.05))
        repo = project(tmp_path / "repo", server, cases=12, judge_keys="    workers: 2\n")
        result = run_cli("run", "evals", "--workers", "8", "--output-dir", "out", cwd=repo, timeout=120)
        most = server.max_in_flight
    assert result.returncode == 0, result.stdout + result.stderr
    assert most == 2


def test_an_invalid_max_rpm_is_a_located_configuration_error(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        repo = project(tmp_path / "repo", server, cases=1, judge_keys="    max_rpm: lots\n")
        result = run_cli("run", "evals", "--output-dir", "out", cwd=repo)
        sent = len(server.requests)
    assert result.returncode == 2
    # at the `max_rpm:` key, not the target's `- name:` line
    assert "targets.yaml:12" in result.stderr and "max_rpm must be a number > 0, got 'lots'" in result.stderr
    assert sent == 0


def test_a_misspelled_limit_key_is_reported_with_a_suggestion(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        repo = project(tmp_path / "repo", server, cases=1, judge_keys="    max_rmp: 600\n")
        result = run_cli("run", "evals", "--output-dir", "out", cwd=repo)
    assert result.returncode == 2
    assert "max_rmp" in result.stderr and "max_rpm" in result.stderr


def test_the_readme_example_for_openai_azure_and_anthropic_is_read_as_documented(tmp_path: Path) -> None:
    from agentv_gate.targets.registry import ProviderRegistry, load_targets

    readme = DOCS
    section = readme.split("### Rate limits (`workers`, `max_rpm`, `max_tpm`)", 1)[1]
    example = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    path = write(tmp_path / "targets.yaml", example)
    targets = load_targets(path)
    assert targets.key_problems == []
    env = {"OPENAI_API_KEY": "k1", "AZURE_OPENAI_ENDPOINT": "https://x.openai.azure.com",
           "AZURE_OPENAI_API_KEY": "k2", "ANTHROPIC_API_KEY": "k3"}
    registry = ProviderRegistry(targets, env)
    limits = {name: registry.provider(name).limiter.limits for name in ("judge", "default", "claude")}  # type: ignore[attr-defined]
    assert [(lim.workers, lim.max_rpm, lim.max_tpm) for lim in limits.values()] == [
        (16, 500, 200000), (None, 180, 30000), (4, 50, 30000)]


def test_the_traffic_line_prints_a_hostile_target_name_inert(tmp_path: Path) -> None:
    """The per-target traffic line on stderr quotes the target's name, which targets.yaml (a pull
    request) wrote: one line, no workflow command, even with a newline or `##[` in it."""
    with FakeLLMServer() as server:
        server.set_default("/v1/chat/completions", FakeReply.openai("Paris"))
        repo = make_repo(tmp_path / "repo", f"""
            targets:
              - name: "m\\n::add-mask::everything ##[stop-commands]x"
                provider: openai
                endpoint: {server.url}/v1
                model: fake
            """)
        write(repo / "evals/a.eval.yaml", """
            tests:
              - {id: c, input: q, assert: [{type: contains, value: Paris}]}
            """)
        proc = run_cli("run", "evals", "--no-cache", cwd=repo, env={"GITHUB_ACTIONS": "true"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    traffic = [line for line in proc.stderr.splitlines() if "waiting for its limits" in line]
    assert traffic == ["agentv-gate: target 'm ::add-mask::everything ## [stop-commands]x': 1 call, 0 answered 429, "
                       "0.0 s waiting for its limits"], proc.stderr
