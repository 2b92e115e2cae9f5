"""A deterministic loopback model that AgentV and agentv-gate share in `make compat`.

It speaks OpenAI-style chat completions (Azure's deployment URLs included, which AgentV 2.19's azure
provider calls) and Google's `models/{model}:generateContent` (the gemini provider), and answers from
what the request asks, never from chance, so both tools get the same reply to the same kind of request:

* a rubric judge with score ranges (`### Criterion: ID` lines): every criterion scored 7;
* a checklist rubric judge (`- [ID]` lines): every item satisfied;
* any other judge (the prompt asks for a JSON `"score"`): score 0.8, one hit, one miss;
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
    """The reply to a chat request: a judge's JSON or the agent's answer."""
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
        return json.dumps({"score": 0.8, "hits": ["fake hit"], "misses": ["fake miss"], "reasoning": "fake judge"})
    return ANSWER


def gemini_reply(body: dict[str, Any]) -> dict[str, Any]:
    """A `generateContent` answer: the same reply `reply_for` gives, to the system instruction and turns."""
    turns = [body.get("systemInstruction") or {}, *(body.get("contents") or [])]
    messages = [{"content": [part for part in (turn.get("parts") or []) if isinstance(part, dict)]}
                for turn in turns if isinstance(turn, dict)]
    text = reply_for(messages)
    return {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP",
                            "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}}


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            body = {}
        if ":generateContent" in self.path:
            self._send(gemini_reply(body))
            return
        content = reply_for(body.get("messages") or [])
        reply = {"id": "fake-1", "object": "chat.completion", "created": 0, "model": body.get("model", "fake"),
                 "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                              "finish_reason": "stop"}],
                 "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
        self._send(reply)

    def _send(self, reply: dict[str, Any]) -> None:
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class FakeModel:
    """The server on 127.0.0.1, on a free port, in a daemon thread; `url` is its base."""

    def __init__(self) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeModel:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
