"""What a failed HTTP exchange means, read from the exception's type in one table (as httpx maps
httpcore's exceptions), never from its message text: whether another attempt may help, and what to
tell the user.

requests wraps urllib3's errors, which wrap the socket's and the TLS library's, so a row matches when
its type is anywhere in that chain (`__cause__`, `__context__`, a wrapped exception in `args` or
urllib3's `reason`), and the first row that matches wins: a TLS failure whose cause was a timeout is
a timeout.
"""

from __future__ import annotations

import http.client
import os
import socket
import ssl
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import requests
import urllib3.exceptions


@dataclass(frozen=True)
class Failure:
    """A failed attempt, classified."""

    retry: bool
    """Worth another attempt (a network failure), or failed for good (a refusal that will not change)."""
    message: str


def chain(exc: BaseException) -> Iterator[BaseException]:
    """`exc` and every exception it wraps, outermost first, each once."""
    seen: set[int] = set()
    pending = [exc]
    while pending:
        current = pending.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        wrapped = [current.__cause__, current.__context__, getattr(current, "reason", None), *current.args]
        pending.extend(e for e in wrapped if isinstance(e, BaseException))


def _first(exc: BaseException, kind: type[BaseException]) -> BaseException | None:
    return next((e for e in chain(exc) if isinstance(e, kind)), None)


def timeout_message(seconds: float) -> str:
    return f"no response within {seconds:.2f}s (a deadline for the whole reply, body included)"


def _tls(exc: BaseException, url: str) -> str:
    verify = _first(exc, ssl.SSLCertVerificationError)
    if isinstance(verify, ssl.SSLCertVerificationError) and verify.verify_message:
        what = f"certificate verify failed: {verify.verify_message}"
    else:
        cause = _first(exc, ssl.SSLError)
        what = (getattr(cause, "reason", None) or str(cause)) if cause is not None else str(exc)
    bundle = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE")
    hint = (f"checked against REQUESTS_CA_BUNDLE ({bundle})" if bundle else
            "checked against the default CAs: if the server's certificate is signed by your own CA, set "
            "REQUESTS_CA_BUNDLE to a PEM file holding it")
    return f"TLS failed: {what}; {hint}"


def _incomplete(exc: BaseException, url: str) -> str:
    cut = _first(exc, http.client.IncompleteRead)
    if isinstance(cut, http.client.IncompleteRead):
        read = cut.partial if isinstance(cut.partial, int) else len(cut.partial)
        more = f", {cut.expected} more expected" if cut.expected is not None else ""
        return f"the connection closed before the reply was complete ({read} bytes read{more})"
    return "the connection closed before the reply was complete"


_CONNECTION_CAUSES: tuple[tuple[type[BaseException], str], ...] = (
    (ConnectionRefusedError, "connection refused"),
    (ConnectionResetError, "connection reset by the server"),
    (socket.gaierror, "host name not resolved"),
    (http.client.RemoteDisconnected, "the server closed the connection without answering"),
    (ConnectionAbortedError, "connection aborted"),
)


def _malformed_head(exc: BaseException) -> str | None:
    """What was wrong with a reply's status line or headers, which requests reports as a ConnectionError.
    http.client raises its bare HTTPException for one thing only, more header lines than it reads."""
    if any(type(e) is http.client.HTTPException for e in chain(exc)):
        most = getattr(http.client, "_MAXHEADERS", 100) - 1  # it counts the blank line that ends them
        return f"the reply had more than {most} header lines, the most the gate's HTTP client reads (Python's limit)"
    if _first(exc, http.client.LineTooLong) is not None:
        most = getattr(http.client, "_MAXLINE", 65536)
        return f"the reply had a status or header line longer than {most} bytes, the most the gate's HTTP client reads"
    return None


class MalformedBody(Exception):
    """A reply body whose framing cannot be read (a chunked body with a negative chunk size), raised where
    the body is read: urllib3 lets Python's own ValueError through for it."""


def _chunk_size(exc: BaseException, url: str) -> str:
    bad = _first(exc, urllib3.exceptions.InvalidChunkLength)
    line = getattr(bad, "length", b"") if bad is not None else b""
    shown = line[:40].decode("latin-1") if isinstance(line, bytes) else ""
    return (f"the reply's chunked body had an invalid chunk size {shown.strip()!r} (a chunk size is a "
            "hexadecimal number of bytes)")


def _unreachable(exc: BaseException, url: str) -> str:
    malformed = _malformed_head(exc)
    if malformed is not None:
        return malformed
    said = next((text for kind, text in _CONNECTION_CAUSES if _first(exc, kind) is not None), None)
    return f"connection failed ({said or type(exc).__name__})"


def _proxy(exc: BaseException, url: str) -> str:
    return f"the proxy (HTTPS_PROXY / HTTP_PROXY) failed: {_unreachable(exc, url)}"


def _unsendable(exc: BaseException, url: str) -> str:
    return f"cannot send request to {url}: {exc}"


Describe = Callable[[BaseException, str], str]
"""(the exception, the URL called) -> what to tell the user."""

FAILURES: tuple[tuple[type[BaseException], bool, Describe | None], ...] = (
    # type found in the chain,                  retried, message (None: the attempt's deadline)
    (requests.exceptions.Timeout, True, None),
    (urllib3.exceptions.ReadTimeoutError, True, None),  # not TimeoutError: NewConnectionError is one too
    (socket.timeout, True, None),
    (requests.exceptions.SSLError, False, _tls),
    (ssl.SSLError, False, _tls),
    (requests.exceptions.ProxyError, True, _proxy),
    (MalformedBody, True, lambda exc, url: str(exc)),
    (urllib3.exceptions.InvalidChunkLength, True, _chunk_size),
    (requests.exceptions.ChunkedEncodingError, True, _incomplete),
    (http.client.IncompleteRead, True, _incomplete),
    (requests.exceptions.ContentDecodingError, False,
     lambda exc, url: "the reply's Content-Encoding could not be decoded"),
    (requests.exceptions.ConnectionError, True, _unreachable),
    (ConnectionError, True, _unreachable),
    (http.client.HTTPException, True, _unreachable),
    # What requests refuses to send (a URL it cannot use, a CA bundle that is not there): for good.
    (requests.RequestException, False, _unsendable),
    (OSError, False, _unsendable),
)


def classify(exc: BaseException, timeout: float, url: str) -> Failure | None:
    """What `exc` means for a call to `url` whose attempt had `timeout` seconds, or None when it is
    no failure of the exchange (a bug of ours, to let through)."""
    for kind, retry, describe in FAILURES:
        if _first(exc, kind) is not None:
            if describe is None:
                return Failure(retry=True, message=timeout_message(timeout))
            return Failure(retry=retry, message=describe(exc, url))
    return None
