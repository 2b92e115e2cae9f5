"""Deterministic evaluators: AgentV's assertion semantics, field by field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from agentv_gate.evaluators.affix import AffixEvaluator
from agentv_gate.evaluators.contains import ContainsEvaluator
from agentv_gate.evaluators.equals import EqualsEvaluator
from agentv_gate.evaluators.field_accuracy import FieldAccuracyEvaluator, parse_date, to_number
from agentv_gate.evaluators.is_json import IsJsonEvaluator
from agentv_gate.evaluators.json_extract import (
    JsonExtractError,
    js_type,
    json_equal,
    parse_json_from_text,
    parse_json_object,
)
from agentv_gate.evaluators.regex import RegexEvaluator
from agentv_gate.loader import load_eval_file
from agentv_gate.models import (
    AffixConfig,
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


def test_regex_sticky_flag_matches_only_at_the_start_as_javascript_does() -> None:
    # AgentV: `new RegExp(pattern, "y").test(output)` tries position 0 only (a fresh lastIndex), never
    # further on: /k/y fails "ok". Searching on would pass it, a pass AgentV does not give.
    assert run(RegexEvaluator(), RegexConfig(name="r", value="k", flags="y"), "ok").score == 0.0
    assert run(RegexEvaluator(), RegexConfig(name="r", value="o", flags="gy"), "ok").score == 1.0
    assert run(RegexEvaluator(), RegexConfig(name="r", value="^two", flags="my"), "one\ntwo").score == 0.0
    assert run(RegexEvaluator(), RegexConfig(name="r", value="^two", flags="m"), "one\ntwo").score == 1.0


@pytest.mark.parametrize(("pattern", "flags", "answer", "expected"), [
    ("^yes$", None, "yes\n", 0.0),     # JavaScript's $ is the end of the answer, Python's also before a last \n
    ("^yes$", None, "yes", 1.0),
    ("^yes$", "m", "yes\nno", 1.0),    # with m it is any line's end, as in Python
    (r"cost \$5", None, "cost $5\n", 1.0),  # an escaped $ and one in a class stay literal
    ("[$]$", None, "$", 1.0),
    # JavaScript's classes are ASCII (\\d, \\w, \\b) and its own set of spaces (\\s); Python's are Unicode
    (r"^\d+$", None, "\u0662\u0660\u0662\u0664", 0.0),   # Arabic-Indic digits are not \d in JavaScript
    (r"^\d+$", None, "2024", 1.0),
    (r"^[\d.]+$", None, "\u0662.5", 0.0),
    (r"^\w+$", None, "caf\u00e9", 0.0),
    (r"^[\w-]+$", None, "caf\u00e9", 0.0),
    (r"^\W$", None, "\u00e9", 1.0),
    (r"\b\u00e9", None, "\u00e9", 0.0),                   # no boundary before a letter JavaScript's \w lacks
    (r"\bcat\b", "i", "a CAT!", 1.0),
    (r"\Bat", None, "cat", 1.0),
    (r"^\s$", None, "\u001c", 0.0),                    # a separator Python counts as space, JavaScript not
    (r"^\s$", None, "\ufeff", 1.0),                    # JavaScript's \s has the byte-order mark
    (r"^[\s]$", None, "\u00a0", 1.0),
    (r"^\S$", None, "\u001c", 1.0),
    # `.` stops at every line terminator JavaScript has, not only \n; with s it takes them all
    ("^a.b$", None, "a\rb", 0.0),
    ("^a.b$", None, "a\u2028b", 0.0),
    ("^a.b$", "s", "a\rb", 1.0),
    ("^a[.]b$", None, "a.b", 1.0),
    ("a$|b", None, "a\n", 0.0),
])
def test_regex_anchors_classes_and_dot_mean_what_javascript_says(
        pattern: str, flags: str | None, answer: str, expected: float) -> None:
    assert run(RegexEvaluator(), RegexConfig(name="r", value=pattern, flags=flags), answer).score == expected


def test_regex_messages_name_the_pattern_and_its_flags_as_agentv_does() -> None:
    # AgentV: `/${pattern}/${flags ?? ''}` plus ` (flags: ${flags})` when there are flags
    plain = run(RegexEvaluator(), RegexConfig(name="r", value=r"^paris\b"), "PARIS it is")
    assert plain.misses == [r"Output does not match pattern /^paris\b/"]
    flagged = run(RegexEvaluator(), RegexConfig(name="r", value=r"^paris\b", flags="i"), "PARIS it is")
    assert flagged.hits == [r"Output matches pattern /^paris\b/i (flags: i)"]
    empty = run(RegexEvaluator(), RegexConfig(name="r", value="x", flags=""), "x")
    assert empty.hits == ["Output matches pattern /x/"]


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


@pytest.mark.parametrize(("answer", "equals", "starts", "ends"), [
    ("\ufeffParis\u3000", 1.0, 1.0, 1.0),  # JavaScript's trim() takes a byte-order mark and Unicode spaces
    ("\u00a0Paris\u2028", 1.0, 1.0, 1.0),
    ("Paris\x85", 0.0, 1.0, 0.0),          # Python's strip() takes U+0085 and U+001C..U+001F; trim() does not
    ("\x1cParis", 0.0, 0.0, 1.0),
])
def test_equals_starts_with_and_ends_with_trim_as_javascript_trims(answer: str, equals: float, starts: float,
                                                                    ends: float) -> None:
    """AgentV: `output.trim() === value.trim()`, `output.trim().startsWith(value.trim())`, and so on."""
    assert run(EqualsEvaluator(), EqualsConfig(name="e", value="Paris"), answer).score == equals
    assert run(AffixEvaluator(), AffixConfig(name="s", type="starts_with", value="Paris"), answer).score == starts
    assert run(AffixEvaluator(), AffixConfig(name="e", type="ends_with", value="Paris"), answer).score == ends


@pytest.mark.parametrize(("value", "answer", "trim", "expected"), [
    ("Paris", "Paris", False, 1.0),   # untrimmed and identical
    ("Paris", "Pari", True, 0.0),     # a prefix is not equal, though it sorts before
    ("Paris", "Pari", False, 0.0),
    ("Pari", "Paris", True, 0.0),     # nor is a longer answer
    ("Pari", "Paris", False, 0.0),
    ("Paris", "Berlin", True, 0.0),   # sorts before the value
])
def test_equals_a_string_means_identical(value: str, answer: str, trim: bool, expected: float) -> None:
    assert run(EqualsEvaluator(), EqualsConfig(name="e", value=value, trim=trim), answer).score == expected


@pytest.mark.parametrize("value", [42, 4.5, True, None, {"city": "Zürich"}, [1, 2], ""])
def test_an_equals_value_that_is_not_text_is_no_config(value: object) -> None:
    """AgentV skips an equals whose value is not non-empty text (asString): it compares no JSON."""
    with pytest.raises(ValidationError, match="AgentV skips an equals"):
        EqualsConfig(name="e", value=value)


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


def test_json_extraction_handles_fences_and_prose_around_one_object() -> None:
    assert parse_json_from_text('Here:\n```json\n{"a": 1}\n```\nDone.') == {"a": 1}
    assert parse_json_from_text('Result {"a": {"b": 2}} and done') == {"a": {"b": 2}}
    assert parse_json_from_text("[1, 2]") == [1, 2]
    assert parse_json_from_text("\ufeff [1, 2] ") == [1, 2]  # trimmed as JavaScript trims: the BOM goes
    with pytest.raises(JsonExtractError):
        parse_json_from_text("no json here")
    with pytest.raises(JsonExtractError):
        parse_json_from_text('{"a": NaN}')


@pytest.mark.parametrize("text", [
    'Result {"a": {"b": 2}} and a stray } brace',                               # the greedy span takes it in
    "Run this first:\n```bash\nls -la\n```\nThe result:\n```json\n[1, 2]\n```\n",  # markers gone, prose stays
    "```\nnot json\n```\n```\n[3]\n```",
    'Fill in {name}, then send: {"a": 1}',
    '{x} {y} {"verdict": "pass"} trailing }',
])
def test_json_extraction_searches_no_further_than_agentv(text: str) -> None:
    """AgentV's parseJsonFromText JSON.parses the greedy `{...}` span (or the whole text) once: what it
    cannot read is no JSON, so no other fenced block or `{` is tried (a field_accuracy would pass on it)."""
    with pytest.raises(JsonExtractError, match="^no JSON found"):
        parse_json_from_text(text)


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_json_extraction_of_empty_text_says_so(text: str) -> None:
    with pytest.raises(JsonExtractError, match="^the text is empty$"):
        parse_json_from_text(text)


def test_json_object_is_required_where_an_object_is_expected() -> None:
    assert parse_json_object('Verdict: {"score": 1}') == {"score": 1}
    for text, kind in [("[1, 2]", "list"), ('"pass"', "str"), ("0.9", "float")]:
        with pytest.raises(JsonExtractError, match=f"^expected a JSON object, got {kind}$"):
            parse_json_object(text)


@pytest.mark.parametrize(("a", "b", "equal"), [
    (True, True, True), (False, False, True), (True, False, False), (True, 1, False), (False, 0, False),
    (1, 1.0, True), (1, 2, False), (-0.5, 0.5, False),
    ("a", "a", True), ("a", "b", False), (None, None, True), (None, 0, False), ("1", 1, False),
    ({"a": 1, "b": [2]}, {"b": [2.0], "a": 1}, True),
    ({"a": 1}, {"a": 1, "b": 2}, False),       # a missing key
    ({"a": 1}, {"a": 2}, False),               # same keys, other value
    ({"a": True}, {"a": 1}, False),            # Python's == says these are equal; JSON does not
    ({}, [], False), ({"a": 1}, "a", False), ({"a": 1}, None, False),
    ([1, 2], [1, 2.0], True), ([1], [1, 2], False), ([1, 2], [1, 3], False), ([1, 2], [2, 1], False),
    ([True], [1], False), (["a"], "a", False), ([], "", False), ([], None, False), ([], {}, False),
    ({"a": [{"b": False}]}, {"a": [{"b": 0}]}, False),
])
def test_json_equal_is_javascript_deep_equality(a: Any, b: Any, equal: bool) -> None:
    assert json_equal(a, b) is equal
    assert json_equal(b, a) is equal


@pytest.mark.parametrize(("value", "name"), [
    (None, "object"), ({}, "object"), ({"a": 1}, "object"), ([], "object"), ([1], "object"),
    (True, "boolean"), (False, "boolean"), (0, "number"), (1.5, "number"), ("", "string"), ("x", "string"),
])
def test_js_type_is_javascript_typeof(value: Any, name: str) -> None:
    assert js_type(value) == name


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
    assert result.reasoning == "3/5 fields matched"


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
                    match: exact
                  - path: invoice.date
                    match: date
                    formats: ["DD/MM/YYYY"]
    """)
    result = load_eval_file(f, repo)
    assert result.errors == []
    [c] = result.cases
    answer = '{"invoice": {"number": "INV-1", "date": "2025-03-04"}}'
    context = EvaluationContext(eval_case=c, candidate=answer, evaluator=c.evaluators[0])
    assert FieldAccuracyEvaluator().evaluate(c.evaluators[0], context).score == 1.0


@pytest.mark.parametrize(("text", "formats", "expected"), [
    ("2025-01-15", None, "2025-01-15"),
    ("2025-01-15T23:59:59Z", None, "2025-01-15"),
    ("15-JAN-2025", None, "2025-01-15"),
    ("01/02/2025", None, "2025-01-02"),          # ambiguous: US by default
    ("13/02/2025", None, "2025-02-13"),          # day first when the first number > 12
    ("01/02/2025", ["DD/MM/YYYY"], "2025-01-02"),  # V8 reads it month first before formats are looked at
    ("01-02-2025", ["MM-DD-YYYY"], "2025-01-02"),
    ("January 15, 2025", None, "2025-01-15"),
    ("not a date", None, None),
    ("2025-02-30", None, None),
    ("\ufeff 2025-01-15\u00a0", None, "2025-01-15"),  # trimmed as JavaScript trims
    ("\x1c2025-01-15", None, None),
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
