"""Quarantine (issue 36): known-failing cases listed in the gate's own config, `.agentv/gate.yaml`.

The eval files stay AgentV's; a quarantined case still runs, is reported as quarantined (a GitHub
warning, a skipped JUnit test), and never fails the gate. When it passes, the reports say to lift
the quarantine; past its `until` date it counts again.
"""

from __future__ import annotations

import datetime
import json
import xml.etree.ElementTree as ET
from pathlib import Path

from agentv_gate.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from tests.helpers.cli import run_cli
from tests.helpers.files import write
from tests.helpers.suites import CAPITAL_SUITE, RIVER_CASE

TARGETS = """\
targets:
  - name: default
    provider: mock
    response: Paris is the capital of France.
"""

SUITE = CAPITAL_SUITE + RIVER_CASE


def _project(repo: Path, gate: str | None) -> None:
    write(repo / ".agentv/targets.yaml", TARGETS)
    write(repo / "evals/geo.eval.yaml", SUITE)
    if gate is not None:
        write(repo / ".agentv/gate.yaml", gate)


def _rows(repo: Path) -> dict[str, dict]:
    lines = (repo / ".agentv-gate/results.jsonl").read_text().splitlines()
    return {row["eval_id"]: row for row in map(json.loads, lines)}


def test_without_a_quarantine_the_failing_case_fails_the_gate(repo: Path) -> None:
    _project(repo, None)
    ran = run_cli("run", "evals", "--no-cache", cwd=repo)
    assert ran.returncode == EXIT_FAILED, ran.stdout + ran.stderr


def test_a_quarantined_failure_is_reported_and_does_not_fail_the_gate(repo: Path, tmp_path: Path) -> None:
    _project(repo, """\
quarantine:
  - id: river
    file: evals/geo.eval.yaml
    reason: the agent knows no rivers yet (#12)
    until: 2999-12-31
""")
    output = tmp_path / "github-output"
    summary = tmp_path / "summary.md"
    ran = run_cli("run", "evals", "--no-cache", cwd=repo,
                  env={"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary)})
    out = ran.stdout + ran.stderr
    assert ran.returncode == EXIT_OK, out
    assert "agentv-gate PASSED: 2 cases: 1 passed, 0 failed, 0 errors, 1 quarantined" in ran.stdout
    assert "QUARANTINED river" in ran.stdout and "the agent knows no rivers yet (#12)" in ran.stdout
    # A warning annotation at the case's line, never an error
    annotations = [line for line in ran.stdout.splitlines() if line.startswith("::")]
    assert any(line.startswith("::warning file=evals/geo.eval.yaml,line=7,") and "quarantined" in line
               for line in annotations), annotations
    assert not any(line.startswith("::error") for line in annotations), annotations
    assert "1 quarantined" in summary.read_text()
    rows = _rows(repo)
    assert rows["river"]["verdict"] == "fail"
    assert rows["river"]["quarantined"] == "the agent knows no rivers yet (#12) (until 2999-12-31)"
    assert "quarantined" not in rows["capital"]  # a None field is left out of the row
    # JUnit: skipped, not failed, so a dashboard does not show the run red
    suite = ET.parse(repo / ".agentv-gate/junit.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == "0" and suite.get("skipped") == "1"
    river = next(tc for tc in suite.iter("testcase") if tc.get("name") == "river")
    skipped = river.find("skipped")
    assert skipped is not None and "quarantined: the agent knows no rivers yet" in (skipped.get("message") or "")
    assert "quarantined" in (repo / ".agentv-gate/report.html").read_text()


def test_a_quarantined_case_that_passes_says_to_lift_it(repo: Path) -> None:
    _project(repo, """\
quarantine:
  - id: capi*
    reason: flaky judge
""")
    ran = run_cli("run", "evals", "--no-cache", "--quiet", cwd=repo, env={"GITHUB_ACTIONS": "true"})
    assert ran.returncode == EXIT_FAILED  # river still fails: it is not quarantined
    assert "quarantined, and now passes: lift its quarantine in .agentv/gate.yaml: flaky judge" in ran.stdout
    assert any(line.startswith("::notice ") and "lift its quarantine" in line for line in ran.stdout.splitlines())


def test_past_its_expiry_the_case_counts_again(repo: Path) -> None:
    yesterday = datetime.date.today() - datetime.timedelta(days=1)
    _project(repo, f"""\
quarantine:
  - id: river
    reason: the agent knows no rivers yet
    until: {yesterday.isoformat()}
""")
    ran = run_cli("run", "evals", "--no-cache", cwd=repo)
    assert ran.returncode == EXIT_FAILED, ran.stdout + ran.stderr
    assert (f".agentv/gate.yaml:2: warning: quarantine of 'river' expired on {yesterday}: the case counts again"
            in ran.stderr)
    assert "FAIL     river" in ran.stdout


def test_gate_config_problems_are_located_and_stop_run_and_validate(repo: Path) -> None:
    _project(repo, """\
quarantine:
  - id: river
    until: someday
  - id: capital
    reason: x
    reson: typo
""")
    ran = run_cli("run", "evals", "--no-cache", cwd=repo)
    assert ran.returncode == EXIT_USAGE
    assert ".agentv/gate.yaml:2: a quarantine entry needs 'reason'" in ran.stderr
    assert ".agentv/gate.yaml:6: unknown key 'reson' in a quarantine entry (did you mean 'reason'?)" in ran.stderr
    checked = run_cli("validate", "evals", cwd=repo)
    assert checked.returncode == EXIT_FAILED
    assert ".agentv/gate.yaml:2: a quarantine entry needs 'reason'" in checked.stdout


GATE = """\
quarantine:
  - id: river
    reason: the agent knows no rivers yet (#12)
"""


def test_merge_keeps_the_quarantine_of_its_rows(repo: Path) -> None:
    _project(repo, GATE)
    assert run_cli("run", "evals", "--no-cache", "--shard", "1/2", "--output-dir", "s1", cwd=repo).returncode == EXIT_OK
    assert run_cli("run", "evals", "--no-cache", "--shard", "2/2", "--output-dir", "s2", cwd=repo).returncode == EXIT_OK
    merged = run_cli("merge", "s1/results.jsonl", "s2/results.jsonl", "--output-dir", "merged", cwd=repo)
    assert merged.returncode == EXIT_OK, merged.stdout + merged.stderr
    assert "1 quarantined" in merged.stdout


def test_a_quarantined_regression_does_not_fail_a_regression_gate(repo: Path) -> None:
    _project(repo, None)
    write(repo / ".agentv/targets.yaml", TARGETS.replace("Paris is the capital of France.", "Paris, on the Seine."))
    assert run_cli("run", "evals", "--no-cache", "--output-dir", "base", cwd=repo).returncode == EXIT_OK
    write(repo / ".agentv/targets.yaml", TARGETS)  # the change: river regresses
    ran = run_cli("run", "evals", "--no-cache", "--baseline", "base/results.jsonl", "--fail-on", "regression", cwd=repo)
    assert ran.returncode == EXIT_FAILED, ran.stdout + ran.stderr
    write(repo / ".agentv/gate.yaml", GATE)
    ran = run_cli("run", "evals", "--no-cache", "--baseline", "base/results.jsonl", "--fail-on", "regression", cwd=repo)
    assert ran.returncode == EXIT_OK, ran.stdout + ran.stderr
