"""Deterministic evaluators: AgentV's assertion semantics, field by field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentv_gate.evaluators.contains import ContainsEvaluator
from agentv_gate.evaluators.equals import EqualsEvaluator
from agentv_gate.evaluators.field_accuracy import FieldAccuracyEvaluator, parse_date, to_number
from agentv_gate.evaluators.is_json import IsJsonEvaluator
from agentv_gate.evaluators.json_extract import JsonExtractError, parse_json_from_text
from agentv_gate.evaluators.regex import RegexEvaluator
from agentv_gate.loader import load_eval_file
from agentv_gate.models import (
    ContainsConfig,
    EqualsConfig,
    EvalCase,
    EvaluationContext,
    FieldAccuracyConfig,
    IsJsonConfig,
    Message,
    RegexConfig,
)
from tests.helpers.files import write


def case(expected: Any = None) -> EvalCase:
    messages = [] if expected is None else [Message(role="assistant", content=expected)]
    return EvalCase(id="c", source_file=Path("/tmp/x.eval.yaml"), suite="x.eval.yaml",
                    question="q", expected_messages=messages)


def run(evaluator: Any, config: Any, answer: str, expected: Any = None):
    return evaluator.evaluate(config, EvaluationContext(eval_case=case(expected), candidate=answer, evaluator=config))


# ---------------------------------------------------------------- contains / regex / equals / is_json


def test_contains_single_value_is_case_sensitive_by_default() -> None:
    ok = run(ContainsEvaluator(), ContainsConfig(name="c", value="Paris"), "Paris is the capital")
    assert ok.score == 1.0 and ok.hits == ['Output contains "Paris"'] and ok.misses == []
    miss = run(ContainsEvaluator(), ContainsConfig(name="c", value="paris"), "Paris is the capital")
    assert miss.score == 0.0 and miss.misses == ['Output does not contain "paris"'] and miss.error is None


def test_contains_list_needs_every_value_and_can_ignore_case() -> None:
    config = ContainsConfig(name="c", value=["paris", "FRANCE", "Europe"], case_sensitive=False)
    result = run(ContainsEvaluator(), config, "Paris, France")
    assert result.score == 0.0
    assert result.misses == ['Output missing (case-insensitive): "Europe"']
    assert run(ContainsEvaluator(), config, "paris france europe").score == 1.0


def test_regex_with_javascript_flags_and_named_groups() -> None:
    insensitive = RegexConfig(name="r", value=r"^paris\b", flags="i")
    assert run(RegexEvaluator(), insensitive, "PARIS it is").score == 1.0
    assert run(RegexEvaluator(), RegexConfig(name="r", value=r"^paris\b"), "PARIS it is").score == 0.0
    named = RegexConfig(name="r", value=r"(?<year>\d{4})-\k<year>", flags="g")
    assert run(RegexEvaluator(), named, "1999-1999").score == 1.0
    assert run(RegexEvaluator(), named, "1999-2000").score == 0.0
    assert run(RegexEvaluator(), RegexConfig(name="r", value=r"(?<y>\d{4})"), "in 2024").score == 1.0
    multiline = RegexConfig(name="r", value=r"^two$", flags="m")
    assert run(RegexEvaluator(), multiline, "one\ntwo\nthree").score == 1.0


def test_bad_regex_is_a_config_error_not_a_crash() -> None:
    broken = run(RegexEvaluator(), RegexConfig(name="r", value="(unclosed"), "x")
    assert broken.score == 0.0 and broken.error is not None and "invalid regex" in broken.error
    flag = run(RegexEvaluator(), RegexConfig(name="r", value="x", flags="q"), "x")
    assert flag.error is not None and "unknown regex flag 'q'" in flag.error


def test_equals_trims_unless_told_not_to() -> None:
    assert run(EqualsEvaluator(), EqualsConfig(name="e", value=" Paris "), "Paris\n").score == 1.0
    assert run(EqualsEvaluator(), EqualsConfig(name="e", value="Paris", trim=False), "Paris\n").score == 0.0
    assert run(EqualsEvaluator(), EqualsConfig(name="e", value="Paris"), "Paris.").misses == [
        'Output does not equal "Paris"']


def test_equals_with_a_json_value_compares_json() -> None:
    assert run(EqualsEvaluator(), EqualsConfig(name="e", value=42), " 42.0 ").score == 1.0
    assert run(EqualsEvaluator(), EqualsConfig(name="e", value={"a": [1, 2]}), '{"a": [1, 2.0]}').score == 1.0
    assert run(EqualsEvaluator(), EqualsConfig(name="e", value=True), "1").score == 0.0
    assert run(EqualsEvaluator(), EqualsConfig(name="e", value=42), "forty-two").score == 0.0


@pytest.mark.parametrize(("answer", "valid"), [
    ('{"a": 1}', True), ("[1, 2]", True), ("  3 ", True), ('"text"', True),
    ('```json\n{"a": 1}\n```', False), ("NaN", False), ("{'a': 1}", False), ("", False),
])
def test_is_json_is_javascript_strict(answer: str, valid: bool) -> None:
    result = run(IsJsonEvaluator(), IsJsonConfig(name="j"), answer)
    assert result.score == (1.0 if valid else 0.0)
    assert (result.hits if valid else result.misses) == (["Output is valid JSON"] if valid
                                                         else ["Output is not valid JSON"])


# ---------------------------------------------------------------- JSON extraction


def test_json_extraction_handles_fences_prose_and_stray_braces() -> None:
    assert parse_json_from_text('Here:\n```json\n{"a": 1}\n```\nDone.') == {"a": 1}
    assert parse_json_from_text('Result {"a": {"b": 2}} and a stray } brace') == {"a": {"b": 2}}
    assert parse_json_from_text("[1, 2]") == [1, 2]
    with pytest.raises(JsonExtractError):
        parse_json_from_text("no json here")
    with pytest.raises(JsonExtractError):
        parse_json_from_text('{"a": NaN}')


# ---------------------------------------------------------------- field_accuracy


INVOICE = {
    "invoice": {"number": "INV-1", "total": 100.0, "date": "2025-01-15", "currency": "USD",
                "line_items": [{"sku": "A", "amount": 60}, {"sku": "B", "amount": 40}]},
    "customer": {"name": "Acme"},
}


def fields(*specs: dict[str, Any], aggregation: str = "weighted_average") -> FieldAccuracyConfig:
    data = {"name": "f", "fields": list(specs), "aggregation": aggregation}
    return FieldAccuracyConfig.model_validate(data)


def test_field_accuracy_reads_fenced_json_and_matches_fields() -> None:
    answer = ('Extracted:\n```json\n{"invoice": {"number": "INV-1", "total": "100.4 USD",'
              ' "date": "15-JAN-2025", "line_items": [{"amount": 60}, {"amount": 41}]},'
              ' "customer": {"name": "ACME"}}\n```')
    config = fields(
        {"path": "invoice.number"},
        {"path": "invoice.total", "match": "numeric_tolerance", "tolerance": 0.5},
        {"path": "invoice.date", "match": "date"},
        {"path": "invoice.line_items[1].amount", "match": "numeric_tolerance", "tolerance": 0.02,
         "relative": True},
        {"path": "customer.name", "weight": 2},
    )
    result = run(FieldAccuracyEvaluator(), config, answer, INVOICE)
    assert result.hits == ["invoice.number", "invoice.total (within tolerance: diff=0.40)", "invoice.date"]
    assert result.misses == ["invoice.line_items[1].amount (outside tolerance: diff=1.00, tolerance=0.02)",
                             "customer.name (value mismatch)"]
    assert result.score == pytest.approx(3 / 6)
    assert result.reasoning == "3/5 fields matched" and result.expected_aspect_count == 5


def test_field_accuracy_missing_fields_required_and_optional() -> None:
    answer = '{"invoice": {"number": "INV-1"}}'
    config = fields({"path": "invoice.number"}, {"path": "invoice.currency", "required": False},
                    {"path": "invoice.total"}, {"path": "invoice.not_expected"})
    result = run(FieldAccuracyEvaluator(), config, answer, INVOICE)
    assert "invoice.currency: optional field missing" in result.hits
    assert "invoice.not_expected: no expected value" in result.hits
    assert result.misses == ["invoice.total (required, missing)"]
    # the optional field weighs nothing: (1 + 0 + 1) / 3
    assert result.score == pytest.approx(2 / 3)


def test_field_accuracy_all_or_nothing_and_type_mismatch() -> None:
    answer = '{"invoice": {"number": "INV-1", "total": "100"}}'
    config = fields({"path": "invoice.number"}, {"path": "invoice.total"}, aggregation="all_or_nothing")
    result = run(FieldAccuracyEvaluator(), config, answer, INVOICE)
    assert result.score == 0.0
    assert result.misses == ["invoice.total (type mismatch: got string, expected number)"]
    exact = run(FieldAccuracyEvaluator(), config, '{"invoice": {"number": "INV-1", "total": 100}}', INVOICE)
    assert exact.score == 1.0  # 100 == 100.0 as JSON numbers


def test_field_accuracy_unreadable_answer_or_no_expected_data() -> None:
    config = fields({"path": "invoice.number"})
    bad = run(FieldAccuracyEvaluator(), config, "I could not find an invoice.", INVOICE)
    assert bad.score == 0.0 and bad.misses == ["Failed to parse candidate answer as JSON"]
    none = run(FieldAccuracyEvaluator(), config, '{"invoice": {}}', None)
    assert none.score == 0.0 and none.misses == ["No expected data found in expected_output"]
    same = '{"invoice": {"number": "INV-1"}}'
    text = run(FieldAccuracyEvaluator(), config, same, same)
    assert text.score == 1.0  # expected JSON given as text is parsed too


def test_field_accuracy_caps_listed_misses_at_four_but_counts_all() -> None:
    expected = {f"k{i}": i for i in range(6)}
    config = fields(*({"path": f"k{i}"} for i in range(6)))
    result = run(FieldAccuracyEvaluator(), config, "{}", expected)
    assert len(result.misses) == 4 and result.reasoning == "0/6 fields matched" and result.score == 0.0


def test_field_accuracy_from_an_eval_file(repo: Path) -> None:
    f = write(repo / "evals/inv.eval.yaml", """
        tests:
          - id: invoice
            input: Extract the invoice
            expected_output:
              invoice: {number: INV-1, date: "2025-03-04"}
            assertions:
              - name: fields
                type: field_accuracy
                fields:
                  - path: invoice.number
                  - path: invoice.date
                    match: date
                    formats: ["DD/MM/YYYY"]
    """)
    result = load_eval_file(f, repo)
    assert result.errors == []
    [c] = result.cases
    answer = '{"invoice": {"number": "INV-1", "date": "04/03/2025"}}'
    context = EvaluationContext(eval_case=c, candidate=answer, evaluator=c.evaluators[0])
    assert FieldAccuracyEvaluator().evaluate(c.evaluators[0], context).score == 1.0


@pytest.mark.parametrize(("text", "formats", "expected"), [
    ("2025-01-15", None, "2025-01-15"),
    ("2025-01-15T23:59:59Z", None, "2025-01-15"),
    ("15-JAN-2025", None, "2025-01-15"),
    ("01/02/2025", None, "2025-01-02"),          # ambiguous: US by default
    ("13/02/2025", None, "2025-02-13"),          # day first when the first number > 12
    ("01/02/2025", ["DD/MM/YYYY"], "2025-02-01"),
    ("01-02-2025", ["MM-DD-YYYY"], "2025-01-02"),
    ("January 15, 2025", None, "2025-01-15"),
    ("not a date", None, None),
    ("2025-02-30", None, None),
])
def test_date_parsing(text: str, formats: list[str] | None, expected: str | None) -> None:
    from agentv_gate.evaluators.field_accuracy import DEFAULT_DATE_FORMATS

    parsed = parse_date(text, formats or DEFAULT_DATE_FORMATS)
    assert (parsed.isoformat() if parsed else None) == expected


def test_numbers_follow_javascript_parse_float() -> None:
    assert to_number("12.5 USD") == 12.5
    assert to_number("$12") is None
    assert to_number(True) is None
    assert to_number(3) == 3.0
