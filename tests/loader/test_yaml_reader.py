"""The one YAML reader: every file of a run read from disk once, and keys compared one way everywhere."""

from __future__ import annotations

from pathlib import Path

import pytest

import agentv_gate.loader.documents as documents_module
import agentv_gate.loader.plan as plan_module
from agentv_gate.errors import TargetsConfigError
from agentv_gate.loader import plan_paths
from agentv_gate.targets.config import parse_targets
from tests.helpers.files import write


def test_each_file_of_a_run_is_read_once(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A suite naming a case file and a JSONL suite with its sidecar: the includes check, the plan and
    the cases built again as the run reaches them all read through the plan's documents."""
    write(repo / "evals/main.eval.yaml", """
        tests:
          - id: own
            criteria: c
            input: q
          - file://more.yaml
        assert:
          - {type: contains, value: Paris}
        """)
    write(repo / "evals/more.yaml", "- id: more\n  criteria: c\n  input: q\n")
    write(repo / "evals/rows.jsonl", '{"id": "r1", "criteria": "c", "input": "q"}\n')
    write(repo / "evals/rows.yaml", "execution:\n  evaluators:\n    - {name: c, type: contains, value: Paris}\n")
    reads: list[str] = []
    real = documents_module.read_bytes

    def counted(path: Path) -> bytes:
        reads.append(path.name)
        return real(path)

    monkeypatch.setattr(documents_module, "read_bytes", counted)
    monkeypatch.setattr(plan_module, "KEEP_CASES", 0)  # every case built again from what was read
    plan = plan_paths([repo / "evals"], repo)
    assert not plan.errors, plan.problems
    again = [case.id for case in plan.read_cases(plan.refs)]
    assert sorted(again) == ["more", "own", "r1"]
    assert sorted(reads) == ["main.eval.yaml", "more.yaml", "rows.jsonl", "rows.yaml"]


def test_targets_yaml_compares_keys_as_eval_files_do() -> None:
    """`1:` and `0x1:` are one key once read (1): PyYAML kept the last silently where the raw texts differ."""
    text = "targets:\n  - name: a\n    provider: mock\n    env:\n      1: one\n      0x1: two\n"
    with pytest.raises(TargetsConfigError, match=r"f\.yaml:6: not valid YAML: duplicate key 1 \(first at line 5\)"):
        parse_targets(text, Path("f.yaml"))
    assert parse_targets(text.replace("0x1", "2"), Path("f.yaml")).names() == ["a"]


def test_a_number_too_long_in_targets_yaml_is_located() -> None:
    text = "targets:\n  - name: a\n    provider: mock\n    workers: " + "9" * 5000 + "\n"
    with pytest.raises(TargetsConfigError, match=r"f\.yaml:4: not valid YAML: a number with 5000 digits is too long"):
        parse_targets(text, Path("f.yaml"))


def test_aliases_share_one_value_so_a_billion_laughs_stays_small() -> None:
    """Each alias is its anchor's value, built once (as PyYAML's loader shares it): built afresh at each
    use, n lines of ten aliases each are 10**n lists (six here, so that a regression fails, not hangs)."""
    from agentv_gate.yaml_reader import read_suite

    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 6)]
    text = "\n".join(lines) + "\ntests:\n  - id: one\n    input: *a5\n"
    [(line, case)] = list(read_suite(text, ("tests",))["tests"].entries())
    assert line == 8 and case["input"][0] is case["input"][9] and case["input"][0][0] is case["input"][9][9]
