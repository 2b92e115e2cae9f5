"""Raw evaluator mappings -> validated `EvaluatorConfig`s with scripts and prompts resolved.

Validation errors are raised as located `EvalFileError`s naming the field and what was
expected, so `validate` can print `file:line: ...` for each.
"""

from __future__ import annotations

import functools
import os
import shlex
import shutil
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from ..errors import EvalFileError
from ..models import (
    EVALUATOR_KINDS,
    CodeJudgeConfig,
    CompositeConfig,
    EvaluatorConfig,
    LlmJudgeConfig,
    TargetAccessConfig,
    aggregator_kind,
)
from .problems import Problem
from .refs import SearchRoots
from .yaml_lines import item_line, line_of

_ADAPTER: TypeAdapter[EvaluatorConfig] = TypeAdapter(EvaluatorConfig)

TYPE_ALIASES = {
    "code": "code_judge",
    "code_grader": "code_judge",
    "llm_grader": "llm_judge",
    "rubric": "llm_judge",
    "rubrics": "llm_judge",
    "code_evaluator": "code_judge",
    "script": "code_judge",
    "llm": "llm_judge",
    "llm_evaluator": "llm_judge",
    "judge": "llm_judge",
    "json": "is_json",
    "is_valid_json": "is_json",
    "match": "regex",
    "equal": "equals",
    "exact_match": "equals",
}

# AgentV 3+ assertion names that are `contains` with settings.
CONTAINS_VARIANTS: dict[str, dict[str, bool]] = {
    "contains_all": {},
    "contains_any": {"any": True},
    "icontains": {"case_sensitive": False},
    "icontains_all": {"case_sensitive": False},
    "icontains_any": {"case_sensitive": False, "any": True},
}

PROMPT_FILE_SUFFIXES = {".md", ".txt", ".prompt", ".markdown", ".j2", ".tmpl"}
EXECUTABLE_PROMPT_RUNTIMES = {".py": ["python3"], ".js": ["node"], ".mjs": ["node"], ".ts": ["bun", "run"]}
SCRIPT_SUFFIXES = {".py", ".js", ".mjs", ".cjs", ".ts", ".sh", ".rb", ".pl", ".bash"}


def normalise_kind(raw: Any) -> str:
    kind = str(raw).strip().lower().replace("-", "_")
    return TYPE_ALIASES.get(kind, kind)


@functools.lru_cache(maxsize=256)
def _on_path(command: str, search_path: str) -> bool:
    """Whether `command` is found on `search_path`; asked once per command, not once per case."""
    return shutil.which(command, path=search_path) is not None


def _looks_like_path(token: str) -> bool:
    return "/" in token or Path(token).suffix.lower() in SCRIPT_SUFFIXES


def resolve_script(
    script: Any, line: int, roots: SearchRoots, cwd: Path | None, problems: list[Problem], file: Path
) -> list[str]:
    """argv with every path-like token made absolute; a missing script file is an error.

    A string is shell-split (never run through a shell). Tokens that name an existing file are
    resolved from `cwd` (or the eval folder), then the repo root; a token that looks like a script
    path but exists nowhere is reported, since the judge could never run.
    """
    if isinstance(script, str):
        try:
            argv = shlex.split(script)
        except ValueError as exc:
            raise EvalFileError(line, f"script cannot be split into arguments: {exc}", "a command line") from None
    elif isinstance(script, list) and all(isinstance(t, (str, int, float)) for t in script):
        argv = [str(t) for t in script]
    else:
        raise EvalFileError(line, f"script must be a string or a list of strings, got {type(script).__name__}",
                            "script: [python3, judge.py] or script: python3 judge.py")
    if not argv:
        raise EvalFileError(line, "script is empty", "a command to run")
    out: list[str] = []
    for index, token in enumerate(argv):
        if token.startswith("-") or not _looks_like_path(token):
            out.append(token)
            continue
        try:
            resolved = roots.resolve(token, line, "script file", base=cwd)
        except EvalFileError:
            if index == 0 and shutil.which(token):
                out.append(token)
                continue
            raise
        out.append(str(resolved))
        if index == 0 and not os.access(resolved, os.X_OK):
            raise EvalFileError(line, f"script file {token!r} is not executable",
                                f"chmod +x {token}, or name an interpreter first: [python3, {token}]")
    if not _looks_like_path(argv[0]) and not _on_path(argv[0], os.environ.get("PATH", "")):
        problems.append(Problem(file, line, f"command {argv[0]!r} is not on PATH here", severity="warning"))
    return out


