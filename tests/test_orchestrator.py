"""The orchestrator in-process: how evaluator results become a case's score and verdict, how trials
aggregate, and how the worker pool hands results over. Fast where the CLI tests are slow, and what
mutation testing of agentv_gate/orchestrator.py found no test noticing.

The agent is an in-process `Scripted` target (one reply, or one per trial, each a `TargetResponse`
or an exception to raise) or the product's `mock` target; evaluators are the real registry's.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from agentv_gate.errors import ProviderError
from agentv_gate.evaluators.registry import build_evaluator_registry
from agentv_gate.execution.hooks import WorkspaceHooks
from agentv_gate.execution.stop import FailureLimit
from agentv_gate.models import (
    CaseResult,
    ContainsConfig,
    EvalCase,
    EvaluationContext,
    EvaluationScore,
    EvaluatorConfig,
    EvaluatorResult,
    HookConfig,
    Message,
    ScoreVerdict,
    TargetResponse,
    ToolTrajectoryConfig,
    TrialsConfig,
    TrialStrategy,
    WorkspaceConfig,
)
from agentv_gate.orchestrator import (
    Orchestrator,
    RunSettings,
    _summed_usage,
    case_score,
    each_target,
    failed_requirements,
    weighted_mean,
)
from agentv_gate.targets.base import Provider, ProviderRequest
from agentv_gate.targets.registry import build_provider
from tests.helpers.targets import target

Reply = TargetResponse | BaseException


class Scripted:
    """A target answering trial N (`extra["attempt"]`) with `replies[N]` (the last one after that);
    an exception in the list is raised. Every request is kept."""

    kind = "cli"

    def __init__(self, *replies: Reply, name: str = "agent") -> None:
        self.name = name
        self.replies = list(replies)
        self.requests: list[ProviderRequest] = []

    def invoke(self, request: ProviderRequest) -> TargetResponse:
        self.requests.append(request)
        reply = self.replies[min(request.attempt, len(self.replies) - 1)]
        if isinstance(reply, BaseException):
            raise reply
        return reply


class Resolver:
    """Every case to `provider`, or `error` raised for every case."""

    def __init__(self, provider: Provider | None = None, error: Exception | None = None) -> None:
        self.provider, self.error = provider, error

    def target_for(self, case: EvalCase) -> Provider:
        if self.error is not None:
            raise self.error
        assert self.provider is not None
        return self.provider

    def target_name(self, case: EvalCase) -> str:
        return self.provider.name if self.provider is not None else case.target or "default"


def says(text: str, **data: Any) -> TargetResponse:
    return TargetResponse(text=text, **data)


def ok_case(case_id: str = "c", evaluators: list[EvaluatorConfig] | None = None, **data: Any) -> EvalCase:
    """A case of evals/s.eval.yaml whose one assertion is `contains: ok` unless `evaluators` says otherwise."""
    return EvalCase(id=case_id, source_file=Path("evals/s.eval.yaml"), suite="evals/s.eval.yaml", question="q",
                    evaluators=evaluators or [ContainsConfig(name="says-ok", value="ok")], **data)


def orchestrator(provider: Provider, **settings: Any) -> Orchestrator:
    return Orchestrator(Resolver(provider), build_evaluator_registry(), RunSettings(**settings))


def run_one(provider: Provider, case: EvalCase, **settings: Any) -> CaseResult:
    """`case` through the whole pool (`run`), as the CLI runs it: its one result."""
    results = orchestrator(provider, **settings).run([case])
    assert len(results) == 1
    return results[0]


def scored(name: str, score: float, verdict: ScoreVerdict, required: float | None = None, weight: float = 1.0) -> EvaluatorResult:
    return EvaluatorResult(name=name, type="contains", score=score, verdict=verdict, required=required, weight=weight)


# ---------------------------------------------------------------- the aggregate and the required gate


def test_a_skipped_evaluator_leaves_the_weighted_mean() -> None:
    assert weighted_mean([scored("a", 1.0, "pass"), scored("b", 0.0, "skip", weight=3)]) == 1.0
    assert weighted_mean([scored("a", 1.0, "pass"), scored("b", 0.0, "fail", weight=3)]) == 0.25


@pytest.mark.parametrize("met", [scored("r", 1.0, "pass", required=0.8), scored("r", 0.7, "borderline", required=0.6)])
def test_a_required_evaluator_that_made_its_mark_gates_nothing(met: EvaluatorResult) -> None:
    results = [scored("free", 0.0, "fail"), met]
    assert failed_requirements(results) == []
    assert case_score(results) == pytest.approx(met.score / 2)


def test_each_unmet_requirement_is_named_and_the_case_scores_zero() -> None:
    results = [scored("free", 1.0, "pass"),  # not required: skipped over, the rest still checked
               scored("low", 0.4, "fail", required=0.5),
               scored("unscored", 0.0, "skip", required=True),
               scored("forced", 0.9, "fail", required=0.8),
               # a threshold composite whose fraction made the mark but not its own threshold
               scored("gate", 0.8, "fail", required=0.8).model_copy(update={
                   "type": "composite", "reasoning": "4/5 evaluators passed (threshold: 0.9)"})]
    assert failed_requirements(results) == [
        "required evaluator 'low' scored 0.400, below its mark 0.5",
        "required evaluator 'unscored' could not be scored",
        "required evaluator 'forced' failed: a required rubric item was not met",
        "required evaluator 'gate' failed: 4/5 evaluators passed (threshold: 0.9)",
    ]
    assert case_score(results) == 0.0
    assert weighted_mean(results) > 0.5  # what the case would have scored without its gates


def test_summed_usage_adds_numbers_key_by_key_and_ignores_the_rest() -> None:
    assert _summed_usage([{"input": 3, "output": 1.5, "cached": True, "model": "m"}, None, {"input": 4}]) == {
        "input": 7, "output": 1.5}
    assert _summed_usage([None, {"model": "m", "flag": False}]) is None


# ---------------------------------------------------------------- one case


def test_a_single_evaluator_keeps_its_row_flat_and_several_are_listed() -> None:
    one = run_one(Scripted(says("ok")), ok_case())
    assert (one.verdict, one.score, one.evaluator_results) == ("pass", 1.0, None)
    two = run_one(Scripted(says("ok")), ok_case(evaluators=[ContainsConfig(name="a", value="ok"),
                                                           ContainsConfig(name="b", value="no")]))
    assert (two.verdict, two.score) == ("pass", 0.5)
    assert [r.name for r in two.evaluator_results or []] == ["a", "b"]


def test_retries_of_the_target_are_counted_on_the_row() -> None:
    assert run_one(Scripted(says("ok", retries=2)), ok_case()).retries == 2


def test_the_evaluators_see_the_agent_s_own_messages_or_its_answer_as_one() -> None:
    called = [Message.model_validate({"role": "assistant", "content": "", "tool_calls": [{"tool": "search", "input": {}}]}),
              Message(role="assistant", content="ok")]
    trajectory = ToolTrajectoryConfig(name="searched", mode="any_order", minimums={"search": 1})
    row = run_one(Scripted(says("ok", output_messages=called)), ok_case(evaluators=[trajectory]))
    assert (row.verdict, row.score) == ("pass", 1.0), row.misses
    # No messages: the answer is the one assistant message the evaluators see (here: no tool call).
    row = run_one(Scripted(says("ok")), ok_case(evaluators=[trajectory]))
    assert (row.verdict, row.score) == ("fail", 0.0)


class NotANumber:
    """An evaluator that scores NaN, as a broken custom evaluator could."""

    def evaluate(self, config: ContainsConfig, context: EvaluationContext) -> EvaluationScore:
        return EvaluationScore(score=float("nan"))


def test_a_score_that_is_not_a_number_is_an_error_scoring_zero() -> None:
    registry = build_evaluator_registry(overrides={ContainsConfig: NotANumber()})
    row = Orchestrator(Resolver(Scripted(says("ok"))), registry, RunSettings()).run([ok_case()])[0]
    assert (row.verdict, row.score) == ("error", 0.0)
    assert row.error == "evaluator 'says-ok': score nan is not a finite number"


@pytest.mark.parametrize(("resolver", "error"), [
    (Resolver(error=ProviderError("no key for agent")), "target: no key for agent"),
    (Resolver(Scripted(RuntimeError("connection reset"))), "target agent: connection reset"),
    (Resolver(Scripted(ValueError())), "target agent: ValueError"),
])
def test_a_target_that_cannot_answer_makes_its_case_an_error_saying_why(resolver: Resolver, error: str) -> None:
    row = Orchestrator(resolver, build_evaluator_registry(), RunSettings()).run([ok_case()])[0]
    assert (row.verdict, row.score, row.error, row.retries) == ("error", 0.0, error, 0)
    assert row.misses == [f"Error: {error}"]


def test_a_case_s_duration_is_its_own_wall_time_in_milliseconds() -> None:
    slow = build_provider(target(provider="mock", response="ok", delay_ms=30))
    before = time.monotonic()
    row = run_one(slow, ok_case())
    elapsed_ms = (time.monotonic() - before) * 1000
    assert 30 <= row.duration_ms <= elapsed_ms


# ---------------------------------------------------------------- trials


def trial_case(count: int, strategy: TrialStrategy = "pass_at_k", cost_limit_usd: float | None = None) -> EvalCase:
    return ok_case(trials=TrialsConfig(count=count, strategy=strategy, cost_limit_usd=cost_limit_usd))


def test_pass_at_k_stops_at_the_first_pass_and_shows_it() -> None:
    agent = Scripted(says("no"), says("ok"), says("ok"))
    row = run_one(agent, trial_case(3))
    assert (row.verdict, row.score, row.candidate_answer) == ("pass", 1.0, "ok")
    assert [(t["attempt"], t["verdict"]) for t in row.trials or []] == [(1, "fail"), (2, "pass")]
    assert row.aggregation == {"strategy": "pass_at_k", "passed_attempts": 1, "total_attempts": 2}
    # Later trials are never answered from the cache: a replay is not an independent sample.
    assert [r.run.use_cache if r.run else None for r in agent.requests] == [True, False]


def test_pass_at_k_with_no_pass_fails_and_shows_its_best_trial() -> None:
    row = run_one(Scripted(says("no"), says("ok, no")), ok_case(
        evaluators=[ContainsConfig(name="a", value="ok"), ContainsConfig(name="b", value="yes")],
        trials=TrialsConfig(count=2)), threshold=0.8)
    assert (row.verdict, row.score, row.candidate_answer) == ("fail", 0.5, "ok, no")
    assert row.aggregation == {"strategy": "pass_at_k", "passed_attempts": 0, "total_attempts": 2}


def test_pass_at_k_passes_on_a_trial_after_one_that_errored() -> None:
    row = run_one(Scripted(RuntimeError("flaky"), says("ok")), trial_case(3))
    assert (row.verdict, row.error, row.score) == ("pass", None, 1.0)
    assert [t["verdict"] for t in row.trials or []] == ["error", "pass"]


def test_mean_runs_every_trial_and_shows_the_worst() -> None:
    row = run_one(Scripted(says("ok"), says("no"), says("ok")), trial_case(3, "mean"))
    assert [t["attempt"] for t in row.trials or []] == [1, 2, 3]
    assert row.score == pytest.approx(2 / 3) and row.verdict == "pass"  # 0.667 meets the default 0.5
    assert row.candidate_answer == "no"
    assert row.aggregation == {"strategy": "mean", "mean": pytest.approx(2 / 3), "min": 0.0, "max": 1.0}


def test_mean_over_trials_that_all_pass_passes_above_the_threshold() -> None:
    row = run_one(Scripted(says("ok")), trial_case(2, "mean"), threshold=0.9)
    assert (row.verdict, row.score, row.error) == ("pass", 1.0, None)


def test_an_errored_trial_makes_the_row_an_error_and_is_left_out_of_the_aggregate() -> None:
    row = run_one(Scripted(says("ok"), RuntimeError("boom"), says("ok")), trial_case(3, "mean"))
    assert row.verdict == "error"
    assert row.error == "trial 2 of 3: target agent: boom"
    assert row.score == 1.0  # the mean of the two trials that were scored
    assert [(t["attempt"], t["execution_status"]) for t in row.trials or []] == [
        (1, "ok"), (2, "execution_error"), (3, "ok")]


def test_trials_failing_alike_are_each_named_by_their_own_number() -> None:
    row = run_one(Scripted(RuntimeError("boom")), trial_case(3, "mean"))
    assert row.error == "; ".join(f"trial {n} of 3: target agent: boom" for n in (1, 2, 3))


def test_trials_add_up_cost_tokens_and_retries() -> None:
    agent = Scripted(says("no"), says("no", cost_usd=0.25, token_usage={"input": 10}, retries=1),
                     says("no", cost_usd=0.5, token_usage={"input": 5, "output": 2}))
    row = run_one(agent, trial_case(3, "mean"))
    assert row.cost_usd == 0.75
    assert row.token_usage == {"input": 15, "output": 2}
    assert row.retries == 1
    assert row.cost_limited is None


@pytest.mark.parametrize(("count", "costs", "ran", "limited"), [
    (3, [0.5, 0.5, 0.5], 2, True),    # reaching the limit exactly stops further trials
    (2, [1.0, 1.0], 1, True),         # the first trial alone spends it
    (2, [0.5, 0.5], 2, None),         # reached on the last trial: nothing was left to stop
    (3, [0.25, 0.25, 0.25], 3, None),  # never reached
])
def test_cost_limit_starts_no_further_trial_once_reached(count: int, costs: list[float], ran: int,
                                                         limited: bool | None) -> None:
    agent = Scripted(*[says("no", cost_usd=cost) for cost in costs])
    row = run_one(agent, trial_case(count, "mean", cost_limit_usd=1.0))
    assert (len(row.trials or []), row.cost_limited) == (ran, limited)
    assert row.cost_usd == sum(costs[:ran])



def test_the_trials_flag_runs_every_trial_even_after_pass_at_k_passed() -> None:
    """`--trials N` asks for N samples (a paired test needs them all); the file's own count stops at a pass."""
    assert len(run_one(Scripted(says("ok")), trial_case(2)).trials or []) == 1
    row = run_one(Scripted(says("ok")), trial_case(2), trials=3)
    assert [(t["attempt"], t["verdict"]) for t in row.trials or []] == [(1, "pass"), (2, "pass"), (3, "pass")]
    assert row.aggregation == {"strategy": "pass_at_k", "passed_attempts": 3, "total_attempts": 3}



