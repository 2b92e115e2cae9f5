"""AgentV's `execution:` extras and `workspace:` hooks, read into typed settings, every mistake located.

`execution.trials` and `execution.targets` may be written by the suite or by a test (the test's
wins); `total_budget_usd`, `fail_on_error` and `cache` steer the whole suite, so a test writing
them is an error rather than a setting silently read as the suite's. `workspace.hooks` are
commands resolved here like a code judge's script, so a missing script stops the run before any
case does.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from pydantic import ValidationError

from ..base.defaults import MAX_DURATION_MS, MAX_REJUDGE
from ..base.key_checks import not_yet_message
from ..base.problems import Problem, no_effect
from ..base.template_links import outside_link
from ..base.trial_strategies import AGENTV_STRATEGIES
from ..errors import EvalFileError
from ..models import (
    HOOK_NAMES,
    SETUP_HOOK_TIMEOUT_MS,
    TEARDOWN_HOOK_TIMEOUT_MS,
    HookConfig,
    RepoSpec,
    SuiteExecution,
    TrialsConfig,
    WorkspaceConfig,
)
from .eval_file_keys import (
    HOOK_KEYS,
    REPO_KEYS,
    SUITE_ONLY_EXECUTION_KEYS,
    WORKSPACE_KEYS,
    declared,
    key_problems,
)
from .evaluator_files import SCRIPT_SUFFIXES
from .evaluator_parser import resolve_script, written_value
from .refs import SearchRoots
from .workspace_file import read_workspace_file
from .yaml_lines import key_line, line_of

SUITE_ONLY_HOOKS = ("before_all", "after_all")
"""Run once per suite, so only the suite's `workspace:` may hold them."""


def parse_trials(raw: Any, line: int) -> TrialsConfig | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise EvalFileError(line_of(raw, line), f"'trials' must be a mapping, got {raw!r}",
                            "trials: {count: 3, strategy: pass_at_k}")
    try:
        return TrialsConfig.model_validate(dict(raw))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "trials"
        key = str(first["loc"][0]) if first["loc"] else ""
        raise EvalFileError(key_line(raw, key, line_of(raw, line)), f"trials.{where}: {first['msg']}{written_value(first)}",
                            f"count: 1..100, strategy: {' | '.join(AGENTV_STRATEGIES)}, "
                            "cost_limit_usd: a number >= 0") from None


def parse_targets(raw: Any, line: int) -> list[str] | None:
    if raw is None:
        return None
    if isinstance(raw, list) and any(isinstance(entry, dict) for entry in raw):
        raise EvalFileError(line_of(raw, line), not_yet_message(
            "targets", "a target defined in the eval file, with its own use_target and hooks (AgentV 4.42's eval "
            "target refs)"), "target names from targets.yaml: targets: [gpt-4o, claude]")
    if (not isinstance(raw, list) or not raw
            or not all(isinstance(name, str) and name.strip() for name in raw)):
        raise EvalFileError(line_of(raw, line), f"'targets' must be a non-empty list of target names, got {raw!r}",
                            "targets: [gpt-4o, claude]")
    names = [name.strip() for name in raw]
    if len(set(names)) != len(names):
        raise EvalFileError(line_of(raw, line), f"'targets' names a target twice: {names}", "each target once")
    return names


