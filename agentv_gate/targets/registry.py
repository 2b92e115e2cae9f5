"""From targets.yaml to live providers: build each once, and find who judges whom.

The judge of a target is, as in AgentV, its `judge_target` if set, else the target itself,
except that a `cli` target (an agent, not a model) never judges itself: a case run against it
with an LLM judge and no `judge_target` gets a clear "no judge target configured" error.
An `llm_judge` evaluator may name its own judge with `target:`, which wins over both.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base.files import project_file
from ..base.key_checks import did_you_mean
from ..errors import TargetsConfigError
from .base import Provider
from .cli_batch import BatchedCli
from .cli_target import CliProvider
from .config import TargetConfig, TargetsConfig, load_targets_file
from .kinds import PROVIDERS
from .settings import ProviderSettings
from .usage import PRICE_KEYS, Prices

if TYPE_CHECKING:
    from ..models import EvaluationContext, TargetResponse
    from ..transport.limiter import LimiterStats
    from .base import ProviderRequest

def load_targets(path: Path | str) -> TargetsConfig:
    """Parse a targets.yaml. Raises TargetsConfigError naming the file and line on bad input."""
    return load_targets_file(Path(path))


TARGET_FILE_CANDIDATES = ("targets.yaml", "targets.yml", ".agentv/targets.yaml", ".agentv/targets.yml")
"""AgentV's own list, in its order (2.19 and 4.42)."""


def find_targets_file(start: Path, stop_at: Path | None = None) -> Path | None:
    """The targets file AgentV's `discoverTargetsFile` takes from `start` upwards, not above `stop_at`
    (default: the repository root): in each folder `targets.yaml`, `targets.yml`, then `.agentv/`'s."""
    return project_file(start, TARGET_FILE_CANDIDATES, stop_at)


def build_provider(target: TargetConfig) -> Provider:
    """A provider for one resolved target. Raises TargetsConfigError when its settings are unusable."""
    kind = PROVIDERS.get(target.provider)
    if kind is None:
        raise TargetsConfigError(f"target '{target.name}': unsupported provider '{target.provider}'")
    return kind.build(target)


class ConcurrencyCapped:
    """A provider without a rate limiter of its own (`cli`, `mock`) held to its target's `workers`:
    at most that many of its calls at once, whatever `--workers` is. HTTP providers do this in
    their `RateLimiter`, together with their rate limits."""

    def __init__(self, inner: Provider, workers: int) -> None:
        self.inner = inner
        self.name = inner.name
        self.kind = inner.kind
        self._slots = threading.BoundedSemaphore(workers)

    def __repr__(self) -> str:
        return f"ConcurrencyCapped({self.inner!r})"

    def __getattr__(self, name: str) -> Any:
        if name == "inner":  # not set yet (copy, pickle): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)

    def invoke(self, request: ProviderRequest) -> TargetResponse:
        with self._slots:
            return self.inner.invoke(request)


class Priced:
    """A provider whose answers without a `cost_usd` get one from the target's configured prices and
    the tokens the answer reports; a cost the provider reports is kept as it is."""

    def __init__(self, inner: Provider, prices: Prices) -> None:
        self.inner = inner
        self.name = inner.name
        self.kind = inner.kind
        self.prices = prices

    def __repr__(self) -> str:
        return f"Priced({self.inner!r})"

    def __getattr__(self, name: str) -> Any:
        if name == "inner":  # not set yet (copy, pickle): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)

    def invoke(self, request: ProviderRequest) -> TargetResponse:
        response = self.inner.invoke(request)
        if response.cost_usd is None:
            cost = self.prices.cost(response.token_usage)
            if cost is not None:
                response = response.model_copy(update={"cost_usd": cost})
        return response


def build_capped(target: TargetConfig) -> Provider:
    """`build_provider`, with `workers` honoured for providers that have no limiter to honour it, and
    the target's prices applied to answers that report tokens but no cost."""
    provider = build_provider(target)
    if batching(target) and isinstance(provider, CliProvider):
        provider = BatchedCli(provider)
    if target.workers is not None and getattr(provider, "limiter", None) is None:
        provider = ConcurrencyCapped(provider, target.workers)
    where = f"{target.source_file}:{target.source_line}: {target.describe()}" if target.source_file \
        else target.describe()
    settings = target.read(ProviderSettings)
    prices = Prices.of({key: getattr(settings, key) for key in PRICE_KEYS}, where)
    return provider if prices is None else Priced(provider, prices)


def batching(target: TargetConfig) -> bool:
    """`provider_batching: true` on a cli target: one run answers every case of a suite (cli_batch.py).
    (AgentV batches no other provider the gate runs: there the setting is a no-effect warning.)"""
    return PROVIDERS[target.provider].batches and target.read(ProviderSettings).provider_batching is True


