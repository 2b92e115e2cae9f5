"""The judges' floor of `.agentv/gate.yaml` end to end: a judge whose last judge-check is below it has its
failing verdicts reported as advisory (the row, the console, the job summary, report.html, the action's
outputs), never as a pass, and the gate does not fail on them; a check that is missing changes nothing."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import yaml

from tests.helpers.cli import run_cli
from tests.helpers.fake_llm_server import FakeLLMServer
from tests.helpers.files import make_repo, write
from tests.helpers.github_runner import parse_github_output
from tests.helpers.noisy_judge import NoisyJudge, case_marker
from tests.helpers.reports import RESULTS, read_rows
from tests.packaging.test_action import run_entrypoint

CHAT = "/v1/chat/completions"
FAST = {"retry_initial_delay_ms": 1, "retry_max_delay_ms": 5, "retry_jitter_ms": 1, "timeout_seconds": 10}
FLOOR = "judges:\n  min_kappa: 0.6\n  max_flip_rate: 0.2\n  check: .agentv/judge-check.json\n"
WHY = "advisory: judge 'tone' agrees with humans at kappa 0.41 < 0.6"


def check_file(kappa: float, flip_rate: float = 0.05, judge: str = "tone") -> str:
    return json.dumps({"results": "main.jsonl", "asks": 5, "judges": [
        {"judge": judge, "cases": 20, "calls": 100, "errors": 0, "flip_rate": flip_rate, "mean_score": 0.6,
         "spread": 0.1, "flipping": [], "labels": {"labelled": 20, "accuracy": 0.7, "kappa": kappa,
                                                   "confusion": {"pass": {"pass": 7, "fail": 3},
                                                                 "fail": {"pass": 3, "fail": 7}}}}]})


def project(root: Path, judge_url: str, cases: str) -> Path:
    targets = [{"name": "default", "provider": "mock", "response": "An answer.", "judge_target": "judge"},
               {"name": "judge", "provider": "openai", "base_url": judge_url, "model": "grader", **FAST}]
    make_repo(root, yaml.safe_dump({"targets": targets}, sort_keys=False))
    write(root / "evals/tone.eval.yaml", cases)
    write(root / ".agentv/gate.yaml", FLOOR)
    return root


def case(name: str, *extra: str) -> str:
    evaluators = "\n".join(f"      - {e}" for e in ("{name: tone, type: llm_judge}", *extra))
    return f"  - id: {name}\n    input: 'Q {case_marker(name)}'\n    criteria: Good\n    assert:\n{evaluators}\n"


def judge_failing(*names: str) -> NoisyJudge:
    return NoisyJudge(0.0, scores=lambda name, k: 0.0 if name in names else 1.0)


def test_a_judge_below_the_floor_advises_through_run_and_the_action(tmp_path: Path) -> None:
    server = FakeLLMServer()
    server.set_default(CHAT, judge_failing("c0"))
    root = project(tmp_path / "work space", server.url, "tests:\n" + case("c0") + case("c1"))
    write(root / ".agentv/judge-check.json", check_file(0.41))
    run = run_entrypoint(root, {"paths": "evals", "extra-args": "--no-cache"})
    server.close()
    assert run.code == 0, run.stdout + run.stderr
    assert WHY in run.stderr
    assert run.outputs["advisory"] == "1" and run.outputs["passed"] == "1" and run.outputs["failed"] == "0"
    assert run.outputs["total"] == "2" and run.outputs["pass-rate"] == "0.5000", "an advisory case is no pass"
    rows = {row["eval_id"]: row for row in read_rows(root / RESULTS)}
    assert rows["c0"]["verdict"] == "fail" and rows["c0"]["advisory"] == WHY
    assert "advisory" not in rows["c1"]
    assert "🟡 advisory" in run.summary and WHY in html.unescape(run.summary)
    assert "1 advisory (a judge below its floor; not failing the gate)" in run.summary
    assert "⚠️ **1 passed, 0 failed, 0 errors**" in run.summary, "a pass with advisory verdicts is marked so"
    assert "ADVISORY" in run.stdout
    page = (root / ".agentv-gate/report.html").read_text(encoding="utf-8")
    data = json.loads(re.search(r'<script type="application/json" id="agentv-gate-data">(.*?)</script>', page,
                                re.DOTALL).group(1))  # type: ignore[union-attr]
    shown = {row[1]: row for row in data["rows"]}
    assert shown["c0"][0] == "advisory" and shown["c0"][7].startswith(WHY)
    annotations = [line for line in run.stdout.splitlines() if line.startswith("::")]
    assert any(line.startswith("::warning ") and "c0 failed (advisory)" in line for line in annotations)


def test_another_failure_of_the_case_still_fails_it(tmp_path: Path) -> None:
    """The below-floor judge is not the only one failing c0: a deterministic check fails it too."""
    server = FakeLLMServer()
    server.set_default(CHAT, judge_failing("c0"))
    root = project(tmp_path, server.url, "tests:\n" + case("c0", "{name: says-yes, type: contains, value: 'yes'}"))
    write(root / ".agentv/judge-check.json", check_file(0.41))
    proc = run_cli("run", "evals", "--no-cache", cwd=root)
    server.close()
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "advisory" not in read_rows(root / RESULTS)[0]


def test_a_judge_at_the_floor_and_a_missing_check_decide_as_usual(tmp_path: Path) -> None:
    server = FakeLLMServer()
    server.set_default(CHAT, judge_failing("c0"))
    root = project(tmp_path, server.url, "tests:\n" + case("c0"))
    write(root / ".agentv/judge-check.json", check_file(0.6, flip_rate=0.2))  # exactly at both bounds: not below
    at = run_cli("run", "evals", "--no-cache", cwd=root)
    assert at.returncode == 1 and "advisory" not in read_rows(root / RESULTS)[0]
    write(root / ".agentv/judge-check.json", check_file(0.9, flip_rate=0.25))  # flips too often
    flips = run_cli("run", "evals", "--no-cache", cwd=root)
    assert flips.returncode == 0, flips.stdout + flips.stderr
    assert read_rows(root / RESULTS)[0]["advisory"] == "advisory: judge 'tone' flips on 25% of cases > 20%"
    (root / ".agentv/judge-check.json").unlink()
    missing = run_cli("run", "evals", "--no-cache", cwd=root)
    server.close()
    assert missing.returncode == 1, "no check: today's behaviour"
    assert "judge-check.json does not exist (yet)" in missing.stderr


def test_fail_on_counts_an_advisory_case_as_not_decided(tmp_path: Path) -> None:
    """c0 passed on the base and fails now on the below-floor judge alone: not a regression."""
    server = FakeLLMServer()
    server.set_default(CHAT, judge_failing())
    root = project(tmp_path, server.url, "tests:\n" + case("c0") + case("c1"))
    assert run_cli("run", "evals", "--no-cache", cwd=root).returncode == 0
    (root / "base.jsonl").write_text((root / RESULTS).read_text(encoding="utf-8"), encoding="utf-8")
    server.set_default(CHAT, judge_failing("c0"))
    write(root / ".agentv/judge-check.json", check_file(0.41))
    for fail_on in ("all", "regression", "inconclusive"):
        proc = run_cli("run", "evals", "--no-cache", "--baseline", "base.jsonl", "--fail-on", fail_on, cwd=root,
                       env={"GITHUB_ACTIONS": "true"})
        assert proc.returncode == 0, (fail_on, proc.stdout + proc.stderr)
        assert any(line.startswith("::warning ") and "failed (advisory) (not decided against the base)" in line
                   for line in proc.stdout.splitlines()), proc.stdout
    write(root / ".agentv/judge-check.json", check_file(0.41, judge="other"))
    proc = run_cli("run", "evals", "--no-cache", "--baseline", "base.jsonl", "--fail-on", "regression", cwd=root)
    server.close()
    assert proc.returncode == 1, "a judge the check did not measure decides"


def test_a_bad_floor_is_refused_at_its_line(tmp_path: Path) -> None:
    root = project(tmp_path, "http://127.0.0.1:9", "tests:\n" + case("c0"))
    write(root / ".agentv/gate.yaml", "judges:\n  min_kappa: 2\n")
    proc = run_cli("run", "evals", cwd=root)
    assert proc.returncode == 2
    assert "gate.yaml:2: judges.min_kappa must be a number from -1 to 1, got 2" in proc.stderr
    checked = run_cli("validate", "evals", cwd=root)
    assert checked.returncode == 1 and "judges.min_kappa must be a number from -1 to 1" in checked.stdout
    write(root / ".agentv/gate.yaml", "judges:\n  min_kapa: 0.5\n")
    proc = run_cli("run", "evals", cwd=root)
    assert proc.returncode == 2 and "unknown key 'min_kapa' in judges (did you mean 'min_kappa'?)" in proc.stderr
    write(root / ".agentv/gate.yaml", FLOOR)
    write(root / ".agentv/judge-check.json", "{}")
    proc = run_cli("run", "evals", cwd=root)
    assert proc.returncode == 2 and "is not the output of `agentv-gate judge-check --json`" in proc.stderr
    assert parse_github_output("") == {}


def test_an_advisory_failure_does_not_stop_a_max_failures_run(tmp_path: Path) -> None:
    """An advisory failure fails no gate, so it must not stop the run either: with `--max-failures 1` it
    stopped the run, the later cases became not-run errors and the gate failed on a judge below its floor."""
    server = FakeLLMServer()
    server.set_default(CHAT, judge_failing("c0"))
    root = project(tmp_path, server.url, "tests:\n" + case("c0") + case("c1") + case("c2"))
    write(root / ".agentv/judge-check.json", check_file(0.41))
    ran = run_cli("run", "evals", "--no-cache", "--workers", "1", "--max-failures", "1", cwd=root)
    server.close()
    assert ran.returncode == 0, ran.stdout + ran.stderr
    rows = {row["eval_id"]: row for row in read_rows(root / RESULTS)}
    assert {k: (r["verdict"], r.get("advisory") is not None) for k, r in rows.items()} == {
        "c0": ("fail", True), "c1": ("pass", False), "c2": ("pass", False)}