def suite_execution(execution: Any) -> SuiteExecution:
    """`total_budget_usd` (4.x: `budget_usd`), `fail_on_error`, `cache` and 4.x's `workers` of a suite's
    `execution:` (defaults when absent)."""
    budget_key = budget_name(execution)
    if "total_budget_usd" in execution and "budget_usd" in execution:
        raise EvalFileError(key_line(execution, "budget_usd"), "'budget_usd' and 'total_budget_usd' are one setting "
                            "(AgentV 4.x's name and 2.x's), written twice: only one would be read",
                            "either 'budget_usd' (AgentV 4.x) or 'total_budget_usd' (2.x)")
    budget = execution.get(budget_key)
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, (int, float)) or budget < 0):
        raise EvalFileError(key_line(execution, budget_key), f"{budget_key} {budget!r} is not a "
                            "number >= 0", f"{budget_key}: 5.0")
    workers = execution.get("workers")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= 50):
        # AgentV 4.42 ignores such a value (no cap): said here, since a cap the author wrote is not applied
        raise EvalFileError(key_line(execution, "workers"), f"'workers' must be a whole number from 1 to 50, got "
                            f"{workers!r}", "workers: 4 (at most 4 of the suite's cases at once)")
    flags: dict[str, bool] = {}
    for key, default in (("fail_on_error", False), ("cache", True)):
        value = execution.get(key, default)
        if not isinstance(value, bool):
            raise EvalFileError(key_line(execution, key), f"'{key}' must be true or false, got {value!r}",
                                f"{key}: {str(not default).lower()}")
        flags[key] = value
    rejudge = execution.get("rejudge_on_fail")
    if rejudge is not None and (isinstance(rejudge, bool) or not isinstance(rejudge, int)
                                or not 0 <= rejudge <= MAX_REJUDGE):
        raise EvalFileError(key_line(execution, "rejudge_on_fail"), f"'rejudge_on_fail' must be a whole number "
                            f"from 0 to {MAX_REJUDGE}, got {rejudge!r}",
                            "rejudge_on_fail: 2 (a failing LLM judge verdict is asked twice more; the majority decides)")
    return SuiteExecution(total_budget_usd=None if budget is None else float(budget), workers=workers,
                          rejudge_on_fail=rejudge, **flags)


def budget_name(execution: Any) -> str:
    """The name a suite's budget is written under: `budget_usd` (AgentV 4.x) or `total_budget_usd` (2.x)."""
    return "budget_usd" if isinstance(execution, dict) and "budget_usd" in execution else "total_budget_usd"


def suite_only_problems(execution: Any, file: Path, where: str) -> list[Problem]:
    """A test's `execution` may not set what steers the whole suite: said at its line, never read."""
    if not isinstance(execution, dict):
        return []
    return [Problem(file, key_line(execution, key, line_of(execution)),
                    f"'{key}' in {where} applies to the whole suite: write it in the suite's 'execution'",
                    f"execution: {{{key}: ...}} at the top of the file")
            for key in SUITE_ONLY_EXECUTION_KEYS if key in execution]


WRITTEN_ONCE = ("threshold", "target")
"""Settings a suite or a test may write beside its `execution:` or in it, but not in both."""


def written_twice_problems(holder: Any, execution: Any, where: str, file: Path) -> list[Problem]:
    """A setting written both beside `execution:` and in it, and a `target` that `execution.targets`
    replaces: one of the two would never be read, so neither is guessed at. (AgentV 2.19 reads a
    test's `execution.threshold` and the suite's `execution.target`; agentv-gate read the other one.)"""
    if not isinstance(holder, dict) or not isinstance(execution, dict):
        return []
    problems = [Problem(file, key_line(execution, key, line_of(execution)),
                        f"'{key}' is written twice in {where}: here and at line {key_line(holder, key)}; "
                        "only one is read", f"one '{key}', beside 'execution' or in it")
                for key in WRITTEN_ONCE if key in holder and key in execution]
    if "targets" in execution:
        matrix = key_line(execution, "targets", line_of(execution))
        problems.extend(Problem(file, key_line(mapping, "target", line_of(mapping)),
                                f"'target' of {where} is never read: its 'execution.targets' (line {matrix}) "
                                "runs it on each of those targets",
                                "'targets' for a matrix, or 'target' for one target, not both")
                        for mapping in (holder, execution) if "target" in mapping)
    return problems


def blank_target_line(holder: Any, execution: Any) -> int | None:
    """Where a `target:` (beside `execution:` or in it) names no target: empty, blank or null, as an
    unset `${{ VAR }}` leaves it. Such a case ran on the default target, which is not what was written."""
    for mapping in (holder, execution):
        if isinstance(mapping, dict) and "target" in mapping:
            value = mapping["target"]
            if value is None or (isinstance(value, str) and not value.strip()):
                return key_line(mapping, "target", line_of(mapping))
    return None


BLANK_TARGET = "'target' names no target (an unset ${{ VAR }}?)"