def test_pass_hat_k_cut_short_by_its_cost_limit_fails_on_the_trials_it_never_ran() -> None:
    """pass^k needs every one of the k trials to pass: two passes of three asked are not all of them."""
    agent = Scripted(says("ok", cost_usd=0.5))
    row = run_one(agent, trial_case(3, "mean", cost_limit_usd=1.0), trials_strategy="pass_hat_k")
    assert (len(row.trials or []), row.cost_limited, row.verdict) == (2, True, "fail")
    assert row.aggregation == {"strategy": "pass_hat_k", "min": 1.0, "total_attempts": 2, "passed_attempts": 2}
    assert run_one(agent, trial_case(2, "mean", cost_limit_usd=1.0), trials_strategy="pass_hat_k").verdict == "pass"


# ---------------------------------------------------------------- many cases: the pool, stops, hooks


def test_run_returns_every_result_and_clamps_workers_to_at_least_one() -> None:
    cases = [ok_case(f"c{i}") for i in range(3)]
    for workers in (0, 1):
        results = orchestrator(Scripted(says("ok")), workers=workers).run(cases)
        assert sorted(r.eval_id for r in results) == ["c0", "c1", "c2"]


def test_only_a_bounded_window_of_cases_is_drawn_ahead_of_the_results() -> None:
    handed: list[str] = []
    ahead: list[int] = []

    def cases() -> Iterator[EvalCase]:
        for number in range(6):
            ahead.append(number - len(handed))  # cases drawn but not yet handed over
            yield ok_case(f"c{number}")

    Orchestrator(Resolver(Scripted(says("ok"))), build_evaluator_registry(), RunSettings(workers=1),
                 on_result=lambda r: handed.append(r.eval_id)).run(cases())
    assert len(handed) == 6 and max(ahead) <= 2  # workers * 2 in flight


