"""Google Gemini's `generateContent` API (`POST {base}/v1beta/models/{model}:generateContent`).

Keys as AgentV's `gemini` / `google` provider reads them: `api_key` (from the environment, sent
as the `x-goog-api-key` header, never in the URL, so no log or error message can carry it),
`model ?? deployment ?? variant`, `temperature`, `max_output_tokens` (`maxOutputTokens`),
`system_prompt`, `structured_output`, plus `base_url` / `endpoint` (default
https://generativelanguage.googleapis.com; a trailing `/v1beta` is accepted) and the retry keys.

The wire format differs from chat completions in three ways this module absorbs: the system
prompt travels apart as `systemInstruction`; turns are `user` / `model` with text in `parts`,
alternating and starting with a user turn (folded as for Anthropic); sampling settings sit in
`generationConfig`. A request's `reply_schema` (the judge's verdict) goes out as
`responseMimeType: application/json` with `responseSchema`, Gemini's OpenAPI subset of JSON
schema (type names upper-cased, keys it does not know left out). Thought parts (`thought: true`)
are never part of the answer. A prompt or reply Gemini blocks (`promptFeedback.blockReason`, or
a candidate that stops for SAFETY and friends with no text) is an error, not an empty answer.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from ..errors import TargetsConfigError
from ..models import TargetResponse
from ..transport.http_policy import HttpCallError
from .anthropic import fold_messages
from .base import ProviderRequest
from .config import TargetConfig
from .openai_compat import HttpChatProvider, chat_messages, text_response
from .settings import GeminiSettings

DEFAULT_GEMINI_BASE_URL = "https://generativelanguage.googleapis.com"
API_VERSION = "v1beta"
BLOCKING_FINISH_REASONS = frozenset(
    {"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "LANGUAGE", "OTHER"}
)
"""Finish reasons that mean Gemini withheld the reply (unlike STOP and MAX_TOKENS)."""
_SCHEMA_KEYS = ("description", "enum", "format", "nullable", "required", "minItems", "maxItems",
                "minimum", "maximum", "propertyOrdering")
"""JSON-schema keys Gemini's `Schema` understands as they are; `type`, `properties` and `items`
are converted, anything else (`additionalProperties`, `$schema`, ...) is left out."""


def gemini_schema(schema: Any) -> Any:
    """A JSON schema as Gemini's `responseSchema`: upper-case types, unsupported keys dropped."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    kind = schema.get("type")
    if isinstance(kind, str):
        out["type"] = kind.upper()
    elif isinstance(kind, list):  # ["string", "null"] -> STRING, nullable
        named = [k for k in kind if isinstance(k, str) and k != "null"]
        if named:
            out["type"] = named[0].upper()
        if "null" in kind:
            out["nullable"] = True
    if isinstance(schema.get("properties"), dict):
        out["properties"] = {name: gemini_schema(value) for name, value in schema["properties"].items()}
    if "items" in schema:
        out["items"] = gemini_schema(schema["items"])
    out.update({key: schema[key] for key in _SCHEMA_KEYS if key in schema})
    return out


def gemini_contents(turns: list[dict[str, str]]) -> list[dict[str, Any]]:
    """Alternating user/assistant turns as Gemini `contents` (`assistant` is `model` there)."""
    return [{"role": "model" if turn["role"] == "assistant" else "user", "parts": [{"text": turn["content"]}]}
            for turn in turns]


def gemini_usage(usage: Any) -> dict[str, Any] | None:
    """`usageMetadata` as `{input, output}` (+ `reasoning`, + `cached`): output counts the
    thinking tokens too, as OpenAI's `completion_tokens` does, since both are billed as output."""
    if not isinstance(usage, dict):
        return None
    thoughts = usage.get("thoughtsTokenCount")
    candidates = usage.get("candidatesTokenCount")
    output = candidates
    if isinstance(thoughts, int) and not isinstance(thoughts, bool):
        output = (candidates if isinstance(candidates, int) else 0) + thoughts
    out: dict[str, Any] = {"input": usage.get("promptTokenCount"), "output": output}
    if isinstance(thoughts, int) and not isinstance(thoughts, bool):
        out["reasoning"] = thoughts
    cached = usage.get("cachedContentTokenCount")
    if isinstance(cached, int) and not isinstance(cached, bool):
        out["cached"] = cached
    return out


