"""The one network policy every HTTP provider goes through: `post_json` under a tenacity retry.

Why a single policy: a gate that flakes on a provider's bad minute blocks a pull request for no
reason, while one that retries too eagerly turns a broken key into a ten-minute hang. So every
call, target or judge, follows the same rules, and they are easy to state:

* retried: connection failures, timeouts, HTTP 408, 429 and 5xx (or the target's own
  `retry_status_codes`);
* not retried: any other 4xx (a bad key or a bad request will not get better by waiting);
* the wait is the server's `Retry-After` (or `retry-after-ms`) when it sends one, capped,
  otherwise exponential backoff with jitter;
* a 429 is the target's business, not the request's: every attempt takes a slot from the
  target's `RateLimiter` (limiter.py) first, which pauses and slows all of the target's calls
  after a 429. A 429 is waited out while the time budget allows and does not count against the
  attempts (except OpenAI's `insufficient_quota`, which waiting does not fix);
* both the number of attempts and the total time (waits plus requests) are bounded, and each
  attempt's timeout shrinks so the total bound holds.

An attempt's timeout is a deadline for the whole exchange (connect, send, headers and the full
body), not a bound on each socket read: a server that drips its reply a byte at a time is cut
off at the deadline like one that never answers. The body is read in pieces and refused once it
passes `max_response_bytes` (decompressed), so a huge reply costs neither memory nor a huge
results row: it is an error for its case.

How many retries a call needed travels back with its result (`HttpResult.retries`) or its
error (`HttpCallError.retries`), so it can show up in `TargetResponse.retries` and
`EvaluationScore.retries`. Secrets handed in are scrubbed from every message this module makes.
"""

from __future__ import annotations

import json
import math
import os
import re
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import requests
import tenacity
from tenacity import RetryCallState, Retrying, retry_if_exception_type
from tenacity.stop import stop_base
from tenacity.wait import wait_base, wait_exponential_jitter

from ..errors import ProviderError
from ..redaction import redact
from .limiter import RateLimiter, RateLimitWait, Ticket, parse_retry_after, used_tokens

_BODY_SNIPPET_CHARS = 300


def _default_retryable(status: int) -> bool:
    return status in (408, 429) or 500 <= status <= 599


@dataclass(frozen=True)
class RetryPolicy:
    """Limits for one logical call. Defaults suit a real provider; tests shrink them to milliseconds."""

    max_attempts: int = 4
    """Total attempts, the first one included (so 3 retries)."""
    max_total_seconds: float = 300.0
    """Bound on the whole call: requests plus waits. No retry starts past it."""
    request_timeout_seconds: float = 120.0
    """Bound on one attempt (connect and each read)."""
    initial_delay_seconds: float = 1.0
    backoff_factor: float = 2.0
    max_delay_seconds: float = 30.0
    jitter_seconds: float = 1.0
    max_retry_after_seconds: float = 60.0
    """A server asking for a longer wait than this gets this much."""
    retry_status_codes: frozenset[int] | None = None
    """None means 408, 429 and every 5xx."""
    max_response_bytes: int = 8 * 1024 * 1024
    """A reply body (decompressed) larger than this is an error, never read whole."""

    def is_retryable_status(self, status: int) -> bool:
        if self.retry_status_codes is not None:
            return status in self.retry_status_codes
        return _default_retryable(status)

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any], base: RetryPolicy | None = None) -> RetryPolicy:
        """Read a target's retry keys: AgentV's names plus our bounds on time.

        AgentV: `max_retries`, `retry_initial_delay_ms`, `retry_max_delay_ms`,
        `retry_backoff_factor`, `retry_status_codes` (camelCase accepted too). Ours:
        `retry_max_total_seconds`, `retry_jitter_ms`, `retry_after_max_seconds`, and
        `timeout_seconds` (or `request_timeout_seconds`) for one attempt. Bad values raise
        ValueError naming the key.
        """
        policy = base or cls()
        changes: dict[str, Any] = {}

        def number(*keys: str) -> float | None:
            for key in keys:
                if key in settings and settings[key] is not None and settings[key] != "":
                    raw = settings[key]
                    try:
                        value = float(raw)
                    except (TypeError, ValueError):
                        raise ValueError(f"{key} must be a number, got {raw!r}") from None
                    if isinstance(raw, bool) or not math.isfinite(value) or value < 0:
                        raise ValueError(f"{key} must be a non-negative number, got {raw!r}")
                    return value
            return None

        retries = number("max_retries", "maxRetries")
        if retries is not None:
            changes["max_attempts"] = int(retries) + 1
        for attr, keys, scale in (
            ("initial_delay_seconds", ("retry_initial_delay_ms", "retryInitialDelayMs"), 0.001),
            ("max_delay_seconds", ("retry_max_delay_ms", "retryMaxDelayMs"), 0.001),
            ("backoff_factor", ("retry_backoff_factor", "retryBackoffFactor"), 1.0),
            ("jitter_seconds", ("retry_jitter_ms", "retryJitterMs"), 0.001),
            ("max_total_seconds", ("retry_max_total_seconds", "retryMaxTotalSeconds"), 1.0),
            ("max_retry_after_seconds", ("retry_after_max_seconds", "retryAfterMaxSeconds"), 1.0),
            (
                "request_timeout_seconds",
                ("request_timeout_seconds", "timeout_seconds", "timeoutSeconds"),
                1.0,
            ),
        ):
            value = number(*keys)
            if value is not None:
                changes[attr] = value * scale
        cap = settings.get("max_response_bytes", settings.get("maxResponseBytes"))
        if cap is not None:
            if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
                raise ValueError(f"max_response_bytes must be a whole number of bytes >= 1, got {cap!r}")
            changes["max_response_bytes"] = cap
        if changes.get("request_timeout_seconds") == 0:
            raise ValueError("timeout_seconds must be greater than zero")
        codes = settings.get("retry_status_codes", settings.get("retryStatusCodes"))
        if codes is not None:
            if not isinstance(codes, list) or not all(
                isinstance(c, int) and not isinstance(c, bool) for c in codes
            ):
                raise ValueError(f"retry_status_codes must be a list of HTTP status codes, got {codes!r}")
            changes["retry_status_codes"] = frozenset(codes)
        return replace(policy, **changes)


