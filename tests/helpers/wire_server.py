"""A loopback HTTP server that writes its replies byte by byte as a test scripts them, for the
behaviours `http.server` smooths over: HTTP/1.0, a body that ends when the connection closes,
chunked and compressed bodies, a connection closed or reset at a chosen moment, a reply that drips
its headers, redirects, TLS with a self-signed certificate. Plus a CONNECT proxy that counts tunnels.

Nothing is mocked: the client under test talks to a real socket.

API
---
``WireServer(host="127.0.0.1", tls=None)`` starts at once (context manager, or ``close()``); any
loopback address works (``127.0.0.2`` for "another host"). ``tls`` is a server ``ssl.SSLContext``.

* ``server.url`` (``http://host:port`` or ``https://...``), ``server.authority`` (``host:port``);
* ``server.script(*behaviours)`` - one behaviour per request, in order; ``server.default(behaviour)``
  answers once the script is used up (without either: a 404);
* ``server.requests`` - every ``WireRequest`` (method, path, lower-cased headers, body, and the
  index of the TCP connection it came on); ``server.connections`` - TCP connections accepted;
  ``server.handshake_failures`` - TLS handshakes that failed; ``server.wait_closed(n)`` - wait until
  the server has closed ``n`` connections.

A behaviour is ``(wire, request) -> bool``: it writes the reply through ``wire`` and returns whether
the connection stays open for another request. Builders: ``reply(...)`` (any framing),
``drip_headers``, ``drip_body``, ``reset_mid_body``, ``redirect``, ``drop``.

``ConnectProxy()`` is an HTTPS proxy (``CONNECT host:port``) on 127.0.0.1 that pipes the tunnel and
records each target in ``proxy.tunnels``.
"""

from __future__ import annotations

import gzip
import socket
import ssl
import struct
import subprocess
import threading
import zlib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO


@dataclass
class WireRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    connection: int


class Wire:
    """One accepted connection, as a behaviour writes to it."""

    def __init__(self, sock: socket.socket, closing: threading.Event) -> None:
        self.sock = sock
        self._closing = closing
        self.was_reset = False

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def drip(self, data: bytes, pause: float) -> bool:
        """`data` a byte at a time, `pause` seconds apart; False once the server closes or the client hung up."""
        for index in range(len(data)):
            if index and self._closing.wait(pause):
                return False
            try:
                self.sock.sendall(data[index:index + 1])
            except OSError:
                return False
        return True

    def wait(self, seconds: float) -> bool:
        """Wait; False when the server is closing meanwhile."""
        return not self._closing.wait(seconds)

    def reset(self) -> None:
        """Close with a TCP RST (SO_LINGER 0), as a crashing server or a middlebox does."""
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.sock.close()
        self.was_reset = True


Behaviour = Callable[[Wire, WireRequest], bool]

_REASONS = {200: "OK", 301: "Moved Permanently", 302: "Found", 307: "Temporary Redirect", 308: "Permanent Redirect",
            400: "Bad Request", 404: "Not Found", 429: "Too Many Requests", 500: "Internal Server Error",
            503: "Service Unavailable"}


def encode(body: bytes, encoding: str | None) -> bytes:
    if encoding == "gzip":
        return gzip.compress(body)
    if encoding == "deflate":
        return zlib.compress(body)
    return body


def head(status: int, headers: dict[str, str], version: str = "HTTP/1.1") -> bytes:
    lines = [f"{version} {status} {_REASONS.get(status, 'Status')}", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def reply(status: int, body: bytes, *, headers: dict[str, str] | None = None, version: str = "HTTP/1.1",
          length: bool = True, close: bool = False, chunked: bool = False, encoding: str | None = None,
          content_type: str = "application/json") -> Behaviour:
    """A whole reply. `length`: a Content-Length header; `chunked`: chunked framing; `close`: a
    `Connection: close` header. The connection is kept only where HTTP/1.1 framing allows it."""
    wire_body = encode(body, encoding)
    fields = {"Content-Type": content_type, **(headers or {})}
    if encoding:
        fields["Content-Encoding"] = encoding
    if chunked:
        fields["Transfer-Encoding"] = "chunked"
        half = len(wire_body) // 2
        pieces = [wire_body[:half], wire_body[half:]]
        payload = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces if p) + b"0\r\n\r\n"
    else:
        payload = wire_body
        if length:
            fields["Content-Length"] = str(len(wire_body))
    if close:
        fields["Connection"] = "close"
    keep = version == "HTTP/1.1" and not close and (length or chunked)

    def behave(wire: Wire, request: WireRequest) -> bool:
        wire.send(head(status, fields, version) + payload)
        return keep

    return behave


def drip_headers(body: bytes, pause: float) -> Behaviour:
    """Status line and headers a byte every `pause` seconds, then the body."""
    def behave(wire: Wire, request: WireRequest) -> bool:
        if wire.drip(head(200, {"Content-Type": "application/json", "Content-Length": str(len(body))}), pause):
            wire.send(body)
        return False

    return behave


def drip_body(body: bytes, pause: float) -> Behaviour:
    """Headers at once (with the full Content-Length), then the body a byte every `pause` seconds."""
    def behave(wire: Wire, request: WireRequest) -> bool:
        wire.send(head(200, {"Content-Type": "application/json", "Content-Length": str(len(body))}))
        wire.drip(body, pause)
        return False

    return behave


