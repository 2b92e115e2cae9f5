"""Quarantine: known-failing cases listed in the gate's own config, `.agentv/gate.yaml`.

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


CRASHING_SUITE = """\
tests:
  - id: crashy
    input: What is the capital of France?
    assert:
      - name: judge
        type: code_judge
        script: [python3, crash.py]
"""


def test_a_quarantined_case_whose_judge_crashed_still_fails_the_gate(repo: Path, tmp_path: Path) -> None:
    """Fails before the fix: the error counted as quarantined and the run exited 0."""
    _project(repo, """\
quarantine:
  - id: crashy
    reason: known to fail (#7)
""")
    write(repo / "evals/crash.eval.yaml", CRASHING_SUITE)
    write(repo / "evals/crash.py", "raise SystemExit('the judge broke')\n")
    summary = tmp_path / "summary.md"
    ran = run_cli("run", "evals/crash.eval.yaml", "--no-cache", cwd=repo,
                  env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)})
    assert ran.returncode == EXIT_FAILED, ran.stdout + ran.stderr
    assert "agentv-gate FAILED: 1 case: 0 passed, 0 failed, 1 error (pass rate" in ran.stdout
    assert "ERROR    crashy" in ran.stdout and "errors are never quarantined" in ran.stdout
    annotations = [line for line in ran.stdout.splitlines() if line.startswith("::")]
    crashy = [line for line in annotations if "crashy" in line]
    assert crashy and all(line.startswith("::error ") for line in crashy), annotations
    assert all("errors are never quarantined" in line for line in crashy), crashy
    page = summary.read_text()
    assert "errors are never quarantined" in page and "quarantined (not failing the gate)" not in page
    suite = ET.parse(repo / ".agentv-gate/junit.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("errors") == "1" and suite.get("skipped") in (None, "0")
    error = next(tc for tc in suite.iter("testcase") if tc.get("name") == "crashy").find("error")
    assert error is not None and "errors are never quarantined" in (error.get("message") or "")
    assert "errors are never quarantined" in (repo / ".agentv-gate/report.html").read_text()


def test_a_quarantined_failure_beside_a_quarantined_error_is_still_quarantined(repo: Path) -> None:
    _project(repo, """\
quarantine:
  - id: crashy
    reason: known to fail (#7)
  - id: river
    reason: the agent knows no rivers yet
""")
    write(repo / "evals/crash.eval.yaml", CRASHING_SUITE)
    write(repo / "evals/crash.py", "raise SystemExit('the judge broke')\n")
    ran = run_cli("run", "evals", "--no-cache", cwd=repo)
    assert ran.returncode == EXIT_FAILED, ran.stdout + ran.stderr
    assert "3 cases: 1 passed, 0 failed, 1 error, 1 quarantined" in ran.stdout


def test_a_star_quarantine_is_refused_at_its_line_by_run_and_validate(repo: Path) -> None:
    """Fails before the fix: `id: '*'` quarantined every case, the run exited 0."""
    _project(repo, """\
quarantine:
  - id: river
    reason: the agent knows no rivers yet
  - id: '*'
    reason: the whole suite is flaky
""")
    ran = run_cli("run", "evals", "--no-cache", cwd=repo)
    assert ran.returncode == EXIT_USAGE, ran.stdout + ran.stderr
    assert ".agentv/gate.yaml:4: quarantine id '*' matches every case of every file, so nothing could fail the gate" \
        in ran.stderr
    assert not (repo / ".agentv-gate/results.jsonl").exists()  # nothing was run
    checked = run_cli("validate", "evals", cwd=repo)
    assert checked.returncode == EXIT_FAILED
    assert ".agentv/gate.yaml:4: quarantine id '*' matches" in checked.stdout


def test_a_glob_matching_every_case_of_the_run_is_refused_and_one_leaving_a_case_is_not(repo: Path) -> None:
    _project(repo, """\
quarantine:
  - id: '*i*'
    reason: everything with an i
""")
    ran = run_cli("run", "evals", "--no-cache", cwd=repo)
    assert ran.returncode == EXIT_USAGE, ran.stdout + ran.stderr
    assert ".agentv/gate.yaml:2: quarantine id '*i*' matches every case of this run (2)" in ran.stderr
    write(repo / ".agentv/gate.yaml", "quarantine:\n  - id: '*r*'\n    reason: the river\n")  # capital counts
    ran = run_cli("run", "evals", "--no-cache", cwd=repo)
    assert ran.returncode == EXIT_OK, ran.stdout + ran.stderr
    assert "1 quarantined" in ran.stdout


def test_an_exact_id_naming_the_one_case_of_a_run_still_quarantines_it(repo: Path) -> None:
    """Pre-commit runs only the files a commit touches: a run of one quarantined case is a legitimate use."""
    _project(repo, GATE)
    write(repo / "evals/geo.eval.yaml", "tests:\n" + RIVER_CASE)
    ran = run_cli("run", "evals", "--no-cache", cwd=repo)
    assert ran.returncode == EXIT_OK, ran.stdout + ran.stderr
    assert "1 case: 0 passed, 0 failed, 0 errors, 1 quarantined" in ran.stdout


def test_an_entry_scoped_to_another_file_does_not_quarantine_a_case_of_the_same_id(repo: Path) -> None:
    _project(repo, """\
quarantine:
  - id: river
    file: evals/other.eval.yaml
    reason: the other river
""")
    write(repo / "evals/other.eval.yaml", CAPITAL_SUITE.replace("id: capital", "id: river"))  # passes there
    ran = run_cli("run", "evals", "--no-cache", cwd=repo)
    assert ran.returncode == EXIT_FAILED, ran.stdout + ran.stderr
    assert "FAIL     river" in ran.stdout and "0 quarantined" not in ran.stdout and "quarantined" in ran.stdout


def test_an_entry_scoped_to_the_case_s_own_file_quarantines_it_however_the_path_is_spelt(repo: Path) -> None:
    _project(repo, """\
quarantine:
  - id: river
    file: ./evals/geo.eval.yaml
    reason: this river
""")
    ran = run_cli("run", "evals", "--no-cache", cwd=repo)
    assert ran.returncode == EXIT_OK, ran.stdout + ran.stderr
    assert "2 cases: 1 passed, 0 failed, 0 errors, 1 quarantined" in ran.stdout


def test_on_the_last_day_of_until_the_case_is_still_quarantined(repo: Path) -> None:
    """`until` is the last day the quarantine holds (docs/quarantine): on that day it holds, the day after it
    does not (test_past_its_expiry_the_case_counts_again)."""
    today = datetime.date.today()
    _project(repo, f"""\
quarantine:
  - id: river
    reason: the agent knows no rivers yet
    until: {today.isoformat()}
""")
    ran = run_cli("run", "evals", "--no-cache", cwd=repo)
    assert ran.returncode == EXIT_OK, ran.stdout + ran.stderr
    assert "1 quarantined" in ran.stdout and "expired" not in ran.stderr


def test_a_quarantined_case_that_errors_still_fails_a_regression_gate(repo: Path) -> None:
    _project(repo, None)
    write(repo / "evals/crash.eval.yaml", CRASHING_SUITE)
    write(repo / "evals/crash.py", "import json; print(json.dumps({'score': 1.0}))\n")
    write(repo / ".agentv/targets.yaml", TARGETS.replace("Paris is the capital of France.", "Paris, on the Seine."))
    assert run_cli("run", "evals", "--no-cache", "--output-dir", "base", cwd=repo).returncode == EXIT_OK
    write(repo / "evals/crash.py", "raise SystemExit('the judge broke')\n")
    write(repo / ".agentv/gate.yaml", "quarantine:\n  - id: crashy\n    reason: known to fail (#7)\n")
    ran = run_cli("run", "evals", "--no-cache", "--baseline", "base/results.jsonl", "--fail-on", "regression", cwd=repo)
    assert ran.returncode == EXIT_FAILED, ran.stdout + ran.stderr
