"""The rubric judge's protocol, as AgentV 2.19 has it: the prompt, the reply schema, and the score.

A rubric is a list of criteria (`RubricItem`s). Two modes, chosen by the list itself:

* **checklist** (no item has `score_ranges`): the judge says for each `[id] outcome` item whether
  it is satisfied. Score = weight of satisfied items / weight of the items the judge reported
  (ids the rubric does not have are ignored). An unsatisfied required item forces the verdict to
  `fail`; the score stays as computed.
* **score ranges** (some item has `score_ranges`): the judge scores each item 0..10; each score is
  divided by 10 and the weighted mean taken. A score under the item's `required_min_score`
  (`required: true` means 10) forces `fail`. The raw scores go to `details`.

Hits and misses read `[id] outcome: reasoning`. An item the judge reported twice counts twice, as
in AgentV. An item the judge did not report is out of the score, as in both AgentVs. For a 2.x file
the gate makes explicit what 2.19 leaves implicit: such an item is a miss saying so, and a required
one forces `fail` like an unmet one, so a judge that skips the one criterion that matters cannot pass
it. A 4.x file gets 4.42's reading: no line for it and no fail, the lines in the judge's order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..models import RubricItem, question_text
from .judge_reply import CHECKLIST_SCHEMA, SCORE_RANGE_SCHEMA, Check, ChecksReply

CHECKLIST_SYSTEM_PROMPT = "\n".join([
    "You are an expert evaluator. Evaluate the candidate answer against each rubric item.",
    "You must return a valid JSON object matching this schema:",
    "{",
    '  "checks": [',
    "    {",
    '      "id": "string (rubric id)",',
    '      "satisfied": boolean,',
    '      "reasoning": "string (brief explanation)"',
    "    }",
    "  ],",
    '  "overall_reasoning": "string (summary)"',
    "}",
])
"""AgentV's rubric output schema prompt: one check per rubric item."""

SCORE_RANGE_SYSTEM_PROMPT = "\n".join([
    "You are an expert evaluator. Score the candidate answer on each criterion.",
    "You must return a valid JSON object matching this schema:",
    "{",
    '  "checks": [',
    "    {",
    '      "id": "string (criterion id)",',
    '      "score": integer (0-10),',
    '      "reasoning": "string (brief explanation for score)"',
    "    }",
    "  ],",
    '  "overall_reasoning": "string (summary, optional)"',
    "}",
    "",
    'Important: The "score" must be an integer from 0 to 10 that falls within one of the defined score '
    "ranges for that criterion.",
])
"""AgentV's score-range output schema prompt."""


def is_score_range(items: list[RubricItem]) -> bool:
    """Score-range mode as soon as one item has bands; checklist otherwise."""
    return any(item.score_ranges for item in items)


def system_prompt(items: list[RubricItem]) -> str:
    return SCORE_RANGE_SYSTEM_PROMPT if is_score_range(items) else CHECKLIST_SYSTEM_PROMPT


def reply_schema(items: list[RubricItem]) -> dict[str, Any]:
    return SCORE_RANGE_SCHEMA if is_score_range(items) else CHECKLIST_SCHEMA


def _weight_label(item: RubricItem) -> str:
    return "" if item.weight == 1.0 else f" (weight: {item.weight:g})"


def score_range_lines(item: RubricItem) -> list[str]:
    """An item's bands as both generations' scored rubric prompts list them (none without bands)."""
    if not item.score_ranges:
        return []
    lines = ["Score ranges:"]
    for band in item.score_ranges:
        low, high = band.score_range
        lines.append(f"  - Score {low if low == high else f'{low}-{high}'}: {band.outcome}")
    return lines


def user_prompt(items: list[RubricItem], question: str, criteria: str, reference: str, answer: str,
                file_changes: str | None = None) -> str:
    """The judge's user prompt: the case, then the items as `[id] outcome` (AgentV's layout)."""
    scored = is_score_range(items)
    if scored:
        parts = ["You are an expert evaluator. Score the candidate answer on each criterion below using the "
                 "provided score ranges.",
                 "For each criterion, output an integer score from 0 to 10 based on which score range best "
                 "matches the answer.", ""]
    else:
        parts = ["You are an expert evaluator. Evaluate the candidate answer against each rubric item below.", ""]
    parts += ["[[ ## question ## ]]", question, "", "[[ ## criteria ## ]]", criteria, ""]
    if reference.strip():
        parts += ["[[ ## reference_answer ## ]]", reference, ""]
    parts += ["[[ ## answer ## ]]", answer, ""]
    if file_changes:
        parts += ["[[ ## file_changes ## ]]", file_changes, ""]
    if not scored:
        parts.append("[[ ## rubrics ## ]]")
        for item in items:
            required = " (REQUIRED)" if item.required else ""
            parts.append(f"- [{item.id}]{required}{_weight_label(item)}: {item.outcome}")
        parts += ["", "For each rubric, determine if it is satisfied and provide brief reasoning."]
        return "\n".join(parts)
    parts.append("[[ ## scoring_criteria ## ]]")
    for item in items:
        # AgentV labels only a written `required_min_score` (a bare `required: true` still means 10 when scored)
        minimum = f" [REQUIRED: min score {item.required_min_score}]" if item.required_min_score is not None else ""
        parts += ["", f"### Criterion: {item.id}{_weight_label(item)}{minimum}"]
        if item.outcome:
            parts.append(f"Description: {item.outcome}")
        parts += score_range_lines(item)
    parts += ["", "For each criterion, provide an integer score 0-10 that matches one of its defined score ranges."]
    return "\n".join(parts)


