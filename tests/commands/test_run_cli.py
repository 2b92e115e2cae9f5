"""`agentv-gate run` end to end: real CLI process, real targets file, real judge subprocesses."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli, start_cli
from tests.helpers.files import make_repo, write
from tests.helpers.processes import wait_for
from tests.helpers.reports import RESULTS, read_rows, rows_by_id

REPO = Path(__file__).resolve().parents[2]

JUDGE = """\
import json, sys
d = json.load(sys.stdin)
kw = d["config"]["keywords"]
found = [k for k in kw if k in d["answer"]]
print(json.dumps({"score": len(found) / len(kw), "hits": found,
                  "misses": [f"missing {k}" for k in kw if k not in found], "reasoning": f"{len(found)}/{len(kw)}"}))
"""


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    make_repo(tmp_path, """
        targets:
          - name: default
            provider: mock
            response: Paris is the capital of France.
            responses:
              - id: planet
                response: Saturn is the largest planet.
            judge_response: {score: 0.7, hits: [ok], misses: [], reasoning: judged}
          - name: broken-agent
            provider: cli
            command_template: "sh -c 'echo agent exploded >&2; exit 4'"
            timeout_seconds: 5
    """)
    write(tmp_path / "evals/judge.py", JUDGE)
    return tmp_path


def write_suite(project: Path, body: str, name: str = "suite.eval.yaml") -> Path:
    return write(project / "evals" / name, body)


KEYWORD_CASES = """
    tests:
      - id: capital
        criteria: Names Paris
        input: What is the capital of France?
        assert:
          - name: kw
            type: code_judge
            script: [python3, judge.py]
            keywords: [Paris, France]
      - id: planet
        criteria: Names Jupiter
        input: Which planet is largest?
        assert:
          - name: kw
            type: code_judge
            script: [python3, judge.py]
            keywords: [Jupiter, planet]
