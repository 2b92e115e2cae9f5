"""The provider contract shared by targets (the agent under test) and LLM judges."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from ..case_run import CaseRun
from ..models import Message, TargetResponse


@dataclass(frozen=True)
class ProviderTool:
    """A tool a model may call in a multi-step request, as AgentV's `ProviderTool`: its name, description and
    JSON-schema `parameters` go to the model; `execute` runs a call's decoded arguments and returns what
    goes back (text as it is, anything else as its compact JSON). It never raises for a bad call: it
    returns the error as its result, as the model must read it."""

    name: str
    description: str
    parameters: dict[str, Any]
    execute: Callable[[Any], Any]


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
    role: Literal["judge", "target_proxy"] | None = None
    """Who asks: None for the agent under test (and a composite's aggregator), `judge` for an LLM judge,
    `target_proxy` for a code judge's call through its proxy. A `mock` target answers a judge from its
    judge replies."""
    attempt: int = 0
    """Which ask this is, 0-based: a target's trial, or a judge's ask again after an unusable reply. It is
    part of the cache key, so an ask again never gets the same cached reply back."""
    suite: str | None = None
    """The case's suite: a batching `cli` target answers a suite's cases from one run of its command."""
    trials: int = 1
    """How many trials the case runs: a batching target answers only a single-run case from its batch."""
    tools: list[ProviderTool] = field(default_factory=list)
    """Tools the model may call (AgentV's built-in agent grader): a provider that runs a tool loop calls
    them and asks again, up to `max_steps` model calls; the others never receive any."""
    max_steps: int = 1
    """With `tools`: the most model calls of the loop, the first one included."""
    run: CaseRun | None = None
    """The case run the call is made for: whether the cache may answer it, where its hits are counted,
    the eval file's folder. None outside a run (a provider called on its own): cache on, hits not counted."""


class Provider(Protocol):
    name: str
    kind: str

    def invoke(self, request: ProviderRequest) -> TargetResponse: ...
