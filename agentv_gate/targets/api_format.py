"""An `openai` target's `api_format` (AgentV 4.x): which OpenAI API its requests go to.

4.42 reads `chat` (chat completions, what agentv-gate's openai provider sends) and `responses` (the
Responses API); any other value makes its target fail to resolve. agentv-gate runs `chat`; `responses` would
be sent to another endpoint with another body, so it is refused as a feature not run yet, never quietly
answered through chat completions.
"""

from __future__ import annotations

from typing import Any

from ..base.key_checks import not_yet_message
from .settings import OpenAISettings

RUN_HERE = "chat"


def api_format_problem(settings: dict[str, Any], name: str) -> tuple[str, str] | None:
    """(key, message) when the target's `api_format` is one agentv-gate does not send as written; None when it
    is absent, `chat`, or still a `${{ VAR }}` (checked again once resolved)."""
    for key in OpenAISettings.spellings("api_format"):
        value = settings.get(key)
        if value is None or (isinstance(value, str) and "${{" in value):
            continue
        if value == RUN_HERE:
            return None
        if value == "responses":
            return key, f"{not_yet_message(f'{key}: responses', 'the OpenAI Responses API')} (target '{name}')"
        return key, f"'{key}' in target '{name}' must be 'chat' or 'responses', got {value!r} (as AgentV 4.42 reads it)"
    return None
