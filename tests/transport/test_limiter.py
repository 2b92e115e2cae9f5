"""The per-target rate limiter, driven by a fake clock: what makes a call wait, and for how long.

No thread sleeps here: `FakeClock.wait` moves the clock forward by the time the limiter asked to
wait, so each test reads exactly when each call was let through.
"""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

import pytest

from agentv_gate.targets.http_settings import limits_from_settings
from agentv_gate.transport.limiter import (
    Limits,
    RateLimiter,
    RateLimitWait,
    Ticket,
    estimate_tokens,
    parse_limit_headers,
    parse_reset,
    used_tokens,
)
from tests.helpers.clock import FakeClock


def limiter(clock: FakeClock, **limits: float) -> RateLimiter:
    workers = limits.pop("workers", None)
    return RateLimiter(Limits(workers=int(workers) if workers else None, **limits),  # type: ignore[arg-type]
                       clock=clock, wait=clock.wait, backoff=(1.0, 2.0, 30.0))


def starts(lim: RateLimiter, clock: FakeClock, n: int, tokens: int = 0, **release: object) -> list[float]:
    """Start and finish `n` calls one after another; when each was let through."""
    out = []
    for _ in range(n):
        ticket = lim.acquire(tokens)
        out.append(round(clock.now - 100.0, 3))
        lim.release(ticket, status=200, **release)  # type: ignore[arg-type]
    return out


def test_no_limits_means_no_waiting() -> None:
    clock = FakeClock()
    lim = limiter(clock)
    assert starts(lim, clock, 5) == [0, 0, 0, 0, 0]
    assert lim.stats.calls == 5 and lim.stats.waited_seconds == 0


def test_max_rpm_paces_calls_after_a_half_second_burst() -> None:
    clock = FakeClock()
    lim = limiter(clock, max_rpm=240)  # 4 per second, a bucket of 2
    # each call answered before the next: past the first, each waits for a 25 ms lead (0.1 of a request) too
    assert starts(lim, clock, 6) == [0, 0.025, 0.275, 0.525, 0.775, 1.025]
    assert lim.stats.waited_seconds == pytest.approx(1.025)


def test_max_rpm_600_sends_five_at_once_not_ten() -> None:
    """A provider limiting 10 a second may hold only 5: a one-second burst had 3 of 8 workers answered 429."""
    clock = FakeClock()
    lim = limiter(clock, max_rpm=600)
    first = [lim.acquire() for _ in range(5)]
    assert clock.now == 100.0
    with pytest.raises(RateLimitWait):  # sent blind, the first burst is all until the provider answers
        lim.acquire(deadline=101.0)
    lim.release(first[0], status=200)
    lim.acquire()
    assert clock.now == pytest.approx(101.0)  # what refilled meanwhile, at once
    lim.acquire()
    assert clock.now == pytest.approx(101.0)
    for _ in range(4):
        lim.acquire()
    assert clock.now == pytest.approx(101.125)  # then the pace, each call 25 ms ahead of the provider's refill


def test_the_opening_rounds_429s_pause_the_target_but_keep_its_rate() -> None:
    """Calls sent before any reply came back were sent blind to the provider's burst: halving the rate for
    their 429s made 80 cases behind 10 a second take 1.6x the floor, climbing back at 1% an answer."""
    clock = FakeClock()
    lim = limiter(clock, max_rpm=600)
    in_flight = [lim.acquire() for _ in range(4)]
    clock.now += 0.01
    lim.release(in_flight[0], status=200)
    for ticket in in_flight[1:]:
        lim.release(ticket, status=429, headers={"Retry-After": "0.5"})
    assert lim.stats.rate_limited == 3
    assert lim.rate_rpm == pytest.approx(600)
    assert lim.pause_remaining() == pytest.approx(0.5)


