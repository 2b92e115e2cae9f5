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

from pydantic import BaseModel, ConfigDict, Field, computed_field, field_validator

from .defaults import DEFAULT_JUDGE_TIMEOUT_SECONDS as DEFAULT_JUDGE_TIMEOUT_SECONDS
from .defaults import DEFAULT_THRESHOLD as DEFAULT_THRESHOLD
from .defaults import DEFAULT_WORKERS as DEFAULT_WORKERS
from .generations import Generation
from .javascript import js_trim
from .wire import content_to_text

PASS_SCORE = 0.8
BORDERLINE_SCORE = 0.6
"""AgentV's score labels (scoreToVerdict): pass >= 0.8, borderline >= 0.6, else fail."""


def score_label(score: float) -> Literal["pass", "borderline", "fail"]:
    """AgentV's own verdict for a score, kept in results beside our gate verdict."""
    if score >= PASS_SCORE:
        return "pass"
    return "borderline" if score >= BORDERLINE_SCORE else "fail"


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


STRICT_VALUES = ConfigDict(strict=True)
"""Evaluator settings as AgentV reads them, by JavaScript's `typeof`: a number is a number and true/false a
boolean, never text that spells one (`weight: "2"`, `case_sensitive: "false"`, a `${{ VAR }}`'s value) nor a
boolean for a number (`threshold: true`). pydantic's lax mode read each as what it spells; AgentV refuses,
skips or ignores them, so the score differed. Strict mode still takes an integer for a float."""

Number = Annotated[float, Field(strict=True)]
"""A number as YAML writes one, never text or a boolean, in a model not strict as a whole (`RubricItem`,
whose `required_min_score: 6.0` is read as 6): the field-by-field form of `STRICT_VALUES`."""

Flag = Annotated[bool, Field(strict=True)]
"""`true` or `false`, never text (`required: no` is text in YAML 1.2), in a model not strict as a whole."""


class _EvaluatorBase(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True, **STRICT_VALUES)

    name: str
    weight: float = 1.0
    required: bool | float = False
    """AgentV's required gate: `true` (mark 0.8) or a mark in (0, 1]. Below it, the case scores 0."""
    # Where the config was written, for located errors.
    source_file: Path | None = Field(default=None, exclude=True)
    source_line: int | None = Field(default=None, exclude=True)

    @field_validator("required", mode="before")
    @classmethod
    def _required_mark(cls, value: Any) -> bool | float:
        """`true`, `false` or a number in (0, 1]; never a string, and never 0 (a gate nothing fails)."""
        if isinstance(value, bool):
            return value
        if isinstance(value, (int, float)) and 0 < value <= 1:
            return float(value)
        raise ValueError(f"must be true, false or a number in (0, 1], got {value!r}")

    @property
    def required_mark(self) -> float | None:
        """The score this evaluator must reach for its case to score at all; None when not required."""
        if self.required is True:
            return PASS_SCORE
        if self.required is False:
            return None
        return float(self.required)


DEFAULT_TARGET_MAX_CALLS = 50
"""AgentV's limit on a code judge's model calls per case when `target:` names none."""


class TargetAccessConfig(BaseModel):
    """A code judge's `target:` (`true`, or `{max_calls: N}`): the script may call the judge model
    through a loopback proxy, at most `max_calls` times per case."""

    model_config = ConfigDict(extra="forbid", **STRICT_VALUES)

    max_calls: int = Field(default=DEFAULT_TARGET_MAX_CALLS, ge=0, strict=True)


class CodeJudgeConfig(_EvaluatorBase):
    type: Literal["code_judge"] = "code_judge"
    generation: Generation = Field(default="2.x", exclude=True)
    """The AgentV generation its `type:` names (`code_judge` 2.x, `code-grader` 4.x): its payload and reply."""
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

    model_config = ConfigDict(extra="forbid", **STRICT_VALUES)

    script: str | list[str]
    config: dict[str, Any] | None = None
    timeout_seconds: float | None = None


