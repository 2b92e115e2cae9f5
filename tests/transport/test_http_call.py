"""`http_call` / `post_json` end to end against a real loopback server: how long it waits and where,
when it stops, how it reads a reply body (deadline, byte cap, compression, a cut connection), what
an error says, and what it tells the target's rate limiter.

Timing is only ever a bound the code guarantees (a stated deadline, a wait the server asked for),
never a measured speed; the rate-limiter tests run on a fake clock.
"""

from __future__ import annotations

import gc
import gzip
import json
import os
import re
import socket
import time
import tracemalloc
from dataclasses import replace
from typing import Any

import pytest

from agentv_gate.transport.deadline import attempt_deadline, watch
from agentv_gate.transport.http_policy import HttpCallError, HttpResult, RetryPolicy, http_call, post_json
from agentv_gate.transport.limiter import Limits, RateLimiter
from tests.helpers.clock import FakeClock
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply
from tests.helpers.targets import SECRET

FAST = RetryPolicy(initial_delay_seconds=0.001, max_delay_seconds=0.005, jitter_seconds=0.001,
                   request_timeout_seconds=5.0, max_total_seconds=10.0)
"""Backoff of a few milliseconds; each test sets the bounds it is about."""
OK = {"ok": True}


def fast(**changes: Any) -> RetryPolicy:
    return replace(FAST, **changes)


def call(server: FakeLLMServer, policy: RetryPolicy, path: str = "/x", **kwargs: Any) -> HttpResult:
    return post_json(f"{server.url}{path}", {"q": 1}, policy=policy, describe="probe", **kwargs)


def failure(server: FakeLLMServer, policy: RetryPolicy, path: str = "/x", **kwargs: Any) -> HttpCallError:
    with pytest.raises(HttpCallError) as caught:
        call(server, policy, path, **kwargs)
    return caught.value


def status_reply(status: int, headers: dict[str, str] | None = None, **error: Any) -> FakeReply:
    return FakeReply.json({"error": {"message": "scripted failure", "type": "fake_error", **error}}, status=status,
                          headers=headers)


def quota_exhausted() -> FakeReply:
    """OpenAI's 429 for an account out of credit: waiting does not fix it."""
    return status_reply(429, message="You exceeded your current quota, please check your plan.",
                        type="insufficient_quota", code="insufficient_quota")


# ---------------------------------------------------------------- waits: Retry-After, 429s, the budget