def parse_evaluators(
    raw_list: Any, roots: SearchRoots, file: Path, problems: list[Problem], *, name_required: bool = True
) -> list[EvaluatorConfig]:
    """Each entry validated on its own: one bad evaluator is reported, the others still load."""
    if raw_list is None:
        return []
    if not isinstance(raw_list, list):
        raise EvalFileError(line_of(raw_list), "evaluators must be a list", "a YAML list of evaluator mappings")
    configs: list[EvaluatorConfig] = []
    for index, raw in enumerate(raw_list):
        line = item_line(raw_list, index, line_of(raw_list))
        try:
            configs.append(parse_evaluator(raw, roots, file, problems, name_required=name_required, index=index, line=line))
        except EvalFileError as exc:
            problems.append(Problem(file, exc.line, exc.message, exc.expected))
    return configs


def _pydantic_message(exc: ValidationError) -> tuple[str, str | None]:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"] if str(p) not in EVALUATOR_KINDS)
    msg = first["msg"]
    if first["type"] == "missing":
        return f"missing required field '{where}'", f"'{where}' to be set"
    return f"field '{where}': {msg}", None


def parse_evaluator(
    raw: Any, roots: SearchRoots, file: Path, problems: list[Problem], *, name_required: bool = True, index: int = 0,
    line: int | None = None,
) -> EvaluatorConfig:
    line = line_of(raw, line or 1)
    if isinstance(raw, str):
        raw = {"name": normalise_kind(raw), "type": raw}
    if not isinstance(raw, dict):
        raise EvalFileError(line, f"evaluator must be a mapping, got {type(raw).__name__}", "name: ..., type: ...")
    data = dict(raw)
    if "type" not in data or data["type"] in (None, ""):
        raise EvalFileError(line, "evaluator is missing 'type'", f"one of {', '.join(EVALUATOR_KINDS)}")
    kind = normalise_kind(data["type"])
    if kind not in EVALUATOR_KINDS and kind not in CONTAINS_VARIANTS:
        raise EvalFileError(line, f"unknown evaluator type {data['type']!r}", f"one of {', '.join(EVALUATOR_KINDS)}")
    if kind in CONTAINS_VARIANTS:
        data = {**CONTAINS_VARIANTS[kind], **data}
        kind = "contains"
    data["type"] = kind
    if not data.get("name"):
        if name_required:
            raise EvalFileError(line, f"{kind} evaluator is missing 'name'", "a name for the evaluator")
        data["name"] = kind if index == 0 else f"{kind}_{index + 1}"
    if kind == "code_judge" and not data.get("script") and data.get("command"):
        data["script"] = data.pop("command")  # gen3 name
    if kind == "code_judge" and not data.get("script"):
        raise EvalFileError(line, f"code_judge '{data['name']}' has no 'script'",
                            "script: [python3, judge.py] or script: python3 judge.py")
    if kind == "code_judge" and "target" in data:
        data["target"] = _target_access(data["target"], getattr(raw, "key_lines", {}).get("target", line), data["name"])
        if data["target"] is None:
            del data["target"]
    if "timeout" in data and "timeout_seconds" not in data:
        data["timeout_seconds"] = data.pop("timeout")
    if kind == "composite":
        children = data.get("evaluators", data.get("assert"))
        data.pop("assert", None)
        if not isinstance(children, list) or not children:
            raise EvalFileError(line, f"composite '{data['name']}' has no 'evaluators'", "a list of child evaluators")
        data["evaluators"] = []
    try:
        config = _ADAPTER.validate_python(data)
    except ValidationError as exc:
        message, expected = _pydantic_message(exc)
        raise EvalFileError(line, f"{kind} evaluator '{data.get('name')}': {message}", expected) from None
    config.source_file = file
    config.source_line = line
    if isinstance(config, CodeJudgeConfig):
        cwd = _resolve_cwd(config.cwd, roots, line)
        config.resolved_cwd = cwd
        config.resolved_script = resolve_script(config.script, line, roots, cwd, problems, file)
    elif isinstance(config, LlmJudgeConfig):
        _resolve_prompt(config, roots, line, problems, file)
    elif isinstance(config, CompositeConfig):
        config.evaluators = parse_evaluators(children, roots, file, problems, name_required=False)
        aggregator = config.aggregator or {}
        script = aggregator.get("path", aggregator.get("script"))
        if aggregator_kind(aggregator) == "code_judge" and isinstance(script, (str, list)) and script:
            # Found, checked and kept inside the repository root exactly as a code_judge's own script.
            cwd = _resolve_cwd(aggregator.get("cwd"), roots, line)
            config.resolved_aggregator_cwd = cwd
            config.resolved_aggregator_script = resolve_script(script, line, roots, cwd, problems, file)
    return config


