"""AgentV 4.x's eval-file forms, read as AgentV 4.42.4 reads them, and 2.19's meaning kept elsewhere.

Each was refused before (the 4.42 examples counted 26 files with `governance:`, 7 with string criteria,
4 with `assertions:` in a composite, 4 with `execution.workers`): now read, or refused with a located
reason when agentv-gate does not run it yet.
"""

from __future__ import annotations

import json
from pathlib import Path

from agentv_gate.loader import load_eval_file
from agentv_gate.models import CompositeConfig, LlmJudgeConfig
from tests.helpers.cli import run_cli
from tests.helpers.files import write
from tests.helpers.reports import RESULTS, rows_by_id

TARGETS = """\
targets:
  - name: default
    provider: mock
    response: "Paris is the capital of France."
"""

RECORDER = """\
import json, sys
payload = json.load(sys.stdin)
open(sys.argv[1], "w").write(json.dumps(payload))
print(json.dumps({"score": 1}))
"""


def _repo(tmp_path: Path, suites: dict[str, str], files: dict[str, str] | None = None) -> Path:
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "targets.yaml").write_text(TARGETS)
    (tmp_path / "evals").mkdir()
    for name, text in {**suites, **(files or {})}.items():
        (tmp_path / "evals" / name).write_text(text)
    return tmp_path


def test_governance_and_suite_metadata_reach_a_4x_graders_cases_merged_as_4_42_merges_them(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"gov.eval.yaml": """\
category: safety
governance: {owner: risk-team, controls: [ctl-1]}
metadata: {area: geo, labels: [a, b], governance: {owner: ignored}}
tests:
  - id: capital
    input: What is the capital of France?
    metadata: {labels: [b, c], area: case-wins}
    assertions:
      - name: g
        type: code-grader
        command: [python3, recorder.py, new.json]
"""}, {"recorder.py": RECORDER})
    proc = run_cli("run", "evals", "--no-cache", cwd=repo)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    metadata = json.loads((repo / "evals" / "new.json").read_text())["metadata"]
    assert metadata == {"area": "case-wins", "labels": ["a", "b", "c"],
                        "governance": {"owner": "risk-team", "controls": ["ctl-1"]}}


def test_a_2x_file_s_judge_gets_no_metadata_as_in_2_19(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"old.eval.yaml": """\
metadata: {area: geo}
tests:
  - id: capital
    input: What is the capital of France?
    metadata: {labels: [c]}
    assert:
      - name: g
        type: code_judge
        script: [python3, recorder.py, old.json]
"""}, {"recorder.py": RECORDER})
    proc = run_cli("run", "evals", "--no-cache", cwd=repo)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert "metadata" not in json.loads((repo / "evals" / "old.json").read_text())  # 2.19's payload has none


def test_plain_string_criteria_become_one_rubrics_evaluator_weighted_by_their_number(tmp_path: Path) -> None:
    suite = tmp_path / "s.eval.yaml"
    suite.write_text("""\
tests:
  - id: t
    input: Explain quicksort.
    assertions:
      - type: contains
        value: pivot
      - Mentions divide-and-conquer approach
      - Explains the partition step
      - type: is-json
      - States time complexity correctly
""")
    result = load_eval_file(suite, repo_root=tmp_path)
    assert not result.errors, result.errors
    kinds = [(c.type, c.weight) for c in result.cases[0].evaluators]
    assert kinds == [("contains", 1.0), ("llm_judge", 3.0), ("is_json", 1.0)]
    rubric = result.cases[0].evaluators[1]
    assert isinstance(rubric, LlmJudgeConfig) and rubric.rubrics is not None
    assert [(r.id, r.outcome, r.required) for r in rubric.rubrics] == [
        ("rubric-1", "Mentions divide-and-conquer approach", True), ("rubric-2", "Explains the partition step", True),
        ("rubric-3", "States time complexity correctly", True)]


def test_a_composite_reads_its_members_from_assertions(tmp_path: Path) -> None:
    suite = tmp_path / "s.eval.yaml"
    suite.write_text("""\
tests:
  - id: t
    input: Say hello.
    assertions:
      - name: both
        type: composite
        aggregator: {type: weighted_average}
        assertions:
          - {name: hi, type: contains, value: hello}
          - {name: json, type: is-json}
""")
    result = load_eval_file(suite, repo_root=tmp_path)
    assert not result.errors, result.errors
    composite = result.cases[0].evaluators[0]
    assert isinstance(composite, CompositeConfig)
    assert [m.name for m in composite.evaluators] == ["hi", "json"]