class ScoreRange(BaseModel):
    """One band of a score-range rubric item: judge scores `score_range[0]..score_range[1]` mean `outcome`."""

    model_config = ConfigDict(extra="forbid")

    score_range: tuple[int, int]
    outcome: str


class RubricItem(BaseModel):
    """One rubric criterion, as AgentV 2.19 normalises it (`id` defaults to `rubric-<n>`)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    outcome: str = ""
    weight: Number = 1.0
    required: Flag = False
    required_min_score: int | None = None
    """Score-range mode: a judge score (0..10) under this forces the evaluator's verdict to fail."""
    score_ranges: list[ScoreRange] | None = None
    operator: Literal["correctness", "contradiction"] | None = None
    """AgentV 4.x: how the judge reads the outcome (a claim the answer must support, or must not contradict)."""

    @property
    def min_score(self) -> int | None:
        """The score-range mark: `required_min_score`, else 10 for a required item, else none."""
        if self.required_min_score is not None:
            return self.required_min_score
        return 10 if self.required else None


class LlmJudgeConfig(_EvaluatorBase):
    type: Literal["llm_judge"] = "llm_judge"
    generation: Generation = Field(default="2.x", exclude=True)
    """The AgentV generation its `type:` names (`llm_judge` 2.x, `llm-grader` 4.x): its prompt variables."""
    prompt: str | PromptScriptConfig | None = None
    model: str | None = None
    target: str | None = None
    config: dict[str, Any] | None = None
    rubrics: list[RubricItem] | None = None
    """A rubric judge (`type: rubrics`, `rubrics:`, or a case's `rubrics:`): checklist or score-range mode."""
    temperature: float | None = Field(default=None, ge=0, le=2)
    """AgentV 4.x's per-grader sampling temperature (0..2), sent with the judge's request; None: the run's."""
    # Filled by the loader: prompt text read from a file, or the executable template's argv.
    resolved_prompt_text: str | None = Field(default=None, exclude=True)
    resolved_prompt_script: list[str] | None = Field(default=None, exclude=True)
    resolved_prompt_path: Path | None = Field(default=None, exclude=True)


def _refuse_empty_string(value: str | list[str], why: str) -> None:
    if value == "" or (isinstance(value, list) and "" in value):
        raise ValueError(f"an empty string checks nothing ({why}): give the text to look for")


class ContainsConfig(_EvaluatorBase):
    type: Literal["contains"] = "contains"
    value: str | list[str]
    case_sensitive: bool = True
    any: bool = False
    """A list value passes when any item appears (AgentV's contains-any), not only all of them."""

    @field_validator("value")
    @classmethod
    def _some_value(cls, value: str | list[str]) -> str | list[str]:
        """An empty list checks nothing: `contains-all: []` would pass every answer (a wrong pass)
        and `contains-any: []` fail every one, so it is refused where it is written. So is an empty
        string, which every answer contains (a `value: ${{ EXPECTED }}` whose variable is empty)."""
        if isinstance(value, list) and not value:
            raise ValueError("an empty list checks nothing: give at least one string")
        _refuse_empty_string(value, "every answer contains it")
        return value


class AffixConfig(_EvaluatorBase):
    """AgentV's starts-with / ends-with: the trimmed answer begins or ends with the trimmed value."""

    type: Literal["starts_with", "ends_with"]
    value: str

    @field_validator("value")
    @classmethod
    def _some_value(cls, value: str) -> str:
        """The trimmed answer starts and ends with "" (or spaces alone): a pass whatever it says."""
        _refuse_empty_string(js_trim(value), "every answer starts and ends with it")
        return value


class RegexConfig(_EvaluatorBase):
    type: Literal["regex"] = "regex"
    value: str
    flags: str | None = None

    @field_validator("value")
    @classmethod
    def _some_value(cls, value: str) -> str:
        """The empty pattern matches every answer (a `value: ${{ PATTERN }}` whose variable is empty)."""
        _refuse_empty_string(value, "every answer matches the empty pattern")
        return value


