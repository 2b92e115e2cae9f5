"""Numbers that make no sense are refused where they are written, never a traceback or bare `NaN`.

A 5000-digit integer, NaN/infinite/negative weights and timeouts, a regex that cannot compile:
`validate` names file:line for each (exit 1), `run` refuses to start (exit 2). Flags out of
range (`--workers 0`, `--judge-timeout nan`) are usage errors (exit 2).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.hostile import no_traceback

HUGE = "9" * 5000


def test_a_huge_integer_is_a_located_error_in_yaml_jsonl_and_targets(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    write(repo / "evals" / "a.eval.yaml", f"tests:\n  - id: a\n    input: q\n    threshold: {HUGE}\n"
          "    assert: [{type: contains, value: ok}]\n")
    write(repo / "evals" / "b.eval.jsonl", '{"id": "b", "input": "q", "criteria": "c"}\n'
          f'{{"id": "c", "input": "q", "criteria": "c", "threshold": {HUGE}}}\n')
    validate = run_cli("validate", "evals", cwd=repo)
    assert validate.returncode == 1 and no_traceback(validate.stdout + validate.stderr), validate.stderr[-2000:]
    assert "evals/a.eval.yaml:4:" in validate.stdout and "5000 digits" in validate.stdout, validate.stdout
    assert "evals/b.eval.jsonl:2:" in validate.stdout, validate.stdout
    run = run_cli("run", "evals", cwd=repo)
    assert run.returncode == 2 and no_traceback(run.stdout + run.stderr), run.stderr[-2000:]

    write(repo / "evals" / "a.eval.yaml", "tests:\n  - {id: a, input: q, assert: [{type: contains, value: ok}]}\n")
    (repo / "evals" / "b.eval.jsonl").unlink()
    write(repo / ".agentv" / "targets.yaml", f"targets:\n  - name: default\n    provider: mock\n    workers: {HUGE}\n")
    run = run_cli("run", "evals", cwd=repo)
    assert run.returncode == 2 and no_traceback(run.stdout + run.stderr), run.stderr[-2000:]
    assert "targets.yaml" in run.stderr


def test_nan_infinite_and_negative_numbers_and_bad_regexes_are_refused_at_load(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    write(repo / "evals" / "n.eval.yaml", """
        tests:
          - id: c
            input: q
            criteria: c
            assert:
              - {type: contains, value: ok, weight: -1}
              - {type: contains, value: ok, weight: .nan}
              - {type: regex, value: "(x"}
              - {type: code_judge, name: j, script: [python3, -c, x], timeout_seconds: .inf}
              - {type: code_judge, name: k, script: [python3, -c, x], timeout_seconds: -3}
              - {type: llm_judge, name: p, prompt: {script: [python3, -c, x], timeout_seconds: .nan}}
              - {type: field_accuracy, name: f, fields: [{path: a, weight: .inf}]}
          - {id: t, input: q, criteria: c, threshold: .nan}
        """)
    validate = run_cli("validate", "evals", cwd=repo)
    assert validate.returncode == 1, validate.stdout
    located = {int(line.split(":")[1]) for line in validate.stdout.splitlines() if line.startswith("evals/n.eval.yaml:")}
    assert located == {6, 7, 8, 9, 10, 11, 12, 13}, validate.stdout
    assert "invalid regex" in validate.stdout
    run = run_cli("run", "evals", cwd=repo)
    assert run.returncode == 2 and "nothing was run" in run.stderr, run.stderr


@pytest.mark.parametrize("flags", [("--workers", "0"), ("--workers", "-3"), ("--workers", "100000"),
                                   ("--judge-timeout", "nan"), ("--judge-timeout", "-1"),
                                   ("--judge-timeout", "inf")])
def test_out_of_range_flags_are_usage_errors(tmp_path: Path, flags: tuple[str, str]) -> None:
    repo = make_repo(tmp_path / "repo")
    write(repo / "evals" / "a.eval.yaml", "tests:\n  - {id: a, input: q, assert: [{type: contains, value: ok}]}\n")
    run = run_cli("run", "evals", *flags, cwd=repo)
    assert run.returncode == 2, run.stdout + run.stderr
    assert flags[0] in run.stderr and no_traceback(run.stderr)
    assert not (repo / ".agentv-gate" / "results.jsonl").exists()


def test_weights_each_finite_that_add_up_past_the_largest_float_are_refused(tmp_path: Path) -> None:
    """Three weights of 1e308 are each finite, but their sum is not: the weighted mean is inf / inf,
    NaN, and a field_accuracy score of NaN clamped into [0, 1] came out 1.0, a pass with a field wrong."""
    repo = make_repo(tmp_path / "repo", "targets:\n  - name: default\n    provider: mock\n"
                     "    response: '{\"a\": 1, \"b\": 2, \"c\": 3}'\n")
    write(repo / "evals" / "w.eval.yaml", """
        tests:
          - id: fields
            input: q
            expected_output: '{"a": 1, "b": 2, "c": 4}'
            assert:
              - name: f
                type: field_accuracy
                fields: [{path: a, weight: 1.0e308}, {path: b, weight: 1.0e308}, {path: c, weight: 1.0e308}]
          - id: evaluators
            input: q
            assert:
              - {name: x, type: contains, value: a, weight: 1.0e308}
              - {name: y, type: contains, value: z, weight: 1.0e308}
          - id: members
            input: q
            assert:
              - name: c
                type: composite
                aggregator: {type: weighted_average, weights: {m: 1e308, n: 1e308}}
                evaluators: [{name: m, type: contains, value: a}, {name: n, type: contains, value: z}]
          - id: usual
            input: q
            assert: [{name: u, type: contains, value: a, weight: 1.0e300}, {name: v, type: contains, value: a}]
        """)
    validate = run_cli("validate", "evals", cwd=repo)
    assert validate.returncode == 1, validate.stdout
    assert "evals/w.eval.yaml:6: field_accuracy evaluator 'f': the weights of its fields add up" in validate.stdout
    assert "evals/w.eval.yaml:9: the weights of the test's evaluators add up" in validate.stdout
    assert "evals/w.eval.yaml:17: composite evaluator 'c': the weights of its members add up" in validate.stdout
    assert ":23:" not in validate.stdout, validate.stdout  # large but summable weights are fine
    run = run_cli("run", "evals", cwd=repo)
    assert run.returncode == 2 and no_traceback(run.stdout + run.stderr), run.stderr[-2000:]
    assert not (repo / ".agentv-gate" / "results.jsonl").exists()
