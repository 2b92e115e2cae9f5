"""A real HTTP server on 127.0.0.1 that plays an LLM provider, for tests and benchmarks.

Nothing is mocked: providers send real requests through `requests` to a real socket. The
server answers each path from a FIFO queue of scripted replies, and records every request.

API
---
``FakeLLMServer()`` starts at once on a free port (use it as a context manager, or call
``close()``):

* ``server.url`` - ``"http://127.0.0.1:<port>"``.
* ``server.enqueue(path, *replies)`` - replies for ``path`` (query string ignored when matching),
  served in order, one per request.
* ``server.set_default(path, reply)`` - what ``path`` answers once its queue is empty; ``reply``
  may be a ``FakeReply`` or a callable ``(RecordedRequest) -> FakeReply`` (e.g. to echo the
  prompt). Without queue or default, a path answers 404 with a JSON error.
* ``server.requests`` - a copy of every ``RecordedRequest`` received, in arrival order;
  ``server.requests_for(path)`` filters by path.
* ``server.close()`` - stops the server and releases any reply still hanging.

Replies (``FakeReply``), built with helpers:

* ``FakeReply.openai(text)`` - an OpenAI / Azure chat completion whose message content is ``text``;
* ``FakeReply.openai_responses(text, reasoning_tokens=None, cached_tokens=0, calls=(), status="completed",
  incomplete_reason=None)`` - an OpenAI Responses API reply (a reasoning item first when
  ``reasoning_tokens`` is given; ``calls``: ``(name, arguments JSON)`` pairs as ``function_call`` items);
* ``FakeReply.openai_tool_calls(*calls, text="")`` - a chat completion asking for tools, each call
  ``(id, name, arguments JSON text)``;
* ``FakeReply.anthropic(text)`` - an Anthropic Messages reply with one text block;
  ``FakeReply.anthropic_tool_use(*calls, text="")`` - one asking for tools, each call ``(id, name, input)``;
* ``FakeReply.gemini(text, thoughts=None, finish_reason="STOP")`` - a Gemini ``generateContent``
  reply (with a thought part and ``thoughtsTokenCount`` when ``thoughts`` is given);
  ``FakeReply.gemini_error(status, message, grpc_status)`` - Google's error body;
* ``FakeReply.json(body, status=200, headers=None)`` - any JSON body;
* ``FakeReply.error(status, message="...", retry_after=None)`` - an error status with an
  OpenAI-style error body and, if given, a ``Retry-After`` header;
* ``FakeReply.hang(seconds)`` - waits ``seconds`` before answering (longer than the client's
  timeout, it is a hang); ``close()`` cuts the wait short;
* any reply can be delayed: ``FakeReply.openai("hi", delay=0.2)``;
* any reply's body can go out in pieces after its headers: ``reply.in_pieces(size, pause)`` sends
  ``size`` bytes, waits ``pause`` seconds, sends the next ``size`` bytes, and so on (a body that
  trickles in, or with two pieces and a long pause, one that stalls halfway); ``close()`` cuts a
  pause short.

Behaviours of real servers, as responders for ``set_default`` (each takes the answer text, or a
callable ``(RecordedRequest) -> str``):

* ``reasoning_model(answer)`` - an OpenAI reasoning model (o-series, gpt-5): a body with
  ``max_tokens`` gets OpenAI's exact 400 for it, a ``temperature`` other than 1 its exact 400
  (``MAX_TOKENS_REFUSED`` / ``temperature_refused(value)``); otherwise the answer, with
  ``completion_tokens_details.reasoning_tokens`` in ``usage``;
* ``responses_model(answer, reasoning=False)`` - OpenAI's Responses API: a body with chat-completions
  keys (``messages``, ``max_tokens``, ``response_format``) or any key the API does not take gets its 400,
  an ``input`` item with a role it does not take too, a reasoning model (``reasoning=True``) refuses a
  ``temperature``; otherwise ``FakeReply.openai_responses`` with the answer;
* ``without_json_schema(answer)`` - a server without structured output: a body with
  ``response_format`` of type ``json_schema`` gets a 400 (``JSON_SCHEMA_REFUSED``);
* ``content_filtered()`` - Azure's 400 for a prompt its content filter blocked;
* ``gemini_model(answer, api_key)`` - Gemini's ``generateContent`` (serve it on
  ``gemini_path(model)``): checks the ``x-goog-api-key`` header, the turn order and the body's
  keys as Google does, then answers.
* ``RateLimited(responder, rpm=600, burst=None, tpm=None)`` - a provider's rate limit in front of
  another responder: token buckets of requests (and tokens, counted as the reply's
  ``usage.total_tokens``), refilled continuously, holding ``burst`` requests (default one
  second's worth). Over the limit it answers OpenAI's 429 (``rate_limit_exceeded``) with
  ``Retry-After`` and ``retry-after-ms``; every answer carries ``x-ratelimit-limit-*``,
  ``x-ratelimit-remaining-*`` and ``x-ratelimit-reset-*`` as OpenAI sends them (``headers=False``
  for a server that sends none). ``.answered`` and ``.refused`` count what it did.

``server.max_in_flight`` is the most requests the server was handling at one moment: from a
request's arrival until its answer starts (the client may send its next one as soon as it has the
answer, before the thread that wrote it has run again).

``RecordedRequest`` has ``method``, ``path``, ``query`` (dict of lists), ``headers`` (a dict with
lower-cased names), ``body`` (bytes) and ``json`` (the decoded body, or None).
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


def _bypass_proxies_for_loopback() -> None:
    """A CI runner's HTTP(S)_PROXY must not swallow requests meant for this loopback server."""
    for name in ("NO_PROXY", "no_proxy"):
        current = [p.strip() for p in os.environ.get(name, "").split(",") if p.strip()]
        missing = [h for h in ("127.0.0.1", "localhost") if h not in current]
        if missing:
            os.environ[name] = ",".join(current + missing)


