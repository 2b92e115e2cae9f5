"""Anthropic Messages API (`POST /v1/messages`).

Keys as AgentV resolves them: `api_key` (sent as `x-api-key`), `model ?? deployment ?? variant`,
`temperature`, `max_output_tokens` (the API requires one; default 4096), `thinking_budget`
(extended thinking), plus `base_url`/`endpoint` (default https://api.anthropic.com),
`anthropic_version` (default 2023-06-01), `system_prompt` and the retry keys.

The Messages API wants the system prompt apart and strictly alternating user/assistant turns
starting with a user turn, so the case's messages are folded to fit. A request's
`reply_schema` is not sent (the judge asks for its JSON in the prompt and parses the reply).
"""

from __future__ import annotations

from typing import Any

from ..errors import TargetsConfigError
from ..models import TargetResponse
from ..transport.http_policy import HttpCallError
from .base import ProviderRequest
from .chat_params import optional_number
from .config import TargetConfig
from .openai_compat import HttpChatProvider, chat_messages, text_response
from .settings import AnthropicSettings

DEFAULT_ANTHROPIC_BASE_URL = "https://api.anthropic.com"
DEFAULT_ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096


def fold_messages(messages: list[dict[str, str]]) -> tuple[str | None, list[dict[str, str]]]:
    """(system text, alternating user/assistant turns starting with user)."""
    system_parts = [m["content"] for m in messages if m["role"] == "system" and m["content"]]
    turns: list[dict[str, str]] = []
    for message in messages:
        if message["role"] == "system":
            continue
        role = "assistant" if message["role"] == "assistant" else "user"
        if turns and turns[-1]["role"] == role:
            turns[-1] = {"role": role, "content": f"{turns[-1]['content']}\n\n{message['content']}"}
        else:
            turns.append({"role": role, "content": message["content"]})
    if not turns or turns[0]["role"] != "user":
        turns.insert(0, {"role": "user", "content": "(continue)"})
    return ("\n\n".join(system_parts) or None), turns


class AnthropicProvider(HttpChatProvider):
    kind = "anthropic"

    def __init__(self, target: TargetConfig) -> None:
        super().__init__(target)
        settings = target.read(AnthropicSettings)
        base = str(settings.endpoint or DEFAULT_ANTHROPIC_BASE_URL).rstrip("/")
        self.base_url = base[: -len("/v1")] if base.endswith("/v1") else base
        self._api_key = str(target.required(settings, "api_key"))
        self.model = str(target.required(settings, "model"))
        self.version = str(settings.anthropic_version or DEFAULT_ANTHROPIC_VERSION)
        self.thinking_budget = optional_number(target, "thinking_budget", settings.thinking_budget)
        if self.options.reasoning_effort is not None or self.options.reasoning_model is not None:
            raise TargetsConfigError(
                f"{target.describe()}: reasoning_effort and reasoning_model are OpenAI/Azure keys; "
                "Anthropic's extended thinking is set with thinking_budget"
            )

    def __repr__(self) -> str:
        return f"AnthropicProvider(name={self.name!r}, base_url={self.base_url!r}, model={self.model!r})"

    @property
    def url(self) -> str:
        return f"{self.base_url}/v1/messages"

    def build_body(self, request: ProviderRequest) -> dict[str, Any]:
        system, turns = fold_messages(chat_messages(request, self.system_prompt))
        max_tokens = (
            request.max_output_tokens if request.max_output_tokens is not None else self.max_output_tokens
        )
        body: dict[str, Any] = {
            "model": request.model or self.model,
            "max_tokens": int(max_tokens) if max_tokens is not None else DEFAULT_MAX_TOKENS,
            "messages": turns,
        }
        if system:
            body["system"] = system
        temperature = request.temperature if request.temperature is not None else self.temperature
        if self.thinking_budget is not None:
            # Extended thinking rejects a temperature other than 1, so none is sent.
            body["thinking"] = {"type": "enabled", "budget_tokens": int(self.thinking_budget)}
        elif temperature is not None:
            body["temperature"] = temperature
        return body

    def headers(self) -> dict[str, str]:
        return {"Content-Type": "application/json", "x-api-key": self._api_key, "anthropic-version": self.version}

    def invoke(self, request: ProviderRequest) -> TargetResponse:
        describe = self.target.describe()
        result = self.post(request)
        data = result.data
        blocks = data.get("content") if isinstance(data, dict) else None
        if not isinstance(blocks, list):
            shape = list(data)[:8] if isinstance(data, dict) else type(data).__name__
            raise HttpCallError(
                f"{describe}: expected a message with a 'content' list, got {shape}", retries=result.retries
            )
        text = "".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")
        usage_raw = data.get("usage")
        usage = None
        if isinstance(usage_raw, dict):
            usage = {"input": usage_raw.get("input_tokens"), "output": usage_raw.get("output_tokens")}
        raw = {"model": data.get("model"), "id": data.get("id"), "stop_reason": data.get("stop_reason")}
        tool_calls = [{"tool": str(b.get("name") or "unknown"), "input": b.get("input"), "id": b.get("id")}
                      for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
        return text_response(text, retries=result.retries, usage=usage, raw=raw,
                             tool_calls=tool_calls)