"""


def test_gate_fails_below_threshold_and_reports_every_case(project: Path) -> None:
    write_suite(project, KEYWORD_CASES)
    proc = run_cli("run", "evals", cwd=project)
    assert proc.returncode == 0, proc.stderr
    found = rows_by_id(project / RESULTS)
    assert found["capital"]["verdict"] == "pass" and found["capital"]["score"] == 1.0
    assert found["planet"]["verdict"] == "pass" and found["planet"]["score"] == 0.5  # 0.5 >= default 0.5
    junit = ET.parse(project / ".agentv-gate/junit.xml").getroot()
    assert junit.get("tests") == "2"
    # Raising the bar in the CLI fails the half-right answer.
    proc = run_cli("run", "evals", "--threshold", "0.8", cwd=project)
    assert proc.returncode == 1
    assert rows_by_id(project / RESULTS)["planet"]["verdict"] == "fail"
    assert rows_by_id(project / RESULTS)["planet"]["misses"] == ["missing Jupiter"]
    failure = ET.parse(project / ".agentv-gate/junit.xml").getroot().find(".//testcase[@name='planet']/failure")
    # The first miss, after AgentV's `score=` (what a dashboard shows in its one line)
    assert failure is not None and failure.get("message") == "score=0.500: missing Jupiter"


def test_all_pass_exits_zero(project: Path) -> None:
    write_suite(project, KEYWORD_CASES.replace("keywords: [Jupiter, planet]", "keywords: [planet]"))
    proc = run_cli("run", "evals", "--threshold", "1", cwd=project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 passed" in proc.stdout


def test_yaml_threshold_wins_over_cli(project: Path) -> None:
    suite = "threshold: 0.4\n" + textwrap.dedent(KEYWORD_CASES).lstrip("\n")
    assert "  - id: planet\n" in suite
    write_suite(project, suite.replace("  - id: planet\n", "  - id: planet\n    threshold: 0.9\n"))
    proc = run_cli("run", "evals", "--threshold", "0.99", cwd=project)
    found = rows_by_id(project / RESULTS)
    assert found["capital"]["threshold"] == 0.4 and found["capital"]["verdict"] == "pass"
    assert found["planet"]["threshold"] == 0.9 and found["planet"]["verdict"] == "fail"
    assert proc.returncode == 1


def test_weighted_aggregate_and_per_evaluator_results(project: Path) -> None:
    write_suite(project, """
        tests:
          - id: weighted
            criteria: c
            input: q
            assert:
              - name: heavy
                type: contains
                value: Paris
                weight: 3
              - name: light
                type: contains
                value: Berlin
                weight: 1
          - id: single
            criteria: c
            input: q
            assert:
              - name: only
                type: contains
                value: Paris
    """)
    run_cli("run", "evals", cwd=project)
    found = rows_by_id(project / RESULTS)
    assert found["weighted"]["score"] == pytest.approx(0.75)
    assert [(r["name"], r["score"], r["weight"]) for r in found["weighted"]["evaluator_results"]] == [
        ("heavy", 1.0, 3.0), ("light", 0.0, 1.0)]
    assert "evaluator_raw_request" not in found["weighted"]
    # Seed 004: one evaluator keeps evaluator_raw_request (and the deprecated grader_raw_request), no list.
    assert "evaluator_results" not in found["single"]


def test_text_where_agentv_reads_a_number_or_a_boolean_is_refused_before_anything_runs(project: Path) -> None:
    """YAML 1.2 reads `no` and `yes` as text and `'2'` is text: pydantic turned them into False, True and 2,
    so `case_sensitive: no` found "PARIS" in "Paris ..." and `weight: '2'` lifted a 0.5 to 0.667, passes
    AgentV (which reads only a number, or `=== true`/`false`) does not give."""
    write_suite(project, """
        tests:
          - id: shout
            input: q
            assert:
              - {type: icontains, value: PARIS, case_sensitive: no}
          - id: heavy
            input: q
            assert:
              - {type: contains, value: Paris, weight: '2'}
              - {type: contains, value: Berlin}
    """)
    ran = run_cli("run", "evals", cwd=project)
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert "evals/suite.eval.yaml:5: contains evaluator 'icontains-PARIS': field 'case_sensitive': " in ran.stderr
    assert "evals/suite.eval.yaml:9: contains evaluator 'contains-Paris': field 'weight': " in ran.stderr
    assert not (project / RESULTS).exists()


def test_case_without_evaluators_gets_default_llm_judge(project: Path) -> None:
    write_suite(project, """
        tests:
          - id: judged
            criteria: Names Paris
            input: What is the capital of France?
    """)
    run_cli("run", "evals", cwd=project)
    row = rows_by_id(project / RESULTS)["judged"]
    assert row["score"] == 0.7  # no pin and no sign: AgentV 4.42's judge, whose reply has no reasoning
    raw = row["evaluator_raw_request"]
    assert raw["user_prompt"].startswith("You are an expert grader.")
    assert "[[ ## answer ## ]]\nParis is the capital of France." in raw["user_prompt"]
    assert row["grader_raw_request"] == raw


def test_broken_target_is_an_error_case_and_others_still_run(project: Path) -> None:
    write_suite(project, """
        tests:
          - id: fine
            criteria: c
            input: q
            assert: [{type: contains, value: Paris}]
          - id: doomed
            criteria: c
            input: q
            target: broken-agent
            assert: [{type: contains, value: Paris}]
    """)
    proc = run_cli("run", "evals", cwd=project)
    assert proc.returncode == 1
    found = rows_by_id(project / RESULTS)
    assert found["fine"]["verdict"] == "pass"
    assert found["doomed"]["verdict"] == "error"
    assert "agent exploded" in found["doomed"]["error"]
    cases = ET.parse(project / ".agentv-gate/junit.xml").getroot().iter("testcase")
    doomed = next(c for c in cases if c.get("name", "").startswith("doomed"))
    assert doomed.find("error") is not None and doomed.find("failure") is None


def test_broken_judge_is_an_error_case_not_a_crash(project: Path) -> None:
    (project / "evals/crash.py").write_text("import sys\nsys.stderr.write('judge blew up')\nsys.exit(3)\n")
    write_suite(project, """
        tests:
          - id: crashy
            criteria: c
            input: q
            assert:
              - {name: crash, type: code_judge, script: [python3, crash.py]}
              - {name: ok, type: contains, value: Paris}
    """)
    proc = run_cli("run", "evals", cwd=project)
    assert proc.returncode == 1
    row = rows_by_id(project / RESULTS)["crashy"]
    assert row["verdict"] == "error"
    assert row["score"] == 0.5  # the other evaluator still ran and counted
    assert any("judge blew up" in m for m in row["misses"])


@pytest.mark.parametrize(
    ("args", "suite", "message"),
    [
        (["--target", "nope"], KEYWORD_CASES, "no target named 'nope'"),
        (["--threshold", "2"], KEYWORD_CASES, "--threshold 2.0 is not in 0..1"),
        (["--shard", "3/2"], KEYWORD_CASES, "K must be between 1 and N"),
        ([], "tests:\n  - id: x\n    input: q\n    assert: [{type: nonsense}]\n", "unknown evaluator type 'nonsense'"),
        (["--targets", "missing.yaml"], KEYWORD_CASES, "cannot read targets file"),
    ],
)
def test_configuration_errors_exit_2_without_running(project: Path, args: list[str], suite: str, message: str) -> None:
    write_suite(project, suite)
    proc = run_cli("run", "evals", *args, cwd=project)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (project / ".agentv-gate/results.jsonl").exists()


def test_run_is_the_default_command_and_evals_the_default_path(project: Path) -> None:
    write_suite(project, KEYWORD_CASES)
    proc = run_cli("--quiet", "--threshold", "0.9", cwd=project)
    assert proc.returncode == 1
    assert set(rows_by_id(project / RESULTS)) == {"capital", "planet"}


def test_no_targets_file_is_a_configuration_error(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    write_suite_dir = tmp_path / "evals"
    write_suite_dir.mkdir()
    (write_suite_dir / "s.yaml").write_text("tests:\n  - id: a\n    criteria: c\n    input: q\n")
    proc = run_cli("run", cwd=tmp_path)
    assert proc.returncode == 2
    assert "no targets file" in proc.stderr


def test_bundled_example_suite_passes_offline(tmp_path: Path) -> None:
    proc = run_cli("run", str(REPO / "examples/evals"), "--targets", str(REPO / "examples/.agentv/targets.yaml"),
                   "--output-dir", str(tmp_path), cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = read_rows(tmp_path / "results.jsonl")
    assert len(results) == 6 and all(r["verdict"] == "pass" for r in results)
    assert {r["suite"] for r in results} == {"examples/evals/geography.eval.yaml", "examples/evals/support.eval.yaml",
                                            "examples/evals/smoke.jsonl"}


def test_init_scaffold_runs_green(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    assert run_cli("init", cwd=tmp_path).returncode == 0
    assert run_cli("validate", "evals", cwd=tmp_path).returncode == 0
    proc = run_cli("run", "evals", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # A second init keeps what the user changed.
    (tmp_path / "evals/starter.eval.yaml").write_text("changed")
    run_cli("init", cwd=tmp_path)
    assert (tmp_path / "evals/starter.eval.yaml").read_text() == "changed"


def test_merge_refuses_when_a_shard_is_missing(project: Path) -> None:
    write_suite(project, KEYWORD_CASES + textwrap.indent(textwrap.dedent("""
        - id: third
          criteria: c
          input: q
          assert: [{type: contains, value: Paris}]
    """), "      "))
    for k in (1, 2, 3):
        run_cli("run", "evals", "--shard", f"{k}/3", "--output-dir", f"s{k}", cwd=project)
    proc = run_cli("merge", "s1/results.jsonl", "s3/results.jsonl", cwd=project)
    assert proc.returncode == 2
    assert "1 of 3 case(s) have no result (no results at all from shard(s) 2/3)" in proc.stderr
    proc = run_cli("merge", "s1/results.jsonl", "s2/results.jsonl", "s3/results.jsonl", cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert set(rows_by_id(project / RESULTS)) == {"capital", "planet", "third"}


def test_jsonl_sidecar_named_alone_runs_its_suite(project: Path) -> None:
    (project / "evals/set.jsonl").write_text('{"id": "j", "criteria": "c", "input": "q", '
                                             '"assert": [{"type": "contains", "value": "Paris"}]}\n')
    (project / "evals/set.yaml").write_text("description: sidecar\n")
    proc = run_cli("run", "evals/set.yaml", cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert set(rows_by_id(project / RESULTS)) == {"j"}


def signal_after_the_first_case(root: Path, signum: int, env: dict[str, str] | None = None) -> int:
    """Three cases of 0.6 s each, one at a time; `signum` once the first is in results.jsonl. The exit code."""
    make_repo(root, "targets:\n  - name: default\n    provider: mock\n    response: Paris\n    delay_ms: 600\n")
    write_suite(root, "tests:\n" + "".join(f"  - id: c{i}\n    input: q\n    assertions:\n"
                                           "      - {type: contains, value: Paris}\n" for i in range(3)))
    proc = start_cli("run", "evals", "--workers", "1", cwd=root, env=env)
    try:
        assert wait_for(lambda: (root / RESULTS).exists() and len(read_rows(root / RESULTS)) == 1, 20)
        os.kill(proc.pid, signum)
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode


def test_an_interrupted_runs_junit_and_outputs_never_read_as_a_pass(tmp_path: Path) -> None:
    """SIGTERM after one of three slow cases: the finished case passed, but a dashboard reading the
    JUnit file or a step reading the outputs must not see a green run. The cases not run are
    `<error>` testcases and `not-run` says how many. results.jsonl has a not-run row for each too, so
    `merge` of that file alone (an unsharded job, uploaded with `if: always()`) cannot pass either."""
    from tests.helpers.reports import checked_junit, junit_cases

    (tmp_path / "gh-output").write_text("")
    env = {"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": str(tmp_path / "gh-output"), "GITHUB_WORKSPACE": str(tmp_path)}
    assert signal_after_the_first_case(tmp_path, signal.SIGTERM, env) == 143
    rows = read_rows(tmp_path / RESULTS)
    finished = [r["eval_id"] for r in rows if r.get("failure_reason_code") != "interrupted"]
    assert finished in (["c0"], ["c0", "c1"])  # c1 too only on a machine too slow to signal within 0.6 s
    left = 3 - len(finished)
    assert [(r["eval_id"], r["verdict"], r["error"]) for r in rows[len(finished):]] == [
        (f"c{i}", "error", "not run: the run was interrupted (SIGTERM)") for i in range(len(finished), 3)]
    root = checked_junit(tmp_path / ".agentv-gate/junit.xml")
    assert junit_cases(root) == {f"c{i}": "pass" if i < len(finished) else "error" for i in range(3)}
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("3", "0", str(left))
    assert "not run: the run was interrupted (SIGTERM)" in ET.tostring(root, encoding="unicode")
    outputs = dict(line.split("=", 1) for line in (tmp_path / "gh-output").read_text().splitlines())
    assert (outputs["total"], outputs["passed"], outputs["not-run"]) == ("3", str(len(finished)), str(left))

    (tmp_path / "gh-output").write_text("")
    merged = run_cli("merge", RESULTS, "--output-dir", "merged", cwd=tmp_path, env=env)
    assert merged.returncode == 1, merged.stdout + merged.stderr
    assert f"{left} not run (interrupted)" in merged.stdout + merged.stderr
    root = checked_junit(tmp_path / "merged/junit.xml")
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("3", "0", str(left))
    outputs = dict(line.split("=", 1) for line in (tmp_path / "gh-output").read_text().splitlines())
    assert (outputs["total"], outputs["passed"], outputs["not-run"]) == ("3", str(len(finished)), str(left))
    assert len(read_rows(tmp_path / "merged/results.jsonl")) == 3  # a later merge still sees them


def test_results_of_a_killed_run_never_merge_or_compare_as_a_pass(tmp_path: Path) -> None:
    """SIGKILL (an out-of-memory kill, a lost runner) leaves no chance to write not-run rows: the
    results hold the finished cases only, all passed. Every row says how many rows its run set out
    to write, so `merge` of that file, and `compare` with it as HEAD, refuse (exit 2) instead of
    passing without the missing cases."""
    assert signal_after_the_first_case(tmp_path, signal.SIGKILL) == -signal.SIGKILL
    rows = read_rows(tmp_path / RESULTS)
    assert len(rows) in (1, 2) and all(r["verdict"] == "pass" and r["run_rows"] == 3 for r in rows)
    merged = run_cli("merge", RESULTS, "--output-dir", "merged", cwd=tmp_path)
    assert merged.returncode == 2, merged.stdout + merged.stderr
    assert f"wrote {len(rows)} of its 3 row(s)" in merged.stderr and rows[0]["run_id"] in merged.stderr
    (tmp_path / "base.jsonl").write_text((tmp_path / RESULTS).read_text())
    assert run_cli("compare", "base.jsonl", RESULTS, cwd=tmp_path).returncode == 2
    assert run_cli("run", "evals", "--output-dir", "whole", "--workers", "3", cwd=tmp_path).returncode == 0
    assert run_cli("merge", "whole/results.jsonl", "--output-dir", "merged", cwd=tmp_path).returncode == 0
    assert run_cli("compare", RESULTS, "whole/results.jsonl", cwd=tmp_path).returncode == 0  # an unfinished BASE is fine


def test_the_folders_the_gate_creates_ignore_themselves_and_a_users_own_folder_is_left_alone(tmp_path: Path, fake_llm) -> None:
    """`.agentv-gate/` and `.agentv-gate-cache/` carry a `.gitignore` of `*` (as `.pytest_cache` does):
    `git add -A` adds neither, whatever the project's own .gitignore says."""
    from tests.helpers.fake_llm_server import FakeReply
    from tests.helpers.files import make_repo, write
    from tests.helpers.suites import CAPITAL_SUITE
    from tests.helpers.targets import CHAT

    port = fake_llm.url.rsplit(":", 1)[1].split("/")[0]
    fake_llm.enqueue(CHAT, FakeReply.openai("Paris is the capital of France."))
    repo = make_repo(tmp_path / "repo", "targets:\n  - name: default\n    provider: openai\n"
                     f"    base_url: http://127.0.0.1:{port}/v1\n    api_key: ${{{{ GITIGNORE_T_KEY }}}}\n    model: m\n")
    (repo / ".git").rmdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    write(repo / "evals" / "geo.yaml", CAPITAL_SUITE)
    env = {"GITIGNORE_T_KEY": "sk-test-0123456789"}
    ran = run_cli("run", "evals", cwd=repo, env=env)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    for folder in (".agentv-gate", ".agentv-gate-cache"):
        assert (repo / folder / ".gitignore").read_text().splitlines()[-1] == "*", folder
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=repo,
                            capture_output=True, text=True, check=True).stdout
    assert ".agentv-gate" not in status and "evals/geo.yaml" in status, status
    (repo / "mine").mkdir()
    ran = run_cli("run", "evals", "--output-dir", "mine", cwd=repo, env=env)  # answered from the cache
    assert ran.returncode == 0 and (repo / "mine" / "results.jsonl").is_file()
    assert not (repo / "mine" / ".gitignore").exists()  # a folder the user made is theirs


