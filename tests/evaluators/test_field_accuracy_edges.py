"""`field_accuracy` at its boundaries: tolerance 0 and a difference equal to the tolerance are hits,
`relative: true` measures against the expected value, weights or fields that add up to nothing, every
kind of miss, the date forms AgentV reads, paths past the end of a list, and which expected message
holds the expected data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentv_gate.evaluators.field_accuracy import FieldAccuracyEvaluator
from agentv_gate.models import EvalCase, EvaluationContext, EvaluationScore, FieldAccuracyConfig, Message


def score(answer: Any, expected: Any, *specs: dict[str, Any], aggregation: str = "weighted_average",
          messages: list[Message] | None = None) -> EvaluationScore:
    """`answer` as the agent's JSON answer against `expected` as the one expected assistant message
    (or against `messages`, the whole expected conversation)."""
    config = FieldAccuracyConfig.model_validate({"name": "f", "fields": list(specs), "aggregation": aggregation})
    expected_messages = messages if messages is not None else [Message(role="assistant", content=expected)]
    case = EvalCase(id="c", source_file=Path("x.eval.yaml"), suite="x.eval.yaml", question="q",
                    expected_messages=expected_messages)
    context = EvaluationContext(eval_case=case, candidate=json.dumps(answer), evaluator=config)
    return FieldAccuracyEvaluator().evaluate(config, context)


@pytest.mark.parametrize(("got", "tolerance"), [(100, None), (100, 0), (100.5, 0.5), (99.5, 0.5)],
                         ids=["no-tolerance", "tolerance-0", "diff-equals-tolerance-above", "below"])
def test_numbers_within_or_exactly_at_the_tolerance_are_hits(got: float, tolerance: float | None) -> None:
    spec: dict[str, Any] = {"path": "total", "match": "numeric_tolerance"}
    if tolerance is not None:
        spec["tolerance"] = tolerance
    result = score({"total": got}, {"total": 100}, spec)
    assert result.score == 1.0 and result.misses == [], result


@pytest.mark.parametrize(("got", "tolerance", "miss"), [
    (100.75, 0.5, "total (outside tolerance: diff=0.75, tolerance=0.5)"),
    (100.5, None, "total (outside tolerance: diff=0.50, tolerance=0)"),  # no tolerance given: 0, as in AgentV
])
def test_just_past_the_tolerance_is_a_miss(got: float, tolerance: float | None, miss: str) -> None:
    spec: dict[str, Any] = {"path": "total", "match": "numeric_tolerance"}
    if tolerance is not None:
        spec["tolerance"] = tolerance
    result = score({"total": got}, {"total": 100}, spec)
    assert result.score == 0.0
    assert result.misses == [miss]


@pytest.mark.parametrize(("got", "expected", "hit"), [
    (1010, 1000, True),    # 1% off: within 2% though 10 away
    (10, 8, True),         # exactly 25% off: at the tolerance
    (1030, 1000, False),   # 3% off
    (0.01, 0, True),       # expected 0: the absolute difference is compared
    (0.5, 0, False),
    (-1010, -1000, True),  # a negative expected value: 1% of |-1000|, though 10 away
    (-1030, -1000, False),
])
def test_relative_tolerance_is_a_fraction_of_the_expected_value(got: float, expected: float, hit: bool) -> None:
    tolerance = 0.25 if expected == 8 else 0.02
    result = score({"n": got}, {"n": expected},
                   {"path": "n", "match": "numeric_tolerance", "tolerance": tolerance, "relative": True})
    assert (result.score, bool(result.hits)) == ((1.0, True) if hit else (0.0, False)), result


def test_fields_whose_weights_are_all_zero_score_zero() -> None:
    result = score({"a": 1, "b": 2}, {"a": 1, "b": 2}, {"path": "a", "weight": 0}, {"path": "b", "weight": 0})
    assert result.score == 0.0
    assert result.reasoning == "2/2 fields matched"  # every field matched; none of them counts


def test_no_fields_at_all_scores_one_as_in_agentv() -> None:
    result = score({"a": 1}, {"a": 2})
    assert (result.score, result.hits, result.misses) == (1.0, [], [])
    assert result.reasoning == "0/0 fields matched"


@pytest.mark.parametrize(("got", "wanted", "match", "miss"), [
    (1, "1", "exact", "f (type mismatch: got number, expected string)"),
    ("1", 1, "exact", "f (type mismatch: got string, expected number)"),
    ("n/a", 100, "numeric_tolerance", "f (non-numeric value)"),
    (100, "n/a", "numeric_tolerance", "f (non-numeric value)"),
    ("Infinity", 100, "numeric_tolerance", "f (invalid numeric value)"),  # parseFloat reads it; not finite
    (100, "-Infinity", "numeric_tolerance", "f (invalid numeric value)"),
    ("2025-01-14", "2025-01-15", "date", "f (date mismatch: got 2025-01-14, expected 2025-01-15)"),
    ("2025-01-16", "2025-01-15", "date", "f (date mismatch: got 2025-01-16, expected 2025-01-15)"),
    ("soon", "2025-01-15", "date", "f (unparseable candidate date)"),
    ("2025-01-15", "soon", "date", "f (unparseable expected date)"),
])
def test_every_kind_of_miss_scores_zero_and_is_listed(got: Any, wanted: Any, match: str, miss: str) -> None:
    """Beside a matching field of the same weight, a miss makes the average exactly 1/2."""
    result = score({"ok": 1, "f": got}, {"ok": 1, "f": wanted}, {"path": "ok"}, {"path": "f", "match": match})
    assert (result.score, result.hits, result.misses) == (0.5, ["ok"], [miss])
    assert result.reasoning == "1/2 fields matched"
    strict = score({"ok": 1, "f": got}, {"ok": 1, "f": wanted}, {"path": "ok"}, {"path": "f", "match": match},
                   aggregation="all_or_nothing")
    assert (strict.score, strict.misses) == (0.0, [miss])


MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
MONTH_NAMES = [(name, number) for number, month in enumerate(MONTHS, 1) for name in {month, month[:3]}]


@pytest.mark.parametrize(("name", "month"), sorted(MONTH_NAMES + [("Sept", 9)]))
def test_every_month_name_and_abbreviation_in_dd_mmm_yyyy(name: str, month: int) -> None:
    spec = {"path": "d", "match": "date"}
    for written in (name, name.upper(), name.lower()):
        result = score({"d": f"15-{written}-2025"}, {"d": f"2025-{month:02d}-15"}, spec)
        assert (result.score, result.hits) == (1.0, ["d"]), (written, result)


@pytest.mark.parametrize(("written", "formats", "meant"), [
    ("13/12/2025", None, "2025-12-13"),           # first number > 12: it is the day, even with month 12
    ("12/11/2025", None, "2025-12-11"),           # first number 12: still a month, US order
    ("12/13/2025", None, "2025-12-13"),
    ("13-02-2025", ["MMMM D, YYYY"], "2025-02-13"),  # formats name neither order: inferred the same way
    ("13/02/2025", ["MM/DD/YYYY"], None),         # US only: month 13 is no date
    ("02/13/2025", ["DD/MM/YYYY"], "2025-02-13"),  # EU only, but V8 reads it month first before formats
    ("13/02/2025", ["DD/MM/YYYY"], "2025-02-13"),  # V8 cannot: then EU only reads it day first
])
def test_numeric_dates_day_or_month_first(written: str, formats: list[str] | None, meant: str | None) -> None:
    spec: dict[str, Any] = {"path": "d", "match": "date"}
    if formats is not None:
        spec["formats"] = formats
    result = score({"d": written}, {"d": meant or "2025-02-13"}, spec)
    if meant is None:
        assert (result.score, result.misses) == (0.0, ["d (unparseable candidate date)"])
    else:
        assert (result.score, result.hits) == (1.0, ["d"]), result


@pytest.mark.parametrize(("text", "number"), [
    ("12.5 USD", 12.5),
    (" \t\n12.5", 12.5),
    ("\u00a012.5", 12.5),     # no-break space: JavaScript white space
    ("\ufeff12.5", 12.5),     # byte order mark: JavaScript white space, not Python's
    ("\x1c12.5", None),       # Python's white space, not JavaScript's: parseFloat gives NaN
    ("\x8512.5", None),
    ("\u0661\u0662", None),   # Arabic-Indic digits are not digits to parseFloat
])
def test_numbers_in_text_are_read_as_javascript_parse_float_reads_them(text: str, number: float | None) -> None:
    spec = {"path": "n", "match": "numeric_tolerance"}
    result = score({"n": text}, {"n": 12.5 if number is None else number}, spec)
    if number is None:
        assert result.misses == ["n (non-numeric value)"]
    else:
        assert (result.score, result.hits) == (1.0, ["n (within tolerance: diff=0.00)"])


def test_an_index_past_the_end_of_the_answer_list_is_a_missing_field() -> None:
    result = score({"items": [10, 20]}, {"items": [10, 20, 30, 40, 50]},
                   {"path": "items[1]"}, {"path": "items[2]"}, {"path": "items[4]"}, {"path": "items[7]"})
    assert result.misses == ["items[2] (required, missing)", "items[4] (required, missing)"]
    assert result.hits == ["items[1]", "items[7]: no expected value"]
    assert result.score == pytest.approx(2 / 4)


@pytest.mark.parametrize(("path", "answer", "expected", "outcome"), [
    ("codes.7", {"codes": {"7": "B"}}, {"codes": {"7": "A"}}, "codes.7 (value mismatch)"),  # a digit key of an object
    ("items.sku", {"items": [{"sku": "A"}]}, {"items": [{"sku": "A"}]}, "items.sku: no expected value"),  # a name on a list
])
def test_a_path_step_is_an_index_only_into_a_list(path: str, answer: Any, expected: Any, outcome: str) -> None:
    result = score(answer, expected, {"path": path})
    assert outcome in result.hits + result.misses, result
    assert result.score == (1.0 if outcome in result.hits else 0.0)


def test_expected_json_given_as_text_is_compared_not_skipped() -> None:
    for expected in ('{"total": 1}', [{"type": "text", "value": '{"total": 1}'}]):
        result = score({"total": 2}, expected, {"path": "total"})
        assert (result.score, result.misses) == (0.0, ["total (value mismatch)"]), expected


def test_an_expected_list_of_records_is_the_expected_data() -> None:
    result = score({"sku": "A"}, [{"sku": "A"}, {"sku": "B"}], {"path": "[1].sku"})
    assert (result.score, result.misses) == (0.0, ["[1].sku (required, missing)"])


def test_a_file_attached_to_the_expected_answer_is_not_the_expected_data() -> None:
    expected = [{"type": "file", "value": "old.json", "path": "old.json", "text": '{"total": 2}'},
                {"type": "text", "value": '{"total": 1}'}]
    result = score({"total": 1}, expected, {"path": "total"})
    assert (result.score, result.hits) == (1.0, ["total"])


@pytest.mark.parametrize("role", ["tool", "user", "Assistant"])
def test_the_expected_data_is_the_last_assistant_message(role: str) -> None:
    """AgentV reads only messages whose role is exactly `assistant`, skipping any after it."""
    messages = [Message(role="assistant", content={"total": 1}), Message(role=role, content={"total": 2})]
    result = score({"total": 1}, None, {"path": "total"}, messages=messages)
    assert (result.score, result.hits) == (1.0, ["total"])


def test_an_expected_assistant_message_without_json_is_passed_over() -> None:
    messages = [Message(role="assistant", content={"total": 1}), Message(role="assistant", content="Here it is.")]
    result = score({"total": 2}, None, {"path": "total"}, messages=messages)
    assert (result.score, result.misses) == (0.0, ["total (value mismatch)"])


def test_a_score_never_exceeds_one_even_when_the_weights_add_up_past_the_largest_float() -> None:
    result = score({"a": 1, "b": 2}, {"a": 1, "b": 2}, {"path": "a", "weight": 1e308}, {"path": "b", "weight": 1e308})
    assert result.score == 1.0
    # With a miss among such weights the average would be inf/inf = NaN, which the clamp turns into
    # 1.0 (a wrong pass): the loader refuses weights whose sum is not finite before any case runs
    # (tests/hardening/test_hardening_numbers.py); this pins the clamp on its own.