def test_a_refused_case_is_a_not_run_row_naming_its_target() -> None:
    stop = FailureLimit(1)
    agent = Scripted(says("no"))
    results = Orchestrator(Resolver(agent), build_evaluator_registry(), RunSettings(workers=1), stop=stop).run(
        [ok_case("first", target="agent"), ok_case("second", target="agent")])
    rows = {r.eval_id: r for r in results}
    assert rows["first"].verdict == "fail"
    assert (rows["second"].verdict, rows["second"].target) == ("error", "agent")
    assert rows["second"].error is not None and rows["second"].error.startswith("not run:")
    assert len(agent.requests) == 1


def test_hook_outputs_are_kept_on_the_row(tmp_path: Path) -> None:
    hook = HookConfig(name="before_each", argv=[sys.executable, "-c", "print('prepared')"], timeout_ms=30_000,
                      source_file=tmp_path / "s.eval.yaml", source_line=1)
    case = ok_case(workspace=WorkspaceConfig(hooks={"before_each": hook}), suite_file=tmp_path / "s.eval.yaml")
    row = Orchestrator(Resolver(Scripted(says("ok"))), build_evaluator_registry(), RunSettings(),
                       hooks=WorkspaceHooks()).run([case])[0]
    assert (row.verdict, row.before_each_output) == ("pass", "prepared")


