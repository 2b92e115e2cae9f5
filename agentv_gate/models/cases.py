"""An eval case as every stage reads it, normalised across the eval-file forms, with its execution settings."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..base.generations import Generation
from ..base.trial_strategies import AGENTV_STRATEGIES
from .config import STRICT_VALUES, ConfigList, PreprocessorConfig
from .messages import Message

if TYPE_CHECKING:
    TrialStrategy = str
else:
    TrialStrategy = Literal[AGENTV_STRATEGIES]
"""The strategies an eval file may name, as the table (base/trial_strategies.py) says: refused otherwise."""


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


class RepoSpec(BaseModel):
    """One of a 4.x workspace's `repos`: `repo` (a path, `file://` URL, URL or GitHub `org/name`) cloned at `path`."""

    model_config = ConfigDict(extra="forbid")

    path: str
    repo: str
    source: str
    """What git clones: the URL as 4.42 makes it, or the local folder resolved."""
    ref: str = "HEAD"
    """`commit`, else `base_commit`, else HEAD."""
    ancestor: int = 0
    sparse: list[str] = Field(default_factory=list)
    source_file: Path
    source_line: int


class WorkspaceConfig(BaseModel):
    """A suite's `workspace:` as agentv-gate runs it: lifecycle hooks (a test's own replace the suite's)."""

    model_config = ConfigDict(extra="forbid")

    hooks: dict[str, HookConfig] = Field(default_factory=dict)
    template: Path | None = None
    """`template:`, resolved: a folder copied into a fresh workspace the suite's cases, hooks and cli
    targets run in (execution/workspace_copy.py)."""
    resets: dict[str, tuple[str, Path, int]] = Field(default_factory=dict)
    """A hook's `reset` (`fast` or `strict`) as (mode, file, line), by hook name: AgentV 4.42 resets the
    workspace to its baseline (git reset --hard, git clean) before `before_each` / `after_each` runs."""
    template_roots: tuple[Path, ...] = ()
    """The folders a template's links may resolve into (the repository root, the template itself);
    a link resolving elsewhere is refused when the copy is made."""
    isolation: Literal["shared", "per_test"] = "shared"
    """AgentV 4.42's `isolation`: `per_test` gives each case a workspace of its own (execution/hooks.py)."""
    isolation_at: tuple[Path, int] | None = None
    """Where `isolation` is written, for what is said about it."""
    repos: list[RepoSpec] = Field(default_factory=list)
    """AgentV 4.x's `repos`, cloned into the workspace before `before_all` (execution/repos.py)."""
    pooled: bool = True
    """`mode` is not `temp`: 4.42 keeps repos in a pool slot, and a hook's reset is then the workspace's own."""


class SuiteExecution(BaseModel):
    """The suite-wide half of `execution:`: what stops starting cases, and whether the cache is used."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    total_budget_usd: float | None = None
    fail_on_error: bool = False
    cache: bool = True
    workers: int | None = None
    """AgentV 4.x's `execution.workers`: at most this many of the suite's cases run at once (None: no cap)."""
    rejudge_on_fail: int | None = None
    """agentv-gate's own `execution.rejudge_on_fail` (AgentV accepts and ignores it): how many more times
    each LLM judge of the suite is asked when its verdict fails; None: `--rejudge-on-fail`, else never."""


class Turn(BaseModel):
    """One turn of a conversation test (AgentV 4.x `turns[]`): what the user says, and how the reply is judged."""

    model_config = ConfigDict(extra="forbid")

    input: str
    """The user's message as AgentV sends it: text, or other content as JSON."""
    expected_messages: list[Message] = Field(default_factory=list)
    reference_answer: str = ""
    evaluators: ConfigList = Field(default_factory=list)
    """The turn's assertions (its strings one `turn-rubrics` grader, first); none and no expected output:
    the turn scores 1."""
    default_grader: bool = False
    """No assertions, an expected output: 4.42's default grader judges the reply (and lists no grader of its own)."""
    line: int = 1


class Conversation(BaseModel):
    """`mode: conversation` with its `turns` (AgentV 4.x): each turn's reply judged, the scores aggregated."""

    model_config = ConfigDict(extra="forbid")

    turns: list[Turn]
    aggregation: Literal["mean", "min", "max"] = "mean"
    on_turn_failure: Literal["continue", "stop"] = "continue"
    window_size: int | None = None
    """Each call sees the system messages and the last `window_size` exchanges (None: the whole conversation)."""


# ---------------------------------------------------------------- eval cases


class EvalCase(BaseModel):
    """One test case, normalised across every generation of the eval-file format."""

    model_config = ConfigDict(extra="forbid")  # every field named: a misspelt one is our bug, never kept

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
    evaluators: ConfigList = Field(default_factory=list)
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
    generation_reason: str = Field(default="", exclude=True)
    """Why its file was read as that generation (loader/file_generation.py), for `-v` and results rows."""
    conversation: Conversation | None = None
    """A conversation test (AgentV 4.x `mode: conversation`): its turns replace the single call."""
    depends_on: list[str] = Field(default_factory=list)
    """AgentV 4.x's `depends_on`: ids of tests of the same file that run before it (execution/dependencies.py)."""
    on_dependency_failure: Literal["skip", "fail", "run"] = "skip"
    """What a dependency that ended in an execution error does to it: skip or fail it unrun, or run it anyway."""
    preprocessors: list[PreprocessorConfig] = Field(default_factory=list, exclude=True)
    """The suite's `preprocessors` (AgentV 4.42): the default llm-grader of a test without assertions reads the
    answer's file blocks through them."""
    files_root: Path | None = Field(default=None, exclude=True)
    """The folder an answer's file blocks are read in (the repository root; the case's workspace too); None
    when the run allows files outside the repository (`--allow-outside-root`)."""
    suite_tags: list[str] = Field(default_factory=list, exclude=True)
    """The suite's `tags`, which `--tag` / `--exclude-tag` select suites by (AgentV 4.x); they judge nothing."""
