"""The evaluator config schema: one pydantic class per evaluator kind, and the union the loader validates with.

Each class is what AgentV reads for its kind, in AgentV's snake_case names; the loader turns a written
mapping into one of them (loader/evaluator_parser.py) and the evaluators receive it typed.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, GetCoreSchemaHandler, TypeAdapter, field_validator, model_validator
from pydantic_core import core_schema

from ..base.defaults import MAX_REJUDGE, PASS_SCORE
from ..base.generations import Generation, judge_type_aliases
from ..base.jscompat import js_trim

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


Renamed = dict[str, tuple[str, str]]
"""A setting's other name -> (the field it fills, why it has two names)."""
Settings = dict[str, tuple[str, str]]
"""A setting -> (why it is refused or has no effect, what to write instead)."""


def apply_renames(data: Any, renamed: Renamed) -> Any:
    """A mapping with each other name of a setting read as the setting itself, unless that is written too
    (which the loader refuses where it is written: one of the two would be dropped)."""
    if not isinstance(data, dict) or not any(old in data for old in renamed):
        return data
    out = dict(data)
    for old, (new, _) in renamed.items():
        if old in out and new not in out:
            out[new] = out.pop(old)
    return out


class _EvaluatorBase(BaseModel):
    """What every evaluator kind has, and the tables that make each kind's schema data: the other
    spellings of its `type:`, the other names of its settings, and the settings AgentV's own type reads
    no such way (refused) or reads and ignores (a warning), each with its reason."""

    # defer_build (inherited by every kind, as by the sub-models below): a class builds its schema when a
    # config of its kind is first validated, so a run pays for the kinds its suites use, not for all sixteen
    # (the loader validates each entry with its kind's class, see `config_class`). Same schema, same errors.
    model_config = ConfigDict(extra="allow", populate_by_name=True, defer_build=True, **STRICT_VALUES)

    TYPE_ALIASES: ClassVar[tuple[str, ...]] = ()
    """Other spellings of the kind's `type:` (AgentV's generations and shorthands), `-` written as `_`."""
    RENAMED: ClassVar[Renamed] = {"timeout": ("timeout_seconds", "timeout is AgentV's older name")}
    """Settings with two names: the older one is read as the field (see `apply_renames`). Read so on
    every kind; loader/eval_file_keys.py says on which kinds each name is a setting at all."""
    REFUSED: ClassVar[Settings] = {}
    """Settings AgentV's own type of this name does not read: refused where written, never run as ours."""
    IGNORED: ClassVar[Settings] = {}
    """Settings AgentV reads and ignores for this kind: accepted, with a warning where written."""

    name: str
    weight: float = 1.0
    required: bool | float = False
    """AgentV's required gate: `true` (mark 0.8) or a mark in (0, 1]. Below it, the case scores 0."""
    # Where the config was written, for located errors.
    source_file: Path | None = Field(default=None, exclude=True)
    source_line: int | None = Field(default=None, exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _renamed(cls, data: Any) -> Any:
        return apply_renames(data, cls.RENAMED)

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

    model_config = ConfigDict(extra="forbid", defer_build=True, **STRICT_VALUES)

    max_calls: int = Field(default=DEFAULT_TARGET_MAX_CALLS, ge=0, strict=True)


class CodeJudgeConfig(_EvaluatorBase):
    TYPE_ALIASES = judge_type_aliases("code_judge")  # the generations' table lists them (base/generations.py)
    RENAMED = {"command": ("script", "command is AgentV 2.19's name"), **_EvaluatorBase.RENAMED}

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

    model_config = ConfigDict(extra="forbid", defer_build=True, **STRICT_VALUES)

    RENAMED: ClassVar[Renamed] = {"command": ("script", "command is AgentV 2.19's name")}
    """AgentV 2.19 names an executable prompt template's argv `command`; `script` is the older name."""

    script: str | list[str]
    config: dict[str, Any] | None = None
    timeout_seconds: float | None = None

    @model_validator(mode="before")
    @classmethod
    def _renamed(cls, data: Any) -> Any:
        return apply_renames(data, cls.RENAMED)


class ScoreRange(BaseModel):
    """One band of a score-range rubric item: judge scores `score_range[0]..score_range[1]` mean `outcome`."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    score_range: tuple[int, int]
    outcome: str


class RubricItem(BaseModel):
    """One rubric criterion, as AgentV 2.19 normalises it (`id` defaults to `rubric-<n>`)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

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


MEDIA_TYPE_ALIASES: dict[str, str] = {
    "csv": "text/csv", "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "htm": "text/html", "html": "text/html", "json": "application/json", "markdown": "text/markdown",
    "md": "text/markdown", "pdf": "application/pdf", "sql": "application/sql", "txt": "text/plain",
    "xhtml": "application/xhtml+xml", "xls": "application/vnd.ms-excel",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "xml": "application/xml",
    "yaml": "application/yaml", "yml": "application/yaml",
}
"""AgentV 4.42's short names for media types (content-preprocessor.ts): `type: xlsx` on a preprocessor matches a
file block whose `media_type` is the spreadsheet's MIME type, and the other way round."""


def media_type_of(value: str) -> str:
    """A preprocessor's `type` or a file block's `media_type` as AgentV compares them: trimmed, lower case, a
    short name read as its MIME type."""
    normalized = value.strip().lower()
    return MEDIA_TYPE_ALIASES.get(normalized, normalized)


class PreprocessorConfig(BaseModel):
    """One entry of AgentV 4.42's `preprocessors:` (a suite's or an llm-grader's): the command that turns a file
    block of the agent's answer, of this media type, into the text the grader reads."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    type: str
    command: list[str]
    """As written; its last word names a file, found by the loader (`resolved_command`)."""
    resolved_command: list[str]
    """`command` with its last word replaced by the file it names, absolute: what runs."""
    source_file: Path | None = None
    source_line: int | None = None

    @property
    def media_type(self) -> str:
        return media_type_of(self.type)


def merged_preprocessors(defaults: list[PreprocessorConfig] | None,
                         own: list[PreprocessorConfig] | None) -> list[PreprocessorConfig] | None:
    """AgentV's `parseMergedPreprocessors`: the suite's entries, each replaced in place by the grader's own entry
    for the same media type, the grader's others after them; None when neither has any."""
    if not defaults and not own:
        return None
    merged: dict[str, PreprocessorConfig] = {}
    for entry in [*(defaults or []), *(own or [])]:
        merged[entry.media_type] = entry
    return list(merged.values())


class LlmJudgeConfig(_EvaluatorBase):
    TYPE_ALIASES = judge_type_aliases("llm_judge")
    RUBRIC_TYPES: ClassVar[tuple[str, ...]] = ("rubrics", "rubric")
    """AgentV's `type: rubrics` (with `criteria:`): an llm_judge with a rubric list."""
    RENAMED = {"maxSteps": ("max_steps", "maxSteps is AgentV's camelCase spelling"), **_EvaluatorBase.RENAMED}
    IGNORED = {"evaluatorTemplate": ("AgentV accepts an LLM judge's 'evaluatorTemplate' (named in older AgentV "
                                     "documents) and never reads it: the judge's template is its 'prompt'",
                                     "the template as the judge's 'prompt'"),
               **dict.fromkeys(("max_steps", "maxSteps"), (
                   "AgentV 4.42.4 checks it (a whole number from 1 to 50) and never uses it: an llm-grader graded "
                   "by a `provider: agentv` target explores the workspace for up to 10 model calls whatever it "
                   "says, one with `target:` naming such a target is asked once, and any other grader has no tools",
                   "no max_steps"))}

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
    max_steps: int | None = Field(default=None, ge=1, le=50, strict=True, exclude=True)
    """AgentV 4.x's step budget of an agentic grader, bounded as AgentV's schema bounds it (1..50); AgentV
    4.42.4 runs its built-in agent with 10 steps whatever it says (evaluators/agent_grader.py), so it is
    declared through IGNORED (a warning where written), not as a key the grader reads."""
    rejudge_on_fail: int | None = Field(default=None, ge=0, le=MAX_REJUDGE, strict=True)
    """agentv-gate's own (AgentV accepts the key and ignores it): a failing verdict is asked again up to this
    many more times, fresh, and the majority decides (`execution/rejudge.py`); None: the suite's, else the run's."""
    preprocessors: list[PreprocessorConfig] | None = Field(default=None, exclude=True)
    """AgentV 4.42's answer preprocessors, the suite's merged with the grader's own (the loader reads both): a
    4.x grader reads the file blocks of the answer through them (evaluators/answer_files.py)."""
    # Filled by the loader: prompt text read from a file, or the executable template's argv.
    resolved_prompt_text: str | None = Field(default=None, exclude=True)
    resolved_prompt_script: list[str] | None = Field(default=None, exclude=True)
    resolved_prompt_path: Path | None = Field(default=None, exclude=True)


def _refuse_empty_string(value: str | list[str], why: str) -> None:
    if value == "" or (isinstance(value, list) and "" in value):
        raise ValueError(f"an empty string checks nothing ({why}): give the text to look for")


class ContainsConfig(_EvaluatorBase):
    VARIANTS: ClassVar[dict[str, dict[str, bool]]] = {
        "contains_all": {"any": False},
        "contains_any": {"any": True},
        "icontains": {"case_sensitive": False},
        "icontains_all": {"case_sensitive": False},
        "icontains_any": {"case_sensitive": False, "any": True},
    }
    """AgentV 3+ assertion names that are `contains` with settings."""
    REFUSED = {"case_sensitive": ("AgentV's contains reads no 'case_sensitive' (it stays case-sensitive there)",
                                  "type: icontains, or no 'case_sensitive'"),
               "any": ("AgentV's contains reads no 'any' (it stays one value there)", "type: contains-any, or no 'any'")}
    """On `type: contains` itself: the variants' settings, which AgentV's contains ignores."""

    type: Literal["contains"] = "contains"
    value: str | list[str]
    case_sensitive: bool = True
    any: bool = False
    """A list value passes when any item appears (AgentV's contains-any), not only all of them."""

    @property
    def reported_type(self) -> str:
        """The type AgentV 4.42 reports (`contains-any`, `icontains-all`, ...): the settings and the value's shape
        say which variant was written, since `contains`/`icontains` read one value and the others a list."""
        prefix = "contains" if self.case_sensitive else "icontains"
        if not isinstance(self.value, list):
            return prefix
        return f"{prefix}_{'any' if self.any else 'all'}"

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
    TYPE_ALIASES = ("match",)

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
    TYPE_ALIASES = ("equal", "exact_match")

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
    TYPE_ALIASES = ("json", "is_valid_json")

    type: Literal["is_json"] = "is_json"


class SkillTriggerConfig(_EvaluatorBase):
    """AgentV 4.x's `skill-trigger`: whether the agent invoked the skill `skill` (a `Skill` call naming it, a
    `Read` of a file under `skills/<skill>/`, or a tool's output naming such a file); `should_trigger: false`
    passes when it did not."""

    NAMED_BY: ClassVar[str] = "skill"
    """The setting an unnamed one is named by (4.42: `skill-trigger-<skill>`)."""

    type: Literal["skill_trigger"] = "skill_trigger"
    skill: Annotated[str, Field(min_length=1)]
    should_trigger: bool = True


class FieldSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True, **STRICT_VALUES)

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

    model_config = ConfigDict(extra="forbid", defer_build=True, **STRICT_VALUES)

    IGNORED: ClassVar[Settings] = {
        key: (f"AgentV 2.19 reads no call's {key}", f"args: {{...}}, or no '{key}'") for key in ("input", "output")}
    """Keys of an expected call AgentV 2.19 parses past (a call's input and output are compared by no mode)."""

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
    generation: Generation = Field(default="2.x", exclude=True)
    """4.x in a file read with AgentV 4.x's meaning or in an `assertions:` list (only 3.0+ reads that key): an
    AgentV module is then sent 4.42's code-grader payload."""
    timeout_seconds: float | None = None
    config: dict[str, Any] | None = None
    resolved_script: list[str] | None = Field(default=None, exclude=True)

    @property
    def reported_type(self) -> str:
        """The type a result row gives it: 4.42 writes the assertion's own type name (`word-count`), 2.19
        `custom-assertion`."""
        return self.assertion if self.generation == "4.x" else self.type


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
    MEMBER_LISTS: ClassVar[tuple[str, ...]] = ("assertions", "evaluators", "assert")
    """Where a composite lists its members, in the order they are read (`assertions`: AgentV 4.x)."""

    type: Literal["composite"] = "composite"
    evaluators: list[EvaluatorConfig]
    aggregator: dict[str, Any] | None = None
    generation: Generation = Field(default="2.x", exclude=True)
    """The AgentV its file is read as (both name it `composite`): how its threshold aggregator lists its count."""
    # Filled by the loader for a code_judge aggregator, as for a code_judge's own script.
    resolved_aggregator_script: list[str] | None = Field(default=None, exclude=True)
    resolved_aggregator_cwd: Path | None = Field(default=None, exclude=True)


