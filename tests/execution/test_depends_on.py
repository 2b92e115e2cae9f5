"""`depends_on` / `on_dependency_failure` (AgentV 4.x), through the CLI: waves, a failed dependency, refusals."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from agentv_gate.loader import dependency_groups, with_dependencies
from agentv_gate.models import EvalCase
from agentv_gate.orchestrator import ShardSpec, select_shard
from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.reports import rows_by_id

AGENT = """\
import sys, time
prompt, out = sys.argv[1], sys.argv[2]
with open("log.txt", "a") as log:
    log.write(f"start {prompt}\\n")
if "boom" in prompt:
    sys.exit(3)
if "slow" in prompt:
    time.sleep(0.4)
with open("log.txt", "a") as log:
    log.write(f"end {prompt}\\n")
open(out, "w").write(f"answer to {prompt}")
"""

TARGETS = """\
targets:
  - name: default
    provider: cli
    command: python3 agent.py {PROMPT} {OUTPUT_FILE}
    cwd: ..
"""

def case(case_id: str, prompt: str, *depends_on: str, on_failure: str = "", value: str = "answer") -> str:
    """One test of a suite's `tests:` list, answered by AGENT, passing when the answer holds `value`."""
    return (f"  - id: {case_id}\n    input: {prompt}\n"
            + (f"    depends_on: [{', '.join(depends_on)}]\n" if depends_on else "")
            + (f"    on_dependency_failure: {on_failure}\n" if on_failure else "")
            + f"    assertions: [{{type: contains, value: {value}}}]\n")


SUITE = "tests:\n" + "".join([
    case("setup", "boom"), case("second", "second", "setup"), case("failing", "failing", "setup", on_failure="fail"),
    case("runs-anyway", "anyway", "setup", on_failure="run"), case("chain", "chain", "second", on_failure="run"),
    case("lowscore", "low", value="nope"), case("after-low", "afterlow", "lowscore"),
])
"""The side-by-side suite: AgentV 4.42.4 gives setup, second and failing an execution error (`Skipped:` /
`Failed: dependency failed (setup)`), lowscore a quality failure, the other three ok, each scored as here."""


def _repo(tmp_path: Path, suite: str = SUITE) -> Path:
    repo = make_repo(tmp_path, TARGETS)
    write(repo / "agent.py", AGENT)
    write(repo / "evals/d.eval.yaml", suite)
    return repo


