"""How every HTTP caller (the openai, azure, anthropic and gemini providers, and a cli target's http
healthcheck) copes with the ways real servers, gateways and proxies answer, each against a real
loopback server writing its reply byte by byte (tests/helpers/wire_server.py).

The matrix (each row one parametrized test below, run for every provider):

| row                          | the server                                   | expected                                  |
|------------------------------|----------------------------------------------|-------------------------------------------|
| keep-alive HTTP/1.1          | Content-Length, keeps the connection         | answered; one TCP connection per worker   |
| Connection: close + length   | `Connection: close`, Content-Length, closes  | answered, no retry (healthcheck GET too)  |
| HTTP/1.0 with Content-Length | HTTP/1.0, Content-Length, closes             | answered                                  |
| HTTP/1.0 until EOF           | HTTP/1.0, no length: the close ends the body | answered                                  |
| chunked                      | Transfer-Encoding: chunked                   | answered                                  |
| gzip, deflate                | Content-Encoding gzip / deflate              | answered, decoded                         |
| keep-alive closed meanwhile  | closes it while idle / drops it as reused    | new connection / retried once on one      |
| header drip, body drip       | a byte every 20 ms past the deadline         | cut at the deadline -10% / +10% + 0.1 s   |
| reset mid-body               | TCP RST after half the body                  | retried; with max_retries 0 an error      |
| 301/302/307/308 elsewhere    | Location: a second server on 127.0.0.2       | error naming status+host; nothing sent    |
| 301/302/307/308 same host    | Location: another path, same server          | error, not retried, path never asked      |
| 200, not JSON                | text/html                                    | error, not retried                        |
| 429 / 503, closing           | Retry-After 0 + `Connection: close` / 1.0    | retried once as on keep-alive             |
| 400, closing                 | the provider's error body, then closes       | provider's message quoted, no retry       |
| TLS self-signed, no bundle   | https, self-signed certificate               | error: verify failure, REQUESTS_CA_BUNDLE |
| TLS self-signed, bundle      | the same, REQUESTS_CA_BUNDLE = its cert      | answered                                  |
| HTTPS_PROXY / NO_PROXY       | a CONNECT proxy on loopback                  | tunnelled unless NO_PROXY; deadline holds |

Last, the same through the real CLI: an LLM judge behind an HTTP/1.0 server judges, retried through
a 429, exactly as behind a keep-alive one.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentv_gate.models import TargetResponse
from agentv_gate.targets.base import ProviderRequest
from agentv_gate.targets.registry import build_provider
from agentv_gate.transport.http_policy import HttpCallError
from tests.helpers.cli import run_cli
from tests.helpers.fake_llm_server import FakeReply
from tests.helpers.files import make_repo, write
from tests.helpers.reports import RESULTS, read_rows
from tests.helpers.targets import SECRET, target
from tests.helpers.wire_server import (
    Behaviour,
    ConnectProxy,
    Wire,
    WireRequest,
    WireServer,
    drip_body,
    drip_headers,
    drop,
    redirect,
    reply,
    reset_mid_body,
    self_signed_certificate,
    server_context,
)

RETRY_FAST = {"retry_initial_delay_ms": 1, "retry_max_delay_ms": 5, "retry_jitter_ms": 1}
ANSWER = "Paris"


@dataclass(frozen=True)
class Api:
    """One provider's wire format: how its target is written, what it answers, where its key goes."""

    provider: str
    key_header: str
    endpoint: Callable[[str], dict[str, Any]]
    answer: Callable[[str], bytes]
    error: Callable[[int, str], bytes]

    def invoke(self, url: str, **settings: Any) -> TargetResponse:
        config = target(provider=self.provider, api_key="${{ TEST_API_KEY }}", **self.endpoint(url),
                        **{"timeout_seconds": 10, **RETRY_FAST, **settings})
        return build_provider(config).invoke(ProviderRequest(question="Capital of France?"))


def _anthropic_error(status: int, message: str) -> bytes:
    return json.dumps({"type": "error", "error": {"type": "invalid_request_error", "message": message}}).encode()


