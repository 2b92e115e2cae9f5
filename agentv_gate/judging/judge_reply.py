"""Turn an LLM judge's reply into `{score, hits, misses, reasoning}`, or say exactly why not.

Models wrap JSON in prose, in ```json fences, after a <think> block, or next to other JSON
objects; all of that is tolerated. What is *not* tolerated is a reply whose content is wrong:
a score outside [0, 1], a missing score, a score that is not a number, or two verdicts that
disagree (a verdict, then a revised one). Those are reported, so the caller can ask again instead
of silently clamping a judge that misunderstood the scale or guessing which verdict it meant.
(AgentV's parseJsonFromText strips fences and takes the outermost `{...}`; this does the same
and more, then validates like its zod schema.)
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..base.jscompat import is_finite_number, js_number
from ..errors import JudgeReplyError
from ..redaction import redact

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
    """The reply's start for an error message; a key in it hidden before the cut (after it, the
    part of the key left is no longer recognised as one)."""
    flat = " ".join(redact(text).split())
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


def candidate_tiers(text: str) -> list[list[dict[str, Any]]]:
    """JSON objects a reply may mean as its answer, in tiers, most likely first: the whole reply;
    each fenced block; objects embedded in prose. AgentV also tries the span from the first `{` to
    the last `}`; any object that span holds starts at that first `{`, where the objects in prose
    already found it. An object is listed once, in the first tier that has it.
    """
    cleaned = _THINK.sub("", text).strip()
    seen: list[dict[str, Any]] = []
    tiers: list[list[dict[str, Any]]] = [[], [], []]

    def add(tier: int, value: Any) -> None:
        if isinstance(value, dict) and value not in seen:
            seen.append(value)
            tiers[tier].append(value)

    for tier, chunk in [(0, cleaned)] + [(1, m.group(2)) for m in _FENCE.finditer(cleaned)]:
        try:
            add(tier, json.loads(chunk.strip()))
        except (ValueError, RecursionError):
            pass
    for value in _objects_in(cleaned):
        add(2, value)
    return [tier for tier in tiers if tier]


_Read = TypeVar("_Read")


def _read_one(text: str, validate: Callable[[dict[str, Any]], _Read], key: Callable[[_Read], Any],
              what: str, empty: str, first_error_key: str) -> _Read:
    """The one answer in `text`: the first tier holding a valid object decides; within it, valid
    objects that disagree (by `key`) are refused, never resolved by taking the first.

    AgentV parses the greedy `{...}` span, so a reply holding two objects never parses there and is
    asked again; we read a verdict beside an example or a repeat, but a judge that wrote a verdict
    and then a revised one has not said which it meant, and the first could pass the case.
    """
    if not text or not text.strip():
        raise JudgeReplyError(f"expected a JSON object {empty}, got an empty reply")
    tiers = candidate_tiers(text)
    if not tiers:
        raise JudgeReplyError(f"expected a JSON object {empty}, got no JSON object in: {_snippet(text)!r}")
    first_error: JudgeReplyError | None = None
    for tier in tiers:
        valid: list[_Read] = []
        for obj in tier:
            try:
                valid.append(validate(obj))
            except JudgeReplyError as exc:
                if first_error is None or (first_error_key in obj and f"no '{first_error_key}'" in str(first_error)):
                    first_error = exc
        if valid:
            keys = list(dict.fromkeys(json.dumps(key(v)) for v in valid))
            if len(keys) > 1:
                raise JudgeReplyError(f"the reply holds {len(valid)} {what} ({', '.join(keys)}), so which one "
                                      f"is meant is unclear (answer with one JSON object) in: {_snippet(text)!r}")
            return valid[0]
    assert first_error is not None
    raise JudgeReplyError(f"{first_error} in: {_snippet(text)!r}")


def _score(value: Any) -> float:
    """AgentV's schema says `z.number()`: a score written as text ("0.9") or true is not a score there,
    so the judge is asked again (and skipped after three tries), never read as the number it spells."""
    if not is_finite_number(value):
        raise JudgeReplyError(f"'score' must be a number between 0 and 1, got {json.dumps(js_number(value))}")
    if not 0.0 <= float(value) <= 1.0:
        raise JudgeReplyError(f"'score' must be between 0 and 1, got {value}")
    return float(value)


def _strings(obj: dict[str, Any], name: str) -> list[str]:
    """`hits` / `misses`: absent, or a list of strings (AgentV: `z.array(z.string()).optional()`, then
    only the non-empty ones kept); null, a bare string or a number in the list fails that schema."""
    if name not in obj:
        return []
    value = obj[name]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise JudgeReplyError(f"'{name}' must be a list of strings, got {json.dumps(value)[:80]}")
    return [item.strip() for item in value if item.strip()]


def _text(obj: dict[str, Any], name: str, where: str = "", required: bool = False) -> str | None:
    """A reasoning field: a string, or absent where AgentV's schema makes it optional."""
    if name not in obj and not required:
        return None
    value = obj.get(name)
    if not isinstance(value, str):
        shown = "nothing" if name not in obj else json.dumps(value)[:80]
        raise JudgeReplyError(f"{where}'{name}' must be a string, got {shown}")
    return value


