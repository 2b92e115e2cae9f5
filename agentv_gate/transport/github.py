"""The few GitHub REST calls the pull-request comment needs: who the token is, a pull request's
comments, create one, update one.

Why its own small client and not the model providers' retry policy: a comment is an extra, so it
gets one short budget for all its calls together (`budget_seconds`, 30 s) instead of minutes of
retries, and every failure becomes one `CommentFault` whose message names the cause and what to
change, for one warning line. What it shares with the model HTTP is the connection handling of
session.py and the whole-call deadline of deadline.py: each call (connect, send, headers and the
whole body) is cut at its deadline, so an API that drips its reply a byte at a time costs the job
at most the budget.

The token goes only into the Authorization header, and only to the configured API's origin:
no redirect is followed (a write re-sent to another host would hand it the comment and the
token), and a pagination `Link` to another scheme, host or port is not followed. Every message
is redacted against the token all the same.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests

from ..redaction import redact
from .deadline import attempt_deadline
from .failures import classify
from .session import environment, session

PERMISSION = "pull-requests: write"
ACTIONS_BOT = "github-actions[bot]"
"""Who the Actions token (and so every comment it posts) is; GitHub answers `GET /user` with 403 for it."""
BUDGET_SECONDS = 30.0
"""Every call of one comment step together: an API that drips or hangs costs the job this, never more."""
CALL_SECONDS = 10.0
"""One call's deadline (connect, send, headers and the whole body), within what is left of the budget."""
MAX_PAGES = 100
"""100 comments a page: a pull request with more than 10,000 comments is not searched further."""
MAX_REPLY_BYTES = 16 * 1024 * 1024
RETRY_STATUSES = (502, 503, 504)
_CHUNK = 64 * 1024


class CommentFault(Exception):
    """Why the comment could not be posted, said in one line (the gate's verdict is not affected).
    `retry`: a network failure another attempt may get past."""

    def __init__(self, message: str, retry: bool = False) -> None:
        super().__init__(message)
        self.retry = retry


@dataclass(frozen=True)
class Comment:
    id: int
    body: str
    url: str
    author: str = ""


@dataclass(frozen=True)
class _Reply:
    status: int
    headers: requests.structures.CaseInsensitiveDict[str]
    body: bytes
    links: dict[str, dict[str, str]]

    def json(self) -> Any:
        return json.loads(self.body)


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) with the scheme's default port filled in: two URLs of one origin match."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = -1
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), port or {"http": 80, "https": 443}.get(scheme)


