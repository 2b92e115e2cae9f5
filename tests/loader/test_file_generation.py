"""Each step of the generation rule (loader/file_generation.py), on real files, through the loader."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentv_gate.loader import load_eval_file
from tests.helpers.files import make_repo, write

SIGNLESS = "tests:\n  - id: c\n    input: q\n    criteria: says hi\n"
WITH_ASSERTIONS = "tests:\n  - id: c\n    input: q\n    assertions:\n      - {type: contains, value: hi}\n"


def _case(root: Path, text: str, name: str = "evals/x.eval.yaml"):
    write(root / name, text)
    result = load_eval_file(root / name, root)
    assert not [p for p in result.problems if p.severity == "error"], result.problems
    return result.cases[0]


@pytest.mark.parametrize(("where", "text", "expected", "reason"), [
    (".agentv/config.yaml", 'required_version: ">=2.19.0"\n', "2.x", "required_version in .agentv/config.yaml"),
    (".agentv/config.yaml", 'required_version: "^4.40"\n', "4.x", "required_version"),
    ("package.json", '{"devDependencies": {"agentv": "^2.19.0"}}', "2.x", "package.json devDependencies.agentv"),
    ("package.json", '{"dependencies": {"agentv": ">=4.0.0 <5"}}', "4.x", "package.json dependencies.agentv"),
])
def test_agentv_s_own_pins_decide_over_the_file_s_keys(tmp_path: Path, where: str, text: str, expected: str,
                                                      reason: str) -> None:
    make_repo(tmp_path)
    write(tmp_path / where, text)
    case = _case(tmp_path, WITH_ASSERTIONS if expected == "2.x" else SIGNLESS)
    assert case.generation == expected
    assert reason in case.generation_reason


def test_a_suite_s_requires_pins_it(tmp_path: Path) -> None:
    make_repo(tmp_path)
    case = _case(tmp_path, 'requires: {agentv: ">=2.19"}\n' + WITH_ASSERTIONS)
    assert (case.generation, case.generation_reason) == ("2.x", "requires.agentv at line 1")


def test_gate_yaml_wins_over_agentv_s_pins(tmp_path: Path) -> None:
    make_repo(tmp_path)
    write(tmp_path / ".agentv/config.yaml", 'required_version: ">=2.19.0"\n')
    write(tmp_path / ".agentv/gate.yaml", 'agentv:\n  version: "4.42"\n')
    assert _case(tmp_path, SIGNLESS).generation == "4.x"


def test_a_sign_decides_and_nothing_means_4_42(tmp_path: Path) -> None:
    make_repo(tmp_path)
    case = _case(tmp_path, WITH_ASSERTIONS)
    assert (case.generation, case.generation_reason) == ("4.x", "assertions: at line 4")
    case = _case(tmp_path, "tests:\n  - id: c\n    input: q\n    evaluators:\n"
                           "      - {name: j, type: llm_judge, prompt: p}\n", "evals/y.eval.yaml")
    assert (case.generation, case.generation_reason) == ("2.x", "type: llm_judge at line 5")
    case = _case(tmp_path, SIGNLESS, "evals/z.eval.yaml")
    assert case.generation == "4.x" and case.threshold is None
    assert "default" in case.generation_reason


def test_a_later_case_of_the_other_generation_is_refused_at_its_line(tmp_path: Path) -> None:
    make_repo(tmp_path)
    write(tmp_path / "evals/x.eval.yaml", WITH_ASSERTIONS + "  - id: d\n    input: q\n    evaluators:\n"
                                          "      - {name: j, type: llm_judge, prompt: p}\n")
    result = load_eval_file(tmp_path / "evals/x.eval.yaml", tmp_path)
    errors = [p for p in result.problems if "mixes AgentV generations" in p.message]
    assert [(p.line, p.severity) for p in errors] == [(9, "error")]
    assert "type: llm_judge" in errors[0].message and "assertions: (line 4)" in errors[0].message