def test_an_interrupt_returns_at_once_with_what_finished() -> None:
    """Ctrl-C while a case hangs in its target: `run` raises with the finished results at once, not
    after the hanging case (daemon threads: the process may exit)."""
    release, entered, returned = threading.Event(), threading.Event(), threading.Event()

    class Hanging:
        name, kind = "agent", "cli"

        def invoke(self, request: ProviderRequest) -> TargetResponse:
            if request.eval_case_id == "hangs":
                entered.set()
                release.wait(10)
                returned.set()
            return says("ok")

    def interrupt(result: CaseResult) -> None:
        assert entered.wait(10)
        raise KeyboardInterrupt

    runner = Orchestrator(Resolver(Hanging()), build_evaluator_registry(), RunSettings(workers=2), on_result=interrupt)
    with pytest.raises(KeyboardInterrupt):
        runner.run([ok_case("hangs"), ok_case("quick")])
    still_hanging = not returned.is_set()
    release.set()
    assert still_hanging
    assert runner.finished == []  # on_result raised before keeping it


def test_after_an_interrupt_the_orchestrator_holds_what_finished_before_it() -> None:
    seen: list[str] = []

    def interrupt_on_the_second(result: CaseResult) -> None:
        seen.append(result.eval_id)
        if len(seen) == 2:
            raise KeyboardInterrupt

    runner = Orchestrator(Resolver(Scripted(says("ok"))), build_evaluator_registry(), RunSettings(workers=1),
                          on_result=interrupt_on_the_second)
    with pytest.raises(KeyboardInterrupt):
        runner.run([ok_case("one"), ok_case("two"), ok_case("three")])
    # "three" is handed over too if it had ended by then; whatever was handed over and taken is kept
    assert seen[:2] == ["one", "two"]
    assert [r.eval_id for r in runner.finished] == [case for case in seen if case != "two"]