def parse_input_files(raw: Any, line: int) -> list[Any]:
    """`input_files:` as AgentV reads it: a non-empty list of paths (an empty one makes AgentV skip the test)."""
    if not isinstance(raw, list) or not raw:
        raise EvalFileError(line_of(raw, line), "'input_files' lists no file" if isinstance(raw, list)
                            else "'input_files' must be a list of paths", "input_files: [path, ...]")
    return raw


def parse_workspace(raw: Any, line: int, roots: SearchRoots, file: Path, problems: list[Problem], *,
                    suite: bool, inherited: WorkspaceConfig | None = None,
                    cwd_base: Path | None = None) -> WorkspaceConfig | None:
    """A `workspace:` with its hooks resolved; a test's hooks replace the suite's of the same name.
    A string is the path of a workspace file (`workspace_file.py`), read as AgentV reads it."""
    if raw is None:
        return inherited
    if isinstance(raw, str):
        return _workspace_file(raw, line, roots, problems, suite=suite, inherited=inherited)
    if not isinstance(raw, dict):
        raise EvalFileError(line_of(raw, line), f"'workspace' must be a mapping, got {raw!r}",
                            "workspace: {hooks: {before_all: {command: [python3, setup.py]}}}")
    where = "the suite's 'workspace'" if suite else "a test's 'workspace'"
    found = key_problems(raw, WORKSPACE_KEYS, "workspace", where, file)
    named = repos_problems(raw, file)
    problems.extend([*(p for p in found if not (named and p.message.startswith("'repos' "))), *named])
    problems.extend(_mode_problems(raw, line, file))
    raw = declared(raw, WORKSPACE_KEYS)
    if not named and "repos" in raw:
        inherited_repos = parse_repos(raw["repos"], key_line(raw, "repos", line), roots, file, problems)
        extra: dict[str, Any] = {"repos": inherited_repos, "pooled": raw.get("mode") != "temp"}
    else:
        extra = {} if inherited is None else {"repos": inherited.repos, "pooled": inherited.pooled}
    template = inherited.template if inherited is not None else None
    template_links = inherited.template_roots if inherited is not None else ()
    if not suite and "isolation" in raw:  # 4.42 reads the isolation of the suite's (first test's) workspace
        problems.append(Problem(file, key_line(raw, "isolation", line), not_yet_message(
            "isolation", "a test's own workspace isolation"), "isolation in the suite's 'workspace'"))
    isolation = _isolation(raw if suite else {}, line, file, inherited)
    if raw.get("template") is not None:
        template = workspace_template(raw["template"], key_line(raw, "template", line), roots, cwd_base)
        template_links = template_roots(template, roots)
    hooks_raw = raw.get("hooks")
    hooks = dict(inherited.hooks) if inherited is not None else {}
    resets = dict(inherited.resets) if inherited is not None else {}
    if hooks_raw is None:
        return WorkspaceConfig(hooks=hooks, template=template, template_roots=template_links, resets=resets,
                               **isolation, **extra)
    if not isinstance(hooks_raw, dict):
        raise EvalFileError(line_of(hooks_raw, key_line(raw, "hooks", line)), "'hooks' must be a mapping",
                            f"hooks: {{{', '.join(f'{n}: ...' for n in HOOK_NAMES)}}}")
    problems.extend(key_problems(hooks_raw, HOOK_NAMES, "hooks", f"{where} hooks", file))
    hooks_raw = declared(hooks_raw, HOOK_NAMES)
    for name in HOOK_NAMES:
        if name not in hooks_raw:
            continue
        at = key_line(hooks_raw, name, line)
        if not suite and name in SUITE_ONLY_HOOKS:
            raise EvalFileError(at, f"'{name}' runs once per suite: write it in the suite's 'workspace'",
                                "before_each / after_each in a test's workspace")
        hook = _hook(name, hooks_raw[name], at, roots, file, problems, cwd_base)
        if hook is not None:
            hooks[name] = hook
        mode = hooks_raw[name].get("reset") if isinstance(hooks_raw[name], dict) else None
        if mode is not None:
            resets.pop(name, None)
        if name in RESET_HOOKS and mode in ("fast", "strict"):
            resets[name] = (mode, file, key_line(hooks_raw[name], "reset", at))
    if isolation.get("isolation") == "per_test" and "after_all" in hooks_raw:
        problems.append(no_effect(file, key_line(hooks_raw, "after_all", line), "after_all", PER_TEST_AFTER_ALL))
    return WorkspaceConfig(hooks=hooks, template=template, template_roots=template_links, resets=resets,
                           **isolation, **extra)