def test_init_writes_assertions_and_a_starter_that_passes_at_a_pass_mark_of_0_8(tmp_path: Path) -> None:
    """The docs' key (`assertions:`, read as AgentV 4.x, whose pass mark is 0.8), and every case at 0.8 or more."""
    import json

    (tmp_path / ".git").mkdir()
    assert run_cli("init", cwd=tmp_path).returncode == 0
    starter = (tmp_path / "evals/starter.eval.yaml").read_text()
    assert "    assertions:\n" in starter and "    assert:\n" not in starter
    proc = run_cli("run", "evals", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [json.loads(line) for line in (tmp_path / ".agentv-gate/results.jsonl").read_text().splitlines()]
    assert rows and all(row["score"] >= 0.8 for row in rows), rows


def test_init_in_a_project_with_targets_says_to_retarget_or_delete_the_starter(tmp_path: Path) -> None:
    """An existing targets.yaml is kept, so the starter asks the real agent about Paris: init says so."""
    (tmp_path / ".git").mkdir()
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv/targets.yaml").write_text("targets:\n  - name: default\n    provider: cli\n"
                                                    "    command_template: ./my-agent {PROMPT}\n")
    proc = run_cli("init", cwd=tmp_path)
    assert proc.returncode == 0
    assert "kept .agentv/targets.yaml" in proc.stderr
    [line] = [line for line in proc.stderr.splitlines() if "starter.eval.yaml" in line and "default" in line]
    assert "retarget" in line and "delete" in line, proc.stderr
    starter = (tmp_path / "evals/starter.eval.yaml").read_text()
    assert "retarget" in starter and "delete" in starter