class EqualsConfig(_EvaluatorBase):
    type: Literal["equals"] = "equals"
    value: str
    trim: bool = True

    @field_validator("value", mode="before")
    @classmethod
    def _text_value(cls, value: Any) -> Any:
        """AgentV reads the value with `asString` and skips the whole evaluator (a warning) when it is not
        non-empty text: `value: 42` is never compared there, as JSON or otherwise, so it is refused here
        rather than scored (a "42.0" answer passed a check AgentV never runs)."""
        if not isinstance(value, str) or value == "":
            kinds = ((bool, "true/false"), ((int, float), "a number"), (dict, "a mapping"), (list, "a list"))
            shown = "an empty string" if value == "" else next(
                (name for kind, name in kinds if isinstance(value, kind)), "not text")
            raise ValueError(f"the value is {shown}, and AgentV skips an equals whose value is not non-empty "
                             "text (it compares no JSON): write the text the answer must be, quoted (value: '42')")
        return value


class IsJsonConfig(_EvaluatorBase):
    type: Literal["is_json"] = "is_json"


class FieldSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", **STRICT_VALUES)

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


ABSENT: Any = object()
"""What `value_at_path` gives for a dot path that leads nowhere (as opposed to an explicit null)."""


def value_at_path(value: Any, path: str) -> Any:
    """The value a dot path (`query.limit`) leads to in nested mappings, else `ABSENT`: how a
    `tool_trajectory`'s path list of `args_match` names an argument, for the evaluator comparing it and
    the loader refusing a path an item's `args` lack."""
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return ABSENT
        value = value[part]
    return value


ArgsMatch = Literal["exact", "superset", "subset", "ignore"] | list[str]
"""How a tool call's arguments are compared (AgentV's `args_match`); a list compares only those dot paths."""


class TrajectoryItem(BaseModel):
    """One expected tool call of a `tool_trajectory`; a key not listed here is an error, never ignored."""

    model_config = ConfigDict(extra="forbid", **STRICT_VALUES)

    tool: str
    args: Literal["any"] | dict[str, Any] | None = None
    args_match: ArgsMatch | None = None
    max_duration_ms: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None


class ToolTrajectoryConfig(_EvaluatorBase):
    """AgentV's `tool-trajectory`: the tools the agent called, by count, order or set (see tool_trajectory.py)."""

    type: Literal["tool_trajectory"] = "tool_trajectory"
    mode: Literal["any_order", "in_order", "exact", "subset", "superset"]
    minimums: dict[str, Annotated[int, Field(ge=0, strict=True)]] | None = None
    expected: list[TrajectoryItem] | None = None
    args_match: ArgsMatch | None = None


NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]
"""A limit: finite, since `.inf` is a budget no measurement breaks, a check that passes whatever happened."""
Count = Annotated[int, Field(ge=0, strict=True)]


class LatencyConfig(_EvaluatorBase):
    """1 when the target's `duration_ms` is at most `threshold` (ms), else 0."""

    type: Literal["latency"] = "latency"
    threshold: NonNegative


class CostConfig(_EvaluatorBase):
    """1 when the target's `cost_usd` is at most `budget` (USD), else 0."""

    type: Literal["cost"] = "cost"
    budget: NonNegative


class TokenUsageConfig(_EvaluatorBase):
    """1 when every limit given holds for the target's token usage, else 0."""

    type: Literal["token_usage"] = "token_usage"
    max_total: Count | None = None
    max_input: Count | None = None
    max_output: Count | None = None


class ExecutionMetricsConfig(_EvaluatorBase):
    """One check per limit given; the score is the share of checks that hold."""

    type: Literal["execution_metrics"] = "execution_metrics"
    max_tool_calls: Count | None = None
    max_llm_calls: Count | None = None
    max_tokens: Count | None = None
    max_cost_usd: NonNegative | None = None
    max_duration_ms: NonNegative | None = None
    target_exploration_ratio: Annotated[float, Field(ge=0, le=1)] | None = None
    exploration_tolerance: NonNegative = 0.2


