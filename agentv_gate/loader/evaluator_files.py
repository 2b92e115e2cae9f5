"""The files an evaluator config names, found and checked where it is written: scripts, prompts, working folders.

A config is validated first and resolved after, into a copy carrying the `resolved_*` fields (see
models/config.py); nothing is set on a validated config in place. The table keyed by config class is in
evaluator_parser.py (`RESOLVERS`), beside the composite's, which parses its members first.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..base.problems import Problem
from ..errors import EvalFileError
from ..models import CodeJudgeConfig, LlmJudgeConfig
from .evaluator_written import Written
from .refs import SearchRoots
from .yaml_lines import key_line, yaml_kind

PROMPT_FILE_SUFFIXES = {".md", ".txt", ".prompt", ".markdown", ".j2", ".tmpl"}
EXECUTABLE_PROMPT_RUNTIMES = {".py": ["python3"], ".js": ["node"], ".mjs": ["node"], ".ts": ["bun", "run"]}
SCRIPT_SUFFIXES = {".py", ".js", ".mjs", ".cjs", ".ts", ".sh", ".rb", ".pl", ".bash"}


@functools.lru_cache(maxsize=256)  # pragma: no mutate - a cache of PATH lookups: only speed can change
def _on_path(command: str, search_path: str) -> bool:
    """Whether `command` is found on `search_path`; asked once per command, not once per case."""
    return shutil.which(command, path=search_path) is not None


def _looks_like_path(token: str) -> bool:
    return "/" in token or Path(token).suffix.lower() in SCRIPT_SUFFIXES


def resolve_script(
    script: Any, line: int, roots: SearchRoots, cwd: Path | None, problems: list[Problem], file: Path,
    verbatim: Callable[[str], bool] | None = None,
) -> list[str]:
    """argv with every path-like token made absolute; a missing script file is an error.

    A string is shell-split (never run through a shell). Tokens that name an existing file are
    resolved from `cwd` (or the eval folder), then the repo root; a token that looks like a script
    path but exists nowhere is reported, since the judge could never run. The command word itself
    is no exception: only a bare name (no `/`) falls back to a PATH lookup. A token `verbatim` says is
    no path (a hook's `bash -c` script, a `{{workspace_path}}/...` argument) is passed on as written.
    """
    if isinstance(script, str):
        try:
            argv = shlex.split(script)
        except ValueError as exc:
            raise EvalFileError(line, f"script cannot be split into arguments: {exc}", "a command line") from None
    elif isinstance(script, list) and all(isinstance(t, (str, int, float)) for t in script):
        argv = [str(t) for t in script]
    else:
        raise EvalFileError(line, f"script must be a string or a list of strings, got {_script_kind(script)}",
                            "script: [python3, judge.py] or script: python3 judge.py")
    if not argv:
        raise EvalFileError(line, "script is empty", "a command to run")
    out: list[str] = []
    for index, token in enumerate(argv):
        if token.startswith("-") or not _looks_like_path(token) or (verbatim is not None and verbatim(token)):
            out.append(token)
            continue
        try:
            resolved = roots.resolve(token, line, "script file", base=cwd)
        except EvalFileError as exc:
            # A bare command name (`tool.py` installed on PATH) may still be looked up there; a word
            # with a `/` is a path, and a path obeys the repository rule like every other reference.
            if index == 0 and "/" not in token and "outside" not in exc.message and shutil.which(token):
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


def _script_kind(script: Any) -> str:
    """`[[python3], x.py]` is "a list with a list in it": the list is not what is wrong."""
    if isinstance(script, list):
        odd = next((t for t in script if not isinstance(t, (str, int, float))), None)
        return f"a list with {yaml_kind(odd)} in it"
    return yaml_kind(script)


def resolve_cwd(cwd: str | None, roots: SearchRoots, line: int) -> Path | None:
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


PROMPT_FILE_PREFIX = "file://"
"""AgentV 4.x's mark for a prompt read from a file: without it, any string is the prompt's text."""

Resolved = dict[str, Any]
"""The `resolved_*` fields a config gets from its files, for `model_copy(update=...)`: never set on it in place."""


def _grader_prompt(config: LlmJudgeConfig, prompt: str, roots: SearchRoots, line: int,
                   problems: list[Problem], file: Path) -> Resolved:
    """A 4.x llm-grader's text prompt as 4.42 reads it: `file://path` is a template file; any other string is
    the text itself, however much it looks like a path (4.42 then grades with it as the criteria: said)."""
    if prompt.startswith(PROMPT_FILE_PREFIX):
        path = roots.resolve(prompt[len(PROMPT_FILE_PREFIX):].strip(), line, "prompt file")
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise EvalFileError(line, f"prompt file {prompt!r} cannot be read: {exc}", "a UTF-8 text file") from None
        return {"resolved_prompt_text": text, "resolved_prompt_path": path}
    candidate = prompt.strip()
    if "\n" not in candidate and Path(candidate).suffix.lower() in PROMPT_FILE_SUFFIXES | set(EXECUTABLE_PROMPT_RUNTIMES):
        problems.append(Problem(file, line, f"llm-grader '{config.name}': prompt {candidate!r} is read as the prompt's "
                                "text, not as a file: AgentV 4.x reads a file only after file:// (so it grades with "
                                "this text as the criteria)", f"prompt: file://{candidate}", severity="warning"))
    return {"resolved_prompt_text": prompt}


def _prompt(config: LlmJudgeConfig, roots: SearchRoots, line: int, problems: list[Problem], file: Path) -> Resolved:
    prompt = config.prompt
    if prompt is None:
        return {}
    if not isinstance(prompt, str):
        return {"resolved_prompt_script": resolve_script(prompt.script, line, roots, None, problems, file)}
    if config.generation == "4.x":
        return _grader_prompt(config, prompt, roots, line, problems, file)
    candidate = prompt.strip()
    suffix = Path(candidate).suffix.lower() if "\n" not in candidate and len(candidate) < 1024 else ""
    if suffix in EXECUTABLE_PROMPT_RUNTIMES:
        path = roots.resolve(candidate, line, "prompt template")
        return {"resolved_prompt_script": [*EXECUTABLE_PROMPT_RUNTIMES[suffix], str(path)], "resolved_prompt_path": path}
    if suffix in PROMPT_FILE_SUFFIXES:
        path = roots.resolve(candidate, line, "prompt file")
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise EvalFileError(line, f"prompt file {candidate!r} cannot be read: {exc}", "a UTF-8 text file") from None
        if not text.strip():
            raise EvalFileError(line, f"llm_judge evaluator '{config.name}': prompt file {candidate!r} is empty, so "
                                      "the judge would get no prompt", "the prompt text in the file")
        return {"resolved_prompt_path": path, "resolved_prompt_text": text}
    if not candidate:  # `prompt: ${{ PROMPT }}` with the variable unset: an empty user prompt, graded blind
        raise EvalFileError(line, f"llm_judge evaluator '{config.name}': the prompt is empty, so the judge would "
                                  "get no prompt", "prompt text, a prompt file, or no prompt (the default)")
    return {"resolved_prompt_text": prompt}


def judge_files(config: LlmJudgeConfig, w: Written) -> LlmJudgeConfig:
    """An llm_judge with its prompt file read, or its executable prompt's argv, and its `config` checked."""
    resolved = config.model_copy(update=_prompt(config, w.roots, key_line(w.raw, "prompt", w.line), w.problems,
                                                w.file))
    _check_judge_config(resolved, w.raw, w.line)
    return resolved


def code_judge_files(config: CodeJudgeConfig, w: Written) -> CodeJudgeConfig:
    """A code judge's working folder and its argv with the script path made absolute."""
    cwd = resolve_cwd(config.cwd, w.roots, key_line(w.raw, "cwd", w.line))
    # At the `script:` key (or `command:`), not the evaluator's `- name:` line above it.
    script_line = key_line(w.raw, "script", key_line(w.raw, "command", w.line))
    return config.model_copy(update={"resolved_cwd": cwd, "resolved_script": resolve_script(
        config.script, script_line, w.roots, cwd, w.problems, w.file)})


AGGREGATOR_RESULTS_VARIABLE = "{{EVALUATOR_RESULTS_JSON}}"
"""Where an LLM aggregator's prompt gets the members' results (replaced as written, as AgentV does)."""


def aggregator_prompt_file(aggregator: dict[str, Any], roots: SearchRoots, raw: Any, line: int) -> dict[str, Any]:
    """An LLM aggregator whose `prompt` names a file gets that file's text. AgentV 2.19 resolves the file
    (`promptPath`) and then sends the path itself as the prompt, so its judge never sees the members'
    results; the author evidently meant the file, which is read here (a deliberate difference, in the
    README). Text that names no file stays the prompt."""
    prompt = aggregator.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip() or "\n" in prompt.strip() or AGGREGATOR_RESULTS_VARIABLE in prompt:
        return aggregator
    at = key_line(raw.get("aggregator"), "prompt", line)
    named = prompt.strip().startswith(PROMPT_FILE_PREFIX)  # 4.x's explicit file: it must exist, as in 4.42
    try:
        path = roots.resolve(prompt.strip().removeprefix(PROMPT_FILE_PREFIX), at, "aggregator prompt file")
    except EvalFileError as exc:
        if named or "outside the repository root" in exc.message:
            raise
        return aggregator
    try:
        text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
    except (OSError, UnicodeDecodeError) as exc:
        raise EvalFileError(at, f"aggregator prompt file {prompt!r} cannot be read: {exc}", "a UTF-8 file") from None
    return {**aggregator, "prompt": text}


_CONFIG_VARIABLE = re.compile(r"\{\{\s*config\s*\}\}")
"""`{{config}}` in a prompt template, spelled as the template renderer reads variables."""


def _check_judge_config(config: LlmJudgeConfig, raw: Any, line: int) -> None:
    """An llm_judge's `config` reaches an executable prompt (in its payload) or a text prompt through
    `{{config}}`; the default prompt and the rubric prompt never show it, nor does a text without it."""
    if config.config is None or config.resolved_prompt_script:
        return
    if config.rubrics:
        why = "a rubric judge sends AgentV's rubric prompt, which does not show it"
    elif config.resolved_prompt_text is None:
        why = "the default prompt does not show it"
    elif _CONFIG_VARIABLE.search(config.resolved_prompt_text):
        return
    else:
        why = "its prompt has no {{config}}"
    raise EvalFileError(key_line(raw, "config", line), f"llm_judge evaluator '{config.name}': 'config' is read by no "
                                                       f"part of this judge: {why}",
                        "{{config}} in the prompt, a prompt script (it gets config in its payload), or no 'config'")