def test_quiet_prints_a_failing_case_once(tmp_path: Path) -> None:
    from tests.helpers.files import make_repo, write
    from tests.helpers.suites import CAPITAL_SUITE, PARIS_TARGETS, RIVER_CASE

    repo = make_repo(tmp_path / "repo", PARIS_TARGETS)
    write(repo / "evals" / "geo.yaml", CAPITAL_SUITE + RIVER_CASE)
    ran = run_cli("run", "-q", "evals", cwd=repo)
    assert ran.returncode == 1
    out = ran.stdout + ran.stderr
    assert len(re.findall(r"\briver\b", out)) == 1, out
    assert "miss: " in out and "agentv-gate FAILED: 2 cases: 1 passed, 1 failed" in out
    assert "capital" not in out


@pytest.mark.parametrize("links", [{"moved.eval.yaml": "gone/moved.eval.yaml"},
                                   {"one.eval.yaml": "two.eval.yaml", "two.eval.yaml": "one.eval.yaml"}],
                         ids=["dangling", "loop"])
def test_an_eval_file_link_that_leads_nowhere_is_a_problem_not_a_skipped_suite(project: Path,
                                                                              links: dict[str, str]) -> None:
    """A suite moved and its link left behind (or two links naming each other): its cases were skipped in
    silence, and the gate passed on the others."""
    write_suite(project, "tests:\n  - {id: fine, input: hi, assert: [{type: contains, value: Paris}]}\n")
    for name, target in links.items():
        (project / "evals" / name).symlink_to(target)
    for command, code in ((("validate", "evals"), 1), (("run", "evals", "--no-cache"), 2)):
        ran = run_cli(*command, cwd=project)
        out = ran.stdout + ran.stderr
        assert ran.returncode == code, out
        for name, target in links.items():
            assert f"evals/{name}:0: a link to {target} that leads to no file" in out, out
