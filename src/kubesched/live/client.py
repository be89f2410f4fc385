"""The one adapter between kubesched and a Kubernetes client library.

Everything in ``kubesched.live`` talks to the API server through ``KubeClient``,
which hands out the server's JSON as plain dicts (the raw path of the official
``kubernetes`` client: no typed models, so every field the server sends reaches
``kubesched.api``'s readers exactly as ``kubectl get -o json`` shows it). The
library is imported here only, lazily, so the simulator runs without it (it is
the ``live`` extra: ``pip install 'kubesched[live]'``).

Contract:

- ``connect(kubeconfig, context)`` picks the configuration as kubectl does: the
  file given, else ``$KUBECONFIG`` or ``~/.kube/config`` when present, else the
  in-cluster service account (inside a pod); nothing is printed.
- ``KubeClient.list(resource)`` reads a whole collection, page by page
  (``limit``/``continue``), and returns its items (each with ``apiVersion`` and
  ``kind`` filled in, which list responses leave out) and the list's
  ``resourceVersion``.
- Every failure is a ``ClusterError`` whose message names the request and says
  what the server (or the network) answered: ``list nodes: forbidden: ...``,
  ``cannot reach https://...: connection refused``. ``ClusterError.status`` is
  the HTTP status (0 when no answer came).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Final

DEFAULT_PAGE: Final = 500
"""Objects per page of a list (kubectl's ``--chunk-size`` default)."""

REQUEST_TIMEOUT: Final = 60.0
"""Seconds one request may take before it is abandoned."""

Raw = dict[str, Any]


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


def connect(kubeconfig: str | None = None, context: str | None = None) -> KubeClient:
    """A client configured as kubectl would be (see the module docstring)."""
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
    client = k8s.client.ApiClient(cfg)
    return KubeClient(client, host=cfg.host, source=where)


def _any_exists(paths: str) -> bool:
    return any(os.path.exists(os.path.expanduser(p)) for p in paths.split(os.pathsep) if p)


def _one_line(err: object) -> str:
    return " ".join(str(err).split())


class KubeClient:
    """Raw-dict requests over one configured ``kubernetes.client.ApiClient``."""

    def __init__(self, api_client: Any, host: str, source: str = "") -> None:
        self._api = api_client
        self.host = host
        """The server's URL."""
        self.source = source
        """Where the configuration came from (a kubeconfig path, or in-cluster)."""

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
        api = self._api
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = content_type
        try:
            method, url, headers, payload, _ = api.param_serialize(
                method,
                path,
                query_params=query or [],
                header_params=headers,
                body=body,
                auth_settings=["BearerToken"],
            )
            response = api.call_api(
                method, url, header_params=headers, body=payload, _request_timeout=REQUEST_TIMEOUT
            )
            data = response.read()
        except Exception as err:  # urllib3's connection errors and the like
            raise ClusterError(f"cannot reach {self.host}: {_reason(err)}") from None
        what = what or f"{method} {path}"
        if not 200 <= response.status < 300:
            raise _api_error(what, response.status, response.reason, data)
        try:
            value = json.loads(data)
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
    text = message or http_reason or f"HTTP {status}"
    label = reason.lower() if reason else f"HTTP {status}"
    return ClusterError(f"{what}: {label}: {text}", status, reason, text)


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
