"""The provider contract shared by targets (the agent under test) and LLM judges."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from ..models import Message, TargetResponse


@dataclass
class ProviderRequest:
    question: str
    """The user prompt (for a target, the case's question; for a judge, the rendered prompt)."""
    system_prompt: str | None = None
    messages: list[Message] = field(default_factory=list)
    """The full chat input when the caller has one (a target gets the case's input messages)."""
    model: str | None = None
    temperature: float | None = None
    max_output_tokens: int | None = None
    eval_case_id: str | None = None
    input_files: list[str] = field(default_factory=list)
    reply_schema: dict[str, Any] | None = None
    """`{"name", "schema"}`: a JSON schema the reply must follow (the judge's verdict). Providers
    that can enforce it ask for it (`response_format: json_schema`); the others ignore it, and
    the caller still validates the reply itself."""
    extra: dict[str, Any] = field(default_factory=dict)


class Provider(Protocol):
    name: str
    kind: str

    def invoke(self, request: ProviderRequest) -> TargetResponse: ...