APIS = {
    "openai": Api("openai", "authorization", lambda url: {"base_url": url, "model": "gpt-test"},
                  lambda text: FakeReply.openai(text).body, lambda s, m: FakeReply.error(s, m).body),
    "azure": Api("azure", "api-key", lambda url: {"endpoint": url, "deployment": "d"},
                 lambda text: FakeReply.openai(text).body, lambda s, m: FakeReply.error(s, m).body),
    "anthropic": Api("anthropic", "x-api-key", lambda url: {"base_url": url, "model": "claude-test"},
                     lambda text: FakeReply.anthropic(text).body, _anthropic_error),
    "gemini": Api("gemini", "x-goog-api-key", lambda url: {"base_url": url, "model": "gemini-test"},
                  lambda text: FakeReply.gemini(text).body, lambda s, m: FakeReply.gemini_error(s, m).body),
}
PROVIDERS = list(APIS)
CALLERS = [*PROVIDERS, "healthcheck"]


def answered(caller: str, url: str, **settings: Any) -> None:
    """The caller got the answer: a provider's text, or a healthcheck that passed."""
    if caller == "healthcheck":
        config = target(provider="cli", command_template="echo up", **{**RETRY_FAST, **settings},
                        healthcheck={"type": "http", "url": f"{url}/health", "timeout_seconds": 10})
        assert build_provider(config).invoke(ProviderRequest(question="q")).text.strip() == "up"
    else:
        assert APIS[caller].invoke(url, **settings).text == ANSWER


def body_for(caller: str) -> bytes:
    return b"OK" if caller == "healthcheck" else APIS[caller].answer(ANSWER)


def error_for(caller: str, status: int, message: str = "scripted failure") -> bytes:
    return APIS["openai" if caller == "healthcheck" else caller].error(status, message)


def failure(api: Api, url: str, **settings: Any) -> HttpCallError:
    with pytest.raises(HttpCallError) as caught:
        api.invoke(url, **settings)
    return caught.value


@pytest.fixture()
def server() -> Any:
    with WireServer() as started:
        yield started


@pytest.fixture()
def elsewhere() -> Any:
    """Another host: a second server on another loopback address, which must never be reached."""
    with WireServer("127.0.0.2") as started:
        yield started


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command line makes the test certificate")
    return self_signed_certificate(tmp_path_factory.mktemp("tls"))


# ---------------------------------------------------------------- how a complete reply is framed

FRAMINGS: dict[str, dict[str, Any]] = {
    "keep-alive": {},
    "close-with-length": {"close": True},
    "http10-with-length": {"version": "HTTP/1.0"},
    "http10-until-eof": {"version": "HTTP/1.0", "length": False},
    "chunked": {"chunked": True, "length": False},
    "gzip": {"encoding": "gzip"},
    "deflate": {"encoding": "deflate"},
}


@pytest.mark.parametrize("framing", FRAMINGS)
@pytest.mark.parametrize("caller", CALLERS)
def test_a_complete_reply_is_an_answer_however_it_is_framed(server: WireServer, caller: str, framing: str) -> None:
    server.script(reply(200, body_for(caller), **FRAMINGS[framing]))
    answered(caller, server.url)
    assert len(server.requests) == 1


@pytest.mark.parametrize("provider", PROVIDERS)
def test_keep_alive_reuses_one_connection_per_worker(server: WireServer, provider: str) -> None:
    server.default(reply(200, body_for(provider)))
    workers: set[int] = set()

    def one_call(_: int) -> None:
        workers.add(threading.get_ident())
        answered(provider, server.url)

    with ThreadPoolExecutor(max_workers=3) as pool:
        list(pool.map(one_call, range(12)))
    assert len(server.requests) == 12
    assert server.connections == len(workers)


def _answer_then_hang_up(body: bytes) -> Behaviour:
    """A keep-alive reply (no `Connection: close`), after which the server closes the idle connection."""
    answer = reply(200, body)

    def behave(wire: Wire, request: WireRequest) -> bool:
        answer(wire, request)
        return False

    return behave


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_keep_alive_connection_closed_while_idle_is_replaced_without_a_retry(server: WireServer,
                                                                               provider: str) -> None:
    server.script(_answer_then_hang_up(body_for(provider)), reply(200, body_for(provider)))
    api = APIS[provider]
    assert api.invoke(server.url).retries == 0
    assert server.wait_closed(1)
    second = api.invoke(server.url)
    assert (second.text, second.retries, server.connections) == (ANSWER, 0, 2)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_keep_alive_connection_dropped_as_it_is_reused_is_retried_on_a_new_one(server: WireServer,
                                                                                provider: str) -> None:
    server.script(reply(200, body_for(provider)), drop(), reply(200, body_for(provider)))
    api = APIS[provider]
    assert api.invoke(server.url).retries == 0
    second = api.invoke(server.url)
    assert (second.text, second.retries, server.connections) == (ANSWER, 1, 2)
    assert [r.connection for r in server.requests] == [0, 0, 1]


