"""The sampling part of a chat-completions body (OpenAI and Azure), reasoning models included.

OpenAI's reasoning models (the o-series and the gpt-5 family, on OpenAI and on Azure) refuse
`max_tokens` ("Use 'max_completion_tokens' instead") and any `temperature` but the default. A
400 is not retried, so a judge on one of them would fail every case. So for a model recognised
as one, the token limit goes out as `max_completion_tokens` and the caller's preferred
temperature (the judge's 0) is left out. A `temperature` written on the target itself is still
sent: it is what the user asked for, and if the server refuses it the provider says so once and
leaves it out (see `adjustments.py`).

Recognition is by model / deployment name against `REASONING_MODEL_PATTERNS`; the target key
`reasoning_model: true|false` overrides it for names the list cannot know (an Azure deployment
called `judge-prod`). `reasoning_effort` is passed through when set.

Structured replies: a request may carry a `reply_schema` (`{"name", "schema"}`, e.g. the judge's
verdict); it goes out as `response_format: {type: json_schema, ...}` unless the target says
`structured_output: false`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..errors import TargetsConfigError
from .base import ProviderRequest
from .config import TargetConfig
from .settings import HttpChatSettings

REASONING_MODEL_PATTERNS: tuple[str, ...] = (r"o\d+(?:-.*)?", r"gpt-5(?:[-.].*)?")
"""Names (lower-cased, any `vendor/` prefix removed) of OpenAI reasoning models: o1, o3-mini,
o4-mini, gpt-5, gpt-5-mini, gpt-5.1, ... Matched in full."""
REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")


def is_reasoning_model(name: str | None) -> bool:
    """Whether `name` (a model or deployment name) is one of OpenAI's reasoning models."""
    if not name:
        return False
    bare = name.strip().lower().rsplit("/", 1)[-1]
    return any(re.fullmatch(pattern, bare) for pattern in REASONING_MODEL_PATTERNS)


def optional_number(target: TargetConfig, description: str, value: Any) -> float | None:
    if value is None:
        return None
    try:
        if isinstance(value, bool):
            raise ValueError
        return float(value)
    except (TypeError, ValueError):
        raise TargetsConfigError(
            f"{target.describe()}: {description} must be a number, got {value!r}"
        ) from None


def optional_flag(target: TargetConfig, description: str, value: Any) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    raise TargetsConfigError(f"{target.describe()}: {description} must be true or false, got {value!r}")


def response_format(schema: dict[str, Any]) -> dict[str, Any]:
    """OpenAI's structured-output `response_format` for a `{"name", "schema"}` reply schema."""
    return {"type": "json_schema",
            "json_schema": {"name": schema["name"], "schema": schema["schema"], "strict": True}}


@dataclass(frozen=True)
class ChatOptions:
    """A chat-completions target's sampling keys, read and checked once when the provider is built."""

    temperature: float | None = None
    max_output_tokens: float | None = None
    reasoning_model: bool | None = None
    """The target's `reasoning_model` override; None means: recognise by name."""
    reasoning_effort: str | None = None
    structured_output: bool = True

    @classmethod
    def from_target(cls, target: TargetConfig) -> ChatOptions:
        settings = target.read(HttpChatSettings)
        effort = settings.reasoning_effort
        if effort is not None and (not isinstance(effort, str) or effort.strip().lower() not in REASONING_EFFORTS):
            raise TargetsConfigError(
                f"{target.describe()}: reasoning_effort must be one of {', '.join(REASONING_EFFORTS)}, got {effort!r}"
            )
        structured = optional_flag(target, "structured_output", settings.structured_output)
        return cls(
            temperature=optional_number(target, "temperature", settings.temperature),
            max_output_tokens=optional_number(target, "max_output_tokens", settings.max_output_tokens),
            reasoning_model=optional_flag(target, "reasoning_model", settings.reasoning_model),
            reasoning_effort=effort.strip().lower() if isinstance(effort, str) else None,
            structured_output=structured is not False,
        )

    def is_reasoning(self, *names: str | None) -> bool:
        if self.reasoning_model is not None:
            return self.reasoning_model
        return any(is_reasoning_model(name) for name in names)

    def params(self, request: ProviderRequest, *model_names: str | None) -> dict[str, Any]:
        """`temperature`, the token limit, `reasoning_effort` and `response_format` for one request.

        The request's own temperature and limit win over the target's, except that a reasoning
        model gets no temperature but the target's own.
        """
        reasoning = self.is_reasoning(*model_names)
        params: dict[str, Any] = {}
        temperature = self.temperature
        if not reasoning and request.temperature is not None:
            temperature = request.temperature
        if temperature is not None:
            params["temperature"] = temperature
        limit = request.max_output_tokens if request.max_output_tokens is not None else self.max_output_tokens
        if limit is not None:
            params["max_completion_tokens" if reasoning else "max_tokens"] = int(limit)
        if self.reasoning_effort is not None:
            params["reasoning_effort"] = self.reasoning_effort
        if request.reply_schema is not None and self.structured_output:
            params["response_format"] = response_format(request.reply_schema)
        return params
