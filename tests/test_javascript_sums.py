"""Scores are added up as AgentV's JavaScript adds them: left to right, one rounding per addition.

Python 3.12's `sum()` compensates float rounding, so three evaluators of weight 0.1 scoring 0.5, 0.75 and
1.0 made 0.75 where AgentV's loop makes 0.7499999999999999: a pass at a 0.75 threshold that AgentV fails,
on the Python the GitHub Action installs by default. On an older Python these tests stand in 3.12's sum.
"""

from __future__ import annotations

import builtins
import math
import sys
from pathlib import Path

import pytest

from agentv_gate.base.jscompat import js_sum
from agentv_gate.base.trial_strategies import aggregate as trials_aggregate
from agentv_gate.evaluators.field_accuracy import FieldResult
from agentv_gate.evaluators.field_accuracy import aggregate as field_aggregate
from agentv_gate.models import EvaluatorResult
from agentv_gate.orchestrator import weighted_mean
from tests.evaluators.test_composite import composite_case, evaluate, fixed

JS_MEAN = 0.7499999999999999
"""(0.5*0.1 + 0.75*0.1 + 1.0*0.1) / (0.1 + 0.1 + 0.1), each sum a JavaScript loop, as Node prints it."""


@pytest.fixture(autouse=True)
def compensated_sum(monkeypatch: pytest.MonkeyPatch) -> None:
    """Python 3.12's `sum()` of floats, on any Python: compensated (math.fsum agrees on these inputs)."""
    if sys.version_info < (3, 12):
        monkeypatch.setattr(builtins, "sum", lambda values, start=0: start + math.fsum(values))


def test_js_sum_adds_left_to_right_with_a_rounding_per_addition() -> None:
    assert js_sum([0.1, 0.2, 0.3]) == 0.6000000000000001
    assert js_sum([]) == 0
    assert js_sum(x for x in [0.05, 0.075, 0.1]) == 0.225


def test_the_case_score_is_agentvs_weighted_mean() -> None:
    results = [EvaluatorResult(name=str(s), type="contains", score=s, weight=0.1) for s in (0.5, 0.75, 1.0)]
    assert weighted_mean(results) == JS_MEAN


def test_a_composite_weighted_average_is_agentvs(tmp_path: Path) -> None:
    (tmp_path / "fixed.py").write_text('import json, sys\nd = json.load(sys.stdin)\nprint(json.dumps({"score": '
                                       'd["config"]["give"], "hits": [], "misses": [], "reasoning": "fixed"}))\n')
    case = composite_case(tmp_path, """
        - name: combo
          type: composite
          aggregator: {weights: {a: 0.1, b: 0.1, c: 0.1}}
    """, f"""
        evaluators:
          {fixed("a", 0.5)}
          {fixed("b", 0.75)}
          {fixed("c", 1.0)}
    """)
    assert evaluate(case).score == JS_MEAN


def test_a_field_accuracy_weighted_average_is_agentvs() -> None:
    results = [FieldResult(path=str(s), hit=s == 1.0, score=s, weight=0.1, message="m") for s in (0.5, 0.75, 1.0)]
    assert field_aggregate(results, "weighted_average").score == JS_MEAN


def test_a_trials_mean_is_agentvs() -> None:
    # AgentV: scores.reduce((sum, s) => sum + s, 0) / n = 2.0999999999999996 / 3
    assert trials_aggregate("mean", [0.4, 1.0, 0.7], passed=1)[0] == 0.6999999999999998
