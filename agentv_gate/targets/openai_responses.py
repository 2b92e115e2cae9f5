"""The OpenAI Responses API (`api_format: responses` on an `openai` target, AgentV 4.x).

AgentV 4.42 sends such a target's calls to `POST <base_url>/responses` (pi-ai's `openai-responses`): the
conversation as `input` items (the system prompt a `system` item, `developer` for a reasoning model; user
text as `input_text` parts; an earlier assistant turn as a completed `message` with `output_text`),
`store: false`, `temperature` and `max_output_tokens` when set. The reply's answer is the text of its
`message` output items joined (a `refusal` part counts as text, as pi-ai reads it); `function_call` items
are the tool calls; `reasoning` items are not the answer. Usage: `input` is `input_tokens` less the cached
ones (`input_tokens_details.cached_tokens`, reported as `cached` when any), `output` is `output_tokens`
(reasoning included), `reasoning` its `output_tokens_details.reasoning_tokens` when any.

What differs from AgentV, for the same answer: the gate asks for the whole reply at once (no `stream`),
leaves a reasoning model's temperature to the target (as on chat completions), and sends a judge's reply
schema as `text.format` unless the target says `structured_output: false`. A reply whose `status` is
`failed`, or that carries an `error`, is the case's error; `incomplete` with no text (a content filter, a
token limit reached while reasoning) is too, naming the reason, never an empty answer passed to the judges.
Cost: AgentV prices a known model id from pi-ai's tables; the gate reports none unless the target gives
`price_per_1k_input`/`price_per_1k_output` (a `cost` check then scores 0, never a pass it cannot check).
"""

from __future__ import annotations

import json
from typing import Any

from ..models import TargetResponse
from ..transport.http_policy import HttpCallError
from .api_format import api_format_of
from .base import Provider, ProviderRequest
from .config import TargetConfig
from .openai_compat import OpenAICompatProvider, chat_messages, text_response

RESPONSES = "responses"


def responses_input(messages: list[dict[str, str]], reasoning: bool) -> list[dict[str, Any]]:
    """Chat messages as Responses API `input` items, as pi-ai's `convertResponsesMessages` writes them."""
    items: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        role, text = message["role"], message["content"]
        if role == "system":
            items.append({"role": "developer" if reasoning else "system", "content": text})
        elif role == "assistant":
            items.append({"type": "message", "role": "assistant", "status": "completed", "id": f"msg_{index}",
                          "content": [{"type": "output_text", "text": text, "annotations": []}]})
        else:
            items.append({"role": "user", "content": [{"type": "input_text", "text": text}]})
    return items


def responses_usage(usage: Any) -> dict[str, Any] | None:
    """`{input, output}` (cached input apart, as `cached`) and `reasoning` when reported."""
    if not isinstance(usage, dict):
        return None
    in_details, out_details = usage.get("input_tokens_details"), usage.get("output_tokens_details")
    cached = in_details.get("cached_tokens") if isinstance(in_details, dict) else None
    cached = cached if isinstance(cached, int) and not isinstance(cached, bool) and cached > 0 else 0
    given = usage.get("input_tokens")
    out: dict[str, Any] = {
        "input": given - cached if isinstance(given, int) and not isinstance(given, bool) else given,
        "output": usage.get("output_tokens"),
    }
    if cached:
        out["cached"] = cached
    reasoning = out_details.get("reasoning_tokens") if isinstance(out_details, dict) else None
    if isinstance(reasoning, int) and not isinstance(reasoning, bool) and reasoning > 0:
        out["reasoning"] = reasoning
    return out


def _call(item: dict[str, Any]) -> dict[str, Any]:
    arguments = item.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            pass  # kept as text: a malformed call is seen, not dropped
    return {"tool": str(item.get("name") or "unknown"), "input": arguments, "id": item.get("call_id")}


def responses_reply(
    data: Any, describe: str, retries: int
) -> tuple[str, list[dict[str, Any]], dict[str, Any] | None, dict[str, Any]]:
    """Text, tool calls, token usage and a small raw record from a Responses API reply."""
    output = data.get("output") if isinstance(data, dict) else None
    if not isinstance(output, list):
        shape = list(data)[:8] if isinstance(data, dict) else type(data).__name__
        raise HttpCallError(f"{describe}: expected a Responses API reply with an output list, got {shape}",
                            retries=retries)
    status, error = data.get("status"), data.get("error")
    if status in ("failed", "cancelled") or isinstance(error, dict):
        said = error.get("message") or error.get("code") if isinstance(error, dict) else None
        raise HttpCallError(f"{describe}: the response {status or 'failed'}"
                            f"{f': {said}' if said else ''}", retries=retries)
    parts: list[str] = []
    calls: list[dict[str, Any]] = []
    for item in output:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "message":
            for part in item.get("content") or []:
                if isinstance(part, dict) and part.get("type") in ("output_text", "refusal"):
                    value = part.get("text") if part.get("type") == "output_text" else part.get("refusal")
                    parts.append(value if isinstance(value, str) else "")
        elif item.get("type") == "function_call":
            calls.append(_call(item))
    text = "".join(parts)
    details = data.get("incomplete_details")
    reason = details.get("reason") if isinstance(details, dict) else None
    if status == "incomplete" and not text and not calls:
        raise HttpCallError(f"{describe}: the response is incomplete ({reason or 'no reason given'}) and has "
                            "no text", retries=retries)
    raw = {"model": data.get("model"), "id": data.get("id"), "status": status,
           **({"incomplete_reason": reason} if reason else {})}
    return text, calls, responses_usage(data.get("usage")), raw


class OpenAIResponsesProvider(OpenAICompatProvider):
    """An `openai` target with `api_format: responses`: the same settings, transport and retry policy as
    chat completions, another endpoint and body."""

    kind = "openai"

    def __repr__(self) -> str:
        return f"OpenAIResponsesProvider(name={self.name!r}, base_url={self.base_url!r}, model={self.model!r})"

    @property
    def url(self) -> str:
        return f"{self.base_url}/responses"

    def build_body(self, request: ProviderRequest) -> dict[str, Any]:
        model = request.model or self.model
        reasoning = self.options.is_reasoning(model)
        params = self.options.params(request, model)
        body: dict[str, Any] = {"model": model,
                                "input": responses_input(chat_messages(request, self.system_prompt), reasoning),
                                "store": False}
        if "temperature" in params:
            body["temperature"] = params["temperature"]
        limit = params.get("max_completion_tokens", params.get("max_tokens"))
        if limit is not None:
            body["max_output_tokens"] = limit
        if "reasoning_effort" in params:
            body["reasoning"] = {"effort": params["reasoning_effort"]}
        schema = params.get("response_format", {}).get("json_schema")
        if isinstance(schema, dict):
            body["text"] = {"format": {"type": "json_schema", **schema}}
        return body

    def invoke(self, request: ProviderRequest) -> TargetResponse:
        result = self.post(request)
        text, calls, usage, raw = responses_reply(result.data, self.target.describe(), result.retries)
        return text_response(text, retries=result.retries, usage=usage, raw=raw, tool_calls=calls)


class OpenAIKind:
    """What `kinds.py` builds an `openai` target with: chat completions unless `api_format: responses`."""

    kind = "openai"

    def __call__(self, target: TargetConfig) -> Provider:
        if api_format_of(dict(target.settings)) == RESPONSES:
            return OpenAIResponsesProvider(target)
        return OpenAICompatProvider(target)


openai_provider = OpenAIKind()
