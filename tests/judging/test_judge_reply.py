"""Reading an LLM judge's reply on its own: where the JSON is found, what a verdict or a rubric
reply must hold, and what the judge is told when its reply is refused (so it can be asked again)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentv_gate.errors import JudgeReplyError
from agentv_gate.judging.judge_reply import (
    CHECKLIST_SCHEMA,
    SCORE_RANGE_SCHEMA,
    VERDICT_SCHEMA,
    parse_checks_reply,
    parse_judge_reply,
)

# ---------------------------------------------------------------- finding the JSON in a reply


@pytest.mark.parametrize(("reply", "score"), [
    # a `{` that starts no JSON, in prose before the verdict: the search goes on past it
    ('I weighed {the answer} carefully. {"score": 0.5}', 0.5),
    ('{{"score": 0.25}', 0.25),
    # nested deeper than Python's stack before the verdict: skipped, not a crash
    ('Draft: ' + '{"a": ' * 3000 + ' then {"score": 0.75}', 0.75),
    # the verdict in a fence wins over an example object quoted in the prose before it
    ('The format is {"score": 0.1}.\n```json\n{"score": 0.9}\n```', 0.9),
    # a thinking block, any case, over several lines, is not the answer
    ('<THINK>\nmaybe {"score": 0}\n</Think>\n{"score": 1}', 1.0),
])
def test_the_verdict_is_found_in_prose_fences_and_after_thinking(reply: str, score: float) -> None:
    assert parse_judge_reply(reply).score == score


@pytest.mark.parametrize(("reply", "message"), [
    ("", "got an empty reply"),
    (" \n\t ", "got an empty reply"),
    ("42", "got no JSON object in: '42'"),
    ('["score", 1]', """got no JSON object in: '["score", 1]'"""),
    ("The answer is good.", "got no JSON object in: 'The answer is good.'"),
])
def test_a_reply_with_no_json_object_says_so(reply: str, message: str) -> None:
    with pytest.raises(JudgeReplyError) as caught:
        parse_judge_reply(reply)
    assert message in str(caught.value)


@pytest.mark.parametrize(("length", "shown"), [
    (200, "x" * 200 + "'"),
    (201, "x" * 200 + "...'"),
])
def test_a_refused_reply_is_quoted_up_to_200_characters(length: int, shown: str) -> None:
    with pytest.raises(JudgeReplyError) as caught:
        parse_judge_reply("x" * length)
    assert str(caught.value).endswith("in: '" + shown)


# ---------------------------------------------------------------- the verdict's fields


@pytest.mark.parametrize(("score", "expected"), [(0, 0.0), (1, 1.0), (0.5, 0.5)])
def test_a_score_from_0_to_1_is_read(score: object, expected: float) -> None:
    assert parse_judge_reply(json.dumps({"score": score})).score == expected


@pytest.mark.parametrize(("reply", "message"), [
    ('{"score": null}', "'score' must be a number between 0 and 1, got null"),
    ('{"score": true}', "'score' must be a number between 0 and 1, got true"),
    ('{"score": "high"}', "'score' must be a number between 0 and 1, got \"high\""),
    # AgentV's z.number() refuses a number written as text (it asks again, then skips the judge)
    ('{"score": "0.8"}', "'score' must be a number between 0 and 1, got \"0.8\""),
    ('{"score": " 1 "}', "'score' must be a number between 0 and 1, got \" 1 \""),
    ('{"score": [1]}', "'score' must be a number between 0 and 1, got [1]"),
    ('{"score": NaN}', "'score' must be a number between 0 and 1, got NaN"),
    ('{"score": 7}', "'score' must be between 0 and 1, got 7"),
    ('{"score": -0.1}', "'score' must be between 0 and 1, got -0.1"),
    ('{"verdict": "pass", "reasoning": "ok"}', "JSON object has no 'score' (keys: reasoning, verdict)"),
    ("{}", "JSON object has no 'score' (keys: none)"),
])
def test_a_verdict_with_a_bad_or_missing_score_is_refused_with_the_reason(reply: str, message: str) -> None:
    with pytest.raises(JudgeReplyError) as caught:
        parse_judge_reply(reply)
    assert str(caught.value).startswith(message + " in: ")


def test_the_reason_given_is_the_first_candidates_unless_a_later_one_has_a_score() -> None:
    with pytest.raises(JudgeReplyError, match=r"^JSON object has no 'score' \(keys: first\) in: "):
        parse_judge_reply('Here {"first": 1} and {"second": 2}')
    with pytest.raises(JudgeReplyError, match=r"^'score' must be between 0 and 1, got 7 in: "):
        parse_judge_reply('Here {"first": 1} and {"score": 7}')


def test_hits_misses_and_reasoning_are_optional_and_blank_hits_dropped() -> None:
    reply = parse_judge_reply(json.dumps({"score": 0.6, "hits": ["names the bug", " "], "misses": [], "reasoning": "r"}))
    assert (reply.hits, reply.misses, reply.reasoning) == (["names the bug"], [], "r")
    bare = parse_judge_reply('{"score": 1}')
    assert (bare.hits, bare.misses, bare.reasoning) == ([], [], None)
    assert parse_judge_reply('{"score": 1, "reasoning": "fine"}').reasoning == "fine"


@pytest.mark.parametrize(("reply", "message"), [
    ('{"score": 0.6, "hits": "names the bug"}', "'hits' must be a list of strings, got \"names the bug\""),
    ('{"score": 0.6, "misses": [" ", null, 3]}', "'misses' must be a list of strings, got [\" \", null, 3]"),
    ('{"score": 0.6, "hits": null}', "'hits' must be a list of strings, got null"),
    ('{"score": 0.6, "reasoning": ["a", "b"]}', "'reasoning' must be a string, got [\"a\", \"b\"]"),
])
def test_hits_misses_or_reasoning_of_another_type_are_refused_as_agentvs_schema_refuses_them(
        reply: str, message: str) -> None:
    """AgentV validates with zod (`hits: z.array(z.string()).optional()`, `reasoning: z.string().optional()`):
    such a reply is asked again and the judge then skipped, so its score never counts; read tolerantly,
    its 0.9 passed cases AgentV scores without it."""
    with pytest.raises(JudgeReplyError) as caught:
        parse_judge_reply(reply)
    assert str(caught.value).startswith(message + " in: ")


# ---------------------------------------------------------------- rubric checks


def checks(*items: Any, overall: object = "all told") -> str:
    return json.dumps({"checks": list(items), **({} if overall is None else {"overall_reasoning": overall})})


def test_a_checklist_reply_reads_every_check_with_its_reasoning() -> None:
    reply = parse_checks_reply("Verdict:\n" + checks(
        {"id": "a", "satisfied": True, "reasoning": " named it "},
        {"id": "b", "satisfied": False},
    ), scored=False)
    assert [(c.id, c.satisfied, c.score, c.reasoning) for c in reply.checks] == [
        ("a", True, None, "named it"), ("b", False, None, "")]
    assert reply.overall_reasoning == "all told"
    assert parse_checks_reply(checks({"id": "a", "satisfied": True}, overall=None), scored=False).overall_reasoning is None


@pytest.mark.parametrize(("score", "expected"), [(0, 0), (7, 7), (10, 10), (7.0, 7)])
def test_a_score_band_reply_reads_integers_from_0_to_10(score: object, expected: int) -> None:
    reply = parse_checks_reply(checks({"id": "s", "score": score, "reasoning": "clear"}), scored=True)
    assert [(c.id, c.score, c.satisfied, c.reasoning) for c in reply.checks] == [("s", expected, None, "clear")]


@pytest.mark.parametrize(("score", "shown"), [
    (-1, "-1"), (11, "11"), (7.5, "7.5"), (10.5, "10.5"), (True, "true"), ("seven", '"seven"'), (None, "null"),
    ("3", '"3"'),
])
def test_a_score_band_outside_0_to_10_or_not_an_integer_is_refused(score: object, shown: str) -> None:
    with pytest.raises(JudgeReplyError) as caught:
        parse_checks_reply(checks({"id": "s", "score": score}), scored=True)
    assert str(caught.value).startswith(f"checks[0] (s): 'score' must be an integer from 0 to 10, got {shown} in: ")


@pytest.mark.parametrize(("reply", "scored", "message"), [
    ('{"score": 1, "verdict": "ok"}', False, "JSON object has no 'checks' list (keys: score, verdict)"),
    ('{"checks": {"id": "a"}}', False, "JSON object has no 'checks' list (keys: checks)"),
    ('{"checks": ["a"]}', False, "checks[0] must be an object, got str"),
    ('{"checks": [{"satisfied": true}]}', False, "checks[0] has no 'id'"),
    ('{"checks": [{"id": "", "satisfied": true}]}', False, "checks[0] has no 'id'"),
    ('{"checks": [{"id": true, "satisfied": true}]}', False, "checks[0]: 'id' must be a string, got true"),
    ('{"checks": [{"id": 2, "satisfied": true}]}', False, "checks[0]: 'id' must be a string, got 2"),
    ('{"checks": [{"id": "a", "satisfied": "true"}]}', False, "checks[0] (a): 'satisfied' must be true or false, got \"true\""),
    ('{"checks": [{"id": "a", "satisfied": true, "reasoning": null}]}', False,
     "checks[0] (a): 'reasoning' must be a string, got null"),
    ('{"checks": [{"id": "a", "satisfied": true}], "overall_reasoning": ["x"]}', False,
     "'overall_reasoning' must be a string, got [\"x\"]"),
    ('{"checks": [{"id": "a", "satisfied": true}, {"id": "b"}]}', False, "checks[1] (b) has no 'satisfied'"),
    ('{"checks": [{"id": "a", "satisfied": "yes"}]}', False, "checks[0] (a): 'satisfied' must be true or false, got \"yes\""),
    ('{"checks": [{"id": "a", "satisfied": 1}]}', False, "checks[0] (a): 'satisfied' must be true or false, got 1"),
    ('{"checks": [{"id": "a", "satisfied": true}]}', True, "checks[0] (a) has no 'score'"),
])
def test_a_rubric_reply_not_matching_its_schema_is_refused_with_the_reason(
        reply: str, scored: bool, message: str) -> None:
    with pytest.raises(JudgeReplyError) as caught:
        parse_checks_reply(reply, scored=scored)
    assert str(caught.value).startswith(message + " in: ")


def test_the_rubric_reason_given_is_the_first_candidates_unless_a_later_one_has_checks() -> None:
    with pytest.raises(JudgeReplyError, match=r"^JSON object has no 'checks' list \(keys: first\) in: "):
        parse_checks_reply('See {"first": 1} and {"second": 2}', scored=False)
    with pytest.raises(JudgeReplyError, match=r"^checks\[0\] \(a\) has no 'satisfied' in: "):
        parse_checks_reply('See {"checks": [{"id": "a"}]} and {"checks": ["b"]}', scored=False)
    with pytest.raises(JudgeReplyError, match=r"^checks\[0\] must be an object, got str in: "):
        parse_checks_reply('See {"first": 1} and {"checks": ["b"]}', scored=False)


@pytest.mark.parametrize(("scored", "shape"), [
    (True, '{"checks": [{"id": ..., "score": 0..10, "reasoning": ...}], "overall_reasoning": ...}'),
    (False, '{"checks": [{"id": ..., "satisfied": true|false, "reasoning": ...}], "overall_reasoning": ...}'),
])
@pytest.mark.parametrize(("reply", "got"), [("  ", "got an empty reply"), ("no idea", "got no JSON object in: 'no idea'")])
def test_a_rubric_reply_without_json_is_told_the_shape_expected(scored: bool, shape: str, reply: str, got: str) -> None:
    with pytest.raises(JudgeReplyError) as caught:
        parse_checks_reply(reply, scored=scored)
    assert str(caught.value) == f"expected a JSON object {shape}, {got}"


# ---------------------------------------------------------------- reply schemas


@pytest.mark.parametrize("schema", [VERDICT_SCHEMA, CHECKLIST_SCHEMA, SCORE_RANGE_SCHEMA])
def test_reply_schemas_are_in_the_strict_form_structured_output_accepts(schema: dict[str, Any]) -> None:
    def objects(node: dict[str, Any]) -> list[dict[str, Any]]:
        found = [node] if node.get("type") == "object" else []
        for child in [*node.get("properties", {}).values(), *([node["items"]] if "items" in node else [])]:
            found += objects(child)
        return found

    shapes = objects(schema["schema"])
    assert shapes
    for shape in shapes:
        assert shape["additionalProperties"] is False
        assert shape["required"] == list(shape["properties"])