_bypass_proxies_for_loopback()


@dataclass
class RecordedRequest:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    json: Any


@dataclass
class FakeReply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    piece_bytes: int = 0
    """When > 0, the body is sent in pieces of this many bytes, `piece_pause` seconds apart."""
    piece_pause: float = 0.0

    def in_pieces(self, size: int, pause: float) -> FakeReply:
        """This reply with its body sent `size` bytes at a time, `pause` seconds apart, after the headers."""
        return replace(self, piece_bytes=size, piece_pause=pause)

    @staticmethod
    def json(body: Any, status: int = 200, headers: dict[str, str] | None = None, delay: float = 0.0) -> FakeReply:
        return FakeReply(
            status=status,
            body=json.dumps(body).encode("utf-8"),
            headers={"Content-Type": "application/json", **(headers or {})},
            delay=delay,
        )

    @staticmethod
    def openai(
        text: str, *, model: str = "fake-model", delay: float = 0.0, reasoning_tokens: int | None = None
    ) -> FakeReply:
        usage: dict[str, Any] = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
        if reasoning_tokens is not None:
            usage = {"prompt_tokens": 11, "completion_tokens": 7 + reasoning_tokens,
                     "total_tokens": 18 + reasoning_tokens,
                     "completion_tokens_details": {"reasoning_tokens": reasoning_tokens}}
        return FakeReply.json(
            {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "model": model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": usage,
            },
            delay=delay,
        )

    @staticmethod
    def openai_responses(
        text: str, *, model: str = "fake-model", reasoning_tokens: int | None = None, cached_tokens: int = 0,
        calls: tuple[tuple[str, str], ...] = (), status: str = "completed", incomplete_reason: str | None = None,
    ) -> FakeReply:
        output: list[dict[str, Any]] = []
        if reasoning_tokens is not None:
            output.append({"type": "reasoning", "id": "rs_fake", "summary": []})
        if text:
            output.append({"type": "message", "id": "msg_fake", "status": "completed", "role": "assistant",
                           "content": [{"type": "output_text", "text": text, "annotations": []}]})
        output.extend({"type": "function_call", "id": f"fc_{i}", "call_id": f"call_{i}", "name": name,
                       "arguments": arguments, "status": "completed"} for i, (name, arguments) in enumerate(calls))
        out_tokens = 7 + (reasoning_tokens or 0)
        return FakeReply.json({
            "id": "resp_fake", "object": "response", "created_at": 0, "status": status, "error": None,
            "incomplete_details": {"reason": incomplete_reason} if incomplete_reason else None,
            "model": model, "output": output,
            "usage": {"input_tokens": 11, "input_tokens_details": {"cached_tokens": cached_tokens},
                      "output_tokens": out_tokens,
                      "output_tokens_details": {"reasoning_tokens": reasoning_tokens or 0},
                      "total_tokens": 11 + out_tokens},
        })

    @staticmethod
    def openai_tool_calls(*calls: tuple[str, str, str], text: str = "", model: str = "fake-model") -> FakeReply:
        """A chat completion asking for tools: each call `(id, name, arguments as JSON text)` in `tool_calls`
        (the text is sent as written, so a test can send arguments that are not JSON)."""
        message: dict[str, Any] = {"role": "assistant", "content": text or None,
                                   "tool_calls": [{"id": call_id, "type": "function",
                                                   "function": {"name": name, "arguments": arguments}}
                                                  for call_id, name, arguments in calls]}
        return FakeReply.json({"id": "chatcmpl-fake", "object": "chat.completion", "model": model,
                               "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
                               "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}})

    @staticmethod
    def anthropic_tool_use(*calls: tuple[str, str, Any], text: str = "", model: str = "claude-fake") -> FakeReply:
        """A Messages reply asking for tools: each call `(id, name, input)` a `tool_use` block."""
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        content += [{"type": "tool_use", "id": call_id, "name": name, "input": value} for call_id, name, value in calls]
        return FakeReply.json({"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
                               "content": content, "stop_reason": "tool_use",
                               "usage": {"input_tokens": 13, "output_tokens": 5}})

    @staticmethod
    def anthropic(text: str, *, model: str = "claude-fake", delay: float = 0.0) -> FakeReply:
        return FakeReply.json(
            {
                "id": "msg_fake",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 13, "output_tokens": 5},
            },
            delay=delay,
        )

    @staticmethod
    def gemini(text: str, *, model: str = "gemini-fake", delay: float = 0.0, thoughts: int | None = None,
               finish_reason: str = "STOP") -> FakeReply:
        parts: list[dict[str, Any]] = [{"text": "(thinking it over)", "thought": True}] if thoughts else []
        parts.append({"text": text})
        usage: dict[str, Any] = {"promptTokenCount": 17, "candidatesTokenCount": 4, "totalTokenCount": 21}
        if thoughts:
            usage = {**usage, "thoughtsTokenCount": thoughts, "totalTokenCount": 21 + thoughts}
        return FakeReply.json(
            {
                "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": finish_reason,
                                "index": 0}],
                "usageMetadata": usage,
                "modelVersion": model,
                "responseId": "gemini-fake-id",
            },
            delay=delay,
        )

    @staticmethod
    def gemini_error(status: int, message: str = "scripted failure", grpc_status: str = "INVALID_ARGUMENT") -> FakeReply:
        """Google's error body: `{"error": {"code", "message", "status"}}`."""
        return FakeReply.json({"error": {"code": status, "message": message, "status": grpc_status}}, status=status)

    @staticmethod
    def error(status: int, message: str = "scripted failure", retry_after: str | None = None, delay: float = 0.0) -> FakeReply:
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        return FakeReply.json({"error": {"message": message, "type": "fake_error"}}, status=status, headers=headers, delay=delay)

    @staticmethod
    def hang(seconds: float) -> FakeReply:
        return FakeReply.openai("too late", delay=seconds)


