"""Which provider answers a case, and which judges it, for one run.

Names are checked before anything runs, so a typo in a target name is one configuration
error (exit 2) rather than a hundred case errors. Providers are built lazily, once per name,
and shared by the worker threads.
"""

from __future__ import annotations

import argparse
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..models import EvalCase
from .base import Provider
from .config import TargetsConfig, TargetsConfigError, load_targets_file

if TYPE_CHECKING:
    from ..evaluators.base import EvaluationContext

DEFAULT_TARGET = "default"
TARGETS_FILE_NAMES = (Path(".agentv/targets.yaml"), Path(".agentv/targets.yml"))


class TargetSetupError(Exception):
    """The run cannot start: no targets file, an unknown target name, a target that cannot be built."""


def find_targets_file(explicit: Path | None, cases: list[EvalCase]) -> Path | None:
    """--targets, else `.agentv/targets.yaml` in the working folder or above an eval file."""
    if explicit is not None:
        return explicit
    folders = [Path.cwd()]
    for case in cases:
        folders.extend(case.source_file.resolve().parents)
    seen: set[Path] = set()
    for folder in folders:
        if folder in seen:
            continue
        seen.add(folder)
        for name in TARGETS_FILE_NAMES:
            if (folder / name).is_file():
                return folder / name
    return None


class TargetResolver:
    def __init__(self, config: TargetsConfig, forced_target: str | None = None,
                 wrap: Any = None):
        self.config = config
        self.forced_target = forced_target
        self._wrap = wrap
        self._providers: dict[str, Provider] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_args(cls, args: argparse.Namespace, cases: list[EvalCase], wrap: Any = None) -> TargetResolver:
        path = find_targets_file(getattr(args, "targets", None), cases)
        if path is None:
            raise TargetSetupError("no targets file: create .agentv/targets.yaml (see `agentv-gate init`) "
                                   "or pass --targets FILE")
        try:
            config = load_targets_file(path)
        except TargetsConfigError as exc:
            raise TargetSetupError(str(exc)) from None
        resolver = cls(config, getattr(args, "target", None), wrap)
        resolver.check(cases)
        return resolver

    def target_name(self, case: EvalCase) -> str:
        name = self.forced_target or case.target or DEFAULT_TARGET
        if name == DEFAULT_TARGET and name not in self.config and len(self.config.names()) == 1:
            return self.config.names()[0]  # a single target is the default, whatever its name
        return name

    def check(self, cases: list[EvalCase]) -> None:
        """Every target the cases name (and their judges) exists and can be built."""
        for name in sorted({self.target_name(case) for case in cases}):
            provider_config = self._resolve(name)
            if provider_config.judge_target:
                self._resolve(provider_config.judge_target)
            self.provider(name)

    def _resolve(self, name: str) -> Any:
        try:
            return self.config.resolve(name)
        except TargetsConfigError as exc:
            raise TargetSetupError(str(exc)) from None

    def provider(self, name: str) -> Provider:
        with self._lock:
            if name not in self._providers:
                from .registry import build_provider

                try:
                    provider = build_provider(self._resolve(name))
                except TargetsConfigError as exc:
                    raise TargetSetupError(str(exc)) from None
                self._providers[name] = self._wrap(provider) if self._wrap else provider
            return self._providers[name]

    # ---------------------------------------------------------------- ProviderResolver

    def target_for(self, case: EvalCase) -> Provider:
        return self.provider(self.target_name(case))

    def judge_for(self, target_name: str) -> Provider | None:
        """The target's `judge_target`, else the target itself, as AgentV resolves judges."""
        if target_name not in self.config:
            return None
        judge = self._resolve(target_name).judge_target or target_name
        return self.provider(judge)

    def judge_for_context(self, context: EvaluationContext) -> Provider | None:
        if context.judge_provider is not None:
            return context.judge_provider
        wanted = getattr(context.evaluator, "target", None) or context.target
        return self.judge_for(wanted)

    def close(self) -> None:
        for provider in self._providers.values():
            closer = getattr(provider, "close", None)
            if callable(closer):
                closer()