REMOVED_REPO_KEYS = {"checkout": "workspace.repos[].checkout has been removed. Use top-level commit, base_commit, "
                                 "and ancestor.",
                     "clone": "workspace.repos[].clone has been removed. Use top-level sparse if needed."}
"""AgentV 4.42's own errors for its 2.x repository keys (repo-config-parser.ts)."""


def parse_repos(raw: Any, line: int, roots: SearchRoots, file: Path, problems: list[Problem]) -> list[RepoSpec]:
    """AgentV 4.x's `repos:` (`path`, `repo`, `commit` / `base_commit`, `ancestor`, `sparse`), each located.
    A local source (a path, `file://`) must lie inside the repository root, as every file the gate reads; a
    relative one is found from the working folder, as 4.42's `git clone` finds it."""
    if not isinstance(raw, list):
        raise EvalFileError(line_of(raw, line), "'repos' must be a list", "repos: [{path: lib, repo: ./vendor/lib}]")
    specs = []
    for index, item in enumerate(raw):
        at = line_of(item, line)
        if not isinstance(item, dict):
            raise EvalFileError(at, f"repos[{index}] must be a mapping", "- {path: lib, repo: file:///srv/lib.git}")
        for key, message in REMOVED_REPO_KEYS.items():
            if key in item:
                raise EvalFileError(key_line(item, key, at), message, "commit / base_commit / ancestor / sparse")
        problems.extend(key_problems(item, REPO_KEYS, "repo", f"repos[{index}]", file))
        item = declared(item, REPO_KEYS)
        texts = {key: item.get(key) for key in ("path", "repo", "commit", "base_commit")}
        for key, value in texts.items():
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise EvalFileError(key_line(item, key, at), f"repos[{index}].{key} must be text, got {value!r}",
                                    f"{key}: ...")
        if not texts["path"] or not texts["repo"]:  # 4.42 skips such a repository, cloning nothing
            problems.append(no_effect(file, at, f"repos[{index}]", "AgentV 4.42 clones a repository only with both "
                                      "'path' and 'repo'"))
            continue
        commit, base = texts["commit"], texts["base_commit"]
        if commit is not None and base is not None and commit != base:
            raise EvalFileError(key_line(item, "base_commit", at), "workspace.repos[].commit and "
                                "workspace.repos[].base_commit must match.", "one of the two")
        ancestor = item.get("ancestor", 0)
        if isinstance(ancestor, bool) or not isinstance(ancestor, int) or ancestor < 0:
            raise EvalFileError(key_line(item, "ancestor", at), f"repos[{index}].ancestor must be a whole number "
                                f">= 0, got {ancestor!r}", "ancestor: 1")
        sparse = item.get("sparse") or []
        if not isinstance(sparse, list) or not all(isinstance(s, str) and s.strip() for s in sparse):
            raise EvalFileError(key_line(item, "sparse", at), f"repos[{index}].sparse must be a list of folders",
                                "sparse: [src, docs]")
        where = Path(texts["path"])
        if where.is_absolute() or ".." in where.parts:
            raise EvalFileError(key_line(item, "path", at), f"repos[{index}].path {texts['path']!r} leaves the "
                                "workspace", "a folder inside the workspace: path: lib")
        specs.append(RepoSpec(path=texts["path"], repo=texts["repo"], ref=commit or base or "HEAD",
                              source=_repo_source(texts["repo"], key_line(item, "repo", at), roots),
                              ancestor=ancestor, sparse=list(sparse), source_file=file, source_line=at))
    return specs


GITHUB_SHORTHAND = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
"""`org/name`: 4.42 clones it from GitHub (repo-identity.ts), even when such a folder exists here."""