class CustomAssertionConfig(_EvaluatorBase):
    """A suite's own assertion type: a script in `.agentv/assertions/` found by the loader and run as a
    code judge. Never written as `type: custom_assertion`; the loader builds it from the type's name."""

    type: Literal["custom_assertion"] = "custom_assertion"
    assertion: str
    """The type name the suite wrote (`word-count`), which names the script."""
    timeout_seconds: float | None = None
    config: dict[str, Any] | None = None
    resolved_script: list[str] | None = Field(default=None, exclude=True)


AGGREGATOR_KINDS = {
    "weighted_average": "weighted_average", "weighted": "weighted_average", "average": "weighted_average",
    "threshold": "threshold",
    "code_judge": "code_judge", "code_grader": "code_judge", "code": "code_judge",
    "llm_judge": "llm_judge", "llm_grader": "llm_judge", "llm": "llm_judge",
}
"""A composite's aggregator `type` (lower case, `-` as `_`) -> the aggregator it names."""


def aggregator_kind(aggregator: dict[str, Any] | None) -> str | None:
    """The aggregator a composite config names (weighted_average when none); None for an unknown type."""
    raw = str((aggregator or {}).get("type", "weighted_average")).replace("-", "_")  # as written: AgentV's case
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
    | FieldAccuracyConfig | CompositeConfig | AffixConfig | ToolTrajectoryConfig | LatencyConfig | CostConfig
    | TokenUsageConfig | ExecutionMetricsConfig | CustomAssertionConfig,
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


# ---------------------------------------------------------------- the execution block


TrialStrategy = Literal["pass_at_k", "mean", "confidence_interval"]


class TrialsConfig(BaseModel):
    """AgentV's `execution.trials`: run target + evaluators up to `count` times, then aggregate."""

    model_config = ConfigDict(extra="forbid", **STRICT_VALUES)

    count: int = Field(ge=1, le=100, strict=True)
    strategy: TrialStrategy = "pass_at_k"
    cost_limit_usd: Annotated[float, Field(ge=0)] | None = None
    """Summed `cost_usd` of the trials so far; reaching it starts no further trial (`cost_limited`)."""


HOOK_NAMES = ("before_all", "before_each", "after_each", "after_all")
SETUP_HOOK_TIMEOUT_MS = 60_000
TEARDOWN_HOOK_TIMEOUT_MS = 30_000
"""AgentV's defaults: 60 s for a `before_*` hook, 30 s for an `after_*` one."""


class HookConfig(BaseModel):
    """One workspace lifecycle hook: a command (argv, resolved by the loader), its timeout and folder."""

    model_config = ConfigDict(extra="forbid")

    name: str
    argv: list[str]
    timeout_ms: int
    cwd: Path | None = None
    source_file: Path
    source_line: int


class WorkspaceConfig(BaseModel):
    """A suite's `workspace:` as agentv-gate runs it: lifecycle hooks (a test's own replace the suite's)."""

    model_config = ConfigDict(extra="forbid")

    hooks: dict[str, HookConfig] = Field(default_factory=dict)
    template: Path | None = None
    """`template:`, resolved: a folder copied into a fresh workspace the suite's cases, hooks and cli
    targets run in (execution/workspace_copy.py)."""


