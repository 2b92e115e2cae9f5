"""AgentV 3+ assertion spellings and `negate`, from YAML through the loader to a score."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from pydantic import ValidationError

from agentv_gate.evaluators.registry import build_evaluator_registry
from agentv_gate.loader import load_eval_file
from agentv_gate.models import ContainsConfig, TargetResponse
from agentv_gate.orchestrator import Orchestrator, RunSettings
from tests.helpers.files import make_repo

ANSWER = "  Paris is the capital of France.  "


def scores_for(tmp_path: Path, assertions: str) -> list[tuple[str, float]]:
    make_repo(tmp_path)
    suite = tmp_path / "v.eval.yaml"
    suite.write_text("tests:\n  - id: v\n    criteria: c\n    input: q\n    assert:\n"
                     + textwrap.indent(textwrap.dedent(assertions).strip("\n"), "      ") + "\n")
    loaded = load_eval_file(suite, tmp_path)
    assert loaded.errors == [], loaded.errors
    [case] = loaded.cases
    registry = build_evaluator_registry()
    orchestrator = Orchestrator(providers=None, registry=registry, settings=RunSettings())  # type: ignore[arg-type]

    class Fixed:
        name, kind = "fixed", "mock"

    results = orchestrator.run_evaluators_for_case(case, Fixed(), TargetResponse(text=ANSWER))  # type: ignore[arg-type]
    return [(r.name, r.score) for r in results]


@pytest.mark.parametrize(
    ("kind", "value", "expected"),
    [
        ("contains-any", "[Berlin, Paris]", 1.0),
        ("contains-any", "[Berlin, Rome]", 0.0),
        ("contains-all", "[Paris, France]", 1.0),
        ("contains-all", "[Paris, Spain]", 0.0),
        ("icontains", "PARIS", 1.0),
        ("icontains-any", "[ROME, FRANCE]", 1.0),
        ("icontains-all", "[PARIS, SPAIN]", 0.0),
        ("starts-with", "Paris is", 1.0),
        ("starts-with", "France", 0.0),
        ("ends-with", "France.", 1.0),
        ("ends_with", "Paris", 0.0),
    ],
)
def test_agentv3_assertion_types(tmp_path: Path, kind: str, value: str, expected: float) -> None:
    [(name, score)] = scores_for(tmp_path, f"- type: {kind}\n  value: {value}\n")
    assert score == expected
    assert name  # gen3 names are optional and generated


def test_negate_inverts_score_and_swaps_hits_and_misses(tmp_path: Path) -> None:
    results = scores_for(tmp_path, """
        - {name: no-berlin, type: contains, value: Berlin, negate: true}
        - {name: no-paris, type: contains, value: Paris, negate: true}
    """)
    assert results == [("no-berlin", 1.0), ("no-paris", 0.0)]



@pytest.mark.parametrize("kind", ["icontains-any", "contains-all", "contains-any", "icontains-all"])
def test_an_empty_value_list_is_refused_not_a_vacuous_pass(tmp_path: Path, kind: str) -> None:
    # every() over nothing is true: `contains-all: []` would pass any answer, a wrong PASS
    make_repo(tmp_path)
    suite = tmp_path / "v.eval.yaml"
    suite.write_text(f"tests:\n  - id: v\n    criteria: c\n    input: q\n    assert:\n"
                     f"      - type: {kind}\n        value: []\n")
    [problem] = load_eval_file(suite, tmp_path).errors
    assert problem.line == 6 and "field 'value'" in problem.message
    assert "an empty list checks nothing: give at least one string" in problem.message
    with pytest.raises(ValidationError, match="an empty list checks nothing"):
        ContainsConfig(name="c", value=[])


@pytest.mark.parametrize("kind, value", [("contains", '""'), ("icontains", "''"), ("contains-all", '[Paris, ""]'),
                                         ("starts-with", '"  "'), ("ends-with", '""'),
                                         ("regex", '""'), ("regex", '"${{ AGENTV_GATE_UNSET_PATTERN }}"')])
def test_an_empty_string_is_refused_not_a_vacuous_pass(tmp_path: Path, kind: str, value: str) -> None:
    # every answer contains "", starts and ends with it, and matches the empty pattern: a value left empty by
    # mistake (an unset variable) passed all
    make_repo(tmp_path)
    suite = tmp_path / "v.eval.yaml"
    suite.write_text(f"tests:\n  - id: v\n    criteria: c\n    input: q\n    assert:\n"
                     f"      - type: {kind}\n        value: {value}\n")
    [problem] = load_eval_file(suite, tmp_path).errors
    assert problem.line == 6 and "an empty string checks nothing" in problem.message, problem.message


@pytest.mark.parametrize(("written", "value", "reported"), [
    ("contains", "Paris", "contains-Paris:contains"), ("icontains", "paris", "icontains-paris:icontains"),
    ("contains-any", "[Rome, Paris]", "contains-any-2:contains-any"),
    ("contains-all", "[Rome, Paris]", "contains-all-2:contains-all"),
    ("icontains-any", "[rome, paris]", "icontains-any-2:icontains-any"),
    ("icontains-all", "[rome, paris]", "icontains-all-2:icontains-all"),
])
def test_results_name_each_contains_variant_as_agentv_4_42_reports_it(tmp_path: Path, written: str, value: str,
                                                                       reported: str) -> None:
    """AgentV 4.42's index.jsonl types a `contains-any` grader `contains-any`; the gate wrote `contains` (43.6)."""
    from tests.helpers.agents import scripted_agent
    from tests.helpers.cli import run_cli
    from tests.helpers.reports import RESULTS, rows_by_id

    project = scripted_agent(tmp_path / "p", {"q": {"output": [{"role": "assistant", "content": "Paris."}]}})
    (project / "evals" / "v.eval.yaml").write_text(
        f"tests:\n  - id: v\n    input: q\n    criteria: c\n    assertions:\n      - type: {written}\n"
        f"        value: {value}\n")
    run_cli("run", "evals/v.eval.yaml", cwd=project)
    [score] = rows_by_id(project / RESULTS)["v"]["scores"]
    assert f"{score['name']}:{score['type']}" == reported
