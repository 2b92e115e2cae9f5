"""AgentV 4.42's `claude-cli` target: Claude Code's CLI run once per case, its stream-json events read.

```yaml
- name: claude
  provider: claude-cli
  model: claude-sonnet-4-5        # optional: --model
  max_turns: 20                   # optional: --max-turns
  timeout_seconds: 900
```

As AgentV's `ClaudeCliProvider` does it: `EXECUTABLE -p --output-format stream-json --include-partial-messages
--verbose --dangerously-skip-permissions [--model MODEL] [--max-turns N]` (`bypass_permissions: false` leaves
out the permission flag; the executable is `executable`, `command` or `binary`, else `claude` on PATH), the
prompt document (the input files to read first, then `[[ ## user_query ## ]]` and the question) on stdin, in
the case's workspace, else `cwd` (from the eval file's folder), else where agentv-gate runs, without the
`CLAUDECODE` and `CLAUDE_CODE_ENTRYPOINT` markers of a Claude session around it. Each `assistant` event is an
output message (its text, its `tool_use` blocks as tool calls); the `result` event gives the cost, the
duration and the tokens. The answer is the last assistant message's text.

A missing program (`Claude CLI executable 'claude' was not found on PATH ...`, as AgentV says it), an exit code
other than 0 (its stderr, else stdout, in the error) and the timeout are the case's error. AgentV has no
timeout unless one is set; here the default is 90 minutes. Its stream log (`stream_log`, `log_dir`,
`log_format`) is not written here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..base.defaults import DEFAULT_MAX_RESPONSE_BYTES
from ..errors import ProviderError, TargetsConfigError
from ..models import Message, TargetResponse
from ..transport.process import run_script
from .agent_cli import DETAIL_CHARS, agent_cwd, check_stream_log, prompt_document, text_setting, timeout_setting
from .base import ProviderRequest
from .config import TargetConfig
from .settings import ClaudeCliSettings

SESSION_MARKERS = ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT")
"""What AgentV's `sanitizeEnvForClaude` removes, so the CLI runs inside another Claude session too."""


def _events(stdout: str) -> list[dict[str, Any]]:
    events = []
    for line in stdout.splitlines():
        try:
            event = json.loads(line.strip())
        except ValueError:
            continue
        if isinstance(event, dict):
            events.append(event)
    return events


