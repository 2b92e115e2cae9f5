"""One rate limiter per target, shared by every thread that calls it: target side and judge side alike.

Why one per target and not per request: a provider's limits (requests per minute, tokens per
minute) are the target's, so a 429 is news about the whole target. Retrying only the request that
got it while seven other threads keep sending makes a suite bigger than the limit thrash (most
requests answered 429, cases erroring once their retries run out). Here every call of a target
first takes a slot from its limiter, and what any call learns slows all of them.

What decides when a call may start (each is a wait, never an error while the call's time budget
allows it):

* `workers`: at most that many calls of the target in flight at once;
* `max_rpm` / `max_tpm`: token buckets refilled continuously (rate per second = limit / 60,
  holding at most half a second's worth of requests and a second's worth of tokens, so the start
  may burst). A per-minute limit says nothing of the provider's own burst: half a second's worth
  at once is what providers that enforce a minute's limit per second or finer still accept, and
  until the first reply comes back no more than that first burst is sent. A call is charged its
  tokens estimated before it is sent; the estimate is corrected from the reply's `usage` after;
* what the provider says: `Retry-After` / `retry-after-ms` on a 429 pauses the whole target for
  that long; `x-ratelimit-remaining-requests` / `-tokens` (OpenAI, Azure) and
  `anthropic-ratelimit-*-remaining` at zero pause it until the matching `-reset`, or, with the
  limit per minute known, until enough has refilled at that rate; a stated `-limit` becomes the
  target's ceiling when targets.yaml gives none;
* AIMD on the request rate: on a 429 the rate is halved (once per round of calls in flight, not
  once per 429 of that round) and, for a 429 without `Retry-After`, the target pauses with
  exponential backoff; every call answered without a 429 then adds back 1% of the halved rate,
  up to the ceiling, so the target probes its way back up. Not for the opening round (calls sent
  before any reply came back): those were sent knowing nothing of the provider's burst, so their
  429s pause the target and teach it the headers, but say nothing against the rate; halving it
  there cost a third of a short suite's time, climbing back at 1% an answer.

Everything reads the time through `clock` and waits through `wait`, so the unit tests drive it
with a fake clock. Only the standard library: a run with `mock`/`cli` targets never imports this
module, and it imports nothing of the HTTP stack.
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

_DECREASE = 0.5
"""Multiplicative decrease: the rate after a 429 is this share of the rate before."""
_INCREASE_SHARE = 0.01
"""Additive increase: each call answered without a 429 adds this share of the rate set at the last decrease."""
_FLOOR_RPS = 1 / 60
"""The rate never drops below one request a minute."""
_OBSERVE_SECONDS = 5.0
"""A target with no known rate learns one at its first 429 from the answers of this last span."""
_BURST_SECONDS = 1.0
"""A token bucket holds this many seconds of its rate: a short burst, then the steady pace."""
_REQUEST_BURST_SECONDS = 0.5
"""The request bucket holds this many seconds of its rate (see the module docstring)."""
_LEAD_SECONDS = 0.025
_LEAD_REQUESTS = 0.5
"""Paced at the provider's rate, a call sent exactly when our bucket refilled reaches a bucket that
began refilling when the first calls arrived, a few ms after we sent them: one that travels faster
than the one before is refused. Once the provider has answered, a call waits until the bucket holds
this much more than it (25 ms at the rate, at most half a request); the pace is the rate all the same."""
_CHARS_PER_TOKEN = 4
"""The usual rule of thumb for English and JSON: a token is about four characters."""


class RateLimitWait(Exception):
    """No slot opens before the call's deadline; `seconds` is how long the next one is away."""

    def __init__(self, seconds: float, reason: str) -> None:
        super().__init__(f"{reason} for {seconds:.1f}s more")
        self.seconds = seconds
        self.reason = reason


@dataclass(frozen=True)
class Limits:
    """A target's own limits, from targets.yaml. None means no limit of that kind."""

    workers: int | None = None
    max_rpm: float | None = None
    max_tpm: float | None = None


@dataclass
class LimiterStats:
    """What the run reports per target: calls sent, 429s received, seconds spent waiting for a slot."""

    calls: int = 0
    rate_limited: int = 0
    waited_seconds: float = 0.0


@dataclass(frozen=True)
class Ticket:
    """One call's slot: when it started and the tokens it was charged."""

    started: float
    tokens: int


