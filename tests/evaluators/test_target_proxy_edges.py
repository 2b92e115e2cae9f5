"""The target proxy's edges, in process and fast: each limit at, below and above its line, each refusal
with its status and words, and each count the run reports (`evaluator_raw_request.target_proxy`).

`test_target_proxy.py` has the protocol's main paths and the whole path through `agentv-gate run`;
this file is what `make mutate` runs first against `evaluators/target_proxy.py`.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from agentv_gate.errors import ProviderError
from agentv_gate.evaluators.target_proxy import MAX_BODY_BYTES, TargetProxy
from agentv_gate.models import Message, TargetResponse
from agentv_gate.targets.base import ProviderRequest
from agentv_gate.targets.cache import CachingProvider, ResponseCache
from agentv_gate.targets.config import RawTarget, resolve_target
from agentv_gate.targets.registry import build_provider
from tests.evaluators.test_target_proxy import CHAT, NO_PROXY, call, judge_provider
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply


@pytest.fixture
def server(fake_llm: FakeLLMServer) -> FakeLLMServer:
    fake_llm.set_default(CHAT, lambda _: FakeReply.openai("YES"))
    return fake_llm


def proxy_for(server: FakeLLMServer, max_calls: int = 5) -> TargetProxy:
    return TargetProxy(judge_provider(server), max_calls, case_id="capital", evaluator="recall")


def raw_post(proxy: TargetProxy, path: str, headers: dict[str, str], body: bytes = b"") -> tuple[int, dict[str, Any]]:
    """A POST written by hand (urllib always sends a truthful Content-Length); the proxy's reply.
    A proxy that waits for a body that never comes times out here instead of answering."""
    port = int(proxy.url.rsplit(":", 1)[1])
    head = "".join(f"{name}: {value}\r\n" for name, value in {
        "Host": "127.0.0.1", "Authorization": f"Bearer {proxy.token}", **headers}.items())
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(f"POST {path} HTTP/1.1\r\n{head}\r\n".encode() + body)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    status_line, _, rest = received.partition(b"\r\n")
    return int(status_line.split()[1]), json.loads(rest.partition(b"\r\n\r\n")[2])


def openai_usage(text: str, usage: dict[str, Any]) -> FakeReply:
    """An OpenAI chat reply with the usage object given (a model server's own idea of one)."""
    return FakeReply.json({"id": "x", "object": "chat.completion", "model": "gpt-judge", "usage": usage,
                           "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                        "finish_reason": "stop"}]})


class ScriptedJudge:
    """A judge target whose client library answers or raises as scripted (as an SDK-backed provider
    does), for the failures an HTTP model cannot produce: an exception that is not ours."""

    kind = "scripted"

    def __init__(self, *outcomes: TargetResponse | BaseException) -> None:
        self.name = "judge"
        self.outcomes = list(outcomes)
        self.requests: list[ProviderRequest] = []

    def invoke(self, request: ProviderRequest) -> TargetResponse:
        self.requests.append(request)
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome


# ---------------------------------------------------------------- the request body


def test_a_body_of_exactly_the_limit_is_read_and_one_byte_more_is_a_413() -> None:
    """16 MiB is read and judged (here: an unknown field); 16 MiB + 1 is refused before a byte is read."""
    prefix, suffix = b'{"padding":"', b'"}'
    with TargetProxy(ScriptedJudge(), 5, case_id="c", evaluator="e") as proxy:
        for size in (MAX_BODY_BYTES - 1, MAX_BODY_BYTES):
            body = prefix + b"x" * (size - len(prefix) - len(suffix)) + suffix
            assert len(body) == size
            status, reply = raw_post(proxy, "/invoke", {"Content-Length": str(size)}, body)
            assert (status, reply["error"].split(" (")[0]) == (400, "unknown field 'padding'")
        status, reply = raw_post(proxy, "/invoke", {"Content-Length": str(MAX_BODY_BYTES + 1)})
    assert (status, reply["error"]) == (
        413, f"request body of {MAX_BODY_BYTES + 1} bytes is over the 16777216 byte limit")
    assert proxy.usage.call_count == 0


@pytest.mark.parametrize("headers, body, said", [
    ({}, b"", "request body is not JSON"),  # no Content-Length: no body, never a wait for one
    ({"Content-Length": "-5"}, b"", "request body is not JSON"),
    ({"Content-Length": "0"}, b"", "request body is not JSON"),
    ({"Content-Length": "five"}, b"", "Content-Length is not a number"),
    ({"Content-Length": "8"}, b"not json", "request body is not JSON"),
    ({"Content-Length": "1"}, b"7", "expected a JSON object with a question, got int"),
])
def test_a_body_it_cannot_read_is_a_400_saying_why(headers: dict[str, str], body: bytes, said: str) -> None:
    with TargetProxy(ScriptedJudge(), 5, case_id="c", evaluator="e") as proxy:
        assert raw_post(proxy, "/invoke", headers, body) == (400, {"error": said})


@pytest.mark.parametrize("body, said", [
    ({"question": ""}, "Missing required field: question (a non-empty string)"),
    ({"question": 5}, "Missing required field: question (a non-empty string)"),
    ({"question": "q", "systemPrompt": 5}, "systemPrompt must be a string"),
    ({"question": "q", "attempt": True}, "attempt must be a whole number >= 1, got True"),
    ({"question": "q", "attempt": "2"}, "attempt must be a whole number >= 1, got '2'"),
    ({"question": "q", "attempt": 1.5}, "attempt must be a whole number >= 1, got 1.5"),
    ({"question": "q", "attempt": 0}, "attempt must be a whole number >= 1, got 0"),
    ({"question": "q", "target": "zzz"}, "Unknown target 'zzz'. Available: judge"),
    ({"question": "q", "target": "aaa"}, "Unknown target 'aaa'. Available: judge"),
    ({"question": "q", "zeta": 1, "alpha": 2}, "unknown field 'alpha' (known: attempt, evalCaseId, question, "
                                                "systemPrompt, target)"),
])
def test_an_invoke_body_it_does_not_take_is_a_400_naming_the_field(body: dict[str, Any], said: str) -> None:
    with TargetProxy(ScriptedJudge(), 5, case_id="c", evaluator="e") as proxy:
        assert call(proxy, "POST", "/invoke", body) == (400, {"error": said})
    assert proxy.usage.call_count == 0


@pytest.mark.parametrize("body", [[{"question": "q"}], {"requests": "q"}, {"requests": {"question": "q"}}])
def test_a_batch_body_without_a_list_of_requests_is_a_400(body: Any) -> None:
    with TargetProxy(ScriptedJudge(), 5, case_id="c", evaluator="e") as proxy:
        assert call(proxy, "POST", "/invokeBatch", body) == (400, {"error": "Missing required field: requests (array)"})


# ---------------------------------------------------------------- routes


def test_each_endpoint_answers_only_its_own_method_and_path(server: FakeLLMServer) -> None:
    with proxy_for(server) as proxy:
        assert call(proxy, "GET", "/info?probe=1")[0] == 200  # the query is not part of the path
        routes: list[tuple[str, str, Any]] = [
            ("GET", "/", None), ("GET", "/invoke", None), ("GET", "/invokeBatch", None), ("GET", "/infos", None),
            ("POST", "/info", {"question": "q"}), ("POST", "/", {"requests": []}),
            ("POST", "/invoke/", {"question": "q"}), ("POST", "/zzz", {"requests": []})]
        for method, path, body in routes:
            status, reply = call(proxy, method, path, body)
            assert (status, reply["error"].split(" (")[0]) == (404, f"Not found: {method} {path}"), (method, path)
        assert call(proxy, "POST", "/invoke?x=1", {"question": "q"})[0] == 200
    assert len(server.requests) == 1


def test_the_token_is_the_whole_bearer_header_and_256_random_bits(server: FakeLLMServer) -> None:
    with proxy_for(server) as proxy:
        assert len(proxy.token) == 64 and int(proxy.token, 16) >= 0
        for header in (proxy.token, f"bearer {proxy.token}", f"Bearer {proxy.token} ", f"XBearer {proxy.token}"):
            request = urllib.request.Request(f"{proxy.url}/info", headers={"Authorization": header})
            with pytest.raises(urllib.error.HTTPError) as refused:
                NO_PROXY.open(request, timeout=10)
            assert refused.value.code == 401, header


def test_info_before_any_call_and_a_limit_of_zero_refuses_the_first_call(server: FakeLLMServer) -> None:
    with proxy_for(server, max_calls=0) as proxy:
        assert call(proxy, "GET", "/info") == (200, {"targetName": "judge", "maxCalls": 0, "callCount": 0,
                                                     "availableTargets": ["judge"]})
        assert call(proxy, "POST", "/invoke", {"question": "q"}) == (
            429, {"error": "Max calls exceeded (limit: 0, made: 0)"})
    assert server.requests == [] and proxy.usage.as_raw() == {
        "target": "judge", "max_calls": 0, "call_count": 0, "refused_calls": 1}


def test_a_batch_fits_the_limit_exactly_and_one_call_more_is_refused_without_a_batch_count(
        server: FakeLLMServer) -> None:
    with proxy_for(server, max_calls=3) as proxy:
        assert call(proxy, "POST", "/invoke", {"question": "q"})[0] == 200
        status, reply = call(proxy, "POST", "/invokeBatch", {"requests": [{"question": "a"}, {"question": "b"}]})
        assert status == 200 and [r["rawText"] for r in reply["responses"]] == ["YES", "YES"]
        assert call(proxy, "POST", "/invokeBatch", {"requests": [{"question": "c"}]}) == (
            429, {"error": "Max calls exceeded (limit: 3, made: 3)"})
        assert call(proxy, "POST", "/invokeBatch", {"requests": [{"question": "c"}, {"question": "d"}]}) == (
            429, {"error": "Max calls exceeded (limit: 3, made: 3, batch: 2)"})
        assert call(proxy, "GET", "/info")[1]["callCount"] == 3
    assert len(server.requests) == 3


def test_a_batch_item_the_model_fails_says_so_and_the_others_are_answered(server: FakeLLMServer) -> None:
    server.enqueue(CHAT, FakeReply.error(400, "context too long"), FakeReply.openai("YES"))
    with proxy_for(server) as proxy:
        status, reply = call(proxy, "POST", "/invokeBatch", {"requests": [{"question": "a"}, {"attempt": 2},
                                                                          {"question": "b"}]})
    assert status == 200
    failed, refused, answered = reply["responses"]
    assert refused == {"output": [], "rawText": "Error: requests[1]: Missing required field: question (a non-empty "
                       "string)", "error": "requests[1]: Missing required field: question (a non-empty string)"}
    assert failed["output"] == [] and failed["rawText"] == f"Error: {failed['error']}"
    assert failed["error"].startswith("judge target 'judge' failed: ") and "context too long" in failed["error"]
    assert answered == {"output": [{"role": "assistant", "content": "YES"}], "rawText": "YES",
                        "tokenUsage": {"input": 11, "output": 7}}
    assert proxy.usage.as_raw()["failed_calls"] == 1 and proxy.usage.call_count == 2


# ---------------------------------------------------------------- what the run reports


def test_a_model_error_is_quoted_as_it_is_and_a_foreign_exception_names_its_type(server: FakeLLMServer) -> None:
    server.enqueue(CHAT, FakeReply.error(400, "bad request"))
    with proxy_for(server) as proxy:
        status, reply = call(proxy, "POST", "/invoke", {"question": "q"})
    [message] = proxy.usage.errors
    assert status == 502 and reply["error"] == f"judge target 'judge' failed: {message}"
    assert "bad request" in message and not message.startswith(("HttpCallError", "ProviderError"))

    quota = ProviderError("out of credit")
    quota.retries = 2  # type: ignore[attr-defined]  # as HttpCallError carries it
    judge = ScriptedJudge(RuntimeError("SDK exploded"), quota)
    with TargetProxy(judge, 5, case_id="capital", evaluator="recall", model="gpt-judge") as proxy:
        assert call(proxy, "POST", "/invoke", {"question": "q"}) == (
            502, {"error": "judge target 'judge' failed: RuntimeError: SDK exploded"})
        assert proxy.usage.retries == 0  # an exception that does not say how often it retried: none
        assert call(proxy, "POST", "/invoke", {"question": "q", "attempt": 3}) == (
            502, {"error": "judge target 'judge' failed: out of credit"})
    assert proxy.usage.retries == 2
    first = judge.requests[0]
    assert (first.question, first.model, first.eval_case_id) == ("q", "gpt-judge", "capital")
    assert (first.role, first.attempt) == ("target_proxy", 0)
    assert judge.requests[1].attempt == 2


def test_only_the_first_five_errors_are_kept(server: FakeLLMServer) -> None:
    server.enqueue(CHAT, *(FakeReply.error(400, f"bad request number {i}") for i in range(6)))
    with proxy_for(server, max_calls=6) as proxy:
        assert [call(proxy, "POST", "/invoke", {"question": f"q{i}"})[0] for i in range(6)] == [502] * 6
    raw = proxy.usage.as_raw()
    assert raw["failed_calls"] == 6
    assert [f"bad request number {i}" in error for i, error in enumerate(raw["errors"])] == [True] * 5
    assert len(raw["errors"]) == 5


@pytest.mark.parametrize("usage, counted", [
    ({"prompt_tokens": 0, "completion_tokens": 4}, {"input": 0, "output": 4}),
    ({"prompt_tokens": 6}, {"input": 6, "output": 0}),
    ({"prompt_tokens": True, "completion_tokens": 2.5}, None),
])
def test_token_usage_counts_whole_numbers_only_and_either_side_alone(
        server: FakeLLMServer, usage: dict[str, Any], counted: dict[str, int] | None) -> None:
    server.enqueue(CHAT, openai_usage("YES", usage))
    with proxy_for(server) as proxy:
        assert call(proxy, "POST", "/invoke", {"question": "q"})[0] == 200
    assert proxy.usage.as_raw().get("token_usage") == counted


def test_a_repeated_question_is_answered_from_the_cache_and_counted_as_a_hit(
        server: FakeLLMServer, tmp_path: Path) -> None:
    cached = CachingProvider(judge_provider(server), ResponseCache(tmp_path / "cache"))
    with TargetProxy(cached, 5, case_id="c", evaluator="e") as proxy:
        first = call(proxy, "POST", "/invoke", {"question": "Paris?"})
        assert proxy.usage.as_raw() == {"target": "judge", "max_calls": 5, "call_count": 1,
                                        "token_usage": {"input": 11, "output": 7}}
        assert call(proxy, "POST", "/invoke", {"question": "Paris?"}) == first
        assert call(proxy, "POST", "/invoke", {"question": "Paris?", "attempt": 2})[0] == 200
    assert len(server.requests) == 2  # the second ask replayed; another attempt is a new sample
    assert proxy.usage.as_raw()["cache_hits"] == 1 and proxy.usage.call_count == 3


def test_the_first_ask_is_the_judge_targets_attempt_0(tmp_path: Path) -> None:
    """A CLI judge target sees `{ATTEMPT}` as an llm_judge's own asks number it: 0 first, then 1, 2..."""
    data = {"provider": "cli", "command_template": "echo attempt={ATTEMPT}", "cwd": str(tmp_path)}
    judge = build_provider(resolve_target(RawTarget(name="judge", data=data), {}))
    with TargetProxy(judge, 5, case_id="c", evaluator="e") as proxy:
        said = [call(proxy, "POST", "/invoke", body)[1]["rawText"].strip()
                for body in ({"question": "q"}, {"question": "q", "attempt": 1}, {"question": "q", "attempt": 3})]
    assert said == ["attempt=0", "attempt=0", "attempt=2"]


# ---------------------------------------------------------------- lifecycle


def test_close_does_not_wait_for_a_call_still_waiting_on_the_model(server: FakeLLMServer) -> None:
    """The judge script timed out while the model is slow: the case goes on at once."""
    server.enqueue(CHAT, FakeReply.hang(4))
    proxy = proxy_for(server)
    proxy.start()
    asking = threading.Thread(target=lambda: call(proxy, "POST", "/invoke", {"question": "q"}), daemon=True)
    asking.start()
    deadline = time.monotonic() + 10
    while not server.requests and time.monotonic() < deadline:
        time.sleep(0.01)
    assert server.requests, "the proxy never asked the model"
    started = time.monotonic()
    proxy.close()
    assert time.monotonic() - started < 2.5  # the model answers after 4 s
    with pytest.raises(RuntimeError, match="the target proxy is not running"):
        _ = proxy.url


def test_two_judges_running_at_once_each_get_a_proxy_of_their_own() -> None:
    with TargetProxy(ScriptedJudge(), 1, case_id="a", evaluator="e") as one, \
            TargetProxy(ScriptedJudge(), 1, case_id="b", evaluator="e") as other:
        assert one.url != other.url and one.token != other.token
        assert call(one, "GET", "/info")[0] == call(other, "GET", "/info")[0] == 200


def test_a_message_field_the_model_left_empty_is_left_out() -> None:
    """A tool-call turn has no text: the judge gets `{role, tool_calls}`, not `content: null`."""
    calls = [{"tool": "search", "input": {"q": "Paris"}}]
    message = Message.model_validate({"role": "assistant", "content": None, "tool_calls": calls, "name": None})
    answer = TargetResponse(text="", output_messages=[message])
    with TargetProxy(ScriptedJudge(answer), 1, case_id="c", evaluator="e") as proxy:
        status, reply = call(proxy, "POST", "/invoke", {"question": "q"})
    assert status == 200 and reply["output"] == [{"role": "assistant", "tool_calls": calls}]


def test_a_proxy_never_started_closes_and_a_closed_one_closes_again() -> None:
    never = TargetProxy(ScriptedJudge(), 1, case_id="c", evaluator="e")
    never.close()
    with TargetProxy(ScriptedJudge(), 1, case_id="c", evaluator="e") as proxy:
        assert call(proxy, "GET", "/info")[0] == 200
    proxy.close()


class HeldJudge(ScriptedJudge):
    """A judge target that answers only once the test lets it (after the judge script hung up)."""

    def __init__(self) -> None:
        super().__init__(TargetResponse(text="YES"))
        self.asked, self.release = threading.Event(), threading.Event()

    def invoke(self, request: ProviderRequest) -> TargetResponse:
        self.asked.set()
        self.release.wait(10)
        return super().invoke(request)


def test_a_judge_that_hung_up_before_its_answer_leaves_no_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    """A judge script killed at its timeout resets the connection; the answer then has nowhere to go,
    which is no error of the run's (socketserver would print a traceback into the CI log)."""
    judge = HeldJudge()
    earlier = set(threading.enumerate())  # handler threads other tests left behind are not this one's
    with TargetProxy(judge, 5, case_id="c", evaluator="e") as proxy:
        port = int(proxy.url.rsplit(":", 1)[1])
        body = b'{"question": "q"}'
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(f"POST /invoke HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {proxy.token}\r\n"
                         f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
            assert judge.asked.wait(10)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close with a reset
        judge.release.set()
        deadline = time.monotonic() + 10
        while (any("process_request" in t.name for t in set(threading.enumerate()) - earlier)
               and time.monotonic() < deadline):
            time.sleep(0.01)
    assert proxy.usage.call_count == 1
    assert capsys.readouterr().err == ""


def test_the_case_and_the_evaluator_are_named_never_passed_by_position() -> None:
    """Two strings side by side: passed by position they could be swapped unnoticed in the run's rows."""
    with pytest.raises(TypeError):
        TargetProxy(ScriptedJudge(), 1, "capital", "recall")  # type: ignore[call-arg]
