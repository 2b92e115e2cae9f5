"""A real HTTP server on 127.0.0.1 that plays GitHub's REST API for issue comments.

What the pull-request comment uses, as GitHub answers it:

* ``GET /repos/{owner}/{repo}/issues/{n}/comments?per_page=&page=`` - the comments, oldest first,
  ``per_page`` (at most 100, default 30) a page, with a ``Link`` header naming the next page;
* ``POST /repos/{owner}/{repo}/issues/{n}/comments`` ``{"body": ...}`` - 201 with the comment;
* ``PATCH /repos/{owner}/{repo}/issues/comments/{id}`` ``{"body": ...}`` - 200 with the comment;
* a body over 65,536 characters: 422 ``Validation Failed`` (``body is too long``), as GitHub does;
* ``GET /user`` - 403 ``Resource not accessible by integration`` for an Actions (installation)
  token, as GitHub answers it; ``{"login": login}`` for a personal token (``FakeGitHub(login=...)``);
* ``Authorization: Bearer TOKEN`` must be the server's token, else 401 ``Bad credentials``.

``server.fail(method, status, message, headers=None, times=None)`` makes every (or the next
``times``) request of ``method`` answer ``status`` with GitHub's error body: a fork's read-only
token (403 ``Resource not accessible by integration``), a rate limit (403 with
``x-ratelimit-remaining: 0``), a 5xx. ``server.comments[n]`` holds issue ``n``'s comments (dicts
with ``id``, ``body``, ``html_url``, ``user``); ``server.requests`` records (method, path, query,
authorization) for every request.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import tests.helpers.fake_llm_server  # noqa: F401 - importing it lets loopback requests bypass a runner's proxy

BODY_LIMIT = 65_536


@dataclass
class Failure:
    status: int
    message: str
    headers: dict[str, str] = field(default_factory=dict)
    times: int | None = None


class FakeGitHub:
    def __init__(self, token: str = "ghs_faketoken1234567890", repository: str = "octo/widgets",
                 host: str = "127.0.0.1", login: str | None = None) -> None:
        self.token = token
        self.login = login
        """None: the token is the Actions token (comments by github-actions[bot]); else a person's."""
        self.repository = repository
        self.comments: dict[int, list[dict[str, Any]]] = {}
        self.requests: list[tuple[str, str, dict[str, list[str]], str]] = []
        self.failures: dict[str, Failure] = {}
        self._next_id = 1000
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                server._handle(self, "GET")

            def do_POST(self) -> None:
                server._handle(self, "POST")

            def do_PATCH(self) -> None:
                server._handle(self, "PATCH")

        self._httpd = ThreadingHTTPServer((host, 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://{host}:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    def __enter__(self) -> FakeGitHub:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def fail(self, method: str, status: int, message: str, headers: dict[str, str] | None = None,
             times: int | None = None) -> None:
        self.failures[method] = Failure(status, message, headers or {}, times)

    def add_comments(self, number: int, bodies: list[str], user: str = "someone") -> None:
        for body in bodies:
            self._new(number, body, user)

    def _new(self, number: int, body: str, user: str) -> dict[str, Any]:
        self._next_id += 1
        comment = {"id": self._next_id, "body": body, "user": {"login": user},
                   "html_url": f"https://github.example/{self.repository}/pull/{number}#issuecomment-{self._next_id}"}
        self.comments.setdefault(number, []).append(comment)
        return comment

    def _send(self, handler: BaseHTTPRequestHandler, status: int, body: Any,
              headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json; charset=utf-8")
        handler.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)

    def _handle(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        split = urlsplit(handler.path)
        query = parse_qs(split.query)
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        with self._lock:
            self.requests.append((method, split.path, query, handler.headers.get("Authorization", "")))
            failure = self.failures.get(method)
            if failure is not None:
                if failure.times is not None:
                    failure.times -= 1
                    if failure.times <= 0:
                        del self.failures[method]
                self._send(handler, failure.status, {"message": failure.message,
                                                     "documentation_url": "https://docs.github.com/rest"},
                           failure.headers)
                return
            if handler.headers.get("Authorization") != f"Bearer {self.token}":
                self._send(handler, 401, {"message": "Bad credentials"})
                return
            parts = split.path.strip("/").split("/")
            if method == "GET" and parts == ["user"]:
                if self.login is None:
                    self._send(handler, 403, {"message": "Resource not accessible by integration",
                                              "documentation_url": "https://docs.github.com/rest/users/users"
                                                                   "#get-the-authenticated-user", "status": "403"})
                else:
                    self._send(handler, 200, {"login": self.login, "type": "User"})
                return
            prefix = ["repos", *self.repository.split("/")]
            if parts[:3] != prefix:
                self._send(handler, 404, {"message": "Not Found"})
                return
            rest = parts[3:]
            if method == "GET" and len(rest) == 3 and rest[0] == "issues" and rest[2] == "comments":
                self._list(handler, int(rest[1]), query, split.path)
            elif method == "POST" and len(rest) == 3 and rest[0] == "issues" and rest[2] == "comments":
                body = self._body(handler, raw)
                if body is not None:
                    self._send(handler, 201, self._new(int(rest[1]), body, self.login or "github-actions[bot]"))
            elif method == "PATCH" and len(rest) == 3 and rest[:2] == ["issues", "comments"]:
                body = self._body(handler, raw)
                if body is None:
                    return
                for comments in self.comments.values():
                    for comment in comments:
                        if comment["id"] == int(rest[2]):
                            comment["body"] = body
                            self._send(handler, 200, comment)
                            return
                self._send(handler, 404, {"message": "Not Found"})
            else:
                self._send(handler, 404, {"message": "Not Found"})

    def _body(self, handler: BaseHTTPRequestHandler, raw: bytes) -> str | None:
        try:
            body = json.loads(raw)["body"]
        except (ValueError, KeyError, TypeError):
            self._send(handler, 400, {"message": "Problems parsing JSON"})
            return None
        if len(body) > BODY_LIMIT:
            self._send(handler, 422, {"message": "Validation Failed",
                                      "errors": [{"resource": "IssueComment", "code": "custom", "field": "body",
                                                  "message": "body is too long (maximum is 65536 characters)"}]})
            return None
        return str(body)

    def _list(self, handler: BaseHTTPRequestHandler, number: int, query: dict[str, list[str]], path: str) -> None:
        per_page = min(100, int(query.get("per_page", ["30"])[0]))
        page = int(query.get("page", ["1"])[0])
        comments = self.comments.get(number, [])
        chunk = comments[(page - 1) * per_page: page * per_page]
        headers = {}
        if page * per_page < len(comments):
            headers["Link"] = f'<{self.url}{path}?per_page={per_page}&page={page + 1}>; rel="next"'
        self._send(handler, 200, chunk, headers)
