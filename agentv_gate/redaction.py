"""Secret values out of every message: one rule for what is a secret, one function that hides it.

It sits at the bottom of the layers because every stage that turns text into output (a provider's
error, a judge's reply, a report) must scrub it, and none of them may depend on targets to do so.
"""

from __future__ import annotations

from collections.abc import Iterable

_SECRET_SUFFIXES = ("key", "token", "secret", "password", "passwd", "credential", "credentials")


def redact(text: str, secrets: Iterable[str]) -> str:
    """`text` with every secret value replaced by `***` (longest first, so overlaps are covered)."""
    for secret in sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


def is_secret_field(key: str) -> bool:
    """`api_key`, `apiKey`, `github_token`, `client_secret`, ...; not `max_tokens` or `key_path`."""
    return key.lower().endswith(_SECRET_SUFFIXES)
