"""Short API requests over the standard library's ``http.client``.

Live mode's writes (bindings, status patches, events, deletions, the lease) are
small requests answered at once, several per pod, and kubesched's threads share
one GIL: the client's CPU per request bounds its throughput. urllib3's request
path (the ``kubernetes`` client's transport) costs about twice what
``http.client`` costs for the same request (``benchmarks/live_perf.py``), so
``KubeClient`` sends every request that is not a watch through a ``Channel``.
The ``kubernetes`` library still reads the kubeconfig and makes the
configuration (server, CA, client certificate, token); the channel takes its TLS
settings from that configuration as urllib3 would
(``Channel.for_configuration``), and is not used when the configuration names a
proxy (the urllib3 pool handles those).

Contract:

- ``Channel.send(method, target, body, headers)`` sends one request on the calling
  thread's connection (each thread keeps one connection open, as Go's transport
  keeps idle connections) and returns the ``Reply`` (status, reason,
  ``Retry-After``, body read whole).
- A kept connection the server has closed meanwhile (it is readable while idle)
  is replaced before use, as urllib3 checks its pooled connections; a request
  that fails on the wire closes the connection and raises ``OSError`` or
  ``http.client.HTTPException``: the caller reports it, nothing is sent again.
- ``close()`` closes every connection the channel opened; a later ``send`` opens
  a new one.
"""

from __future__ import annotations

import http.client
import select
import ssl
import threading
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit


@dataclass(frozen=True, slots=True)
class Reply:
    """One answer: HTTP status and reason, the ``Retry-After`` header ("" when
    absent) and the whole body."""

    status: int
    reason: str
    retry_after: str
    data: bytes


class _ServerNamed(http.client.HTTPSConnection):
    """An HTTPS connection that asks the server for ``server_name`` (SNI and the
    certificate check) rather than the host it dials: ``tls-server-name``."""

    def __init__(
        self,
        host: str,
        port: int | None,
        server_name: str,
        timeout: float,
        context: ssl.SSLContext,
    ) -> None:
        super().__init__(host, port, timeout=timeout, context=context)
        self._server_name = server_name
        self._tls = context

    def connect(self) -> None:
        http.client.HTTPConnection.connect(self)
        self.sock = self._tls.wrap_socket(self.sock, server_hostname=self._server_name)


class Channel:
    """Per-thread kept-alive connections to one server (see the module docstring)."""

    def __init__(
        self,
        url: str,
        timeout: float,
        context: ssl.SSLContext | None = None,
        server_name: str = "",
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"server {url!r}: not an http(s) URL")
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port
        self._prefix = parts.path.rstrip("/")
        self._timeout = timeout
        self._context = context or (ssl.create_default_context() if self._https else None)
        self._server_name = server_name
        self._local = threading.local()
        self._lock = threading.Lock()
        self._open: set[http.client.HTTPConnection] = set()

    @classmethod
    def for_configuration(cls, cfg: Any, timeout: float) -> Channel | None:
        """The channel for a ``kubernetes.client.Configuration``, with its CA,
        client certificate, ``verify_ssl``, ``assert_hostname`` and
        ``tls_server_name``; None when it names a proxy."""
        if cfg.proxy:
            return None
        context = None
        if str(cfg.host).startswith("https"):
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            if cfg.verify_ssl:
                if cfg.ssl_ca_cert or cfg.ca_cert_data:
                    context.load_verify_locations(
                        cafile=cfg.ssl_ca_cert or None, cadata=cfg.ca_cert_data or None
                    )
                else:
                    context.load_default_certs()
                context.check_hostname = cfg.assert_hostname is not False
            else:
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE
            if cfg.cert_file:
                context.load_cert_chain(cfg.cert_file, cfg.key_file or None)
        return cls(cfg.host, timeout, context, cfg.tls_server_name or "")

    def send(self, method: str, target: str, body: bytes | None, headers: dict[str, str]) -> Reply:
        """One request (``target``: path and query) on this thread's connection."""
        conn = self._connection()
        try:
            conn.request(method, self._prefix + target, body=body, headers=headers)
            response = conn.getresponse()
            data = response.read()
        except BaseException:
            self._drop(conn)
            raise
        if response.will_close:
            self._drop(conn)
        return Reply(
            response.status, response.reason, response.getheader("Retry-After") or "", data
        )

    def close(self) -> None:
        """Close every connection of every thread (safe from any thread)."""
        with self._lock:
            conns, self._open = self._open, set()
        for conn in conns:
            conn.close()

    def _connection(self) -> http.client.HTTPConnection:
        conn: http.client.HTTPConnection | None = self._local.__dict__.get("conn")
        if conn is not None and conn in self._open:
            if conn.sock is None or not _dropped(conn.sock):
                return conn
            self._drop(conn)
        if not self._https:
            conn = http.client.HTTPConnection(self._host, self._port, timeout=self._timeout)
        elif self._server_name:
            assert self._context is not None
            conn = _ServerNamed(
                self._host, self._port, self._server_name, self._timeout, self._context
            )
        else:
            conn = http.client.HTTPSConnection(
                self._host, self._port, timeout=self._timeout, context=self._context
            )
        self._local.conn = conn
        with self._lock:
            self._open.add(conn)
        return conn

    def _drop(self, conn: http.client.HTTPConnection) -> None:
        conn.close()
        with self._lock:
            self._open.discard(conn)
        if self._local.__dict__.get("conn") is conn:
            self._local.conn = None


def _dropped(sock: Any) -> bool:
    """Whether an idle connection's socket is readable: the server closed it (or
    sent something unasked), so it must not carry a request."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)