def reset_mid_body(body: bytes) -> Behaviour:
    """Headers with the full Content-Length, half the body, then a TCP reset."""
    def behave(wire: Wire, request: WireRequest) -> bool:
        wire.send(head(200, {"Content-Type": "application/json", "Content-Length": str(len(body))})
                  + body[: len(body) // 2])
        wire.wait(0.05)
        wire.reset()
        return False

    return behave


def redirect(status: int, location: str) -> Behaviour:
    return reply(status, b"", headers={"Location": location}, content_type="text/plain")


def drop() -> Behaviour:
    """Close the connection without answering (a keep-alive connection the server gave up on)."""
    def behave(wire: Wire, request: WireRequest) -> bool:
        return False

    return behave


def _read_request(reader: BinaryIO, connection: int) -> WireRequest | None:
    line = reader.readline(65537)
    if not line.strip():
        return None
    method, target, _ = line.decode("latin-1").split(" ", 2)
    headers: dict[str, str] = {}
    while True:
        field = reader.readline(65537)
        if field in (b"\r\n", b"\n", b""):
            break
        name, _, value = field.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    body = reader.read(int(headers.get("content-length") or 0))
    return WireRequest(method, target, headers, body, connection)


class WireServer:
    def __init__(self, host: str = "127.0.0.1", tls: ssl.SSLContext | None = None) -> None:
        self.tls = tls
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._closing = threading.Event()
        self._script: deque[Behaviour] = deque()
        self._default: Behaviour | None = None
        self._requests: list[WireRequest] = []
        self.connections = 0
        self.closed = 0
        self.handshake_failures = 0
        self._listener = socket.create_server((host, 0))
        self._accepted: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    @property
    def authority(self) -> str:
        host, port = self._listener.getsockname()[:2]
        return f"{host}:{port}"

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://{self.authority}"

    def script(self, *behaviours: Behaviour) -> None:
        with self._lock:
            self._script.extend(behaviours)

    def default(self, behaviour: Behaviour) -> None:
        with self._lock:
            self._default = behaviour

    @property
    def requests(self) -> list[WireRequest]:
        with self._lock:
            return list(self._requests)

    def wait_closed(self, count: int, timeout: float = 5.0) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: self.closed >= count, timeout)

    def _accept(self) -> None:
        while not self._closing.is_set():
            try:
                sock, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                index = self.connections
                self.connections += 1
                self._accepted.append(sock)
            threading.Thread(target=self._serve, args=(sock, index), daemon=True).start()

    def _next(self) -> Behaviour:
        with self._lock:
            if self._script:
                return self._script.popleft()
            if self._default is not None:
                return self._default
        return reply(404, b'{"error": {"message": "nothing scripted"}}')

    def _serve(self, raw: socket.socket, index: int) -> None:
        sock = raw
        wire: Wire | None = None
        reader = None
        try:
            if self.tls is not None:
                try:
                    sock = self.tls.wrap_socket(raw, server_side=True)
                except (ssl.SSLError, OSError):
                    with self._lock:
                        self.handshake_failures += 1
                    return
            wire = Wire(sock, self._closing)
            reader = sock.makefile("rb")
            while True:
                request = _read_request(reader, index)
                if request is None:
                    break
                with self._lock:
                    self._requests.append(request)
                if not self._next()(wire, request):
                    break
        except OSError:
            pass
        finally:
            if reader is not None:
                # the file holds a reference to the socket: until it is closed, sock.close() sends no FIN,
                # and a test told "closed" would race the client still seeing the connection open
                try:
                    reader.close()
                except OSError:
                    pass
            if wire is None or not wire.was_reset:
                try:
                    sock.close()
                except OSError:
                    pass
            with self._changed:
                self.closed += 1
                self._changed.notify_all()

    def close(self) -> None:
        self._closing.set()
        _stop_listening(self._listener)
        with self._lock:
            accepted = list(self._accepted)
        for sock in accepted:
            try:
                sock.close()
            except OSError:
                pass
        self._thread.join(timeout=5)

    def __enter__(self) -> WireServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _stop_listening(listener: socket.socket) -> None:
    """Close a listening socket, waking the thread blocked in its accept() (a close alone does not)."""
    try:
        listener.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    listener.close()


def self_signed_certificate(folder: Path) -> tuple[Path, Path]:
    """(certificate, key) for 127.0.0.1 and 127.0.0.2, made with the `openssl` command line."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert),
                    "-addext", "subjectAltName=IP:127.0.0.1,IP:127.0.0.2"],
                   check=True, capture_output=True, timeout=60)
    return cert, key


def server_context(cert: Path, key: Path) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return context


class ConnectProxy:
    """An HTTPS proxy on 127.0.0.1: answers `CONNECT host:port` and pipes the tunnel both ways."""

    def __init__(self) -> None:
        self.tunnels: list[str] = []
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._open: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        host, port = self._listener.getsockname()[:2]
        return f"http://{host}:{port}"

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._tunnel, args=(client,), daemon=True).start()

    def _tunnel(self, client: socket.socket) -> None:
        reader = client.makefile("rb")
        request = _read_request(reader, 0)
        if request is None or request.method != "CONNECT":
            client.close()
            return
        with self._lock:
            self.tunnels.append(request.path)
        host, _, port = request.path.rpartition(":")
        try:
            upstream = socket.create_connection((host, int(port)), timeout=5)
        except OSError:
            client.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
            client.close()
            return
        upstream.settimeout(None)
        with self._lock:
            self._open += [client, upstream]
        client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        threading.Thread(target=self._pipe, args=(upstream, client), daemon=True).start()
        self._pipe(client, upstream)

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self) -> None:
        _stop_listening(self._listener)
        with self._lock:
            for sock in self._open:
                try:
                    sock.close()
                except OSError:
                    pass

    def __enter__(self) -> ConnectProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
