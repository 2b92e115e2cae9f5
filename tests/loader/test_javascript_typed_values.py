"""Numbers and true/false written as text (or as each other) in evaluator settings: refused at their line.

AgentV reads each setting with JavaScript's `typeof`: `weight: "2"` is an error there, a latency
`threshold: "5000"` skips the evaluator, a field's `required: "false"` or `weight: "3"` is left at its
default (required, weight 1). pydantic's lax mode read each of them as the number or boolean the text
spells (and `threshold: true` as 1), scoring the case as AgentV never would; each is now refused.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write

TARGETS = "targets:\n  - name: default\n    provider: mock\n    response: Hello World\n"
HEAD = "tests:\n  - id: c\n    criteria: c\n    input: q\n    assert:\n"  # the first entry is on line 6


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", TARGETS)


@pytest.mark.parametrize(("entry", "fragment"), [
    ("{type: contains, value: World, weight: '2'}", "field 'weight': Input should be a valid number, got '2'"),
    ("{type: contains, value: World, weight: true}", "field 'weight': Input should be a valid number, got true"),
    ("{type: icontains, value: world, case_sensitive: 'false'}",
     "field 'case_sensitive': Input should be a valid boolean, got 'false'"),
    ("{type: contains-any, value: [World, x], any: 1}", "field 'any': Input should be a valid boolean, got 1"),
    ("{type: equals, value: Hello World, trim: 'false'}", "field 'trim': Input should be a valid boolean"),
    ("{type: latency, threshold: '5000'}", "field 'threshold': Input should be a valid number, got '5000'"),
    ("{type: latency, threshold: true}", "field 'threshold': Input should be a valid number, got true"),
    ("{type: cost, budget: '0.05'}", "field 'budget': Input should be a valid number"),
    ("{type: execution-metrics, max_cost_usd: '1'}", "field 'max_cost_usd': Input should be a valid number"),
    ("{type: field_accuracy, fields: [{path: a, required: 'false'}]}",
     "field 'fields.0.required': Input should be a valid boolean, got 'false'"),
    ("{type: field_accuracy, fields: [{path: a, weight: '3'}]}",
     "field 'fields.0.weight': Input should be a valid number, got '3'"),
    ("{type: tool-trajectory, mode: in_order, expected: [{tool: x, max_duration_ms: '10'}]}",
     "field 'expected.0.max_duration_ms': Input should be a valid number, got '10'"),
])
def test_a_number_or_boolean_written_as_text_is_refused_at_its_line(repo: Path, entry: str, fragment: str) -> None:
    write(repo / "evals/typed.eval.yaml", HEAD + f"      - {entry}\n")
    proc = run_cli("validate", "evals/typed.eval.yaml", cwd=repo)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout.startswith("evals/typed.eval.yaml:6: "), proc.stdout
    assert fragment in proc.stdout, proc.stdout


def test_an_aggregator_type_not_written_as_agentv_spells_it_skips_the_composite(repo: Path) -> None:
    """`Threshold` is no aggregator AgentV knows: it skips the composite ("invalid aggregator type"), so it is
    not run here either, and the warning says so at its line (lower-cased, it ran as `threshold`)."""
    write(repo / "evals/typed.eval.yaml", HEAD + "      - {name: c, type: composite, aggregator: {type: Threshold, "
          "threshold: 0.5}, evaluators: [{name: is-json, type: is-json}]}\n")
    proc = run_cli("validate", "evals/typed.eval.yaml", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("evals/typed.eval.yaml:6: warning: composite 'c' has no effect here: its aggregator "
                                  "type 'Threshold' is none AgentV knows"), proc.stdout
    strict = run_cli("validate", "--strict", "evals/typed.eval.yaml", cwd=repo)
    assert strict.returncode == 1, strict.stdout + strict.stderr


def test_a_case_that_passes_only_by_reading_text_as_false_is_not_run(repo: Path) -> None:
    # `case_sensitive: "false"` is true to JavaScript; read as false, "world" was found in "Hello World".
    write(repo / "evals/typed.eval.yaml", HEAD + "      - {type: icontains, value: world, case_sensitive: 'false'}\n")
    proc = run_cli("run", "evals/typed.eval.yaml", "--output-dir", "out", cwd=repo)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "evals/typed.eval.yaml:6: contains evaluator 'icontains-world': field 'case_sensitive'" in proc.stderr
    assert not (repo / "out/results.jsonl").exists()


def test_trials_cost_limit_written_as_text_is_refused(repo: Path) -> None:
    write(repo / "evals/typed.eval.yaml", "execution:\n  trials: {count: 2, cost_limit_usd: '1'}\n"
                                          "tests:\n  - id: c\n    criteria: c\n    input: q\n")
    proc = run_cli("validate", "evals/typed.eval.yaml", cwd=repo)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "evals/typed.eval.yaml:2: trials.cost_limit_usd: Input should be a valid number, got '1'" in proc.stdout


@pytest.mark.parametrize(("weight", "shown"), [("'3'", "'3'"), ("true", "true")])
def test_a_composite_aggregator_weight_written_as_text_is_refused_at_its_line(repo: Path, weight: str,
                                                                             shown: str) -> None:
    """AgentV keeps only the aggregator weights that are numbers (`typeof value === 'number'`); a weight
    written as text was read as that number here, weighting the member as AgentV never does."""
    write(repo / "evals/typed.eval.yaml", HEAD + f"""\
      - name: both
        type: composite
        aggregator:
          type: weighted_average
          weights:
            hit: {weight}
        evaluators:
          - {{name: hit, type: contains, value: World}}
          - {{name: miss, type: contains, value: Nope}}
""")
    proc = run_cli("validate", "evals/typed.eval.yaml", cwd=repo)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout.startswith(f"evals/typed.eval.yaml:11: composite evaluator 'both': aggregator weight {shown} "
                                  "for member 'hit' is not a number"), proc.stdout


@pytest.mark.parametrize(("entry", "fragment"), [
    ("{type: Contains, value: World}", "unknown evaluator type 'Contains'"),
    ("{type: ' contains', value: World}", "unknown evaluator type ' contains'"),
    ("{type: IS_JSON}", "unknown evaluator type 'IS_JSON'"),
])
def test_a_type_is_matched_as_written_not_lower_cased(repo: Path, entry: str, fragment: str) -> None:
    """AgentV compares `type` as written (only `_` and `-` are one): `Contains` is no built-in there, but a
    custom assertion type it looks for and does not find, and an aggregator `Threshold` is invalid. Lower-cased
    and trimmed here, they ran as `contains` and `threshold`."""
    write(repo / "evals/typed.eval.yaml", HEAD + f"      - {entry}\n")
    proc = run_cli("validate", "evals/typed.eval.yaml", cwd=repo)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout.startswith("evals/typed.eval.yaml:6: "), proc.stdout
    assert fragment in proc.stdout, proc.stdout