@dataclass
class _Bucket:
    """A token bucket whose level may go below zero (a call bigger than the bucket still runs once it is full)."""

    rate: float
    """Units per second."""
    level: float
    stamp: float
    burst_seconds: float = _BURST_SECONDS

    @property
    def capacity(self) -> float:
        return max(1.0, self.rate * self.burst_seconds)

    def refill(self, now: float) -> None:
        if now > self.stamp:
            self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
            self.stamp = now

    def delay_for(self, amount: float) -> float:
        """Seconds until `amount` (at most a full bucket) is there."""
        need = min(amount, self.capacity) - self.level
        return need / self.rate if need > 1e-9 else 0.0  # below that, float rounding, not a wait


@dataclass
class _Window:
    """What the provider last said about one of its limits: how much is left, and when it resets."""

    remaining: float | None = None
    reset_at: float | None = None
    stamp: float = 0.0
    """When `remaining` was said."""


@dataclass
class _Learned:
    """What the reply headers state (None where they are silent)."""

    retry_after: float | None = None
    limit_requests: float | None = None
    limit_tokens: float | None = None
    remaining_requests: float | None = None
    remaining_tokens: float | None = None
    reset_requests: float | None = None
    reset_tokens: float | None = None


def _wait_on(condition: threading.Condition, seconds: float | None) -> None:
    condition.wait(seconds)


