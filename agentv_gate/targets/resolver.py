"""Which provider answers a case, and which judges it, for one run.

Built on `ProviderRegistry` (lazy, shared providers; AgentV's judge resolution). What this
adds is run-level: finding the targets file, choosing a case's target name, checking every
name before anything runs (a typo is one configuration error, exit 2, not a hundred case
errors), and wrapping each provider once (the response cache).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ..base.files import EscapingSymlinkError, project_root
from ..base.key_checks import did_you_mean
from ..base.problems import Problem, allowing_unknown_keys, strict_problems
from ..errors import ConfigError, TargetsConfigError
from ..models import EvalCase
from .base import Provider
from .config import TargetsConfig
from .preflight import preflight, problem_of, unset_variables
from .registry import ProviderRegistry, find_targets_file, load_targets

DEFAULT_TARGET = "default"
ProviderWrapper = Callable[[Provider], Provider]


class NamesTarget(Protocol):
    """A case, or the loader's `CaseRef` for one: the target it asks for and where it is written."""

    @property
    def target(self) -> str | None: ...

    @property
    def source_file(self) -> Path: ...


def targets_files(explicit: Path | None, cases: Iterable[NamesTarget]) -> dict[Path, list[Path]]:
    """Each targets file the run reads -> the eval files (absolute) that use it: --targets for all, else
    AgentV's `discoverTargetsFile` per eval file: from its folder up to the repository root,
    `targets.yaml`, `targets.yml`, `.agentv/targets.yaml`, `.agentv/targets.yml` in each folder, never
    above the root (`project_root`); an eval file that finds none there takes the working folder's
    (AgentV's last try), else, when the run found exactly one, that one. Empty: no targets file at all.

    A file found inside the working folder is named relative to it, as eval files are, so its
    problems read `.agentv/targets.yaml:9: ...` and annotate the file in the checkout."""
    files = sorted({Path(os.path.abspath(case.source_file)) for case in cases})
    if explicit is not None:
        return {explicit: files}
    here = Path.cwd().resolve()
    nearest = {folder: _find(folder, None, here) for folder in sorted({file.parent for file in files})}
    found: dict[Path, list[Path]] = {}
    for file in files:
        if (own := nearest[file.parent]) is not None:
            found.setdefault(own, []).append(file)
    orphans = [file for file in files if nearest[file.parent] is None]
    if orphans or not files:
        roots = {project_root(file.parent) for file in orphans}
        fallback = (_find(here, here if files else None, here)
                    if not files or any(here == root or root in here.parents for root in roots) else None)
        if fallback is None and len(found) == 1:
            fallback = next(iter(found))
        if fallback is not None:
            found.setdefault(fallback, []).extend(orphans)
        elif found:
            raise TargetsConfigError(f"{orphans[0]} finds no targets file between its folder and the repository "
                                     "root, and the run's other eval files find several: add one beside it, or "
                                     "choose one with --targets FILE")
    return found


def locate_targets_file(explicit: Path | None, cases: Iterable[NamesTarget]) -> Path | None:
    """The first targets file of `targets_files` (the only one, unless eval files find their own)."""
    return next(iter(targets_files(explicit, cases)), None)


def _find(start: Path, stop_at: Path | None, here: Path) -> Path | None:
    try:
        found = find_targets_file(start, stop_at)
    except EscapingSymlinkError as exc:
        where = Path(exc.filename)
        where = where.relative_to(here) if where.is_relative_to(here) else where
        raise TargetsConfigError(f"{where}:1: {exc.strerror}",
                                 problems=[Problem(where, 1, str(exc.strerror), "a file inside the repository")]
                                 ) from None
    if found is None:
        return None
    found = Path(os.path.abspath(found))
    return found.relative_to(here) if found.is_relative_to(here) else found


@dataclass
class TargetsCheck:
    """What `validate` found of the targets: the file checked, its problems, and (without
    `--require-env`) the unset environment variables it did not need, per target."""

    path: Path
    problems: list[Problem]
    missing_env: dict[str, list[Problem]] = field(default_factory=dict)


