"""The rubric score at its edges: a judge that reports nothing, a score exactly at an item's minimum,
band edges, and the line between a hit and a miss. Through the public `score_checks`, as the LLM judge
calls it with the judge's parsed reply."""

from __future__ import annotations

import json

import pytest

from agentv_gate.judging.judge_reply import ChecksReply, parse_checks_reply
from agentv_gate.judging.rubric_protocol import score_checks
from agentv_gate.models import RubricItem, ScoreRange

CHECKLIST = [RubricItem(id="a", outcome="Names it"), RubricItem(id="b", outcome="Explains", weight=3)]
BANDS = [ScoreRange(score_range=(0, 4), outcome="Poor"), ScoreRange(score_range=(5, 7), outcome="Fair"),
         ScoreRange(score_range=(8, 10), outcome="Good")]


def judged(items: list[RubricItem], *checks: dict[str, object], scored: bool = False) -> ChecksReply:
    return parse_checks_reply(json.dumps({"checks": list(checks), "overall_reasoning": ""}), scored=scored)


@pytest.mark.parametrize("scored", [False, True])
def test_a_judge_that_reports_no_item_scores_zero_never_one(scored: bool) -> None:
    """Nothing assessed is no evidence of quality: 0, not a perfect score from an empty reply."""
    items = [RubricItem(id="s", outcome="Structure", score_ranges=BANDS)] if scored else CHECKLIST
    outcome = score_checks(items, judged(items, {"id": "other", "satisfied": True, "score": 10, "reasoning": "x"},
                                         scored=scored))
    assert outcome.score == 0.0
    assert outcome.hits == []
    assert all(miss.endswith("not assessed by the judge") for miss in outcome.misses) and outcome.misses
    assert not outcome.failed_required  # nothing required; the zero alone fails it


def test_one_reported_item_is_scored_on_its_own_weight() -> None:
    outcome = score_checks(CHECKLIST, judged(CHECKLIST, {"id": "b", "satisfied": True, "reasoning": "y"}))
    assert outcome.score == 1.0 and outcome.misses == ["[a] Names it: not assessed by the judge"]


@pytest.mark.parametrize(("raw", "met"), [(5, False), (6, True), (7, True)])
def test_a_score_exactly_at_required_min_score_is_met(raw: int, met: bool) -> None:
    items = [RubricItem(id="s", outcome="Structure", required_min_score=6, score_ranges=BANDS)]
    outcome = score_checks(items, judged(items, {"id": "s", "score": raw, "reasoning": "r"}, scored=True))
    assert outcome.failed_required is not met
    assert outcome.score == raw / 10
    assert outcome.details["checks"][0]["met"] is met


@pytest.mark.parametrize(("raw", "met"), [(9, False), (10, True)])
def test_required_without_a_minimum_means_ten_when_scored(raw: int, met: bool) -> None:
    items = [RubricItem(id="s", outcome="Structure", required=True, score_ranges=BANDS)]
    outcome = score_checks(items, judged(items, {"id": "s", "score": raw, "reasoning": "r"}, scored=True))
    assert outcome.failed_required is not met


def test_an_unreported_item_with_a_minimum_fails_when_scored_and_one_without_does_not() -> None:
    items = [RubricItem(id="s", outcome="Structure", required_min_score=1, score_ranges=BANDS),
             RubricItem(id="t", outcome="Tone", score_ranges=BANDS)]
    no_s = score_checks(items, judged(items, {"id": "t", "score": 10, "reasoning": "r"}, scored=True))
    assert no_s.failed_required and no_s.score == 1.0
    no_t = score_checks(items, judged(items, {"id": "s", "score": 10, "reasoning": "r"}, scored=True))
    assert not no_t.failed_required


@pytest.mark.parametrize(("raw", "band", "listed"), [(4, "Poor", "misses"), (5, "Fair", "misses"),
                                                     (6, "Fair", "misses"), (7, "Fair", "hits"),
                                                     (8, "Good", "hits"), (10, "Good", "hits"), (0, "Poor", "misses")])
def test_band_edges_and_the_hit_line_at_seven(raw: int, band: str, listed: str) -> None:
    """A band holds both its ends; a score of 7/10 is a hit and 6 a miss, as AgentV 2.19's llm-judge lists them."""
    items = [RubricItem(id="s", outcome="Structure", score_ranges=BANDS)]
    outcome = score_checks(items, judged(items, {"id": "s", "score": raw, "reasoning": "r"}, scored=True))
    assert outcome.details["checks"][0]["band"] == band
    assert getattr(outcome, listed) == [f"[s] Structure - Score: {raw}/10 ({band}): r"]
    assert outcome.details["raw_scores"] == {"s": raw}


def test_a_met_minimum_under_seven_is_still_a_miss_line_and_the_last_reported_raw_score_is_kept() -> None:
    items = [RubricItem(id="s", outcome="Structure", required_min_score=6, score_ranges=BANDS)]
    outcome = score_checks(items, judged(items, {"id": "s", "score": 9, "reasoning": "r"},
                                         {"id": "s", "score": 6, "reasoning": "q"}, scored=True))
    assert not outcome.failed_required and outcome.score == 0.75
    assert outcome.details["raw_scores"] == {"s": 6}
    assert outcome.hits == ["[s] Structure - Score: 9/10 (Good): r"]
    assert outcome.misses == ["[s] Structure - Score: 6/10 (Fair): q"]