EvaluatorConfig = Annotated[
    CodeJudgeConfig | LlmJudgeConfig | ContainsConfig | RegexConfig | EqualsConfig | IsJsonConfig
    | FieldAccuracyConfig | CompositeConfig | AffixConfig | ToolTrajectoryConfig | LatencyConfig | CostConfig
    | TokenUsageConfig | ExecutionMetricsConfig | CustomAssertionConfig | SkillTriggerConfig,
    Field(discriminator="type"),
]

EVALUATOR_CONFIG_CLASSES: tuple[type[_EvaluatorBase], ...] = get_args(get_args(EvaluatorConfig)[0])
"""Every evaluator config class, in the union's order; the evaluator registry has one evaluator per class."""

EVALUATOR_KINDS: dict[str, type[_EvaluatorBase]] = {
    kind: cls for cls in EVALUATOR_CONFIG_CLASSES for kind in get_args(cls.model_fields["type"].annotation)
}
"""Every `type:` an evaluator may have -> its config class ("starts_with" -> AffixConfig), read off the
union above, so a new config class is a new kind with no list to edit."""


def config_class(kind: object) -> type[_EvaluatorBase] | None:
    """The config class a `type:` (already normalised) names, None for any other value: the class the loader
    validates the entry with, which is the member the discriminated union `EvaluatorConfig` would pick."""
    return EVALUATOR_KINDS.get(kind) if isinstance(kind, str) else None