def _text_of(content: Any) -> str | None:
    """AgentV's `extractTextContent`: a string as it is, a list's text blocks joined by newlines, else none."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    parts = [part["text"] for part in content if isinstance(part, dict) and part.get("type") == "text"
             and isinstance(part.get("text"), str)]
    return "\n".join(parts) if parts else None


def _tool_calls(content: Any) -> list[dict[str, Any]]:
    if not isinstance(content, list):
        return []
    return [{"tool": part["name"], "input": part.get("input"),
             **({"id": part["id"]} if isinstance(part.get("id"), str) else {})}
            for part in content if isinstance(part, dict) and part.get("type") == "tool_use"
            and isinstance(part.get("name"), str)]


def _number(value: Any) -> int | float | None:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    return int(value) if float(value).is_integer() else float(value)


class ClaudeCliProvider:
    kind = "claude-cli"

    def __init__(self, target: TargetConfig) -> None:
        self.name = target.name
        self.target = target
        settings = target.read(ClaudeCliSettings)
        where = target.describe()
        self.executable = text_setting(settings.executable, where, settings.key_of("executable")) or "claude"
        self.model = text_setting(settings.model, where, settings.key_of("model"))
        self.cwd = text_setting(settings.cwd, where, settings.key_of("cwd"))
        turns = settings.max_turns
        self.max_turns = turns if isinstance(turns, int) and not isinstance(turns, bool) else None
        bypass = settings.bypass_permissions
        if bypass is not None and bypass not in (True, False, "true", "false"):
            raise TargetsConfigError(f"{where}: bypass_permissions must be true or false, got {bypass!r}")
        self.bypass_permissions = bypass not in (False, "false")
        self.timeout_seconds = timeout_setting(settings.timeout_seconds, where)
        check_stream_log(settings.stream_log, where)
        cap = settings.max_response_bytes
        if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 1):
            raise TargetsConfigError(f"{where}: max_response_bytes must be a whole number of bytes >= 1, got {cap!r}")
        self.max_response_bytes = DEFAULT_MAX_RESPONSE_BYTES if cap is None else cap

    def __repr__(self) -> str:
        return f"ClaudeCliProvider(name={self.name!r}, timeout_seconds={self.timeout_seconds})"

    def argv(self) -> list[str]:
        return [self.executable, "-p", "--output-format", "stream-json", "--include-partial-messages", "--verbose",
                *(["--dangerously-skip-permissions"] if self.bypass_permissions else []),
                *(["--model", self.model] if self.model else []),
                *(["--max-turns", str(self.max_turns)] if self.max_turns is not None else [])]

    def invoke(self, request: ProviderRequest) -> TargetResponse:
        cwd = agent_cwd(request, self.cwd, self.target)
        where = self.target.describe()
        result = run_script(self.argv(), prompt_document(request.question, request.input_files), self.timeout_seconds,
                            cwd=cwd, max_output_bytes=self.max_response_bytes, unset=SESSION_MARKERS)
        if result.spawn_error is not None:
            if result.spawn_error.startswith("command not found"):
                raise ProviderError(f"{where}: Claude CLI executable '{self.executable}' was not found on PATH. "
                                    "Install claude-code or ensure it is in PATH.")
            raise ProviderError(f"{where}: {result.spawn_error}")
        if result.timed_out:
            raise ProviderError(f"{where}: Claude CLI timed out after {self.timeout_seconds:g}s")
        if result.exit_code != 0:
            detail = self.target.redact(result.stderr.strip() or result.stdout.strip())[-DETAIL_CHARS:]
            failure = result.failure() if result.exit_code is None or result.exit_code < 0 else \
                f"exited with code {result.exit_code}"
            raise ProviderError(f"{where}: Claude CLI {failure}" + (f": {detail}" if detail else ""))
        if result.stdout_truncated:
            raise ProviderError(f"{where}: Claude CLI printed more than {self.max_response_bytes} bytes; raise "
                                "max_response_bytes if that is expected")
        return self._response(_events(result.stdout), result.duration_ms, cwd)

    def _response(self, events: list[dict[str, Any]], duration_ms: int, cwd: Path | None) -> TargetResponse:
        messages: list[Message] = []
        cost: float | None = None
        tokens: dict[str, Any] | None = None
        for event in events:
            if event.get("type") == "assistant" and isinstance(event.get("message"), dict):
                content = event["message"].get("content")
                calls = _tool_calls(content)
                text = _text_of(content)
                messages.append(Message.model_validate({"role": "assistant", **({"content": text} if text is not None
                                                                                   else {}),
                                                        **({"tool_calls": calls} if calls else {})}))
            elif event.get("type") == "result":
                reported_cost = _number(event.get("total_cost_usd"))
                cost = float(reported_cost) if reported_cost is not None else cost
                reported = _number(event.get("duration_ms"))
                duration_ms = int(reported) if reported is not None else duration_ms
                usage = event.get("usage")
                if isinstance(usage, dict):
                    read = _number(usage.get("cache_read_input_tokens"))
                    tokens = {"input": sum(_number(usage.get(k)) or 0 for k in (
                        "input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")),
                              "output": _number(usage.get("output_tokens")) or 0,
                              **({"cached": read} if read is not None else {})}
        text = next((m.content for m in reversed(messages) if "content" in m.model_fields_set), "")
        return TargetResponse(text=text if isinstance(text, str) else "", output_messages=messages, token_usage=tokens,
                              cost_usd=cost, duration_ms=duration_ms,
                              raw={**({"cwd": str(cwd)} if cwd is not None else {})})
