"""Which provider answers a case, and which judges it, for one run.

Built on `ProviderRegistry` (lazy, shared providers; AgentV's judge resolution). What this
adds is run-level: finding the targets file, choosing a case's target name, checking every
name before anything runs (a typo is one configuration error, exit 2, not a hundred case
errors), and wrapping each provider once (the response cache).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Protocol

from ..errors import ConfigError
from ..models import EvalCase
from .base import Provider
from .config import TargetsConfig
from .registry import ProviderRegistry, find_targets_file, load_targets

DEFAULT_TARGET = "default"
ProviderWrapper = Callable[[Provider], Provider]


class NamesTarget(Protocol):
    """A case, or the loader's `CaseRef` for one: the target it asks for and where it is written."""

    @property
    def target(self) -> str | None: ...

    @property
    def source_file(self) -> Path: ...


def locate_targets_file(explicit: Path | None, cases: Iterable[NamesTarget]) -> Path | None:
    """--targets, else `.agentv/targets.yaml` in the working folder or above an eval file."""
    if explicit is not None:
        return explicit
    eval_files = {case.source_file for case in cases}
    for start in [Path.cwd(), *sorted({file.resolve().parent for file in eval_files})]:
        found = find_targets_file(start)
        if found is not None:
            return found
    return None


class TargetResolver(ProviderRegistry):
    def __init__(self, targets: TargetsConfig, forced_target: str | None = None,
                 wrap: ProviderWrapper | None = None):
        super().__init__(targets)
        self.forced_target = forced_target
        self._wrap = wrap
        self._wrapped: dict[str, Provider] = {}

    @classmethod
    def from_options(cls, targets_file: Path | None, forced_target: str | None, cases: Sequence[NamesTarget],
                     wrap: ProviderWrapper | None = None) -> TargetResolver:
        """The resolver for one run: `targets_file` or the one found near the cases; every name checked.

        Plain values, not the CLI's arguments, so an embedder builds one without argparse.
        """
        path = locate_targets_file(targets_file, cases)
        if path is None:
            raise ConfigError("no targets file: create .agentv/targets.yaml (see `agentv-gate init`) "
                              "or pass --targets FILE")
        resolver = cls(load_targets(path), forced_target, wrap)
        resolver.check(cases)  # TargetsConfigError (a ConfigError) stops the run before any case
        return resolver

    def target_name(self, case: NamesTarget) -> str:
        name = self.forced_target or case.target or DEFAULT_TARGET
        names = self.targets.names()
        if name == DEFAULT_TARGET and name not in self.targets and len(names) == 1:
            return names[0]  # a lone target is the default, whatever it is called
        return name

    def check(self, cases: Iterable[NamesTarget]) -> None:
        """Every target the cases name, and its judge, exists and can be built."""
        for name in sorted({self.target_name(case) for case in cases}):
            self.provider(name)
            self.judge_name_for(name)

    def provider(self, name: str) -> Provider:
        base = super().provider(name)
        if self._wrap is None:
            return base
        with self._lock:
            if name not in self._wrapped:
                self._wrapped[name] = self._wrap(base)
            return self._wrapped[name]

    # ---------------------------------------------------------------- the orchestrator's ProviderResolver

    def target_for(self, case: EvalCase) -> Provider:
        return self.provider(self.target_name(case))

    def close(self) -> None:
        for provider in {*self._providers.values(), *self._wrapped.values()}:
            closer = getattr(provider, "close", None)
            if callable(closer):
                closer()
