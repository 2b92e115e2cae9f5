"""Preflight: every target and judge a run will call is found, built and checked before the first call.

Without it a missing `judge_target` or an unset judge API key surfaced as an error on every
case, after the agent had already been called (and paid for) on each. Building a provider
reads and checks its settings (required `${{ VAR }}`s included) and calls nothing, so the same
check serves `run` (before any case) and `validate` (offline, in well under a second).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from ..base.files import EscapingSymlinkError, project_file
from ..base.key_checks import NOT_YET_PROVIDERS, did_you_mean
from ..base.problems import Problem, no_effect
from ..errors import TargetsConfigError
from .config import (
    GRADER_TARGET_HOPS,
    RUN_TARGET_HOPS,
    RawTarget,
    TargetConfig,
    TargetsConfig,
    normalise_provider,
    resolve_target,
)
from .kinds import PROVIDERS
from .registry import ProviderRegistry, build_capped, no_judge_message
from .usage import PRICE_KEYS

JudgeUse = tuple[str | None, Path, int]
"""(the judge target an evaluator names, or None for the case target's own judge; file; line)."""


class UsesTargets(Protocol):
    """A case, or the loader's `CaseRef` for one: its target, where it is written, the judges it calls."""

    @property
    def target(self) -> str | None: ...

    @property
    def source_file(self) -> Path: ...

    @property
    def source_line(self) -> int: ...


def problem_of(exc: TargetsConfigError, file: Path, line: int | None) -> Problem:
    """A targets error as a located problem (its message loses the `file:line: ` it starts with)."""
    message = str(exc)
    match = re.match(re.escape(str(file)) + r":(\d+): ", message) or re.match(re.escape(str(file)) + r"(): ", message)
    if match:
        message = message[match.end():]
        line = int(match.group(1)) if match.group(1) else line
    return Problem(file, line or 1, message)


def located(exc: TargetsConfigError, file: Path, line: int | None) -> list[Problem]:
    """The located problems a targets error carries, else its message as one at `line`."""
    return [p for p in exc.problems if isinstance(p, Problem)] or [problem_of(exc, file, line)]


_UNSET = re.compile(r"environment variable '([A-Za-z_][A-Za-z0-9_]*)' \("
                    r"|use_target: \$\{\{ ([A-Za-z0-9_]+) \}\}, but \2 is not set\.")
"""An unset variable a problem names: a setting's (`environment variable 'X' (key: ...)`) or a `use_target`
switch's, in AgentV's words."""


_KEY_AFTER_TARGET = re.compile(r"target '[^']*': (?:healthcheck: )?([A-Za-z_][\w-]*(?:[.\[][\w\]-]*)*)")


def at_key(problem: Problem, key_lines: Mapping[str, int], block_line: int | None) -> Problem:
    """A problem about one key of a target (`openai target 'judge': base_url must ...`) moved from the
    target's `- name:` line to that key's line, as eval-file problems point at their key."""
    if block_line is not None and problem.line != block_line:
        return problem  # already placed
    match = _KEY_AFTER_TARGET.search(problem.message)
    if match is None:
        return problem
    key = match.group(1)
    healthcheck = "healthcheck: " in problem.message[match.start():match.start(1)]
    candidates = [f"healthcheck.{key}", "healthcheck"] if healthcheck else []
    candidates += [key, re.split(r"[.\[]", key)[0]]
    line = next((key_lines[c] for c in candidates if c in key_lines), None)
    return replace(problem, line=line) if line is not None else problem


def each_problem(exc: TargetsConfigError, file: Path, raw: RawTarget) -> list[Problem]:
    """Every problem `exc` carries (or the one it says), each at its key's line."""
    found = [p for p in exc.problems if isinstance(p, Problem)] or [problem_of(exc, file, raw.line)]
    return [at_key(problem, raw.key_lines, raw.line) for problem in found]


def _key_of(problem: Problem, settings: Mapping[str, object]) -> str | None:
    """The setting a problem is about (`base_url` for `... 'x': base_url must ...`), if it names one."""
    match = _KEY_AFTER_TARGET.search(problem.message)
    if match is None:
        return None
    healthcheck = "healthcheck: " in problem.message[match.start():match.start(1)]
    key = "healthcheck" if healthcheck else re.split(r"[.\[]", match.group(1))[0]
    return key if key in settings else None


def unresolved_problems(first: TargetsConfigError, file: Path, raw: RawTarget,
                        env: Mapping[str, str] | None) -> list[Problem]:
    """Every problem of a target that cannot be resolved: those of its values (all found at once),
    then, when each names a setting, those building its provider without them finds."""
    found = each_problem(first, file, raw)
    keys = {_key_of(problem, raw.data) for problem in found}
    if None in keys:
        return found  # about the whole target (its provider): nothing to build
    try:
        config = resolve_target(replace(raw, data={k: v for k, v in raw.data.items() if k not in keys}),
                                os.environ if env is None else env, file)
    except TargetsConfigError:
        return found  # reading a variable, say: the problems found say what to fix first
    try:
        provider = build_capped(config)
    except TargetsConfigError as exc:
        found.extend(p for p in provider_problems(config, exc, file, raw) if _key_of(p, raw.data) not in keys)
        return found
    closer = getattr(provider, "close", None)
    if callable(closer):
        closer()
    return found


def provider_problems(config: TargetConfig, first: TargetsConfigError, file: Path, raw: RawTarget) -> list[Problem]:
    """Every unusable setting of a target whose provider cannot be built, not only the first.

    A provider checks its settings one after the other and stops at the first it cannot use; so
    that setting is left out and the provider built again, until it builds or a problem names no
    setting, or one left out (`model is required` once `model` is out is no news). The run stops on
    the first problem anyway: this only says all of them at once, each at its line."""
    found = each_problem(first, file, raw)
    left_out: set[str] = set()
    while (key := _key_of(found[-1], config.settings)) is not None and key not in left_out:
        left_out.add(key)
        try:
            provider = build_capped(config.without(left_out))
        except TargetsConfigError as exc:
            more = [p for p in each_problem(exc, file, raw) if _key_of(p, config.settings) not in left_out]
            if not more:
                break
            found.extend(more)
            continue
        closer = getattr(provider, "close", None)
        if callable(closer):
            closer()
        break
    return found


def unset_variables(problems: Iterable[Problem]) -> list[str]:
    """The variables the preflight's unset-variable problems name, each once, in order."""
    return list(dict.fromkeys(m.group(1) or m.group(2) for p in problems if (m := _UNSET.search(p.message))))


def unknown_target(name: str, targets: TargetsConfig) -> str:
    known = targets.names()
    return (f"no target named '{name}' in {targets.source_file or 'targets.yaml'}{did_you_mean(name, known)} "
            f"(targets defined: {', '.join(known) or 'none'})")


def preflight(registry: ProviderRegistry, cases: Iterable[UsesTargets],
              target_names: Callable[[UsesTargets], list[str]],
              missing_env: dict[str, list[Problem]] | None = None) -> list[Problem]:
    """Every problem with the targets and judges `cases` will use (each target of a matrix case),
    and the keys of targets.yaml.

    With `missing_env` (a dict to fill), a target that reads unset environment variables is no
    problem: it is recorded there (target name -> a problem per variable) and its name, judge and
    references are still checked; only building it, which needs the values, is left out. That is
    `validate` without `--require-env`, and `run --skip-missing-env`."""
    targets = registry.targets
    file = targets.source_file or Path("targets.yaml")
    problems = list(targets.key_problems)
    used: dict[str, UsesTargets] = {}
    judged: dict[tuple[str, str | None], tuple[Path, int]] = {}
    costed: dict[tuple[str, Path, int], set[str]] = {}
    for case in cases:
        judges: tuple[JudgeUse, ...] = getattr(case, "judges", ())
        for name in target_names(case):
            used.setdefault(name, case)
            for limit in getattr(case, "costs", ()):
                costed.setdefault(limit, set()).add(name)
            for judge, judge_file, judge_line in judges:
                judged.setdefault((name, judge), (judge_file, judge_line))
    built: set[str] = set()
    unresolved: set[str] = set()
    """`use_target` switches whose variable is unset, in a preflight that lets unset variables be."""
    delegated: set[str] = set()
    """Graders' targets on an agent provider the gate does not run: each such grader errors, the rest runs."""

    def build(name: str, hops: int = GRADER_TARGET_HOPS) -> bool:
        if name in built:
            return True
        built.add(name)
        if targets.delegates(name):
            # resolved now, before any call: its problems at the use_target entry, the target it runs as if named
            try:
                concrete = targets.concrete(name, registry.env, hops)
            except TargetsConfigError as exc:
                found = located(exc, file, targets.definitions[name].line)
                if missing_env is not None and _unset_switch(exc):
                    missing_env[name] = found
                    unresolved.add(name)
                    return True  # `validate` offline: which target it runs is the environment's to say
                problems.extend(found)
                return False
            return build(concrete)
        raw = targets.definitions[name]
        try:
            config = registry.config(name)
        except TargetsConfigError as exc:
            problems.extend(sorted(unresolved_problems(exc, file, raw, registry.env), key=lambda p: p.line))
            return False
        # Every unset `${{ VAR }}` the target reads, nested ones included (`healthcheck.url`, `env.X`,
        # `headers.Y`), and unlike AgentV an unset optional one too: `endpoint: ${{ LOCAL_URL }}` unset
        # would send the case (and maybe a key) to the provider's default endpoint instead.
        lines = targets.definitions[name].key_lines
        unset = [Problem(file, lines.get(key, config.source_line or 1),
                         f"target '{name}': environment variable '{var}' ({key}: ${{{{ {var} }}}}) "
                         "is not set or empty") for key, names in config.unset_env.items() for var in names]
        if unset and missing_env is not None:
            missing_env[name] = unset
            return True  # its name and judge are checked; building it needs the values
        if unset:
            problems.extend(unset)
            return False  # building the provider would only restate them less clearly ("url is required")
        try:
            provider = registry.provider(name)
        except TargetsConfigError as exc:
            problems.extend(sorted(provider_problems(config, exc, file, raw), key=lambda p: p.line))
            return False
        base = getattr(provider, "base_url", None)
        if isinstance(base, str) and base.startswith("https://"):
            from ..transport.http_policy import missing_ca_bundle  # an HTTP provider was built: the stack is imported

            missing = missing_ca_bundle()
            if missing is not None:
                problems.append(Problem(file, targets.definitions[name].line or 1,
                                        f"target '{name}': {missing[0]} names {missing[1]}, which does not exist; "
                                        f"every HTTPS call to {base} would fail", "the path of a CA bundle, or no "
                                        f"{missing[0]}"))
                return False
        return True

    for name, case in used.items():
        if name not in targets:
            line = getattr(case, "target_line", None) or case.source_line
            problems.append(Problem(case.source_file, line, unknown_target(name, targets)))
        else:
            build(name, RUN_TARGET_HOPS)
    for (name, judge), (judge_file, judge_line) in judged.items():
        if name not in targets or name not in built or name in unresolved:
            continue  # reported above
        if judge is not None:
            if judge not in targets:
                problems.append(Problem(judge_file, judge_line, f"llm_judge target: {unknown_target(judge, targets)}"))
            elif (feature := _not_yet_feature(targets, judge)) is not None:
                delegated.add(judge)
                problems.append(Problem(judge_file, judge_line, f"the grader's target '{judge}' runs {feature}, which "
                                        "agentv-gate does not run yet: this grader is an error in each case that "
                                        "uses it (AgentV asks that agent to grade)", severity="warning"))
            else:
                build(judge)
            continue
        try:
            default_judge = registry.judge_name_for(name)
        except TargetsConfigError as exc:
            problems.extend(located(exc, file, targets.definitions[name].line))
            continue
        if default_judge is None:
            problems.append(Problem(judge_file, judge_line, no_judge_message(name)))
        else:
            build(default_judge)
    problems.extend(_unreachable_cost_limits(costed, targets))
    problems.extend(_unused_not_yet(targets, {*used, *built, *delegated}))
    problems.extend(_unused_switches(targets, {*used, *built, *delegated}, registry.env))
    problems.extend(_unknown_providers(targets, {*used, *built, *delegated}, {Path(c.source_file).parent for c in used.values()}))
    return list(dict.fromkeys(problems))


CUSTOM_PROVIDER_SUFFIXES = (".ts", ".js", ".mts", ".mjs")
"""The scripts AgentV 4.42 registers as custom providers from `.agentv/providers/` (provider-discovery.ts)."""


def custom_provider_script(provider: str, folders: Iterable[Path]) -> Path | None:
    """The script AgentV 4.42 would run for `provider`: `.agentv/providers/PROVIDER.ts` (or .js, .mts, .mjs) in
    an eval file's folder or a folder above it, as its discovery looks from the eval file's folder up; here, as
    every project file, never above the repository root, and one linked outside it does not count."""
    candidates = tuple(f".agentv/providers/{provider}{suffix}" for suffix in CUSTOM_PROVIDER_SUFFIXES)
    for folder in folders:
        try:
            script = project_file(folder, candidates)
        except EscapingSymlinkError:
            continue
        if script is not None:
            return script
    return None


def _unknown_providers(targets: TargetsConfig, touched: set[str], folders: set[Path]) -> list[Problem]:
    """A provider no one knows is refused (a typo), unless this run never calls the target and AgentV would
    run it as a custom provider script: then a warning, since AgentV runs the suites beside it."""
    found = []
    for name, problem in targets.unknown_providers.items():
        if name in touched:
            continue  # building it said so, at the case that uses it
        provider = str(targets.definitions[name].data.get("provider", "")).strip()
        script = custom_provider_script(provider, sorted(folders))
        if script is None:
            found.append(problem)
            continue
        found.append(Problem(problem.file, problem.line, f"target '{name}' (provider: {provider}) is unused here; "
                             f"AgentV 4.42 runs it with its custom provider script {script.name} "
                             "(.agentv/providers/), which agentv-gate does not run yet, so a run that uses it is "
                             "refused", severity="warning"))
    return found


def _unset_switch(exc: TargetsConfigError) -> bool:
    """Whether a `use_target` refusal is its `${{ VAR }}` being unset (AgentV's words: `..., but VAR is not set.`)."""
    return _UNSET.search(str(exc)) is not None


def _unused_switches(targets: TargetsConfig, touched: set[str], env: Mapping[str, str] | None) -> list[Problem]:
    """A `use_target` entry this run never calls that cannot be resolved (its variable unset, a name no
    target has, a loop): a warning at its line, as other unused targets, where a run that uses it is refused."""
    found: list[Problem] = []
    for name in targets.names():
        if name in touched or not targets.delegates(name):
            continue
        try:
            targets.concrete(name, env)
        except TargetsConfigError as exc:
            found.extend(replace(p, message=f"{p.message} (unused here; a run that uses target '{name}' is refused)",
                                 severity="warning") for p in exc.problems if isinstance(p, Problem))
    return found


def _resolved_name(targets: TargetsConfig, name: str) -> str:
    """The target `name` runs (itself when it cannot be resolved: that is said where it is used)."""
    try:
        return targets.concrete(name)
    except TargetsConfigError:
        return name


def _not_yet_feature(targets: TargetsConfig, name: str) -> str | None:
    """What a target's provider is when AgentV runs it and agentv-gate does not yet (None otherwise)."""
    provider = targets.definitions[_resolved_name(targets, name)].data.get("provider")
    return NOT_YET_PROVIDERS.get(provider.strip().lower()) if isinstance(provider, str) else None


def _unused_not_yet(targets: TargetsConfig, touched: set[str]) -> list[Problem]:
    """A target on a provider AgentV runs and agentv-gate does not yet, that this run never calls: a
    warning at its entry (AgentV's own shared targets.yaml holds `claude-cli` agents beside the model
    targets a suite uses), where a run that calls it is refused, naming the provider."""
    file = targets.source_file or Path("targets.yaml")
    found = []
    for name, raw in targets.definitions.items():
        provider = raw.data.get("provider")
        feature = NOT_YET_PROVIDERS.get(provider.strip().lower()) if isinstance(provider, str) else None
        if feature is not None and name not in touched:
            found.append(Problem(file, raw.line or 1, f"target '{name}' (provider: {provider}) is unused here; "
                                 f"agentv-gate does not run {feature} yet, so a run that uses it is refused",
                                 severity="warning"))
    return found


def _unreachable_cost_limits(costed: dict[tuple[str, Path, int], set[str]], targets: TargetsConfig) -> list[Problem]:
    """A `total_budget_usd` or `cost_limit_usd` adds up the `cost_usd` the targets report, and only a
    cli agent reports one (when it prints it), or a target with prices (`price_per_1k_*`, applied to
    its reported tokens): a limit whose cases run on other targets only can never be reached. AgentV
    2.19 runs such a suite (its model providers report no cost either), so it is a warning that the
    limit stops nothing, which `--strict` makes an error."""
    problems = []
    for (key, file, line), names in costed.items():
        kinds = {name: _kind(targets, name) for name in sorted(names)}
        if any(kind is None or PROVIDERS[kind].reports_cost or (PROVIDERS[kind].reports_tokens and _priced(targets, name))
               for name, kind in kinds.items()):
            continue  # a cli agent may report a cost (or the target is unknown: reported above)
        described = ", ".join(f"'{name}' ({kind})" for name, kind in kinds.items())
        problems.append(no_effect(file, line, key, f"it can never be reached: target{'s' if len(kinds) > 1 else ''} "
                                  f"{described} report{'' if len(kinds) > 1 else 's'} no cost_usd; only a cli agent "
                                  "that prints one, or a target with price_per_1k_input/output, does",
                                  f"no '{key}', or a cli target that reports cost_usd, or prices on the target"))
    return problems


def _priced(targets: TargetsConfig, name: str) -> bool:
    raw = targets.definitions.get(_resolved_name(targets, name)) if name in targets else None
    return raw is not None and any(raw.data.get(key) not in (None, "") for key in PRICE_KEYS)


def _kind(targets: TargetsConfig, name: str) -> str | None:
    """The provider kind a target's entry names, None when unknown (no such target, or from the environment)."""
    raw = targets.definitions.get(_resolved_name(targets, name)) if name in targets else None
    provider = raw.data.get("provider") if raw is not None else None
    return normalise_provider(provider) if isinstance(provider, str) else None
