"""What model calls used and cost: tokens in and out, and dollars, with "not reported" kept apart from 0.

A provider that says nothing of its usage (a `cli` agent printing plain text, a mock) leaves every
figure None, and None stays None through every sum: a total of 0 tokens or $0.00 would claim the
call was free when nobody knows. A total over several calls adds the reported figures and counts
how many calls reported one, so a report can say "$0.41 (12 of 20 cases reported a cost)".

Dollars come from the provider when it reports them (`cost_usd`), else from the target's configured
prices (`price_per_1k_input`, `price_per_1k_output` in targets.yaml: AgentV has no price keys of its
own, its cost comes only from providers), applied to the reported tokens.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import TargetsConfigError
from ..models import EvaluatorResult

PRICE_KEYS = ("price_per_1k_input", "price_per_1k_output")
"""targets.yaml keys agentv-gate reads (no AgentV version has price keys): USD per 1,000 tokens."""

JUDGE_USAGE_KEY = "judge_usage"
"""Where an LLM judge records, in its `evaluator_raw_request`, what its calls used (summed over re-asks)."""


def _count(value: object) -> int | None:
    """A reported token count: a non-negative whole number (a JSON float such as 12.0 included)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not math.isfinite(value) or value < 0 or value != int(value):
        return None
    return int(value)


def _dollars(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


def _plus(a: int | float | None, b: int | float | None) -> Any:
    return b if a is None else a if b is None else a + b


@dataclass(frozen=True)
class Usage:
    """Tokens and dollars of one call or a sum of calls; each figure None when no call reported it."""

    input: int | None = None
    output: int | None = None
    cost_usd: float | None = None
    rows: int = 0
    """How many result rows (or calls) this adds up."""
    rows_with_tokens: int = 0
    rows_with_cost: int = 0

    @classmethod
    def reported(cls, token_usage: Mapping[str, Any] | None, cost_usd: object = None) -> Usage:
        """One row's (or call's) usage from a provider's `token_usage` ({input, output, ...}) and `cost_usd`."""
        usage = token_usage if isinstance(token_usage, Mapping) else {}
        tokens_in, tokens_out = _count(usage.get("input")), _count(usage.get("output"))
        cost = _dollars(cost_usd)
        return cls(tokens_in, tokens_out, cost, 1, int(tokens_in is not None or tokens_out is not None),
                   int(cost is not None))

    @classmethod
    def from_json(cls, data: object) -> Usage:
        """A `judge_usage` entry of a results row ({input, output, cost_usd}); anything else reports nothing."""
        if not isinstance(data, Mapping):
            return cls(rows=1)
        return cls.reported(data, data.get("cost_usd"))

    def __add__(self, other: Usage) -> Usage:
        return Usage(_plus(self.input, other.input), _plus(self.output, other.output),
                     _plus(self.cost_usd, other.cost_usd), self.rows + other.rows,
                     self.rows_with_tokens + other.rows_with_tokens, self.rows_with_cost + other.rows_with_cost)

    @property
    def tokens(self) -> int | None:
        total: int | None = _plus(self.input, self.output)
        return total

    def as_json(self) -> dict[str, Any]:
        """The results row's form: nulls kept (a reader must tell "not reported" from 0)."""
        return {"input": self.input, "output": self.output, "cost_usd": self.cost_usd}


@dataclass(slots=True)
class Tally:
    """A running `Usage` sum, added to in place: a run's totals add a row per case, and a new frozen
    `Usage` per addition cost more than the rest of the comment together."""

    input: int | None = None
    output: int | None = None
    cost_usd: float | None = None
    rows: int = 0
    rows_with_tokens: int = 0
    rows_with_cost: int = 0

    def add(self, token_usage: Mapping[str, Any] | None, cost_usd: object = None) -> None:
        self.rows += 1
        if isinstance(token_usage, Mapping):
            tokens_in, tokens_out = _count(token_usage.get("input")), _count(token_usage.get("output"))
            if tokens_in is not None:
                self.input = tokens_in + (self.input or 0)
            if tokens_out is not None:
                self.output = tokens_out + (self.output or 0)
            self.rows_with_tokens += tokens_in is not None or tokens_out is not None
        cost = _dollars(cost_usd)
        if cost is not None:
            self.cost_usd = cost + (self.cost_usd or 0.0)
            self.rows_with_cost += 1

    def usage(self) -> Usage:
        return Usage(self.input, self.output, self.cost_usd, self.rows, self.rows_with_tokens, self.rows_with_cost)


def summed(usages: Iterable[Usage]) -> Usage:
    total = Usage()
    for usage in usages:
        total = total + usage
    return total


@dataclass(frozen=True)
class Prices:
    """A target's configured USD per 1,000 input and output tokens."""

    per_1k_input: float
    per_1k_output: float

    @classmethod
    def of(cls, settings: Mapping[str, Any], where: str) -> Prices | None:
        """The target's prices, None when it sets neither; a value that is no price is a located error."""
        values = {key: settings.get(key) for key in PRICE_KEYS}
        if all(v is None or v == "" for v in values.values()):
            return None
        for key, value in values.items():
            if value is not None and _dollars(value) is None:
                raise TargetsConfigError(f"{where}: {key} is {value!r}, expected a number of US dollars >= 0 "
                                         "per 1,000 tokens (e.g. 0.0025)")
        return cls(float(values["price_per_1k_input"] or 0), float(values["price_per_1k_output"] or 0))

    def cost(self, token_usage: Mapping[str, Any] | None) -> float | None:
        """Dollars for the reported tokens; None when the call reported none (never a made-up $0)."""
        usage = Usage.reported(token_usage)
        if usage.input is None and usage.output is None:
            return None
        return (usage.input or 0) / 1000 * self.per_1k_input + (usage.output or 0) / 1000 * self.per_1k_output


def judge_usage(evaluations: Iterable[EvaluatorResult]) -> dict[str, dict[str, Any]] | None:
    """Per judge target, what the LLM judges of one case used (composite members included); None with no
    LLM judge call. A judge that reported nothing is there with null figures: it was called."""
    per_judge: dict[str, Usage] = {}

    def visit(results: Iterable[EvaluatorResult]) -> None:
        for result in results:
            raw = result.evaluator_raw_request or {}
            used, judge = raw.get(JUDGE_USAGE_KEY), raw.get("target")
            if isinstance(used, Mapping) and isinstance(judge, str):
                per_judge[judge] = per_judge.get(judge, Usage()) + Usage.from_json(used)
            visit(result.evaluator_results or [])

    visit(evaluations)
    return {name: usage.as_json() for name, usage in per_judge.items()} or None


def summed_judge_usage(rows: Iterable[Mapping[str, Any] | None]) -> dict[str, dict[str, Any]] | None:
    """Several `judge_usage` maps (a case's trials) added up per judge, nulls kept."""
    per_judge: dict[str, Usage] = {}
    for row in rows:
        for name, used in (row or {}).items():
            per_judge[name] = per_judge.get(name, Usage()) + Usage.from_json(used)
    return {name: usage.as_json() for name, usage in per_judge.items()} or None


__all__ = ["JUDGE_USAGE_KEY", "PRICE_KEYS", "Prices", "Tally", "Usage", "judge_usage", "summed", "summed_judge_usage"]
