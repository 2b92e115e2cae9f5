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

from ..errors import ConfigError, TargetsConfigError
from ..keys import did_you_mean
from ..models import EvalCase
from ..problems import Problem, allowing_unknown_keys, strict_problems
from .base import Provider
from .config import TargetsConfig
from .preflight import preflight, problem_of
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


def check_targets(explicit: Path | None, cases: Sequence[NamesTarget], allow_unknown_keys: bool = False,
                  forced_target: str | None = None) -> list[Problem] | None:
    """`validate`'s preflight: the run's checks, as problems, with the targets file found as `run` finds it.

    None when there is no targets file to check against (eval files can be checked before one exists)."""
    path = locate_targets_file(explicit, cases)
    if path is None:
        return None
    try:
        return TargetResolver(load_targets(path), forced_target).problems(cases, allow_unknown_keys)
    except TargetsConfigError as exc:
        return [problem_of(exc, path, None)]


class TargetResolver(ProviderRegistry):
    def __init__(self, targets: TargetsConfig, forced_target: str | Sequence[str] | None = None,
                 wrap: ProviderWrapper | None = None):
        super().__init__(targets)
        forced = [forced_target] if isinstance(forced_target, str) else list(forced_target or ())
        if forced == [DEFAULT_TARGET]:
            # AgentV's `pickTargetName`: `--target default` is the flag's own default value there, so it
            # chooses nothing and an eval file's `target:` still wins (taking it as a choice would run
            # another agent than AgentV runs). A case that names no target still gets `default`.
            forced = []
        self.forced_targets = list(dict.fromkeys(forced))
        """`--target`, given any number of times: one name is every case's target; several make a matrix."""
        self.forced_target = self.forced_targets[0] if len(self.forced_targets) == 1 else None
        self._wrap = wrap
        self._wrapped: dict[str, Provider] = {}
        self.warnings: list[Problem] = []
        """What the preflight check found that does not stop the run, for the command to show."""

    @classmethod
    def from_options(cls, targets_file: Path | None, forced_target: str | Sequence[str] | None,
                     cases: Sequence[NamesTarget],
                     wrap: ProviderWrapper | None = None, allow_unknown_keys: bool = False,
                     strict: bool = False) -> TargetResolver:
        """The resolver for one run: `targets_file` or the one found near the cases; every name checked.

        Plain values, not the CLI's arguments, so an embedder builds one without argparse.
        """
        path = locate_targets_file(targets_file, cases)
        if path is None:
            raise ConfigError("no targets file: create .agentv/targets.yaml (see `agentv-gate init`) "
                              "or pass --targets FILE")
        try:
            targets = load_targets(path)
        except TargetsConfigError as exc:  # keep the place, so CI can annotate targets.yaml at the line
            raise TargetsConfigError(str(exc), problems=exc.problems or [problem_of(exc, path, None)]) from exc
        resolver = cls(targets, forced_target, wrap)
        # TargetsConfigError (a ConfigError) stops the run before any target or judge is called.
        resolver.warnings = resolver.check(cases, allow_unknown_keys=allow_unknown_keys, strict=strict)
        return resolver

    def target_name(self, case: NamesTarget) -> str:
        name = self.forced_target or case.target or DEFAULT_TARGET
        names = self.targets.names()
        if name == DEFAULT_TARGET and name not in self.targets and len(names) == 1:
            return names[0]  # a lone target is the default, whatever it is called
        return name

    def target_names(self, case: NamesTarget) -> list[str]:
        """Every target `case` runs on: several `--target`s, else one, else its `execution.targets`
        (a matrix: one row per target), else its one target."""
        if len(self.forced_targets) > 1:
            return list(self.forced_targets)
        listed = getattr(case, "targets", None)
        if self.forced_target is None and listed:
            return list(listed)
        return [self.target_name(case)]

    def problems(self, cases: Iterable[NamesTarget], allow_unknown_keys: bool = False,
                 strict: bool = False) -> list[Problem]:
        """Preflight: every target and judge the cases will call, found and built; targets.yaml's keys."""
        for forced in self.forced_targets:
            if forced not in self.targets:
                known = self.targets.names()
                raise TargetsConfigError(f"--target: no target named '{forced}'"
                                         f"{did_you_mean(forced, known)} (targets defined: {', '.join(known)})")
        found = allowing_unknown_keys(preflight(self, cases, self.target_names), allow_unknown_keys)  # type: ignore[arg-type]
        return strict_problems(found, strict)

    def check(self, cases: Iterable[NamesTarget], allow_unknown_keys: bool = False,
              strict: bool = False) -> list[Problem]:
        """The preflight's warnings; its errors, all of them, as one TargetsConfigError."""
        problems = self.problems(cases, allow_unknown_keys, strict)
        errors = [str(p) for p in problems if p.severity == "error"]
        if errors:
            raise TargetsConfigError(f"{len(errors)} problem(s) with targets; nothing was run:\n" + "\n".join(errors),
                                     problems=problems)
        return [p for p in problems if p.severity != "error"]

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
