"""`field_accuracy`: compare fields of a JSON answer with the expected JSON, AgentV's way.

Semantics follow AgentV 2.19's FieldAccuracyEvaluator (the hits/misses form):

* The answer is read with `parseJsonFromText` (```json fences and surrounding prose allowed);
  unreadable gives score 0, "Failed to parse candidate answer as JSON".
* Expected data is the last assistant expected message with content: an object, or text that
  parses as JSON. None, or JSON that JavaScript calls false (null, false, 0), gives score 0,
  "No expected data found in expected_output".
* `path` is dot notation with `[i]` indexes (`invoice.line_items[0].amount`); `length` on a list
  is its length, as JavaScript reads `list["length"]`.
* A field with no expected value counts as a hit (score 1). A missing candidate field is a
  miss when `required` (default), else it is left out of the average (weight 0).
* `exact` is deep JSON equality; `numeric_tolerance` compares numbers (strings go through
  JavaScript's parseFloat) within `tolerance` (default 0), relative to |expected| when
  `relative` (absolute difference when expected is 0); `date` compares year, month and day.
* `weighted_average` (default) is sum(score*weight)/sum(weight) (1 with no fields, 0 when every
  weight is 0); `all_or_nothing` is 1 only with no misses. In a 2.x file hits and misses are capped at 4,
  as AgentV 2.19 caps them; in a 4.x file every field is listed, as AgentV 4.42 gives one assertion per
  field. The reasoning counts every field.

A numeric date V8's `new Date` reads (month 1-12 first, day 1-31) is month first whatever `formats`
says, as in AgentV, which asks V8 before looking at `formats`; only one V8 rejects (13/02/2025) is read
by `formats`. One deliberate departure remains, where AgentV depends on the machine's time zone: a
timestamp's calendar date is taken as written rather than shifted to the local zone.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from ..base.jscompat import JS_SPACES, js_sum, js_trim
from ..base.wire import content_to_text
from ..models import (
    EvaluationContext,
    EvaluationScore,
    FieldAccuracyConfig,
    FieldSpec,
    Message,
)
from .json_extract import JsonExtractError, js_type, json_equal, parse_json_from_text

MAX_LISTED = 4
DEFAULT_DATE_FORMATS = ["YYYY-MM-DDTHH:mm:ssZ", "YYYY-MM-DDTHH:mm:ss", "YYYY-MM-DD", "DD-MMM-YYYY",
                        "MM/DD/YYYY", "DD/MM/YYYY", "MM-DD-YYYY", "DD-MM-YYYY"]
_MONTHS = {"jan": 1, "january": 1, "feb": 2, "february": 2, "mar": 3, "march": 3, "apr": 4, "april": 4,
           "may": 5, "jun": 6, "june": 6, "jul": 7, "july": 7, "aug": 8, "august": 8, "sep": 9, "sept": 9,
           "september": 9, "oct": 10, "october": 10, "nov": 11, "november": 11, "dec": 12, "december": 12}
# JavaScript's \d is 0-9 only (re.ASCII), and parseFloat skips JavaScript's white space, not Python's \s.
_JS_FLOAT = re.compile(f"[{JS_SPACES}]*" + r"([+-]?(?:Infinity|\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?))", re.ASCII)
_ISO = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?"
                  r"(?:[Zz]|[+-](\d{2}):?(\d{2}))?)?$", re.ASCII)
"""The ISO forms V8's `new Date` reads (a time of 2-digit fields, a `Z` or `±hh:mm` zone right after it);
anything else after the day (`T25:00`, ` garbage`, a bare `T`) makes V8's Date invalid, and AgentV's
other forms do not match it either."""
_ISO_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}", re.ASCII)
_LOCALIZED = re.compile(r"^(\d{1,2})-([A-Za-z]{3,9})-(\d{4})$", re.ASCII)
_NUMERIC = re.compile(r"^(\d{1,2})[/-](\d{1,2})[/-](\d{4})$", re.ASCII)
_NATURAL_FORMATS = ("%b %d, %Y", "%B %d, %Y", "%b %d %Y", "%B %d %Y", "%d %b %Y", "%d %B %Y", "%Y/%m/%d")


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


MISSING: Any = _Missing()
"""JavaScript's `undefined`: the path leads nowhere (as opposed to an explicit null)."""


@dataclass
class FieldResult:
    path: str
    score: float
    weight: float
    hit: bool
    message: str


