"""Learning from the server: a request parameter it refuses is adjusted once and remembered.

A name list cannot know every deployment: an Azure deployment called `judge-prod` may be an
o-series model, and a local server may not do structured output. So when a chat-completions
call gets a 400 (or 422) whose error names a parameter we chose to send as unsupported, the
call is sent again once without it, or with the replacement the error names:

* `Unsupported parameter: 'max_tokens' ... Use 'max_completion_tokens' instead.` -> renamed;
* `Unsupported value: 'temperature' does not support 0 ...` -> left out (the model's default);
* a refused `response_format` / `json_schema` (the Responses API's `text.format`) -> left out: the judge falls back to asking for
  JSON in the prompt and parsing the reply tolerantly, as it does for any other server.

Only parameters whose absence leaves the question the same are ever adjusted (`ADJUSTABLE`);
any other 400 is the case's error, quoting the provider. The adjustment is remembered for the
target for the rest of the run (`ParameterMemory`, shared by the worker threads) and reported
once on stderr, so the user knows their judge now runs at its default temperature.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..transport.http_policy import HttpCallError, HttpResult
from .notices import notice

ADJUSTABLE = frozenset({"temperature", "max_tokens", "max_completion_tokens", "response_format"})
STRUCTURED_KEYS = ("response_format", "text")
"""Where a body asks for a structured reply: chat completions' `response_format`, the Responses API's `text`."""
"""Parameters the provider may leave out or rename when the server refuses them."""
_STATUSES = (400, 422)
_UNSUPPORTED_PARAMETER = re.compile(r"unsupported parameter:?\s*'([\w.]+)'", re.IGNORECASE)
_UNSUPPORTED_VALUE = re.compile(r"unsupported value:?\s*'([\w.]+)'", re.IGNORECASE)
_INSTEAD = re.compile(r"use\s+'([\w.]+)'\s+instead", re.IGNORECASE)
_STRUCTURED = re.compile(r"response_format|json_schema", re.IGNORECASE)


@dataclass(frozen=True)
class Adjustment:
    param: str
    replacement: str | None
    """The parameter to send the value as instead; None means leave it out."""
    reason: str
    """What the server said, as quoted to the user."""

    def apply(self, body: dict[str, Any]) -> dict[str, Any]:
        if self.param not in body:
            return body
        adjusted = {k: v for k, v in body.items() if k != self.param}
        if self.replacement is not None and self.replacement not in adjusted:
            adjusted[self.replacement] = body[self.param]
        return adjusted

    def describe(self) -> str:
        if self.replacement is not None:
            return f"sending '{self.replacement}' instead of '{self.param}'"
        if self.param in STRUCTURED_KEYS:
            return "asking for the JSON reply in the prompt only (no structured output)"
        return f"leaving '{self.param}' out"


def adjustment_for(error: HttpCallError, body: dict[str, Any]) -> Adjustment | None:
    """The adjustment a refused call asks for, or None when the error is not about a parameter
    we may change (then it stands as the case's error)."""
    detail = error.detail
    if error.status not in _STATUSES or detail is None:
        return None
    message = detail.message or ""
    reason = detail.describe()
    match = _UNSUPPORTED_PARAMETER.search(message)
    if match or detail.code == "unsupported_parameter":
        param = match.group(1) if match else detail.param
        if param in ADJUSTABLE and param in body:
            instead = _INSTEAD.search(message)
            replacement = instead.group(1) if instead else None
            if replacement is None or (replacement in ADJUSTABLE and replacement not in body):
                return Adjustment(param, replacement, reason)
        return None
    match = _UNSUPPORTED_VALUE.search(message)
    if match or detail.code == "unsupported_value":
        param = match.group(1) if match else detail.param
        if param in ADJUSTABLE and param in body:
            return Adjustment(param, None, reason)
        return None
    structured = next((key for key in STRUCTURED_KEYS if key in body), None)
    if structured is not None and (_STRUCTURED.search(message) or _STRUCTURED.search(detail.param or "")):
        return Adjustment(structured, None, reason)
    return None


class ParameterMemory:
    """What one target's server refused, for the rest of the run. Safe across worker threads."""

    def __init__(self, describe: str) -> None:
        self._describe = describe
        self._lock = threading.Lock()
        self._learned: dict[str, Adjustment] = {}

    def learned(self) -> list[Adjustment]:
        with self._lock:
            return list(self._learned.values())

    def apply(self, body: dict[str, Any]) -> dict[str, Any]:
        for adjustment in self.learned():
            body = adjustment.apply(body)
        return body

    def learn(self, adjustment: Adjustment) -> None:
        """Remember `adjustment`; the first thread to learn it tells the user, once."""
        with self._lock:
            if adjustment.param in self._learned:
                return
            self._learned[adjustment.param] = adjustment
        notice(f"{self._describe}: the server refused '{adjustment.param}' ({adjustment.reason}); "
               f"{adjustment.describe()} for the rest of this run")


def send_adapting(
    send: Callable[[dict[str, Any]], HttpResult], body: dict[str, Any], memory: ParameterMemory
) -> HttpResult:
    """`send(body)` with what `memory` learned applied; a refused parameter is adjusted and sent
    again, once per parameter. Each re-send counts as a retry of the call."""
    body = memory.apply(body)
    adjusted: set[str] = set()
    while True:
        try:
            result = send(body)
        except HttpCallError as exc:
            adjustment = adjustment_for(exc, body)
            if adjustment is None or adjustment.param in adjusted:
                exc.retries += len(adjusted)
                raise
            adjusted.add(adjustment.param)
            memory.learn(adjustment)
            body = adjustment.apply(body)
            continue
        result.retries += len(adjusted)
        return result


__all__ = ["ADJUSTABLE", "Adjustment", "ParameterMemory", "adjustment_for", "send_adapting"]
