"""The data every stage shares: eval cases in, evaluator configs, scores and case results out.

One vocabulary that the loader, evaluators, orchestrator and reporters agree on, in four modules:
`config` (the evaluator config schema), `cases` (an eval case and its execution settings), `messages`
(chat messages and a target's answer), `results` (scores and result rows) and `context` (what one
evaluator sees). Every public name is importable from `agentv_gate.models` itself; those of `results`
and `context` are imported on first use, so that a command building no result (`validate`, a pre-commit
hook's first step) does not pay for their models at start-up.
"""

import importlib
from typing import TYPE_CHECKING, Any

from ..base.defaults import BORDERLINE_SCORE as BORDERLINE_SCORE
from ..base.defaults import DEFAULT_JUDGE_TIMEOUT_SECONDS as DEFAULT_JUDGE_TIMEOUT_SECONDS
from ..base.defaults import DEFAULT_THRESHOLD as DEFAULT_THRESHOLD
from ..base.defaults import DEFAULT_WORKERS as DEFAULT_WORKERS
from ..base.defaults import PASS_SCORE as PASS_SCORE
from .cases import HOOK_NAMES as HOOK_NAMES
from .cases import SETUP_HOOK_TIMEOUT_MS as SETUP_HOOK_TIMEOUT_MS
from .cases import TEARDOWN_HOOK_TIMEOUT_MS as TEARDOWN_HOOK_TIMEOUT_MS
from .cases import Conversation as Conversation
from .cases import EvalCase as EvalCase
from .cases import HookConfig as HookConfig
from .cases import RepoSpec as RepoSpec
from .cases import SuiteExecution as SuiteExecution
from .cases import TrialsConfig as TrialsConfig
from .cases import TrialStrategy as TrialStrategy
from .cases import Turn as Turn
from .cases import WorkspaceConfig as WorkspaceConfig
from .config import ABSENT as ABSENT
from .config import AGGREGATOR_KINDS as AGGREGATOR_KINDS
from .config import DEFAULT_TARGET_MAX_CALLS as DEFAULT_TARGET_MAX_CALLS
from .config import EVALUATOR_CONFIG_CLASSES as EVALUATOR_CONFIG_CLASSES
from .config import EVALUATOR_KINDS as EVALUATOR_KINDS
from .config import STRICT_VALUES as STRICT_VALUES
from .config import AffixConfig as AffixConfig
from .config import ArgsMatch as ArgsMatch
from .config import CodeJudgeConfig as CodeJudgeConfig
from .config import CompositeConfig as CompositeConfig
from .config import ConfigList as ConfigList
from .config import ContainsConfig as ContainsConfig
from .config import CostConfig as CostConfig
from .config import Count as Count
from .config import CustomAssertionConfig as CustomAssertionConfig
from .config import EqualsConfig as EqualsConfig
from .config import EvaluatorConfig as EvaluatorConfig
from .config import ExecutionMetricsConfig as ExecutionMetricsConfig
from .config import FieldAccuracyConfig as FieldAccuracyConfig
from .config import FieldSpec as FieldSpec
from .config import Flag as Flag
from .config import IsJsonConfig as IsJsonConfig
from .config import LatencyConfig as LatencyConfig
from .config import LlmJudgeConfig as LlmJudgeConfig
from .config import NonNegative as NonNegative
from .config import Number as Number
from .config import PreprocessorConfig as PreprocessorConfig
from .config import PromptScriptConfig as PromptScriptConfig
from .config import RegexConfig as RegexConfig
from .config import RubricItem as RubricItem
from .config import ScoreRange as ScoreRange
from .config import SkillTriggerConfig as SkillTriggerConfig
from .config import TargetAccessConfig as TargetAccessConfig
from .config import TokenUsageConfig as TokenUsageConfig
from .config import ToolTrajectoryConfig as ToolTrajectoryConfig
from .config import TrajectoryItem as TrajectoryItem
from .config import aggregator_kind as aggregator_kind
from .config import config_class as config_class
from .config import media_type_of as media_type_of
from .config import merged_preprocessors as merged_preprocessors
from .config import value_at_path as value_at_path
from .messages import PROVIDER_ERROR as PROVIDER_ERROR
from .messages import Message as Message
from .messages import TargetResponse as TargetResponse
from .messages import question_text as question_text

if TYPE_CHECKING:
    from .context import EvaluationContext as EvaluationContext
    from .results import CaseResult as CaseResult
    from .results import EvaluationScore as EvaluationScore
    from .results import EvaluatorResult as EvaluatorResult
    from .results import ExecutionStatus as ExecutionStatus
    from .results import ScoreVerdict as ScoreVerdict
    from .results import Verdict as Verdict
    from .results import check_lines as check_lines
    from .results import score_label as score_label
    from .results import utc_now_iso as utc_now_iso

_LAZY = {
    "EvaluationContext": ".context",
    "CaseResult": ".results",
    "EvaluationScore": ".results",
    "EvaluatorResult": ".results",
    "ExecutionStatus": ".results",
    "ScoreVerdict": ".results",
    "Verdict": ".results",
    "check_lines": ".results",
    "score_label": ".results",
    "utc_now_iso": ".results",
}
"""Public names -> the module that defines them, imported when one is first asked for."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
