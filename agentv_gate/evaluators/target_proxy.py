"""A code judge's line to the judge model: AgentV's target proxy, a loopback HTTP server per judge run.

A code judge with `target:` may ask the case's judge model questions (recall checks, claim
extraction, ...). It must not get the model's credentials, and it must not run up an unbounded
bill, so it gets neither the provider nor its key: for each run of the judge script a server is
started on 127.0.0.1 (a random free port) with a fresh random bearer token, and the script finds
both in `AGENTV_TARGET_PROXY_URL` / `AGENTV_TARGET_PROXY_TOKEN`. Each call goes through the judge
provider as an `llm_judge` call does: the same retry policy, the same response cache (the provider
handed in is the cache-wrapped one), secrets scrubbed from every reply, answers and errors alike. At most
`max_calls` model calls per judge run (so per case); the next gets 429. The server stops when
the script is done, so a token is worthless afterwards.

Endpoints, as AgentV 2.19's (so judges written against AgentV's `TargetClient` work unchanged);
every request needs `Authorization: Bearer <token>`:

    GET  /info         -> {targetName, maxCalls, callCount, availableTargets}
    POST /invoke       {question, systemPrompt?, evalCaseId?, attempt?, target?}
                       -> {output: [messages], rawText, tokenUsage}
    POST /invokeBatch  {requests: [invoke bodies]} -> {responses: [invoke replies]}

A failed call answers `{"error": message}`: 400 (a body we do not understand, named), 401 (no or
wrong token), 404, 413 (body over 16 MiB), 429 (over `max_calls`; a batch that would pass the
limit is refused whole), 500 (a named target that cannot be used), 502 (the model gave no answer
after its retries). In a batch, an item
that fails says so in its own reply (`error`, and `rawText` starting `Error:` as AgentV writes it)
and the other items still run. `attempt` (default 1) picks a different cache entry, as an
`llm_judge` re-ask does.

`target` names the model that answers, as in AgentV 2.19: none (or the judge target's own name) is
the judge target; any other target of the run's targets.yaml may be named too (the case's own target
included), and `/info` lists them as AgentV does: the case's target, then every target of the file.
Such a target is built only when a judge first names it; one that cannot be used (an unset
`${{ VAR }}`) is a 500 naming why, for the whole batch it is in, as in AgentV. The limit, the token
and the scrubbing are the same whichever target answers, and no target's key reaches the script.
"""

from __future__ import annotations

import hmac
import json
import secrets
import threading
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..case_run import CaseRun
from ..errors import GateError
from ..redaction import redact_tree
from ..targets.base import Provider, ProviderRequest

if TYPE_CHECKING:  # http.server is imported when a proxy starts: most runs never start one
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_BODY_BYTES = 16 * 1024 * 1024
INVOKE_FIELDS = frozenset({"question", "systemPrompt", "evalCaseId", "attempt", "target"})
"""What an invoke body may hold (AgentV's TargetProxyInvokeRequest); anything else is refused by name."""


class NamedTargets(Protocol):
    """The run's targets file, for a judge that names a target other than its judge's."""

    def declared_targets(self) -> list[str]:
        """Every target name of the targets file, in its order."""
        ...

    def named_provider(self, name: str) -> Provider:
        """The built provider of target `name`; raises when it cannot be used (an unset variable)."""
        ...


@runtime_checkable
class CaseTargets(Protocol):
    """A run whose eval files find different targets files: the targets a case's judge may name are its own
    eval file's (targets/per_file.py)."""

    def for_case(self, case: Any) -> NamedTargets: ...


def targets_of_case(targets: NamedTargets | CaseTargets | None, case: Any) -> NamedTargets | None:
    return targets.for_case(case) if isinstance(targets, CaseTargets) else targets


def available_targets(judge: str, case_target: str, targets: NamedTargets | None) -> list[str]:
    """What `/info` lists: AgentV's list, the case's target then every target of the file (so the
    case's target appears twice, as there); without a targets file, the judge target alone."""
    if targets is None:
        return [judge]
    return [*([case_target] if case_target else []), *targets.declared_targets()]