def _target_access(value: Any, line: int, name: str) -> dict[str, Any] | None:
    """A code judge's `target:` as AgentV writes it: `true` (default limit), `false` (none), or
    `{max_calls: N}`. Anything else is refused here rather than read as no model access."""
    if value is True:
        return {}
    if value is False:
        return None
    if isinstance(value, dict):
        try:
            TargetAccessConfig.model_validate(value)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise EvalFileError(line, f"code_judge '{name}': target.{where}: {first['msg']}",
                                "target: {max_calls: N} with N a whole number >= 0") from None
        return dict(value)
    raise EvalFileError(line, f"code_judge '{name}': target must be true or a mapping, got {value!r}",
                        "target: true, or target: {max_calls: 20}")


def _resolve_cwd(cwd: str | None, roots: SearchRoots, line: int) -> Path | None:
    if not cwd:
        return None
    try:
        folder = (roots.eval_dir / cwd).resolve()
        is_dir = folder.is_dir()
    except (OSError, ValueError, RuntimeError) as exc:  # name too long, NUL byte, symlink loop
        raise EvalFileError(line, f"cwd {cwd!r} is not a usable path: {exc}", "an existing folder") from None
    if not is_dir:
        raise EvalFileError(line, f"cwd {cwd!r} is not a folder ({folder})", "an existing folder")
    if not roots.allow_outside_root and not roots.inside_root(folder):
        raise EvalFileError(line, f"cwd {cwd!r} resolves outside the repository root ({folder})",
                            f"a folder inside {roots.repo_root} (or run with --allow-outside-root)")
    return folder


def _resolve_prompt(config: LlmJudgeConfig, roots: SearchRoots, line: int, problems: list[Problem], file: Path) -> None:
    prompt = config.prompt
    if prompt is None:
        return
    if not isinstance(prompt, str):
        config.resolved_prompt_script = resolve_script(prompt.script, line, roots, None, problems, file)
        return
    candidate = prompt.strip()
    suffix = Path(candidate).suffix.lower() if "\n" not in candidate and len(candidate) < 1024 else ""
    if suffix in EXECUTABLE_PROMPT_RUNTIMES:
        path = roots.resolve(candidate, line, "prompt template")
        config.resolved_prompt_script = [*EXECUTABLE_PROMPT_RUNTIMES[suffix], str(path)]
        config.resolved_prompt_path = path
        return
    if suffix in PROMPT_FILE_SUFFIXES:
        path = roots.resolve(candidate, line, "prompt file")
        config.resolved_prompt_path = path
        try:
            config.resolved_prompt_text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise EvalFileError(line, f"prompt file {candidate!r} cannot be read: {exc}", "a UTF-8 text file") from None
        return
    config.resolved_prompt_text = prompt
