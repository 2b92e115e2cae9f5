"""`contains`: the answer includes a substring (AgentV's contains / contains-all / icontains).

A list value means every item must appear (AgentV's `contains-all`), or one of them with
`any: true` (`contains-any`); `case_sensitive: false` is AgentV's `icontains`. Those two switches and
the list are set by the loader from AgentV's type names only: on a plain `contains` AgentV reads neither
(and skips a list), so there they are refused (loader/evaluator_parser.py, `_check_agentv_reads`).
The score is 0 or 1, like every AgentV deterministic assertion.
"""

from __future__ import annotations

from ..models import ContainsConfig, EvaluationContext, EvaluationScore
from .base import binary


class ContainsEvaluator:
    def evaluate(self, config: ContainsConfig, context: EvaluationContext) -> EvaluationScore:
        output = context.candidate or ""
        values = [config.value] if isinstance(config.value, str) else [str(v) for v in config.value]
        suffix = "" if config.case_sensitive else " (case-insensitive)"
        haystack = output if config.case_sensitive else output.lower()
        missing = [v for v in values if (v if config.case_sensitive else v.lower()) not in haystack]
        if len(values) == 1:
            value = values[0]
            return binary(not missing, f'Output contains "{value}"{suffix}',
                          f'Output does not contain "{value}"{suffix}')
        if config.any:
            listed = ", ".join(f'"{v}"' for v in values)
            found = next((v for v in values if v not in missing), "")  # AgentV names the first value found
            return binary(len(missing) < len(values), f'Output contains "{found}"{suffix}',
                          f"Output does not contain any of: {listed}{suffix}")
        listed = ", ".join(f'"{v}"' for v in missing)
        return binary(not missing, f"Output contains all {len(values)} expected strings{suffix}",
                      f"Output missing{suffix}: {listed}")