class SuiteExecution(BaseModel):
    """The suite-wide half of `execution:`: what stops starting cases, and whether the cache is used."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    total_budget_usd: float | None = None
    fail_on_error: bool = False
    cache: bool = True
    workers: int | None = None
    """AgentV 4.x's `execution.workers`: at most this many of the suite's cases run at once (None: no cap)."""


# ---------------------------------------------------------------- eval cases


class EvalCase(BaseModel):
    """One test case, normalised across every generation of the eval-file format."""

    model_config = ConfigDict(extra="allow")

    id: str
    source_file: Path
    source_line: int = 1
    suite: str = Field(description="The eval file's path relative to the repo root, as reports name it.")
    suite_file: Path | None = None
    """The eval file, when the case is written in a case file it includes (`- file://cases.yaml`)."""
    case_file: str | None = None
    """That case file, relative to the repo root as `suite` is, for reports to point at."""
    dataset: str | None = None
    """The suite's `dataset:`, else its file name without `.yaml` (AgentV's name for the suite)."""
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
    target_line: int | None = None
    """Where `target:` is written (the test, its `execution`, or the suite), for a located unknown-target error."""
    conversation_id: str | None = None
    metadata: dict[str, Any] | None = None
    trials: TrialsConfig | None = None
    """`execution.trials` of the test, else of the suite; None: one run."""
    targets: list[str] | None = None
    """`execution.targets` (a matrix: one row per target); `target_line` then points at it."""
    suite_execution: SuiteExecution = Field(default_factory=SuiteExecution)
    workspace: WorkspaceConfig | None = None
    cost_limits: list[tuple[str, Path, int]] = Field(default_factory=list)
    """Each cost limit the case runs under (`total_budget_usd`, `cost_limit_usd`) as (key, file, line):
    the preflight refuses one that no target of its cases reports a cost to."""
    generation: Generation = Field(default="2.x", exclude=True)
    """The AgentV generation its file's (or its own) forms say it was written for: its default pass mark."""
    suite_tags: list[str] = Field(default_factory=list, exclude=True)
    """The suite's `tags`, which `--tag` / `--exclude-tag` select suites by (AgentV 4.x); they judge nothing."""


# ---------------------------------------------------------------- what a target answers


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


# ---------------------------------------------------------------- scores and results


ScoreVerdict = Literal["pass", "borderline", "fail", "skip"]
"""AgentV's per-evaluator verdict: from the score (`score_label`), unless the evaluator says otherwise."""


class EvaluationScore(BaseModel):
    """What one evaluator says of one answer."""

    score: float
    verdict: ScoreVerdict | None = None
    """Set when the score alone does not decide it: `fail` for a rubric whose required item was not
    met (the score stays as computed), `skip` for a judge whose reply never parsed (left out of the
    case's weighted mean). None: the verdict is the score's label."""
    details: dict[str, Any] | None = None
    """Structured detail for reports (a rubric judge's `checks` and raw scores)."""
    hits: list[str] = Field(default_factory=list)
    misses: list[str] = Field(default_factory=list)
    reasoning: str | None = None
    evaluator_raw_request: dict[str, Any] | None = None
    retries: int = 0
    error: str | None = None
    """Set when the evaluator could not judge (judge crashed, timed out, replied garbage)."""
    children: list[EvaluatorResult] | None = None
    """A composite's member results, for `EvaluatorResult.evaluator_results`."""
    unchecked: list[str] = Field(default_factory=list, exclude=True)
    """What the evaluator could not check (a metric the target did not report, no expected data to
    compare with), each a miss of the score: such a 0 says nothing of the answer, so `negate` keeps it."""


