"""The one network policy every HTTP provider goes through: `post_json` under a tenacity retry.

Why a single policy: a gate that flakes on a provider's bad minute blocks a pull request for no
reason, while one that retries too eagerly turns a broken key into a ten-minute hang. So every
call, target or judge, follows the same rules, and they are easy to state:

* retried: connection failures, timeouts, HTTP 408, 429 and 5xx (or the target's own
  `retry_status_codes`);
* not retried: any other 4xx (a bad key or a bad request will not get better by waiting), a TLS
  failure, and a redirect: a model API never needs one, so a 3xx is an error naming the host it
  points to, and no key or prompt is ever sent there;
* the wait is the server's `Retry-After` (or `retry-after-ms`) when it sends one, capped,
  otherwise exponential backoff with jitter;
* a 429 is the target's business, not the request's: every attempt takes a slot from the
  target's `RateLimiter` (limiter.py) first, which pauses and slows all of the target's calls
  after a 429. A 429 is waited out while the time budget allows and does not count against the
  attempts (except OpenAI's `insufficient_quota`, which waiting does not fix);
* both the number of attempts and the total time (waits plus requests) are bounded, and each
  attempt's timeout shrinks so the total bound holds.

An attempt's timeout is a deadline for the whole exchange (connect, send, headers and the full
body), kept by a watchdog that cuts the connection (deadline.py), not a bound on each socket read:
a server that drips its reply a byte at a time is cut off at the deadline like one that never
answers. A complete reply is read the same way however the server frames it (keep-alive,
`Connection: close`, HTTP/1.0 with or without a length, chunked, compressed). The body is refused
once it passes `max_response_bytes` (decompressed), so a huge reply costs neither memory nor a huge
results row: it is an error for its case. What a failed exchange means is read from the
exception's type (failures.py).

How many retries a call needed travels back with its result (`HttpResult.retries`) or its
error (`HttpCallError.retries`), so it can show up in `TargetResponse.retries` and
`EvaluationScore.retries`. Secrets handed in are scrubbed from every message this module makes.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping
from contextlib import closing
from dataclasses import dataclass, field
from typing import Any, NoReturn
from urllib.parse import urljoin, urlsplit

import requests
import tenacity
from requests.utils import get_encoding_from_headers
from tenacity import RetryCallState, Retrying, retry_if_exception_type
from tenacity.stop import stop_base
from tenacity.wait import wait_base, wait_exponential_jitter

from ..errors import ProviderError
from ..redaction import redact
from .deadline import attempt_deadline
from .failures import MalformedBody, classify, timeout_message
from .limiter import RateLimiter, RateLimitWait, Ticket, parse_retry_after, used_tokens
from .policy import RetryPolicy
from .session import environment, missing_ca_bundle, session

__all__ = [
    "HttpCallError", "HttpResult", "ProviderErrorDetail", "RetryPolicy", "http_call", "missing_ca_bundle",
    "parse_retry_after", "post_json", "provider_error_detail",
]

_BODY_SNIPPET_CHARS = 300
_CHUNK = 64 * 1024


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


@dataclass(frozen=True)
class _Reply:
    """A reply read whole (within the deadline and the byte cap): what the rest of the call looks at."""

    status: int
    headers: dict[str, str]
    """As the server sent them."""
    body: bytes

    def header(self, name: str) -> str | None:
        wanted = name.lower()
        return next((value for key, value in self.headers.items() if key.lower() == wanted), None)

    @property
    def charset(self) -> str | None:
        """The charset the Content-Type names (or requests' default for its type), if any."""
        return get_encoding_from_headers({"content-type": self.header("content-type") or ""})

    def text(self) -> str:
        try:
            return self.body.decode(self.charset or "utf-8", errors="replace")
        except LookupError:  # a charset Python does not know
            return self.body.decode("utf-8", errors="replace")

    def json(self) -> Any:
        """The body as JSON: decoded by its stated charset, else as JSON's own UTF-8/16/32."""
        if "charset=" in (self.header("content-type") or "").lower():
            return json.loads(self.text())
        return json.loads(self.body)


def _error_reply(reply: _Reply, secrets: list[str]) -> tuple[str, ProviderErrorDetail | None]:
    """What an error reply says, fit to quote (scrubbed), and the provider's fields if it had them."""
    try:
        body = reply.json()
    except (ValueError, RecursionError):
        body = None
    detail = provider_error_detail(body, secrets)
    if detail is not None:
        return detail.describe(), detail
    text = reply.text().strip().replace("\n", " ")
    return _snippet(text, secrets), None


class _BodyTooLarge(Exception):
    """The reply body passed the policy's byte cap (internal to `_read`)."""


def _read(response: requests.Response, cap: int) -> _Reply:
    """The whole reply, its body decoded (gzip, deflate) and refused past `cap` bytes.

    A stated length over the cap is refused before any of the body is read; otherwise the decoded
    bytes are counted as they come, so a small compressed body that inflates past the cap (a gzip
    bomb) is refused after at most `cap` bytes plus one piece.
    """
    stated = response.headers.get("Content-Length", "")
    encoded = response.headers.get("Content-Encoding", "identity").strip().lower() != "identity"
    if stated.isdigit() and not encoded and int(stated) > cap:
        raise _BodyTooLarge()
    pieces: list[bytes] = []
    size = 0
    try:
        for piece in response.iter_content(_CHUNK):
            size += len(piece)
            if size > cap:
                raise _BodyTooLarge()
            pieces.append(piece)
    except ValueError as exc:  # urllib3 reads a chunk size of `-5` as a length, which the socket's file refuses
        chunked = "chunked" in response.headers.get("Transfer-Encoding", "").lower()
        raise MalformedBody("the reply's chunked body had a negative chunk size (a chunk size is a hexadecimal "
                            "number of bytes)" if chunked else "the reply's body could not be read: its framing "
                            "is malformed") from exc
    return _Reply(response.status_code, dict(response.headers), b"".join(pieces))


def _redirect_host(url: str, location: str) -> str:
    """Where a 3xx points, as host[:port] (never its path or query, which may carry anything)."""
    parts = urlsplit(urljoin(url, location))
    host = parts.hostname or "?"
    host = f"[{host}]" if ":" in host else host
    try:
        port = parts.port
    except ValueError:
        port = None
    return f"{host}:{port}" if port else host


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
    return _Call(method, url, body, headers, policy, [s for s in secrets if s], describe, expect_json,
                 limiter or RateLimiter(max_pause_seconds=policy.max_retry_after_seconds), tokens).run()


class _Call:
    """One `http_call`, its steps one method each: `run` retries `attempt`, which takes a rate-limit slot
    and `send`s; `send` gives the slot back with what `exchange` (one request, under its deadline)
    learnt; `answer` reads the reply. The counts the retry loop stops on live here, for one call."""

    def __init__(self, method: str, url: str, body: Mapping[str, Any] | None, headers: Mapping[str, str] | None,
                 policy: RetryPolicy, secrets: list[str], describe: str, expect_json: bool, limiter: RateLimiter,
                 tokens: int) -> None:
        self.method, self.url, self.body, self.headers = method, url, body, headers
        self.policy, self.secrets, self.describe, self.expect_json = policy, secrets, describe, expect_json
        self.limiter, self.tokens = limiter, tokens
        self.started = time.monotonic()
        self.attempts = 0
        self.refused = 0
        """Attempts answered 429: retried while time allows, not counted against max_attempts."""
        self.last_status: int | None = None

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def redact(self, text: str) -> str:
        return redact(text, self.secrets)

    def run(self) -> HttpResult:
        """The call: attempts under the policy's stop and wait rules, and what a failure for good says."""
        policy = self.policy
        retrying = Retrying(
            stop=_Stop(policy, self.limiter, lambda: self.attempts - self.refused, self.elapsed),
            wait=_WaitRetryAfterOrBackoff(policy),
            retry=retry_if_exception_type(_Retryable),
            reraise=True,
        )
        try:
            result = retrying(self.attempt)
        except _Retryable as exc:
            waiting = self.limiter.pause_remaining() if exc.rate_limited else 0.0
            budget = (f"; the rate limit asks for {waiting:.1f}s more, past retry_max_total_seconds "
                      f"({policy.max_total_seconds:g}s)") if waiting else ""
            raise HttpCallError(
                self.redact(f"{self.describe}: {self.method} {self.url} failed after {self.attempts} attempt(s) in "
                            f"{self.elapsed():.1f}s: {exc.message}{budget}"),
                retries=max(0, self.attempts - 1),
                status=exc.status,
                detail=exc.detail,
            ) from None
        except HttpCallError as exc:
            exc.retries = max(0, self.attempts - 1)
            raise
        result.retries = self.attempts - 1
        result.duration_ms = int(self.elapsed() * 1000)
        return result

    def attempt(self) -> HttpResult:
        """One attempt: a slot under the target's rate limit (within the call's time budget), then `send`."""
        try:
            ticket = self.limiter.acquire(self.tokens, deadline=self.started + self.policy.max_total_seconds)
        except RateLimitWait as exc:
            raise HttpCallError(self.redact(
                f"{self.describe}: {self.method} {self.url}: no slot under the target's rate limit within "
                f"retry_max_total_seconds ({self.policy.max_total_seconds:g}s): {exc}"
                + (f" (last answer HTTP {self.last_status})" if self.last_status else "")),
                status=self.last_status) from None
        self.attempts += 1
        try:
            return self.send(ticket)
        except _Retryable as exc:
            self.last_status = exc.status
            self.refused += exc.rate_limited
            raise
        except HttpCallError as exc:
            self.last_status = exc.status
            raise

    def send(self, ticket: Ticket) -> HttpResult:
        """`exchange`, and the slot given back with what the reply taught: its status, headers, tokens used."""
        status: int | None = None
        reply_headers: Mapping[str, str] = {}
        used: int | None = None
        try:
            result = self.exchange()
            status, reply_headers, used = result.status, result.headers, used_tokens(result.data)
            return result
        except (_Retryable, HttpCallError) as exc:
            status = exc.status
            reply_headers = exc.headers
            if isinstance(exc, HttpCallError) and status == 429:
                status = None  # refused for good (a quota, or 429 not retried): no reason to slow the target
            raise
        finally:
            self.limiter.release(ticket, status=status, headers=reply_headers, used_tokens=used)

    def exchange(self) -> HttpResult:
        """One request and its whole reply, under a deadline of what is left of the time budget."""
        policy, url = self.policy, self.url
        remaining = policy.max_total_seconds - self.elapsed()
        timeout = max(0.05, min(policy.request_timeout_seconds, remaining))
        proxies, verify = environment(url)
        failed: BaseException | None = None
        with attempt_deadline(timeout) as deadline:
            try:
                response = session().request(
                    self.method, url, json=None if self.body is None else dict(self.body),
                    headers=dict(self.headers or {}), timeout=(timeout, timeout), stream=True, proxies=proxies,
                    verify=verify, allow_redirects=False,
                )
                with closing(response):  # a half-read connection is closed, never put back in the pool
                    if 300 <= response.status_code < 400:
                        reply = _Reply(response.status_code, dict(response.headers), b"")
                    else:
                        reply = _read(response, policy.max_response_bytes)
            except _BodyTooLarge:
                raise HttpCallError(
                    self.redact(f"{self.describe}: the reply from {url} was more than {policy.max_response_bytes} "
                                "bytes (max_response_bytes); raise it if such replies are expected")
                ) from None
            except Exception as exc:  # noqa: BLE001 - classified below, once the deadline's verdict is final
                failed = exc
        if deadline.fired:  # cut by the watchdog: whatever came back (even what looks like a whole reply)
            raise _Retryable(timeout_message(timeout))
        if failed is not None:
            failure = classify(failed, timeout, url)
            if failure is None:
                raise failed
            if failure.retry:
                raise _Retryable(failure.message)
            raise HttpCallError(self.redact(f"{self.describe}: {failure.message}"))
        return self.answer(reply)

    def answer(self, reply: _Reply) -> HttpResult:
        """The reply as a result, or why not: a redirect (never followed), an error status, a body not JSON."""
        status = reply.status
        if 300 <= status < 400:
            self.redirected(reply)
        if status >= 400:
            self.refused_with(reply)
        data: Any = reply.text()
        if self.expect_json:
            try:
                data = reply.json()
            except (ValueError, RecursionError):
                text = self.redact(reply.text())[:_BODY_SNIPPET_CHARS]  # scrubbed whole, then cut
                raise HttpCallError(
                    f"{self.describe}: expected a JSON reply from {self.url}, got {text!r} (HTTP {status})",
                    status=status,
                ) from None
        return HttpResult(status=status, data=data, headers=reply.headers)

    def redirected(self, reply: _Reply) -> NoReturn:
        """A 3xx: an error naming the host it points to; no key or prompt is ever sent there."""
        location = reply.header("location")
        said = (f"a redirect to {_redirect_host(self.url, location)}, not followed (a model API never needs one, and "
                "no key or prompt goes anywhere but the configured endpoint); set the target's endpoint to the "
                "final address if the API has moved" if location else
                "with no Location header: not an answer, and a model API never redirects")
        raise HttpCallError(self.redact(f"{self.describe}: HTTP {reply.status} from {self.method} {self.url}"
                                        f"{' ' if not location else ': '}{said}"), status=reply.status)

    def refused_with(self, reply: _Reply) -> NoReturn:
        """A 4xx or 5xx: retried when the policy retries its status (never a used-up quota), else for good."""
        status = reply.status
        said, detail = _error_reply(reply, self.secrets)
        quota = status == 429 and detail is not None and "insufficient_quota" in (detail.code, detail.type)
        if self.policy.is_retryable_status(status) and not quota:
            retryable = _Retryable(
                f"HTTP {status}: {said}", retry_after=parse_retry_after(reply.headers), status=status, detail=detail,
            )
            retryable.headers = reply.headers
            raise retryable
        hint = "; the account's quota is used up, which waiting will not change" if quota else ""
        failed = HttpCallError(
            self.redact(f"{self.describe}: HTTP {status} from {self.method} {self.url}: {said}{hint}"),
            status=status, detail=detail,
        )
        failed.headers = reply.headers
        raise failed