@dataclass
class HttpResult:
    status: int
    data: Any
    """The decoded JSON body."""
    retries: int = 0
    duration_ms: int = 0
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ProviderErrorDetail:
    """The provider's own account of a failed call: the `error` object of an OpenAI, Azure,
    Anthropic or Gemini error body (or the top-level fields vLLM-style servers send), secrets scrubbed.

    Kept apart from the message so a provider can act on it (e.g. leave out a parameter the
    server names as unsupported), and quoted in the message so that "Unsupported parameter ..."
    or "content_filter" is what the user reads, not only a status code.
    """

    message: str | None = None
    type: str | None = None
    code: str | None = None
    param: str | None = None
    inner_code: str | None = None
    """Azure's `innererror.code`, e.g. ResponsibleAIPolicyViolation beside code content_filter."""

    def describe(self) -> str:
        labels = [f"{name} {value}" for name, value in (
            ("type", self.type), ("code", self.code), ("param", self.param), ("inner code", self.inner_code)
        ) if value]
        quoted = json.dumps(self.message, ensure_ascii=False) if self.message else ""
        if not labels:
            return quoted
        return f"provider error ({', '.join(labels)})" + (f": {quoted}" if quoted else "")


def _snippet(text: str, secrets: Iterable[str]) -> str:
    """`text` scrubbed of `secrets`, then cut to `_BODY_SNIPPET_CHARS` ("..." when cut).

    Scrubbed before it is cut: the other way round, a secret straddling the cut would keep its
    visible head, which `redact` no longer recognises.
    """
    text = redact(text, secrets)
    return text[:_BODY_SNIPPET_CHARS] + ("..." if len(text) > _BODY_SNIPPET_CHARS else "")


def _text_field(value: Any, secrets: Iterable[str]) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (str, int, float)):
        text = " ".join(str(value).split())
        return _snippet(text, secrets) if text else None
    return None