def test_a_5xx_retry_after_is_waited_and_the_duration_covers_the_whole_call(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue("/x", status_reply(503, {"retry-after-ms": "600"}), FakeReply.json(OK, delay=0.45))
    before = time.monotonic()
    result = call(fake_llm, FAST)
    outside_ms = (time.monotonic() - before) * 1000
    assert (result.data, result.retries, len(fake_llm.requests)) == (OK, 1, 2)
    # The 0.6 s the server asked for plus the 0.45 s answer, and never more than the caller waited.
    assert 1050 <= result.duration_ms <= outside_ms


def test_a_5xx_retry_after_past_the_budget_is_not_waited(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue("/x", status_reply(503, {"Retry-After": "30"}, message="overloaded"), FakeReply.json(OK))
    error = failure(fake_llm, fast(max_total_seconds=2))
    assert (error.status, error.retries, len(fake_llm.requests)) == (503, 0, 1)
    assert re.fullmatch(rf"probe: POST {fake_llm.url}/x failed after 1 attempt\(s\) in \d+\.\ds: "
                        r'HTTP 503: provider error \(type fake_error\): "overloaded"', str(error)), str(error)



def test_a_5xx_retry_after_past_its_cap_is_waited_for_the_cap_only(fake_llm: FakeLLMServer) -> None:
    """`retry_after_max_seconds` caps what a server asks: a 30 s wait capped at 0.05 s fits the 2 s budget."""
    fake_llm.enqueue("/x", status_reply(503, {"Retry-After": "30"}, message="overloaded"), FakeReply.json(OK))
    result = call(fake_llm, fast(max_total_seconds=2, max_retry_after_seconds=0.05))
    assert (result.data, result.retries, len(fake_llm.requests)) == (OK, 1, 2)

def test_429s_are_waited_out_in_the_budget_without_using_up_attempts(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue("/x", *[status_reply(429, {"Retry-After": "0"})] * 3, FakeReply.json(OK))
    result = call(fake_llm, fast(max_attempts=1, max_total_seconds=0.9))
    assert (result.data, result.retries, len(fake_llm.requests)) == (OK, 3, 4)


def test_a_429_is_waited_in_the_targets_limiter(fake_llm: FakeLLMServer) -> None:
    # The wait a 429 asks for is the target's pause (every call of the target waits it out), so it
    # shows in the target's waiting time rather than being slept by this one call.
    fake_llm.enqueue("/x", status_reply(429, {"retry-after-ms": "200"}), FakeReply.json(OK))
    limiter = RateLimiter()
    result = call(fake_llm, FAST, limiter=limiter)
    assert (result.data, result.retries) == (OK, 1)
    assert (limiter.stats.calls, limiter.stats.rate_limited) == (2, 1)
    assert limiter.stats.waited_seconds > 0


@pytest.mark.parametrize(("max_attempts", "replies", "requests"), [
    (1, [status_reply(500)], 1),
    (2, [status_reply(500), status_reply(502)], 2),
    (2, [status_reply(429, {"Retry-After": "0"}), status_reply(500), status_reply(502)], 3),
])
def test_max_attempts_counts_every_failure_but_a_429(
    fake_llm: FakeLLMServer, max_attempts: int, replies: list[FakeReply], requests: int
) -> None:
    fake_llm.enqueue("/x", *replies, FakeReply.json(OK))
    error = failure(fake_llm, fast(max_attempts=max_attempts, max_total_seconds=1.0))
    assert (error.status, error.retries, len(fake_llm.requests)) == (replies[-1].status, requests - 1, requests)
    assert "rate limit" not in str(error)


def test_a_429_pause_past_the_budget_fails_and_says_how_long(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue("/x", status_reply(429, {"Retry-After": "30"}, message="slow down"), FakeReply.json(OK))
    error = failure(fake_llm, fast(max_total_seconds=2))
    assert (error.status, error.retries, len(fake_llm.requests)) == (429, 0, 1)
    assert re.fullmatch(rf"probe: POST {fake_llm.url}/x failed after 1 attempt\(s\) in \d+\.\ds: "
                        r'HTTP 429: provider error \(type fake_error\): "slow down"; '
                        r"the rate limit asks for (30\.0|29\.\d)s more, past retry_max_total_seconds \(2s\)",
                        str(error)), str(error)


def test_a_target_paused_past_the_budget_refuses_the_next_call_unsent(fake_llm: FakeLLMServer) -> None:
    limiter = RateLimiter()
    fake_llm.enqueue("/x", status_reply(429, {"Retry-After": "3"}))
    failure(fake_llm, fast(max_total_seconds=2), limiter=limiter)
    fake_llm.enqueue("/x", FakeReply.json(OK))
    error = failure(fake_llm, fast(max_total_seconds=2), limiter=limiter)
    assert (error.status, error.retries, len(fake_llm.requests)) == (None, 0, 1)
    assert re.fullmatch(rf"probe: POST {fake_llm.url}/x: no slot under the target's rate limit within "
                        r"retry_max_total_seconds \(2s\): the provider asked to wait for (3\.0|2\.\d)s more",
                        str(error)), str(error)


# ---------------------------------------------------------------- each attempt's deadline


def test_each_attempt_gets_only_what_is_left_of_the_budget(fake_llm: FakeLLMServer) -> None:
    # Headers after 0.8 s, then a body that stalls. The first attempt is cut at its 1 s deadline
    # (not a whole timeout after the headers, which would be past the budget), the second gets
    # only the 0.6 s left of the 1.6 s budget, too short for the headers.
    fake_llm.set_default("/x", replace(FakeReply.json(OK), delay=0.8).in_pieces(6, 5.0))
    error = failure(fake_llm, fast(request_timeout_seconds=1.0, max_total_seconds=1.6, max_attempts=5))
    assert len(fake_llm.requests) == 2
    stated = re.search(r"no response within (\d+\.\d+)s \(a deadline for the whole reply, body included\)$",
                       str(error))
    assert stated is not None, str(error)
    assert float(stated.group(1)) <= 0.6


def test_a_spent_budget_still_makes_one_attempt(fake_llm: FakeLLMServer) -> None:
    fake_llm.set_default("/x", FakeReply.json(OK))
    try:
        result = call(fake_llm, fast(max_total_seconds=0))
    except HttpCallError as error:  # a loaded machine may not answer within the 0.05 s floor
        assert "no response within 0.05s" in str(error)
    else:
        assert result.data == OK


# ---------------------------------------------------------------- reading the body


def _padded(size: int) -> bytes:
    """A JSON body of exactly `size` bytes."""
    body = json.dumps({"answer": ""}).encode()
    return json.dumps({"answer": "a" * (size - len(body))}).encode()


@pytest.mark.parametrize("size", [1000, 1001])
def test_max_response_bytes_is_the_largest_body_accepted(fake_llm: FakeLLMServer, size: int) -> None:
    fake_llm.set_default("/x", FakeReply(body=_padded(size), headers={"Content-Type": "application/json"}))
    policy = fast(max_response_bytes=1000)
    if size <= 1000:
        assert call(fake_llm, policy).data == json.loads(_padded(size))
        return
    error = failure(fake_llm, policy)
    assert str(error) == (f"probe: the reply from {fake_llm.url}/x was more than 1000 bytes "
                          "(max_response_bytes); raise it if such replies are expected")
    assert (error.retries, len(fake_llm.requests)) == (0, 1)


def test_a_compressed_reply_is_decoded_and_capped_by_its_decoded_size(fake_llm: FakeLLMServer) -> None:
    body = _padded(5000)
    fake_llm.set_default("/x", FakeReply(body=gzip.compress(body), headers={
        "Content-Type": "application/json", "Content-Encoding": "gzip"}))
    assert len(gzip.compress(body)) < 1000
    assert call(fake_llm, fast(max_response_bytes=5000)).data == json.loads(body)
    with pytest.raises(HttpCallError, match="more than 4999 bytes"):
        call(fake_llm, fast(max_response_bytes=4999))


def test_a_gzip_bomb_is_refused_without_being_inflated(fake_llm: FakeLLMServer) -> None:
    # 64 MiB of zeros in a 64 KB gzip body: refused once its decoded bytes pass the cap, and memory
    # never holds more than the cap and a piece or two of it.
    bomb = gzip.compress(bytes(64 * 1024 * 1024), 9)
    fake_llm.set_default("/x", FakeReply(body=bomb, headers={"Content-Type": "application/json",
                                                             "Content-Encoding": "gzip"}))
    tracemalloc.start()
    try:
        error = failure(fake_llm, fast(max_response_bytes=1_000_000))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "was more than 1000000 bytes (max_response_bytes)" in str(error)
    assert peak < 8 * 1024 * 1024, f"{peak} bytes allocated reading a capped reply"


@pytest.mark.parametrize("reply", [
    pytest.param(FakeReply.json(OK).in_pieces(6, 5.0), id="stalls-halfway"),
    pytest.param(FakeReply.json({"answer": "x" * 60}).in_pieces(4, 0.1), id="trickles"),
    # A reply the server will close after: its connection has let the socket go, so the socket is
    # found through the body's file (the body would be complete after 0.8 s).
    pytest.param(FakeReply.json({"answer": "x" * 20}, headers={"Connection": "close"}).in_pieces(4, 0.1),
                 id="trickles-on-a-closing-connection"),
])
def test_a_body_still_coming_at_the_deadline_is_cut_there(fake_llm: FakeLLMServer, reply: FakeReply) -> None:
    fake_llm.set_default("/x", reply)
    error = failure(fake_llm, fast(request_timeout_seconds=0.3, max_attempts=1))
    assert re.fullmatch(rf"probe: POST {fake_llm.url}/x failed after 1 attempt\(s\) in \d+\.\ds: "
                        r"no response within 0\.30s \(a deadline for the whole reply, body included\)",
                        str(error)), str(error)


def test_a_socket_joining_an_attempt_past_its_deadline_is_cut_at_once() -> None:
    # A reused keep-alive connection joins the attempt when its request starts: past the deadline,
    # however little, its socket is shut down then, not left to a read that could wait.
    mine, theirs = socket.socketpair()
    with mine, theirs:
        with attempt_deadline(0.0) as deadline:
            time.sleep(0.05)
            watch(mine)
            assert mine.recv(1) == b""  # shut down: end of stream at once, not a read that waits
        assert deadline.fired


def test_a_socket_whose_attempt_ended_in_time_is_left_alone() -> None:
    mine, theirs = socket.socketpair()
    with mine, theirs:
        with attempt_deadline(0.1) as deadline:
            watch(mine)
        time.sleep(0.2)  # past the deadline the attempt no longer has
        theirs.sendall(b"x")
        assert mine.recv(1) == b"x" and not deadline.fired


def test_a_closing_connection_that_stalls_just_before_the_deadline_is_cut_at_it(fake_llm: FakeLLMServer) -> None:
    # A piece arrives at 0.9 s of a 1 s deadline, then nothing: a read that waited its own timeout
    # from there ended at 1.8 s. The bound checked is the stated deadline with room for a busy machine.
    fake_llm.set_default("/x", FakeReply.json({"answer": "x" * 200}, headers={"Connection": "close"}).in_pieces(6, 0.9))
    started = time.monotonic()
    error = failure(fake_llm, fast(request_timeout_seconds=1.0, max_attempts=1))
    assert time.monotonic() - started < 1.5
    assert str(error).endswith("no response within 1.00s (a deadline for the whole reply, body included)")


def test_a_connection_closed_mid_body_is_retried(fake_llm: FakeLLMServer) -> None:
    # Chunked, the first chunk sent, then the server hangs up: an incomplete reply.
    cut = FakeReply(body=b"5\r\nhello\r\n", headers={"Transfer-Encoding": "chunked", "Connection": "close"})
    fake_llm.enqueue("/x", cut, FakeReply.json(OK))
    assert call(fake_llm, FAST).retries == 1
    fake_llm.enqueue("/x", cut)
    error = failure(fake_llm, fast(max_attempts=1))
    assert str(error).endswith(": the connection closed before the reply was complete"), str(error)


# ---------------------------------------------------------------- what an error says


LONG = "x" * 300


DEEP_JSON = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
"""JSON nested to the interpreter's recursion limit: a garbage collection the decoder's allocations start
there may run another object's finalizer (the loopback server's sockets) with no stack left, which Python
reports as an ignored exception of that finalizer, not of the call under test. The test's assertions stand;
only pytest's turning that report into a failure, by chance of the collector's timing, is set aside."""


@pytest.mark.parametrize(("text", "said"), [
    (f"upstream refused key {SECRET}", "upstream refused key ***"),
    (LONG, LONG),
    (LONG + "y", LONG + "..."),
    pytest.param("[" * 100_000, "[" * 300 + "...", marks=DEEP_JSON),  # JSON too deep to decode: quoted as text
])
def test_an_error_reply_without_provider_fields_is_quoted_short_and_scrubbed(
    fake_llm: FakeLLMServer, text: str, said: str
) -> None:
    fake_llm.set_default("/x", FakeReply(status=400, body=text.encode(), headers={"Content-Type": "text/plain"}))
    error = failure(fake_llm, FAST, secrets=[SECRET])
    assert str(error) == f"probe: HTTP 400 from POST {fake_llm.url}/x: {said}"
    assert (error.status, error.retries, error.detail) == (400, 0, None)


@pytest.mark.parametrize(("text", "shown"), [("Service Unavailable", "'Service Unavailable'"),
                                             pytest.param("[" * 100_000, repr("[" * 300), marks=DEEP_JSON)])
def test_an_answer_that_is_not_json_is_an_error(fake_llm: FakeLLMServer, text: str, shown: str) -> None:
    fake_llm.set_default("/x", FakeReply(body=text.encode()))
    gc.collect()
    gc.disable()  # no finalizer may run at the decoder's depth (see DEEP_JSON): collected below, at the top
    try:
        error = failure(fake_llm, FAST)
    finally:
        gc.enable()
        gc.collect()
    assert str(error) == f"probe: expected a JSON reply from {fake_llm.url}/x, got {shown} (HTTP 200)"


@pytest.mark.parametrize("status", [200, 299])
def test_a_2xx_status_is_an_answer(fake_llm: FakeLLMServer, status: int) -> None:
    fake_llm.set_default("/x", FakeReply.json(OK, status=status))
    result = call(fake_llm, FAST)
    assert (result.status, result.data, result.retries) == (status, OK, 0)


@pytest.mark.parametrize("status", [300, 304, 399])
def test_a_3xx_without_a_location_is_no_answer_either(fake_llm: FakeLLMServer, status: int) -> None:
    # A model API never answers 3xx: its body is not the answer, whatever it holds, and it is not retried.
    fake_llm.set_default("/x", FakeReply.json(OK, status=status))
    error = failure(fake_llm, FAST)
    assert str(error) == (f"probe: HTTP {status} from POST {fake_llm.url}/x with no Location header: not an "
                          "answer, and a model API never redirects")
    assert (error.status, error.retries, len(fake_llm.requests)) == (status, 0, 1)


def test_a_refusal_after_a_retry_reports_the_retry(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue("/x", status_reply(500), status_reply(400, message="bad request"))
    error = failure(fake_llm, FAST)
    assert (error.status, error.retries) == (400, 1)
    assert str(error) == (f'probe: HTTP 400 from POST {fake_llm.url}/x: provider error (type fake_error): '
                          '"bad request"')


def test_the_call_can_be_made_with_named_arguments(fake_llm: FakeLLMServer) -> None:
    fake_llm.set_default("/x", FakeReply.json(OK))
    assert post_json(url=f"{fake_llm.url}/x", body={"q": 1}, policy=FAST).data == OK
    assert http_call(method="GET", url=f"{fake_llm.url}/x", policy=FAST).data == OK


def test_a_url_requests_cannot_send_to_fails_at_once() -> None:
    with pytest.raises(HttpCallError, match=r"^probe: cannot send request to ftp://model\.invalid/x: ") as caught:
        post_json("ftp://model.invalid/x", {"q": 1}, policy=FAST, describe="probe")
    assert caught.value.retries == 0


def test_a_proxy_from_the_environment_is_used(fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    # A CI runner behind a proxy: HTTP(S)_PROXY must carry the call (`model.invalid` has no address),
    # while a host NO_PROXY names (this loopback server) is called directly: decided per host.
    monkeypatch.setenv("http_proxy", fake_llm.url)
    monkeypatch.setenv("HTTP_PROXY", fake_llm.url)
    fake_llm.set_default("/v1/x", FakeReply.json(OK))
    assert post_json(f"{fake_llm.url}/v1/x", {"q": 1}, policy=fast(max_attempts=1)).data == OK
    result = post_json("http://model.invalid/v1/x", {"q": 1}, policy=fast(max_attempts=1))
    assert result.data == OK
    assert [r.headers["host"] for r in fake_llm.requests] == [fake_llm.url.split("//")[1], "model.invalid"]


def test_a_netrc_entry_never_replaces_the_targets_own_key(
        fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    # requests, reading the environment, would send ~/.netrc's Basic credentials in place of the
    # Authorization header the target set: every call a 401 for a user with a `default` entry.
    (tmp_path / ".netrc").write_text("default login someone password hunter2\n")
    (tmp_path / ".netrc").chmod(0o600)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("NETRC", str(tmp_path / ".netrc"))
    fake_llm.set_default("/x", FakeReply.json(OK))
    call(fake_llm, FAST, headers={"Authorization": "Bearer the-key"})
    post_json(f"{fake_llm.url}/x", {"q": 1}, policy=FAST)
    assert [r.headers.get("authorization") for r in fake_llm.requests] == ["Bearer the-key", None]


def test_a_ca_bundle_from_the_environment_is_used(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    # REQUESTS_CA_BUNDLE (a company's own CA, on a CI runner) still decides how TLS is checked:
    # a bundle that does not exist is an error naming it, not a silent fall-back to the default CAs.
    missing = tmp_path / "no-such-bundle.pem"
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(missing))
    error = failure_at("https://127.0.0.1:9/x")
    assert str(missing) in str(error)


def failure_at(url: str) -> HttpCallError:
    with pytest.raises(HttpCallError) as caught:
        post_json(url, {"q": 1}, policy=fast(max_attempts=1), describe="probe")
    return caught.value


# ---------------------------------------------------------------- quota refusals


def test_a_quota_429_is_not_retried_and_does_not_pause_the_target(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue("/x", quota_exhausted(), FakeReply.json(OK))
    limiter = RateLimiter()
    error = failure(fake_llm, FAST, limiter=limiter)
    assert (error.status, error.retries, len(fake_llm.requests)) == (429, 0, 1)
    assert str(error).endswith("; the account's quota is used up, which waiting will not change")
    assert limiter.pause_remaining() == 0 and limiter.stats.rate_limited == 0


@pytest.mark.parametrize("status", [408, 503])
def test_only_a_429_can_be_a_quota_refusal(fake_llm: FakeLLMServer, status: int) -> None:
    fake_llm.enqueue("/x", status_reply(status, type="insufficient_quota", code="insufficient_quota"),
                     FakeReply.json(OK))
    assert call(fake_llm, FAST).retries == 1


# ---------------------------------------------------------------- tokens charged to the target's limiter


def tpm_limiter(clock: FakeClock) -> RateLimiter:
    """10 tokens a second, a bucket of 10, on a fake clock: `waited_seconds` is exact."""
    return RateLimiter(Limits(max_tpm=600), clock=clock, wait=clock.wait)


@pytest.mark.parametrize("through", ["post_json", "http_call"])
def test_a_call_without_a_token_estimate_is_charged_none(fake_llm: FakeLLMServer, through: str) -> None:
    fake_llm.set_default("/x", FakeReply.json(OK))  # no `usage`: nothing corrects the charge after
    clock = FakeClock()
    limiter = tpm_limiter(clock)
    url = f"{fake_llm.url}/x"
    if through == "post_json":
        post_json(url, {"q": 1}, policy=FAST, limiter=limiter)
    else:
        http_call("POST", url, body={"q": 1}, policy=FAST, limiter=limiter)
    post_json(url, {"q": 1}, policy=FAST, limiter=limiter, tokens=10)  # the whole bucket, still full
    assert limiter.stats.waited_seconds == 0
    post_json(url, {"q": 1}, policy=FAST, limiter=limiter, tokens=10)  # now it must refill: 1 s
    assert limiter.stats.waited_seconds == pytest.approx(1.0)


@pytest.mark.parametrize(("status", "retry_codes"), [(400, None), (500, frozenset())])
def test_a_refused_call_gives_its_tokens_back(
    fake_llm: FakeLLMServer, status: int, retry_codes: frozenset[int] | None
) -> None:
    fake_llm.enqueue("/x", status_reply(status), FakeReply.json(OK))
    clock = FakeClock()
    limiter = tpm_limiter(clock)
    policy = fast(retry_status_codes=retry_codes)
    assert failure(fake_llm, policy, limiter=limiter, tokens=10).status == status
    call(fake_llm, policy, limiter=limiter, tokens=10)
    assert limiter.stats.waited_seconds == 0


def test_a_forked_child_keeps_deadlines_of_its_own() -> None:
    # The watchdog's thread does not survive a fork: a child that calls out must start its own, or
    # its deadlines would never fire.
    with attempt_deadline(0.01):
        pass  # the parent's watchdog thread is running now
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through its exit status
        mine, theirs = socket.socketpair()
        mine.settimeout(5)  # without a watchdog, fail rather than hang
        try:
            with attempt_deadline(0.05):
                watch(mine)
                cut = mine.recv(1) == b""  # waits until the watchdog shuts it down
        except OSError:
            cut = False
        os._exit(0 if cut else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_a_server_that_closes_the_connection_after_its_reply_is_read_normally() -> None:
    """An HTTP/1.0 server (or `Connection: close`) ends the connection with the body's last byte; setting the
    read deadline on that closed socket raised EBADF, and every good reply became 'cannot send request'."""
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    class Closing(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            data = json.dumps(OK).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = HTTPServer(("127.0.0.1", 0), Closing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        for _ in range(2):  # the second call must not reuse the closed connection either
            result = post_json(f"http://127.0.0.1:{server.server_address[1]}/x", {"q": 1}, policy=FAST,
                               describe="probe")
            assert result.data == OK and result.status == 200
    finally:
        server.shutdown()
        server.server_close()
