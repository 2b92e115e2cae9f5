"""A suite's own assertion type: `.agentv/assertions/<type>.ts` (or `.js`, `.py`, an executable), run as a code judge.

As AgentV 2.19 runs a `<type>.ts`/`.js` module (`bun run <module>`), agentv-gate runs the script with
the code-judge wire protocol (the payload on stdin, `{score, hits, misses, reasoning}` on stdout), so an
assertion is written exactly like a code judge and breaks exactly like one: a crash, a hang or an
unusable reply scores 0 and marks the case an error. The loader found the script (see
`loader/evaluator_parser.py`); any other key of the assertion reaches it as `config`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from ..base.generations import Generation
from ..loader.assertions import AGENTV_MODULE_SUFFIXES
from ..models import DEFAULT_JUDGE_TIMEOUT_SECONDS, CustomAssertionConfig, EvaluationContext, EvaluationScore
from .code_judge import CODE_WIRES, judge_config, run_judge_script


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
        # An AgentV module is sent what its AgentV sends it: 2.19 runs it as a code judge, 4.42 as a
        # code grader (the file's generation). The gate's own scripts keep the 2.x payload.
        module = Path(argv[-1]).suffix in AGENTV_MODULE_SUFFIXES
        generation: Generation = "4.x" if "4.x" in (config.generation, context.eval_case.generation) else "2.x"
        wire = CODE_WIRES[generation if module else "2.x"]
        payload = wire.payload(context, judge_config(config))
        stdin = json.dumps(payload, indent=2, ensure_ascii=False, default=str)
        what = f"assertion '{config.assertion}' ({Path(argv[-1]).name})"
        try:
            return run_judge_script(argv, stdin, timeout, cwd, what, raw, read_reply=wire.read_reply)
        finally:
            if payload.get("output_path"):  # a 4.x answer too long to inline: its temporary folder goes
                shutil.rmtree(Path(payload["output_path"]).parent, ignore_errors=True)
