"""Turn an LLM judge's reply into `{score, hits, misses, reasoning}`, or say exactly why not.

Models wrap JSON in prose, in ```json fences, after a <think> block, or next to other JSON
objects; all of that is tolerated. What is *not* tolerated is a reply whose content is wrong:
a score outside [0, 1], a missing score, a score that is not a number. Those are reported, so
the caller can ask again instead of silently clamping a judge that misunderstood the scale.
(AgentV's parseJsonFromText strips fences and takes the outermost `{...}`; this does the same
and more, then validates like its zod schema: a value of the wrong JSON type, such as the score "0.9"
in text, is refused as AgentV's schema refuses it, never read as what it spells.)
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import JudgeReplyError

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\r?\n(.*?)```", re.DOTALL)
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_SNIPPET = 200


def _strict_object(properties: dict[str, Any]) -> dict[str, Any]:
    """A JSON-schema object in the form OpenAI's strict structured output accepts: every
    property required, no others allowed."""
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


VERDICT_SCHEMA: dict[str, Any] = {
    "name": "verdict",
    "schema": _strict_object({
        "score": {"type": "number", "description": "0 to 1"},
        "hits": {"type": "array", "items": {"type": "string"}},
        "misses": {"type": "array", "items": {"type": "string"}},
        "reasoning": {"type": "string"},
    }),
}
"""The `{score, hits, misses, reasoning}` reply, as a reply schema (`{"name", "schema"}`) a judge
target can be held to with structured output, so the reply parses on the first ask. The schema
does not bound the score: a judge that answers 7 is still caught by `validate_verdict`, never
clamped. A reply that comes back anyway is parsed and validated exactly like a prompt-only one.

Other reply shapes are defined the same way, with `_strict_object`, and set as the request's
`reply_schema`; the providers need nothing more, and the same fallback to prompt-only JSON applies
when a judge target cannot do structured output. The rubric judge's two are below."""


def _checks_schema(name: str, judgement: dict[str, Any]) -> dict[str, Any]:
    check = _strict_object({"id": {"type": "string"}, **judgement, "reasoning": {"type": "string"}})
    return {"name": name, "schema": _strict_object({
        "checks": {"type": "array", "items": check},
        "overall_reasoning": {"type": "string"},
    })}


CHECKLIST_SCHEMA: dict[str, Any] = _checks_schema("rubric_checks", {"satisfied": {"type": "boolean"}})
"""A checklist rubric's reply: `{"checks": [{"id", "satisfied", "reasoning"}], "overall_reasoning"}`."""

SCORE_RANGE_SCHEMA: dict[str, Any] = _checks_schema(
    "rubric_scores", {"score": {"type": "integer", "description": "0 to 10"}})
"""A score-range rubric's reply: `{"checks": [{"id", "score": 0..10, "reasoning"}], "overall_reasoning"}`.
As for the verdict, the schema does not bound the score; `parse_checks_reply` refuses 11."""


@dataclass
class JudgeReply:
    score: float
    hits: list[str] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)
    reasoning: str | None = None


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat[:_SNIPPET] + ("..." if len(flat) > _SNIPPET else "")


def _objects_in(text: str) -> list[dict[str, Any]]:
    """Every JSON object that decodes at some `{` in `text`, outermost first, in order."""
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    index = text.find("{")
    while index != -1:
        try:
            value, end = decoder.raw_decode(text, index)
        except (ValueError, RecursionError):  # RecursionError: nested deeper than Python's stack
            index = text.find("{", index + 1)
            continue
        found.append(value)  # what decodes at a `{` is an object
        index = text.find("{", end)
    return found


def candidate_objects(text: str) -> list[dict[str, Any]]:
    """JSON objects a reply may mean as its answer, most likely first.

    Order: the whole reply; each fenced block; objects embedded in prose. AgentV also tries the
    span from the first `{` to the last `}`; any object that span holds starts at that first `{`,
    where the objects in prose already found it.
    """
    cleaned = _THINK.sub("", text).strip()
    candidates: list[dict[str, Any]] = []

    def add(value: Any) -> None:
        if isinstance(value, dict) and value not in candidates:
            candidates.append(value)

    for chunk in [cleaned] + [m.group(2) for m in _FENCE.finditer(cleaned)]:
        try:
            add(json.loads(chunk.strip()))
        except (ValueError, RecursionError):
            pass
    for value in _objects_in(cleaned):
        add(value)
    return candidates


def _score(value: Any) -> float:
    """A JSON number from 0 to 1, as AgentV's `z.number().min(0).max(1)`: text such as "0.9" is refused
    (AgentV asks again, then skips the judge), never read as the number it spells."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise JudgeReplyError(f"'score' must be a number between 0 and 1, got {json.dumps(value)}")
    if not 0.0 <= float(value) <= 1.0:
        raise JudgeReplyError(f"'score' must be between 0 and 1, got {value}")
    return float(value)


def _strings(obj: dict[str, Any], name: str) -> list[str]:
    """An optional list of strings, as AgentV's `z.array(z.string()).optional()`: absent is none, blank
    items are dropped (AgentV filters them), and anything else (text, null, a number among the items)
    is refused, since AgentV's schema refuses it and skips the judge rather than scoring it."""
    if name not in obj:
        return []
    value = obj[name]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise JudgeReplyError(f"'{name}' must be a list of strings, got {json.dumps(value)}")
    return [item.strip() for item in value if item.strip()]