Responder = FakeReply | Callable[[RecordedRequest], FakeReply]
Answer = str | Callable[[RecordedRequest], str]

MAX_TOKENS_REFUSED = {
    "error": {
        "message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
        "Use 'max_completion_tokens' instead.",
        "type": "invalid_request_error",
        "param": "max_tokens",
        "code": "unsupported_parameter",
    }
}
"""OpenAI's 400 body when a reasoning model is sent `max_tokens`, word for word."""
JSON_SCHEMA_REFUSED = {
    "error": {
        "message": "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this "
        "model. Learn more about supported models at the Structured Outputs guide: "
        "https://platform.openai.com/docs/guides/structured-outputs",
        "type": "invalid_request_error",
        "param": None,
        "code": None,
    }
}
"""OpenAI's 400 body when a model without structured output is asked for a json_schema reply."""
REASONING_TOKENS = 64


def temperature_refused(value: Any) -> dict[str, Any]:
    """OpenAI's 400 body when a reasoning model is sent a temperature other than the default."""
    return {
        "error": {
            "message": f"Unsupported value: 'temperature' does not support {value} with this model. "
            "Only the default (1) value is supported.",
            "type": "invalid_request_error",
            "param": "temperature",
            "code": "unsupported_value",
        }
    }


def _answer(answer: Answer, request: RecordedRequest) -> str:
    return answer(request) if callable(answer) else answer


