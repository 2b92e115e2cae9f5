"""Chat messages as the loader, targets and judges exchange them, and what a target answers."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..base.wire import content_to_text


class Message(BaseModel):
    """A chat message. `content` is text once file segments are resolved by the loader."""

    model_config = ConfigDict(extra="allow")

    role: str
    content: Any = ""

    def text(self) -> str:
        """The message as plain text, whatever shape its content had."""
        return content_to_text(self.content)


def question_text(messages: list[Message]) -> str:
    """AgentV's question: every input text part (files left out), trimmed, joined by a space."""
    parts = []
    for message in messages:
        content = message.content
        segments = content if isinstance(content, list) else [content]
        for seg in segments:
            text = content_to_text(seg, with_files=False).strip()
            if text:
                parts.append(text)
    return " ".join(parts)


PROVIDER_ERROR = "provider_error"
"""A `TargetResponse.raw` key: the target answered (the text is scored) and yet failed, so the case is
an error (AgentV's `extractProviderError`: a batch record missing for the case)."""


class TargetResponse(BaseModel):
    text: str = ""
    output_messages: list[Message] = Field(default_factory=list)
    token_usage: dict[str, Any] | None = None
    cost_usd: float | None = None
    duration_ms: int | None = None
    retries: int = 0
    raw: dict[str, Any] | None = None
