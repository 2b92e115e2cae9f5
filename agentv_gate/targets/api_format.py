"""An `openai` target's `api_format` (AgentV 4.x): which OpenAI API its requests go to.

4.42 reads `chat` (chat completions) and `responses` (the Responses API, `openai_responses.py`); any other
value makes its target fail to resolve, so it is an error at its line here.
"""

from __future__ import annotations

from typing import Any

from .settings import OpenAISettings

FORMATS = ("chat", "responses")


def api_format_of(settings: dict[str, Any]) -> str | None:
    """The first `api_format` spelling written, as written (None when absent)."""
    for key in OpenAISettings.spellings("api_format"):
        value = settings.get(key)
        if value is not None:
            return value if isinstance(value, str) else repr(value)
    return None


def api_format_problem(settings: dict[str, Any], name: str) -> tuple[str, str] | None:
    """(key, message) when the target's `api_format` is neither `chat` nor `responses`; None when it is
    absent, one of them, or still a `${{ VAR }}` (checked again once resolved)."""
    for key in OpenAISettings.spellings("api_format"):
        value = settings.get(key)
        if value is None or (isinstance(value, str) and "${{" in value):
            continue
        if value in FORMATS:
            return None
        return key, f"'{key}' in target '{name}' must be 'chat' or 'responses', got {value!r} (as AgentV 4.42 reads it)"
    return None
