"""Rubric lists as AgentV 2.19 writes them -> `RubricItem`s, each problem located at its item's line.

Three places hold a rubric list: `type: rubrics` with `criteria:`, an `llm_judge` with `rubrics:`,
and the deprecated case-level `rubrics:`. An item is a string (`{outcome: <string>, weight: 1,
required: true}`) or a mapping with `id` (default `rubric-<n>`, 1-based), `outcome`, `weight`
(default 1), `required` (default false; true in the case-level list and a 4.x file, for a checklist item
only, as AgentV: a score-range item is never required unless it says so), `required_min_score`
(an integer 0-10) and `score_ranges` (`[{score_range: [low, high], outcome}]`, integers 0-10,
not overlapping). Every other key is an error: a rubric key nobody reads is a criterion the
judge never sees.
"""

from __future__ import annotations

from typing import Any

from ..errors import EvalFileError
from ..models import RubricItem, ScoreRange
from .yaml_lines import item_line, key_line, line_of, yaml_kind

ITEM_KEYS = ("id", "outcome", "expected_outcome", "criteria", "weight", "required", "required_min_score", "min_score",
             "score_ranges", "operator")
"""`expected_outcome` is AgentV 2.x's older name for `outcome`, `criteria` 4.x's; `min_score` (0..1) is 4.x's
`required_min_score` (0..10); `operator` (4.x) tells the judge how to read the outcome."""
OPERATORS = ("correctness", "contradiction")
"""AgentV 4.42's rubric operators (`RUBRIC_OPERATOR_VALUES`)."""
RANGE_KEYS = ("score_range", "outcome")
ITEM_SHAPE = "a string, or {id, outcome, weight, required, required_min_score, score_ranges}"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _text(value: Any, line: int, what: str) -> str:
    if not isinstance(value, (str, int, float)) or isinstance(value, bool) or not str(value).strip():
        raise EvalFileError(line, f"{what} must be non-empty text, got {value!r}", "a string")
    return str(value).strip()


def _shorthand(raw: dict[Any, Any], line: int, where: str) -> list[ScoreRange] | None:
    """AgentV 2.19's shorthand map `{0: Wrong, 5: Partly right, 10: Fully right}`: each key (an integer
    0-10, the first 0) is a band's lower bound, the next key less one (10 for the last) its upper;
    None when the mapping is not such a map (every key an integer 0-10 and every value non-empty text)."""
    bounds: list[tuple[int, str]] = []
    for key, value in raw.items():
        try:
            number = float(str(key))
        except ValueError:
            return None
        if not number.is_integer() or not 0 <= number <= 10 or not isinstance(value, str) or not value:
            return None
        bounds.append((int(number), value))
    bounds.sort(key=lambda pair: pair[0])
    if bounds[0][0] != 0:
        raise EvalFileError(line, f"{where}: a score_ranges map must start at 0 (got {bounds[0][0]})",
                            "{0: Wrong, 5: Partly right, 10: Fully right}")
    return [ScoreRange(score_range=(low, bounds[index + 1][0] - 1 if index + 1 < len(bounds) else 10), outcome=text)
            for index, (low, text) in enumerate(bounds)]


def _ranges(raw: Any, line: int, where: str) -> list[ScoreRange]:
    if isinstance(raw, dict) and raw:
        shorthand = _shorthand(raw, line, where)
        if shorthand is not None:
            return shorthand
    if not isinstance(raw, list) or not raw:
        raise EvalFileError(line, f"{where}: 'score_ranges' must be a non-empty list or a map of lower bounds",
                            "[{score_range: [0, 4], outcome: ...}, ...] or {0: Wrong, 5: Partly right, 10: Right}")
    bands: list[ScoreRange] = []
    for index, band in enumerate(raw):
        band_line = item_line(raw, index, line)
        if not isinstance(band, dict):
            raise EvalFileError(band_line, f"{where}: score_ranges[{index}] must be a mapping",
                                "{score_range: [low, high], outcome: ...}")
        unknown = [str(k) for k in band if k not in RANGE_KEYS]
        if unknown:
            raise EvalFileError(key_line(band, unknown[0], band_line),
                                f"{where}: unknown key '{unknown[0]}' in score_ranges[{index}]", "score_range, outcome")
        bounds = band.get("score_range")
        if not (isinstance(bounds, list) and len(bounds) == 2 and all(_is_int(b) and 0 <= b <= 10 for b in bounds)
                and bounds[0] <= bounds[1]):
            raise EvalFileError(key_line(band, "score_range", band_line),
                                f"{where}: score_ranges[{index}].score_range must be [low, high], integers "
                                f"0-10 with low <= high, got {bounds!r}", "e.g. score_range: [0, 4]")
        outcome = _text(band.get("outcome"), key_line(band, "outcome", band_line),
                        f"{where}: score_ranges[{index}].outcome")
        bands.append(ScoreRange(score_range=(bounds[0], bounds[1]), outcome=outcome))
    ordered = sorted(bands, key=lambda b: b.score_range)
    for before, after in zip(ordered, ordered[1:], strict=False):
        if after.score_range[0] <= before.score_range[1]:
            raise EvalFileError(line, f"{where}: score ranges {list(before.score_range)} and "
                                      f"{list(after.score_range)} overlap", "bands that do not overlap")
    return bands


