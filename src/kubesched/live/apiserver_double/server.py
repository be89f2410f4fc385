"""ApiServerDouble: a wire-faithful fake kube-apiserver on loopback, for tests and benchmarks.

    with ApiServerDouble(clock=ManualClock()) as api:
        api.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
        ... point a client at api.url (or api.write_kubeconfig(path)) ...
        api.clock.advance(30)          # grace periods, watch deadlines, bookmarks

It serves `resources.py` over real HTTP (HTTPS with a ``tls`` server context)
with upstream's behaviour (the sibling
modules), starts with a new cluster's namespaces and system PriorityClasses, and
offers fault hooks: request faults (`inject`), watch-window expiry, ERROR 410s in
open streams, dropped and stalled watches, a restart (state and revisions kept,
connections cut, watch caches re-initialised), a stolen lease, compaction, and
bookmarks on demand.
"""

from __future__ import annotations

import ssl
import threading
from collections import deque
from pathlib import Path
from types import TracebackType
from typing import Any

from kubesched.live.apiserver_double import objects
from kubesched.live.apiserver_double.auth import Auth
from kubesched.live.apiserver_double.clock import Clock, RealClock
from kubesched.live.apiserver_double.discovery import OpenAPI
from kubesched.live.apiserver_double.errors import expired
from kubesched.live.apiserver_double.faults import Fault, Faults
from kubesched.live.apiserver_double.http import DoubleHTTPServer
from kubesched.live.apiserver_double.kubelet import FakeKubelet
from kubesched.live.apiserver_double.registry import Registry
from kubesched.live.apiserver_double.resources import (
    LEASES,
    NAMESPACES,
    PRIORITY_CLASSES,
    SERVED,
    Resource,
    store_key,
)
from kubesched.live.apiserver_double.store import Store
from kubesched.live.apiserver_double.validation import SYSTEM_PRIORITY_CLASSES
from kubesched.live.apiserver_double.volumes import FakeVolumeController
from kubesched.live.apiserver_double.watch import WatchHub

Obj = dict[str, Any]

INITIAL_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")
SYSTEM_CLASS_DESCRIPTIONS = {
    "system-node-critical": "Used for system critical pods that must not be moved from their "
    "current node.",
    "system-cluster-critical": "Used for system critical pods that must run in the cluster, but "
    "can be moved to another node if necessary.",
}