def test_what_a_reply_says_is_left_counts_only_the_calls_sent_after_it() -> None:
    """The provider counted the calls that came in before this one: subtracting them again held the
    start of a rate-limited suite back by half a second."""
    clock = FakeClock()
    lim = limiter(clock)
    first, second, third = lim.acquire(), lim.acquire(), lim.acquire()
    clock.now += 0.2
    # `third` came in last: what is left after it counts the two before it, and nothing after it is in flight
    lim.release(third, status=200, headers={"x-ratelimit-limit-requests": "600",
                                            "x-ratelimit-remaining-requests": "2", "x-ratelimit-reset-requests": "0.3s"})
    lim.release(first, status=200)
    lim.release(second, status=200)
    lim.acquire()
    lim.acquire()
    assert clock.now == pytest.approx(100.2)  # the two left, at once


def test_max_tpm_charges_the_estimate_and_refunds_what_usage_says_was_not_used() -> None:
    clock = FakeClock()
    lim = limiter(clock, max_tpm=600)  # 10 tokens a second, a bucket of 10
    first = lim.acquire(10)
    lim.release(first, status=200, used_tokens=2)  # 8 of the 10 charged come back
    lim.acquire(10)
    assert clock.now - 100 == pytest.approx(0.2)  # 8 came back: 2 to refill, not 10
    clock.now = 200.0
    big = lim.acquire(50)  # more than the bucket holds: runs once the bucket is full
    lim.release(big, status=200)  # no usage in the reply: the estimate stands
    lim.acquire(10)
    assert clock.now - 200 == pytest.approx(5.0)  # the 40 below zero, then 10


def test_a_429_with_retry_after_pauses_every_call_of_the_target() -> None:
    clock = FakeClock()
    lim = limiter(clock)
    one, two = lim.acquire(), lim.acquire()
    lim.release(one, status=429, headers={"Retry-After": "3"})
    assert lim.pause_remaining() == pytest.approx(3.0)
    lim.acquire()  # a different call, not the one that got the 429, waits too
    assert clock.now - 100 == pytest.approx(3.0)
    lim.release(two, status=200)
    assert lim.stats.rate_limited == 1


def test_retry_after_ms_wins_and_the_pause_is_capped() -> None:
    clock = FakeClock()
    lim = RateLimiter(clock=clock, wait=clock.wait, max_pause_seconds=10)
    lim.release(lim.acquire(), status=429, headers={"retry-after-ms": "250", "Retry-After": "9"})
    assert lim.pause_remaining() == pytest.approx(0.25)
    lim.release(lim.acquire(), status=429, headers={"Retry-After": "3600"})
    assert lim.pause_remaining() == pytest.approx(10.0)


def test_a_429_without_retry_after_backs_the_target_off_exponentially() -> None:
    clock = FakeClock()
    lim = limiter(clock)
    pauses = []
    for _ in range(3):
        lim.release(lim.acquire(), status=429)
        pauses.append(lim.pause_remaining())
    assert pauses == [1.0, 2.0, 4.0]
    lim.release(lim.acquire(), status=200)
    lim.release(lim.acquire(), status=429)
    assert lim.pause_remaining() == 1.0  # an answer in between starts the backoff over


def test_aimd_halves_once_per_round_then_probes_back_up_to_the_ceiling() -> None:
    clock = FakeClock()
    lim = limiter(clock, max_rpm=600)
    lim.release(lim.acquire(), status=200)  # past the opening round (see the test above)
    clock.now += 1.0
    in_flight = [lim.acquire() for _ in range(4)]  # one round of calls, all sent before any of their answers
    clock.now += 0.01
    for ticket in in_flight:
        lim.release(ticket, status=429, headers={"Retry-After": "0"})
    assert lim.stats.rate_limited == 4
    assert lim.rate_rpm == pytest.approx(300)  # halved once, not four times
    starts(lim, clock, 10)
    assert lim.rate_rpm == pytest.approx(330)  # each answer adds 1% of 300
    starts(lim, clock, 200)
    assert lim.rate_rpm == pytest.approx(600)  # back at max_rpm, and no higher
    late = lim.acquire()
    clock.now += 0.01
    lim.release(late, status=429, headers={"Retry-After": "0"})
    assert lim.rate_rpm == pytest.approx(300)  # a new round: halved again