@dataclass
class GitHubApi:
    api_url: str
    repository: str
    token: str
    budget_seconds: float = BUDGET_SECONDS
    call_seconds: float = CALL_SECONDS
    _started: float = field(default_factory=time.monotonic, repr=False)

    def __post_init__(self) -> None:
        self.api_url = self.api_url.rstrip("/")
        self._headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28",
                         "User-Agent": "agentv-gate", "Authorization": f"Bearer {self.token}"}

    def _left(self) -> float:
        return self.budget_seconds - (time.monotonic() - self._started)

    def _out_of_time(self) -> CommentFault:
        return CommentFault(f"the GitHub API at {self.api_url} did not answer within the comment's "
                            f"{self.budget_seconds:g}s; the comment is posted on the next run")

    def _call(self, method: str, url: str, payload: dict[str, Any] | None = None,
              statuses: tuple[int, ...] = ()) -> _Reply:
        """One call, asked again once after a network failure or a 502/503/504, all within the
        budget; a status in `statuses` is returned rather than raised."""
        if origin(url) != origin(self.api_url):
            raise CommentFault(f"GitHub's API pointed to another host ({_host(url)}), not followed: the token "
                               f"goes only to {self.api_url}")
        for attempt in (1, 2):
            left = self._left()
            if left <= 0.05:
                raise self._out_of_time()
            seconds = min(self.call_seconds, left)
            try:
                reply = self._once(method, url, payload, seconds)
            except _Cut:  # not asked again: an API that drips would drip again
                raise CommentFault(f"the GitHub API at {self.api_url} did not answer {method} within "
                                   f"{seconds:g}s (a deadline for the whole reply); the comment is posted on "
                                   "the next run") from None
            except CommentFault as exc:
                if attempt == 1 and exc.retry and self._left() > 1.0:
                    time.sleep(0.5)
                    continue
                raise
            if reply.status in RETRY_STATUSES and attempt == 1 and self._left() > 1.0:
                time.sleep(0.5)
                continue
            if 300 <= reply.status < 400:
                location = reply.headers.get("location")
                where = f" to {_host(urljoin(url, location))}" if location else ""
                raise CommentFault(f"GitHub's API answered {method} with a redirect ({reply.status}){where}, not "
                                   f"followed: the comment and the token go only to {self.api_url}; set "
                                   "GITHUB_API_URL to the API's final address if it has moved")
            if reply.status >= 300 and reply.status not in statuses:
                raise CommentFault(self._explain(method, reply))
            return reply
        raise AssertionError("unreachable")

    def _once(self, method: str, url: str, payload: dict[str, Any] | None, seconds: float) -> _Reply:
        proxies, verify = environment(url)
        failed: BaseException | None = None
        reply: _Reply | None = None
        with attempt_deadline(seconds) as deadline:
            try:
                response = session().request(method, url, json=payload, headers=self._headers,
                                             timeout=(seconds, seconds), stream=True, proxies=proxies,
                                             verify=verify, allow_redirects=False)
                with closing(response):
                    reply = _read(response)
            except CommentFault:
                raise
            except Exception as exc:  # noqa: BLE001 - classified below, once the deadline's verdict is final
                failed = exc
        if deadline.fired:
            raise _Cut()
        if failed is not None:
            failure = classify(failed, seconds, url)
            if failure is None:
                raise failed
            raise CommentFault(redact(f"the GitHub API at {self.api_url} could not be reached ({failure.message}); "
                                      "check GITHUB_API_URL and the runner's network", [self.token]), failure.retry)
        assert reply is not None
        return reply

    def _explain(self, method: str, reply: _Reply) -> str:
        """One line: what GitHub said, and what to change for it to work next time."""
        status = reply.status
        said = _message(reply)
        quoted = f" ({said})" if said else ""
        if _rate_limited(reply):
            reset = reply.headers.get("x-ratelimit-reset", "")
            when = ""
            if reset.isdigit():
                when = ", resets at " + datetime.fromtimestamp(int(reset), timezone.utc).strftime("%H:%M UTC")
            return f"GitHub's API rate limit was reached ({status}{when}){quoted}; the comment is posted on the next run"
        if status == 401:
            return f"GitHub refused the token (401){quoted}: check the github-token input (or GITHUB_TOKEN)"
        if status == 403:
            return (f"GitHub answered 403{quoted}: the token may not write pull-request comments. Give the job "
                    f"`permissions: {PERMISSION}`; a pull request from a fork gets a read-only token, so it gets "
                    "no comment (the job summary has the same report)")
        if status == 404:
            return (f"GitHub answered 404{quoted} for {self.repository}: the repository or pull request was not "
                    f"found, or the token cannot see it (it needs `{PERMISSION}`)")
        if status == 422:
            return f"GitHub refused the comment (422){quoted}"
        if status >= 500:
            return f"GitHub's API failed ({status}){quoted}; the comment is posted on the next run"
        return f"GitHub answered {status} to {method}{quoted}"

    def identity(self) -> str:
        """The login the token's comments are posted as: `GET /user`'s for a personal token; the
        Actions bot when GitHub answers 403 (an installation token has no user)."""
        reply = self._call("GET", f"{self.api_url}/user", statuses=(403,))
        if reply.status == 403 and _rate_limited(reply):
            raise CommentFault(self._explain("GET", reply))
        if reply.status == 403:
            return ACTIONS_BOT
        data = _json(reply, "the authenticated user")
        login = data.get("login") if isinstance(data, dict) else None
        if not isinstance(login, str) or not login:
            raise CommentFault("GitHub's API answered GET /user with no login")
        return login

    def comments(self, number: int) -> Iterator[Comment]:
        """Every comment of issue or pull request `number`, oldest first, page after page (pages
        on the API's own origin only)."""
        url: str | None = f"{self.api_url}/repos/{self.repository}/issues/{number}/comments?per_page=100"
        for _ in range(MAX_PAGES):
            if url is None:
                return
            reply = self._call("GET", url)
            data = _json(reply, "the comment list")
            if not isinstance(data, list):
                raise CommentFault("GitHub's API answered the comment list with something other than a list")
            for item in data:
                if isinstance(item, dict) and isinstance(item.get("id"), int) and not isinstance(item["id"], bool):
                    user = item.get("user")
                    author = user.get("login") if isinstance(user, dict) else None
                    yield Comment(item["id"], str(item.get("body") or ""), str(item.get("html_url") or ""),
                                  author if isinstance(author, str) else "")
            following = reply.links.get("next", {}).get("url")
            url = urljoin(url, following) if following else None

    def create(self, number: int, body: str) -> Comment:
        reply = self._call("POST", f"{self.api_url}/repos/{self.repository}/issues/{number}/comments",
                           {"body": body})
        return _comment(reply, body)

    def update(self, comment_id: int, body: str) -> Comment:
        reply = self._call("PATCH", f"{self.api_url}/repos/{self.repository}/issues/comments/{comment_id}",
                           {"body": body})
        return _comment(reply, body)

    def safe(self, text: str) -> str:
        """`text` with the token hidden, in case anything ever quoted it."""
        return redact(text, [self.token])


