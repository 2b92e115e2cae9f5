"""AgentV 4.x's `agentv` provider: a model named `provider:model`, asked once or in a tool loop.

AgentV 4.42 builds it from `model: openai:gpt-5-mini` (`anthropic:<id>`, `azure:<id>`, `google:<id>`) and
`temperature` (default 0); the API key comes from the provider's environment variable (`OPENAI_API_KEY`,
`ANTHROPIC_API_KEY`), never from the file. It is the one grader that runs AgentV's built-in agent mode:
an llm-grader graded by it gets filesystem tools, and the provider runs the loop (pi-ai's agent loop in
`invokePiAi`): call the model; while its reply asks for tools and fewer than `max_steps` calls were made,
run each call in order, send each result back, call again. The answer is the text of the last reply,
which may still ask for tools when the budget ran out (the grader then reads no verdict in it).

Per call, as pi-ai sends it: `openai:` is chat completions (`tools: [{type: function, function: {name,
description, parameters, strict: false}}]`, the model's `tool_calls` sent back on its assistant turn with
their arguments as compact JSON, each result a `{role: tool, tool_call_id, content}` message);
`anthropic:` is the Messages API (`tools: [{name, description, input_schema}]`, `tool_use` blocks sent
back, each result a `tool_result` block of one user turn; pi-ai's prompt-cache marks on the system prompt, the
last tool and the last user block). A call to a tool that was not offered gets
pi-ai's words as its result (`pi-ai adapter: model called unknown tool 'NAME'`); arguments that are not a
JSON object are read as `{}` (pi-ai repairs what it can of broken JSON, and reads `{}` otherwise).

What differs from AgentV: the gate asks for each reply whole (pi-ai streams it); `base_url` (`endpoint`)
is the gate's own setting, for a proxy or a local model (AgentV always calls the provider's public API and
ignores the key); `azure:` (pi-ai's Responses API with Azure's resource variables) and `google:` are
refused when the target is used, naming what is missing. The whole loop runs under the target's retry
policy's total time (`retry_max_total_seconds`): a loop that has not ended by then is this call's error.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import ProviderError, TargetsConfigError
from ..models import Message, TargetResponse
from ..redaction import redact
from ..transport.http_policy import HttpCallError, post_json
from ..transport.limiter import estimate_tokens
from .base import ProviderRequest, ProviderTool
from .config import TargetConfig
from .http_settings import limiter_for, retry_policy_for
from .openai_compat import chat_completion_text
from .settings import AgentvSettings

DEFAULT_SYSTEM_PROMPT = "You are a careful assistant. Follow all provided instructions and do not fabricate results."
"""pi-ai adapter's system prompt when a request brings none (AgentV 4.42's llm-providers.ts)."""

WIRES: dict[str, tuple[str, str, str]] = {
    "openai": ("chat", "https://api.openai.com/v1", "OPENAI_API_KEY"),
    "anthropic": ("anthropic", "https://api.anthropic.com", "ANTHROPIC_API_KEY"),
}
"""`provider:` prefix -> (wire format, pi-ai's base URL, the environment variable pi-ai reads the key from)."""
NOT_RUN = {
    "azure": "pi-ai's azure-openai-responses API, addressed by AZURE_OPENAI_RESOURCE_NAME / AZURE_OPENAI_BASE_URL",
    "google": "pi-ai's google-generative-ai API",
}
"""Prefixes AgentV 4.42 accepts that the gate does not run yet, with what they would need."""
ANTHROPIC_VERSION = "2023-06-01"
ANTHROPIC_MAX_TOKENS = 16_384 // 3
"""pi-ai's `max_tokens` for a model it does not know: a third of its fallback model's 16,384."""


EPHEMERAL = {"type": "ephemeral"}
"""pi-ai's prompt-cache mark (its default retention), on the system prompt, the last tool and the last user
block of every Messages call."""


def _cached_last_user_block(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages with the last one's last block marked for the prompt cache when it is a user turn, as
    pi-ai marks it (a text turn becomes one text block), the conversation kept unmarked for the next call."""
    if not messages or messages[-1]["role"] != "user":
        return messages
    last = messages[-1]["content"]
    blocks: list[dict[str, Any]] = [{"type": "text", "text": last}] if isinstance(last, str) else [dict(b) for b in last]
    blocks[-1]["cache_control"] = EPHEMERAL
    return [*messages[:-1], {"role": "user", "content": blocks}]


def unknown_tool_text(name: str) -> str:
    return f"pi-ai adapter: model called unknown tool '{name}'"


def parse_model(model: str, where: str) -> tuple[str, str]:
    """`openai:gpt-5-mini` -> ("openai", "gpt-5-mini"), refused in AgentV 4.42's words otherwise."""
    provider, colon, model_id = model.partition(":")
    if not colon:
        raise TargetsConfigError(f'{where}: model: Invalid agentv model "{model}". Expected "provider:model" '
                                 '(e.g., "openai:gpt-5-mini").')
    if provider in NOT_RUN:
        raise TargetsConfigError(f"{where}: model '{model}': an agentv model on '{provider}:' is an AgentV feature "
                                 f"agentv-gate does not run yet ({NOT_RUN[provider]}); openai: and anthropic: "
                                 "models run")
    if provider not in WIRES:
        raise TargetsConfigError(f'{where}: model: Unsupported agentv provider "{provider}" in "{model}". '
                                 "Supported: openai, anthropic, azure, google.")
    return provider, model_id


@dataclass
class _Turn:
    """One model reply: its text, the tools it asks for (`{id, name, arguments}`), usage, and the raw turn
    to send back on the next call."""

    text: str
    calls: list[dict[str, Any]]
    usage: dict[str, Any] | None
    echo: dict[str, Any]
    raw: dict[str, Any] = field(default_factory=dict)


def _arguments(value: Any) -> dict[str, Any]:
    """A call's arguments as the tools get them: a JSON object, else `{}`."""
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else {}
        except ValueError:
            return {}
    return value if isinstance(value, dict) else {}


def tool_result_text(tool: ProviderTool | None, name: str, arguments: dict[str, Any]) -> str:
    """What goes back for one call: the tool's result (text as is, else compact JSON), or the error it raised."""
    if tool is None:
        return unknown_tool_text(name)
    try:
        output = tool.execute(arguments)
    except Exception as exc:  # noqa: BLE001 - a failing tool is the model's to read, as pi-ai sends it
        return str(exc)
    return output if isinstance(output, str) else json.dumps(output, ensure_ascii=False, separators=(",", ":"))


class AgentvProvider:
    kind = "agentv"

    def __init__(self, target: TargetConfig) -> None:
        self.name = target.name
        self.target = target
        settings = target.read(AgentvSettings)
        model = target.required(settings, "model")
        if not isinstance(model, str):
            raise TargetsConfigError(f"{target.describe()}: model must be text like \"openai:gpt-5-mini\"")
        self.provider, self.model = parse_model(model, target.describe())
        self.wire, default_url, self.key_variable = WIRES[self.provider]
        temperature = settings.temperature
        self.temperature = float(temperature) if isinstance(temperature, (int, float)) and \
            not isinstance(temperature, bool) else 0.0  # AgentV: a number, else 0
        base = str(settings.endpoint or default_url).rstrip("/")
        self.base_url = base[: -len("/v1")] if self.wire == "anthropic" and base.endswith("/v1") else base
        self.policy = retry_policy_for(target)
        self.limiter = limiter_for(target, self.policy)

    def __repr__(self) -> str:
        return f"AgentvProvider(name={self.name!r}, model={self.provider}:{self.model}, base_url={self.base_url!r})"

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions" if self.wire == "chat" else f"{self.base_url}/v1/messages"

    def _key(self) -> str:
        key = (os.environ.get(self.key_variable) or "").strip()
        if not key:
            raise ProviderError(f"{self.target.describe()}: no API key: AgentV's agentv provider reads it from "
                                f"{self.key_variable}, which is not set")
        return key

    def _headers(self, key: str) -> dict[str, str]:
        if self.wire == "chat":
            return {"Content-Type": "application/json", "Authorization": f"Bearer {key}"}
        return {"Content-Type": "application/json", "x-api-key": key, "anthropic-version": ANTHROPIC_VERSION}

    def _tools(self, tools: list[ProviderTool]) -> list[dict[str, Any]]:
        if self.wire == "chat":
            return [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                      "parameters": t.parameters, "strict": False}} for t in tools]
        out = [{"name": t.name, "description": t.description,
                "input_schema": {"type": "object", "properties": t.parameters.get("properties", {}),
                                 "required": t.parameters.get("required", [])}} for t in tools]
        if out:
            out[-1]["cache_control"] = EPHEMERAL
        return out

    def _body(self, system: str, messages: list[dict[str, Any]], request: ProviderRequest) -> dict[str, Any]:
        temperature = request.temperature if request.temperature is not None else self.temperature
        if self.wire == "chat":
            body: dict[str, Any] = {"model": self.model, "messages": [{"role": "system", "content": system},
                                                                      *messages]}
            if request.max_output_tokens:
                body["max_completion_tokens"] = request.max_output_tokens
        else:
            body = {"model": self.model, "max_tokens": request.max_output_tokens or ANTHROPIC_MAX_TOKENS,
                    "system": [{"type": "text", "text": system, "cache_control": EPHEMERAL}],
                    "messages": _cached_last_user_block(messages)}
        body["temperature"] = temperature
        if request.tools:
            body["tools"] = self._tools(request.tools)
        return body

    def _read(self, data: Any, retries: int) -> _Turn:
        describe = self.target.describe()
        if self.wire == "chat":
            text, usage, raw = chat_completion_text(data, describe, retries)
            message = data["choices"][0]["message"]
            calls = [{"id": str(call.get("id") or ""), "name": str((call.get("function") or {}).get("name") or ""),
                      "arguments": _arguments((call.get("function") or {}).get("arguments"))}
                     for call in message.get("tool_calls") or [] if isinstance(call, dict)]
            echo: dict[str, Any] = {"role": "assistant", "content": text or None}  # pi-ai's null without text
            if calls:
                echo["tool_calls"] = [{"id": c["id"], "type": "function", "function": {
                    "name": c["name"], "arguments": json.dumps(c["arguments"], ensure_ascii=False,
                                                               separators=(",", ":"))}} for c in calls]
            return _Turn(text, calls, usage, echo, raw)
        content = data.get("content") if isinstance(data, dict) else None
        if not isinstance(content, list):
            shape = list(data)[:8] if isinstance(data, dict) else type(data).__name__
            raise HttpCallError(f"{describe}: expected a Messages API reply with content blocks, got {shape}",
                                retries=retries)
        blocks = [b for b in content if isinstance(b, dict)]
        text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
        calls = [{"id": str(b.get("id") or ""), "name": str(b.get("name") or ""), "arguments": _arguments(b.get("input"))}
                 for b in blocks if b.get("type") == "tool_use"]
        usage = data.get("usage")
        tokens = {"input": usage.get("input_tokens"), "output": usage.get("output_tokens")} \
            if isinstance(usage, dict) else None
        kept = [{"type": "text", "text": str(b.get("text", ""))} if b.get("type") == "text" else
                {"type": "tool_use", "id": str(b.get("id") or ""), "name": str(b.get("name") or ""),
                 "input": _arguments(b.get("input"))}
                for b in blocks if (b.get("type") == "text" and str(b.get("text", "")).strip())
                or b.get("type") == "tool_use"]
        return _Turn(text, calls, tokens, {"role": "assistant", "content": kept},
                     {"model": data.get("model"), "id": data.get("id"), "stop_reason": data.get("stop_reason")})

    def _results(self, turn: _Turn, tools: list[ProviderTool]) -> list[dict[str, Any]]:
        """The messages that answer `turn`'s tool calls, each call run in order."""
        by_name = {tool.name: tool for tool in tools}
        texts = [(call, tool_result_text(by_name.get(call["name"]), call["name"], call["arguments"]))
                 for call in turn.calls]
        if self.wire == "chat":
            return [{"role": "tool", "content": text, "tool_call_id": call["id"]} for call, text in texts]
        return [{"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call["id"], "content": text,
             "is_error": call["name"] not in by_name} for call, text in texts]}]

    def invoke(self, request: ProviderRequest) -> TargetResponse:
        key = self._key()
        secrets = {*self.target.secrets, key}
        system = request.system_prompt.strip() if request.system_prompt and request.system_prompt.strip() \
            else DEFAULT_SYSTEM_PROMPT
        messages: list[dict[str, Any]] = [{"role": "user", "content": request.question.strip()}]
        tools = list(request.tools)
        max_steps = max(1, request.max_steps) if tools else 1
        started = time.monotonic()
        retries, steps, tool_calls = 0, 0, 0
        used: dict[str, int] = {"input": 0, "output": 0}

        def call() -> _Turn:
            nonlocal retries, steps
            left = self.policy.max_total_seconds - (time.monotonic() - started)
            if left <= 0:
                raise ProviderError(f"{self.target.describe()}: the tool loop did not end within "
                                    f"{self.policy.max_total_seconds:g}s ({steps} model call(s), {tool_calls} tool "
                                    "call(s))")
            body = self._body(system, messages, request)
            result = post_json(self.url, body, headers=self._headers(key), secrets=secrets,
                               policy=replace(self.policy, max_total_seconds=left),
                               describe=self.target.describe(), limiter=self.limiter,
                               tokens=estimate_tokens(body) if self.limiter.counts_tokens else 0)
            retries += result.retries
            steps += 1
            turn = self._read(result.data, result.retries)
            for name in used:
                value = (turn.usage or {}).get(name)
                if isinstance(value, int) and not isinstance(value, bool):
                    used[name] += value
            return turn

        turn = call()
        while tools and turn.calls and steps < max_steps:
            tool_calls += len(turn.calls)
            messages.append(turn.echo)
            messages.extend(self._results(turn, tools))
            turn = call()
        raw = {**turn.raw, **({"steps": steps, "tool_calls": tool_calls} if tools else {})}
        return TargetResponse(text=turn.text, output_messages=[Message(role="assistant", content=turn.text)],
                              token_usage=dict(used), retries=retries, raw=redact_raw(raw, secrets))


def redact_raw(raw: dict[str, Any], secrets: set[str]) -> dict[str, Any]:
    return {key: redact(value, secrets) if isinstance(value, str) else value for key, value in raw.items()}


__all__ = ["AgentvProvider", "parse_model"]