def resolve_path(data: Any, path: str) -> Any:
    """`a.b[0].c` into nested JSON; MISSING when any step does not exist.

    As AgentV's `current[part]`: an index is ASCII digits (JavaScript's `\\d`), and `length` on a list is
    its length, so `items.length` compares how many items each side has."""
    parts = [p for p in re.split(r"\.|\[|\]", path or "") if p]
    if not parts:
        return MISSING
    current = data
    for part in parts:
        if isinstance(current, list) and part.isascii() and part.isdigit():
            index = int(part)
            if index >= len(current):
                return MISSING
            current = current[index]
        elif isinstance(current, list) and part == "length":
            current = len(current)
        elif isinstance(current, dict):
            if part not in current:
                return MISSING
            current = current[part]
        else:
            return MISSING
    return current


def to_number(value: Any) -> float | None:
    """JavaScript's toNumber as AgentV uses it: numbers as-is, strings through parseFloat."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        match = _JS_FLOAT.match(value)
        if match is None:
            return None
        text = match.group(1)
        return float(text.replace("Infinity", "inf"))
    return None


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def parse_date(text: str, formats: list[str]) -> date | None:
    """The calendar date in `text`, trying ISO, DD-MMM-YYYY, then numeric US/EU forms."""
    trimmed = js_trim(text)
    if not trimmed:
        return None
    iso = _ISO.match(trimmed)
    if iso:
        hour, minute, second, zone_hour, zone_minute = (int(g or 0) for g in iso.groups()[3:])
        if hour > 23 or minute > 59 or second > 59 or zone_hour > 23 or zone_minute > 59:
            return None
        return _safe_date(int(iso.group(1)), int(iso.group(2)), int(iso.group(3)))
    if _ISO_DAY.match(trimmed):
        return None
    localized = _LOCALIZED.match(trimmed)
    if localized:
        month = _MONTHS.get(localized.group(2).lower())
        if month is not None:
            return _safe_date(int(localized.group(3)), month, int(localized.group(1)))
    numeric = _NUMERIC.match(trimmed)
    if numeric:
        first, second, year = (int(g) for g in numeric.groups())
        if 1 <= first <= 12 and 1 <= second <= 31:
            # V8's `new Date` reads this month first, and AgentV asks it before looking at `formats`
            return _safe_date(year, first, second)
        us = any("MM/DD" in f or "MM-DD" in f for f in formats)
        eu = any("DD/MM" in f or "DD-MM" in f for f in formats)
        if us and not eu:
            return _safe_date(year, first, second)
        if eu and not us:
            return _safe_date(year, second, first)
        if first > 12 and second <= 12:
            return _safe_date(year, second, first)
        return _safe_date(year, first, second)
    for fmt in _NATURAL_FORMATS:
        try:
            parsed = datetime.strptime(trimmed, fmt).date()
        except ValueError:
            continue
        # V8 reads a year under 100 ("Jan 15, 0015") as 19xx or 20xx, never as itself.
        return parsed if parsed.year >= 100 else None
    return None


def _fixed2(value: float) -> str:
    return f"{value:.2f}"


def _tolerance_text(value: float) -> str:
    return f"{value:g}"


def compare_field(spec: FieldSpec, candidate: Any, expected: Any) -> FieldResult:
    path, weight = spec.path, spec.weight
    value = resolve_path(candidate, path)
    wanted = resolve_path(expected, path)
    if wanted is MISSING:
        return FieldResult(path, 1.0, weight, True, f"{path}: no expected value")
    if value is MISSING:
        if spec.required:
            return FieldResult(path, 0.0, weight, False, f"{path} (required, missing)")
        return FieldResult(path, 1.0, 0.0, True, f"{path}: optional field missing")
    if spec.match == "numeric_tolerance":
        return _compare_numbers(spec, value, wanted)
    if spec.match == "date":
        return _compare_dates(spec, value, wanted)
    if json_equal(value, wanted):
        return FieldResult(path, 1.0, weight, True, path)
    if js_type(value) != js_type(wanted):
        return FieldResult(path, 0.0, weight, False,
                           f"{path} (type mismatch: got {js_type(value)}, expected {js_type(wanted)})")
    return FieldResult(path, 0.0, weight, False, f"{path} (value mismatch)")


def _compare_numbers(spec: FieldSpec, value: Any, wanted: Any) -> FieldResult:
    path, weight = spec.path, spec.weight
    tolerance = spec.tolerance if spec.tolerance is not None else 0.0
    got, exp = to_number(value), to_number(wanted)
    if got is None or exp is None:
        return FieldResult(path, 0.0, weight, False, f"{path} (non-numeric value)")
    if not (math.isfinite(got) and math.isfinite(exp)):
        return FieldResult(path, 0.0, weight, False, f"{path} (invalid numeric value)")
    diff = abs(got - exp)
    measured = diff if (not spec.relative or exp == 0) else diff / abs(exp)
    if measured <= tolerance:
        return FieldResult(path, 1.0, weight, True, f"{path} (within tolerance: diff={_fixed2(diff)})")
    limit = _tolerance_text(tolerance)
    return FieldResult(path, 0.0, weight, False,
                       f"{path} (outside tolerance: diff={_fixed2(diff)}, tolerance={limit})")


def _compare_dates(spec: FieldSpec, value: Any, wanted: Any) -> FieldResult:
    path, weight = spec.path, spec.weight
    formats = spec.formats or DEFAULT_DATE_FORMATS
    got = parse_date(_js_string(value), formats)
    exp = parse_date(_js_string(wanted), formats)
    if got is None:
        return FieldResult(path, 0.0, weight, False, f"{path} (unparseable candidate date)")
    if exp is None:
        return FieldResult(path, 0.0, weight, False, f"{path} (unparseable expected date)")
    if got == exp:
        return FieldResult(path, 1.0, weight, True, path)
    return FieldResult(path, 0.0, weight, False,
                       f"{path} (date mismatch: got {got.isoformat()}, expected {exp.isoformat()})")


def _js_string(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def expected_data(messages: list[Message]) -> Any:
    """The last assistant expected message's content as JSON, or MISSING."""
    for message in reversed(messages):
        if message.role != "assistant" or not message.content:
            continue
        content = message.content
        if isinstance(content, dict) and content.get("type") not in ("text", "file"):
            return content
        if isinstance(content, list) and not all(isinstance(s, dict) and s.get("type") in ("text", "file")
                                                 for s in content):
            return content
        try:
            return parse_json_from_text(content_to_text(content, with_files=False))
        except JsonExtractError:
            continue
    return MISSING