def test_weights_count_and_a_score_outside_every_band_has_none() -> None:
    items = [RubricItem(id="s", outcome="S", weight=3, score_ranges=[ScoreRange(score_range=(0, 5), outcome="Low")]),
             RubricItem(id="t", outcome="T", score_ranges=[ScoreRange(score_range=(0, 5), outcome="Low")])]
    outcome = score_checks(items, judged(items, {"id": "s", "score": 10, "reasoning": ""},
                                         {"id": "t", "score": 2, "reasoning": ""}, scored=True))
    assert outcome.score == pytest.approx((3 * 1.0 + 1 * 0.2) / 4)
    assert outcome.details["checks"][0]["band"] == "" and outcome.hits == ["[s] S - Score: 10/10 ()"]
    assert outcome.details["aggregation"] == "weighted_average"


def test_details_keep_the_judge_s_overall_reasoning_and_each_checklist_row() -> None:
    reply = parse_checks_reply(json.dumps({"checks": [{"id": "a", "satisfied": False, "reasoning": "no"}],
                                           "overall_reasoning": "weak"}), scored=False)
    outcome = score_checks(CHECKLIST, reply)
    assert outcome.details["overall_reasoning"] == "weak" and outcome.details["mode"] == "checklist"
    assert outcome.details["checks"][0] == {"id": "a", "outcome": "Names it", "weight": 1.0, "required": False,
                                            "reasoning": "no", "satisfied": False}
    assert "raw_scores" not in outcome.details
    assert "overall_reasoning" not in score_checks(CHECKLIST, judged(CHECKLIST)).details


def test_an_item_without_an_outcome_is_named_by_its_id_and_a_reason_is_optional() -> None:
    items = [RubricItem(id="tone", outcome="")]
    outcome = score_checks(items, judged(items, {"id": "tone", "satisfied": True, "reasoning": ""}))
    assert outcome.hits == ["[tone] tone"]


def test_the_case_prompt_asks_the_case_s_question_else_its_input_messages() -> None:
    from pathlib import Path

    from agentv_gate.judging.rubric_protocol import case_user_prompt
    from agentv_gate.models import EvalCase, Message

    messages = [Message(role="user", content="  What is the capital?  "), Message(role="user", content="Of France.")]
    asked = EvalCase(id="c", source_file=Path("x.yaml"), suite="x", question=" Capital of France? ",
                     input_messages=messages, expected_outcome=" Names Paris ", reference_answer=" Paris ")
    prompt = case_user_prompt(CHECKLIST, asked, "  It is Paris.  ")
    assert "[[ ## question ## ]]\nCapital of France?\n" in prompt
    assert "[[ ## criteria ## ]]\nNames Paris\n" in prompt and "[[ ## reference_answer ## ]]\nParis\n" in prompt
    assert "[[ ## answer ## ]]\nIt is Paris.\n" in prompt
    unasked = asked.model_copy(update={"question": ""})
    assert "[[ ## question ## ]]\nWhat is the capital? Of France.\n" in case_user_prompt(CHECKLIST, unasked, "a")


@pytest.mark.parametrize(("weight", "label"), [(0.5, " (weight: 0.5)"), (1.0, ""), (2.0, " (weight: 2)")])
def test_the_prompt_labels_every_weight_but_the_default(weight: float, label: str) -> None:
    from agentv_gate.judging.rubric_protocol import user_prompt

    items = [RubricItem(id="a", outcome="Names it", weight=weight)]
    assert f"- [a]{label}: Names it" in user_prompt(items, "Q?", "C", "", "A")


def test_as_4_42_scores_it_an_unreported_item_is_no_line_and_no_fail_and_lines_follow_the_judge() -> None:
    """4.42's `calculateRubricScore` / `calculateScoreRangeResult` walk the judge's checks only: an item with a
    minimum the judge never scored fails nothing there, and the lines come in the judge's order."""
    items = [RubricItem(id="s", outcome="Structure", required_min_score=1, score_ranges=BANDS),
             RubricItem(id="t", outcome="Tone", score_ranges=BANDS), RubricItem(id="u", outcome="Use", score_ranges=BANDS)]
    no_s = score_checks(items, judged(items, {"id": "u", "score": 8, "reasoning": "r"},
                                      {"id": "t", "score": 10, "reasoning": "r"}, scored=True),
                        evidence_apart=True, as_reported=True)
    assert not no_s.failed_required and no_s.score == 0.9
    assert no_s.hits == ["[u] Use - Score: 8/10 (Good)", "[t] Tone - Score: 10/10 (Good)"] and no_s.misses == []
    nothing = score_checks(CHECKLIST, judged(CHECKLIST, {"id": "zz", "satisfied": True, "reasoning": "x"}),
                           as_reported=True)
    assert (nothing.score, nothing.hits, nothing.misses, nothing.failed_required) == (0.0, [], [], False)