def test_min_score_is_the_required_gates_mark_and_said_when_nothing_reads_it(tmp_path: Path) -> None:
    suite = tmp_path / "s.eval.yaml"
    suite.write_text("""\
tests:
  - id: t
    input: Say hello.
    assertions:
      - {name: gated, type: contains, value: hello, required: true, min_score: 0.6}
      - {name: loose, type: contains, value: bye, min_score: 0.6}
""")
    result = load_eval_file(suite, repo_root=tmp_path)
    assert not result.errors, result.errors
    assert result.cases[0].evaluators[0].required_mark == 0.6
    assert result.cases[0].evaluators[1].required_mark is None
    assert [str(w) for w in result.warnings] == [
        f"{suite}:6: warning: contains evaluator 'loose': 'min_score' is read only beside 'required: true' "
        "(AgentV's required gate); here it changes nothing (expected required: true beside it, or no 'min_score')"]


def test_a_rubric_operator_and_min_score_are_read(tmp_path: Path) -> None:
    suite = tmp_path / "s.eval.yaml"
    suite.write_text("""\
tests:
  - id: t
    input: Say hello.
    assertions:
      - type: rubrics
        criteria:
          - {id: no-claim, outcome: Says the sky is green, operator: contradiction}
          - {id: bands, outcome: Greets, min_score: 0.7, score_ranges: [{score_range: [0, 10], outcome: any}]}
""")
    result = load_eval_file(suite, repo_root=tmp_path)
    assert not result.errors, result.errors
    judge = result.cases[0].evaluators[0]
    assert isinstance(judge, LlmJudgeConfig) and judge.rubrics is not None
    assert judge.rubrics[0].operator == "contradiction"
    assert judge.rubrics[1].required_min_score == 7


def test_budget_usd_is_total_budget_usds_4x_name_and_both_at_once_are_refused(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"b.eval.yaml": """\
execution: {budget_usd: 2.5, total_budget_usd: 2.5}
tests:
  - {id: t, input: hi, criteria: greets}
"""})
    proc = run_cli("validate", "evals", cwd=repo)
    assert proc.returncode == 1
    assert "evals/b.eval.yaml:1: 'budget_usd' and 'total_budget_usd' are one setting" in proc.stdout + proc.stderr
    (repo / "evals" / "b.eval.yaml").write_text("execution: {budget_usd: 2.5}\ntests:\n  - {id: t, input: hi, "
                                                 "assertions: [{type: contains, value: Paris}]}\n")
    result = load_eval_file(repo / "evals" / "b.eval.yaml", repo_root=repo)
    assert result.cases[0].suite_execution.total_budget_usd == 2.5


def test_execution_workers_caps_a_suites_cases_at_once(tmp_path: Path) -> None:
    """Three cases of a `workers: 1` suite under --workers 4: their grader runs never overlap."""
    grader = """\
import json, sys, time
payload = json.load(sys.stdin)
start = time.time(); time.sleep(0.4)
with open(sys.argv[1], "a") as log:
    log.write(f"{start} {time.time()}\\n")
print(json.dumps({"score": 1}))
"""
    cases = "".join(f"""\
  - id: c{n}
    input: hi {n}
    assertions:
      - {{name: g, type: code-grader, command: [python3, timed.py, times.log]}}
""" for n in range(3))
    repo = _repo(tmp_path, {"w.eval.yaml": "execution: {workers: 1}\ntests:\n" + cases}, {"timed.py": grader})
    proc = run_cli("run", "evals", "--no-cache", "--workers", "4", cwd=repo)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    spans = sorted(tuple(map(float, line.split())) for line in (repo / "evals" / "times.log").read_text().splitlines())
    assert len(spans) == 3
    assert all(before[1] <= after[0] for before, after in zip(spans, spans[1:], strict=False)), spans


def test_tag_and_exclude_tag_select_suites_by_their_tags(tmp_path: Path) -> None:
    case = "tests:\n  - {id: %s, input: hi, assertions: [{type: contains, value: Paris}]}\n"
    repo = _repo(tmp_path, {"a.eval.yaml": "tags: [smoke, fast]\n" + case % "a",
                            "b.eval.yaml": "tags: [smoke]\n" + case % "b",
                            "c.eval.yaml": case % "c"})

    only_fast = run_cli("run", "evals", "--no-cache", "--tag", "smoke", "--tag", "fast", cwd=repo)
    assert set(rows_by_id(repo / RESULTS)) == {"a"}, only_fast.stderr
    run_cli("run", "evals", "--no-cache", "--exclude-tag", "fast", cwd=repo)
    assert set(rows_by_id(repo / RESULTS)) == {"b", "c"}


