"""What one evaluator sees of one case: plain data, below the judge protocol and the evaluators."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from ..case_run import CaseRun
from .cases import EvalCase
from .config import EvaluatorConfig
from .messages import Message


@dataclass
class EvaluationContext:
    """Everything one evaluator sees for one case: plain data, so the judge protocol can read it
    without importing the evaluators that are built on it."""

    eval_case: EvalCase
    candidate: str
    evaluator: EvaluatorConfig
    output_messages: list[Message] = field(default_factory=list)
    target: str = ""
    target_provider: str = ""
    """The provider kind that answered (`openai`, `cli`, ...): a 4.x grader's `trace.metadata.provider`."""
    now: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    trace: dict[str, Any] | None = None
    token_usage: dict[str, Any] | None = None
    cost_usd: float | None = None
    duration_ms: int | None = None
    judge_model: str | None = None
    file_changes: str | None = None
    """What the target changed in the case's workspace, as a unified diff (AgentV's `fileChanges`)."""
    answer_dir: str | None = None
    """Where the answer's relative file paths are read (AgentV's content base path): the case's workspace, else
    the folder the target ran in; None: the folder agentv-gate runs in."""
    run: CaseRun = field(default_factory=CaseRun)
    """The case run being graded: every call a judge makes for it passes it on (see case_run.py)."""
