"""What the pull-request comment adds to a run of N cases: `.venv/bin/python bench/comment_bench.py [--cases 1000]`.

The comment step is what `--comment` adds after the other reports: the base's usage totals, the
comment body (regressions, fixes, new and removed cases, unchanged counts, pass rate and mean
score, tokens and dollars per target and judge, links) and the GitHub calls (list the pull
request's comments, then create or update), here against the loopback fake of GitHub's API the
tests use. Rows are synthetic: every tenth case regresses, every twentieth is fixed, some are new
and removed; each row reports tokens and a cost, and an LLM judge's usage.

Printed: the median and the slowest of `--repeat` runs of the step (in process, warm), the same
with the comparison itself (which `--baseline` computes for the other reports anyway), and the
body's size. The goal: under 0.2 s for 1,000 cases.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the loopback GitHub server the tests use

from agentv_gate.commands._comment import comment_setup, post_comment  # noqa: E402
from agentv_gate.models import CaseResult  # noqa: E402
from agentv_gate.report.baseline.compare import compare_results  # noqa: E402
from agentv_gate.report.rows import ReportRow  # noqa: E402
from agentv_gate.report.usage import UsageTotals  # noqa: E402
from tests.helpers.fake_github import FakeGitHub  # noqa: E402

TOKEN = "ghs_benchtoken0123456789"


def rows(n: int, head: bool) -> list[CaseResult]:
    out = []
    for i in range(n):
        if (head and i % 97 == 0) or (not head and i % 89 == 0):
            continue  # removed (only on base) or new (only on head)
        regressed, fixed = i % 10 == 0, i % 20 == 5
        passed = (not regressed) if head else (not fixed)
        out.append(CaseResult(
            eval_id=f"case-{i:05d}", suite=f"evals/suite-{i % 7}.yaml", file=f"evals/suite-{i % 7}.yaml",
            line=3 + 6 * (i // 7), target="agent", verdict="pass" if passed else "fail",
            score=0.95 if passed else 0.35, misses=[] if passed else [f"the answer omits step {i % 5} of the refund"],
            token_usage={"input": 800 + i % 50, "output": 120 + i % 30}, cost_usd=0.0021,
            judge_usage={"grader": {"input": 400, "output": 60, "cost_usd": None}},
            commit="fedcba9876543210fedcba9876543210fedcba98", timestamp="2026-11-26T09:30:00Z"))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=16)
    opts = parser.parse_args()
    base, head_full = rows(opts.cases, head=False), rows(opts.cases, head=True)
    head = [ReportRow.of(r) for r in head_full]  # what a run keeps for its end-of-run reports
    usage = UsageTotals.of(head_full)
    with FakeGitHub(token=TOKEN) as github, tempfile.TemporaryDirectory() as tmp:
        github.add_comments(3, [f"review note {i}" for i in range(150)])  # two pages to search
        event = Path(tmp) / "event.json"
        event.write_text(json.dumps({"pull_request": {"number": 3, "head": {"sha": "0" * 40}, "base": {"ref": "main"}}}))
        env = {"GITHUB_API_URL": github.url, "GITHUB_REPOSITORY": "octo/widgets", "GITHUB_EVENT_PATH": str(event),
               "GITHUB_RUN_ID": "1", "GITHUB_WORKFLOW": "bench", "AGENTV_GATE_GITHUB_TOKEN": TOKEN}
        step, with_comparison = [], []
        for _ in range(opts.repeat):
            setup = comment_setup([], dict(env))
            assert setup is not None
            started = time.perf_counter()
            comparison = compare_results(base, head)
            compared = time.perf_counter()
            posted = post_comment(setup, head, ok=False, gate_line="gate (--fail-on regression): failed",
                                  comparison=comparison, base_rows=base, usage=usage)
            done = time.perf_counter()
            assert posted, "the comment was not posted"
            step.append(done - compared)
            with_comparison.append(done - started)
        [body] = [c["body"] for c in github.comments[3] if c["body"].startswith("<!-- agentv-gate-comment:")]
        head_file, base_file = Path(tmp) / "head.jsonl", Path(tmp) / "base.jsonl"
        head_file.write_text("".join(json.dumps(r.to_json_row()) + "\n" for r in head_full))
        base_file.write_text("".join(json.dumps(r.to_json_row()) + "\n" for r in base))
        cli = ROOT / ".venv" / "bin" / "agentv-gate"
        started = time.perf_counter()
        proc = subprocess.run([str(cli), "comment", str(head_file), "--baseline", str(base_file)],
                              env={**env, "PATH": "/usr/bin:/bin"}, capture_output=True, text=True)
        cli_wall = time.perf_counter() - started
    print(f"cases: {opts.cases} (head rows {len(head)}, base rows {len(base)}); {comparison.describe()}")
    print(f"comment step (usage totals, body, list 151 comments on 2 pages, update): first call "
          f"{step[0] * 1000:.1f} ms (it imports requests, which a run with an HTTP target has already imported); "
          f"then median {statistics.median(step[1:]) * 1000:.1f} ms, slowest {max(step[1:]) * 1000:.1f} ms "
          f"over {opts.repeat - 1} runs")
    print(f"with the comparison: median {statistics.median(with_comparison) * 1000:.1f} ms, "
          f"slowest {max(with_comparison) * 1000:.1f} ms")
    print(f"body: {len(body):,} characters (limit 65,536)")
    print(f"`agentv-gate comment HEAD --baseline BASE` (interpreter start, reading both files): "
          f"{cli_wall * 1000:.0f} ms wall, exit {proc.returncode}")
    verdict = "under" if statistics.median(step[1:]) < 0.2 else "OVER"
    print(f"goal: comment step under 200 ms for 1,000 cases: {verdict}")


if __name__ == "__main__":
    main()
