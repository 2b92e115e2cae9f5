"""A target's HTTP settings read from targets.yaml into the typed policies transport takes:
`RetryPolicy` (retries, deadlines, the byte cap) and `Limits` (requests and tokens per minute).

Parsing lives here, with the other targets.yaml readers, so transport never reads a targets.yaml
key. Only the standard library below this module: a `cli` target's http healthcheck reads its
policy without importing the HTTP stack.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..base.defaults import MAX_DURATION_MS
from ..errors import TargetsConfigError
from ..transport.limiter import Limits, RateLimiter
from ..transport.policy import RetryPolicy
from .config import TargetConfig, response_byte_cap
from .settings import RetryPolicySettings

_SECONDS = (
    ("initial_delay_seconds", "retry_initial_delay_ms", 0.001),
    ("max_delay_seconds", "retry_max_delay_ms", 0.001),
    ("backoff_factor", "retry_backoff_factor", 1.0),
    ("jitter_seconds", "retry_jitter_ms", 0.001),
    ("max_total_seconds", "retry_max_total_seconds", 1.0),
    ("max_retry_after_seconds", "retry_after_max_seconds", 1.0),
    ("request_timeout_seconds", "request_timeout_seconds", 1.0),
)
"""RetryPolicy field <- its setting (`RetryPolicySettings`, with its spellings) and the unit it is written in."""


def _number(values: RetryPolicySettings, field: str) -> float | None:
    raw = getattr(values, field)
    if raw is None:
        return None
    key = values.key_of(field)
    try:
        value = float(raw)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{key} must be a number, got {raw!r}") from None
    if isinstance(raw, bool) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{key} must be a non-negative number, got {raw!r}")
    return value


def retry_policy_from_settings(settings: Mapping[str, Any], base: RetryPolicy | None = None) -> RetryPolicy:
    """Read a target's retry keys: AgentV's names plus our bounds on time.

    AgentV: `max_retries`, `retry_initial_delay_ms`, `retry_max_delay_ms`, `retry_backoff_factor`,
    `retry_status_codes` (camelCase accepted too). Ours: `retry_max_total_seconds`,
    `retry_jitter_ms`, `retry_after_max_seconds`, and `timeout_seconds` (or
    `request_timeout_seconds`) for one attempt. An unset value (YAML null, an empty environment
    variable) keeps the default. Bad values raise ValueError naming the key.
    """
    changes: dict[str, Any] = {}
    values = RetryPolicySettings.read(settings)
    retries = _number(values, "max_retries")
    if retries is not None:
        changes["max_attempts"] = int(retries) + 1
    for attr, field, scale in _SECONDS:
        value = _number(values, field)
        if value is not None and attr != "backoff_factor" and value * (1000 * scale) > MAX_DURATION_MS:
            raise ValueError(f"{field} {value:g} is longer than any run waits (at most {MAX_DURATION_MS} ms)")
        if value is not None:
            changes[attr] = value * scale
    if changes.get("request_timeout_seconds") == 0:
        raise ValueError("timeout_seconds must be greater than zero")
    codes = values.retry_status_codes
    if codes is not None:
        if not isinstance(codes, list) or not all(isinstance(c, int) and not isinstance(c, bool) for c in codes):
            raise ValueError(f"retry_status_codes must be a list of HTTP status codes, got {codes!r}")
        changes["retry_status_codes"] = frozenset(codes)
    return replace(base or RetryPolicy(), **changes)


def limits_from_settings(settings: Mapping[str, Any], workers: int | None = None) -> Limits:
    """`max_rpm` and `max_tpm` (numbers > 0); bad values raise ValueError naming the key."""
    values: dict[str, float | None] = {}
    for key in ("max_rpm", "max_tpm"):
        raw = settings.get(key)
        if raw is None or raw == "":
            values[key] = None
            continue
        try:
            value = float(raw)
        except (TypeError, ValueError):
            raise ValueError(f"{key} must be a number > 0, got {raw!r}") from None
        if isinstance(raw, bool) or not math.isfinite(value) or value <= 0:
            raise ValueError(f"{key} must be a number > 0, got {raw!r}")
        values[key] = value
    return Limits(workers=workers, max_rpm=values["max_rpm"], max_tpm=values["max_tpm"])


def retry_policy_for(target: TargetConfig) -> RetryPolicy:
    """The target's whole policy: its retry keys, and its byte cap as `response_byte_cap` reads it."""
    try:
        policy = retry_policy_from_settings(target.settings)
    except ValueError as exc:
        raise TargetsConfigError(f"{target.describe()}: {exc}") from None
    return replace(policy, max_response_bytes=response_byte_cap(target))


def limiter_for(target: TargetConfig, policy: RetryPolicy) -> RateLimiter:
    """The target's one limiter: `workers`, `max_rpm`, `max_tpm`, and what its replies teach it."""
    try:
        limits = limits_from_settings(target.settings, workers=target.workers)
    except ValueError as exc:
        where = f"{target.source_file}:{target.source_line}: " if target.source_file else ""
        raise TargetsConfigError(f"{where}{target.describe()}: {exc}") from None
    return RateLimiter(limits, max_pause_seconds=policy.max_retry_after_seconds,
                       backoff=(policy.initial_delay_seconds, policy.backoff_factor, policy.max_delay_seconds))