def reasoning_model(answer: Answer) -> Callable[[RecordedRequest], FakeReply]:
    """A responder that behaves like an OpenAI reasoning model (see the module docstring)."""

    def respond(request: RecordedRequest) -> FakeReply:
        body = request.json if isinstance(request.json, dict) else {}
        if "max_tokens" in body:
            return FakeReply.json(MAX_TOKENS_REFUSED, status=400)
        if "temperature" in body and body["temperature"] != 1:
            return FakeReply.json(temperature_refused(body["temperature"]), status=400)
        return FakeReply.openai(_answer(answer, request), model="o3-mini", reasoning_tokens=REASONING_TOKENS)

    return respond


RESPONSES_KEYS = frozenset({"model", "input", "instructions", "store", "stream", "temperature", "top_p",
                            "max_output_tokens", "reasoning", "text", "tools", "tool_choice", "include",
                            "previous_response_id", "metadata", "parallel_tool_calls", "prompt_cache_key",
                            "service_tier", "truncation", "user"})
"""The request keys OpenAI's `POST /v1/responses` takes."""
_MOVED = {"messages": "input", "max_tokens": "max_output_tokens", "max_completion_tokens": "max_output_tokens",
          "response_format": "text.format"}


def responses_model(answer: Answer, *, reasoning: bool = False) -> Callable[[RecordedRequest], FakeReply]:
    """A responder that checks requests as OpenAI's Responses API does (see the module docstring)."""

    def refuse(message: str, param: str | None, code: str) -> FakeReply:
        return FakeReply.json({"error": {"message": message, "type": "invalid_request_error", "param": param,
                                         "code": code}}, status=400)

    def respond(request: RecordedRequest) -> FakeReply:
        body = request.json if isinstance(request.json, dict) else {}
        for key in sorted(body):
            if key in _MOVED:
                return refuse(f"Unsupported parameter: '{key}'. In the Responses API, this parameter has moved "
                              f"to '{_MOVED[key]}'.", key, "unsupported_parameter")
            if key not in RESPONSES_KEYS:
                return refuse(f"Unknown parameter: '{key}'.", key, "unknown_parameter")
        items = body.get("input")
        if not isinstance(items, (list, str)) or not items:
            return refuse("Missing required parameter: 'input'.", "input", "missing_required_parameter")
        for index, item in enumerate(items if isinstance(items, list) else []):
            role = item.get("role") if isinstance(item, dict) else None
            if role not in ("user", "assistant", "system", "developer"):
                return refuse(f"Invalid value: '{role}'. Supported values are: 'assistant', 'system', "
                              "'developer', and 'user'.", f"input[{index}].role", "invalid_value")
        if reasoning and "temperature" in body:
            return refuse("Unsupported parameter: 'temperature' is not supported with this model.", "temperature",
                          "unsupported_parameter")
        return FakeReply.openai_responses(_answer(answer, request), model="o3-mini" if reasoning else "fake-model",
                                          reasoning_tokens=REASONING_TOKENS if reasoning else None)

    return respond


