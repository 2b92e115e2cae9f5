"""A suite's own assertion type: `.agentv/assertions/<type>.ts` (or `.js`, `.py`, an executable), run as a code judge.

As AgentV 2.19 runs a `<type>.ts`/`.js` module (`bun run <module>`), agentv-gate runs the script with
the code-judge wire protocol (the payload on stdin, `{score, hits, misses, reasoning}` on stdout), so an
assertion is written exactly like a code judge and breaks exactly like one: a crash, a hang or an
unusable reply scores 0 and marks the case an error. The loader found the script (see
`loader/evaluator_parser.py`); any other key of the assertion reaches it as `config`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..judging.payload import build_judge_payload
from ..models import DEFAULT_JUDGE_TIMEOUT_SECONDS, CustomAssertionConfig, EvaluationContext, EvaluationScore
from .code_judge import judge_config, run_judge_script


class CustomAssertionEvaluator:
    def __init__(self, default_timeout_seconds: float = DEFAULT_JUDGE_TIMEOUT_SECONDS) -> None:
        self.default_timeout_seconds = default_timeout_seconds

    def evaluate(self, config: CustomAssertionConfig, context: EvaluationContext) -> EvaluationScore:
        argv = list(config.resolved_script or [])
        if not argv:  # a config built in code, not by the loader
            message = f"custom assertion '{config.assertion}' has no script (the loader finds it)"
            return EvaluationScore(score=0.0, misses=[message], reasoning=message,
                                   error=message)
        cwd = Path(config.source_file or context.eval_case.source_file).resolve().parent
        timeout = config.timeout_seconds or self.default_timeout_seconds
        raw: dict[str, Any] = {"assertion": config.assertion, "script": argv, "cwd": str(cwd),
                               "timeout_seconds": timeout}
        stdin = json.dumps(build_judge_payload(context, judge_config(config)), indent=2, ensure_ascii=False,
                           default=str)
        what = f"assertion '{config.assertion}' ({Path(argv[-1]).name})"
        return run_judge_script(argv, stdin, timeout, cwd, what, raw)
