"""On-disk cache of model answers, so an unchanged eval re-run costs no API call.

Only providers whose answer is a function of the request are cached: the HTTP model providers
(`openai`, `azure`, `anthropic`, `gemini`). A `cli` target is the agent under test, whose answer depends on
the code of the pull request, so replaying an old answer would hide a regression; `mock` answers
from its config and costs nothing. Targets and LLM judges both reach the cache through
`TargetResolver`'s `wrap`, one `CachingProvider` per provider.

The key is a SHA-256 over what decides the answer: the provider kind, the URL the request goes to
(base URL, deployment, API version, Gemini's model; any `user:password@` removed), the JSON body as the provider
builds it (model, system prompt, messages, temperature, max_tokens or max_completion_tokens,
reasoning_effort, response_format), header values that are not credentials, the judge's re-ask
number, and the agentv-gate release (an entry holds the reply as that release read it). The body
is taken before any parameter the server refused earlier in the run is adjusted (see
`adjustments.py`), so a key does not depend on which call of a run learned it first. API
keys are never part of it, so rotating a key keeps the cache, and every secret value the target
knows is scrubbed from what is written. A changed prompt, model or
temperature is a different key, hence a miss.

Layout: `<cache dir>/v1/<2 hex>/<64 hex>.json`, one file per answer holding the request identity
(for people debugging a hit) and the `TargetResponse`. Every write goes to a temporary file in the
same folder and is renamed into place (`os.replace`), so concurrent workers and concurrent shards
sharing the folder only ever see whole entries; two writers of one key both write a valid entry
and the last rename wins. An unreadable or corrupt entry is a miss and is overwritten; a failed
call is never stored; a cache that cannot be written (read-only, disk full) is counted and
reported, never an error of the run.

Whether a call may use the cache comes with the request, on its case run (`ProviderRequest.run`): off
for a suite with `execution.cache: false` and for a trial after the first. A hit is counted on that
run too, whichever thread made the call, so the case's row reports it.

A hit comes back with `retries` 0 and `raw["cached"]` true; the original `duration_ms` is kept,
so judges that look at latency grade the replayed answer as they graded the real one.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pydantic import ValidationError

from ..base.files import atomic_write_text, make_own_folder
from ..models import TargetResponse
from ..redaction import redact_tree
from .base import Provider, ProviderRequest
from .kinds import PROVIDERS
from .settings import OpenAISettings

DEFAULT_CACHE_DIR = Path(".agentv-gate-cache")
"""Relative to the working folder, so `actions/cache` can keep it between CI runs."""
CACHE_FORMAT = 1
_SENSITIVE_HEADER_HINTS = ("authorization", "cookie", "key", "token", "secret", "password", "credential")


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    stored: int = 0
    corrupt: int = 0
    write_errors: int = 0
    first_write_error: str | None = None

    def describe(self) -> str:
        parts = [f"{self.hits} hit{'s' if self.hits != 1 else ''}", f"{self.misses} miss{'es' if self.misses != 1 else ''}",
                 f"{self.stored} stored"]
        if self.corrupt:
            parts.append(f"{self.corrupt} corrupt entr{'ies' if self.corrupt != 1 else 'y'} ignored")
        if self.write_errors:
            parts.append(f"{self.write_errors} not written ({self.first_write_error})")
        return ", ".join(parts)


def _strip_userinfo(url: str) -> str:
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


def _answer_headers(provider: Provider) -> dict[str, str]:
    """Extra headers from the target that may steer the answer; credential-like ones are left out."""
    target = getattr(provider, "target", None)
    headers = target.read(OpenAISettings).headers if target is not None and target.declares("headers") else None
    headers = {} if headers is None else headers
    if not isinstance(headers, dict):
        return {}
    return {str(k): str(v) for k, v in sorted(headers.items())
            if not any(hint in str(k).lower() for hint in _SENSITIVE_HEADER_HINTS)}


def _reader_version() -> str:
    """The agentv-gate release that read the reply. An entry holds the reply as it was *read* (its
    text, tool calls, whether it counted as withheld), so another release, which may read replies
    differently, must not replay it: a reply an older release stored as an empty success, that this
    one reads as a content-filter error, would otherwise keep passing."""
    from .. import __version__

    return str(__version__)


def request_identity(provider: Provider, request: ProviderRequest) -> dict[str, Any]:
    """Everything that decides the answer to `request` from `provider`, secrets excluded."""
    identity: dict[str, Any] = {"format": CACHE_FORMAT, "agentv_gate": _reader_version(), "kind": provider.kind}
    build_body = getattr(provider, "build_body", None)
    url_for = getattr(provider, "url_for", None)
    url = url_for(request) if callable(url_for) else getattr(provider, "url", None)
    if callable(build_body) and isinstance(url, str):
        identity["url"] = _strip_userinfo(url)
        identity["body"] = build_body(request)
    else:  # a provider without a wire format: the request as we hold it
        identity["request"] = {
            "question": request.question, "system_prompt": request.system_prompt,
            "messages": [m.model_dump(mode="json") for m in request.messages], "model": request.model,
            "temperature": request.temperature, "max_output_tokens": request.max_output_tokens,
            "input_files": request.input_files,
        }
    for attribute in ("api_version", "version"):  # e.g. Anthropic's `anthropic-version` header
        value = getattr(provider, attribute, None)
        if isinstance(value, str):
            identity[attribute] = value
    headers = _answer_headers(provider)
    if headers:
        identity["headers"] = headers
    attempt = request.attempt
    if attempt:  # a judge asked again after an unusable reply must not get the same reply back
        identity["attempt"] = attempt
    return identity


def _redactor(provider: Provider) -> Callable[[str], str]:
    target = getattr(provider, "target", None)
    redact = getattr(target, "redact", None)
    return redact if callable(redact) else (lambda text: text)


class ResponseCache:
    """A folder of answers, shared safely by threads and processes."""

    def __init__(self, root: Path | str = DEFAULT_CACHE_DIR) -> None:
        self.root = Path(root)
        self.stats = CacheStats()
        self._lock = threading.Lock()

    def key_for(self, identity_json: str) -> str:
        return hashlib.sha256(identity_json.encode("utf-8")).hexdigest()

    def path_for(self, key: str) -> Path:
        return self.root / f"v{CACHE_FORMAT}" / key[:2] / f"{key}.json"

    def _count(self, **changes: int) -> None:
        with self._lock:
            for name, delta in changes.items():
                setattr(self.stats, name, getattr(self.stats, name) + delta)

    def get(self, key: str) -> TargetResponse | None:
        """The stored answer, or None on a miss. A damaged entry is a miss, never an exception."""
        path = self.path_for(key)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            self._count(misses=1)
            return None
        except (OSError, UnicodeDecodeError):
            self._count(misses=1, corrupt=1)
            return None
        try:
            entry = json.loads(text)
            if not isinstance(entry, dict) or entry.get("key") != key or entry.get("format") != CACHE_FORMAT:
                raise ValueError("not an entry for this key")
            response = TargetResponse.model_validate(entry["response"])
        except (ValueError, KeyError, TypeError, ValidationError, RecursionError):
            self._count(misses=1, corrupt=1)
            return None
        self._count(hits=1)
        return response

    def put(self, key: str, entry_json: str) -> None:
        """Atomically store one entry: readers see the old file, the new one, or none, never half."""
        path = self.path_for(key)
        try:
            make_own_folder(self.root)
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, entry_json)
            self._count(stored=1)
        except OSError as exc:
            with self._lock:
                self.stats.write_errors += 1
                if self.stats.first_write_error is None:
                    self.stats.first_write_error = f"{exc.strerror or exc}: {exc.filename or path}"


class CachingProvider:
    """`inner` with answers replayed from `cache`; errors pass through and are not stored."""

    def __init__(self, inner: Provider, cache: ResponseCache) -> None:
        self.inner = inner
        self.cache = cache
        self.name = inner.name
        self.kind = inner.kind
        self._redact = _redactor(inner)

    def __repr__(self) -> str:
        return f"CachingProvider({self.inner!r}, root={str(self.cache.root)!r})"

    def __getattr__(self, name: str) -> Any:
        # Anything else (target, model, url, ...) is the wrapped provider's.
        if name == "inner":  # not set yet (copy, pickle): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)

    def invoke(self, request: ProviderRequest) -> TargetResponse:
        if request.run is not None and not request.run.use_cache:
            # A trial after the first (an independent sample, never a replay), or a suite with
            # `execution.cache: false`: the call is made, and nothing is read or stored.
            return self.inner.invoke(request)
        identity = request_identity(self.inner, request)
        identity_json = self._redact(json.dumps(identity, sort_keys=True, ensure_ascii=False, default=str))
        key = self.cache.key_for(identity_json)
        cached = self.cache.get(key)
        if cached is not None:
            if request.run is not None:
                request.run.cache_hits.add()
            return cached.model_copy(update={"retries": 0, "raw": {**(cached.raw or {}), "cached": True}})
        response = self.inner.invoke(request)  # raises on failure: nothing is stored
        entry = {"format": CACHE_FORMAT, "key": key, "provider": self.inner.kind,
                 "request": json.loads(identity_json), "response": response.model_dump(mode="json")}
        # Each string redacted before serialising too: JSON writes an escape character as `\u001b`, so a
        # key an answer cut with one (coloured output) would stay readable in two pieces in the file.
        self.cache.put(key, self._redact(json.dumps(redact_tree(entry), ensure_ascii=False, default=str)))
        return response


def caching_wrapper(cache: ResponseCache) -> Callable[[Provider], Provider]:
    """For `TargetResolver(wrap=...)`: HTTP model providers get the cache, every other kind is left alone."""

    def wrap(provider: Provider) -> Provider:
        kind = PROVIDERS.get(str(getattr(provider, "kind", "")))
        if kind is not None and kind.cacheable:
            return CachingProvider(provider, cache)
        return provider

    return wrap


__all__ = ["DEFAULT_CACHE_DIR", "CacheStats", "CachingProvider", "ResponseCache", "caching_wrapper", "request_identity"]
