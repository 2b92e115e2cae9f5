"""AgentV's project config, `.agentv/config.yaml`: the nearest one between an eval file and the
repository root, read as AgentV 2.19's `loadConfig` reads it.

Two of its settings change what a run does, and are read: `guideline_patterns` (which attached files
are guideline files: listed for the judge and the agent, left out of the question's text) and
`eval_patterns` (which files are suites when a folder is given). The rest (`execution.verbose`,
`trace_file`, ...) are AgentV's run-time preferences, which change no verdict; they are accepted.
AgentV skips a config whose pattern lists are not lists of text (with a warning); such a list is
refused here at its line, as AgentV's own `validate` refuses it.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..base.files import EscapingSymlinkError, nearest_agentv_file, project_root
from ..base.key_checks import did_you_mean
from ..base.problems import Problem, no_effect
from ..errors import ConfigError, EvalFileError
from .yaml_lines import key_line, load_yaml_text, read_text

CONFIG_NAMES = ("config.yaml", "config.yml")
PATTERN_KEYS = ("guideline_patterns", "eval_patterns")
IGNORED_CONFIG_KEYS = {
    "results": "AgentV 4.x keeps its results in a git repository it names here; agentv-gate writes its own files",
    "hooks": "AgentV 4.x runs hooks.before_session before its own interactive sessions; agentv-gate does not",
}
"""AgentV 4.x config.yaml keys that act only on AgentV's own CLI: accepted with a located warning."""
CONFIG_KEYS = frozenset({"$schema", "required_version", *PATTERN_KEYS, "execution", *IGNORED_CONFIG_KEYS})
"""The top-level keys of AgentV's config schema (`AgentVConfig`, 2.19 and 4.42)."""
EXECUTION_KEYS = frozenset({"verbose", "trace_file", "keep_workspaces", "otel_file", "pool_workspaces",
                            "pool_slots", "export_otel", "otel_backend", "otel_capture_content", "otel_group_turns"})
"""AgentV's `execution` defaults in config.yaml (2.19's, and the OpenTelemetry export 4.42 adds):
preferences for its own console, files and telemetry, nothing that changes a score."""


@dataclass(frozen=True)
class ProjectConfig:
    """What one config file says: its pattern lists (None when unset) and the problems found reading it."""

    path: Path
    guideline_patterns: tuple[str, ...] | None = None
    eval_patterns: tuple[str, ...] | None = None
    problems: tuple[Problem, ...] = field(default_factory=tuple)


def nearest_config(eval_file: Path, repo_root: Path) -> Path | None:
    """The `.agentv/config.yaml` AgentV would read for `eval_file`: in its folder or the nearest above,
    up to the repository root (and never above the git top level, `project_root`). One that is a symlink
    resolving outside the repository raises `ConfigError`, located."""
    bound = project_root(eval_file.parent)
    stop = repo_root if repo_root.resolve() == bound.resolve() or bound.resolve() in repo_root.resolve().parents \
        else bound
    try:
        return nearest_agentv_file(eval_file.parent, CONFIG_NAMES, stop)
    except EscapingSymlinkError as exc:
        raise ConfigError(f"{exc.filename}:1: {exc.strerror}", problems=[
            Problem(Path(exc.filename), 1, str(exc.strerror), "a config.yaml inside the repository")]) from None


@functools.lru_cache(maxsize=64)
def _read_cached(path: Path, mtime_ns: int) -> ProjectConfig:
    del mtime_ns  # part of the cache key only: an edited config is read again
    problems: list[Problem] = []
    try:
        data = load_yaml_text(read_text(path))
    except EvalFileError as exc:
        return ProjectConfig(path, problems=(Problem(path, exc.line, exc.message, exc.expected),))
    if not isinstance(data, dict):
        return ProjectConfig(path)
    lists: dict[str, tuple[str, ...] | None] = {}
    for key in PATTERN_KEYS:
        value = data.get(key)
        if value is None:
            lists[key] = None
        elif isinstance(value, list) and all(isinstance(item, str) for item in value):
            lists[key] = tuple(value)
        else:
            lists[key] = None
            problems.append(Problem(path, key_line(data, key), f"'{key}' must be a list of glob patterns (text)",
                                    f'{key}: ["**/*.instructions.md"]'))
    for key in data:
        if str(key) not in CONFIG_KEYS:
            problems.append(Problem(path, key_line(data, str(key)),
                                    f"unknown key '{key}' in .agentv/config.yaml{did_you_mean(str(key), CONFIG_KEYS)}",
                                    unknown_key=True))
    problems.extend(no_effect(path, key_line(data, key), key, why)
                    for key, why in IGNORED_CONFIG_KEYS.items() if key in data)
    execution = data.get("execution")
    if isinstance(execution, dict):
        problems.extend(Problem(path, key_line(execution, str(key)),
                                f"unknown key '{key}' in .agentv/config.yaml's execution"
                                f"{did_you_mean(str(key), EXECUTION_KEYS)}", unknown_key=True)
                        for key in execution if str(key) not in EXECUTION_KEYS)
    return ProjectConfig(path, lists["guideline_patterns"], lists["eval_patterns"], tuple(problems))


def read_project_config(path: Path) -> ProjectConfig:
    """The config file at `path`, read once per version of the file."""
    try:
        mtime = path.stat().st_mtime_ns
    except OSError:
        mtime = 0
    return _read_cached(path, mtime)


def guideline_patterns_for(eval_file: Path, repo_root: Path) -> tuple[str, ...]:
    """The `guideline_patterns` AgentV applies to `eval_file`'s attachments: none without a config."""
    config = nearest_config(eval_file, repo_root)
    if config is None:
        return ()
    return read_project_config(config).guideline_patterns or ()


def project_config_problems(configs: Iterable[Path]) -> list[Problem]:
    """The problems of each config file, once per file."""
    return [problem for config in dict.fromkeys(configs) for problem in read_project_config(config).problems]
