"""The rules one HTTP call follows, as typed values: how often and how long it is retried, its
deadline, its byte cap. Only the standard library: `targets/` reads them from targets.yaml
(`targets/http_settings.py`) without importing the HTTP stack, and transport never reads a
targets.yaml key."""

from __future__ import annotations

from dataclasses import dataclass

from ..base.defaults import DEFAULT_MAX_RESPONSE_BYTES


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
    """Bound on one attempt: connect, send, headers and the whole body (a watchdog's deadline)."""
    initial_delay_seconds: float = 1.0
    backoff_factor: float = 2.0
    max_delay_seconds: float = 30.0
    jitter_seconds: float = 1.0
    max_retry_after_seconds: float = 60.0
    """A server asking for a longer wait than this gets this much."""
    retry_status_codes: frozenset[int] | None = None
    """None means 408, 429 and every 5xx."""
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    """A reply body (decompressed) larger than this is an error, never read whole."""

    def is_retryable_status(self, status: int) -> bool:
        if self.retry_status_codes is not None:
            return status in self.retry_status_codes
        return _default_retryable(status)