def test_cases_that_ended_before_an_interrupt_are_handed_over_not_lost() -> None:
    """Ctrl-C lands while one result is being taken: the cases that had ended by then reach `on_result`
    too (they are results, not cases never run); one still running, cancelled or that raised does not."""
    taken: list[str] = []
    runner = Orchestrator(Resolver(Scripted(says("ok"))), build_evaluator_registry(), RunSettings(workers=1),
                          on_result=lambda result: taken.append(result.eval_id))
    ended, running, cancelled, raised = Future(), Future(), Future(), Future()
    ended.set_result(runner.run_case(ok_case("ended")))
    assert cancelled.cancel()
    raised.set_exception(KeyboardInterrupt())
    runner._hand_over_finished([running, cancelled, raised, ended], [])
    assert taken == ["ended"]


def test_an_interrupt_inside_a_case_reaches_the_caller() -> None:
    """A KeyboardInterrupt raised on a worker thread is handed to `run`, which raises it (it never waits forever)."""
    outcome: list[BaseException] = []

    def go() -> None:
        try:
            orchestrator(Scripted(KeyboardInterrupt()), workers=1).run([ok_case()])
        except BaseException as exc:  # noqa: BLE001 - what run raised is the test's result
            outcome.append(exc)

    runner = threading.Thread(target=go, daemon=True)
    runner.start()
    runner.join(30)  # a guard against a hang, not a timing assertion
    assert [type(e) for e in outcome] == [KeyboardInterrupt]


def test_a_case_on_one_target_passes_through_the_matrix_as_it_is() -> None:
    single, matrix = ok_case("one"), ok_case("two", targets=["a", "b"])
    out = list(each_target([single, matrix], lambda c: list(c.targets or ["default"])))
    assert out[0] is single
    assert [(c.id, c.target, c.targets) for c in out[1:]] == [("two", "a", None), ("two", "b", None)]
