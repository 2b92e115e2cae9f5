"""OpenAI-compatible chat completions: OpenAI itself, vLLM, Ollama, llama.cpp, LM Studio, ...

Keys (AgentV's `openai` provider): `endpoint` / `base_url` (default https://api.openai.com/v1;
`/v1` is appended when missing, as AgentV does), `api_key` (optional here, since local servers
need none), `model`, `temperature`, `max_output_tokens`, `system_prompt`, `headers`, the
reasoning-model and structured-output keys of `ChatOptions` (`reasoning_model`,
`reasoning_effort`, `structured_output`), and the retry keys of `retry_policy_from_settings` (http_settings.py).

`HttpChatProvider` (settings, retry policy, rate limiter, the POST with its learned parameter
adjustments) and
the helpers (`chat_messages`, `text_response`, `chat_completion_text`) are shared with the Azure
and Anthropic providers, which speak close cousins of this wire format.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import TargetsConfigError
from ..models import Message, TargetResponse
from ..transport.http_policy import HttpCallError, HttpResult, post_json
from ..transport.limiter import estimate_tokens
from .adjustments import ParameterMemory, send_adapting
from .api_format import api_format_problem
from .base import ProviderRequest
from .chat_params import ChatOptions
from .config import TargetConfig
from .http_settings import limiter_for, retry_policy_for
from .settings import HttpChatSettings, OpenAISettings

DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"
_CHAT_ROLES = {"system", "user", "assistant"}


def normalise_base_url(value: str | None) -> str:
    """AgentV's normalizeOpenAIBaseUrl: no trailing slash, and ending in /v1."""
    if not value or not value.strip():
        return DEFAULT_OPENAI_BASE_URL
    trimmed = value.strip().rstrip("/")
    return trimmed if trimmed.endswith("/v1") else f"{trimmed}/v1"


def chat_messages(request: ProviderRequest, default_system: str | None = None) -> list[dict[str, str]]:
    """The request as chat messages: system prompt first, then the case's messages or the question.

    Roles other than system/user/assistant (e.g. `tool`) become user turns, since plain chat
    endpoints reject them without the tool-call bookkeeping a real tool turn needs.
    """
    out: list[dict[str, str]] = []
    system = request.system_prompt if request.system_prompt is not None else default_system
    if system:
        out.append({"role": "system", "content": system})
    if request.messages:
        for message in request.messages:
            role = message.role if message.role in _CHAT_ROLES else "user"
            out.append({"role": role, "content": message.text()})
    else:
        out.append({"role": "user", "content": request.question})
    return out


def text_response(
    text: str, *, retries: int, usage: dict[str, Any] | None, raw: dict[str, Any],
    tool_calls: list[dict[str, Any]] | None = None,
) -> TargetResponse:
    """The reply as one assistant message; tool calls the model asked for ride on it in AgentV's shape.
    No `duration_ms`: AgentV 2.19's model providers report none, so its `latency` scores such a target 0
    ("No duration data available in trace"); timing the call here passed what AgentV fails."""
    message = Message.model_validate({"role": "assistant", "content": text, **({"tool_calls": tool_calls}
                                                                              if tool_calls else {})})
    return TargetResponse(
        text=text,
        output_messages=[message],
        token_usage=usage,
        retries=retries,
        raw=raw,
    )


def chat_completion_text(
    data: Any, describe: str, retries: int
) -> tuple[str, dict[str, Any] | None, dict[str, Any]]:
    """Text, token usage and a small raw record from a chat-completions reply."""
    try:
        choice = data["choices"][0]
        content = choice["message"].get("content")
    except (KeyError, IndexError, TypeError, AttributeError):
        shape = list(data)[:8] if isinstance(data, dict) else type(data).__name__
        raise HttpCallError(
            f"{describe}: expected a chat completion with choices[0].message.content, got {shape}",
            retries=retries,
        ) from None
    if isinstance(content, list):  # some servers return content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    text = content if isinstance(content, str) else ""
    finish_reason = choice.get("finish_reason") if isinstance(choice, dict) else None
    if not text and finish_reason == "content_filter":
        raise HttpCallError(
            f"{describe}: the provider withheld the reply (finish_reason content_filter)", retries=retries
        )
    raw = {"model": data.get("model"), "id": data.get("id"), "finish_reason": finish_reason}
    return text, chat_usage(data.get("usage")), raw