class ApiServerDouble:
    """A fake API server on 127.0.0.1 (see the module docstring)."""

    def __init__(
        self,
        clock: Clock | None = None,
        seed: int = 0,
        auth: Auth | None = None,
        bookmark_frequency: float = 60.0,
        min_request_timeout: float = 1800.0,
        openapi_dir: Path | None = None,
        history_capacity: int = 100_000,
        kubelet: bool = True,
        bootstrap: bool = True,
        watch_list_defaulting: bool = True,
        host: str = "127.0.0.1",
        port: int = 0,
        tls: ssl.SSLContext | None = None,
        volume_controller: bool = False,
    ) -> None:
        """``volume_controller``: run the fake PV controller and provisioner
        (``volumes.FakeVolumeController``; ``self.volumes.enabled`` toggles it)."""
        self.clock: Any = clock if clock is not None else RealClock()
        self._owns_clock = clock is None
        self.store = Store(history_capacity=history_capacity)
        self.hub = WatchHub(self.store, self.clock, bookmark_frequency)
        self.registry = Registry(self.store, self.clock, seed)
        self.kubelet = FakeKubelet(self.registry, enabled=kubelet)
        self.volumes = FakeVolumeController(self.registry, enabled=volume_controller)
        self.auth = auth if auth is not None else Auth()
        self.faults = Faults()
        self.openapi = OpenAPI(openapi_dir)
        self.min_request_timeout = min_request_timeout
        self.watch_list_defaulting = watch_list_defaulting
        # The latest requests (method, path, query, body), for tests to inspect.
        self.requests: deque[tuple[str, str, dict[str, str], Any]] = deque(maxlen=10_000)
        self._bind = (host, port)
        self._tls = tls
        self._http: DoubleHTTPServer | None = None
        self._thread: threading.Thread | None = None
        if bootstrap:
            for name in INITIAL_NAMESPACES:
                self.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
            for name, value in SYSTEM_PRIORITY_CLASSES.items():
                self.create(
                    {
                        "apiVersion": "scheduling.k8s.io/v1",
                        "kind": "PriorityClass",
                        "metadata": {"name": name},
                        "value": value,
                        "description": SYSTEM_CLASS_DESCRIPTIONS[name],
                    }
                )

    # -- lifecycle -------------------------------------------------------------

    def start(self) -> ApiServerDouble:
        self._http = DoubleHTTPServer(self._bind, self, self._tls)
        self._thread = threading.Thread(
            target=self._http.serve_forever, args=(0.05,), name="apiserver-double", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self.hub.stop()
        if self._http is not None:
            self._http.shutdown()
            self._http.cut_connections()
            self._http.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._owns_clock:
            self.clock.close()

    def __enter__(self) -> ApiServerDouble:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def host(self) -> str:
        return self._bind[0]

    @property
    def port(self) -> int:
        assert self._http is not None, "start() the server first"
        return int(self._http.server_address[1])

    @property
    def url(self) -> str:
        scheme = "https" if self._tls is not None else "http"
        return f"{scheme}://{self.host}:{self.port}"

    def default_watch_timeout(self) -> float:
        """upstream: a random timeout between minRequestTimeout and twice it."""
        return self.min_request_timeout * (1.0 + self.registry.rng.random())

    def write_kubeconfig(self, path: Path, token: str | None = None, **cluster: Any) -> Path:
        """A kubeconfig pointing at this server (JSON is valid YAML); ``cluster``
        adds fields of its cluster entry (``certificate-authority``,
        ``tls-server-name``, ``insecure-skip-tls-verify``)."""
        import json

        user: Obj = {"token": token} if token else {}
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "double", "cluster": {"server": self.url, **cluster}}],
            "users": [{"name": "double", "user": user}],
            "contexts": [
                {
                    "name": "double",
                    "context": {"cluster": "double", "user": "double", "namespace": "default"},
                }
            ],
            "current-context": "double",
        }
        path.write_text(json.dumps(config))
        return path

    # -- direct state access (no HTTP, no auth, no faults) ---------------------

    @staticmethod
    def served() -> tuple[Resource, ...]:
        """Every served resource (group, version, plural, kind, scope, subresources)."""
        return SERVED

    @staticmethod
    def resource_for(api_version: str, kind: str) -> Resource:
        group, _, version = api_version.rpartition("/")
        for res in SERVED:
            if (
                res.group == group
                and res.version == version
                and res.kind == kind
                and res.name != "bindings"
            ):
                return res
        raise KeyError(f"{api_version} {kind} is not served")

    def create(self, obj: Obj) -> Obj:
        """Create through the registry (defaults, admission, validation apply); returns the view."""
        res = self.resource_for(str(obj["apiVersion"]), str(obj["kind"]))
        namespace = (obj.get("metadata") or {}).get("namespace") or (
            "default" if res.namespaced else ""
        )
        return self.registry.present(res, self.registry.create(res, namespace, obj))

    def get(self, api_version: str, kind: str, name: str, namespace: str = "") -> Obj | None:
        res = self.resource_for(api_version, kind)
        obj = self.store.get(res.store, store_key(namespace if res.namespaced else "", name))
        return self.registry.present(res, obj) if obj is not None else None

    def jump_resource_version(self, rv: int) -> None:
        """Move the revision counter forward (the next write gets rv + 1)."""
        with self.store.lock:
            self.store.rv = max(self.store.rv, rv)

    # -- faults ----------------------------------------------------------------

    def inject(self, fault: Fault) -> Fault:
        """Answer the next matching request(s) with `fault.error`."""
        return self.faults.add(fault)

    def expire_watch_history(self, store: str, floor: int | None = None) -> int:
        """Forget the store's watch-cache events up to `floor` (default: now); returns it."""
        with self.store.lock:
            target = self.store.rv if floor is None else floor
            self.store.set_window(store, target)
            return target

    def send_watch_error(self, store: str | None = None, message: str | None = None) -> int:
        """Send open watches an ERROR 410 Expired event and end them; returns how many."""
        sessions = self.hub.matching(store)
        for session in sessions:
            text = (
                message
                or f"too old resource version: {session.base_rv} "
                f"({self.store.floor[session.store]})"
            )
            session.error(expired(text).status())
            self.hub.close(session)
        return len(sessions)

    def drop_watches(self, store: str | None = None) -> int:
        """Cut open watch connections mid-stream (no terminating chunk)."""
        sessions = self.hub.matching(store)
        for session in sessions:
            self.hub.close(session, cut=True)
        return len(sessions)

    def stall_watches(self, store: str | None = None) -> int:
        """Stop delivering events to open watches (held until resume_watches)."""
        sessions = self.hub.matching(store)
        for session in sessions:
            session.stall()
        return len(sessions)

    def resume_watches(self) -> None:
        for session in self.hub.matching(None):
            session.resume()

    def bookmark_now(self, store: str | None = None) -> int:
        return self.hub.bookmark_now(store)

    def restart(self) -> None:
        """State and revisions kept; connections cut; watch caches relist at the current "
        "revision."""
        for session in self.hub.matching(None):
            self.hub.close(session, cut=True)
        self.store.reinitialise_caches()
        if self._http is not None:
            self._http.cut_connections()

    def compact(self, rv: int | None = None) -> int:
        return self.store.compact(rv)

    def steal_lease(self, namespace: str, name: str, holder: str) -> Obj:
        """Another candidate takes the lease over (holder, acquire/renew now, +1 transition)."""
        with self.store.lock:
            key = store_key(namespace, name)
            lease = self.store.get(LEASES.store, key)
            if lease is None:
                raise KeyError(f"lease {namespace}/{name} not found")
            spec = lease.setdefault("spec", {})
            stamp = objects.rfc3339_micro(self.clock.now())
            spec["holderIdentity"] = holder
            spec["acquireTime"] = stamp
            spec["renewTime"] = stamp
            spec["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + 1
            return self.registry.present(LEASES, self.store.put(LEASES.store, key, lease))


__all__ = ["NAMESPACES", "PRIORITY_CLASSES", "ApiServerDouble"]
