"""The rubric judge's protocol on its own: reply parsing, scoring, and the edges a judge can reach."""

from __future__ import annotations

import json

import pytest

from agentv_gate.errors import JudgeReplyError
from agentv_gate.judging.judge_reply import CHECKLIST_SCHEMA, SCORE_RANGE_SCHEMA, parse_checks_reply
from agentv_gate.judging.rubric_protocol import is_score_range, score_checks, user_prompt
from agentv_gate.models import RubricItem, ScoreRange

ITEMS = [RubricItem(id="a", outcome="Names it", required=True), RubricItem(id="b", outcome="Explains", weight=3)]
BANDS = [RubricItem(id="s", outcome="Structure", required_min_score=6,
                    score_ranges=[ScoreRange(score_range=(0, 4), outcome="Poor"),
                                  ScoreRange(score_range=(5, 10), outcome="Good")])]


def reply(*checks: dict[str, object]) -> str:
    return json.dumps({"checks": list(checks), "overall_reasoning": "all told"})


def test_schemas_hold_each_check_to_its_fields_in_strict_form() -> None:
    def fields(schema: dict[str, object]) -> object:
        return schema["schema"]["properties"]["checks"]["items"]["required"]  # type: ignore[index]

    assert fields(CHECKLIST_SCHEMA) == ["id", "satisfied", "reasoning"]
    assert fields(SCORE_RANGE_SCHEMA) == ["id", "score", "reasoning"]
    assert CHECKLIST_SCHEMA["schema"]["required"] == ["checks", "overall_reasoning"]


@pytest.mark.parametrize("text", [
    reply({"id": "a", "satisfied": True, "reasoning": "r"}),
    "Here you go:\n```json\n" + reply({"id": "a", "satisfied": True, "reasoning": "r"}) + "\n```",
    "<think>{\"checks\": 1}</think> " + reply({"id": "a", "satisfied": True, "reasoning": "r"}),
])
def test_checks_are_found_as_tolerantly_as_a_verdict(text: str) -> None:
    parsed = parse_checks_reply(text, scored=False)
    assert [(c.id, c.satisfied, c.reasoning) for c in parsed.checks] == [("a", True, "r")]
    assert parsed.overall_reasoning == "all told"


@pytest.mark.parametrize(("text", "scored", "expected"), [
    ("", False, "empty reply"),
    ("it is fine", False, "no JSON object"),
    ('{"score": 1}', False, "no 'checks' list"),
    (reply({"id": "a", "reasoning": "r"}), False, "has no 'satisfied'"),
    (reply({"id": "a", "satisfied": "maybe"}), False, "'satisfied' must be true or false"),
    (reply({"satisfied": True}), False, "has no 'id'"),
    (reply({"id": "s", "score": 11}), True, "integer from 0 to 10, got 11"),
    (reply({"id": "s", "score": 6.5}), True, "integer from 0 to 10, got 6.5"),
    (reply({"id": "s", "satisfied": True}), True, "has no 'score'"),
])
def test_replies_that_do_not_fit_say_why(text: str, scored: bool, expected: str) -> None:
    with pytest.raises(JudgeReplyError, match=expected):
        parse_checks_reply(text, scored=scored)


def test_checklist_score_is_satisfied_weight_over_reported_weight_and_unknown_ids_are_ignored() -> None:
    parsed = parse_checks_reply(reply({"id": "a", "satisfied": True, "reasoning": "yes"},
                                      {"id": "b", "satisfied": False, "reasoning": "no"},
                                      {"id": "zzz", "satisfied": False, "reasoning": "made up"}), scored=False)
    outcome = score_checks(ITEMS, parsed)
    assert outcome.score == 0.25 and not outcome.failed_required
    assert outcome.hits == ["[a] Names it: yes"] and outcome.misses == ["[b] Explains: no"]


def test_a_required_item_unmet_or_unreported_forces_fail_without_changing_the_score() -> None:
    unmet = score_checks(ITEMS, parse_checks_reply(reply({"id": "a", "satisfied": False, "reasoning": "no"},
                                                         {"id": "b", "satisfied": True, "reasoning": "yes"}), False))
    assert unmet.score == 0.75 and unmet.failed_required
    # The judge left out the one required item: out of the score (as AgentV), but never a pass.
    unreported = score_checks(ITEMS, parse_checks_reply(reply({"id": "b", "satisfied": True, "reasoning": "y"}), False))
    assert unreported.score == 1.0 and unreported.failed_required
    assert "[a] Names it: not assessed by the judge" in unreported.misses
    assert unreported.details["checks"][0] == {"id": "a", "outcome": "Names it", "weight": 1.0, "required": True,
                                               "reported": False}


def test_score_ranges_divide_by_ten_and_a_score_under_the_minimum_fails() -> None:
    assert is_score_range(BANDS) and not is_score_range(ITEMS)
    outcome = score_checks(BANDS, parse_checks_reply(reply({"id": "s", "score": 5, "reasoning": "ok"}), True))
    assert outcome.score == 0.5 and outcome.failed_required
    assert outcome.details["raw_scores"] == {"s": 5} and outcome.details["mode"] == "score_range"
    assert outcome.misses == ["[s] Structure - Score: 5/10 (Good): ok"]
    good = score_checks(BANDS, parse_checks_reply(reply({"id": "s", "score": 9, "reasoning": "fine"}), True))
    assert good.score == 0.9 and not good.failed_required and good.hits == ["[s] Structure - Score: 9/10 (Good): fine"]


def test_the_prompt_lists_items_as_id_and_outcome_and_bands_with_their_ranges() -> None:
    checklist = user_prompt(ITEMS, "Q?", "Criteria", "", "The answer")
    assert "- [a] (REQUIRED): Names it\n- [b] (weight: 3): Explains" in checklist
    assert "reference_answer" not in checklist  # no reference, no section
    bands = user_prompt(BANDS, "Q?", "Criteria", "Ref", "The answer")
    assert "### Criterion: s [REQUIRED: min score 6]\nDescription: Structure\nScore ranges:\n" \
           "  - Score 0-4: Poor\n  - Score 5-10: Good" in bands
    assert "[[ ## reference_answer ## ]]\nRef" in bands


def test_an_item_the_judge_reports_twice_counts_each_time_as_agentv_counts_it() -> None:
    """AgentV scores every check the judge reported: a required item judged met and then unmet is unmet
    (taking the first check alone would pass it), and its weight counts twice."""
    twice = score_checks(ITEMS, parse_checks_reply(reply({"id": "a", "satisfied": True, "reasoning": "yes"},
                                                         {"id": "a", "satisfied": False, "reasoning": "no"},
                                                         {"id": "b", "satisfied": True, "reasoning": "ok"}), False))
    assert twice.score == 0.8 and twice.failed_required
    assert twice.hits == ["[a] Names it: yes", "[b] Explains: ok"] and twice.misses == ["[a] Names it: no"]
    bands = score_checks(BANDS, parse_checks_reply(reply({"id": "s", "score": 9, "reasoning": "fine"},
                                                         {"id": "s", "score": 3, "reasoning": "poor"}), True))
    assert bands.score == 0.6 and bands.failed_required