class RateLimiter:
    """See the module docstring. `acquire` before each HTTP attempt, `release` after it, always."""

    def __init__(
        self,
        limits: Limits | None = None,
        *,
        backoff: tuple[float, float, float] = (1.0, 2.0, 30.0),
        max_pause_seconds: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        wait: Callable[[threading.Condition, float | None], None] = _wait_on,
    ) -> None:
        self.limits = limits or Limits()
        self.stats = LimiterStats()
        self._backoff = backoff
        """(first pause, factor, longest pause) for a 429 that names no wait."""
        self._max_pause = max_pause_seconds
        self._clock = clock
        self._wait = wait
        self._condition = threading.Condition(threading.Lock())
        now = clock()
        self._created = now
        self._inflight = 0
        self._inflight_starts: list[float] = []
        """When each call in flight started: those sent after a reply's call may not be counted in its headers."""
        self._paused_until = now
        self._ceiling_rps = self.limits.max_rpm / 60 if self.limits.max_rpm else None
        self._requests = (_Bucket(self._ceiling_rps, max(1.0, self._ceiling_rps * _REQUEST_BURST_SECONDS), now,
                                  _REQUEST_BURST_SECONDS) if self._ceiling_rps else None)
        self._increase_rps = (self._ceiling_rps or 0.0) * _INCREASE_SHARE
        self._tokens_ceiling = self.limits.max_tpm / 60 if self.limits.max_tpm else None
        self._tokens = _Bucket(self._tokens_ceiling, self._tokens_ceiling * _BURST_SECONDS, now) if self._tokens_ceiling else None
        self._request_window = _Window()
        self._token_window = _Window()
        self._last_decrease = -math.inf
        self._first_reply = math.inf
        """When the first reply (of any status) came back: calls sent before it are the opening round."""
        self._consecutive_429 = 0
        self._answered: deque[float] = deque()

    # ------------------------------------------------------------------ reading the state

    @property
    def rate_rpm(self) -> float | None:
        """The request rate in force (per minute), None while unlimited."""
        with self._condition:
            return self._requests.rate * 60 if self._requests else None

    @property
    def counts_tokens(self) -> bool:
        """Whether calls need a token estimate: a tokens-per-minute limit is set or was stated."""
        return self._tokens is not None or self._token_window.remaining is not None

    def pause_remaining(self) -> float:
        """Seconds until the target's pause (a 429's wait, an exhausted window) is over."""
        with self._condition:
            return max(0.0, self._paused_until - self._clock())

    def _delay(self, now: float, tokens: int) -> tuple[float, str]:
        """(seconds until a call charged `tokens` may start, why); inf while every worker is busy."""
        if self.limits.workers is not None and self._inflight >= self.limits.workers:
            return math.inf, f"all {self.limits.workers} workers of the target busy"
        delay, reason = 0.0, ""

        def longer(seconds: float, why: str) -> None:
            nonlocal delay, reason
            if seconds > delay:
                delay, reason = seconds, why

        longer(self._paused_until - now, "the provider asked to wait")
        for window, need, what in ((self._request_window, 1, "requests"), (self._token_window, tokens, "tokens")):
            if window.reset_at is not None and window.reset_at <= now:
                window.remaining, window.reset_at = None, None  # that window has reset
            if window.remaining is not None and window.reset_at is not None and window.remaining < max(need, 1):
                # With the limit per minute known, what is left refills at that rate: wait for what this
                # call needs, not for the whole window (never past its reset).
                rate = self._ceiling_rps if window is self._request_window else self._tokens_ceiling
                wait = window.reset_at - now
                if rate:
                    wait = min(wait, (max(need, 1) - window.remaining) / rate - (now - window.stamp))
                longer(wait, f"the provider's {what} limit is used up until it refills")
        if self._requests is not None:
            if self._first_reply < math.inf:
                self._requests.refill(now)
                lead = min(_LEAD_REQUESTS, self._requests.rate * _LEAD_SECONDS)
                longer(self._requests.delay_for(1 + lead), "the request rate")
            else:
                # Sent blind, the first burst is all: what refills meanwhile is the provider's to count
                # from when the first calls reached it, which may be later than we sent them. A full
                # bucket only keeps its time (it refills from the first call on, as the provider's does).
                if self._requests.level >= self._requests.capacity:
                    self._requests.refill(now)
                if self._requests.level < 1:
                    longer(math.inf, "the first burst waiting for the provider's first answer")
        if self._tokens is not None and tokens:
            self._tokens.refill(now)
            longer(self._tokens.delay_for(tokens), "the token rate")
        return delay, reason

    # ------------------------------------------------------------------ the two calls

    def acquire(self, tokens: int = 0, deadline: float | None = None) -> Ticket:
        """Block until a call charged `tokens` may start, and take its slot.

        Raises `RateLimitWait` when the slot would open only after `deadline` (a `clock()` time).
        """
        with self._condition:
            waited_from: float | None = None
            try:
                while True:
                    now = self._clock()
                    delay, reason = self._delay(now, tokens)
                    if delay <= 1e-9:
                        break
                    timeout = None if math.isinf(delay) else delay
                    if deadline is not None:
                        if now + delay > deadline and (timeout is not None or now >= deadline):
                            raise RateLimitWait(delay if timeout is not None else 0.0, reason)
                        timeout = min(math.inf if timeout is None else timeout, deadline - now)
                    if waited_from is None:
                        waited_from = now
                    self._wait(self._condition, timeout)
            finally:
                if waited_from is not None:
                    self.stats.waited_seconds += max(0.0, self._clock() - waited_from)
            self._inflight += 1
            self._inflight_starts.append(now)
            self.stats.calls += 1
            if self._requests is not None:
                self._requests.level -= 1
            if self._tokens is not None:
                self._tokens.level -= tokens
            if self._request_window.remaining is not None:
                self._request_window.remaining -= 1
            if self._token_window.remaining is not None:
                self._token_window.remaining -= tokens
            return Ticket(started=now, tokens=tokens)

    def release(
        self,
        ticket: Ticket,
        *,
        status: int | None,
        headers: Mapping[str, str] | None = None,
        used_tokens: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        """End `ticket`'s call: `status` None for no reply at all; learn from the reply's headers.

        `retry_after` is the wait the caller took from the reply (already capped); without it the
        headers are read here.
        """
        learned = parse_limit_headers(headers or {})
        if retry_after is None:
            retry_after = learned.retry_after
        with self._condition:
            now = self._clock()
            self._inflight = max(0, self._inflight - 1)
            if ticket.started in self._inflight_starts:
                self._inflight_starts.remove(ticket.started)
            # Calls sent after this one and still in flight may not be counted in what the provider says
            # is left: count them as spent. Those sent before it were (the provider counted them as they
            # came in); counting them again held a short suite back by half a second at its start.
            others = sum(1 for started in self._inflight_starts if started > ticket.started)
            self._learn_ceilings(learned, ticket.started, others)
            self._learn_windows(learned, now, ticket.started, others)
            if status == 429:
                self._on_rate_limited(ticket, now, retry_after)
            elif status is not None:
                self._on_answered(ticket, now, used_tokens if status < 400 else 0)
            self._first_reply = min(self._first_reply, now)  # a call with no reply ends the blind start too
            self._condition.notify_all()

    # ------------------------------------------------------------------ learning

    def _learn_ceilings(self, learned: _Learned, said_at: float, others: int) -> None:
        """A limit the provider states becomes the ceiling where targets.yaml set none (or a higher one)."""
        if learned.limit_requests and learned.limit_requests > 0:
            stated = learned.limit_requests / 60
            if self.limits.max_rpm is None or stated < self.limits.max_rpm / 60:
                if self._ceiling_rps != stated:
                    self._ceiling_rps = stated
                    self._increase_rps = max(self._increase_rps, stated * _INCREASE_SHARE)
                    if self._requests is None:  # as full as the provider says it is, never fuller
                        left = max(0.0, (learned.remaining_requests or 0.0) - others)
                        self._requests = _Bucket(stated, 0.0, said_at, _REQUEST_BURST_SECONDS)
                        self._requests.level = min(self._requests.capacity, left)
                    else:
                        self._requests.rate = min(self._requests.rate, stated)
        if learned.limit_tokens and learned.limit_tokens > 0:
            stated = learned.limit_tokens / 60
            if self.limits.max_tpm is None or stated < self.limits.max_tpm / 60:
                self._tokens_ceiling = stated
                if self._tokens is None:
                    self._tokens = _Bucket(stated, 0.0, said_at)
                else:
                    self._tokens.rate = min(self._tokens.rate, stated)

    def _learn_windows(self, learned: _Learned, now: float, said_at: float, others: int) -> None:
        """What is left and when it resets, as the provider said it when this call came in (`said_at`, its
        start: it counts a request as it arrives); what an earlier call's late reply says is older news."""
        for window, remaining, reset in (
            (self._request_window, learned.remaining_requests, learned.reset_requests),
            (self._token_window, learned.remaining_tokens, learned.reset_tokens),
        ):
            if remaining is None or (window.remaining is not None and said_at < window.stamp):
                continue
            window.remaining = remaining - (others if window is self._request_window else 0)
            window.stamp = said_at
            window.reset_at = said_at + reset if reset is not None else (window.reset_at or now + 1.0)

    def _on_rate_limited(self, ticket: Ticket, now: float, retry_after: float | None) -> None:
        self.stats.rate_limited += 1
        self._consecutive_429 += 1
        if self._tokens is not None:
            self._tokens.level += ticket.tokens  # a refused call used no tokens
        if retry_after is None:
            first, factor, longest = self._backoff
            retry_after = min(longest, first * factor ** (self._consecutive_429 - 1))
        self._paused_until = max(self._paused_until, now + min(retry_after, self._max_pause))
        if ticket.started < self._last_decrease:
            return  # this call was sent before the last slow-down: the same congestion, already answered
        if ticket.started < self._first_reply:
            return  # the opening round: over the provider's burst, not its rate (see the module docstring)
        before = self._requests.rate if self._requests is not None else self._observed_rps(now)
        if before is None:
            return  # nothing measured yet: the pause is all there is to go on
        rate = max(_FLOOR_RPS, before * _DECREASE)
        if self._requests is None:
            self._requests = _Bucket(rate, 0.0, now, _REQUEST_BURST_SECONDS)
        else:
            self._requests.refill(now)
            self._requests.rate = rate
            self._requests.level = min(self._requests.level, 0.0)
        self._increase_rps = max(rate * _INCREASE_SHARE, _FLOOR_RPS / 10)
        self._last_decrease = now

    def _on_answered(self, ticket: Ticket, now: float, used_tokens: int | None) -> None:
        self._consecutive_429 = 0
        self._answered.append(now)
        while self._answered and self._answered[0] < now - _OBSERVE_SECONDS:
            self._answered.popleft()
        if self._tokens is not None and used_tokens is not None:
            self._tokens.level += ticket.tokens - used_tokens  # the estimate, corrected
        if self._requests is not None and self._last_decrease > -math.inf:
            ceiling = self._ceiling_rps if self._ceiling_rps is not None else math.inf
            self._requests.refill(now)
            self._requests.rate = min(ceiling, self._requests.rate + self._increase_rps)

    def _observed_rps(self, now: float) -> float | None:
        """Answers per second over the last few seconds, or None with too few to tell."""
        span = min(_OBSERVE_SECONDS, now - self._created)
        recent = [t for t in self._answered if t >= now - _OBSERVE_SECONDS]
        if len(recent) < 2 or span <= 0:
            return None
        return len(recent) / span


# ---------------------------------------------------------------------- estimates and headers


def estimate_tokens(body: Mapping[str, Any]) -> int:
    """Tokens a chat request will count against a tokens-per-minute limit, before it is sent.

    About four characters a token for the request, plus the most the reply may use
    (`max_tokens` / `max_completion_tokens`), as providers count a request's share of the limit.
    """
    try:
        size = len(json.dumps(body, ensure_ascii=False, default=str))
    except (TypeError, ValueError):
        size = 0
    reply = 0
    for key in ("max_completion_tokens", "max_tokens", "max_output_tokens"):
        value = body.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            reply = value
            break
    return size // _CHARS_PER_TOKEN + 1 + reply


def used_tokens(data: Any) -> int | None:
    """Tokens a reply says it used (OpenAI/Azure `usage.total_tokens`, Anthropic input + output)."""
    usage = data.get("usage") if isinstance(data, dict) else None
    if not isinstance(usage, dict):
        return None
    total = usage.get("total_tokens")
    if isinstance(total, int) and not isinstance(total, bool):
        return total
    parts = [usage.get(k) for k in ("prompt_tokens", "completion_tokens", "input_tokens", "output_tokens")]
    numbers = [p for p in parts if isinstance(p, int) and not isinstance(p, bool)]
    return sum(numbers) if numbers else None


_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")


def parse_reset(value: str | None) -> float | None:
    """Seconds until a limit resets: OpenAI's `1s` / `6m0s` / `20ms`, plain seconds, or an RFC 3339 time (Anthropic)."""
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    try:
        seconds = float(text)
        return max(0.0, seconds) if math.isfinite(seconds) else None
    except ValueError:
        pass
    if _DURATION_PART.fullmatch(text) or re.fullmatch(r"(?:\d+(?:\.\d+)?(?:ms|h|m|s))+", text):
        scale = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
        return sum(float(n) * scale[unit] for n, unit in _DURATION_PART.findall(text))
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


def _number(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value.strip())
    except ValueError:
        return None
    return number if math.isfinite(number) and number >= 0 else None


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asks us to wait, from `retry-after-ms` or `Retry-After` (seconds or an HTTP date)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    millis = _number(lowered.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000.0
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    seconds = _number(raw)
    if seconds is not None:
        return seconds
    import email.utils  # only for the rare date form

    try:
        when = email.utils.parsedate_to_datetime(raw.strip())
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


def parse_limit_headers(headers: Mapping[str, str]) -> _Learned:
    """What OpenAI / Azure (`x-ratelimit-*`) and Anthropic (`anthropic-ratelimit-*`) headers say."""
    lowered = {k.lower(): v for k, v in headers.items()}
    learned = _Learned(retry_after=parse_retry_after(lowered))
    learned.limit_requests = _number(lowered.get("x-ratelimit-limit-requests"))
    learned.limit_tokens = _number(lowered.get("x-ratelimit-limit-tokens"))
    learned.remaining_requests = _number(lowered.get("x-ratelimit-remaining-requests"))
    learned.remaining_tokens = _number(lowered.get("x-ratelimit-remaining-tokens"))
    learned.reset_requests = parse_reset(lowered.get("x-ratelimit-reset-requests"))
    learned.reset_tokens = parse_reset(lowered.get("x-ratelimit-reset-tokens"))
    anthropic = "anthropic-ratelimit-"
    if any(name.startswith(anthropic) for name in lowered):
        def first(*names: str) -> str | None:
            return next((lowered[anthropic + n] for n in names if anthropic + n in lowered), None)

        learned.limit_requests = _number(first("requests-limit"))
        learned.remaining_requests = _number(first("requests-remaining"))
        learned.reset_requests = parse_reset(first("requests-reset"))
        learned.limit_tokens = _number(first("tokens-limit", "input-tokens-limit"))
        learned.remaining_tokens = _number(first("tokens-remaining", "input-tokens-remaining"))
        learned.reset_tokens = parse_reset(first("tokens-reset", "input-tokens-reset"))
    return learned


__all__ = [
    "LimiterStats", "Limits", "RateLimitWait", "RateLimiter", "Ticket", "estimate_tokens", "parse_limit_headers",
    "parse_reset", "parse_retry_after", "used_tokens",
]