class _Cut(Exception):
    """The call's deadline cut it (internal)."""


def _host(url: str) -> str:
    """Where a URL points, as scheme://host[:port] (never its path or query, which may carry anything)."""
    scheme, host, port = origin(url)
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host or '?'}" + (f":{port}" if port and port != {"http": 80, "https": 443}.get(scheme) else "")


def _read(response: requests.Response) -> _Reply:
    if 300 <= response.status_code < 400:
        return _Reply(response.status_code, response.headers, b"", {})
    pieces: list[bytes] = []
    size = 0
    for piece in response.iter_content(_CHUNK):
        size += len(piece)
        if size > MAX_REPLY_BYTES:
            raise CommentFault(f"GitHub's API answered with more than {MAX_REPLY_BYTES} bytes")
        pieces.append(piece)
    return _Reply(response.status_code, response.headers, b"".join(pieces), dict(response.links))


def _rate_limited(reply: _Reply) -> bool:
    return reply.status == 429 or (reply.status == 403 and (
        reply.headers.get("x-ratelimit-remaining") == "0" or "rate limit" in _message(reply).lower()))


def _json(reply: _Reply, what: str) -> Any:
    try:
        return reply.json()
    except (ValueError, RecursionError):
        raise CommentFault(f"GitHub's API answered {what} with something other than JSON") from None


def _message(reply: _Reply) -> str:
    try:
        data = reply.json()
    except (ValueError, RecursionError):
        return ""
    message = data.get("message") if isinstance(data, dict) else None
    errors = data.get("errors") if isinstance(data, dict) else None
    if isinstance(errors, list) and errors and isinstance(errors[0], dict) and errors[0].get("message"):
        message = f"{message}: {errors[0]['message']}"
    if not message:
        return ""
    text = " ".join(str(message).split())  # one line: it is quoted in a warning
    return text[:200] + ("..." if len(text) > 200 else "")


def _comment(reply: _Reply, body: str) -> Comment:
    try:
        data = reply.json()
    except (ValueError, RecursionError):
        data = {}
    data = data if isinstance(data, dict) else {}
    raw_id = data.get("id")
    return Comment(raw_id if isinstance(raw_id, int) else 0, body, str(data.get("html_url") or ""))