def provider_error_detail(body: Any, secrets: Iterable[str] = ()) -> ProviderErrorDetail | None:
    """The provider's error fields from a decoded error body, or None when it holds none."""
    if not isinstance(body, dict):
        return None
    error = body.get("error")
    source: dict[str, Any]
    if isinstance(error, dict):
        source = error
    elif isinstance(error, str):
        source = {"message": error, "type": body.get("type"), "code": body.get("code")}
    elif isinstance(body.get("message"), str):
        source = body
    else:
        return None
    inner_error = source.get("innererror")
    inner: dict[str, Any] = inner_error if isinstance(inner_error, dict) else {}
    secret_list = [s for s in secrets if s]
    detail = ProviderErrorDetail(
        message=_text_field(source.get("message"), secret_list),
        type=_text_field(source.get("type") or source.get("status"), secret_list),  # Gemini: status INVALID_ARGUMENT
        code=_text_field(source.get("code"), secret_list),
        param=_text_field(source.get("param"), secret_list),
        inner_code=_text_field(inner.get("code"), secret_list),
    )
    return detail if (detail.message or detail.type or detail.code) else None


class HttpCallError(ProviderError):
    """A call that failed for good: a non-retryable status, or retries exhausted.

    The message is safe to show (secrets scrubbed) and says what was expected and what came.
    `detail` carries the provider's own error fields when its reply had them.
    """

    def __init__(
        self,
        message: str,
        *,
        retries: int = 0,
        status: int | None = None,
        detail: ProviderErrorDetail | None = None,
    ) -> None:
        super().__init__(message)
        self.retries = retries
        self.status = status
        self.detail = detail
        self.headers: dict[str, str] = {}
        """The failed reply's headers, for the target's rate limiter to learn from."""