class EvaluatorResult(BaseModel):
    name: str
    type: str
    score: float
    weight: float = 1.0
    verdict: ScoreVerdict | None = None
    """AgentV's verdict: pass >= 0.8, borderline >= 0.6, else fail; or skip (left out of the mean)."""
    required: float | None = None
    """The mark a required evaluator had to reach; absent when it was not required."""
    hits: list[str] = Field(default_factory=list)
    misses: list[str] = Field(default_factory=list)
    reasoning: str | None = None
    evaluator_raw_request: dict[str, Any] | None = None
    retries: int = 0
    error: str | None = None
    details: dict[str, Any] | None = None
    duration_ms: int | None = None
    evaluator_results: list[EvaluatorResult] | None = None
    """Children, for a composite evaluator."""

    def score_row(self) -> dict[str, Any]:
        """This result as one entry of AgentV 2.19's `scores[]` (its type spelled as 2.19 spells it)."""
        row: dict[str, Any] = {
            "name": self.name, "type": self.type.replace("_", "-"), "score": self.score, "weight": self.weight,
            "verdict": self.verdict or score_label(self.score), "hits": self.hits, "misses": self.misses,
            "reasoning": self.reasoning, "details": self.details, "duration_ms": self.duration_ms,
        }
        if self.required is not None:
            row["required"] = self.required
        if self.error:
            row["error"] = self.error
        if self.evaluator_results:
            row["scores"] = [child.score_row() for child in self.evaluator_results]
        return {k: v for k, v in row.items() if v is not None}


EvaluationScore.model_rebuild()


def check_lines(scores: list[dict[str, Any]]) -> list[str]:
    """`quality: ✗ [why] Explains the denial (required): no reason given`, one per rubric item of
    each `scores[]` entry (composite members included); ✓ met, ✗ not met, ? not assessed. Only an
    LLM judge's details hold rubric checks: a code judge's are whatever its script printed."""
    lines: list[str] = []
    for entry in scores:
        rubric = entry.get("type") in ("llm-judge", "llm_judge") and isinstance(entry.get("details"), dict)
        for row in (entry["details"].get("checks") or [] if rubric else []):
            if not isinstance(row, dict):
                continue
            if row.get("reported") is False:
                mark, judged = "?", ": not assessed by the judge"
            elif "score" in row:
                band = f", {row['band']}" if row.get("band") else ""
                minimum = f", min {row['required_min_score']}" if row.get("required_min_score") is not None else ""
                met = row.get("met", True) and row["score"] / 10 >= PASS_SCORE
                mark, judged = ("✓" if met else "✗"), f" {row['score']}/10{band}{minimum}"
                judged += f": {row['reasoning']}" if row.get("reasoning") else ""
            else:
                mark = "✓" if row.get("satisfied") else "✗"
                judged = f": {row['reasoning']}" if row.get("reasoning") else ""
            required = " (required)" if row.get("required") and "score" not in row else ""
            lines.append(f"{entry.get('name')}: {mark} [{row.get('id')}] {row.get('outcome') or ''}{required}{judged}")
        lines += check_lines(entry.get("scores") or [])
    return lines


Verdict = Literal["pass", "fail", "error"]
ExecutionStatus = Literal["ok", "quality_failure", "execution_error"]


def utc_now_iso() -> str:
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