def check_targets(explicit: Path | None, cases: Sequence[NamesTarget], allow_unknown_keys: bool = False,
                  forced_target: str | None = None, require_env: bool = True) -> TargetsCheck | None:
    """`validate`'s preflight: the run's checks, as problems, with the targets file found as `run` finds it.

    None when there is no targets file to check against. Without `require_env`, a target whose
    `${{ VAR }}`s are unset is checked for everything but those values (`TargetsCheck.missing_env`)."""
    files = targets_files(explicit, cases)
    if not files:
        return None
    missing: dict[str, list[Problem]] | None = None if require_env else {}
    problems: list[Problem] = []
    for path, users in files.items():  # each targets file against the cases of its own eval files
        own = [case for case in cases if Path(os.path.abspath(case.source_file)) in users]
        try:
            resolver = TargetResolver(load_targets(path), forced_target)
            problems += resolver.problems(own, allow_unknown_keys, missing)
            if require_env:  # an agentv grader's key, which no `${{ VAR }}` names
                problems += resolver.unset_keys_of(own)
        except TargetsConfigError as exc:
            problems += list(exc.problems) or [problem_of(exc, path, None)]  # type: ignore[arg-type]
    return TargetsCheck(next(iter(files)), problems, missing or {})


class TargetResolver(ProviderRegistry):
    def __init__(self, targets: TargetsConfig, forced_target: str | Sequence[str] | None = None,
                 wrap: ProviderWrapper | None = None, env: Mapping[str, str] | None = None):
        super().__init__(targets, env)
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
        self.missing_env: dict[str, list[Problem]] = {}
        """With `skip_missing_env`: each target whose `${{ VAR }}`s are unset -> a problem per variable."""

    @classmethod
    def from_options(cls, targets_file: Path | None, forced_target: str | Sequence[str] | None,
                     cases: Sequence[NamesTarget],
                     wrap: ProviderWrapper | None = None, allow_unknown_keys: bool = False,
                     skip_missing_env: bool = False, strict: bool = False,
                     env_for: Callable[[TargetsConfig], Mapping[str, str]] | None = None,
                     path: Path | None = None) -> TargetResolver:
        """The resolver of one targets file: `path`, else `targets_file` or the one the cases find (several
        are refused here: per_file.open_targets gives each eval file its own); every name checked.

        Plain values, not the CLI's arguments, so an embedder builds one without argparse. With
        `skip_missing_env`, targets reading unset variables are no error: they are listed in
        `missing_env`, and the run leaves the cases that need them out (`missing_env_for`). `env_for`
        gives the environment the targets are resolved in (a replay's, where unset keys have stand-ins).
        """
        if path is None:
            files = targets_files(targets_file, cases)
            if not files:
                raise ConfigError("no targets file: create .agentv/targets.yaml (see `agentv-gate init`) "
                                  "or pass --targets FILE")
            if len(files) > 1:
                raise TargetsConfigError(f"these eval files find different targets files: {', '.join(map(str, files))}")
            path = next(iter(files))
        try:
            targets = load_targets(path)
        except TargetsConfigError as exc:  # keep the place, so CI can annotate targets.yaml at the line
            raise TargetsConfigError(str(exc), problems=exc.problems or [problem_of(exc, path, None)]) from exc
        resolver = cls(targets, forced_target, wrap, env_for(targets) if env_for is not None else None)
        # TargetsConfigError (a ConfigError) stops the run before any target or judge is called.
        resolver.warnings = resolver.check(cases, allow_unknown_keys=allow_unknown_keys,
                                           skip_missing_env=skip_missing_env, strict=strict)
        return resolver

    def for_case(self, case: NamesTarget) -> TargetResolver:
        """The resolver of `case`'s targets file: this one (per_file.PerFileTargets has one per file)."""
        return self

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
                 missing_env: dict[str, list[Problem]] | None = None, strict: bool = False) -> list[Problem]:
        """Preflight: every target and judge the cases will call, found and built; targets.yaml's keys.
        With `missing_env`, targets reading unset variables are recorded there instead (see `preflight`)."""
        for forced in self.forced_targets:
            if forced not in self.targets:
                known = self.targets.names()
                raise TargetsConfigError(f"--target: no target named '{forced}'"
                                         f"{did_you_mean(forced, known)} (targets defined: {', '.join(known)})")
        found = preflight(self, cases, self.target_names, missing_env)  # type: ignore[arg-type]
        return strict_problems(allowing_unknown_keys(found, allow_unknown_keys), strict)

    def check(self, cases: Iterable[NamesTarget], allow_unknown_keys: bool = False,
              skip_missing_env: bool = False, strict: bool = False) -> list[Problem]:
        """The preflight's warnings; its errors, all of them, as one TargetsConfigError."""
        cases = list(cases)
        problems = self.problems(cases, allow_unknown_keys, self.missing_env if skip_missing_env else None, strict)
        if skip_missing_env:
            self.missing_env.update(self._unset_agentv_keys())
        else:  # found before the first call, as an unset `${{ VAR }}` is: each case it grades would error
            problems = [*problems, *self.unset_keys_of(cases)]
        errors = [str(p) for p in problems if p.severity == "error"]
        if errors:
            count = len(errors)
            if unset := unset_variables(p for p in problems if p.severity == "error"):
                errors.append(f"to run without {', '.join(unset)}: set it, run only the suites that need no "
                              "secrets (pre-commit: `args: [evals/<suite>]`), or pass --skip-missing-env to run "
                              "the rest and list these cases as not run")
            raise TargetsConfigError(f"{count} problem(s) with targets; nothing was run:\n" + "\n".join(errors),
                                     problems=problems)
        return [p for p in problems if p.severity != "error"]

    def unset_keys_of(self, cases: Iterable[NamesTarget]) -> list[Problem]:
        """The unset implicit keys (`_unset_agentv_keys`) of the targets and judges `cases` use, a problem each."""
        unset = self._unset_agentv_keys()
        used = {name: unset[name] for case in cases for target in self.target_names(case)
                for name in self._names_for(case, target) if name in unset} if unset else {}
        return [p for found in used.values() for p in found]

    def _unset_agentv_keys(self) -> dict[str, list[Problem]]:
        """`agentv` targets (AgentV's agentic graders) whose API key is unset: no `${{ VAR }}` names it, the
        provider reads it from its variable as AgentV's does, so without this a case it grades would run and
        error where --skip-missing-env leaves it out. None under `--replay`, the one resolver given an environment
        of its own: the recording answers (or the case errors, not in it), no provider is called with a key."""
        found: dict[str, list[Problem]] = {}
        if self.env is not None:
            return found
        for name, raw in self.targets.definitions.items():
            if name in self.missing_env or str(raw.data.get("provider") or "").strip().lower() != "agentv":
                continue
            try:
                provider = super().provider(name)
            except (TargetsConfigError, ValueError, KeyError):
                continue  # the preflight reported it
            key = getattr(provider, "key_variable", None)
            if isinstance(key, str) and not (os.environ.get(key) or "").strip():
                found[name] = [Problem(self.targets.source_file or Path("targets.yaml"), raw.line or 1,
                                       f"target '{name}': environment variable '{key}' (the agentv provider's API "
                                       "key, read from it as AgentV reads it) is not set or empty")]
        for name in self.targets.definitions:  # a `use_target` switch running one of them needs its key too
            if name in found or name in self.missing_env or not self.targets.delegates(name):
                continue
            try:
                concrete = self.targets.concrete(name, self.env)
            except TargetsConfigError:
                continue
            if concrete in found:
                found[name] = found[concrete]
        return found

    def missing_env_for(self, case: NamesTarget, target: str) -> list[Problem]:
        """The unset variables that keep `case` from running on `target`: the target's own, and those
        of every judge model its evaluators call there (the target's judge, or one they name)."""
        if not self.missing_env:
            return []
        return [p for name in self._names_for(case, target) for p in self.missing_env.get(name, [])]

    def _names_for(self, case: NamesTarget, target: str) -> list[str]:
        """`target` and every judge model the case's evaluators call there (the target's judge, or one they name)."""
        names = [target]
        for judge, _file, _line in getattr(case, "judges", ()):
            if judge is not None:
                names.append(judge)
            else:
                try:
                    names.append(self.judge_name_for(target) or target)
                except TargetsConfigError:
                    continue  # the preflight reported it
        return list(dict.fromkeys(names))

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