def _text(obj: dict[str, Any], name: str, where: str = "") -> str | None:
    """An optional string (`z.string()`): absent is None; present, it must be text (not null, not a list)."""
    if name not in obj:
        return None
    value = obj[name]
    if not isinstance(value, str):
        raise JudgeReplyError(f"{where}'{name}' must be a string, got {json.dumps(value)}")
    return value


def validate_verdict(obj: dict[str, Any]) -> JudgeReply:
    """Check one decoded object against the judge schema; raise JudgeReplyError if it fails."""
    if "score" not in obj:
        keys = ", ".join(sorted(map(str, obj))) or "none"
        raise JudgeReplyError(f"JSON object has no 'score' (keys: {keys})")
    return JudgeReply(
        score=_score(obj["score"]),
        hits=_strings(obj, "hits"),
        misses=_strings(obj, "misses"),
        reasoning=_text(obj, "reasoning"),
    )


def parse_judge_reply(text: str) -> JudgeReply:
    """The verdict in `text`. Raises JudgeReplyError saying what was expected and what came."""
    if not text or not text.strip():
        raise JudgeReplyError('expected a JSON object {"score": 0..1, ...}, got an empty reply')
    candidates = candidate_objects(text)
    if not candidates:
        raise JudgeReplyError(
            f'expected a JSON object {{"score": 0..1, "hits": [...], "misses": [...], "reasoning": "..."}}, '
            f"got no JSON object in: {_snippet(text)!r}"
        )
    first_error: JudgeReplyError | None = None
    for obj in candidates:
        try:
            return validate_verdict(obj)
        except JudgeReplyError as exc:
            if first_error is None or ("score" in obj and "no 'score'" in str(first_error)):
                first_error = exc
    assert first_error is not None
    raise JudgeReplyError(f"{first_error} in: {_snippet(text)!r}")


# ---------------------------------------------------------------- rubric checks


@dataclass
class Check:
    """One rubric item as the judge assessed it: `satisfied` (checklist) or `score` 0..10 (score ranges)."""

    id: str
    reasoning: str = ""
    satisfied: bool | None = None
    score: int | None = None


@dataclass
class ChecksReply:
    checks: list[Check]
    overall_reasoning: str | None = None


def _check_score(value: Any, where: str) -> int:
    """An integer from 0 to 10 written as a JSON number (7.0 is 7); text such as "3" is refused."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise JudgeReplyError(f"{where}: 'score' must be an integer from 0 to 10, got {json.dumps(value)}")
    if value != int(value) or not 0 <= value <= 10:
        raise JudgeReplyError(f"{where}: 'score' must be an integer from 0 to 10, got {value}")
    return int(value)


def _satisfied(value: Any, where: str) -> bool:
    """`true` or `false` (AgentV's `z.boolean()`): the text "true" is refused, not read as satisfied."""
    if isinstance(value, bool):
        return value
    raise JudgeReplyError(f"{where}: 'satisfied' must be true or false, got {json.dumps(value)}")


def validate_checks(obj: dict[str, Any], scored: bool) -> ChecksReply:
    """One decoded object against the checks schema (`scored`: score-range mode); JudgeReplyError if not.

    Types are AgentV's zod schema's (`id` a string, `satisfied` a boolean, reasoning text): a value of
    another type is refused, so the judge is asked again and then skipped, as AgentV does, rather than
    scored on a reading AgentV never makes."""
    raw = obj.get("checks")
    if not isinstance(raw, list):
        keys = ", ".join(sorted(map(str, obj))) or "none"
        raise JudgeReplyError(f"JSON object has no 'checks' list (keys: {keys})")
    checks: list[Check] = []
    for index, item in enumerate(raw):
        where = f"checks[{index}]"
        if not isinstance(item, dict):
            raise JudgeReplyError(f"{where} must be an object, got {type(item).__name__}")
        if not isinstance(item.get("id"), str) or item["id"] == "":
            raise JudgeReplyError(f"{where} has no 'id'" if item.get("id") in (None, "")
                                  else f"{where}: 'id' must be a string, got {json.dumps(item['id'])}")
        check = Check(id=item["id"], reasoning=(_text(item, "reasoning", f"{where} ({item['id']}): ") or "").strip())
        if scored:
            if "score" not in item:
                raise JudgeReplyError(f"{where} ({check.id}) has no 'score'")
            check.score = _check_score(item["score"], f"{where} ({check.id})")
        else:
            if "satisfied" not in item:
                raise JudgeReplyError(f"{where} ({check.id}) has no 'satisfied'")
            check.satisfied = _satisfied(item["satisfied"], f"{where} ({check.id})")
        checks.append(check)
    return ChecksReply(checks, _text(obj, "overall_reasoning"))


def parse_checks_reply(text: str, scored: bool) -> ChecksReply:
    """The rubric checks in `text`, found as tolerantly as a verdict; JudgeReplyError says why not."""
    shape = '{"checks": [{"id": ..., ' + ('"score": 0..10' if scored else '"satisfied": true|false') + \
        ', "reasoning": ...}], "overall_reasoning": ...}'
    if not text or not text.strip():
        raise JudgeReplyError(f"expected a JSON object {shape}, got an empty reply")
    candidates = candidate_objects(text)
    if not candidates:
        raise JudgeReplyError(f"expected a JSON object {shape}, got no JSON object in: {_snippet(text)!r}")
    first_error: JudgeReplyError | None = None
    for obj in candidates:
        try:
            return validate_checks(obj, scored)
        except JudgeReplyError as exc:
            if first_error is None or ("checks" in obj and "no 'checks'" in str(first_error)):
                first_error = exc
    assert first_error is not None
    raise JudgeReplyError(f"{first_error} in: {_snippet(text)!r}")
