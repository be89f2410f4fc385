"""The one adapter between kubesched and a Kubernetes client library.

Everything in ``kubesched.live`` talks to the API server through ``KubeClient``,
which hands out the server's JSON as plain dicts (the raw path of the official
``kubernetes`` client: no typed models, so every field the server sends reaches
``kubesched.api``'s readers exactly as ``kubectl get -o json`` shows it). The
library is imported here only, lazily, so the simulator runs without it (it is
the ``live`` extra: ``pip install 'kubesched[live]'``). Watches go through the
library's urllib3 pool; every other request through a ``live.channel.Channel``
(``http.client``, about half urllib3's CPU per request) configured from the
library's configuration (the pool when it names a proxy).

Contract:

- ``connect(kubeconfig, context)`` picks the configuration as kubectl does: the
  file given, else ``$KUBECONFIG`` or ``~/.kube/config`` when present, else the
  in-cluster service account (inside a pod); nothing is printed.
- ``KubeClient.list(resource)`` reads a whole collection, page by page
  (``limit``/``continue``), and returns its items (each with ``apiVersion`` and
  ``kind`` filled in, which list responses leave out) and the list's
  ``resourceVersion``.
- ``KubeClient.watch(resource, resource_version)`` opens a watch (``watch=1``,
  bookmarks allowed, the server's ``timeoutSeconds``) and returns a
  ``WatchStream``: iterating it yields the decoded events (``{"type",
  "object"}``, BOOKMARKs included) as the chunked response delivers them.
- A request answered 429, or 5xx with a ``Retry-After`` header, is sent again
  after that many seconds, at most ``MAX_RETRIES`` times, whatever its verb (the
  answer of the last attempt counts): client-go's rule (``checkWait``), which
  trusts the server to say ``Retry-After`` only where a retry is safe.
  urllib3's own status retries are off (they would retry 429/503 of GET, PUT
  and DELETE only, at most three times, and never POST or PATCH). A request
  that fails on the wire is not sent again (a kept connection the server
  closed is replaced before it is used).
- ``KubeClient.interrupt()`` (shutdown, any thread) ends every Retry-After wait
  (not the rate limiter's) at once, of the client and of those ``with_own_limit`` made: the request
  raises ``ClusterError`` (``...: the client is shutting down``, status 0), and
  so does every later one answered with Retry-After, without a wait. Requests
  are still sent once (a shutdown's lease release and last events go out
  unless throttled); the connections stay (``close()`` closes them).
- Every failure is a ``ClusterError`` whose message names the request and says
  what the server (or the network) answered: ``list nodes: forbidden: ...``,
  ``cannot reach https://...: connection refused``. ``ClusterError.status`` is
  the HTTP status (0 when no answer came). A 410 (``Expired``/``Gone``: the
  resourceVersion is older than the server keeps), whether the answer to the
  request or an ERROR event in a watch stream, is the subclass ``Expired``.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final, TypeVar
from urllib.parse import urlencode

from kubesched.live.channel import Channel, Reply

DEFAULT_PAGE: Final = 500
"""Objects per page of a list (kubectl's ``--chunk-size`` default)."""

REQUEST_TIMEOUT: Final = 60.0
"""Seconds one request may take before it is abandoned."""

CONNECT_TIMEOUT: Final = 30.0
"""Seconds a watch may take to connect (its read timeout is the stall timeout)."""

POOL_SIZE: Final = 32
"""Connections kept open to the server (urllib3's pool)."""

MAX_RETRIES: Final = 10
"""client-go's default: how often a request answered with Retry-After is sent again."""

Raw = dict[str, Any]
_R = TypeVar("_R")


class ClusterError(Exception):
    """The API server could not be reached or refused a request (see the module docstring)."""

    def __init__(
        self, message: str, status: int = 0, reason: str = "", server_message: str = ""
    ) -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason
        """The Status ``reason`` (``NotFound``, ``Conflict``, ...), if the server sent one."""
        self.server_message = server_message or message
        """The Status ``message`` alone (what client-go's error says)."""


class Expired(ClusterError):
    """410 Expired/Gone: the resourceVersion asked for is older than the server
    keeps; the caller must list again."""


class WatchStalled(ClusterError):
    """A watch stream sent nothing (no event, no bookmark) for its stall timeout."""


@dataclass(frozen=True, slots=True)
class Resource:
    """One collection of the API: ``group`` ("" for the core group), ``version``,
    ``plural`` (the URL segment) and the ``kind`` of its objects."""

    group: str
    version: str
    plural: str
    kind: str

    @property
    def api_version(self) -> str:
        return self.version if not self.group else f"{self.group}/{self.version}"

    @property
    def path(self) -> str:
        """The collection's URL path across all namespaces (cluster-wide list)."""
        prefix = "/api" if not self.group else f"/apis/{self.group}"
        return f"{prefix}/{self.version}/{self.plural}"


def _library() -> Any:
    try:
        import kubernetes
    except ImportError:  # pragma: no cover - the dev extra installs it
        raise ClusterError(
            "live mode needs the Kubernetes client library: pip install 'kubesched[live]'"
        ) from None
    return kubernetes


class TokenBucket:
    """client-go's default rate limiter (``clientConnection.qps`` / ``burst``):
    ``burst`` requests at once, then ``qps`` per second; ``qps <= 0`` never waits."""

    def __init__(
        self,
        qps: float,
        burst: int,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.qps = qps
        self.burst = max(burst, 1)
        self._tokens = float(self.burst)
        self._clock = clock
        self._sleep = sleep
        self._last = clock()
        self._lock = threading.Lock()

    def fresh(self) -> TokenBucket:
        """A full bucket of the same ``qps`` and ``burst`` (and clock)."""
        return type(self)(self.qps, self.burst, self._clock, self._sleep)

    def take(self) -> float:
        """Wait for a token; the seconds waited."""
        if self.qps <= 0:
            return 0.0
        with self._lock:
            now = self._clock()
            self._tokens = min(self.burst, self._tokens + (now - self._last) * self.qps)
            self._last = now
            self._tokens -= 1
            wait = -self._tokens / self.qps if self._tokens < 0 else 0.0
        if wait:
            self._sleep(wait)
        return wait


def connect(
    kubeconfig: str | None = None,
    context: str | None = None,
    qps: float = 0.0,
    burst: int = 0,
) -> KubeClient:
    """A client configured as kubectl would be (see the module docstring), its
    requests limited to ``qps`` per second after a ``burst`` (0: no limit)."""
    k8s = _library()
    cfg = k8s.client.Configuration()
    default = os.environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config")
    try:
        if kubeconfig is not None or context is not None or _any_exists(default):
            k8s.config.load_kube_config(
                config_file=kubeconfig, context=context, client_configuration=cfg
            )
            where = kubeconfig or default
        elif os.environ.get("KUBERNETES_SERVICE_HOST"):
            k8s.config.load_incluster_config(client_configuration=cfg)
            where = "the in-cluster service account"
        else:
            raise ClusterError(
                "no cluster configured: pass --kubeconfig, set KUBECONFIG, "
                "or run inside a pod (in-cluster service account)"
            )
    except ClusterError:
        raise
    except (k8s.config.ConfigException, OSError, ValueError) as err:
        raise ClusterError(f"kubeconfig {kubeconfig or default}: {_one_line(err)}") from None
    from urllib3.util.retry import Retry

    cfg.retries = Retry(3, respect_retry_after_header=False)  # no status retries
    # One connection per thread kept (informers' watches, bindings, events, lease):
    # urllib3 would otherwise discard the connections beyond 10 after each use.
    cfg.connection_pool_maxsize = POOL_SIZE
    client = k8s.client.ApiClient(cfg)
    try:
        channel = Channel.for_configuration(cfg, REQUEST_TIMEOUT)
    except (OSError, ValueError) as err:  # ssl.SSLError is an OSError
        raise ClusterError(f"kubeconfig {where}: {_one_line(err)}") from None
    return KubeClient(client, cfg.host, where, TokenBucket(qps, burst), channel=channel)


def _any_exists(paths: str) -> bool:
    return any(os.path.exists(os.path.expanduser(p)) for p in paths.split(os.pathsep) if p)


def _one_line(err: object) -> str:
    return " ".join(str(err).split())


class KubeClient:
    """Raw-dict requests over one configured ``kubernetes.client.ApiClient``."""

    def __init__(
        self,
        api_client: Any,
        host: str,
        source: str = "",
        limiter: TokenBucket | None = None,
        sleep: Callable[[float], object] | None = None,
        channel: Channel | None = None,
        halt: threading.Event | None = None,
    ) -> None:
        """``sleep`` waits a Retry-After (default: until ``interrupt()``);
        ``halt`` is the interrupt this client shares (``with_own_limit``)."""
        self._api = api_client
        self._channel = channel
        self._limiter = limiter or TokenBucket(0.0, 0)
        self._halt = threading.Event() if halt is None else halt
        self._sleep = sleep or self._halt.wait
        self.host = host
        """The server's URL."""
        self.source = source
        """Where the configuration came from (a kubeconfig path, or in-cluster)."""

    def with_own_limit(self) -> KubeClient:
        """This client's connections with a rate limiter of its own (same qps and
        burst): kube-scheduler's event client, a second clientset of the same
        configuration, whose requests do not spend the scheduler's budget."""
        return KubeClient(
            self._api,
            self.host,
            self.source,
            self._limiter.fresh(),
            channel=self._channel,
            halt=self._halt,
        )

    def interrupt(self) -> None:
        """End the Retry-After waits, now and later (see the module docstring):
        any thread, for good."""
        self._halt.set()

    def close(self) -> None:
        """Close the connections kept open (any thread); later requests open new ones."""
        if self._channel is not None:
            self._channel.close()
        self._api.rest_client.pool_manager.clear()

    def _headers(self, body: Raw | None, content_type: str) -> tuple[dict[str, str], bytes | None]:
        """The configuration's headers and credentials (its bearer token asked for
        each time, so a refreshed one is used), and the encoded body."""
        api = self._api
        headers = {**api.default_headers, "Accept": "application/json"}
        for auth in api.configuration.auth_settings().values():
            if auth.get("in") == "header" and auth.get("value"):
                headers[auth["key"]] = auth["value"]
        if body is None:
            return headers, None
        headers["Content-Type"] = content_type
        return headers, json.dumps(body).encode()

    def _retrying(
        self, what: str, attempt: Callable[[], _R], wait_of: Callable[[_R], int | None]
    ) -> _R:
        """``attempt()`` until the answer asks for no wait (see the module
        docstring), at most ``MAX_RETRIES`` more times; the last answer."""
        for _ in range(MAX_RETRIES):
            answer = attempt()
            wait = wait_of(answer)
            if wait is None:
                return answer
            self._sleep(wait)
            if self._halt.is_set():
                raise ClusterError(
                    f"{what}: not sent again after Retry-After {wait}s: the client is shutting down"
                )
        return attempt()

    def _exchange(self, method: str, target: str, body: Raw | None, content_type: str) -> Reply:
        """One short request (``target``: path and query), its answer read whole:
        through the channel, else (a proxy) the library's urllib3 pool."""
        self._limiter.take()
        headers, payload = self._headers(body, content_type)
        try:
            if self._channel is not None:
                return self._channel.send(method, target, payload, headers)
            response = self._api.rest_client.pool_manager.request(
                method,
                self.host + target,
                body=payload,
                headers=headers,
                timeout=REQUEST_TIMEOUT,
            )
            return Reply(
                response.status,
                response.reason or "",
                str(response.headers.get("Retry-After") or ""),
                response.data,
            )
        except Exception as err:  # connection errors and the like
            raise ClusterError(f"cannot reach {self.host}: {_reason(err)}") from None

    def _open_stream(self, path: str, query: list[tuple[str, str]], timeout: Any) -> Any:
        """A watch request through the library's urllib3 pool; its response, the
        body not read yet."""
        from urllib3 import Timeout

        self._limiter.take()
        headers, _ = self._headers(None, "")
        try:
            return self._api.rest_client.pool_manager.request(
                "GET",
                f"{self.host}{path}?{urlencode(query)}",
                headers=headers,
                timeout=Timeout(connect=timeout[0], read=timeout[1]),
                preload_content=False,
            )
        except Exception as err:  # urllib3's connection errors and the like
            raise ClusterError(f"cannot reach {self.host}: {_reason(err)}") from None

    def get(self, path: str, query: list[tuple[str, str]] | None = None, what: str = "") -> Raw:
        """GET ``path`` and return the decoded JSON object."""
        return self.request("GET", path, query=query, what=what)

    def request(
        self,
        method: str,
        path: str,
        *,
        query: list[tuple[str, str]] | None = None,
        body: Raw | None = None,
        content_type: str = "application/json",
        what: str = "",
    ) -> Raw:
        """One request with a JSON ``body`` (if any); the decoded JSON object the
        server answered. ``what`` names the request in errors (default: method
        and path)."""
        target = f"{path}?{urlencode(query)}" if query else path
        what = what or f"{method} {path}"
        reply = self._retrying(
            what,
            lambda: self._exchange(method, target, body, content_type),
            lambda r: _retry_after(r.status, r.retry_after),
        )
        if not 200 <= reply.status < 300:
            raise _api_error(what, reply.status, reply.reason, reply.data)
        try:
            value = json.loads(reply.data)
        except ValueError as err:
            raise ClusterError(f"{what}: the server answered no JSON: {err}") from None
        if not isinstance(value, dict):
            raise ClusterError(f"{what}: the server answered no JSON object")
        return value

    def list(self, resource: Resource, page: int = DEFAULT_PAGE) -> tuple[list[Raw], str]:
        """Every object of ``resource`` (all namespaces), and the resourceVersion of
        the list (of its last page)."""
        items: list[Raw] = []
        token = ""
        while True:
            query = [("limit", str(page))]
            if token:
                query.append(("continue", token))
            doc = self.get(resource.path, query, what=f"list {resource.plural}")
            for item in doc.get("items") or ():
                if isinstance(item, dict):
                    items.append(
                        {"apiVersion": resource.api_version, "kind": resource.kind, **item}
                    )
            meta = doc.get("metadata") or {}
            token = meta.get("continue") or ""
            if not token:
                return items, str(meta.get("resourceVersion") or "")

    def watch(
        self,
        resource: Resource,
        resource_version: str,
        timeout_seconds: int = 300,
        stall_timeout: float | None = None,
    ) -> WatchStream:
        """Open a watch of ``resource`` (all namespaces) from ``resource_version``,
        bookmarks allowed, ended by the server after ``timeout_seconds``. With a
        ``stall_timeout``, a stream silent for that many seconds raises
        ``WatchStalled`` (the socket's read timeout). A refused watch raises
        ``ClusterError`` (``Expired`` for a 410) at once."""
        what = f"watch {resource.plural}"
        query = [
            ("watch", "1"),
            ("allowWatchBookmarks", "true"),
            ("resourceVersion", resource_version),
            ("timeoutSeconds", str(timeout_seconds)),
        ]
        response = self._retrying(
            what,
            lambda: self._open_stream(resource.path, query, (CONNECT_TIMEOUT, stall_timeout)),
            _stream_retry_after,
        )
        if not 200 <= response.status < 300:
            try:
                data = response.read()
            except Exception:
                data = b""
            raise _api_error(what, response.status, response.reason, data)
        return WatchStream(response, what)


class WatchStream:
    """One open watch: iterate it for its events; ``close()`` from any thread.

    Iteration yields each event as the server sent it (``{"type", "object"}``:
    ADDED, MODIFIED, DELETED, BOOKMARK) and stops when the stream ends, cleanly
    (the server's timeout) or not (a dropped connection, or ``close()``):
    ``outcome`` says which (``"ended"``, ``"dropped"``, ``"closed"``; ``"stalled"``
    after ``WatchStalled``). An ERROR
    event raises: ``Expired`` for a 410, else ``ClusterError`` with the Status's
    code. Silence longer than the stall timeout raises ``WatchStalled``. The
    connection is released in every case.
    """

    def __init__(self, raw: Any, what: str) -> None:
        self._raw = raw  # the urllib3 HTTPResponse, body unread
        self._what = what
        self._lock = threading.Lock()
        self._closing = False
        self._done = False
        self.outcome = ""
        """How the stream ended ("" while it is open)."""

    def __iter__(self) -> Iterator[Raw]:
        from urllib3.exceptions import ProtocolError, ReadTimeoutError

        buffer = bytearray()
        try:
            for chunk in self._raw.stream(amt=None, decode_content=True):
                buffer += chunk
                while (end := buffer.find(b"\n")) >= 0:
                    line = bytes(buffer[:end])
                    del buffer[: end + 1]
                    if line.strip():
                        yield self._event(line)
            if buffer.strip():
                yield self._event(bytes(buffer))
            self.outcome = "closed" if self._closing else "ended"
        except ReadTimeoutError:
            if self._closing:
                self.outcome = "closed"
                return
            self.outcome = "stalled"
            raise WatchStalled(f"{self._what}: no event for the stall timeout") from None
        except (ProtocolError, OSError):
            self.outcome = "closed" if self._closing else "dropped"
        finally:
            self._release()

    def _event(self, line: bytes) -> Raw:
        try:
            event = json.loads(line)
        except ValueError as err:
            raise ClusterError(f"{self._what}: the server sent no JSON: {err}") from None
        if not isinstance(event, dict) or not isinstance(event.get("object"), dict):
            raise ClusterError(f"{self._what}: the server sent no watch event: {line[:200]!r}")
        if event.get("type") == "ERROR":
            status = event["object"]
            code = int(status.get("code") or 0)
            raise _status_error(
                self._what, code, str(status.get("reason") or ""), str(status.get("message") or "")
            )
        return event

    def close(self) -> None:
        """End the stream (a blocked iteration returns): safe from any thread, repeatable."""
        with self._lock:
            self._closing = True
            if self._done:
                return
            # Unblocks a read in progress (urllib3 >= 2.3); fails when the
            # connection is released already or the socket is gone.
            with contextlib.suppress(ValueError, RuntimeError, OSError):
                self._raw.shutdown()

    def _release(self) -> None:
        with self._lock:
            if self._done:
                return
            self._done = True
            try:
                self._raw.close()
                self._raw.release_conn()
            except Exception:  # a broken connection: nothing left to release
                pass


def _retry_after(status: int, header: str) -> int | None:
    """The seconds to wait before sending the request again, if the server said so."""
    if status != 429 and status < 500:
        return None
    value = header.strip()
    return int(value) if value.isdigit() else None


def _stream_retry_after(response: Any) -> int | None:
    """``_retry_after`` of a watch's answer; a retried one's body is read (which
    frees its connection)."""
    wait = _retry_after(response.status, str(response.headers.get("Retry-After") or ""))
    if wait is not None:
        with contextlib.suppress(Exception):
            response.read()
    return wait


def _api_error(what: str, status: int, http_reason: str | None, data: bytes) -> ClusterError:
    """The server's Status message when it sent one, else the HTTP reason."""
    message = reason = ""
    try:
        body = json.loads(data or b"")
        if isinstance(body, dict):
            message = str(body.get("message") or "")
            reason = str(body.get("reason") or "")
    except ValueError:
        pass
    return _status_error(what, status, reason, message or http_reason or "")


def _status_error(what: str, status: int, reason: str, message: str) -> ClusterError:
    """The error for a Status (``Expired`` for a 410)."""
    text = message or f"HTTP {status}"
    label = reason.lower() if reason else f"HTTP {status}"
    kind = Expired if status == 410 else ClusterError
    return kind(f"{what}: {label}: {text}", status, reason, text)


def _reason(err: Exception) -> str:
    """The innermost cause of a connection failure (urllib3 wraps it in
    ``MaxRetryError.reason``, which wraps the socket error), in one line."""
    from urllib3.exceptions import MaxRetryError

    inner: BaseException = err
    if isinstance(err, MaxRetryError) and err.reason is not None:
        inner = err.reason
    text = _one_line(inner)
    # "<urllib3.connection.HTTPConnection object at 0x..>: Failed to establish a new
    # connection: [Errno 111] Connection refused": keep what follows the object.
    return text.split(">: ", 1)[-1] or type(err).__name__