def _js_falsy(value: Any) -> bool:
    """JavaScript's `!value` for a JSON value: AgentV takes parsed expected data that is null, false, 0
    or "" for none at all ("No expected data"); an empty object or list is data there."""
    return value is None or value is False or value == "" or (type(value) in (int, float) and value == 0)


def aggregate(results: list[FieldResult], aggregation: str, listed: int | None = MAX_LISTED) -> EvaluationScore:
    """`listed`: how many hits and misses are kept (None: all)."""
    hits = [r.message for r in results if r.hit]
    misses = [r.message for r in results if not r.hit]
    if aggregation == "all_or_nothing":
        score = 0.0 if misses else 1.0
    else:
        total = js_sum(r.weight for r in results)
        if total == 0:
            score = 1.0 if not results else 0.0
        else:
            score = js_sum(r.score * r.weight for r in results) / total
    return EvaluationScore(score=max(0.0, min(1.0, score)), hits=hits[:listed],
                           misses=misses[:listed], reasoning=f"{len(hits)}/{len(results)} fields matched")


class FieldAccuracyEvaluator:
    def evaluate(self, config: FieldAccuracyConfig, context: EvaluationContext) -> EvaluationScore:
        expected = expected_data(context.eval_case.expected_messages)
        nothing_expected = "No expected data found in expected_output"
        # Nothing to compare with: the 0 says nothing of the answer (negated, it must not pass).
        unchecked = [nothing_expected] if expected is MISSING or _js_falsy(expected) else []
        try:
            candidate = parse_json_from_text(context.candidate or "")
        except JsonExtractError:
            miss = "Failed to parse candidate answer as JSON"
            return EvaluationScore(score=0.0, misses=[miss], reasoning=miss, unchecked=unchecked)
        if unchecked:
            return EvaluationScore(score=0.0, misses=unchecked, reasoning=nothing_expected, unchecked=unchecked)
        results = [compare_field(spec, candidate, expected) for spec in config.fields]
        return aggregate(results, config.aggregation,
                         MAX_LISTED if context.eval_case.generation == "2.x" else None)