def test_a_failed_dependency_skips_or_fails_its_dependants_as_agentv_does(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    ran = run_cli("run", "evals", "--workers", "4", cwd=repo)
    assert ran.returncode == 1, ran.stderr
    rows = rows_by_id(repo / ".agentv-gate/results.jsonl")
    assert {case: (row["score"], row["verdict"]) for case, row in rows.items()} == {
        "setup": (0.0, "error"), "second": (0.0, "error"), "failing": (0.0, "error"), "runs-anyway": (1.0, "pass"),
        "chain": (1.0, "pass"), "lowscore": (0.0, "fail"), "after-low": (1.0, "pass")}
    assert rows["second"]["error"] == "Skipped: dependency failed (setup)"
    assert rows["failing"]["error"] == "Failed: dependency failed (setup)"
    assert rows["second"]["failure_reason_code"] == "dependency_failed"
    log = (repo / "log.txt").read_text().splitlines()
    assert "start second" not in log and "start failing" not in log  # never run
    cases = {tc.get("name"): tc for tc in ET.parse(repo / ".agentv-gate/junit.xml").iter("testcase")}
    assert cases["second"].find("error") is not None and cases["failing"].find("error") is not None


def test_skipped_dependants_never_pass_the_run(tmp_path: Path) -> None:
    """Every other case passes: the skipped one still fails the run (exit 1), in JUnit and the summary."""
    repo = _repo(tmp_path, "tests:\n" + case("setup", "boom") + case("dependant", "x", "setup"))
    ran = run_cli("run", "evals", cwd=repo)
    assert ran.returncode == 1
    assert "2 errors" in ran.stdout
    suite = ET.parse(repo / ".agentv-gate/junit.xml").getroot().iter("testsuite")
    assert sum(int(s.get("errors") or 0) for s in suite) == 2


def test_a_wave_starts_once_every_case_of_the_earlier_waves_has_finished(tmp_path: Path) -> None:
    """AgentV's waves: `b` (wave 1) waits for the slow, unrelated `slow` of wave 0, not only for `a`."""
    repo = _repo(tmp_path, "tests:\n" + case("b", "b", "a") + case("a", "a") + case("slow", "slow") + case("c", "c", "b"))
    ran = run_cli("run", "evals", "--workers", "4", cwd=repo)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    log = (repo / "log.txt").read_text().splitlines()
    assert log.index("end slow") < log.index("start b") < log.index("end b") < log.index("start c")
    assert log.index("end a") < log.index("start b")


@pytest.mark.parametrize(("cases", "line", "message"), [
    ("  - {id: a, input: x, criteria: y, depends_on: [zz]}\n", 2,
     "test 'a' depends on 'zz', but no test with that id exists in this file"),
    ("  - {id: a, input: x, criteria: y, depends_on: [a]}\n", 2, "test 'a' depends on itself"),
    ("  - {id: a, input: x, criteria: y, depends_on: [b]}\n  - {id: b, input: x, criteria: y, depends_on: [a]}\n", 2,
     "circular dependency: a -> b -> a"),
    ("  - id: a\n    input: x\n    criteria: y\n    depends_on: a\n", 5, "'depends_on' must be a list of test ids"),
    ("  - id: a\n    input: x\n    criteria: y\n    on_dependency_failure: ignore\n", 5,
     "'on_dependency_failure' must be skip, fail or run, got 'ignore'"),
])
def test_a_graph_agentv_refuses_is_refused_at_its_line(tmp_path: Path, cases: str, line: int, message: str) -> None:
    repo = _repo(tmp_path, "tests:\n" + cases)
    ran = run_cli("run", "evals", cwd=repo)
    assert ran.returncode == 2
    assert f"evals/d.eval.yaml:{line}: {message}" in ran.stderr
    assert not (repo / "log.txt").exists()


def test_a_filter_that_leaves_out_a_dependency_is_refused(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    ran = run_cli("run", "evals", "--test-id", "second", cwd=repo)
    assert ran.returncode == 2
    assert "test 'second' depends on 'setup', which the filters leave out: select it too" in ran.stderr
    assert run_cli("run", "evals", "--test-id", "second", "--test-id", "setup", cwd=repo).returncode == 1


def _case(case_id: str, *depends_on: str, suite: str = "s.yaml") -> EvalCase:
    return EvalCase(id=case_id, suite=suite, source_file=Path(suite), depends_on=list(depends_on))


def test_shards_keep_a_dependency_group_together() -> None:
    cases = [_case("a"), _case("b", "a"), _case("c"), _case("d", "b"), _case("e"), _case("a", suite="t.yaml")]
    shards = [[(c.suite, c.id) for c in select_shard(cases, ShardSpec(k, 2))] for k in (1, 2)]
    assert sorted(sum(shards, [])) == sorted((c.suite, c.id) for c in cases)
    assert any({("s.yaml", "a"), ("s.yaml", "b"), ("s.yaml", "d")} <= set(shard) for shard in shards)
    assert [len(g) for g in dependency_groups(cases)] == [3, 1, 1, 1]


def test_a_rerun_runs_a_case_with_its_dependencies() -> None:
    pool = [_case("a"), _case("b", "a"), _case("c", "b"), _case("d")]
    assert [c.id for c in with_dependencies([pool[2]], pool)] == ["a", "b", "c"]
    assert [c.id for c in with_dependencies([pool[3]], pool)] == ["d"]
