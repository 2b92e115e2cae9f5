"""A run over eval files that find different targets files: each case runs on its own eval file's targets.

AgentV's `discoverTargetsFile` is per eval file (from its folder up to the repository root, `targets.yaml`
and `.agentv/targets.yaml` in each), so `evals/a/` and `evals/b/` may each have their own `default`, set up
differently. One `TargetResolver` per targets file, and every question about a case (its target, its
provider, its judge, the variables it needs) goes to its file's resolver: a name alone never decides which
file's target answers, since two files may define the same name differently. Rows say which file a case
used (`targets_file`), as its target's name alone no longer does.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, TargetsConfigError
from ..models import EvalCase, EvaluationContext
from .base import Provider
from .config import TargetsConfig
from .resolver import NamesTarget, ProviderWrapper, TargetResolver, targets_files

if TYPE_CHECKING:  # the limiter pulls in the HTTP stack, which a run of no model provider never imports
    from ..transport.limiter import LimiterStats


class PerFileTargets:
    """The run's targets when its eval files find more than one targets file (see the module docstring)."""

    def __init__(self, resolvers: dict[Path, TargetResolver], file_of: dict[Path, Path]) -> None:
        self.resolvers = resolvers
        """Each targets file's resolver, in the order the files were found."""
        self._file_of = file_of
        """Eval file (absolute) -> its targets file."""
        self.warnings = [warning for resolver in resolvers.values() for warning in resolver.warnings]
        self._judges: dict[Path, Callable[[EvaluationContext], Provider | None]] = {}

    def targets_file_of(self, case: NamesTarget) -> str:
        """The targets file `case` runs on, as the run names it (for its row)."""
        return str(self._path_of(case))

    def _path_of(self, case: NamesTarget) -> Path:
        return self._file_of[Path(os.path.abspath(case.source_file))]

    def for_case(self, case: NamesTarget) -> TargetResolver:
        return self.resolvers[self._path_of(case)]

    def target_name(self, case: NamesTarget) -> str:
        return self.for_case(case).target_name(case)

    def target_names(self, case: NamesTarget) -> list[str]:
        return self.for_case(case).target_names(case)

    def target_for(self, case: EvalCase) -> Provider:
        return self.for_case(case).target_for(case)

    def missing_env_for(self, case: NamesTarget, target: str) -> list[Any]:
        return self.for_case(case).missing_env_for(case, target)

    def judge_resolver(self) -> Callable[[EvaluationContext], Provider | None]:
        """The judge of a case's target in the case's own targets file (an evaluator's `target:` too)."""

        def resolve(context: EvaluationContext) -> Provider | None:
            path = self._path_of(context.eval_case)
            if path not in self._judges:
                self._judges[path] = self.resolvers[path].judge_resolver()
            return self._judges[path](context)

        return resolve

    def each_file(self, cases: Iterable[Any]) -> list[tuple[TargetResolver, list[Any]]]:
        """`cases` grouped by the resolver of their targets file."""
        groups: dict[Path, list[Any]] = {}
        for case in cases:
            groups.setdefault(self._path_of(case), []).append(case)
        return [(self.resolvers[path], found) for path, found in groups.items()]

    def most_workers(self) -> int | None:
        found = [n for resolver in self.resolvers.values() if (n := resolver.most_workers()) is not None]
        return max(found) if found else None

    def limiter_stats(self) -> dict[str, LimiterStats]:
        """Every file's limiters; a name two files use is told apart by its file."""
        merged: dict[str, LimiterStats] = {}
        for path, resolver in self.resolvers.items():
            for name, stats in resolver.limiter_stats().items():
                merged[name if name not in merged else f"{name} ({path})"] = stats
        return merged

    def close(self) -> None:
        for resolver in self.resolvers.values():
            resolver.close()


def open_targets(targets_file: Path | None, forced_target: str | Sequence[str] | None, cases: Sequence[NamesTarget],
                 wrap: ProviderWrapper | None = None, allow_unknown_keys: bool = False, skip_missing_env: bool = False,
                 strict: bool = False,
                 env_for: Callable[[TargetsConfig], Mapping[str, str]] | None = None) -> TargetResolver | PerFileTargets:
    """The run's targets: one file's resolver, or one per targets file when the eval files find several
    (each checked against its own eval files' cases before anything runs, every file's problems said)."""
    files = targets_files(targets_file, cases)
    if not files:
        raise ConfigError("no targets file: create .agentv/targets.yaml (see `agentv-gate init`) "
                          "or pass --targets FILE")
    options: dict[str, Any] = {"wrap": wrap, "allow_unknown_keys": allow_unknown_keys,
                               "skip_missing_env": skip_missing_env, "strict": strict, "env_for": env_for}
    if len(files) == 1:
        return TargetResolver.from_options(targets_file, forced_target, cases, path=next(iter(files)), **options)
    resolvers: dict[Path, TargetResolver] = {}
    refused: list[TargetsConfigError] = []
    for path, users in files.items():  # every file's problems before the run stops, not the first file's only
        own = [case for case in cases if Path(os.path.abspath(case.source_file)) in users]
        try:
            resolvers[path] = TargetResolver.from_options(targets_file, forced_target, own, path=path, **options)
        except TargetsConfigError as exc:
            refused.append(exc)
    if refused:
        for resolver in resolvers.values():
            resolver.close()
        raise TargetsConfigError("\n".join(map(str, refused)),
                                 problems=[problem for exc in refused for problem in exc.problems])
    return PerFileTargets(resolvers, {file: path for path, users in files.items() for file in users})
