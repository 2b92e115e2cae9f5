"""The deterministic loopback model the AgentV 4.42 differential gives both tools (OpenAI chat completions,
and the Responses API on `/v1/responses`, streamed when asked as AgentV asks).

It answers from what the request asks, never from chance, so AgentV and agentv-gate get the same reply
to the same kind of request:

* a rubric grader with score ranges (`### Criterion: ID` lines): every criterion scored 7;
* a checklist rubric grader (`- [ID]` lines and a `"checks"` schema): every item satisfied;
* any other grader (its system prompt asks for a JSON `"score"`): 0.8 with one passed and one failed
  assertion (4.x) and one hit and one miss (2.x), so both generations' readers find what they read;
* an agent: `ANSWER`.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ANSWER = "The capital of France is Paris."
CRITERION = re.compile(r"^### Criterion: (\S+)", re.MULTILINE)
CHECK_ITEM = re.compile(r"^- \[([^\]]+)\]", re.MULTILINE)


def _text(messages: list[dict[str, Any]]) -> str:
    parts: list[str] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return "\n".join(parts)


def reply_for(messages: list[dict[str, Any]]) -> str:
    """The reply to one chat request: a grader's JSON or the agent's answer."""
    text = _text(messages)
    criteria = list(dict.fromkeys(CRITERION.findall(text)))
    if criteria and '"checks"' in text:
        return json.dumps({"checks": [{"id": c, "score": 7, "reasoning": "fake"} for c in criteria],
                           "overall_reasoning": "fake"})
    items = list(dict.fromkeys(CHECK_ITEM.findall(text)))
    if items and '"checks"' in text:
        return json.dumps({"checks": [{"id": i, "satisfied": True, "reasoning": "fake"} for i in items],
                           "overall_reasoning": "fake"})
    if '"score"' in text:
        return json.dumps({"score": 0.8, "assertions": [{"text": "fake pass", "passed": True},
                                                        {"text": "fake miss", "passed": False}],
                           "hits": ["fake hit"], "misses": ["fake miss"], "reasoning": "fake grader"})
    return ANSWER


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def _stream(self, content: str, model: str) -> None:
        """AgentV 4.42's OpenAI provider asks for a stream: the reply as server-sent events."""
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        chunks = [{"choices": [{"index": 0, "delta": {"role": "assistant", "content": content}, "finish_reason": None}]},
                  {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": usage}]
        head = {"id": "fake-1", "object": "chat.completion.chunk", "created": 0, "model": model}
        body = "".join(f"data: {json.dumps({**head, **chunk})}\n\n" for chunk in chunks) + "data: [DONE]\n\n"
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send(self, data: bytes, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _responses(self, body: dict[str, Any]) -> None:
        """The Responses API: the reply as one `message` output item; as its events when `stream` is set."""
        items = body.get("input")
        content = reply_for([i for i in items if isinstance(i, dict)] if isinstance(items, list) else
                            [{"content": str(items)}])
        model = str(body.get("model", "fake"))
        message = {"type": "message", "id": "msg_fake", "status": "completed", "role": "assistant",
                   "content": [{"type": "output_text", "text": content, "annotations": []}]}
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
        done = {"id": "resp_fake", "object": "response", "created_at": 0, "status": "completed", "error": None,
                "incomplete_details": None, "model": model, "output": [message], "usage": usage}
        if not body.get("stream"):
            self._send(json.dumps(done).encode(), "application/json")
            return
        part = {"type": "output_text", "text": "", "annotations": []}
        events = [{"type": "response.created", "response": {**done, "status": "in_progress", "output": []}},
                  {"type": "response.output_item.added", "output_index": 0,
                   "item": {**message, "status": "in_progress", "content": []}},
                  {"type": "response.content_part.added", "output_index": 0, "content_index": 0, "part": part},
                  {"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": content},
                  {"type": "response.output_item.done", "output_index": 0, "item": message},
                  {"type": "response.completed", "response": done}]
        data = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
        self._send(data, "text/event-stream")

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            body = {}
        with self.server.lock:  # type: ignore[attr-defined]
            self.server.paths.append(self.path)  # type: ignore[attr-defined]
        if self.path.rstrip("/").endswith("/responses"):
            self._responses(body)
            return
        content = reply_for(body.get("messages") or [])
        if body.get("stream"):
            self._stream(content, str(body.get("model", "fake")))
            return
        reply = {"id": "fake-1", "object": "chat.completion", "created": 0, "model": body.get("model", "fake"),
                 "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                              "finish_reason": "stop"}],
                 "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class FakeModel:
    """The server on 127.0.0.1, on a free port, in a daemon thread; `url` is its base (`.../v1`)."""

    def __init__(self) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.paths = self.paths = []  # type: ignore[attr-defined]
        """Every request's path, in arrival order: which API each tool called."""
        self.server.lock = threading.Lock()  # type: ignore[attr-defined]
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeModel:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
