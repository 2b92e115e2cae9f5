"""Plain YAML scalars mean what they mean to AgentV, which reads files by the YAML 1.2 core schema.

PyYAML's own rules are YAML 1.1's: there `on` is true, `2024-01-31` a date, `1:30` ninety and
`0777` octal. Eval files and targets.yaml are read by every loader (the whole-file one, the
case-by-case one and the targets one) as AgentV's `yaml` package reads them.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from agentv_gate.errors import EvalFileError
from agentv_gate.loader import load_eval_file
from agentv_gate.loader.yaml_lines import load_yaml_text
from agentv_gate.targets.config import parse_targets
from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.reports import rows_by_id

SCALARS: list[tuple[str, Any]] = [
    # YAML 1.1 words that are text in 1.2
    ("yes", "yes"), ("no", "no"), ("on", "on"), ("Off", "Off"), ("y", "y"), ("n", "n"),
    # dates, times and base-60 numbers stay as written
    ("2024-01-31", "2024-01-31"), ("2024-01-31T10:00:00Z", "2024-01-31T10:00:00Z"), ("1:30", "1:30"),
    ("1_000", "1_000"),
    # numbers: a leading 0 is decimal, 0o and 0x are octal and hexadecimal, 1e3 is a float
    ("0777", 777), ("0o17", 15), ("0x1F", 31), ("+12", 12), ("-7", -7), ("1e3", 1000.0), (".5", 0.5),
    ("-3.5", -3.5), ("5.", 5.0), ("-.Inf", -math.inf),
    ("true", True), ("FALSE", False), ("~", None), ("null", None), ("", None), ("'on'", "on"),
]


@pytest.mark.parametrize(("written", "value"), SCALARS, ids=[w or "empty" for w, _ in SCALARS])
def test_a_plain_scalar_reads_as_the_yaml_1_2_core_schema_says(written: str, value: Any) -> None:
    read = load_yaml_text(f"k: {written}\n")["k"]
    assert (read, type(read)) == (value, type(value))


def test_nan_still_reads() -> None:
    assert math.isnan(load_yaml_text("k: .nan\n")["k"])


def test_a_merge_key_is_refused_and_a_quoted_one_is_a_key() -> None:
    # `<<` merges nothing in YAML 1.2 (the `yaml` package's default, which AgentV 2.19 uses): refused, never merged.
    with pytest.raises(EvalFileError, match="'<<' merge keys are not read") as refused:
        load_yaml_text("a: &x {p: 1}\nb: {<<: *x, q: 2}\n")
    assert refused.value.line == 2
    assert load_yaml_text("b: {'<<': 1, q: 2}\n")["b"] == {"<<": 1, "q": 2}


def test_targets_yaml_keeps_an_azure_api_version_as_text() -> None:
    config = parse_targets("targets:\n  - name: az\n    provider: azure\n    endpoint: https://x.example\n"
                           "    api_key: k\n    deployment: d\n    api_version: 2024-02-01\n    temperature: 0o1\n")
    assert config.definitions["az"].data["api_version"] == "2024-02-01"
    assert config.definitions["az"].data["temperature"] == 1


def test_the_case_by_case_reader_agrees(tmp_path: Path) -> None:
    make_repo(tmp_path)
    suite = write(tmp_path / "evals/s.yaml", """
        tests:
          - id: dated
            criteria: 2024-01-31
            input: When is it due? Answer on or off.
            expected_output: 2024-01-31
    """)
    [case] = load_eval_file(suite, tmp_path).cases
    assert (case.expected_outcome, case.reference_answer) == ("2024-01-31", "2024-01-31")


def test_words_and_dates_are_checked_as_text_through_the_cli(tmp_path: Path) -> None:
    """Under YAML 1.1 rules `value: on` (a boolean there) and a date criteria were refused as not text."""
    make_repo(tmp_path, "targets:\n  - name: default\n    provider: mock\n    response: lights on, due 2024-01-31\n")
    write(tmp_path / "evals/s.yaml", """
        tests:
          - id: word
            input: q
            assertions:
              - {type: contains, value: on}
          - id: date
            criteria: due 2024-01-31
            input: q
            assertions:
              - {type: contains, value: 2024-01-31}
          - id: no-word
            input: q
            assertions:
              - {type: contains, value: no}
    """)
    proc = run_cli("run", "evals", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    rows = rows_by_id(tmp_path / ".agentv-gate/results.jsonl")
    assert {case: row["verdict"] for case, row in rows.items()} == {"word": "pass", "date": "pass", "no-word": "fail"}


def test_a_case_that_passes_only_by_a_merged_assertion_is_not_run(tmp_path: Path) -> None:
    """AgentV 2.19 keeps `<<` as a key (YAML 1.2): case b has no `contains` there and is judged by the LLM
    judge on its criteria. Merged, it passed on `contains: World`; it is refused before anything runs."""
    make_repo(tmp_path, "targets:\n  - name: default\n    provider: mock\n    response: Hello World\n")
    write(tmp_path / "evals/m.eval.yaml", """
        tests:
          - id: a
            criteria: c
            input: hi
            assert:
              - &check {type: contains, value: World}
          - id: b
            criteria: c
            input: hi
            assert:
              - <<: *check
                weight: 2
    """)
    proc = run_cli("run", "evals/m.eval.yaml", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "evals/m.eval.yaml:11: '<<' merge keys are not read: AgentV reads YAML 1.2" in proc.stderr
    assert not (tmp_path / ".agentv-gate/results.jsonl").exists()


@pytest.mark.parametrize(("body", "message"), [
    ("    response: Hello World\n    response: nope\n", ":5: not valid YAML: duplicate key 'response' (first at line 4)"),
    ("    <<: {response: Hello World}\n", ":4: not valid YAML: '<<' merge keys are not read"),
])
def test_targets_yaml_refuses_a_repeated_key_and_a_merge_key_at_their_line(tmp_path: Path, body: str,
                                                                           message: str) -> None:
    """AgentV's parser refuses a repeated key ("Map keys must be unique") and merges nothing; PyYAML kept the
    last of two `response:` (or `endpoint:`) unsaid, and merged."""
    make_repo(tmp_path, "targets:\n  - name: default\n    provider: mock\n" + body)
    write(tmp_path / "evals/s.eval.yaml", "tests:\n  - id: a\n    input: q\n    assert: [{type: contains, value: World}]\n")
    proc = run_cli("run", "evals", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f".agentv/targets.yaml{message}" in proc.stderr
    assert not (tmp_path / ".agentv-gate/results.jsonl").exists()
