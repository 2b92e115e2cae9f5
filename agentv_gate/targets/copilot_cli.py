"""AgentV 4.42's `copilot-cli` target (alias `copilot`): GitHub Copilot CLI spoken to over the Agent Client Protocol.

```yaml
- name: copilot
  provider: copilot-cli
  model: ${{ COPILOT_MODEL }}        # optional: --model
  args: [--add-dir, /data]           # optional: more words after AgentV's own
  timeout_seconds: 600               # default 90 minutes, as AgentV
```

As AgentV's `CopilotCliProvider` does it, per case: `EXECUTABLE --acp --stdio --allow-all-tools --yolo
[--model MODEL] [ARGS...]` is started (the executable: `executable`, `command` or `binary`, else the native
`@github/copilot-<os>-<arch>` package's binary found in a `node_modules` folder from the working folder up,
else `copilot` on PATH) in the case's workspace, else `cwd`, else the folder agentv-gate runs in, and spoken to
in JSON-RPC lines: `initialize` (protocol 1, file and terminal capabilities), `session/new` (the folder, no MCP
servers), then `session/prompt` with the system prompt (when set) and AgentV's prompt document
(`[[ ## user_query ## ]]` and the question, after the list of input files when the case has some). Every
permission the agent asks for is granted. The answer is the text of its `agent_message_chunk` updates, its tool
calls those it reports completed (a rejected one fails the case, as in AgentV), its token usage and cost what it
reports. The program is killed at the timeout and once it has answered.

`base_url` (with `subprovider`, `api_key`, `bearer_token`, `api_version`, `api_format`) points Copilot at a
model provider of your own through its `COPILOT_PROVIDER_*` variables, as AgentV sets them. What the gate does
not do: AgentV's stream log (`stream_log`, `log_dir`, `log_format` are read and write nothing here) and its
copy of files Copilot writes under `~/.copilot/session-state/` (outside the repository: never read).

Failures are the case's error, never an answer: the program missing (`Failed to start Copilot CLI executable
...`, as AgentV says it), a JSON-RPC error (`Authentication required (code -32000)`: Copilot not signed in),
the program exiting before it answers (its stderr in the error), the timeout.
"""

from __future__ import annotations

import json
import platform
import time
from pathlib import Path
from typing import Any

from ..errors import ProviderError, TargetsConfigError
from ..models import Message, TargetResponse
from ..transport.process import LineSession, start_line_session
from .agent_cli import DETAIL_CHARS, agent_cwd, check_stream_log, prompt_document, text_setting, timeout_setting
from .base import ProviderRequest
from .config import TargetConfig
from .settings import CopilotCliSettings

PROTOCOL_VERSION = 1
"""The Agent Client Protocol version AgentV 4.42's SDK (@agentclientprotocol/sdk 0.14) speaks."""
BASE_ARGS = ("--acp", "--stdio", "--allow-all-tools", "--yolo")
_MAX_LINE_BYTES = 16 * 1024 * 1024
METHOD_NOT_FOUND = -32601


def native_binary(start: Path) -> Path | None:
    """The `@github/copilot-<os>-<arch>` package's binary in a `node_modules` folder from `start` up (10 levels,
    as AgentV's `resolvePlatformCliPath` walks), else None."""
    system = {"Linux": "linux", "Darwin": "darwin"}.get(platform.system())
    machine = {"x86_64": "x64", "amd64": "x64", "arm64": "arm64", "aarch64": "arm64"}.get(platform.machine().lower())
    if system is None or machine is None:
        return None
    folder = start.absolute()
    for _ in range(10):
        found = folder / "node_modules" / "@github" / f"copilot-{system}-{machine}" / "copilot"
        if found.is_file():
            return found
        if folder.parent == folder:
            break
        folder = folder.parent
    return None


def _words(value: Any, describe: str, key: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(word, str) for word in value):
        raise TargetsConfigError(f"{describe}: {key} must be a list of words, got {value!r}")
    return list(value)


