"""The few GitHub REST calls the pull-request comment needs: list a pull request's comments, create
one, update one. Plain `requests`, no retry loop of the model providers' kind: a comment is an
extra, and a failure of any sort becomes one `CommentFault` whose message names the cause and what
to change, for one warning line. The token goes only into the Authorization header; no message
built here quotes a header, and every message is redacted against it all the same.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import requests

from ..redaction import redact
from ..report.text import one_line, truncate
from ._comment import PERMISSION

TIMEOUT = (5.0, 20.0)
"""(connect, read) seconds: an unreachable API costs the job seconds, never minutes."""
MAX_PAGES = 100
"""100 comments a page: a pull request with more than 10,000 comments is not searched further."""
RETRY_STATUSES = (502, 503, 504)


class CommentFault(Exception):
    """Why the comment could not be posted, said in one line (the gate's verdict is not affected)."""


@dataclass(frozen=True)
class Comment:
    id: int
    body: str
    url: str


@dataclass
class GitHubApi:
    api_url: str
    repository: str
    token: str
    session: requests.Session | None = None

    def __post_init__(self) -> None:
        self.api_url = self.api_url.rstrip("/")
        self.session = self.session or requests.Session()
        self.session.headers.update({"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28",
                                     "User-Agent": "agentv-gate", "Authorization": f"Bearer {self.token}"})

    def _call(self, method: str, url: str, json: dict[str, Any] | None = None) -> requests.Response:
        assert self.session is not None
        for attempt in (1, 2):
            try:
                response = self.session.request(method, url, json=json, timeout=TIMEOUT)
            except requests.RequestException as exc:
                if attempt == 1:
                    time.sleep(0.5)
                    continue
                raise CommentFault(f"the GitHub API at {self.api_url} could not be reached "
                                   f"({type(exc).__name__}); check GITHUB_API_URL and the runner's network") from None
            if response.status_code in RETRY_STATUSES and attempt == 1:
                time.sleep(0.5)
                continue
            if response.status_code >= 300:
                raise CommentFault(self._explain(method, response))
            return response
        raise AssertionError("unreachable")

    def _explain(self, method: str, response: requests.Response) -> str:
        """One line: what GitHub said, and what to change for it to work next time."""
        status = response.status_code
        said = _message(response)
        quoted = f" ({said})" if said else ""
        remaining = response.headers.get("x-ratelimit-remaining")
        if status == 429 or (status == 403 and (remaining == "0" or "rate limit" in said.lower())):
            reset = response.headers.get("x-ratelimit-reset", "")
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

    def comments(self, number: int) -> Iterator[Comment]:
        """Every comment of issue or pull request `number`, oldest first, page after page."""
        url: str | None = f"{self.api_url}/repos/{self.repository}/issues/{number}/comments?per_page=100"
        for _ in range(MAX_PAGES):
            if url is None:
                return
            response = self._call("GET", url)
            for item in _json_list(response):
                if isinstance(item, dict) and isinstance(item.get("id"), int):
                    yield Comment(item["id"], str(item.get("body") or ""), str(item.get("html_url") or ""))
            url = response.links.get("next", {}).get("url")

    def create(self, number: int, body: str) -> Comment:
        response = self._call("POST", f"{self.api_url}/repos/{self.repository}/issues/{number}/comments",
                              {"body": body})
        return _comment(response, body)

    def update(self, comment_id: int, body: str) -> Comment:
        response = self._call("PATCH", f"{self.api_url}/repos/{self.repository}/issues/comments/{comment_id}",
                              {"body": body})
        return _comment(response, body)

    def safe(self, text: str) -> str:
        """`text` with the token hidden, in case anything ever quoted it."""
        return redact(text, [self.token])


def _message(response: requests.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        return ""
    message = data.get("message") if isinstance(data, dict) else None
    errors = data.get("errors") if isinstance(data, dict) else None
    if isinstance(errors, list) and errors and isinstance(errors[0], dict) and errors[0].get("message"):
        message = f"{message}: {errors[0]['message']}"
    return truncate(one_line(message), 200) if message else ""


def _json_list(response: requests.Response) -> list[Any]:
    try:
        data = response.json()
    except ValueError:
        raise CommentFault("GitHub's API answered the comment list with something other than JSON") from None
    if not isinstance(data, list):
        raise CommentFault("GitHub's API answered the comment list with something other than a list")
    return data


def _comment(response: requests.Response, body: str) -> Comment:
    try:
        data = response.json()
    except ValueError:
        data = {}
    data = data if isinstance(data, dict) else {}
    return Comment(int(data.get("id") or 0), body, str(data.get("html_url") or ""))