# ---------------------------------------------------------------- the deadline


@pytest.mark.parametrize("deadline", [0.2, 0.4, 0.8])
@pytest.mark.parametrize("part", ["headers", "body"])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_reply_dripping_past_the_deadline_is_cut_at_it(server: WireServer, provider: str, part: str,
                                                         deadline: float) -> None:
    drip = drip_headers if part == "headers" else drip_body
    server.script(drip(body_for(provider), 0.02))
    started = time.monotonic()
    error = failure(APIS[provider], server.url, timeout_seconds=deadline, max_retries=0)
    took = time.monotonic() - started
    assert str(error).endswith(f"no response within {deadline:.2f}s (a deadline for the whole reply, body included)"), \
        str(error)
    # Never early; late by no more than a busy machine's scheduling, and well before the drip would end
    # (the headers alone take 1.5 s): a timeout per read, which every byte renews, would wait for it all.
    assert deadline * 0.9 <= took <= deadline + 0.4, f"cut after {took:.3f}s for a {deadline}s deadline"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_connection_reset_mid_body_is_retried(server: WireServer, provider: str) -> None:
    api = APIS[provider]
    server.script(reset_mid_body(body_for(provider)), reply(200, body_for(provider)))
    response = api.invoke(server.url)
    assert (response.text, response.retries, len(server.requests)) == (ANSWER, 1, 2)
    server.script(reset_mid_body(body_for(provider)))
    error = failure(api, server.url, max_retries=0)
    assert "connection" in str(error) and error.retries == 0, str(error)


# ---------------------------------------------------------------- redirects


@pytest.mark.parametrize("where", ["other-host", "same-host"])
@pytest.mark.parametrize("status", [301, 302, 307, 308])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_redirect_is_an_error_and_nothing_is_sent_where_it_points(
        server: WireServer, elsewhere: WireServer, provider: str, status: int, where: str) -> None:
    to = elsewhere if where == "other-host" else server
    server.script(redirect(status, f"{to.url}/moved/here"))
    error = failure(APIS[provider], server.url, max_retries=3)
    assert f"HTTP {status}" in str(error) and f"redirect to {to.authority}" in str(error), str(error)
    assert (error.status, error.retries) == (status, 0)
    assert [r.path for r in server.requests] == [server.requests[0].path]  # the call itself, once; never /moved
    assert server.requests[0].headers[APIS[provider].key_header].endswith(SECRET)
    assert (elsewhere.requests, elsewhere.connections) == ([], 0)  # no key, no prompt, not even a connection


# ---------------------------------------------------------------- what the reply says


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_200_that_is_not_json_is_an_error_and_not_retried(server: WireServer, provider: str) -> None:
    server.default(reply(200, b"<html>down for maintenance</html>", content_type="text/html"))
    error = failure(APIS[provider], server.url)
    assert "expected a JSON reply" in str(error) and "down for maintenance" in str(error), str(error)
    assert len(server.requests) == 1


CLOSINGS = {"close-with-length": {"close": True}, "http10": {"version": "HTTP/1.0"}}


@pytest.mark.parametrize("closing", CLOSINGS)
@pytest.mark.parametrize("status", [429, 503])
@pytest.mark.parametrize("caller", CALLERS)
def test_a_refusal_on_a_closing_connection_is_retried_as_on_keep_alive(server: WireServer, caller: str, status: int,
                                                                       closing: str) -> None:
    server.script(reply(status, error_for(caller, status), headers={"Retry-After": "0"}, **CLOSINGS[closing]),
                  reply(200, body_for(caller), **CLOSINGS[closing]))
    answered(caller, server.url)
    assert len(server.requests) == 2


@pytest.mark.parametrize("closing", CLOSINGS)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_400_on_a_closing_connection_keeps_the_providers_message(server: WireServer, provider: str,
                                                                   closing: str) -> None:
    server.default(reply(400, error_for(provider, 400, "model 'gpt-9' does not exist"), **CLOSINGS[closing]))
    error = failure(APIS[provider], server.url)
    assert "HTTP 400" in str(error) and "model 'gpt-9' does not exist" in str(error), str(error)
    assert (error.status, error.retries, len(server.requests)) == (400, 0, 1)


# ---------------------------------------------------------------- TLS and proxies