class _Retryable(Exception):
    """One attempt failed in a way worth another try (internal to the retry loop)."""

    def __init__(
        self,
        message: str,
        *,
        retry_after: float | None = None,
        status: int | None = None,
        detail: ProviderErrorDetail | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after
        self.status = status
        self.detail = detail
        self.headers: dict[str, str] = {}
        """The failed reply's headers, for the target's rate limiter to learn from."""

    @property
    def rate_limited(self) -> bool:
        """A 429: the target's limiter does the waiting, and the attempt does not count against max_retries."""
        return self.status == 429


def _exponential_jitter(policy: RetryPolicy) -> wait_base:
    """tenacity's exponential-with-jitter wait; its first argument was renamed in tenacity 9."""
    try:
        return wait_exponential_jitter(
            multiplier=policy.initial_delay_seconds,
            max=policy.max_delay_seconds,
            exp_base=policy.backoff_factor,
            jitter=policy.jitter_seconds,
        )
    except TypeError:  # tenacity < 9 calls the multiplier `initial`
        return wait_exponential_jitter(
            initial=policy.initial_delay_seconds,
            max=policy.max_delay_seconds,
            exp_base=policy.backoff_factor,
            jitter=policy.jitter_seconds,
        )


class _WaitRetryAfterOrBackoff(wait_base):
    """Honour the server's Retry-After (capped) when it sent one; back off exponentially otherwise."""

    def __init__(self, policy: RetryPolicy) -> None:
        self._backoff = _exponential_jitter(policy)
        self._cap = policy.max_retry_after_seconds

    def __call__(self, retry_state: RetryCallState) -> float:
        outcome = retry_state.outcome
        exc = outcome.exception() if outcome is not None and outcome.failed else None
        if isinstance(exc, _Retryable) and exc.rate_limited:
            return 0.0  # the next attempt waits in `RateLimiter.acquire`, with every other call of the target
        if isinstance(exc, _Retryable) and exc.retry_after is not None:
            return min(exc.retry_after, self._cap)
        return float(self._backoff(retry_state))


class _Stop(stop_base):
    """Stop after `max_attempts` counted attempts or past the time budget.

    An attempt answered 429 is not counted: a rate limit is a reason to wait, not a failure, so it
    is waited out for as long as the call's time budget (`retry_max_total_seconds`) allows. It
    stops when the target's pause would outlast that budget.
    """

    def __init__(self, policy: RetryPolicy, limiter: RateLimiter, counted: Callable[[], int],
                 elapsed: Callable[[], float]) -> None:
        # stop_before_delay (tenacity >= 8.3) also refuses a wait that would overrun the budget.
        self._by_time = getattr(tenacity, "stop_before_delay", tenacity.stop_after_delay)(policy.max_total_seconds)
        self._policy, self._limiter, self._counted, self._elapsed = policy, limiter, counted, elapsed

    def __call__(self, retry_state: RetryCallState) -> bool:
        outcome = retry_state.outcome
        exc = outcome.exception() if outcome is not None and outcome.failed else None
        if isinstance(exc, _Retryable) and exc.rate_limited:
            return self._elapsed() + self._limiter.pause_remaining() >= self._policy.max_total_seconds
        return self._counted() >= max(1, self._policy.max_attempts) or bool(self._by_time(retry_state))


def _error_reply(response: requests.Response, secrets: list[str]) -> tuple[str, ProviderErrorDetail | None]:
    """What an error reply says, fit to quote (scrubbed), and the provider's fields if it had them."""
    try:
        body = response.json()
    except (ValueError, RecursionError):
        body = None
    detail = provider_error_detail(body, secrets)
    if detail is not None:
        return detail.describe(), detail
    text = (response.text or "").strip().replace("\n", " ")
    return _snippet(text, secrets), None


_CHUNK = 64 * 1024


class _BodyTooLarge(Exception):
    """The reply body passed the policy's byte cap (internal to `_read_body`)."""


def _socket_of(response: requests.Response) -> socket.socket | None:
    """The connection's socket, so each read can wait no longer than the deadline; None if hidden.

    A reply the server will close after (`Connection: close`, or a body read to the end of the
    stream) has already been let go by its connection: its socket is reached through the file the
    body is read from instead, or a read could wait a whole timeout past the deadline.
    """
    connection = getattr(response.raw, "connection", None) or getattr(response.raw, "_connection", None)
    sock = getattr(connection, "sock", None)
    if not isinstance(sock, socket.socket):
        body_file = getattr(getattr(response.raw, "_fp", None), "fp", None)
        sock = getattr(getattr(body_file, "raw", None), "_sock", None)
    return sock if isinstance(sock, socket.socket) else None


def _read_body(response: requests.Response, deadline: float, cap: int) -> None:
    """Read the (streamed) body into `response` piece by piece, within `deadline` and `cap` bytes.

    Raises `requests.Timeout` at the deadline and `_BodyTooLarge` past the cap. Each read waits at
    most until the deadline, however slowly the server sends.
    """
    sock = _socket_of(response)
    read = getattr(response.raw, "read1", None) or response.raw.read
    chunks: list[bytes] = []
    size = 0
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise requests.Timeout("deadline passed while reading the reply")
            if sock is not None and sock.fileno() != -1:
                # closed once the body's last byte is read from a server that ends the connection (HTTP/1.0,
                # `Connection: close`): setting a timeout there raised EBADF, a good reply made an error
                sock.settimeout(remaining)
            chunk = read(_CHUNK, decode_content=True)
            if not chunk:
                break
            size += len(chunk)
            if size > cap:
                raise _BodyTooLarge()
            chunks.append(chunk)
    except BaseException as exc:
        response.close()  # a half-read connection must not go back to the keep-alive pool
        if isinstance(exc, (socket.timeout, TimeoutError)) or (
                isinstance(exc, Exception) and not isinstance(exc, (_BodyTooLarge, requests.Timeout))
                and "timed out" in str(exc).lower()):
            raise requests.Timeout("deadline passed while reading the reply") from None
        if type(exc).__module__.startswith("urllib3"):  # the server hung up mid-body (IncompleteRead, reset)
            raise requests.exceptions.ChunkedEncodingError(str(exc)) from None
        raise
    response._content = b"".join(chunks)  # noqa: SLF001 - what `response.content` would have read
    response._content_consumed = True  # type: ignore[attr-defined]  # noqa: SLF001


_local = threading.local()


def _session() -> requests.Session:
    """One keep-alive session per thread: requests.Session is not safe to share across threads.

    It does not read the environment itself (`trust_env`): requests would then also read ~/.netrc
    and send its Basic credentials in place of the Authorization header the target set, and redo
    the proxy lookup on every call. `_environment` gives it what the environment does say.
    """
    session = getattr(_local, "session", None)
    if session is None:
        session = requests.Session()
        session.trust_env = False
        _local.session = session
    return session


_ENVIRONMENT_VARIABLES = tuple(
    spelling for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy") for spelling in (name, name.upper())
) + ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")
"""What requests reads from the environment for an http(s) URL."""
_environments: dict[tuple[str, tuple[str | None, ...]], tuple[dict[str, str], bool | str]] = {}


def missing_ca_bundle() -> tuple[str, str] | None:
    """(variable, path) when the CA bundle the environment gives HTTPS calls (REQUESTS_CA_BUNDLE, else
    CURL_CA_BUNDLE, as requests reads them) does not exist: every HTTPS call would fail, so the
    preflight says so once instead of every case erroring."""
    for name in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):
        path = os.environ.get(name)
        if path:
            return None if os.path.exists(path) else (name, path)
    return None


