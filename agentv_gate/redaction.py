"""Secret values out of every message: one rule for what is a secret, one function that hides it.

It sits at the bottom of the layers because every stage that turns text into output (a provider's
error, a judge's reply, a report, the response cache) must scrub it, and none of them may depend on
targets to do so.

A secret is registered once, when the target that holds it is resolved (`register_secrets`), and
from then on `redact` hides it in every text of the process, whatever path the text took: an
error message, a successful answer that echoes the key, a judge's stdout, a cache entry. What is
hidden is the value as written and the forms a server or a script commonly turns it into:
base64 (standard and URL-safe, also where the secret sits inside a longer encoded value, such as
HTTP Basic `user:password`), and URL percent-encoding (`quote` and `quote_plus`, `%2F` or `%2f`).
A secret cut into pieces by terminal escape sequences (an agent's coloured output) is hidden too: every report
strips those sequences (report/text.py `clean`), which would join the pieces again. Other
transformations (hex, reversed, split over two strings, hashed) are not recognised.
"""

from __future__ import annotations

import base64
import re
import threading
import urllib.parse
from collections.abc import Iterable, Mapping
from typing import Any

_SECRET_SUFFIXES = ("key", "token", "secret", "password", "passwd", "credential", "credentials")
MIN_SECRET_CHARS = 4
"""Shorter values are not treated as secrets: hiding every `abc` in a report would hide the report."""
_MIN_ENCODED_CHARS = 8
"""An encoded form shorter than this is too likely to occur by chance to be hidden everywhere."""

ANSI_ESCAPE = re.compile(
    r"""
      \x1b\[[0-?]*[\x20-/]*[@-~]              # CSI: colours, cursor moves, erase line
    | \x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?      # OSC: window titles, hyperlinks (BEL or ST ends it)
    | \x1b[PX^_][^\x1b]*(?:\x1b\\)?           # DCS / SOS / PM / APC strings
    | \x1b[\x20-/]*[0-~]                      # other two-or-more-byte escapes (charset, keypad, reset)
    | \x9b[0-?]*[\x20-/]*[@-~]                # 8-bit CSI
    | \x1b                                    # a lone ESC left over
    """,
    re.VERBOSE,
)
"""Terminal escape sequences, as the reports remove them (here, at the bottom, so `redact` removes the
same ones and a secret they split is found)."""

_registered: set[str] = set()
_forms: tuple[str, ...] = ()
_lock = threading.Lock()


def _base64_cores(secret: bytes) -> set[str]:
    """The part of any base64 text that encodes `secret`, at each of the three byte alignments.

    base64 works on 3-byte groups, so the secret's encoding inside a longer value depends on
    where it starts; the groups wholly made of secret bytes encode the same way every time.
    """
    cores: set[str] = set()
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        cores.add(encode(secret).decode("ascii"))  # the secret alone, padding included
        for shift in range(3):
            encoded = encode(b"\0" * shift + secret).decode("ascii").rstrip("=")
            head = 4 if shift else 0
            tail = (shift + len(secret)) % 3
            core = encoded[head: len(encoded) - (tail + 1 if tail else 0)]
            if len(core) >= _MIN_ENCODED_CHARS:
                cores.add(core)
    return cores


_PERCENT_HEX = re.compile("%[0-9A-F]{2}")
"""An escape `quote` writes in capitals; many other encoders write `%2f` for it."""


def secret_forms(secret: str) -> set[str]:
    """`secret` and the encodings of it that `redact` also hides."""
    if len(secret) < MIN_SECRET_CHARS:
        return set()
    encoded = {urllib.parse.quote(secret, safe=""), urllib.parse.quote_plus(secret)}
    forms = {secret, *encoded, *(_PERCENT_HEX.sub(lambda hexed: hexed.group(0).lower(), e) for e in encoded)}
    if len(secret) >= 6:
        forms |= _base64_cores(secret.encode("utf-8"))
    return {f for f in forms if f == secret or len(f) >= _MIN_ENCODED_CHARS}


def register_secrets(secrets: Iterable[str]) -> None:
    """Remember `secrets` for the rest of the process: every later `redact` hides them."""
    global _forms
    new = {s for s in secrets if isinstance(s, str) and len(s) >= MIN_SECRET_CHARS} - _registered
    if not new:
        return
    with _lock:
        _registered.update(new)
        forms = set(_forms)
        for secret in new:
            forms |= secret_forms(secret)
        _forms = tuple(sorted(forms, key=len, reverse=True))


ENVIRONMENT_SECRET_MIN_CHARS = 12
"""A variable the targets file does not name counts as a credential only from this length: API keys
and tokens are long, while `USE_TOKEN=true` is a setting, and hiding every "true" would hide the report."""


def environment_secrets(env: Mapping[str, str]) -> list[str]:
    """The values of the environment's variables named like secrets (`GITHUB_TOKEN`, `OPENAI_API_KEY`).

    An agent and its judges inherit the step's environment, so they can print a key that no targets
    file names; registering these hides it in every output as a configured secret is hidden."""
    return [value for name, value in env.items()
            if is_secret_field(name) and len(value.strip()) >= ENVIRONMENT_SECRET_MIN_CHARS]


def forget_secrets() -> None:
    """Clear the registry (tests, or an embedder starting an unrelated run in the same process)."""
    global _forms
    with _lock:
        _registered.clear()
        _forms = ()


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with every secret (given here or registered) and its encoded forms replaced by `***`.

    Longest first, so a secret that contains another is hidden whole.
    """
    extra = {s for s in secrets if s and len(s) >= MIN_SECRET_CHARS} - _registered
    forms: Iterable[str] = _forms
    if extra:
        every = set(_forms)
        for secret in extra:
            every |= secret_forms(secret)
        forms = sorted(every, key=len, reverse=True)
    for form in forms:
        if form in text:
            text = text.replace(form, "***")
    if "\x1b" in text or "\x9b" in text:
        # The reports strip escape sequences; a secret they cut into pieces would be whole there.
        # Only then is the text given without them (results.jsonl otherwise keeps them as they came).
        stripped = strip_ansi(text)
        if any(form in stripped for form in forms):
            return redact(stripped, secrets)
    return text


def strip_ansi(text: str) -> str:
    """Remove terminal escape sequences (colours, cursor movement, OSC hyperlinks and titles)."""
    return ANSI_ESCAPE.sub("", text)


def redact_tree(value: Any) -> Any:
    """`value` (JSON-like: dicts, lists, strings, numbers) with `redact` applied to every string,
    keys included; anything else is returned as it is."""
    if not _forms:
        return value
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact_tree(k): redact_tree(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_tree(v) for v in value]
    return value


def has_secrets() -> bool:
    """True once any secret was registered in this process."""
    return bool(_forms)


def is_secret_field(key: str) -> bool:
    """`api_key`, `apiKey`, `github_token`, `client_secret`, ...; not `max_tokens` or `key_path`."""
    return key.lower().endswith(_SECRET_SUFFIXES)