class CopilotCliProvider:
    kind = "copilot-cli"

    def __init__(self, target: TargetConfig) -> None:
        self.name = target.name
        self.target = target
        settings = target.read(CopilotCliSettings)
        where = target.describe()
        self.executable = text_setting(settings.executable, where, settings.key_of("executable"))
        self.model = text_setting(settings.model, where, "model")
        self.args = _words(settings.args, where, settings.key_of("args"))
        self.cwd = text_setting(settings.cwd, where, "cwd")
        self.system_prompt = text_setting(settings.system_prompt, where, "system_prompt")
        self.timeout_seconds = timeout_setting(settings.timeout_seconds, where)
        check_stream_log(settings.stream_log, where)
        self.env = self._provider_env(settings)

    def __repr__(self) -> str:
        return f"CopilotCliProvider(name={self.name!r}, timeout_seconds={self.timeout_seconds})"

    def _provider_env(self, settings: CopilotCliSettings) -> dict[str, str]:
        """AgentV's `buildCopilotCliProviderEnv`: a model provider of the team's own, given by `base_url`."""
        where = self.target.describe()
        base_url = text_setting(settings.base_url, where, "base_url")
        if base_url is None:
            return {}
        env = {"COPILOT_PROVIDER_BASE_URL": base_url}
        for field, variable in (("subprovider", "COPILOT_PROVIDER_TYPE"), ("api_version", "COPILOT_PROVIDER_AZURE_API_VERSION"),
                                ("api_format", "COPILOT_PROVIDER_WIRE_API")):
            value = text_setting(getattr(settings, field), where, field)
            if value is not None:
                env[variable] = value
        bearer = text_setting(settings.bearer_token, where, "bearer_token")
        key = text_setting(settings.api_key, where, "api_key")
        if bearer is not None:
            env["COPILOT_PROVIDER_BEARER_TOKEN"] = bearer
        elif key is not None:
            env["COPILOT_PROVIDER_API_KEY"] = key
        return env

    def argv(self, cwd: Path | None) -> list[str]:
        executable = self.executable
        if executable is None or executable == "copilot":
            native = native_binary(cwd or Path.cwd())
            executable = str(native) if native is not None else "copilot"
        return [executable, *BASE_ARGS, *(["--model", self.model] if self.model else []), *self.args]

    def invoke(self, request: ProviderRequest) -> TargetResponse:
        cwd = agent_cwd(request, self.cwd, self.target)
        argv = self.argv(cwd)
        started = time.monotonic()
        session = start_line_session(argv, cwd=cwd, env=self.env or None, max_line_bytes=_MAX_LINE_BYTES)
        if isinstance(session, str):
            raise ProviderError(f"{self.target.describe()}: Failed to start Copilot CLI executable '{argv[0]}' for "
                                f"target '{self.name}'. {session}")
        try:
            return self._converse(session, request, cwd or Path.cwd(), started)
        finally:
            session.close()

    def _converse(self, session: LineSession, request: ProviderRequest, cwd: Path, started: float) -> TargetResponse:
        talk = _Conversation(self, session, started + self.timeout_seconds)
        talk.call("initialize", {"protocolVersion": PROTOCOL_VERSION,
                                 "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True},
                                                        "terminal": True}})
        created = talk.call("session/new", {"cwd": str(cwd), "mcpServers": []})
        session_id = created.get("sessionId") if isinstance(created, dict) else None
        prompt = [{"type": "text", "text": text} for text in
                  (self.system_prompt, prompt_document(request.question, request.input_files)) if text]
        reply = talk.call("session/prompt", {"sessionId": session_id, "prompt": prompt})
        usage = reply.get("usage") if isinstance(reply, dict) else None
        if isinstance(usage, dict) and isinstance(usage.get("totalTokens"), (int, float)) and usage["totalTokens"] > 0:
            talk.tokens = {"input": usage.get("inputTokens"), "output": usage.get("outputTokens"),
                           **({"reasoning": usage["thoughtTokens"]} if usage.get("thoughtTokens") is not None else {}),
                           **({"cached": usage["cachedReadTokens"]} if usage.get("cachedReadTokens") is not None else {})}
        rejected = [call["tool"] for call in talk.calls if isinstance(call.get("output"), dict)
                    and call["output"].get("code") in ("rejected", "denied")]
        if rejected:
            raise ProviderError(f"{self.target.describe()}: Copilot rejected {len(rejected)} tool call(s): "
                                f"{', '.join(rejected)}. Add args: [\"--yolo\"] to your target config or re-run with "
                                "--yolo to bypass permission checks.")
        messages: list[Message] = []
        if talk.calls:
            messages.append(Message.model_validate({"role": "assistant", "content": talk.text or None,
                                                    "tool_calls": talk.calls}))
        elif talk.text:
            messages.append(Message(role="assistant", content=talk.text))
        return TargetResponse(text=talk.text, output_messages=messages, token_usage=talk.tokens, cost_usd=talk.cost,
                              duration_ms=int((time.monotonic() - started) * 1000),
                              raw={"executable": session.argv[0], "cwd": str(cwd)})