def without_json_schema(answer: Answer) -> Callable[[RecordedRequest], FakeReply]:
    """A responder for a server that cannot do structured output (see the module docstring)."""

    def respond(request: RecordedRequest) -> FakeReply:
        body = request.json if isinstance(request.json, dict) else {}
        response_format = body.get("response_format")
        if isinstance(response_format, dict) and response_format.get("type") == "json_schema":
            return FakeReply.json(JSON_SCHEMA_REFUSED, status=400)
        return FakeReply.openai(_answer(answer, request))

    return respond


def gemini_path(model: str) -> str:
    """The path a Gemini `generateContent` call for `model` is served on."""
    return f"/v1beta/models/{model}:generateContent"


def gemini_model(answer: Answer, api_key: str) -> Callable[[RecordedRequest], FakeReply]:
    """A responder that checks requests as Google's API does: the `x-goog-api-key` header (403
    otherwise), `contents` alternating user/model turns starting with user, and no keys
    `generateContent` does not take (400 "Unknown name"); then answers with ``answer``."""
    known = {"contents", "systemInstruction", "generationConfig", "safetySettings", "tools", "toolConfig",
             "cachedContent"}

    def respond(request: RecordedRequest) -> FakeReply:
        if request.headers.get("x-goog-api-key") != api_key:
            return FakeReply.gemini_error(403, "Method doesn't allow unregistered callers.", "PERMISSION_DENIED")
        body = request.json if isinstance(request.json, dict) else {}
        unknown = sorted(set(body) - known)
        if unknown:
            return FakeReply.gemini_error(400, f'Invalid JSON payload received. Unknown name "{unknown[0]}": '
                                               "Cannot find field.")
        roles = [c.get("role") for c in body.get("contents", [])]
        if not roles or roles[0] != "user" or any(a == b for a, b in zip(roles, roles[1:], strict=False)):
            return FakeReply.gemini_error(400, "Please ensure that multiturn requests alternate between user and "
                                               "model.")
        return FakeReply.gemini(_answer(answer, request))

    return respond


def content_filtered() -> FakeReply:
    """Azure's 400 when its content filter blocks the prompt."""
    return FakeReply.json({
        "error": {
            "message": "The response was filtered due to the prompt triggering Azure OpenAI's content "
            "management policy. Please modify your prompt and retry.",
            "type": None,
            "param": "prompt",
            "code": "content_filter",
            "status": 400,
            "innererror": {"code": "ResponsibleAIPolicyViolation",
                           "content_filter_result": {"violence": {"filtered": True, "severity": "high"}}},
        }
    }, status=400)


class RateLimited:
    """A provider's requests-per-minute (and tokens-per-minute) limit in front of `inner` (see the module docstring)."""

    def __init__(self, inner: Responder, *, rpm: float, burst: float | None = None, tpm: float | None = None,
                 headers: bool = True) -> None:
        self.inner = inner
        self.rpm, self.tpm = rpm, tpm
        self.rate = rpm / 60
        self.burst = burst if burst is not None else max(1.0, self.rate)
        self.level = self.burst
        self.token_rate = tpm / 60 if tpm else None
        self.token_burst = max(1.0, self.token_rate) if self.token_rate else 0.0
        self.token_level = self.token_burst
        self.stamp = time.monotonic()
        self.headers = headers
        self.answered = 0
        self.refused = 0
        self._lock = threading.Lock()

    def _refill(self, now: float) -> None:
        elapsed, self.stamp = now - self.stamp, now
        self.level = min(self.burst, self.level + elapsed * self.rate)
        if self.token_rate:
            self.token_level = min(self.token_burst, self.token_level + elapsed * self.token_rate)

    def _limit_headers(self) -> dict[str, str]:
        if not self.headers:
            return {}
        out = {"x-ratelimit-limit-requests": str(int(self.rpm)),
               "x-ratelimit-remaining-requests": str(max(0, int(self.level))),
               "x-ratelimit-reset-requests": f"{max(0.0, self.burst - self.level) / self.rate:.3f}s"}
        if self.token_rate and self.tpm:
            out.update({"x-ratelimit-limit-tokens": str(int(self.tpm)),
                        "x-ratelimit-remaining-tokens": str(max(0, int(self.token_level))),
                        "x-ratelimit-reset-tokens":
                            f"{max(0.0, self.token_burst - self.token_level) / self.token_rate:.3f}s"})
        return out

    def __call__(self, request: RecordedRequest) -> FakeReply:
        with self._lock:
            self._refill(time.monotonic())
            if self.level < 1 or (self.token_rate and self.token_level < 0):
                wait = (1 - self.level) / self.rate if self.level < 1 else 0.0
                if self.token_rate and self.token_level < 0:
                    wait = max(wait, -self.token_level / self.token_rate)
                self.refused += 1
                headers = {**self._limit_headers(), "retry-after-ms": str(math.ceil(wait * 1000)),
                           "Retry-After": str(math.ceil(wait))}
                return FakeReply.json({"error": {
                    "message": f"Rate limit reached for fake-model on requests per min (RPM): Limit {int(self.rpm)}. "
                               f"Please try again in {math.ceil(wait * 1000)}ms.",
                    "type": "requests", "param": None, "code": "rate_limit_exceeded"}}, status=429, headers=headers)
            self.level -= 1
            self.answered += 1
        reply = self.inner(request) if callable(self.inner) else self.inner
        with self._lock:
            if self.token_rate:
                try:
                    self.token_level -= json.loads(reply.body)["usage"]["total_tokens"]
                except (ValueError, KeyError, TypeError):
                    pass
            limit_headers = self._limit_headers()
        return replace(reply, headers={**reply.headers, **limit_headers})


