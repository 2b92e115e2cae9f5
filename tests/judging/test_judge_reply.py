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



@pytest.mark.parametrize("reply", [
    # a verdict, then a revised one in prose: AgentV's greedy {...} span does not parse, so it asks again
    '{"score": 0.9, "reasoning": "first"}\nOn reflection:\n{"score": 0.2, "reasoning": "revised"}',
    # two fenced verdicts that disagree
    '```json\n{"score": 0.95}\n```\nWait, revised:\n```json\n{"score": 0.1}\n```',
])
def test_two_verdicts_that_disagree_are_refused_not_the_first_taken(reply: str) -> None:
    with pytest.raises(JudgeReplyError, match=r"^the reply holds 2 verdicts with different scores \((0.9, 0.2|0.95, 0.1)\)"):
        parse_judge_reply(reply)


def test_the_same_verdict_twice_is_read() -> None:
    assert parse_judge_reply('{"score": 0.5}\nAgain: {"score": 0.5, "hits": ["x"]}').score == 0.5


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


@pytest.mark.parametrize(("score", "expected"), [(0, 0.0), (1, 1.0), (0.5, 0.5), (0.8, 0.8)])
def test_a_score_from_0_to_1_is_read(score: object, expected: float) -> None:
    assert parse_judge_reply(json.dumps({"score": score})).score == expected


