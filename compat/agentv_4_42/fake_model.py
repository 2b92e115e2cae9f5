"""The deterministic loopback model the AgentV 4.42 differential gives both tools (OpenAI chat completions,
and the Responses API on `/v1/responses`, streamed when asked as AgentV asks).

It answers from what the request asks, never from chance, so AgentV and agentv-gate get the same reply
to the same kind of request:

* a rubric grader with score ranges (`### Criterion: ID` lines): every criterion scored 7;
* a checklist rubric grader (`- [ID]` lines and a `"checks"` schema): every item satisfied;
* any other grader (its system prompt asks for a JSON `"score"`): 0.8 with one passed and one failed
  assertion (4.x) and one hit and one miss (2.x), so both generations' readers find what they read;
* an agent: `ANSWER`;
* a grader offered the workspace tools (AgentV 4.42's built-in agent grader, a `provider: agentv` target):
  first `list_files {"path": "src"}` and `search_files {"pattern": "subtract"}`, then, once their results
  are back, a verdict read from them: 1.0 when the search found a match, else 0.0, with one assertion
  naming what `list_files` listed, so the tools' results decide the reply; a question naming a probe
  (`probe:escape`) gets the probe's calls and a verdict quoting each result, and `probe:forever` a tool
  call on every turn (agentic_grader.py runs them side by side).
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


PROBES: dict[str, list[tuple[str, str]]] = {
    "probe:escape": [("list_files", '{"path":".."}'), ("read_file", '{"path":"../../outside.txt"}'),
                     ("read_file", '{"path":"/etc/hostname"}'), ("read_file", '{"path":"src"}'),
                     ("read_file", '{"path":"src/missing.ts"}'), ("delete_file", '{"path":"src"}'),
                     ("read_file", '{"path": '), ("search_files", '{"pattern":"(","path":"src"}')],
}
"""A question holding a probe's name gets that probe's calls (each result then named in the verdict)."""
TOOL_CALLS = [("list_files", '{"path":"src"}'), ("search_files", '{"pattern":"subtract"}')]
FOREVER = "probe:forever"
"""A question holding it gets a tool call on every turn: the grader's step budget ends the loop."""


def _tool_results(messages: list[dict[str, Any]]) -> dict[Any, str]:
    """Each tool call's result: chat completions' `tool` messages, or the Messages API's `tool_result` blocks."""
    results = {m.get("tool_call_id"): str(m.get("content")) for m in messages if m.get("role") == "tool"}
    for message in messages:
        content = message.get("content")
        for block in content if message.get("role") == "user" and isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                results[block.get("tool_use_id")] = str(block.get("content"))
    return results


def tool_turn(body: dict[str, Any]) -> list[dict[str, str]] | str | None:
    """A tool-using grader's next reply: the calls to make, the verdict text (once their results are back),
    or None when the request offers no workspace tools (chat completions' or the Messages API's)."""
    names = {str((t.get("function") or t).get("name")) for t in body.get("tools") or [] if isinstance(t, dict)}
    if not {"list_files", "search_files"} <= names:
        return None
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    question = _text([m for m in messages if m.get("role") == "user"
                      and not any(isinstance(b, dict) and b.get("type") == "tool_result"
                                  for b in (m.get("content") if isinstance(m.get("content"), list) else []))])
    results = _tool_results(messages)
    probe = next((name for name in PROBES if name in question), None)
    calls = PROBES[probe] if probe else TOOL_CALLS
    if FOREVER in question or not results:
        turn = len(results)
        return [{"id": f"call_{turn}_{i}", "name": name, "arguments": arguments}
                for i, (name, arguments) in enumerate(calls)]
    if probe:
        return json.dumps({"score": 0.5, "assertions": [{"text": f"{key}: {text[:160]}", "passed": True}
                                                        for key, text in sorted(results.items())]})
    try:
        listed = [e.get("name") for e in json.loads(results.get("call_0_0", "[]")) if isinstance(e, dict)]
    except (ValueError, AttributeError):
        listed = []
    try:
        found = int(json.loads(results.get("call_0_1", "{}")).get("total") or 0)
    except (ValueError, AttributeError):
        found = 0
    return json.dumps({"score": 1.0 if found else 0.0,
                       "assertions": [{"text": f"src lists {', '.join(map(str, listed)) or 'nothing'}",
                                       "passed": bool(found)}]})


def _json_object(text: str) -> dict[str, Any]:
    """A call's arguments as a Messages `tool_use` input: the JSON object, else `{}` (the API takes no other)."""
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


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

    def _tool_calls(self, calls: list[dict[str, str]], body: dict[str, Any]) -> None:
        """A reply asking for `calls`: one chat completion, or its chunks when `stream` is set (as pi-ai reads
        them: each call's index, id, name and arguments in a `delta.tool_calls`, then `finish_reason`)."""
        model = str(body.get("model", "fake"))
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        wire = [{"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                for c in calls]
        if not body.get("stream"):
            reply = {"id": "fake-1", "object": "chat.completion", "created": 0, "model": model,
                     "choices": [{"index": 0, "message": {"role": "assistant", "content": None, "tool_calls": wire},
                                  "finish_reason": "tool_calls"}], "usage": usage}
            self._send(json.dumps(reply).encode(), "application/json")
            return
        head = {"id": "fake-1", "object": "chat.completion.chunk", "created": 0, "model": model}
        chunks = [{"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [{"index": i, **call}]},
                                "finish_reason": None}]} for i, call in enumerate(wire)]
        chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}], "usage": usage})
        data = "".join(f"data: {json.dumps({**head, **chunk})}\n\n" for chunk in chunks) + "data: [DONE]\n\n"
        self._send(data.encode(), "text/event-stream")

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

    def _messages(self, body: dict[str, Any]) -> None:
        """The Anthropic Messages API (a `anthropic:` agentv grader): the reply, or its events when streamed."""
        turn = tool_turn(body)
        model = str(body.get("model", "fake"))
        if isinstance(turn, list):
            content: list[dict[str, Any]] = [{"type": "tool_use", "id": c["id"], "name": c["name"],
                                              "input": _json_object(c["arguments"])} for c in turn]
            stop = "tool_use"
        else:
            text = turn if isinstance(turn, str) else reply_for(body.get("messages") or [])
            content, stop = [{"type": "text", "text": text}], "end_turn"
        usage = {"input_tokens": 10, "output_tokens": 5}
        message = {"id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": content,
                   "stop_reason": stop, "stop_sequence": None, "usage": usage}
        if not body.get("stream"):
            self._send(json.dumps(message).encode(), "application/json")
            return
        events: list[dict[str, Any]] = [{"type": "message_start", "message": {**message, "content": [],
                                                                             "stop_reason": None}}]
        for index, block in enumerate(content):
            if block["type"] == "text":
                events += [{"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
                           {"type": "content_block_delta", "index": index,
                            "delta": {"type": "text_delta", "text": block["text"]}}]
            else:
                events += [{"type": "content_block_start", "index": index,
                            "content_block": {**block, "input": {}}},
                           {"type": "content_block_delta", "index": index,
                            "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}}]
            events.append({"type": "content_block_stop", "index": index})
        events += [{"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": 5}}, {"type": "message_stop"}]
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
        if self.path.rstrip("/").endswith("/messages"):
            self._messages(body)
            return
        turn = tool_turn(body)
        if isinstance(turn, list):
            self._tool_calls(turn, body)
            return
        content = turn if isinstance(turn, str) else reply_for(body.get("messages") or [])
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