@functools.cache
def _configs_adapter() -> TypeAdapter[list[EvaluatorConfig]]:
    """`list[EvaluatorConfig]` validated as pydantic validates it, built on first use (every config class)."""
    return TypeAdapter(list[EvaluatorConfig])


def _validated_configs(value: Any) -> list[EvaluatorConfig]:
    if isinstance(value, list) and all(isinstance(item, EVALUATOR_CONFIG_CLASSES) for item in value):
        return list(value)  # configs the loader validated: kept as they are, as pydantic keeps a model instance
    return _configs_adapter().validate_python(value)


def _dumped_configs(value: list[EvaluatorConfig], info: core_schema.SerializationInfo) -> list[Any]:
    return [item.model_dump(mode=info.mode, by_alias=info.by_alias, exclude_unset=info.exclude_unset,
                            exclude_defaults=info.exclude_defaults, exclude_none=info.exclude_none,
                            round_trip=info.round_trip) for item in value]


class _ConfigList:
    """A field holding evaluator configs (`EvalCase.evaluators`, `Turn.evaluators`) that is checked
    without building the schema of every config class: a list of configs is kept as it is (each was
    validated by its own class when loaded), anything else is validated as `list[EvaluatorConfig]`,
    and each config is dumped by its own class, as the union's serializer dumps it."""

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(
            _validated_configs,
            serialization=core_schema.plain_serializer_function_ser_schema(_dumped_configs, info_arg=True))


ConfigList = Annotated[list[EvaluatorConfig], _ConfigList()]
"""`list[EvaluatorConfig]` for a model's field, checked as `_ConfigList` says (the same type to mypy)."""