def _item(raw: Any, index: int, line: int, where: str, objects_required: bool) -> RubricItem:
    default_id = f"rubric-{index + 1}"
    if isinstance(raw, str):
        return RubricItem(id=default_id, outcome=_text(raw, line, f"{where}: item {index + 1}"), required=True)
    if not isinstance(raw, dict):
        raise EvalFileError(line, f"{where}: item {index + 1} must be text or a mapping, got {yaml_kind(raw)}",
                            ITEM_SHAPE)
    unknown = [str(k) for k in raw if k not in ITEM_KEYS]
    if unknown:
        raise EvalFileError(key_line(raw, unknown[0], line), f"{where}: unknown key '{unknown[0]}' in rubric item "
                                                             f"{index + 1}", ", ".join(ITEM_KEYS))
    item_id = _text(raw["id"], key_line(raw, "id", line), f"{where}: 'id'") if "id" in raw else default_id
    label = f"{where}: rubric '{item_id}'"
    outcome_key = next((key for key in ("outcome", "criteria") if key in raw), "expected_outcome")
    outcome = (_text(raw[outcome_key], key_line(raw, outcome_key, line), f"{label}: '{outcome_key}'")
               if outcome_key in raw else "")
    ranges = _ranges(raw["score_ranges"], key_line(raw, "score_ranges", line), label) if "score_ranges" in raw else None
    if not outcome and not ranges:
        raise EvalFileError(line, f"{label} has no 'outcome'", "what the answer must do, as 'outcome'")
    weight = raw.get("weight", 1.0)
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or weight < 0:
        raise EvalFileError(key_line(raw, "weight", line), f"{label}: weight {weight!r} is not a number >= 0",
                            "a number, default 1")
    # AgentV (2.19 and 4.42) makes an unmarked checklist item required, never a score-range one (10/10 it would need)
    required = raw.get("required", objects_required and ranges is None)
    if not isinstance(required, bool):
        raise EvalFileError(key_line(raw, "required", line), f"{label}: required {required!r} is not true or false",
                            "true or false")
    minimum = raw.get("required_min_score")
    if minimum is not None and not (_is_int(minimum) and 0 <= minimum <= 10):
        raise EvalFileError(key_line(raw, "required_min_score", line),
                            f"{label}: required_min_score {minimum!r} is not an integer from 0 to 10", "0..10")
    if "min_score" in raw:  # 4.x's 0..1 mark, which 4.42 turns into required_min_score (rounded tenths)
        mark = raw["min_score"]
        if isinstance(mark, bool) or not isinstance(mark, (int, float)) or not 0 < mark <= 1:
            raise EvalFileError(key_line(raw, "min_score", line), f"{label}: min_score {mark!r} is not a number in "
                                                                  "(0, 1]", "min_score: 0.7")
        minimum = round(mark * 10)
    operator = raw.get("operator")
    if operator is not None and operator not in OPERATORS:
        raise EvalFileError(key_line(raw, "operator", line), f"{label}: operator {operator!r} is not one of "
                                                             f"{', '.join(OPERATORS)}", " or ".join(OPERATORS))
    return RubricItem(id=item_id, outcome=outcome, weight=float(weight), required=required,
                      required_min_score=minimum, score_ranges=ranges, operator=operator)


def parse_rubric_items(raw: Any, line: int, where: str, *, objects_required: bool = False) -> list[RubricItem]:
    """The items of one rubric list; raises EvalFileError at the first bad item's own line."""
    if not isinstance(raw, list) or not raw:
        raise EvalFileError(line_of(raw, line), f"{where} must be a non-empty list of rubric items", ITEM_SHAPE)
    items = [_item(entry, index, item_line(raw, index, line_of(raw, line)), where, objects_required)
             for index, entry in enumerate(raw)]
    if not any(item.score_ranges for item in items):
        for index, (entry, item) in enumerate(zip(raw, items, strict=True)):
            if item.required_min_score is not None:
                raise EvalFileError(key_line(entry, "required_min_score", item_line(raw, index, line)),
                                    f"{where}: rubric '{item.id}' has required_min_score, which only score-range "
                                    "rubrics use (no item of this list has score_ranges)",
                                    "score_ranges on the list's items, or required: true for a checklist item")
    seen: set[str] = set()
    for index, item in enumerate(items):
        if item.id in seen:
            raise EvalFileError(item_line(raw, index, line), f"{where}: rubric id '{item.id}' is used twice",
                                "a unique id per rubric item")
        seen.add(item.id)
    return items
