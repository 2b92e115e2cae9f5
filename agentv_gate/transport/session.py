"""The requests session every HTTP call goes through: one per thread (keep-alive), whose connections
put their sockets under the attempt's deadline (deadline.py), and the environment's proxies and CA
bundle.

The sockets are handed over through public hooks only: an `HTTPAdapter` subclass installs urllib3
pool classes (`pool_classes_by_scheme`) whose `ConnectionCls` reports its `sock` the moment it is
set (before a TLS handshake or a proxy tunnel, so those are under the deadline too) and before each
request on a reused connection. A SOCKS proxy brings urllib3's own connection classes, which are
left alone: through one, only the socket timeouts bound a call (README, "Deadlines and size caps").
"""

from __future__ import annotations

import os
import socket
import threading
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.poolmanager import PoolManager

from .deadline import watch


class _Watched:
    """A urllib3 connection whose socket is cut at the running attempt's deadline: watched as soon
    as it is set (so a TLS handshake or a proxy tunnel is under the deadline too), and again before
    each request on a reused keep-alive connection."""

    @property
    def sock(self) -> socket.socket | None:
        held: socket.socket | None = vars(self).get("sock")
        return held

    @sock.setter
    def sock(self, value: socket.socket | None) -> None:
        vars(self)["sock"] = value
        watch(value)

    def request(self, *args: Any, **kwargs: Any) -> None:
        watch(self.sock)
        super().request(*args, **kwargs)  # type: ignore[misc]


class _WatchedHTTPConnection(_Watched, HTTPConnection):
    pass


class _WatchedHTTPSConnection(_Watched, HTTPSConnection):
    pass


class _WatchedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _WatchedHTTPConnection


class _WatchedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _WatchedHTTPSConnection


_POOLS = {"http": _WatchedHTTPPool, "https": _WatchedHTTPSPool}


class _WatchedAdapter(HTTPAdapter):
    """requests' adapter, its pools (direct and through an HTTP(S) proxy) making watched connections."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = _POOLS

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> PoolManager:
        manager: PoolManager = super().proxy_manager_for(proxy, **proxy_kwargs)
        if not proxy.lower().startswith("socks"):
            manager.pool_classes_by_scheme = _POOLS
        return manager


_local = threading.local()


def session() -> requests.Session:
    """One keep-alive session per thread: requests.Session is not safe to share across threads.

    It does not read the environment itself (`trust_env`): requests would then also read ~/.netrc
    and send its Basic credentials in place of the Authorization header the target set, and redo
    the proxy lookup on every call. `environment` gives it what the environment does say.
    """
    current: requests.Session | None = getattr(_local, "session", None)
    if current is None:
        current = requests.Session()
        current.trust_env = False
        adapter = _WatchedAdapter()
        current.mount("http://", adapter)
        current.mount("https://", adapter)
        _local.session = current
    return current


_ENVIRONMENT_VARIABLES = tuple(
    spelling for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy") for spelling in (name, name.upper())
) + ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")
"""What requests reads from the environment for an http(s) URL."""
_environments: dict[tuple[str, tuple[str | None, ...]], tuple[dict[str, str], bool | str]] = {}


def missing_ca_bundle() -> tuple[str, str] | None:
    """(variable, path) when the CA bundle the environment gives HTTPS calls (REQUESTS_CA_BUNDLE, else
    CURL_CA_BUNDLE, as requests reads them) does not exist: every HTTPS call would fail, so the
    preflight says so once instead of every case erroring."""
    for name in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):
        path = os.environ.get(name)
        if path:
            return None if os.path.exists(path) else (name, path)
    return None


def environment(url: str) -> tuple[dict[str, str], bool | str]:
    """The proxies (HTTP(S)_PROXY, NO_PROXY, ...) and CA bundle (REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE)
    requests takes from the environment for `url`, worked out once per origin and environment."""
    origin = url.split("/", 3)[:3]
    key = ("/".join(origin), tuple(map(os.environ.get, _ENVIRONMENT_VARIABLES)))
    settings = _environments.get(key)
    if settings is None:
        reader = requests.Session()  # trust_env: what requests itself would read, netrc aside
        merged = reader.merge_environment_settings(url, {}, None, None, None)
        reader.close()
        verify = merged["verify"]
        settings = _environments[key] = (dict(merged["proxies"]), True if verify is None else verify)
    return settings
