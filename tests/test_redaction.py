"""What `redact` hides: a secret, and the encodings of it a server or a script commonly writes."""

from __future__ import annotations

import base64
import re
import urllib.parse

import pytest

from agentv_gate.redaction import redact

SECRET = "sk-live/9f3+Qx=Zt7"
"""A key holding the characters percent-encoding and base64 change."""


@pytest.mark.parametrize("written", [
    SECRET,
    urllib.parse.quote(SECRET, safe=""),
    urllib.parse.quote_plus(SECRET),
    # %2f rather than %2F, as JavaScript's encodeURIComponent does not but many other encoders do
    *(re.sub("%[0-9A-F]{2}", lambda hexed: hexed.group(0).lower(), encoded)
      for encoded in (urllib.parse.quote(SECRET, safe=""), urllib.parse.quote_plus(SECRET))),
    base64.b64encode(SECRET.encode()).decode(),
    base64.urlsafe_b64encode(SECRET.encode()).decode(),
])
def test_a_secret_and_its_common_encodings_are_hidden(written: str) -> None:
    assert redact(f"sent <{written}> to the server", [SECRET]) == "sent <***> to the server"