def validate_verdict(obj: dict[str, Any]) -> JudgeReply:
    """Check one decoded object against the judge schema (AgentV's zod schema: `score` a number in
    0..1; `hits`, `misses` lists of strings and `reasoning` a string, each optional); raise
    JudgeReplyError if it fails."""
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
    return _read_one(text, validate_verdict, lambda reply: reply.score, "verdicts with different scores",
                     '{"score": 0..1, "hits": [...], "misses": [...], "reasoning": "..."}', "score")


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
    if not is_finite_number(value):
        raise JudgeReplyError(f"{where}: 'score' must be an integer from 0 to 10, got {json.dumps(js_number(value))}")
    if value != int(value) or not 0 <= value <= 10:
        raise JudgeReplyError(f"{where}: 'score' must be an integer from 0 to 10, got {value}")
    return int(value)


def validate_checks(obj: dict[str, Any], scored: bool) -> ChecksReply:
    """One decoded object against the checks schema (`scored`: score-range mode); JudgeReplyError if not.

    As AgentV's zod schemas: each check's `id` is a string and `satisfied` true or false (not "true"),
    a band's `score` an integer (not "7"); `reasoning` and `overall_reasoning` are strings, required
    in a checklist and optional with score ranges. A reply that fails them is asked again, never read
    as what it seems to mean."""
    raw = obj.get("checks")
    if not isinstance(raw, list):
        keys = ", ".join(sorted(map(str, obj))) or "none"
        raise JudgeReplyError(f"JSON object has no 'checks' list (keys: {keys})")
    checks: list[Check] = []
    for index, item in enumerate(raw):
        where = f"checks[{index}]"
        if not isinstance(item, dict):
            raise JudgeReplyError(f"{where} must be an object, got {type(item).__name__}")
        if not isinstance(item.get("id"), str):
            raise JudgeReplyError(f"{where} has no 'id' string (got {json.dumps(item.get('id'))[:80]})")
        check = Check(id=item["id"])
        named = f"{where} ({check.id})"
        if scored:
            if "score" not in item:
                raise JudgeReplyError(f"{named} has no 'score'")
            check.score = _check_score(item["score"], named)
        else:
            if "satisfied" not in item:
                raise JudgeReplyError(f"{named} has no 'satisfied'")
            if not isinstance(item["satisfied"], bool):
                raise JudgeReplyError(f"{named}: 'satisfied' must be true or false, got {json.dumps(item['satisfied'])}")
            check.satisfied = item["satisfied"]
        check.reasoning = (_text(item, "reasoning", f"{named}: ", required=not scored) or "").strip()
        checks.append(check)
    return ChecksReply(checks, _text(obj, "overall_reasoning", required=not scored))


def parse_checks_reply(text: str, scored: bool) -> ChecksReply:
    """The rubric checks in `text`, found as tolerantly as a verdict; JudgeReplyError says why not."""
    shape = '{"checks": [{"id": ..., ' + ('"score": 0..10' if scored else '"satisfied": true|false') + \
        ', "reasoning": ...}], "overall_reasoning": ...}'
    return _read_one(text, lambda obj: validate_checks(obj, scored),
                     lambda reply: [(c.id, c.satisfied, c.score) for c in reply.checks],
                     "sets of rubric checks that disagree", shape, "checks")