class _Conversation:
    """One case's JSON-RPC exchange: calls made in turn, the agent's updates and requests answered between."""

    def __init__(self, provider: CopilotCliProvider, session: LineSession, deadline: float) -> None:
        self.provider = provider
        self.session = session
        self.deadline = deadline
        self.next_id = 0
        self.text = ""
        self.calls: list[dict[str, Any]] = []
        self.pending: dict[str, dict[str, Any]] = {}
        self.tokens: dict[str, Any] | None = None
        self.cost: float | None = None

    def _fail(self, message: str) -> ProviderError:
        stderr = self.provider.target.redact(self.session.stderr().strip())[-DETAIL_CHARS:]
        return ProviderError(f"{self.provider.target.describe()}: {message}" + (f"; stderr: {stderr}" if stderr else ""))

    def call(self, method: str, params: dict[str, Any]) -> Any:
        call_id = self.next_id
        self.next_id += 1
        if not self.session.send(json.dumps({"jsonrpc": "2.0", "id": call_id, "method": method, "params": params})):
            raise self._fail(f"Copilot CLI stopped reading its input before '{method}'")
        while True:
            try:
                line = self.session.read_line(self.deadline)
            except TimeoutError:
                raise ProviderError(f"{self.provider.target.describe()}: Copilot CLI timed out after "
                                    f"{self.provider.timeout_seconds:g}s") from None
            except ValueError as exc:
                raise self._fail(f"Copilot CLI wrote {exc}") from None
            if line is None:
                raise self._fail(f"Copilot CLI exited before it answered '{method}'")
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError:
                continue  # not a protocol line (a log line): the SDK skips it too
            if not isinstance(message, dict):
                continue
            if "method" in message:
                self._from_agent(message)
            elif message.get("id") == call_id:
                if "error" in message:
                    error = message["error"] if isinstance(message["error"], dict) else {}
                    code = f" (code {error['code']})" if "code" in error else ""
                    raise self._fail(f"{error.get('message', 'error')}{code}")
                return message.get("result")

    def _from_agent(self, message: dict[str, Any]) -> None:
        """A notification (`session/update`) or a request of the agent's, answered as AgentV's client answers."""
        method = message["method"]
        params: dict[str, Any] = message["params"] if isinstance(message.get("params"), dict) else {}
        if "id" in message:
            if method == "session/request_permission":  # every permission granted, for an unattended run
                reply: dict[str, Any] = {"result": {"outcome": {"outcome": "selected", "optionId": "allow"}}}
            else:
                reply = {"error": {"code": METHOD_NOT_FOUND, "message": f"Method not found: {method}"}}
            self.session.send(json.dumps({"jsonrpc": "2.0", "id": message["id"], **reply}))
            return
        if method == "session/update" and isinstance(params.get("update"), dict):
            self._update(params["update"])

    def _update(self, update: dict[str, Any]) -> None:
        kind = update.get("sessionUpdate")
        if kind == "agent_message_chunk":
            content = update.get("content")
            if isinstance(content, dict) and content.get("type") == "text" and isinstance(content.get("text"), str):
                self.text += content["text"]
        elif kind == "tool_call":
            call_id = str(update.get("toolCallId") or f"call-{len(self.calls) + len(self.pending)}")
            tool = update.get("title") or update.get("kind") or "unknown"
            status = update.get("status")
            if status in (None, "pending", "in_progress"):
                self.pending[call_id] = {"tool": tool, "input": update.get("rawInput"), "id": call_id,
                                         "started": time.monotonic()}
            if status in ("completed", "failed"):
                self.calls.append({"tool": tool, "input": update.get("rawInput"), "output": update.get("rawOutput"),
                                   "id": call_id, "duration_ms": 0})
        elif kind == "tool_call_update":
            call_id = str(update.get("toolCallId"))
            if update.get("status") in ("completed", "failed") and call_id in self.pending:
                begun = self.pending.pop(call_id)
                self.calls.append({"tool": begun["tool"], "input": begun["input"], "output": update.get("rawOutput"),
                                   "id": call_id, "duration_ms": int((time.monotonic() - begun["started"]) * 1000)})
        elif kind == "usage_update":
            self.tokens = {"input": update.get("used"), "output": 0}
            cost = update.get("cost")
            if isinstance(cost, dict) and cost.get("currency") == "USD" and isinstance(cost.get("amount"), (int, float)):
                self.cost = (self.cost or 0.0) + float(cost["amount"])
