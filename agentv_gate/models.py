"""The data every stage shares: eval cases in, evaluator configs, scores and case results out.

One module so that the loader, evaluators, orchestrator and reporters agree on a single
vocabulary. Field names follow AgentV's snake_case wire names so that results round-trip
into AgentV tooling unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from .wire import content_to_text

DEFAULT_THRESHOLD = 0.5
"""AgentV's gate: its JUnit writer fails a case scoring below 0.5 unless told otherwise."""

PASS_SCORE = 0.8
BORDERLINE_SCORE = 0.6
"""AgentV's score labels (scoreToVerdict): pass >= 0.8, borderline >= 0.6, else fail."""


def score_label(score: float) -> str:
    """AgentV's own verdict for a score, kept in results beside our gate verdict."""
    if score >= PASS_SCORE:
        return "pass"
    return "borderline" if score >= BORDERLINE_SCORE else "fail"

DEFAULT_JUDGE_TIMEOUT_SECONDS = 120.0
"""AgentV 2.x runs code judges under its agent timeout, `--agent-timeout` (default 120 s)."""

DEFAULT_WORKERS = 8
"""Cases are I/O-bound (HTTP calls, judge subprocesses), so more workers than cores pays."""


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



# ---------------------------------------------------------------- evaluator configs


class _EvaluatorBase(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    name: str
    weight: float = 1.0
    # Where the config was written, for located errors.
    source_file: Path | None = Field(default=None, exclude=True)
    source_line: int | None = Field(default=None, exclude=True)


DEFAULT_TARGET_MAX_CALLS = 50
"""AgentV's limit on a code judge's model calls per case when `target:` names none."""


class TargetAccessConfig(BaseModel):
    """A code judge's `target:` (`true`, or `{max_calls: N}`): the script may call the judge model
    through a loopback proxy, at most `max_calls` times per case."""

    model_config = ConfigDict(extra="forbid")

    max_calls: int = Field(default=DEFAULT_TARGET_MAX_CALLS, ge=0, strict=True)


class CodeJudgeConfig(_EvaluatorBase):
    type: Literal["code_judge"] = "code_judge"
    script: str | list[str]
    cwd: str | None = None
    timeout_seconds: float | None = None
    config: dict[str, Any] | None = None
    target: TargetAccessConfig | None = None
    """Model access for the script (None: none), as AgentV's code-judge `target:`."""
    # Filled by the loader: the argv with the script path made absolute, and the working folder.
    resolved_script: list[str] | None = Field(default=None, exclude=True)
    resolved_cwd: Path | None = Field(default=None, exclude=True)


class PromptScriptConfig(BaseModel):
    """An executable prompt template: run like a code judge, stdout is the prompt."""

    model_config = ConfigDict(extra="forbid")

    script: str | list[str]
    config: dict[str, Any] | None = None
    timeout_seconds: float | None = None


class LlmJudgeConfig(_EvaluatorBase):
    type: Literal["llm_judge"] = "llm_judge"
    prompt: str | PromptScriptConfig | None = None
    model: str | None = None
    target: str | None = None
    config: dict[str, Any] | None = None
    # Filled by the loader: prompt text read from a file, or the executable template's argv.
    resolved_prompt_text: str | None = Field(default=None, exclude=True)
    resolved_prompt_script: list[str] | None = Field(default=None, exclude=True)
    resolved_prompt_path: Path | None = Field(default=None, exclude=True)


class ContainsConfig(_EvaluatorBase):
    type: Literal["contains"] = "contains"
    value: str | list[str]
    case_sensitive: bool = True
    any: bool = False
    """A list value passes when any item appears (AgentV's contains-any), not only all of them."""


class AffixConfig(_EvaluatorBase):
    """AgentV's starts-with / ends-with: the trimmed answer begins or ends with the trimmed value."""

    type: Literal["starts_with", "ends_with"]
    value: str


class RegexConfig(_EvaluatorBase):
    type: Literal["regex"] = "regex"
    value: str
    flags: str | None = None


class EqualsConfig(_EvaluatorBase):
    type: Literal["equals"] = "equals"
    value: Any
    trim: bool = True


class IsJsonConfig(_EvaluatorBase):
    type: Literal["is_json"] = "is_json"


class FieldSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str
    match: Literal["exact", "numeric_tolerance", "date"] = "exact"
    required: bool = True
    weight: float = 1.0
    tolerance: float | None = None
    relative: bool = False
    formats: list[str] | None = None


class FieldAccuracyConfig(_EvaluatorBase):
    type: Literal["field_accuracy"] = "field_accuracy"
    fields: list[FieldSpec]
    aggregation: Literal["weighted_average", "all_or_nothing"] = "weighted_average"


AGGREGATOR_KINDS = {
    "weighted_average": "weighted_average", "weighted": "weighted_average", "average": "weighted_average",
    "threshold": "threshold",
    "code_judge": "code_judge", "code_grader": "code_judge", "code": "code_judge",
    "llm_judge": "llm_judge", "llm_grader": "llm_judge", "llm": "llm_judge",
}
"""A composite's aggregator `type` (lower case, `-` as `_`) -> the aggregator it names."""


def aggregator_kind(aggregator: dict[str, Any] | None) -> str | None:
    """The aggregator a composite config names (weighted_average when none); None for an unknown type."""
    raw = str((aggregator or {}).get("type", "weighted_average")).strip().lower().replace("-", "_")
    return AGGREGATOR_KINDS.get(raw)


class CompositeConfig(_EvaluatorBase):
    type: Literal["composite"] = "composite"
    evaluators: list[EvaluatorConfig]
    aggregator: dict[str, Any] | None = None
    # Filled by the loader for a code_judge aggregator, as for a code_judge's own script.
    resolved_aggregator_script: list[str] | None = Field(default=None, exclude=True)
    resolved_aggregator_cwd: Path | None = Field(default=None, exclude=True)


EvaluatorConfig = Annotated[
    CodeJudgeConfig | LlmJudgeConfig | ContainsConfig | RegexConfig | EqualsConfig | IsJsonConfig
    | FieldAccuracyConfig | CompositeConfig | AffixConfig,
    Field(discriminator="type"),
]

EVALUATOR_CONFIG_CLASSES: tuple[type[_EvaluatorBase], ...] = get_args(get_args(EvaluatorConfig)[0])
"""Every evaluator config class, in the union's order; the evaluator registry has one evaluator per class."""

EVALUATOR_KINDS: dict[str, type[_EvaluatorBase]] = {
    kind: cls for cls in EVALUATOR_CONFIG_CLASSES for kind in get_args(cls.model_fields["type"].annotation)
}
"""Every `type:` an evaluator may have -> its config class ("starts_with" -> AffixConfig), read off the
union above, so a new config class is a new kind with no list to edit."""

CompositeConfig.model_rebuild()


# ---------------------------------------------------------------- eval cases


class EvalCase(BaseModel):
    """One test case, normalised across every generation of the eval-file format."""

    model_config = ConfigDict(extra="allow")

    id: str
    source_file: Path
    source_line: int = 1
    suite: str = Field(description="The eval file's path relative to the repo root, as reports name it.")
    question: str = ""
    input_messages: list[Message] = Field(default_factory=list)
    expected_outcome: str = ""
    expected_messages: list[Message] = Field(default_factory=list)
    reference_answer: str = ""
    guideline_files: list[str] = Field(default_factory=list)
    input_files: list[str] = Field(default_factory=list)
    evaluators: list[EvaluatorConfig] = Field(default_factory=list)
    threshold: float | None = None
    target: str | None = None
    conversation_id: str | None = None
    metadata: dict[str, Any] | None = None


# ---------------------------------------------------------------- what a target answers


class TargetResponse(BaseModel):
    text: str = ""
    output_messages: list[Message] = Field(default_factory=list)
    token_usage: dict[str, Any] | None = None
    cost_usd: float | None = None
    duration_ms: int | None = None
    retries: int = 0
    raw: dict[str, Any] | None = None


# ---------------------------------------------------------------- scores and results


class EvaluationScore(BaseModel):
    """What one evaluator says of one answer."""

    score: float
    hits: list[str] = Field(default_factory=list)
    misses: list[str] = Field(default_factory=list)
    expected_aspect_count: int = 0
    reasoning: str | None = None
    raw_aspects: list[str] | None = None
    evaluator_raw_request: dict[str, Any] | None = None
    retries: int = 0
    error: str | None = None
    """Set when the evaluator could not judge (judge crashed, timed out, replied garbage)."""
    children: list[EvaluatorResult] | None = None
    """A composite's member results, for `EvaluatorResult.evaluator_results`."""


class EvaluatorResult(BaseModel):
    name: str
    type: str
    score: float
    weight: float = 1.0
    hits: list[str] = Field(default_factory=list)
    misses: list[str] = Field(default_factory=list)
    reasoning: str | None = None
    evaluator_raw_request: dict[str, Any] | None = None
    retries: int = 0
    error: str | None = None
    evaluator_results: list[EvaluatorResult] | None = None
    """Children, for a composite evaluator."""


EvaluationScore.model_rebuild()


Verdict = Literal["pass", "fail", "error"]


def utc_now_iso() -> str:
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


class CaseResult(BaseModel):
    """One row of results JSONL; everything a reporter needs, so none re-reads an eval file."""

    eval_id: str
    suite: str
    file: str
    line: int
    target: str = ""
    score: float = 0.0
    threshold: float = DEFAULT_THRESHOLD
    verdict: Verdict = "fail"
    hits: list[str] = Field(default_factory=list)
    misses: list[str] = Field(default_factory=list)
    reasoning: str | None = None
    candidate_answer: str = ""
    evaluator_results: list[EvaluatorResult] | None = None
    evaluator_raw_request: dict[str, Any] | None = None
    grader_raw_request: dict[str, Any] | None = None
    error: str | None = None
    duration_ms: int = 0
    retries: int = 0
    timestamp: str = Field(default_factory=utc_now_iso)
    shard: str | None = None
    shard_total: int | None = None
    """With --shard: how many cases the whole, unsharded run has, so `merge` can tell a complete
    set of shard results from one missing a shard (or part of one)."""
    cache_hits: int | None = None
    """Model calls of this case (target and judges) answered from the response cache; absent when none."""

    def to_json_row(self) -> dict[str, Any]:
        """Seed 004: one evaluator keeps `evaluator_raw_request`; several keep `evaluator_results`."""
        return self.model_dump(mode="json", exclude_none=True)


@dataclass
class EvaluationContext:
    """Everything one evaluator sees for one case: plain data, so the judge protocol can read it
    without importing the evaluators that are built on it."""

    eval_case: EvalCase
    candidate: str
    evaluator: EvaluatorConfig
    output_messages: list[Message] = field(default_factory=list)
    target: str = ""
    attempt: int = 0
    now: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    trace: dict[str, Any] | None = None
    token_usage: dict[str, Any] | None = None
    cost_usd: float | None = None
    duration_ms: int | None = None
    judge_model: str | None = None