def case_user_prompt(items: list[RubricItem], eval_case: Any, answer: str, file_changes: str | None = None) -> str:
    """`user_prompt` for one case (an `EvalCase`)."""
    question = eval_case.question or question_text(eval_case.input_messages)
    return user_prompt(items, question.strip(), eval_case.expected_outcome.strip(),
                       eval_case.reference_answer.strip(), answer.strip(), file_changes)


@dataclass
class RubricOutcome:
    score: float
    failed_required: bool
    """A required item was not met (or not assessed): the evaluator's verdict is `fail` whatever its score."""
    hits: list[str] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)


SCORE_RANGE_HIT = 7
"""A score-range item scored at least this (of 10), its minimum met, is a hit in AgentV 2.19."""


def _line(item: RubricItem, reasoning: str, judged: str = "") -> str:
    label = item.outcome or item.id
    text = f"[{item.id}] {label}{judged}"
    return f"{text}: {reasoning}" if reasoning else text


def score_checks(items: list[RubricItem], reply: ChecksReply, evidence_apart: bool = False,
                 as_reported: bool = False) -> RubricOutcome:
    """The evaluator's score, verdict, hits, misses and details from the judge's checks.

    `evidence_apart`: a judged item's line without the judge's reasoning, as 4.42 writes it (2.19 appends it).
    `as_reported`: the lines in the judge's order and an item it did not report left out altogether (no line,
    no fail), as 4.42's `calculateRubricScore` walks the judge's checks only; otherwise such an item is a miss
    saying so, and a required one fails the verdict.
    Every check the judge reported for a rubric item counts, as AgentV counts it: an item reported
    twice weighs twice, and a required item judged met and then unmet is unmet (taking one of the
    two would pass it on the judge's other word).
    """
    scored = is_score_range(items)
    by_id = {item.id: item for item in items}
    reported: dict[str, list[Check]] = {item.id: [] for item in items}
    for check in reply.checks:
        if check.id in reported:  # ids the rubric does not have are ignored
            reported[check.id].append(check)
    total = earned = 0.0
    failed_required = False
    hits: list[str] = []
    misses: list[str] = []
    rows: list[dict[str, Any]] = []
    raw_scores: dict[str, int] = {}
    judged: list[tuple[RubricItem, Check | None]] = []
    if as_reported:
        judged = [(by_id[c.id], c) for c in reply.checks if c.id in by_id]
    else:
        for item in items:
            judged.extend([(item, c) for c in reported[item.id]] if reported[item.id] else [(item, None)])
    unreported = [item for item in items if not reported[item.id]]
    for item in unreported if as_reported else []:
        rows.append({"id": item.id, "outcome": item.outcome, "weight": item.weight, "required": item.required,
                     "reported": False})
    for item, judged_check in judged:
        if judged_check is None:
            misses.append(_line(item, "not assessed by the judge"))
            failed_required = failed_required or item.required or (scored and item.min_score is not None)
            rows.append({"id": item.id, "outcome": item.outcome, "weight": item.weight, "required": item.required,
                         "reported": False})
            continue
        check = judged_check
        reasoning = "" if evidence_apart else check.reasoning
        total += item.weight
        row: dict[str, Any] = {"id": item.id, "outcome": item.outcome, "weight": item.weight,
                               "required": item.required, "reasoning": check.reasoning}
        if scored:
            raw = int(check.score or 0)
            raw_scores[item.id] = raw  # the last one reported, as AgentV keeps it
            earned += raw / 10 * item.weight
            band = next((b.outcome for b in item.score_ranges or []
                         if b.score_range[0] <= raw <= b.score_range[1]), "")
            met = item.min_score is None or raw >= item.min_score
            failed_required = failed_required or not met
            row.update({"score": raw, "band": band, "required_min_score": item.min_score, "met": met})
            # AgentV 2.19's line, word for word: "[id] label - Score: 7/10 (band): reasoning", a hit when
            # the item's minimum is met and the score is 7 or more
            judged_line = f" - Score: {raw}/10 ({band})"
            (hits if met and raw >= SCORE_RANGE_HIT else misses).append(_line(item, reasoning, judged_line))
        else:
            row["satisfied"] = bool(check.satisfied)
            if check.satisfied:
                earned += item.weight
                hits.append(_line(item, reasoning))
            else:
                misses.append(_line(item, reasoning))
                failed_required = failed_required or item.required
        rows.append(row)
    score = min(1.0, max(0.0, earned / total)) if total > 0 else 0.0
    details: dict[str, Any] = {"mode": "score_range" if scored else "checklist", "checks": rows}
    if scored:
        details.update({"raw_scores": raw_scores, "normalization": "score / 10", "aggregation": "weighted_average"})
    if reply.overall_reasoning:
        details["overall_reasoning"] = reply.overall_reasoning
    return RubricOutcome(score, failed_required, hits, misses, details)