def test_without_a_known_rate_a_429_learns_one_from_the_answers_seen() -> None:
    clock = FakeClock()
    lim = limiter(clock)
    for _ in range(10):  # 10 answers over 5 s: 2 a second
        clock.now += 0.5
        lim.release(lim.acquire(), status=200)
    assert lim.rate_rpm is None
    lim.release(lim.acquire(), status=429, headers={"Retry-After": "0"})
    assert lim.rate_rpm == pytest.approx(60)  # half of 2 a second


def test_a_single_429_with_nothing_measured_only_pauses() -> None:
    clock = FakeClock()
    lim = limiter(clock)
    lim.release(lim.acquire(), status=429, headers={"Retry-After": "0"})
    assert lim.rate_rpm is None


def test_openai_remaining_zero_waits_for_the_reset() -> None:
    clock = FakeClock()
    lim = limiter(clock)
    lim.release(lim.acquire(), status=200, headers={"x-ratelimit-remaining-requests": "0",
                                                    "x-ratelimit-reset-requests": "1.5s"})
    lim.acquire()
    assert clock.now - 100 == pytest.approx(1.5)
    lim.acquire()
    assert clock.now - 100 == pytest.approx(1.5)  # that window has reset: nothing known holds the next


def test_with_the_limit_stated_remaining_zero_waits_only_for_one_request_to_refill() -> None:
    clock = FakeClock()
    lim = limiter(clock)
    lim.release(lim.acquire(), status=200, headers={
        "x-ratelimit-limit-requests": "120", "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": "30s"})
    assert lim.rate_rpm == pytest.approx(120)  # the stated limit is the ceiling now
    lim.acquire()
    assert clock.now - 100 == pytest.approx(0.5)  # one request at 2 a second, not the 30 s to a full window


def test_a_configured_max_rpm_below_the_stated_limit_is_kept() -> None:
    clock = FakeClock()
    lim = limiter(clock, max_rpm=30)
    lim.release(lim.acquire(), status=200, headers={"x-ratelimit-limit-requests": "10000"})
    assert lim.rate_rpm == pytest.approx(30)


def test_remaining_tokens_below_the_next_estimate_wait_for_the_token_reset() -> None:
    clock = FakeClock()
    lim = limiter(clock)
    lim.release(lim.acquire(), status=200, headers={"x-ratelimit-remaining-tokens": "100",
                                                     "x-ratelimit-reset-tokens": "6m0s"})
    assert lim.counts_tokens
    lim.release(lim.acquire(50), status=200)  # fits what is left
    lim.acquire(500)
    assert clock.now - 100 == pytest.approx(360)


def test_anthropic_headers() -> None:
    reset = (datetime.now(timezone.utc) + timedelta(seconds=30)).isoformat().replace("+00:00", "Z")
    learned = parse_limit_headers({
        "anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-requests-remaining": "0",
        "anthropic-ratelimit-requests-reset": reset, "anthropic-ratelimit-tokens-limit": "40000",
        "anthropic-ratelimit-tokens-remaining": "39000", "retry-after": "7"})
    assert (learned.limit_requests, learned.remaining_requests, learned.limit_tokens) == (50, 0, 40000)
    assert learned.remaining_tokens == 39000 and learned.retry_after == 7
    assert learned.reset_requests is not None and 28 < learned.reset_requests <= 30


def test_workers_cap_calls_in_flight() -> None:
    clock = FakeClock()
    lim = limiter(clock, workers=2)
    one, _two = lim.acquire(), lim.acquire()
    with pytest.raises(RateLimitWait, match="workers"):
        lim.acquire(deadline=clock.now)
    lim.release(one, status=200)
    lim.acquire(deadline=clock.now)