@pytest.mark.parametrize(("reply", "message"), [
    ('{"score": null}', "'score' must be a number between 0 and 1, got null"),
    ('{"score": true}', "'score' must be a number between 0 and 1, got true"),
    ('{"score": "high"}', "'score' must be a number between 0 and 1, got \"high\""),
    # a number written as text is not a number to AgentV's schema (z.number()): asked again, never read as 0.8
    ('{"score": "0.8"}', "'score' must be a number between 0 and 1, got \"0.8\""),
    ('{"score": " 1 "}', "'score' must be a number between 0 and 1, got \" 1 \""),
    ('{"score": [1]}', "'score' must be a number between 0 and 1, got [1]"),
    ('{"score": NaN}', "'score' must be a number between 0 and 1, got NaN"),
    # an integer too large for a float (JavaScript reads Infinity): an invalid reply, asked again, not a crash
    ('{"score": 1' + "0" * 400 + "}", "'score' must be a number between 0 and 1, got Infinity"),
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


def test_hits_misses_and_reasoning_are_lists_of_text_and_text_or_absent() -> None:
    reply = parse_judge_reply(json.dumps({"score": 0.6, "hits": ["names the bug", " "], "misses": [], "reasoning": "ok"}))
    assert (reply.hits, reply.misses, reply.reasoning) == (["names the bug"], [], "ok")
    bare = parse_judge_reply('{"score": 1}')
    assert (bare.hits, bare.misses, bare.reasoning) == ([], [], None)
    assert parse_judge_reply('{"score": 1, "reasoning": "fine"}').reasoning == "fine"


@pytest.mark.parametrize(("fields", "message"), [
    ({"hits": "names the bug"}, "'hits' must be a list of strings, got \"names the bug\""),
    ({"hits": None}, "'hits' must be a list of strings, got null"),
    ({"misses": [" ", None]}, "'misses' must be a list of strings, got [\" \", null]"),
    ({"misses": [{"x": 1}, 3]}, "'misses' must be a list of strings, got [{\"x\": 1}, 3]"),
    ({"reasoning": ["a", "b"]}, "'reasoning' must be a string, got [\"a\", \"b\"]"),
    ({"reasoning": None}, "'reasoning' must be a string, got null"),
])
def test_hits_misses_or_reasoning_of_another_shape_make_the_reply_invalid(fields: dict[str, Any], message: str) -> None:
    """AgentV's schema (`z.array(z.string()).optional()`, `z.string().optional()`) refuses these, so
    its judge is asked again and then skipped; reading them anyway would pass on a reply AgentV skips."""
    with pytest.raises(JudgeReplyError) as caught:
        parse_judge_reply(json.dumps({"score": 0.9, **fields}))
    assert str(caught.value).startswith(message + " in: ")


# ---------------------------------------------------------------- rubric checks


def checks(*items: Any, overall: object = "all told") -> str:
    return json.dumps({"checks": list(items), "overall_reasoning": overall})


def test_a_checklist_reply_reads_every_check_with_its_reasoning() -> None:
    reply = parse_checks_reply("Verdict:\n" + checks(
        {"id": "a", "satisfied": True, "reasoning": " named it "},
        {"id": "b", "satisfied": False, "reasoning": ""},
    ), scored=False)
    assert [(c.id, c.satisfied, c.score, c.reasoning) for c in reply.checks] == [
        ("a", True, None, "named it"), ("b", False, None, "")]
    assert reply.overall_reasoning == "all told"
    banded = parse_checks_reply(json.dumps({"checks": [{"id": "s", "score": 7}]}), scored=True)
    assert ([(c.id, c.score, c.reasoning) for c in banded.checks], banded.overall_reasoning) == ([("s", 7, "")], None)


@pytest.mark.parametrize(("score", "expected"), [(0, 0), (7, 7), (10, 10), (7.0, 7)])
def test_a_score_band_reply_reads_integers_from_0_to_10(score: object, expected: int) -> None:
    reply = parse_checks_reply(checks({"id": "s", "score": score, "reasoning": "clear"}), scored=True)
    assert [(c.id, c.score, c.satisfied, c.reasoning) for c in reply.checks] == [("s", expected, None, "clear")]


@pytest.mark.parametrize(("score", "shown"), [
    (-1, "-1"), (11, "11"), (7.5, "7.5"), (10.5, "10.5"), (True, "true"), ("seven", '"seven"'), (None, "null"),
    ("3", '"3"'),
    (10 ** 400, "Infinity"),
])
def test_a_score_band_outside_0_to_10_or_not_an_integer_is_refused(score: object, shown: str) -> None:
    with pytest.raises(JudgeReplyError) as caught:
        parse_checks_reply(checks({"id": "s", "score": score}), scored=True)
    assert str(caught.value).startswith(f"checks[0] (s): 'score' must be an integer from 0 to 10, got {shown} in: ")


@pytest.mark.parametrize(("reply", "scored", "message"), [
    ('{"score": 1, "verdict": "ok"}', False, "JSON object has no 'checks' list (keys: score, verdict)"),
    ('{"checks": {"id": "a"}}', False, "JSON object has no 'checks' list (keys: checks)"),
    ('{"checks": ["a"]}', False, "checks[0] must be an object, got str"),
    ('{"checks": [{"satisfied": true}]}', False, "checks[0] has no 'id' string (got null)"),
    ('{"checks": [{"id": true, "satisfied": true}]}', False, "checks[0] has no 'id' string (got true)"),
    ('{"checks": [{"id": 2, "satisfied": true}]}', False, "checks[0] has no 'id' string (got 2)"),
    ('{"checks": [{"id": "a", "satisfied": true, "reasoning": ""}, {"id": "b"}]}', False,
     "checks[1] (b) has no 'satisfied'"),
    ('{"checks": [{"id": "a", "satisfied": "true"}]}', False,
     "checks[0] (a): 'satisfied' must be true or false, got \"true\""),
    ('{"checks": [{"id": "a", "satisfied": true}], "overall_reasoning": ""}', False,
     "checks[0] (a): 'reasoning' must be a string, got nothing"),
    ('{"checks": [{"id": "a", "satisfied": true, "reasoning": {"why": "no"}}]}', False,
     "checks[0] (a): 'reasoning' must be a string, got {\"why\": \"no\"}"),
    ('{"checks": [{"id": "a", "satisfied": true, "reasoning": ""}]}', False, "'overall_reasoning' must be a string, got nothing"),
    ('{"checks": [], "overall_reasoning": null}', False, "'overall_reasoning' must be a string, got null"),
    ('{"checks": [{"id": "s", "score": 7, "reasoning": 1}]}', True, "checks[0] (s): 'reasoning' must be a string, got 1"),
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



def test_two_rubric_replies_that_disagree_are_refused() -> None:
    reply = checks({"id": "a", "satisfied": True, "reasoning": ""}) + "\nRevised:\n" + checks(
        {"id": "a", "satisfied": False, "reasoning": ""})
    with pytest.raises(JudgeReplyError, match=r"^the reply holds 2 sets of rubric checks that disagree"):
        parse_checks_reply(reply, scored=False)
    same = checks({"id": "a", "satisfied": True, "reasoning": ""}) + "\nAgain:\n" + checks(
        {"id": "a", "satisfied": True, "reasoning": ""})
    assert [c.satisfied for c in parse_checks_reply(same, scored=False).checks] == [True]


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


def test_the_whole_reply_decides_before_a_fenced_block_inside_one_of_its_strings() -> None:
    """A reply that is one JSON verdict is that verdict, even when its reasoning quotes a fenced example."""
    reply = json.dumps({"score": 0.9, "reasoning": 'an example: ```json\n{"score": 0.1}\n```'})
    assert parse_judge_reply(reply).score == 0.9


def test_of_verdicts_that_agree_the_first_is_read() -> None:
    reply = '{"score": 0.7, "reasoning": "first"}\nAgain: {"score": 0.7, "reasoning": "second"}'
    assert parse_judge_reply(reply).reasoning == "first"


@pytest.mark.parametrize(("field", "says"), [("hits", "'hits' must be a list of strings"),
                                             ("reasoning", "'reasoning' must be a string")])
def test_a_long_value_of_the_wrong_type_is_shown_in_its_first_80_characters(field: str, says: str) -> None:
    with pytest.raises(JudgeReplyError) as caught:
        parse_judge_reply(json.dumps({"score": 0.5, field: {"x": "y" * 200}}))
    assert str(caught.value).startswith(f"{says}, got " + '{"x": "' + "y" * 73 + " in: ")
