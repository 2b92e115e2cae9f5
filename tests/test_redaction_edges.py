"""Redaction at its edges: secrets that contain one another, the length below which a value is not a
secret, and the variables the environment's secrets are read from."""

from __future__ import annotations

import base64
import urllib.parse
from collections.abc import Iterator

import pytest

from agentv_gate.redaction import (
    MIN_SECRET_CHARS,
    environment_secrets,
    forget_secrets,
    has_secrets,
    redact,
    redact_tree,
    register_secrets,
    secret_forms,
)

SHORT = "sk-proj-7Qx2"
LONG = SHORT + "-tail9Zk4Lm"
"""A key that contains another registered key: replacing the short one first would leave `***-tail9Zk4Lm`."""


@pytest.fixture()
def registry() -> Iterator[None]:
    forget_secrets()
    yield
    forget_secrets()


@pytest.mark.parametrize("order", [(SHORT, LONG), (LONG, SHORT)])
def test_a_registered_secret_that_contains_another_is_hidden_whole(registry: None, order: tuple[str, str]) -> None:
    for secret in order:
        register_secrets([secret])
    assert redact(f"key={LONG} other={SHORT}") == "key=*** other=***"
    encoded = base64.b64encode(LONG.encode()).decode()
    assert redact(f"auth {encoded}") == "auth ***"


def test_secrets_given_with_the_call_that_contain_a_registered_one_are_hidden_whole(registry: None) -> None:
    register_secrets([SHORT])
    assert redact(f"key={LONG}", [LONG]) == "key=***"
    forget_secrets()
    register_secrets([LONG])
    assert redact(f"key={LONG} and {SHORT}", [SHORT]) == "key=*** and ***"


@pytest.mark.parametrize(("secret", "hidden"), [("a" * (MIN_SECRET_CHARS - 1), False), ("b" * MIN_SECRET_CHARS, True),
                                                ("c" * (MIN_SECRET_CHARS + 1), True)])
def test_a_value_is_a_secret_from_four_characters(registry: None, secret: str, hidden: bool) -> None:
    assert (redact(f"[{secret}]", [secret]) == "[***]") is hidden  # given with the call
    register_secrets([secret])
    assert has_secrets() is hidden
    assert (redact(f"[{secret}]") == "[***]") is hidden


def test_encoded_forms_start_at_six_characters_and_are_never_shorter_than_eight() -> None:
    assert secret_forms("abcde") == {"abcde"}  # five: the value, no base64 forms
    six = secret_forms("abcdef")
    assert "abcdef" in six and base64.b64encode(b"abcdef").decode() in six
    assert all(form == "abcdef" or len(form) >= 8 for form in six)
    assert "a%2Fb%2F" in secret_forms("a/b/") and "a%2fb%2f" in secret_forms("a/b/")
    assert secret_forms("a/cd") == {"a/cd"}  # its encoded form 'a%2Fcd' is 6 characters: too likely by chance


def test_redact_tree_hides_keys_and_values_at_every_depth_and_leaves_the_rest(registry: None) -> None:
    tree = {"k": [LONG, {LONG: 3}], "n": 1.5, "t": (LONG,), "none": None}
    assert redact_tree(tree) == tree  # nothing registered: untouched
    register_secrets([LONG])
    assert redact_tree(tree) == {"k": ["***", {"***": 3}], "n": 1.5, "t": ["***"], "none": None}


@pytest.mark.parametrize(("value", "kept"), [("x" * 11, False), ("y" * 12, True), ("  " + "z" * 11 + "  ", False)])
def test_an_environment_secret_counts_from_twelve_characters(value: str, kept: bool) -> None:
    assert (environment_secrets({"OPENAI_API_KEY": value}) == [value]) is kept


def test_only_variables_named_like_secrets_are_read() -> None:
    value = "v" * 20
    env = {"GITHUB_TOKEN": value, "DB_PASSWORD": value, "client_secret": value, "MAX_TOKENS": value,
           "KEY_PATH": value, "Api_Key": value}
    assert environment_secrets(env) == [value] * 4


def test_a_secret_split_by_colour_codes_is_hidden_and_clean_text_keeps_its_escapes(registry: None) -> None:
    register_secrets([LONG])
    assert redact(f"\x1b[31m{LONG[:5]}\x1b[0m{LONG[5:]}!") == "***!"
    assert redact("\x1b[31mred\x1b[0m") == "\x1b[31mred\x1b[0m"


@pytest.mark.parametrize("suffix", ["", "@h", "@ho", "@host"])
@pytest.mark.parametrize("prefix", ["", "u:", "us:", "use:", "user:"])
def test_a_secret_inside_a_longer_base64_value_is_found_at_every_alignment(registry: None, prefix: str,
                                                                          suffix: str) -> None:
    """HTTP Basic `user:password`, or the key inside an encoded JSON: the secret's bytes start and end
    0, 1 or 2 bytes into a base64 group."""
    register_secrets([LONG])
    encoded = base64.b64encode(f"{prefix}{LONG}{suffix}".encode()).decode()
    redacted = redact(f"Authorization: Basic {encoded}")
    assert "***" in redacted
    assert len(redacted) < len(f"Authorization: Basic {encoded}") - 8


def test_a_secret_split_by_an_8_bit_control_sequence_is_hidden_too(registry: None) -> None:
    register_secrets([LONG])
    assert redact(f"\x9b31m{LONG[:5]}\x9b0m{LONG[5:]}") == "***"


@pytest.mark.parametrize("prefix", ["", "u", "us", "use"])
def test_an_eight_character_secret_inside_base64_is_found_at_every_alignment(registry: None, prefix: str) -> None:
    """At one of the alignments an 8-byte secret's core is exactly 8 characters: the shortest kept."""
    secret = "k3y-Zq9w"
    register_secrets([secret])
    encoded = base64.b64encode(f"{prefix}{secret}@host".encode()).decode()
    assert "***" in redact(encoded)


def test_a_password_with_spaces_is_hidden_in_its_form_encoded_form_too(registry: None) -> None:
    """`quote_plus` writes a space as `+` (an HTML form, a query string): a form that only `quote`'s
    `%20` would miss, and the only secrets where the two encoders differ."""
    secret = "correct horse battery staple"
    register_secrets([secret])
    assert redact(f"POST body: user=me&password={urllib.parse.quote_plus(secret)}&x=1") == \
        "POST body: user=me&password=***&x=1"
    assert redact(f"GET /?password={urllib.parse.quote(secret, safe='')}") == "GET /?password=***"


def test_a_secret_whose_base64_has_plus_or_slash_is_hidden_in_the_url_safe_alphabet_too(registry: None) -> None:
    """URL-safe base64 (JWTs, signed URLs) writes `-` and `_` where the standard one writes `+` and `/`."""
    secret = "sk-???>>>-live~~"
    standard, urlsafe = (encode(secret.encode()).decode() for encode in (base64.b64encode, base64.urlsafe_b64encode))
    assert standard != urlsafe  # the alphabets differ for this secret, so each form is its own
    register_secrets([secret])
    for encoded in (standard, urlsafe):
        assert redact(f"token={encoded}.") == "token=***."
    inside = base64.urlsafe_b64encode(f"user:{secret}@host".encode()).decode()
    assert "***" in redact(inside) and len(redact(inside)) < len(inside) - 8