class CaseResult(BaseModel):
    """One row of results JSONL; everything a reporter needs, so none re-reads an eval file."""

    eval_id: str
    suite: str
    file: str
    line: int
    dataset: str | None = None
    """AgentV's suite name: the suite's `dataset:`, else its file name without `.yaml`; JUnit names suites by it."""
    case_file: str | None = None
    """The case file the case was loaded from (`- file://...` in its suite), relative to the repo root; else None."""
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
    """With --shard: how many rows (a case on each of its targets) the whole, unsharded run has, so
    `merge` can tell a complete set of shard results from one missing a shard (or part of one)."""
    run_id: str | None = None
    run_rows: int | None = None
    """Which `run` process wrote the row, and how many rows that run set out to write: a run killed
    outright (SIGKILL, a lost runner) leaves fewer, and `merge` and `compare` then know the file is
    not the whole run."""
    case_digest: str | None = None
    """Which version of the case, under which threshold and trials, the row judged (see
    `commands._select.run_digest`): a rerun carries the row over only while that is unchanged."""
    cache_hits: int | None = None
    """Model calls of this case (target and judges) answered from the response cache; absent when none."""
    # AgentV 2.19's names, beside the seed-004 ones, so tools written for AgentV's results read ours.
    conversation_id: str | None = None
    input: list[dict[str, Any]] | None = None
    """The case's input messages, as sent to the target."""
    criteria: str | None = None
    """The case's `criteria` (2.x: `expected_outcome`), so a reviewer of report.html sees what was asked."""
    expected_output: list[dict[str, Any]] | None = None
    """The case's expected output messages (`expected_output` / `expected_messages`), when it has any."""
    scores: list[dict[str, Any]] | None = None
    """One entry per evaluator (`EvaluatorResult.score_row`): name, type, score, weight, verdict, ..."""
    token_usage: dict[str, Any] | None = None
    cost_usd: float | None = None
    judge_usage: dict[str, dict[str, Any]] | None = None
    """Per judge target, what this case's LLM judges used: {input, output, cost_usd}, each null when the
    judge's provider reported nothing (never 0); absent when no LLM judge was called."""
    commit: str | None = None
    """The commit the run judged (`GITHUB_SHA`, else the checkout's HEAD), so a comparison can say
    which commit its base results are of."""
    trace: dict[str, Any] | None = None
    """The trace summary of the answer's messages: event_count, tool_names, tool_calls_by_name, ..."""
    trials: list[dict[str, Any]] | None = None
    """With `execution.trials`: every trial run (attempt, score, verdict, scores, error, cost_usd,
    execution_status, duration_ms), in order."""
    aggregation: dict[str, Any] | None = None
    """How the trials made the row's score (AgentV's: strategy, and its figures)."""
    cost_limited: bool | None = None
    """True when the trials' summed cost reached `cost_limit_usd` before `count` trials ran."""
    budget_exceeded: bool | None = None
    """True on a row not run because its suite's `total_budget_usd` was spent."""
    failure_reason_code: str | None = None
    """Why a row was not run (`budget_exceeded`, `error_threshold_exceeded`), as AgentV names it."""
    quarantined: str | None = None
    """The reason the gate's quarantine list (`.agentv/gate.yaml`) gives for this case, while its entry
    holds: the case ran and is reported, but a failure or error of it does not fail the gate."""
    before_all_output: str | None = None
    before_each_output: str | None = None
    after_each_output: str | None = None
    """What the workspace hooks printed (stdout, then stderr) for this case."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def test_id(self) -> str:
        """AgentV 2.19's name for `eval_id`."""
        return self.eval_id

    @computed_field  # type: ignore[prop-decorator]
    @property
    def answer(self) -> str:
        """AgentV 2.19's name for `candidate_answer`."""
        return self.candidate_answer

    @computed_field  # type: ignore[prop-decorator]
    @property
    def execution_status(self) -> ExecutionStatus:
        """`execution_error` when the case could not be scored (target, judge or harness broke);
        otherwise AgentV's `ok` (score >= 0.8) or `quality_failure`, whatever the gate's threshold."""
        if self.verdict == "error":
            return "execution_error"
        return "ok" if self.score >= PASS_SCORE else "quality_failure"

    @property
    def checks(self) -> list[str]:
        """The rubric checks of every evaluator, one readable line each, for JUnit and the job summary."""
        return check_lines(self.scores or [])

    def to_json_row(self) -> dict[str, Any]:
        """Seed 004: one evaluator keeps `evaluator_raw_request`; several keep `evaluator_results`.

        A lone surrogate (a judge's `"\\ud800"` once parsed) in a dict key nested in free-form JSON
        (a code judge's `details`) makes pydantic's JSON mode raise, which stopped the run. Every field
        is JSON-like already (strings, numbers, lists, dicts parsed from JSON), so the Python dump is
        then the row: the results file writes the surrogate as a `\\ud800` escape, as it writes one
        anywhere else (`errors="backslashreplace"`), and reading the row back gives it again.
        """
        try:
            return self.model_dump(mode="json", exclude_none=True)
        except UnicodeEncodeError:
            return self.model_dump(mode="python", exclude_none=True)


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
    workspace_path: str | None = None
    """The case's copy of its workspace template, when it has one (`workspace_path` to a code judge)."""
