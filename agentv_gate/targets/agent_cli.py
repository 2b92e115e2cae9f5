"""What AgentV 4.42's agent-CLI targets (`copilot-cli`, `claude-cli`) share: the prompt document they are
given, the folder they run in, and the settings both read, checked in one place so the two say the same."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import TargetsConfigError
from .base import ProviderRequest
from .cli_target import resolve_folder
from .config import TargetConfig

DEFAULT_TIMEOUT_SECONDS = 90 * 60.0
"""AgentV's `DEFAULT_COPILOT_TIMEOUT_MS`; the Claude CLI has none there, and gets the same here."""
DETAIL_CHARS = 2000
"""How much of an agent's stderr an error keeps (its end)."""


def prompt_document(question: str, input_files: list[str]) -> str:
    """AgentV's `buildPromptDocument`: the input files to read first (when there are some), then the query."""
    parts: list[str] = []
    files = list(dict.fromkeys(str(Path(f).absolute()) for f in input_files))
    if files:
        listing = "\n".join(f"* [{Path(f).name}](file://{f})" for f in files)
        block = "\n".join([f"Read all input files:\n{listing}.",
                           "If any file is missing, fail with ERROR: missing-file <filename> and stop.",
                           "Then apply system_instructions on the user query below."])
        parts += ["\n", block]
    parts += ["\n[[ ## user_query ## ]]\n", question.strip()]
    return "\n".join(parts).strip()


def text_setting(value: Any, describe: str, key: str) -> str | None:
    """A setting that must be text: trimmed, None when empty or unset."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise TargetsConfigError(f"{describe}: {key} must be text, got {value!r}")
    return value.strip() or None


def timeout_setting(timeout: Any, describe: str) -> float:
    """`timeout_seconds`: a positive number, else the default."""
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0):
        raise TargetsConfigError(f"{describe}: timeout_seconds must be a positive number of seconds, got {timeout!r}")
    return DEFAULT_TIMEOUT_SECONDS if timeout is None else float(timeout)


def check_stream_log(stream_log: Any, describe: str) -> None:
    """`stream_log` is read as AgentV checks it, though no log is written here."""
    if stream_log is not None and stream_log not in (False, "false", "raw", "summary"):
        raise TargetsConfigError(f"{describe}: stream_log must be false, 'raw', or 'summary', got {stream_log!r}")


def agent_cwd(request: ProviderRequest, cwd: str | None, target: TargetConfig) -> Path | None:
    """Where the agent runs, as AgentV's `request.cwd ?? config.cwd ?? process.cwd()`: the case's workspace,
    else `cwd` (relative to the eval file's folder), else None (the folder agentv-gate runs in)."""
    run = request.run
    if run is not None and run.workspace_path:
        return Path(run.workspace_path)
    if cwd is None:
        return None
    return resolve_folder(cwd, run.eval_dir if run is not None else None, lambda: target.repo_root)