def test_conversations_skill_triggers_and_max_steps_are_read_as_4x_reads_them(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"conv.eval.yaml": """\
tests:
  - id: chat
    mode: conversation
    input: hi
    turns:
      - input: hello
    assertions:
      - {name: s, type: skill-trigger, skill: deploy}
      - {name: agentic, type: llm-grader, max_steps: 5}
"""})
    proc = run_cli("validate", "evals", cwd=repo)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "'mode' is an AgentV feature" not in out and "'turns' is an AgentV feature" not in out  # conversations run
    assert "skill-trigger" not in out  # skill-trigger graders run
    # 4.42.4 checks max_steps and never uses it (its built-in agent grader runs 10 steps): said at its line
    assert "evals/conv.eval.yaml:9: warning: 'max_steps' has no effect here" in out, out


MERGING = """\
{governance}defaults: &checks
  type: contains
  value: Paris
tests:
  - id: t
    input: hi
    assertions:
      - <<: *checks
        name: merged
"""


def test_merge_keys_are_merged_in_a_4x_file_and_refused_in_a_2x_one(tmp_path: Path) -> None:
    """AgentV 4.23+ merges `<<` keys; 2.19 reads `<<` as an ordinary key, so a 2.x file's are refused."""
    four = tmp_path / "four.eval.yaml"
    four.write_text(MERGING.format(governance="governance: {owner: geo}\n").replace("defaults:", "metadata:"))
    result = load_eval_file(four, repo_root=tmp_path)
    assert not result.errors, result.errors
    merged = result.cases[0].evaluators[0]
    assert (merged.name, merged.type, getattr(merged, "value", None)) == ("merged", "contains", "Paris")
    two = tmp_path / "two.eval.yaml"
    two.write_text(MERGING.format(governance="").replace("defaults:", "metadata:"))
    refused = load_eval_file(two, repo_root=tmp_path)
    assert [p.line for p in refused.errors] == [8]
    assert "'<<' merge keys are not read" in refused.errors[0].message


def test_a_score_ranges_shorthand_map_is_read_as_4_42_reads_it(tmp_path: Path) -> None:
    suite = tmp_path / "s.eval.yaml"
    suite.write_text("""\
tests:
  - id: t
    input: Summarise.
    assertions:
      - type: rubrics
        criteria:
          - id: accuracy
            score_ranges: {0: Wrong, 3: Partly, 8: Right}
""")
    result = load_eval_file(suite, repo_root=tmp_path)
    assert not result.errors, result.errors
    judge = result.cases[0].evaluators[0]
    assert isinstance(judge, LlmJudgeConfig) and judge.rubrics is not None
    assert [(b.score_range, b.outcome) for b in judge.rubrics[0].score_ranges or []] == [
        ((0, 2), "Wrong"), ((3, 7), "Partly"), ((8, 10), "Right")]


def test_agentv_4x_config_keys_are_read_and_its_cli_only_ones_warn(tmp_path: Path) -> None:
    """4.42's config.yaml adds OpenTelemetry preferences (no effect on a score: accepted) and `results` /
    `hooks`, which act only on AgentV's own CLI: a located warning, an error under --strict."""
    write(tmp_path / ".agentv/targets.yaml", "targets:\n  - name: default\n    provider: mock\n    response: Paris\n")
    write(tmp_path / "evals/s.eval.yaml", "tests:\n  - {id: a, input: q, criteria: c}\n")
    write(tmp_path / ".agentv/config.yaml", "execution:\n  export_otel: true\n  otel_backend: langfuse\n"
                                            "  otel_capture_content: false\n  otel_group_turns: true\n")
    proc = run_cli("validate", "evals", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "config.yaml" not in proc.stdout
    write(tmp_path / ".agentv/config.yaml", "results:\n  repo: git@example.com:r.git\nhooks:\n  before_session: make\n")
    proc = run_cli("validate", "evals", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert ".agentv/config.yaml:1: warning: 'results' has no effect here" in proc.stdout
    assert ".agentv/config.yaml:3: warning: 'hooks' has no effect here" in proc.stdout
    assert run_cli("validate", "evals", "--strict", cwd=tmp_path).returncode == 1
