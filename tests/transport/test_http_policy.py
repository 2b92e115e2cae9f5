"""The rules a user sets in targets.yaml for a misbehaving provider, and what the error then says.

`RetryPolicy`: the documented defaults, which statuses are retried, how a target's retry keys and
byte cap are read into it (`retry_policy_for`: units, camelCase) and bad values refused by name. `provider_error_detail` /
`ProviderErrorDetail.describe`: which fields of an OpenAI, Azure, Anthropic, Gemini or vLLM error
body are quoted, cleaned and cut, and how. Pure functions are called directly; the default number
of attempts is checked against a real loopback server.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from agentv_gate.errors import TargetsConfigError
from agentv_gate.targets.base import ProviderRequest
from agentv_gate.targets.http_settings import retry_policy_for
from agentv_gate.transport.http_policy import HttpCallError, ProviderErrorDetail, RetryPolicy, provider_error_detail
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply
from tests.helpers.targets import CHAT, SECRET, openai, target

# ---------------------------------------------------------------- defaults and retried statuses

DOCUMENTED_DEFAULTS: dict[str, Any] = {
    # README "Retries" and "Deadlines and size caps": max_retries 3, retry_initial_delay_ms 1000,
    # retry_backoff_factor 2, retry_max_delay_ms 30000, retry_jitter_ms 1000,
    # retry_max_total_seconds 300, retry_after_max_seconds 60, timeout_seconds 120,
    # max_response_bytes 8388608 (8 MiB); retry_status_codes unset: 408, 429 and 5xx.
    "max_attempts": 4,
    "max_total_seconds": 300.0,
    "request_timeout_seconds": 120.0,
    "initial_delay_seconds": 1.0,
    "backoff_factor": 2.0,
    "max_delay_seconds": 30.0,
    "jitter_seconds": 1.0,
    "max_retry_after_seconds": 60.0,
    "retry_status_codes": None,
    "max_response_bytes": 8_388_608,
}


def policy_of(settings: dict[str, Any]) -> RetryPolicy:
    """The policy of an openai target written with `settings`."""
    return retry_policy_for(target(provider="openai", model="m", **settings))


def test_a_target_without_retry_keys_gets_the_documented_defaults() -> None:
    assert dataclasses.asdict(policy_of({})) == DOCUMENTED_DEFAULTS
    assert dataclasses.asdict(RetryPolicy()) == DOCUMENTED_DEFAULTS
    # An unset environment variable (`${{ VAR }}` resolved to "") or a YAML null leaves the default.
    assert policy_of({"max_retries": "", "timeout_seconds": None}) == RetryPolicy()


def test_without_max_retries_a_failing_call_is_tried_four_times(fake_llm: FakeLLMServer) -> None:
    fake_llm.set_default(CHAT, FakeReply.error(503, "overloaded"))
    with pytest.raises(HttpCallError) as caught:
        openai(fake_llm).invoke(ProviderRequest(question="q"))
    assert len(fake_llm.requests) == 4
    assert caught.value.retries == 3 and caught.value.status == 503
    assert "failed after 4 attempt(s)" in str(caught.value)


@pytest.mark.parametrize(
    ("status", "retried"),
    [
        (408, True), (429, True), (500, True), (502, True), (503, True), (598, True), (599, True),
        (400, False), (401, False), (404, False), (409, False), (428, False), (430, False), (499, False),
        (600, False),
    ],
)
def test_by_default_408_429_and_every_5xx_are_retried(status: int, retried: bool) -> None:
    assert RetryPolicy().is_retryable_status(status) is retried


# ---------------------------------------------------------------- reading the retry keys


@pytest.mark.parametrize(
    ("settings", "attr", "expected"),
    [
        ({"max_retries": 0}, "max_attempts", 1),
        ({"maxRetries": 2}, "max_attempts", 3),
        ({"max_retries": "5"}, "max_attempts", 6),
        ({"retry_initial_delay_ms": 250}, "initial_delay_seconds", 0.25),
        ({"retryInitialDelayMs": 0}, "initial_delay_seconds", 0.0),
        ({"retry_max_delay_ms": 4000}, "max_delay_seconds", 4.0),
        ({"retryMaxDelayMs": 1500}, "max_delay_seconds", 1.5),
        ({"retry_backoff_factor": 1.5}, "backoff_factor", 1.5),
        ({"retryBackoffFactor": 3}, "backoff_factor", 3.0),
        ({"retry_jitter_ms": 500}, "jitter_seconds", 0.5),
        ({"retryJitterMs": 20}, "jitter_seconds", 0.02),
        ({"retry_max_total_seconds": 45}, "max_total_seconds", 45.0),
        ({"retryMaxTotalSeconds": 0.5}, "max_total_seconds", 0.5),
        ({"retry_after_max_seconds": 7}, "max_retry_after_seconds", 7.0),
        ({"retryAfterMaxSeconds": 0.25}, "max_retry_after_seconds", 0.25),
        ({"timeout_seconds": 1}, "request_timeout_seconds", 1.0),
        ({"timeoutSeconds": 0.5}, "request_timeout_seconds", 0.5),
        ({"request_timeout_seconds": 30}, "request_timeout_seconds", 30.0),
        ({"max_response_bytes": 1}, "max_response_bytes", 1),
        ({"max_response_bytes": 1024}, "max_response_bytes", 1024),
        ({"maxResponseBytes": 4096}, "max_response_bytes", 4096),
        ({"retry_status_codes": [409, 503]}, "retry_status_codes", frozenset({409, 503})),
        ({"retryStatusCodes": []}, "retry_status_codes", frozenset()),
    ],
)
def test_retry_keys_are_read_in_their_units(settings: dict[str, Any], attr: str, expected: object) -> None:
    policy = policy_of(settings)
    got = getattr(policy, attr)
    assert got == (pytest.approx(expected) if isinstance(expected, float) else expected)
    assert dataclasses.asdict(policy) == {**DOCUMENTED_DEFAULTS, attr: got}, "only that key changed"


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"max_retries": -1}, "max_retries must be a non-negative number, got -1"),
        ({"retry_max_delay_ms": -0.5}, "retry_max_delay_ms must be a non-negative number, got -0.5"),
        ({"max_retries": True}, "max_retries must be a non-negative number, got True"),
        ({"retry_backoff_factor": float("inf")}, "retry_backoff_factor must be a non-negative number, got inf"),
        ({"retryJitterMs": "nan"}, "retryJitterMs must be a non-negative number, got 'nan'"),
        ({"timeout_seconds": "soon"}, "timeout_seconds must be a number, got 'soon'"),
        ({"timeout_seconds": 0}, "timeout_seconds must be greater than zero"),
        ({"max_response_bytes": 0}, "max_response_bytes must be a whole number of bytes >= 1, got 0"),
        ({"max_response_bytes": -5}, "max_response_bytes must be a whole number of bytes >= 1, got -5"),
        ({"max_response_bytes": 1.5}, "max_response_bytes must be a whole number of bytes >= 1, got 1.5"),
        ({"maxResponseBytes": "8MB"}, "max_response_bytes must be a whole number of bytes >= 1, got '8MB'"),
        ({"max_response_bytes": True}, "max_response_bytes must be a whole number of bytes >= 1, got True"),
        ({"retry_status_codes": 429}, "retry_status_codes must be a list of HTTP status codes, got 429"),
        ({"retry_status_codes": ["500"]}, "retry_status_codes must be a list of HTTP status codes, got ['500']"),
        ({"retryStatusCodes": [True, 500]}, "retry_status_codes must be a list of HTTP status codes, got [True, 500]"),
    ],
)
def test_bad_retry_values_are_refused_naming_the_key(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(TargetsConfigError) as caught:
        policy_of(settings)
    assert str(caught.value) == f"openai target 't': {message}"


# ---------------------------------------------------------------- the provider's own error fields


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param(
            {"error": {"message": "Unsupported parameter: 'max_tokens'", "type": "invalid_request_error",
                       "param": "max_tokens", "code": "unsupported_parameter"}},
            ProviderErrorDetail(message="Unsupported parameter: 'max_tokens'", type="invalid_request_error",
                                code="unsupported_parameter", param="max_tokens"),
            id="openai",
        ),
        pytest.param(
            {"error": {"message": "The response was filtered", "code": "content_filter", "status": 400,
                       "innererror": {"code": "ResponsibleAIPolicyViolation"}}},
            ProviderErrorDetail(message="The response was filtered", type="400", code="content_filter",
                                inner_code="ResponsibleAIPolicyViolation"),
            id="azure-content-filter",
        ),
        pytest.param(
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            ProviderErrorDetail(message="Overloaded", type="overloaded_error"),
            id="anthropic",
        ),
        pytest.param(
            {"error": {"code": 400, "message": "API key not valid.", "status": "INVALID_ARGUMENT"}},
            ProviderErrorDetail(message="API key not valid.", type="INVALID_ARGUMENT", code="400"),
            id="gemini-status-is-the-type",
        ),
        pytest.param(
            {"error": "model 'llama' not found", "type": "NotFoundError", "code": 404},
            ProviderErrorDetail(message="model 'llama' not found", type="NotFoundError", code="404"),
            id="error-as-a-string",
        ),
        pytest.param(
            {"object": "error", "message": "max_tokens is too large", "type": "BadRequestError", "code": 400},
            ProviderErrorDetail(message="max_tokens is too large", type="BadRequestError", code="400"),
            id="vllm-top-level",
        ),
        pytest.param({"error": {"message": "boom"}}, ProviderErrorDetail(message="boom"), id="message-only"),
        pytest.param({"error": {"type": "server_error"}}, ProviderErrorDetail(type="server_error"), id="type-only"),
        pytest.param({"error": {"code": "rate_limit_exceeded"}}, ProviderErrorDetail(code="rate_limit_exceeded"),
                     id="code-only"),
        pytest.param(
            {"error": {"message": "  line one\n\n\tline two  ", "type": True, "code": False, "param": ["a"],
                       "innererror": {"code": {"nested": 1}}}},
            ProviderErrorDetail(message="line one line two"),
            id="whitespace-collapsed-non-text-fields-dropped",
        ),
        pytest.param({"error": {"message": 1.5, "code": 0}}, ProviderErrorDetail(message="1.5", code="0"),
                     id="numbers-as-text"),
    ],
)
def test_provider_error_fields_are_read(body: dict[str, Any], expected: ProviderErrorDetail) -> None:
    assert provider_error_detail(body) == expected


@pytest.mark.parametrize(
    "body",
    [
        None, "Internal Server Error", ["error"], 42,
        {}, {"error": None}, {"detail": "Not Found"}, {"message": 500},
        {"error": {"param": "temperature"}},
        {"error": {"message": "", "type": "   ", "code": None}},
        {"error": {"message": True, "type": False}},
    ],
)
def test_a_body_without_a_provider_error_gives_no_detail(body: Any) -> None:
    assert provider_error_detail(body) is None


@pytest.mark.parametrize(
    ("length", "shown"),
    [(1, "x"), (299, "x" * 299), (300, "x" * 300), (301, "x" * 300 + "..."), (5000, "x" * 300 + "...")],
)
def test_a_long_provider_message_is_cut_at_300_characters(length: int, shown: str) -> None:
    detail = provider_error_detail({"error": {"message": "x" * length, "code": "y" * length}})
    assert detail is not None and (detail.message, detail.code) == (shown, shown.replace("x", "y"))


def test_secrets_in_a_provider_error_are_hidden() -> None:
    body = {"error": {"message": f"Incorrect API key provided: {SECRET}.", "type": "invalid_request_error",
                      "code": f"key_{SECRET}", "param": SECRET}}
    detail = provider_error_detail(body, ["", SECRET])
    assert detail == ProviderErrorDetail(message="Incorrect API key provided: ***.", type="invalid_request_error",
                                         code="key_***", param="***")


@pytest.mark.parametrize(
    ("detail", "described"),
    [
        (ProviderErrorDetail(message="Unsupported parameter: 'max_tokens'", type="invalid_request_error",
                             code="unsupported_parameter", param="max_tokens"),
         "provider error (type invalid_request_error, code unsupported_parameter, param max_tokens): "
         "\"Unsupported parameter: 'max_tokens'\""),
        (ProviderErrorDetail(message="filtered", code="content_filter", inner_code="ResponsibleAIPolicyViolation"),
         'provider error (code content_filter, inner code ResponsibleAIPolicyViolation): "filtered"'),
        (ProviderErrorDetail(type="server_error"), "provider error (type server_error)"),
        (ProviderErrorDetail(message='say "hi"'), '"say \\"hi\\""'),
        (ProviderErrorDetail(message="Modèle « gpt-x » introuvable", code="model_not_found"),
         'provider error (code model_not_found): "Modèle « gpt-x » introuvable"'),
        (ProviderErrorDetail(message="模型不存在"), '"模型不存在"'),
        (ProviderErrorDetail(), ""),
    ],
)
def test_describe_quotes_the_message_after_the_labels(detail: ProviderErrorDetail, described: str) -> None:
    assert detail.describe() == described


def test_the_provider_message_is_what_the_user_reads(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(CHAT, FakeReply.json(
        {"error": {"message": "Le modèle « gpt-x » n'existe pas", "type": "invalid_request_error",
                   "code": "model_not_found"}}, status=404))
    with pytest.raises(HttpCallError) as caught:
        openai(fake_llm).invoke(ProviderRequest(question="q"))
    assert str(caught.value).endswith(
        ": provider error (type invalid_request_error, code model_not_found): \"Le modèle « gpt-x » n'existe pas\"")
    assert caught.value.detail is not None and caught.value.detail.code == "model_not_found"


# ---------------------------------------------------------------- a secret at the 300-character cut


@pytest.mark.parametrize("start", [276, 290, 296])
def test_a_secret_straddling_the_cut_is_hidden_whole(start: int) -> None:
    # Cut first and scrubbed after, the secret's head (up to 24 of its 25 characters) stayed visible.
    detail = provider_error_detail({"error": {"message": "x" * start + SECRET + " was refused"}}, [SECRET])
    assert detail is not None and detail.message is not None
    assert SECRET[:4] not in detail.message and detail.message.startswith("x" * start + "***")


@pytest.mark.parametrize(
    ("reply", "said"),
    [
        (FakeReply(status=401, body=("y" * 290 + SECRET + " is not a valid key").encode()), "HTTP 401"),
        (FakeReply(status=200, body=("z" * 290 + SECRET + " <html>").encode()), "expected a JSON reply"),
    ],
    ids=["error-reply-in-plain-text", "reply-that-is-not-json"],
)
def test_a_secret_straddling_the_cut_of_a_reply_is_hidden_whole(fake_llm: FakeLLMServer, reply: FakeReply,
                                                               said: str) -> None:
    fake_llm.enqueue(CHAT, reply)
    with pytest.raises(HttpCallError) as caught:
        openai(fake_llm).invoke(ProviderRequest(question="q"))
    assert said in str(caught.value) and SECRET[:4] not in str(caught.value) and "***" in str(caught.value)