def test_workers_cap_holds_across_threads() -> None:
    lim = RateLimiter(Limits(workers=2))
    busy, most, lock = 0, 0, threading.Lock()
    go = threading.Barrier(6)

    def call() -> None:
        nonlocal busy, most
        go.wait()
        for _ in range(20):
            ticket = lim.acquire()
            with lock:
                busy += 1
                most = max(most, busy)
            with lock:
                busy -= 1
            lim.release(ticket, status=200)

    threads = [threading.Thread(target=call) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert most <= 2 and lim.stats.calls == 120


def test_a_slot_past_the_deadline_is_refused_at_once() -> None:
    clock = FakeClock()
    lim = limiter(clock)
    lim.release(lim.acquire(), status=429, headers={"Retry-After": "30"})
    with pytest.raises(RateLimitWait) as caught:
        lim.acquire(deadline=clock.now + 2)
    assert caught.value.seconds == pytest.approx(30) and clock.now == 100  # it did not wait first


def test_a_call_with_no_reply_teaches_nothing() -> None:
    clock = FakeClock()
    lim = limiter(clock, max_rpm=600)
    lim.release(lim.acquire(), status=None)
    assert lim.rate_rpm == pytest.approx(600) and lim.stats.rate_limited == 0


@pytest.mark.parametrize(("text", "seconds"), [
    ("1s", 1.0), ("6m0s", 360.0), ("20ms", 0.02), ("1m30.5s", 90.5), ("2", 2.0), ("1h", 3600.0),
    ("soon", None), ("", None), (None, None),
])
def test_reset_forms(text: str | None, seconds: float | None) -> None:
    assert parse_reset(text) == (pytest.approx(seconds) if seconds is not None else None)


def test_token_estimate_and_usage() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "x" * 400}], "max_tokens": 50}
    assert 150 <= estimate_tokens(body) <= 200  # about 400 / 4 for the prompt, plus the reply's 50
    assert used_tokens({"usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}}) == 18
    assert used_tokens({"usage": {"input_tokens": 13, "output_tokens": 5}}) == 18
    assert used_tokens({"choices": []}) is None


def test_limits_from_settings() -> None:
    assert limits_from_settings({"max_rpm": 600, "max_tpm": "90000"}, workers=4) == Limits(4, 600, 90000)
    for bad in (0, -1, "lots", True, float("inf")):
        with pytest.raises(ValueError, match="max_rpm must be a number > 0"):
            limits_from_settings({"max_rpm": bad})


def test_ticket_is_plain_data() -> None:
    assert Ticket(started=1.0, tokens=3) == Ticket(1.0, 3)


def test_what_a_reply_says_is_as_of_its_calls_start_not_its_end() -> None:
    """The provider counts a request as it comes in: a reply that took 0.2 s states what was left 0.2 s ago,
    and what refilled meanwhile is there (taken as said at the reply, each 200 ms call held the next one back)."""
    clock = FakeClock()
    lim = limiter(clock)
    ticket = lim.acquire()
    clock.now += 0.2
    lim.release(ticket, status=200, headers={"x-ratelimit-limit-requests": "600",
                                             "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "0.1s"})
    lim.acquire()
    assert clock.now == pytest.approx(100.2)


def test_an_earlier_calls_late_reply_is_older_news() -> None:
    clock = FakeClock()
    lim = limiter(clock)
    early = lim.acquire()
    clock.now += 0.05
    late = lim.acquire()
    clock.now += 0.2
    lim.release(late, status=200, headers={"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "2s"})
    lim.release(early, status=200, headers={"x-ratelimit-remaining-requests": "50", "x-ratelimit-reset-requests": "2s"})
    lim.acquire()
    assert clock.now == pytest.approx(102.05)  # the later call's word (nothing left until 2 s after it came in) holds