def clone_url(repo: str) -> str:
    """What git clones, as 4.42's resolveRepoCloneUrl: `org/name` is GitHub's, anything else as written."""
    trimmed = repo.strip()
    return f"https://github.com/{trimmed}.git" if GITHUB_SHORTHAND.match(trimmed) else trimmed


def _repo_source(repo: str, line: int, roots: SearchRoots) -> str:
    """What git clones: a URL as 4.42 makes it, or a local folder, resolved and kept inside the repository."""
    url = clone_url(repo)
    if url.startswith("file://"):
        local = Path(unquote(urlparse(url).path))
    elif "://" in url or re.match(r"^[^/]+@[^/:]+:", url):
        return url  # remote: cloned as written (here the network may be blocked: the clone's error says so)
    else:
        local = Path(url).expanduser()
    folder = (Path.cwd() / local).resolve()
    if not roots.allow_outside_root and not roots.inside_root(folder):
        raise EvalFileError(line, f"repo {repo!r} is outside the repository root ({folder})",
                            "a repository inside this one, a URL (or --allow-outside-root)")
    if not folder.exists():
        raise EvalFileError(line, f"repo {repo!r} not found (resolved to {folder}, from the working folder, "
                            "as AgentV's git clone finds it)", "an existing git repository")
    return str(folder)


PER_TEST_AFTER_ALL = ("with isolation: per_test AgentV 4.42 runs after_all on no workspace (only on a shared one); "
                      "after_each runs for every case")


def _isolation(raw: dict[Any, Any], line: int, file: Path, inherited: WorkspaceConfig | None) -> dict[str, Any]:
    """`isolation: shared | per_test` (AgentV's schema); any other value is a typo 4.42 would drop, running the
    suite shared: refused at its line."""
    if "isolation" not in raw:
        return {} if inherited is None else {"isolation": inherited.isolation, "isolation_at": inherited.isolation_at}
    at, value = key_line(raw, "isolation", line), raw["isolation"]
    if value not in ("shared", "per_test"):
        raise EvalFileError(at, f"workspace 'isolation' must be shared or per_test, got {value!r}",
                            "isolation: per_test (a workspace per case) or shared (the default)")
    return {"isolation": value, "isolation_at": (file, at)}


RESET_HOOKS = ("before_each", "after_each")
"""The hooks whose `reset` AgentV 4.42 acts on (2.19 acts on none without `repos`: said per case, loader/cases.py)."""
RESET_IN_2X = ("AgentV 2.19 resets only the workspace's 'repos' (git reset and clean), which agentv-gate refuses; "
               "AgentV 4.x resets the workspace itself")

WITHOUT_REPOS = ("AgentV 2.19 acts on it only for a workspace with 'repos' (which agentv-gate refuses); without "
                 "them every mode copies the template once per suite")


def _mode_problems(raw: Any, line: int, file: Path) -> list[Problem]:
    """`mode: pooled | temp` without `repos` changes nothing in AgentV 2.19 (it pools only repositories):
    a warning. `static` (a fixed folder, `path`) is not run yet; another value is a typo AgentV drops."""
    if "mode" not in raw:
        return []
    at, mode = key_line(raw, "mode", line), raw["mode"]
    if mode == "static":
        return [Problem(file, at, not_yet_message("mode: static", "reusable workspaces at a fixed path"))]
    if mode not in ("pooled", "temp"):
        return [Problem(file, at, f"workspace 'mode' must be pooled, temp or static, got {mode!r}",
                        "mode: pooled (the default) or temp")]
    return [] if "repos" in raw else [no_effect(file, at, "mode", WITHOUT_REPOS)]