def chat_tool_calls(data: Any) -> list[dict[str, Any]]:
    """`choices[0].message.tool_calls` as AgentV's `{tool, input, id}`; the JSON `arguments` string is
    decoded (kept as text when it is not JSON, so a malformed call is seen, not dropped)."""
    try:
        raw = data["choices"][0]["message"].get("tool_calls")
    except (KeyError, IndexError, TypeError, AttributeError):
        return []
    calls: list[dict[str, Any]] = []
    for call in raw if isinstance(raw, list) else []:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            continue
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except ValueError:
                pass
        calls.append({"tool": str(function.get("name") or "unknown"), "input": arguments, "id": call.get("id")})
    return calls


def chat_usage(usage: Any) -> dict[str, Any] | None:
    """Token usage as `{input, output}`, plus `reasoning` when the model reports reasoning tokens
    (`completion_tokens_details.reasoning_tokens`; they are part of `output`, billed but unseen)."""
    if not isinstance(usage, dict):
        return None
    out: dict[str, Any] = {"input": usage.get("prompt_tokens"), "output": usage.get("completion_tokens")}
    details = usage.get("completion_tokens_details")
    reasoning = details.get("reasoning_tokens") if isinstance(details, dict) else None
    if isinstance(reasoning, int) and not isinstance(reasoning, bool):
        out["reasoning"] = reasoning
    return out


class HttpChatProvider:
    """What the HTTP chat providers share: the sampling settings and retry policy each reads from
    its target the same way, and one POST of its wire body under that policy. A provider adds
    its endpoint (`url`), credentials (`headers`), wire format (`build_body`) and reply parsing.

    `build_body` is the request as intended (it is also the response cache's key, so a cached
    answer does not depend on what this run happened to learn); `post` sends it with the
    parameters the server refused earlier in the run adjusted, and learns new ones (see
    `adjustments.py`)."""

    kind: str

    def __init__(self, target: TargetConfig) -> None:
        self.name = target.name
        self.target = target
        self.options = ChatOptions.from_target(target)
        self.temperature = self.options.temperature
        self.max_output_tokens = self.options.max_output_tokens
        self.system_prompt = target.read(HttpChatSettings).system_prompt
        self.policy = retry_policy_for(target)
        self.limiter = limiter_for(target, self.policy)
        """Shared by every call of this target: the case's answer, judging, composite members."""
        self.memory = ParameterMemory(target.describe())

    @property
    def url(self) -> str:
        raise NotImplementedError

    def url_for(self, request: ProviderRequest) -> str:
        """Where `request` goes; the same URL for every request unless the wire format puts the
        model in the URL (Gemini). The response cache keys on it too."""
        return self.url

    def headers(self) -> dict[str, str]:
        raise NotImplementedError

    def build_body(self, request: ProviderRequest) -> dict[str, Any]:
        raise NotImplementedError

    def post(self, request: ProviderRequest) -> HttpResult:
        url, headers = self.url_for(request), self.headers()

        def send(body: dict[str, Any]) -> HttpResult:
            return post_json(url, body, headers=headers, policy=self.policy, secrets=self.target.secrets,
                             describe=self.target.describe(), limiter=self.limiter,
                             tokens=estimate_tokens(body) if self.limiter.counts_tokens else 0)

        return send_adapting(send, self.build_body(request), self.memory)


class OpenAICompatProvider(HttpChatProvider):
    """A chat-completions endpoint. One POST per invoke, under the shared retry policy."""

    kind = "openai"

    def __init__(self, target: TargetConfig) -> None:
        super().__init__(target)
        settings = target.read(OpenAISettings)
        self.base_url = normalise_base_url(settings.endpoint)
        self.model = str(target.required(settings, "model"))
        refused = api_format_problem(dict(target.settings), target.name)
        if refused is not None:  # a `${{ VAR }}` resolved to a format this provider does not send
            raise TargetsConfigError(f"{target.describe()}: {refused[1]}")
        self._api_key = settings.api_key
        extra = {} if settings.headers is None else settings.headers
        if not isinstance(extra, dict):
            raise TargetsConfigError(f"{target.describe()}: headers must be a mapping")
        self._extra_headers = {str(k): str(v) for k, v in extra.items()}

    def __repr__(self) -> str:
        return f"OpenAICompatProvider(name={self.name!r}, base_url={self.base_url!r}, model={self.model!r})"

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", **self._extra_headers}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    def build_body(self, request: ProviderRequest) -> dict[str, Any]:
        model = request.model or self.model
        return {
            "model": model,
            "messages": chat_messages(request, self.system_prompt),
            **self.options.params(request, model),
        }

    def invoke(self, request: ProviderRequest) -> TargetResponse:
        result = self.post(request)
        text, usage, raw = chat_completion_text(result.data, self.target.describe(), result.retries)
        return text_response(text, retries=result.retries, usage=usage, raw=raw,
                             tool_calls=chat_tool_calls(result.data))