@pytest.mark.parametrize("provider", PROVIDERS)
def test_tls_with_a_self_signed_certificate_fails_once_and_says_why(
        certificate: tuple[Path, Path], provider: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):
        monkeypatch.delenv(name, raising=False)
    with WireServer(tls=server_context(*certificate)) as tls:
        tls.default(reply(200, body_for(provider)))
        error = failure(APIS[provider], tls.url, max_retries=3)
        assert tls.wait_closed(1)
        assert "certificate verify failed: self-signed certificate" in str(error), str(error)
        assert "REQUESTS_CA_BUNDLE" in str(error) and error.retries == 0
        assert (tls.requests, tls.connections, tls.handshake_failures) == ([], 1, 1)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_tls_with_a_self_signed_certificate_in_requests_ca_bundle_is_answered(
        certificate: tuple[Path, Path], provider: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(certificate[0]))
    with WireServer(tls=server_context(*certificate)) as tls:
        tls.default(reply(200, body_for(provider)))
        answered(provider, tls.url)
        assert len(tls.requests) == 1


def _proxy_environment(monkeypatch: pytest.MonkeyPatch, proxy: str, no_proxy: str) -> None:
    for name in ("https_proxy", "HTTPS_PROXY"):
        monkeypatch.setenv(name, proxy)
    for name in ("no_proxy", "NO_PROXY"):
        monkeypatch.setenv(name, no_proxy)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_https_proxy_carries_the_call_unless_no_proxy_names_the_host(
        certificate: tuple[Path, Path], provider: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(certificate[0]))
    with WireServer("127.0.0.2", tls=server_context(*certificate)) as tls, ConnectProxy() as proxy:
        tls.default(reply(200, body_for(provider)))
        _proxy_environment(monkeypatch, proxy.url, "localhost,127.0.0.1")
        answered(provider, tls.url)
        assert proxy.tunnels == [tls.authority]
        _proxy_environment(monkeypatch, proxy.url, "localhost,127.0.0.1,127.0.0.2")
        answered(provider, tls.url)
        assert proxy.tunnels == [tls.authority] and len(tls.requests) == 2
        # Through the proxy the deadline still holds: the tunnel's socket is watched like a direct one.
        _proxy_environment(monkeypatch, proxy.url, "localhost")
        tls.script(drip_headers(body_for(provider), 0.02))
        started = time.monotonic()
        error = failure(APIS[provider], tls.url, timeout_seconds=0.5, max_retries=0)
        took = time.monotonic() - started
        assert "no response within 0.50s" in str(error) and 0.45 <= took <= 0.65, (str(error), took)
        # It went through the proxy: the tunnel the first call opened, kept alive (one CONNECT in all).
        assert proxy.tunnels == [tls.authority] and tls.requests[2].connection == tls.requests[0].connection


# ---------------------------------------------------------------- through the CLI


VERDICT = json.dumps({"score": 0.9, "hits": ["names Paris"], "misses": [], "reasoning": "Correct."})


@pytest.mark.parametrize("closing", ["keep-alive", "http10"])
def test_an_llm_judge_behind_an_http10_server_judges_and_retries_as_behind_keep_alive(
        tmp_path: Path, server: WireServer, closing: str) -> None:
    framing: dict[str, Any] = {"version": "HTTP/1.0"} if closing == "http10" else {}
    server.script(reply(429, error_for("openai", 429, "slow down"), headers={"Retry-After": "0"}, **framing),
                  reply(200, FakeReply.openai(VERDICT).body, **framing))
    targets = [{"name": "default", "provider": "mock", "response": "Paris is the capital of France.",
                "judge_target": "judge"},
               {"name": "judge", "provider": "openai", "base_url": server.url, "api_key": "${{ JUDGE_KEY }}",
                "model": "gpt-test", **RETRY_FAST}]
    project = make_repo(tmp_path / "repo", yaml.safe_dump({"targets": targets}, sort_keys=False))
    write(project / "evals/capital.eval.yaml",
          "tests:\n  - id: capital\n    criteria: Names Paris\n    input: Capital of France?\n"
          "    assert:\n      - {name: quality, type: llm_judge}\n")
    done = run_cli("run", "evals", "--no-cache", cwd=project, env={"JUDGE_KEY": SECRET, **_no_proxy()})
    [row] = read_rows(project / RESULTS)
    assert (done.returncode, row["verdict"], row["score"]) == (0, "pass", 0.9), done.stdout + done.stderr
    assert "target 'judge': 2 calls, 1 answered 429" in done.stdout + done.stderr, done.stdout + done.stderr
    assert [r.headers["authorization"] for r in server.requests] == [f"Bearer {SECRET}"] * 2


def _no_proxy() -> dict[str, str]:
    return {name: os.environ.get(name, "127.0.0.1,localhost") for name in ("NO_PROXY", "no_proxy")}