class GeminiProvider(HttpChatProvider):
    kind = "gemini"

    def __init__(self, target: TargetConfig) -> None:
        super().__init__(target)
        settings = target.read(GeminiSettings)
        base = str(settings.endpoint or DEFAULT_GEMINI_BASE_URL)
        base = base.strip().rstrip("/")
        self.base_url = base[: -len(f"/{API_VERSION}")] if base.endswith(f"/{API_VERSION}") else base
        self._api_key = str(target.required(settings, "api_key"))
        self.model = str(target.required(settings, "model"))
        if self.options.reasoning_effort is not None or self.options.reasoning_model is not None:
            raise TargetsConfigError(
                f"{target.describe()}: reasoning_effort and reasoning_model are OpenAI/Azure keys, "
                "not Gemini's"
            )

    def __repr__(self) -> str:
        return f"GeminiProvider(name={self.name!r}, base_url={self.base_url!r}, model={self.model!r})"

    def _model_url(self, model: str) -> str:
        bare = model.removeprefix("models/")
        return f"{self.base_url}/{API_VERSION}/models/{quote(bare, safe='')}:generateContent"

    @property
    def url(self) -> str:
        return self._model_url(self.model)

    def url_for(self, request: ProviderRequest) -> str:
        """The model is part of Gemini's URL, not its body: a judge's `model:` override is a URL."""
        return self._model_url(request.model or self.model)

    def headers(self) -> dict[str, str]:
        return {"Content-Type": "application/json", "x-goog-api-key": self._api_key}

    def build_body(self, request: ProviderRequest) -> dict[str, Any]:
        system, turns = fold_messages(chat_messages(request, self.system_prompt))
        body: dict[str, Any] = {"contents": gemini_contents(turns)}
        if system:
            body["systemInstruction"] = {"parts": [{"text": system}]}
        config: dict[str, Any] = {}
        temperature = request.temperature if request.temperature is not None else self.temperature
        if temperature is not None:
            config["temperature"] = temperature
        limit = request.max_output_tokens if request.max_output_tokens is not None else self.max_output_tokens
        if limit is not None:
            config["maxOutputTokens"] = int(limit)
        if request.reply_schema is not None and self.options.structured_output:
            config["responseMimeType"] = "application/json"
            config["responseSchema"] = gemini_schema(request.reply_schema.get("schema"))
        if config:
            body["generationConfig"] = config
        return body

    def invoke(self, request: ProviderRequest) -> TargetResponse:
        result = self.post(request)
        text, usage, raw = self._read(result.data, result.retries)
        return text_response(text, retries=result.retries, usage=usage, raw=raw)

    def _read(self, data: Any, retries: int) -> tuple[str, dict[str, Any] | None, dict[str, Any]]:
        describe = self.target.describe()
        if not isinstance(data, dict):
            raise HttpCallError(f"{describe}: expected a generateContent reply, got {type(data).__name__}",
                                retries=retries)
        feedback = data.get("promptFeedback")
        block = feedback.get("blockReason") if isinstance(feedback, dict) else None
        candidates = data.get("candidates")
        if not isinstance(candidates, list) or not candidates:
            if block:
                raise HttpCallError(f"{describe}: Gemini blocked the prompt (blockReason {block})", retries=retries)
            raise HttpCallError(
                f"{describe}: expected a generateContent reply with candidates, got {list(data)[:8]}",
                retries=retries)
        candidate = candidates[0] if isinstance(candidates[0], dict) else {}
        content = candidate.get("content")
        parts = content.get("parts") if isinstance(content, dict) else None
        text = "".join(
            part["text"] for part in (parts if isinstance(parts, list) else [])
            if isinstance(part, dict) and isinstance(part.get("text"), str) and not part.get("thought")
        )
        finish = candidate.get("finishReason")
        if not text and finish in BLOCKING_FINISH_REASONS:
            raise HttpCallError(f"{describe}: Gemini withheld the reply (finishReason {finish})", retries=retries)
        raw = {"model": data.get("modelVersion"), "id": data.get("responseId"), "finish_reason": finish}
        return text, gemini_usage(data.get("usageMetadata")), raw