def repos_problems(workspace: dict[Any, Any], file: Path) -> list[Problem]:
    """`repos:` refused at each repository's line, naming the source AgentV would `git clone` into the
    workspace (a URL needs the network; a local path is cloned from the folder AgentV was started in).
    agentv-gate clones none yet, and a case run without its repository would be scored on the wrong
    workspace."""
    repos = workspace.get("repos")
    if not isinstance(repos, list):
        return []
    found = []
    for index, repo in enumerate(repos):
        source = repo.get("source") if isinstance(repo, dict) else None
        where = source.get("url") or source.get("path") if isinstance(source, dict) else None
        if not where:
            continue
        at = line_of(source, line_of(repo, key_line(workspace, "repos")))
        found.append(Problem(file, at, f"workspace repository {where!r} (repos[{index}]) would be cloned into the "
                             "workspace with git, as AgentV 2.19 does: agentv-gate clones only AgentV 4.x's "
                             "form yet (repo:, commit:, sparse:; AgentV 4.42 refuses source:)",
                             "a workspace 'template' folder holding the files, or a before_all hook that "
                             "fetches them"))
    return found


def workspace_template(value: Any, line: int, roots: SearchRoots, base: Path | None = None) -> Path:
    """`template:` as AgentV 2.19 resolves it: relative to the eval file's folder (a workspace file's, for
    one written there); a `.code-workspace` file stands for the folder holding it. A missing template
    stops AgentV's whole run ("Workspace template not found"), so it is said here, before any case."""
    expected = "template: ./workspace-template (a folder, relative to the eval file)"
    if not isinstance(value, str) or not value.strip():
        raise EvalFileError(line, f"'template' must be a folder path, got {value!r}", expected)
    path = ((base or roots.eval_dir) / Path(value).expanduser()).resolve()
    if path.is_file():
        path = path.parent
    if not path.is_dir():
        raise EvalFileError(line, f"Workspace template not found: {value} (resolved to {path})", expected)
    if not roots.allow_outside_root and not roots.inside_root(path):
        raise EvalFileError(line, f"workspace template {value!r} is outside the repository root",
                            "a folder inside the repository (or --allow-outside-root)")
    found = outside_link(path, template_roots(path, roots))
    if found is not None:
        link, wrong = found
        raise EvalFileError(line, f"workspace template {value!r}: the link {link.relative_to(path)} {wrong}",
                            "a link to a file or folder inside the repository, or the file itself")
    return path


def template_roots(template: Path, roots: SearchRoots) -> tuple[Path, ...]:
    """Where a template's links may point: the repository, and the template itself (one outside the
    repository, with --allow-outside-root)."""
    return (roots.repo_root.resolve(), template)


def _workspace_file(ref: str, line: int, roots: SearchRoots, problems: list[Problem], *, suite: bool,
                    inherited: WorkspaceConfig | None) -> WorkspaceConfig | None:
    """The workspace a file holds, its paths relative to that file; its problems located in it."""
    data, path = read_workspace_file(ref, line, roots)
    try:
        return parse_workspace(data, 1, roots, path, problems, suite=suite, inherited=inherited, cwd_base=path.parent)
    except EvalFileError as exc:  # a line of the workspace file: said, at the eval file's `workspace:`
        raise EvalFileError(line, f"workspace file {ref}:{exc.line}: {exc.message}", exc.expected) from None


