"""Tokens and dollars: "not reported" stays None through every sum, and prices apply only where no cost was reported."""

from __future__ import annotations

import pytest

from agentv_gate.errors import TargetsConfigError
from agentv_gate.models import TargetResponse
from agentv_gate.targets.base import ProviderRequest
from agentv_gate.targets.registry import Priced, build_capped
from agentv_gate.targets.usage import Prices, Usage, summed
from tests.helpers.targets import target


def test_a_sum_keeps_not_reported_apart_from_zero_and_counts_who_reported() -> None:
    silent = Usage.reported(None, None)
    assert (silent.input, silent.output, silent.cost_usd) == (None, None, None)
    total = summed([silent, Usage.reported({"input": 10, "output": 2}, 0.01), Usage.reported({"input": 5}, None)])
    assert (total.input, total.output, total.tokens) == (15, 2, 17)
    assert total.cost_usd == pytest.approx(0.01)
    assert (total.rows, total.rows_with_tokens, total.rows_with_cost) == (3, 2, 1)
    assert summed([silent, silent]).as_json() == {"input": None, "output": None, "cost_usd": None}


@pytest.mark.parametrize("bad", [{"input": -1}, {"input": 1.5}, {"input": True}, {"input": "12"}, {"input": float("nan")}])
def test_a_count_that_is_no_token_count_is_not_reported(bad: dict[str, object]) -> None:
    assert Usage.reported(bad).input is None


class _Answers:
    name, kind = "t", "mock"

    def __init__(self, response: TargetResponse) -> None:
        self.response = response

    def invoke(self, request: ProviderRequest) -> TargetResponse:
        return self.response


def test_prices_fill_in_a_missing_cost_and_never_replace_a_reported_one() -> None:
    prices = Prices(per_1k_input=2.0, per_1k_output=4.0)
    tokens = {"input": 500, "output": 250}
    priced = Priced(_Answers(TargetResponse(text="x", token_usage=tokens)), prices)
    assert priced.invoke(ProviderRequest(question="q")).cost_usd == pytest.approx(2.0)
    reported = Priced(_Answers(TargetResponse(text="x", token_usage=tokens, cost_usd=0.3)), prices)
    assert reported.invoke(ProviderRequest(question="q")).cost_usd == 0.3
    silent = Priced(_Answers(TargetResponse(text="x")), prices)
    assert silent.invoke(ProviderRequest(question="q")).cost_usd is None  # no tokens: no made-up $0


def test_a_price_that_is_no_number_is_refused_naming_the_target() -> None:
    config = target(provider="mock", response="x", price_per_1k_input="cheap")
    with pytest.raises(TargetsConfigError, match=r"mock target 't': price_per_1k_input is 'cheap', expected a number"):
        build_capped(config)
