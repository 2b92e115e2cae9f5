"""JSON out of model-written text, the way AgentV reads it (`parseJsonFromText`).

Agents and judges wrap JSON in ```json fences or prose. AgentV strips the fence markers, takes
the greedy `{...}` span and parses it, and nothing else: text it cannot read that way is no JSON,
so we search no further (another fenced block, another `{`), which would read an object AgentV
never reads and pass a `field_accuracy` it fails. Parsing is JavaScript-strict: `NaN`/`Infinity`
are rejected, as `JSON.parse` rejects them.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..base.jscompat import js_trim

_FENCE_MARKERS = re.compile(r"```json\n?|```")
_GREEDY_OBJECT = re.compile(r"\{[\s\S]*\}")


class JsonExtractError(ValueError):
    """No JSON value could be read from the text; the message says why."""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _js_int(text: str) -> int | float:
    """A JSON integer as JSON.parse reads it, a double: exact up to 15 digits (kept an int, so 42 shows as
    42), else rounded as JavaScript rounds it (9007199254740993 is 9007199254740992 there, 5000 digits are
    Infinity), where Python's int is exact and refuses more than 4300 digits."""
    return int(text) if len(text.lstrip("-")) <= 15 else float(text)


def loads_strict(text: str) -> Any:
    """`json.loads` with JavaScript's rules for the non-standard constants and for numbers.

    JSON nested deeper than Python's recursion limit raises ValueError like any other bad JSON
    (json.loads raises RecursionError), so callers that handle ValueError handle it too.
    """
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_int=_js_int)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


def parse_json_from_text(text: str) -> Any:
    """The JSON value in `text` as AgentV's `parseJsonFromText` reads it; raises JsonExtractError
    when there is none."""
    if not isinstance(text, str) or not text.strip():
        raise JsonExtractError("the text is empty")
    cleaned = js_trim(_FENCE_MARKERS.sub("", text))
    match = _GREEDY_OBJECT.search(cleaned)
    blob = match.group(0) if match else cleaned
    try:
        return loads_strict(blob)
    except ValueError as error:
        raise JsonExtractError(f"no JSON found ({error})") from None


def parse_json_object(text: str) -> dict[str, Any]:
    """Like `parse_json_from_text`, but the value must be an object."""
    value = parse_json_from_text(text)
    if not isinstance(value, dict):
        raise JsonExtractError(f"expected a JSON object, got {type(value).__name__}")
    return value


def json_equal(a: Any, b: Any) -> bool:
    """AgentV's deepEqual over JSON values: 1 == 1.0, but true is not 1 and key order is ignored."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def js_type(value: Any) -> str:
    """JavaScript's `typeof` name for a JSON value, for messages AgentV users recognise."""
    if value is None or isinstance(value, (dict, list)):
        return "object"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return "string"