def _hook(name: str, raw: Any, line: int, roots: SearchRoots, file: Path, problems: list[Problem],
          cwd_base: Path | None = None) -> HookConfig | None:
    """The hook's command, resolved; None for a hook that only sets `reset` (nothing to run)."""
    expected = f"{name}: {{command: [python3, script.py], timeout_ms: 60000, cwd: ./scripts}}"
    if isinstance(raw, (str, list)):
        raw = {"command": raw}
    if not isinstance(raw, dict):
        raise EvalFileError(line_of(raw, line), f"hook '{name}' must be a mapping with 'command'", expected)
    problems.extend(key_problems(raw, HOOK_KEYS, "hook", f"hook '{name}'", file))
    raw = declared(raw, HOOK_KEYS)
    if "reset" in raw:
        reset_at = key_line(raw, "reset", line)
        if raw["reset"] not in ("none", "fast", "strict"):
            raise EvalFileError(reset_at, f"hook '{name}': reset must be none, fast or strict, got {raw['reset']!r}",
                                "reset: fast")
        if name not in RESET_HOOKS:
            problems.append(no_effect(file, reset_at, "reset", "AgentV resets a workspace only before "
                                      "before_each and after_each"))
        if "command" not in raw:
            return None
    if "command" not in raw:
        raise EvalFileError(line_of(raw, line), f"hook '{name}' has no 'command'", expected)
    cwd: Path | None = None
    if raw.get("cwd") is not None:
        cwd = _folder(raw["cwd"], key_line(raw, "cwd", line), roots, name, cwd_base)
    command_at = key_line(raw, "command", line)
    argv = resolve_script(hook_command(raw["command"], command_at, file, problems), command_at, roots, cwd,
                          problems, file, verbatim=lambda token: _not_a_path(token, cwd or cwd_base or roots.eval_dir))
    default = SETUP_HOOK_TIMEOUT_MS if name.startswith("before") else TEARDOWN_HOOK_TIMEOUT_MS
    timeout = raw.get("timeout_ms", default)
    if isinstance(timeout, bool) or not isinstance(timeout, int) or timeout <= 0:
        raise EvalFileError(key_line(raw, "timeout_ms", line), f"hook '{name}': timeout_ms {timeout!r} is not a "
                            "whole number of milliseconds > 0", "timeout_ms: 60000")
    if timeout > MAX_DURATION_MS:
        raise EvalFileError(key_line(raw, "timeout_ms", line), f"hook '{name}': timeout_ms {timeout} is longer "
                            "than any run waits", f"at most {MAX_DURATION_MS}")
    return HookConfig(name=name, argv=argv, timeout_ms=timeout, cwd=cwd, source_file=file, source_line=line)


SHELL_SIGNS = ("'", '"', "&&", "||", "|", ";", "$(", "`", ">", "<")
"""What in a string command means its author expected a shell, which AgentV 4.42 does not start."""


def hook_command(command: Any, line: int, file: Path, problems: list[Problem]) -> Any:
    """A string `command` split as AgentV 4.42 splits it (`parseCommandArray`): on whitespace, quotes kept,
    no shell; `git init && echo hi` runs git with `&&`, `echo` and `hi` as its arguments. When the string
    reads as shell, that is said (it changes no verdict: the hook runs as AgentV runs it)."""
    if not isinstance(command, str):
        return command
    words = command.split()
    if any(sign in command for sign in SHELL_SIGNS):
        problems.append(Problem(file, line, f"hook command {command!r} is split on whitespace and run without a "
                                "shell, as AgentV runs it: its quotes and shell operators reach the program as "
                                "they are", "command: [bash, -c, '...'] for a shell script", severity="warning"))
    return words


def _not_a_path(token: str, base: Path) -> bool:
    """A hook argument that names no file to find now: a script for `bash -c`, a word of a string split on
    whitespace (`>/dev/null;`), one with a `{{variable}}` (replaced when the hook runs, as AgentV does), or
    a folder, or a file the hook is to write (`out/log.txt`: no script's suffix, nothing there yet). AgentV passes every
    argument as written; a script that is missing is still said here."""
    if any(char.isspace() for char in token) or "{{" in token or any(sign in token for sign in SHELL_SIGNS):
        return True
    if (base / token).is_dir():  # a folder the hook is given (`--marketplace-source ../marketplace`)
        return True
    return Path(token).suffix.lower() not in SCRIPT_SUFFIXES and not os.path.lexists(base / token)


def _folder(value: Any, line: int, roots: SearchRoots, name: str, base: Path | None = None) -> Path:
    """A hook's `cwd`, relative to the eval file's folder (`base`: a workspace file's)."""
    if not isinstance(value, str) or not value.strip():
        raise EvalFileError(line, f"hook '{name}': cwd must be a folder path, got {value!r}", "cwd: ./scripts")
    base = base or roots.eval_dir
    folder = (base / value).resolve()
    if not folder.is_dir():
        raise EvalFileError(line, f"hook '{name}': cwd {value!r} is not a folder (from {base})",
                            "an existing folder, relative to the eval file")
    if not roots.allow_outside_root and not roots.inside_root(folder):
        raise EvalFileError(line, f"hook '{name}': cwd {value!r} is outside the repository root",
                            "a folder inside the repository (or --allow-outside-root)")
    return folder