def no_judge_message(target_name: str) -> str:
    return (
        f"no judge target configured: set judge_target on target '{target_name}' in .agentv/targets.yaml "
        f"(or `target:` on the llm_judge evaluator)"
    )


class ProviderRegistry:
    """Targets resolved and providers built on first use, then shared (safe across threads)."""

    def __init__(self, targets: TargetsConfig, env: Mapping[str, str] | None = None) -> None:
        self.targets = targets
        self._env = env
        targets.register_declared_secrets(env)  # those of targets never resolved too (see there)
        self._providers: dict[str, Provider] = {}
        self._configs: dict[str, TargetConfig] = {}
        self._lock = threading.RLock()

    @property
    def env(self) -> Mapping[str, str] | None:
        """The environment targets are resolved in (None: the process's)."""
        return self._env

    def config(self, name: str) -> TargetConfig:
        with self._lock:
            if name not in self._configs:
                self._configs[name] = self.targets.resolve(name, self._env)
            return self._configs[name]

    def provider(self, name: str) -> Provider:
        """The provider of target `name`, one per concrete target (a `use_target` name shares the one of the
        target it runs, as AgentV caches providers by the resolved name). Raises TargetsConfigError if it is
        unknown or unusable."""
        with self._lock:
            config = self.config(name)
            if config.name not in self._providers:
                self._providers[config.name] = build_capped(config)
            return self._providers[config.name]

    def batching(self, name: str) -> bool:
        """Whether target `name` answers a suite's cases in one batch run (False when it cannot be resolved)."""
        try:
            return batching(self.config(name))
        except TargetsConfigError:
            return False

    def declared_targets(self) -> list[str]:
        """Every target of the file, in its order (a code judge's proxy lists them and may call any)."""
        return self.targets.names()

    def named_provider(self, name: str) -> Provider:
        """The provider of a target a code judge names through its proxy (any target of the file):
        refused, as AgentV refuses to resolve it, when a `${{ VAR }}` it reads is unset, since such a
        target was never checked before the run (only the targets the cases use are)."""
        config = self.config(name)
        unset = [f"{var} ({key})" for key, names in config.unset_env.items() for var in names]
        if unset:
            raise TargetsConfigError(f"environment variable {', '.join(unset)} is not set or empty")
        return self.provider(name)

    def most_workers(self) -> int | None:
        """The largest `workers` among the targets resolved so far (the run's pool must allow it)."""
        with self._lock:
            declared = [c.workers for c in self._configs.values() if c.workers is not None]
        return max(declared) if declared else None

    def limiter_stats(self) -> dict[str, LimiterStats]:
        """Per target that made HTTP calls: calls, 429s and time waited, from its rate limiter."""
        with self._lock:
            providers = dict(self._providers)
        out: dict[str, LimiterStats] = {}
        for name, provider in providers.items():
            limiter = getattr(provider, "limiter", None)
            if limiter is not None and limiter.stats.calls:
                out[name] = limiter.stats
        return out

    def judge_name_for(self, target_name: str) -> str | None:
        """Who judges `target_name`'s answers: its judge_target, else itself if it is a model."""
        target = self.config(target_name)
        if target.judge_target:
            if target.judge_target not in self.targets:
                known = self.targets.names()
                lines = self.targets.definitions[target.name].key_lines
                # At the `judge_target:` key (whichever spelling), not the target's `- name:` line.
                line = next((lines[k] for k in ProviderSettings.spellings("judge_target") if k in lines),
                            target.source_line)
                where = f"{target.source_file}:{line}: " if target.source_file else ""
                raise TargetsConfigError(
                    f"{where}target '{target.name}': judge_target '{target.judge_target}' is not defined"
                    f"{did_you_mean(target.judge_target, known)} (targets defined: {', '.join(known)})"
                )
            return target.judge_target
        kind = PROVIDERS.get(target.provider)
        return target.name if kind is not None and kind.judges else None

    def judge_provider_for(self, target_name: str) -> Provider | None:
        judge = self.judge_name_for(target_name)
        return None if judge is None else self.provider(judge)

    def judge_resolver(self) -> Callable[[EvaluationContext], Provider | None]:
        """The `resolve_judge_provider` callable LlmJudgeEvaluator takes.

        Order: the evaluator's own `target:`, then the case target's judge. Misconfiguration raises TargetsConfigError, which
        the evaluator reports as the case's error.
        """

        def resolve(context: EvaluationContext) -> Provider | None:
            named = getattr(context.evaluator, "target", None)
            if isinstance(named, str) and named:
                return self.provider(named)
            if context.target and context.target in self.targets:
                return self.judge_provider_for(context.target)
            return None

        return resolve