class FakeLLMServer:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queues: dict[str, deque[FakeReply]] = {}
        self._defaults: dict[str, Responder] = {}
        self._requests: list[RecordedRequest] = []
        self._closing = threading.Event()
        self._in_flight = 0
        self.max_in_flight = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes; with Nagle on, the body waits for the client's
            # delayed ACK (~40 ms on Linux), which would add to every request's scripted latency.
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:  # quiet tests
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                try:
                    decoded = json.loads(body) if body else None
                except ValueError:
                    decoded = None
                parts = urlsplit(self.path)
                recorded = RecordedRequest(
                    method=self.command,
                    path=parts.path,
                    query=parse_qs(parts.query),
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=body,
                    json=decoded,
                )
                with server._lock:
                    server._in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server._in_flight)
                answering = threading.Event()
                try:
                    self._reply(recorded, answering)
                finally:
                    if not answering.is_set():
                        server._answering()

            def _reply(self, recorded: RecordedRequest, answering: threading.Event) -> None:
                reply = server._next_reply(recorded)
                if reply.delay > 0 and server._closing.wait(reply.delay):
                    return  # shutting down: drop the connection
                # No longer in flight once the answer starts: the client may have read it and sent its
                # next request before this thread runs again, which must not count as one more at once.
                answering.set()
                server._answering()
                try:
                    self.send_response(reply.status)
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(reply.body)))
                    self.end_headers()
                    size = reply.piece_bytes or max(1, len(reply.body))
                    for start in range(0, len(reply.body), size):
                        if start and server._closing.wait(reply.piece_pause):
                            return  # shutting down: drop the connection
                        self.wfile.write(reply.body[start:start + size])
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (a scripted hang)

            do_POST = _handle
            do_GET = _handle

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    def _answering(self) -> None:
        with self._lock:
            self._in_flight -= 1

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def enqueue(self, path: str, *replies: FakeReply) -> None:
        with self._lock:
            self._queues.setdefault(path, deque()).extend(replies)

    def set_default(self, path: str, reply: Responder) -> None:
        with self._lock:
            self._defaults[path] = reply

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def requests_for(self, path: str) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path == path]

    def _next_reply(self, request: RecordedRequest) -> FakeReply:
        with self._lock:
            self._requests.append(request)
            queue = self._queues.get(request.path)
            if queue:
                return queue.popleft()
            default = self._defaults.get(request.path)
        if default is None:
            return FakeReply.error(404, f"no scripted reply for {request.method} {request.path}")
        return default(request) if callable(default) else default

    def close(self) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeLLMServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
