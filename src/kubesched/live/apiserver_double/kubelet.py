"""A fake kubelet: finishes graceful pod deletions when their grace period ends.

A deleted bound pod stays terminating until deleted with grace 0, as a real
kubelet's status manager does once the containers stopped; this fake does it at
`deletionTimestamp` on the server's clock, for pods on any node unless `nodes`
restricts it. `enabled=False` leaves them alone; `finish(namespace, name)` ends one
at once; `run_bound_pods` marks newly bound pods Running and Ready.
"""

from __future__ import annotations

import contextlib
from typing import Any

from kubesched.live.apiserver_double.errors import ApiError
from kubesched.live.apiserver_double.objects import parse_time, rfc3339
from kubesched.live.apiserver_double.registry import Registry
from kubesched.live.apiserver_double.resources import PODS, store_key
from kubesched.live.apiserver_double.store import StoreEvent

Obj = dict[str, Any]


class FakeKubelet:
    """Finishes terminating pods on the clock; see the module docstring."""

    def __init__(
        self, registry: Registry, enabled: bool = True, run_bound_pods: bool = False
    ) -> None:
        self.registry = registry
        self.enabled = enabled
        self.run_bound_pods = run_bound_pods
        self.nodes: set[str] | None = None
        registry.on_graceful_delete.append(self._terminating)
        registry.store.listeners.append(self._on_event)

    def _mine(self, pod: Obj) -> bool:
        node = (pod.get("spec") or {}).get("nodeName")
        return bool(node) and (self.nodes is None or node in self.nodes)

    def _terminating(self, pod: Obj) -> None:
        if not self.enabled or not self._mine(pod):
            return
        meta = pod["metadata"]
        due = parse_time(meta["deletionTimestamp"])
        uid = meta.get("uid")
        namespace, name = meta.get("namespace", ""), meta["name"]
        self.registry.clock.schedule(due, lambda: self._finish(namespace, name, uid))

    def _finish(self, namespace: str, name: str, uid: str | None) -> None:
        if not self.enabled:
            return
        # Already gone or replaced: nothing to finish.
        with contextlib.suppress(ApiError):
            self.registry.delete(
                PODS, namespace, name, {"gracePeriodSeconds": 0, "preconditions": {"uid": uid}}
            )

    def finish(self, namespace: str, name: str) -> None:
        """End a terminating pod now (as if its containers stopped)."""
        pod = self.registry.store.get("pods", store_key(namespace, name))
        if pod is not None:
            self._finish(namespace, name, pod["metadata"].get("uid"))

    def _on_event(self, event: StoreEvent) -> None:
        if not (self.run_bound_pods and event.store == "pods" and event.type == "MODIFIED"):
            return
        was = (event.prev or {}).get("spec", {}).get("nodeName")
        now = event.obj.get("spec", {}).get("nodeName")
        if was or not now or not self._mine(event.obj):
            return
        pod = dict(event.obj)
        status = dict(pod.get("status") or {})
        stamp = rfc3339(self.registry.clock.now())
        status["phase"] = "Running"
        conditions = [c for c in status.get("conditions") or [] if c.get("type") != "Ready"]
        conditions.append(
            {"type": "Ready", "status": "True", "lastProbeTime": None, "lastTransitionTime": stamp}
        )
        status["conditions"] = conditions
        status.setdefault("startTime", stamp)
        pod["status"] = status
        self.registry.store.put("pods", event.key, pod)