def _environment(url: str) -> tuple[dict[str, str], bool | str]:
    """The proxies (HTTP(S)_PROXY, NO_PROXY, ...) and CA bundle (REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE)
    requests takes from the environment for `url`, worked out once per origin and environment."""
    origin = url.split("/", 3)[:3]
    key = ("/".join(origin), tuple(map(os.environ.get, _ENVIRONMENT_VARIABLES)))
    settings = _environments.get(key)
    if settings is None:
        reader = requests.Session()  # trust_env: what requests itself would read, netrc aside
        merged = reader.merge_environment_settings(url, {}, None, None, None)
        reader.close()
        verify = merged["verify"]
        settings = _environments[key] = (dict(merged["proxies"]), True if verify is None else verify)
    return settings


def post_json(
    url: str,
    body: Mapping[str, Any],
    *,
    headers: Mapping[str, str] | None = None,
    policy: RetryPolicy | None = None,
    secrets: Iterable[str] = (),
    describe: str = "request",
    limiter: RateLimiter | None = None,
    tokens: int = 0,
) -> HttpResult:
    """POST `body` as JSON and return the decoded JSON reply, retrying per `policy`.

    `describe` names the caller in messages (e.g. "openai target 'judge'"). Raises
    `HttpCallError` (a `ProviderError`) with `.retries` and `.status` when the call fails for good.
    """
    return http_call(
        "POST", url, body=body, headers=headers, policy=policy, secrets=secrets, describe=describe,
        limiter=limiter, tokens=tokens,
    )