class _Refusal(Exception):
    """One request the proxy answers with an error status instead of a model reply."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class ProxyUsage:
    """What the judge did through the proxy, for `evaluator_raw_request["target_proxy"]`."""

    target: str
    max_calls: int
    call_count: int = 0
    refused_calls: int = 0
    """Calls refused for the limit (429): a judge that hit it may have judged on less than it meant to."""
    failed_calls: int = 0
    retries: int = 0
    cache_hits: int = 0
    """Calls answered from the response cache (also counted on the case run, as every call's are)."""
    input_tokens: int = 0
    output_tokens: int = 0
    errors: list[str] = field(default_factory=list)
    other_targets: dict[str, int] = field(default_factory=dict)
    """Answered calls per target the judge named instead of its judge target."""

    def as_raw(self) -> dict[str, Any]:
        raw: dict[str, Any] = {"target": self.target, "max_calls": self.max_calls, "call_count": self.call_count}
        if self.cache_hits:
            raw["cache_hits"] = self.cache_hits
        if self.refused_calls:
            raw["refused_calls"] = self.refused_calls
        if self.failed_calls:
            raw["failed_calls"] = self.failed_calls
            raw["errors"] = self.errors[:5]
        if self.other_targets:
            raw["other_targets"] = dict(self.other_targets)
        if self.input_tokens or self.output_tokens:
            raw["token_usage"] = {"input": self.input_tokens, "output": self.output_tokens}
        return raw


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


class TargetProxy:
    """The proxy for one judge run: `with TargetProxy(...) as proxy:` run the script with `proxy.env()`."""

    def __init__(self, provider: Provider, max_calls: int, *, case_id: str, evaluator: str,
                 model: str | None = None, targets: NamedTargets | None = None, case_target: str = "",
                 run: CaseRun | None = None) -> None:
        self.provider = provider
        self.targets = targets
        self.available = available_targets(provider.name, case_target, targets)
        self.case_id = case_id
        self.evaluator = evaluator
        self.model = model
        self.token = secrets.token_hex(32)
        self.run = run
        """The case run the judge grades: the proxy's calls take its cache setting and count their hits on it."""
        self.usage = ProxyUsage(target=provider.name, max_calls=max_calls)
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------ lifecycle

    def __enter__(self) -> TargetProxy:
        self.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def start(self) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:  # the judge's calls are not ours to log
                pass

            def do_GET(self) -> None:  # http.server's naming
                proxy._serve(self)

            def do_POST(self) -> None:
                proxy._serve(self)

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True  # a call still waiting on the model never holds up the case
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="target-proxy", daemon=True)
        self._thread.start()

    def close(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the target proxy is not running")
        port = self._server.server_address[1]
        return f"http://127.0.0.1:{port}"

    def env(self) -> dict[str, str]:
        """What the judge script gets: where the proxy is and its token. No credential of the model."""
        return {"AGENTV_TARGET_PROXY_URL": self.url, "AGENTV_TARGET_PROXY_TOKEN": self.token}

    # ------------------------------------------------------------ HTTP

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        handler.close_connection = True  # one request per connection: a refused body is never left half-read
        try:
            status, reply = 200, self._route(handler)
        except _Refusal as refusal:
            status, reply = refusal.status, {"error": refusal.message}
        # Every reply, a model's answer as much as an error quoting one: the judge script is the
        # code under review, and a model may echo the key it was sent.
        data = json.dumps(redact_tree(reply), ensure_ascii=False, default=str).encode("utf-8")
        try:
            handler.send_response(status)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(data)))
            handler.send_header("Connection", "close")
            handler.end_headers()
            handler.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the judge gave up waiting (or was killed at its timeout)

    def _route(self, handler: BaseHTTPRequestHandler) -> dict[str, Any]:
        given = handler.headers.get("Authorization") or ""
        if not hmac.compare_digest(given.encode("utf-8", "replace"), f"Bearer {self.token}".encode()):
            raise _Refusal(401, "Unauthorized: send the AGENTV_TARGET_PROXY_TOKEN as a bearer token")
        path = handler.path.split("?", 1)[0]
        if handler.command == "GET" and path == "/info":
            with self._lock:
                count = self.usage.call_count
            return {"targetName": self.provider.name, "maxCalls": self.usage.max_calls, "callCount": count,
                    "availableTargets": self.available}
        if handler.command == "POST" and path == "/invoke":
            item = self._invoke_body(self._read_json(handler), "")
            self._reserve(1)
            return self._call(item)
        if handler.command == "POST" and path == "/invokeBatch":
            return self._invoke_batch(self._read_json(handler))
        raise _Refusal(404, f"Not found: {handler.command} {path} (endpoints: GET /info, POST /invoke, "
                            "POST /invokeBatch)")

    @staticmethod
    def _read_json(handler: BaseHTTPRequestHandler) -> Any:
        try:
            length = int(handler.headers.get("Content-Length") or 0)
        except ValueError:
            raise _Refusal(400, "Content-Length is not a number") from None
        if length > MAX_BODY_BYTES:
            raise _Refusal(413, f"request body of {length} bytes is over the {MAX_BODY_BYTES} byte limit")
        body = handler.rfile.read(length) if length > 0 else b""
        try:
            return json.loads(body)
        except ValueError:
            raise _Refusal(400, "request body is not JSON") from None

    # ------------------------------------------------------------ calls

    def _invoke_body(self, body: Any, where: str) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise _Refusal(400, f"{where}expected a JSON object with a question, got {type(body).__name__}")
        unknown = sorted(set(body) - INVOKE_FIELDS)
        if unknown:
            raise _Refusal(400, f"{where}unknown field {unknown[0]!r} (known: {', '.join(sorted(INVOKE_FIELDS))})")
        question = body.get("question")
        if not isinstance(question, str) or not question:
            raise _Refusal(400, f"{where}Missing required field: question (a non-empty string)")
        system = body.get("systemPrompt")
        if system is not None and not isinstance(system, str):
            raise _Refusal(400, f"{where}systemPrompt must be a string")
        attempt = body.get("attempt", 1)
        if isinstance(attempt, bool) or not isinstance(attempt, int) or attempt < 1:
            raise _Refusal(400, f"{where}attempt must be a whole number >= 1, got {attempt!r}")
        provider, model = self._answering(body.get("target"), where)
        return {"question": question, "system_prompt": system, "attempt": attempt, "provider": provider,
                "model": model}

    def _answering(self, named: Any, where: str) -> tuple[Provider, str | None]:
        """Who answers a call naming `named`, and the model override that goes with it (the judge's only)."""
        if named is None or named == self.provider.name:
            return self.provider, self.model
        if self.targets is None or not isinstance(named, str) or named not in self.available:
            shown = f"'{named}'" if isinstance(named, str) else json.dumps(named)
            raise _Refusal(400, f"{where}Unknown target {shown}. Available: {', '.join(self.available)}")
        try:
            return self.targets.named_provider(named), None
        except Exception as exc:  # noqa: BLE001 - an unusable target is this call's answer, not a crash
            message = str(exc) if isinstance(exc, GateError) else f"{type(exc).__name__}: {exc}"
            raise _Refusal(500, f"{where}target '{named}' cannot be used: {message}") from None

    def _reserve(self, calls: int) -> None:
        with self._lock:
            if self.usage.call_count + calls > self.usage.max_calls:
                self.usage.refused_calls += calls
                done = self.usage.call_count
                raise _Refusal(429, f"Max calls exceeded (limit: {self.usage.max_calls}, made: {done}"
                                    + (f", batch: {calls}" if calls > 1 else "") + ")")
            self.usage.call_count += calls

    def _call(self, item: dict[str, Any]) -> dict[str, Any]:
        provider: Provider = item["provider"]
        request = ProviderRequest(
            question=item["question"], system_prompt=item["system_prompt"], model=item["model"],
            eval_case_id=self.case_id,
            role="target_proxy", attempt=item["attempt"] - 1, run=self.run,
        )
        try:
            response = provider.invoke(request)
        except Exception as exc:  # noqa: BLE001 - the judge gets the reason; the run goes on
            message = str(exc) if isinstance(exc, GateError) else f"{type(exc).__name__}: {exc}"
            with self._lock:
                self.usage.failed_calls += 1
                self.usage.retries += _count(getattr(exc, "retries", 0))
                self.usage.errors.append(message)
            role = "judge target" if provider is self.provider else "target"
            raise _Refusal(502, f"{role} '{provider.name}' failed: {message}") from None
        usage = response.token_usage or {}
        with self._lock:
            if provider is not self.provider:
                self.usage.other_targets[provider.name] = self.usage.other_targets.get(provider.name, 0) + 1
            self.usage.retries += response.retries
            self.usage.cache_hits += 1 if (response.raw or {}).get("cached") is True else 0
            self.usage.input_tokens += _count(usage.get("input"))
            self.usage.output_tokens += _count(usage.get("output"))
        return {"output": [m.model_dump(mode="json", exclude_none=True) for m in response.output_messages],
                "rawText": response.text, "tokenUsage": response.token_usage}

    def _invoke_batch(self, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict) or not isinstance(body.get("requests"), list):
            raise _Refusal(400, "Missing required field: requests (array)")
        items: list[dict[str, Any] | _Refusal] = []
        for index, raw in enumerate(body["requests"]):
            try:
                items.append(self._invoke_body(raw, f"requests[{index}]: "))
            except _Refusal as refusal:
                if refusal.status == 500:  # a named target that cannot be built fails the batch, as in AgentV
                    raise
                items.append(refusal)
        self._reserve(sum(1 for item in items if not isinstance(item, _Refusal)))
        replies = []
        for item in items:
            if not isinstance(item, _Refusal):
                try:
                    replies.append(self._call(item))
                    continue
                except _Refusal as refusal:
                    item = refusal
            replies.append({"output": [], "rawText": f"Error: {item.message}", "error": item.message})
        return {"responses": replies}


__all__ = ["INVOKE_FIELDS", "MAX_BODY_BYTES", "NamedTargets", "ProxyUsage", "TargetProxy", "available_targets"]