def http_call(
    method: str,
    url: str,
    *,
    body: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
    policy: RetryPolicy | None = None,
    secrets: Iterable[str] = (),
    describe: str = "request",
    expect_json: bool = True,
    limiter: RateLimiter | None = None,
    tokens: int = 0,
) -> HttpResult:
    """One HTTP call under the retry policy. With `expect_json=False` the body is not decoded
    (`data` is the text), e.g. for a healthcheck GET.

    Each attempt first takes a slot from `limiter` (the target's, shared by all its calls; without
    one the call gets its own), charged `tokens` (the request's estimate), and tells it after what
    the reply said: its status, its rate-limit headers, the tokens it used.
    """
    policy = policy or RetryPolicy()
    limiter = limiter or RateLimiter(max_pause_seconds=policy.max_retry_after_seconds)
    secret_list = [s for s in secrets if s]
    started = time.monotonic()
    attempts = 0
    refused = 0
    """Attempts answered 429: retried while time allows, not counted against max_attempts."""
    last_status: int | None = None

    def elapsed() -> float:
        return time.monotonic() - started

    def attempt() -> HttpResult:
        nonlocal attempts, refused, last_status
        try:
            ticket = limiter.acquire(tokens, deadline=started + policy.max_total_seconds)
        except RateLimitWait as exc:
            raise HttpCallError(redact(
                f"{describe}: {method} {url}: no slot under the target's rate limit within "
                f"retry_max_total_seconds ({policy.max_total_seconds:g}s): {exc}"
                + (f" (last answer HTTP {last_status})" if last_status else ""), secret_list),
                status=last_status) from None
        attempts += 1
        try:
            return send(ticket)
        except _Retryable as exc:
            last_status = exc.status
            refused += exc.rate_limited
            raise
        except HttpCallError as exc:
            last_status = exc.status
            raise

    def send(ticket: Ticket) -> HttpResult:
        status: int | None = None
        reply_headers: Mapping[str, str] = {}
        used: int | None = None
        try:
            result = exchange()
            status, reply_headers, used = result.status, result.headers, used_tokens(result.data)
            return result
        except (_Retryable, HttpCallError) as exc:
            status = exc.status
            reply_headers = exc.headers
            if isinstance(exc, HttpCallError) and status == 429:
                status = None  # refused for good (a quota, or 429 not retried): no reason to slow the target
            raise
        finally:
            limiter.release(ticket, status=status, headers=reply_headers, used_tokens=used)

    def exchange() -> HttpResult:
        remaining = policy.max_total_seconds - elapsed()
        timeout = max(0.05, min(policy.request_timeout_seconds, remaining))
        attempt_started = time.monotonic()
        deadline = attempt_started + timeout
        proxies, verify = _environment(url)
        try:
            response = _session().request(
                method,
                url,
                json=None if body is None else dict(body),
                headers=dict(headers or {}),
                timeout=timeout,
                stream=True,
                proxies=proxies,
                verify=verify,
            )
            _read_body(response, deadline, policy.max_response_bytes)
        except _BodyTooLarge:
            raise HttpCallError(
                redact(f"{describe}: the reply from {url} was more than {policy.max_response_bytes} bytes "
                       "(max_response_bytes); raise it if such replies are expected", secret_list)
            ) from None
        except requests.Timeout:
            raise _Retryable(f"no response within {timeout:.2f}s (a deadline for the whole reply, "
                             "body included)") from None
        except requests.ConnectionError as exc:
            raise _Retryable(f"connection failed ({type(exc).__name__})") from None
        except requests.exceptions.ChunkedEncodingError as exc:
            # The server hung up mid-body: a network failure like any other, worth another try.
            cut = re.search(r"IncompleteRead\(([^)]*)\)", str(exc))
            raise _Retryable("the connection closed before the reply was complete"
                             + (f" ({cut.group(1)})" if cut else "")) from None
        except (requests.RequestException, OSError) as exc:
            # OSError: requests' own refusals that are not RequestExceptions (a CA bundle that is not there).
            raise HttpCallError(
                redact(f"{describe}: cannot send request to {url}: {exc}", secret_list)
            ) from None
        status = response.status_code
        if status >= 400:
            said, detail = _error_reply(response, secret_list)
            quota = status == 429 and detail is not None and "insufficient_quota" in (detail.code, detail.type)
            if policy.is_retryable_status(status) and not quota:
                retryable = _Retryable(
                    f"HTTP {status}: {said}", retry_after=parse_retry_after(response.headers), status=status,
                    detail=detail,
                )
                retryable.headers = dict(response.headers)
                raise retryable
            hint = "; the account's quota is used up, which waiting will not change" if quota else ""
            failed = HttpCallError(
                redact(f"{describe}: HTTP {status} from {method} {url}: {said}{hint}", secret_list), status=status,
                detail=detail,
            )
            failed.headers = dict(response.headers)
            raise failed
        data: Any = response.text
        if expect_json:
            try:
                data = response.json()
            except (ValueError, RecursionError):
                text = redact(response.text, secret_list)[:_BODY_SNIPPET_CHARS]  # scrubbed whole, then cut
                raise HttpCallError(
                    f"{describe}: expected a JSON reply from {url}, got {text!r} (HTTP {status})",
                    status=status,
                ) from None
        return HttpResult(
            status=status,
            data=data,
            duration_ms=int((time.monotonic() - attempt_started) * 1000),
            headers=dict(response.headers),
        )

    retrying = Retrying(
        stop=_Stop(policy, limiter, lambda: attempts - refused, elapsed),
        wait=_WaitRetryAfterOrBackoff(policy),
        retry=retry_if_exception_type(_Retryable),
        reraise=True,
    )
    try:
        result = retrying(attempt)
    except _Retryable as exc:
        waiting = limiter.pause_remaining() if exc.rate_limited else 0.0
        budget = (f"; the rate limit asks for {waiting:.1f}s more, past retry_max_total_seconds "
                  f"({policy.max_total_seconds:g}s)") if waiting else ""
        raise HttpCallError(
            redact(
                f"{describe}: {method} {url} failed after {attempts} attempt(s) in {elapsed():.1f}s: "
                f"{exc.message}{budget}",
                secret_list,
            ),
            retries=max(0, attempts - 1),
            status=exc.status,
            detail=exc.detail,
        ) from None
    except HttpCallError as exc:
        exc.retries = max(0, attempts - 1)
        raise
    result.retries = attempts - 1
    result.duration_ms = int(elapsed() * 1000)
    return result
