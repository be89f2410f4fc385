"""The scheduler's API calls on a live cluster: ``ClusterWriter`` and
``EventRecorder`` over ``KubeClient``, written as upstream kube-scheduler sends them.

- ``bind``: POST ``pods/<name>/binding`` with the pod's UID in the Binding's
  metadata (the server answers 409 Conflict when the pod was replaced or is
  already bound; DefaultBinder turns the error into its status, and the
  scheduler forgets the assumed pod and requeues it).
- ``patch_pod_status``: a strategic-merge patch of ``pods/<name>/status`` with
  the changed condition (merged by ``type``; ``lastProbeTime: null`` as the Go
  client serialises it; the transition time kept when the status does not
  change, as ``UpdatePodCondition``) and/or ``nominatedNodeName`` (``null``
  clears it).
- ``delete_pod``: a graceful DELETE (the pod's own grace period) with a UID
  precondition, so a replacement of the same name (a StatefulSet's) is never
  deleted.
- ``update_pv`` / ``update_pvc``: the volume binder's PreBind updates, PUT as
  client-go's ``Update``: the cached raw object (``LiveCluster.raw_volume``)
  with the binder's changes (a PV's ``spec.claimRef`` and annotations, a claim's
  annotations: ``volume.kubernetes.io/selected-node``) at the cached
  resourceVersion, so a volume changed meanwhile is a 409 Conflict (an error
  for PreBind, as upstream). The server's answer is fed to the cluster at once
  (upstream's assume cache). An object not cached raises KeyError.
- ``event``: an events.k8s.io/v1 Event, named ``<regarding>.<hex nanoseconds>``
  as client-go's recorder names them, from ``reportingController`` (the
  profile's scheduler name) and ``reportingInstance``
  (``<controller>-<hostname>``), handed to an ``EventBroadcaster``
  (``live.events``: client-go's broadcaster, a background thread with series
  aggregation) on its own rate limiter (``KubeClient.with_own_limit``:
  upstream's separate event client), so an event never delays a binding nor
  raises. ``close()`` flushes them (clean shutdown).

A pod that is gone (404, or 409 on the UID precondition) raises
``framework.ports.NotFound``: the preemption executor treats that victim as
preempted already. Any other failure raises ``ApiCallError`` whose text is the
server's Status message (what client-go's error says, and so what the
FailedScheduling event shows).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from kubesched.api.storage import ClaimReference, PersistentVolume, PersistentVolumeClaim
from kubesched.api.types import Pod, PodCondition, Time
from kubesched.framework.ports import NotFound
from kubesched.live.client import ClusterError, KubeClient, Raw
from kubesched.live.cluster import MODIFIED, LiveCluster
from kubesched.live.events import STRATEGIC_MERGE_PATCH, EventBroadcaster


class ApiCallError(Exception):
    """A write the server refused; ``str()`` is its Status message."""

    def __init__(self, message: str, status: int, reason: str) -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason


def rfc3339(t: Time) -> str:
    """``metav1.Time``: seconds, UTC (``t`` in nanoseconds since the Unix epoch)."""
    return datetime.fromtimestamp(t // 1_000_000_000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def micro_time(t: Time) -> str:
    """``metav1.MicroTime``: microseconds, UTC."""
    seconds, rest = divmod(t, 1_000_000_000)
    stamp = datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{stamp}.{rest // 1000:06d}Z"


def _pod_path(pod: Pod, sub: str = "") -> str:
    base = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}"
    return f"{base}/{sub}" if sub else base


class LiveWriter:
    """``ClusterWriter`` and ``EventRecorder`` of one profile on a live cluster."""

    def __init__(
        self,
        client: KubeClient,
        clock: Callable[[], Time],
        reporting_controller: str,
        reporting_instance: str,
        cluster: LiveCluster | None = None,
    ) -> None:
        """``cluster``: the caches the volume updates start from and are fed
        back to (None: ``update_pv`` / ``update_pvc`` raise KeyError)."""
        self._client = client
        self._cluster = cluster
        self.events = EventBroadcaster(client.with_own_limit(), clock)
        self._now = clock
        self.reporting_controller = reporting_controller
        self.reporting_instance = reporting_instance

    def close(self, timeout: float = 10.0) -> None:
        """Write the queued events and stop their thread (``EventBroadcaster.shutdown``)."""
        self.events.shutdown(timeout)

    def _call(self, what: str, method: str, path: str, **kwargs: Any) -> Raw:
        try:
            return self._client.request(method, path, what=what, **kwargs)
        except ClusterError as err:
            if err.status == 0:
                raise ApiCallError(str(err), 0, "") from None
            raise ApiCallError(err.server_message, err.status, err.reason) from None

    def _call_on_pod(self, pod: Pod, what: str, method: str, path: str, **kwargs: Any) -> Raw:
        """``_call``; a pod that is gone (404, or a failed UID precondition) is NotFound."""
        try:
            return self._call(what, method, path, **kwargs)
        except ApiCallError as err:
            if err.status == 404 or (err.status == 409 and "Precondition failed" in str(err)):
                raise NotFound(f'pods "{pod.name}" not found') from None
            raise

    # ------------------------------------------------------------------ ClusterWriter
    def bind(self, pod: Pod, node_name: str) -> None:
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node_name},
        }
        self._call(f"bind {pod.key}", "POST", _pod_path(pod, "binding"), body=binding)

    def patch_pod_status(
        self,
        pod: Pod,
        *,
        condition: PodCondition | None = None,
        nominated_node_name: str | None = None,
    ) -> None:
        status: Raw = {}
        if condition is not None:
            status["conditions"] = [_condition(pod, condition, self._now())]
        if nominated_node_name is not None:
            status["nominatedNodeName"] = nominated_node_name or None
        if not status:
            return
        self._call_on_pod(
            pod,
            f"patch {pod.key} status",
            "PATCH",
            _pod_path(pod, "status"),
            body={"status": status},
            content_type=STRATEGIC_MERGE_PATCH,
        )

    def delete_pod(self, pod: Pod) -> None:
        options = {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": pod.uid}}
        self._call_on_pod(pod, f"delete {pod.key}", "DELETE", _pod_path(pod), body=options)

    def update_pv(self, pv: PersistentVolume) -> None:
        body = self._cached_copy("PersistentVolume", pv.name, f'persistentvolume "{pv.name}"')
        _set_annotations(body, pv.annotations)
        spec = body.setdefault("spec", {})
        ref = pv.claim_ref
        if ref is None:
            spec.pop("claimRef", None)
        else:
            spec["claimRef"] = _claim_ref(ref, self._cluster)
        self._update("PersistentVolume", f"/api/v1/persistentvolumes/{pv.name}", body)

    def update_pvc(self, pvc: PersistentVolumeClaim) -> None:
        body = self._cached_copy(
            "PersistentVolumeClaim", pvc.key, f'persistentvolumeclaim "{pvc.key}"'
        )
        _set_annotations(body, pvc.annotations)
        path = f"/api/v1/namespaces/{pvc.namespace}/persistentvolumeclaims/{pvc.name}"
        self._update("PersistentVolumeClaim", path, body)

    def _cached_copy(self, kind: str, key: str, what: str) -> Raw:
        raw = None if self._cluster is None else self._cluster.raw_volume(kind, key)
        if raw is None:
            raise KeyError(f"{what} not found")
        return copy.deepcopy(raw)

    def _update(self, kind: str, path: str, body: Raw) -> None:
        """PUT ``body`` (its resourceVersion the precondition) and feed the answer
        to the cluster; ApiCallError names the object."""
        name = body["metadata"]["name"]
        namespace = body["metadata"].get("namespace")
        what = f"update {kind.lower()} {namespace + '/' if namespace else ''}{name}"
        body.setdefault("apiVersion", "v1")
        body.setdefault("kind", kind)
        answer = self._call(what, "PUT", path, body=body)
        if self._cluster is not None:
            self._cluster.notify(kind, MODIFIED, answer)

    # ------------------------------------------------------------------ EventRecorder
    def event(
        self,
        regarding: Pod,
        type_: str,
        reason: str,
        action: str,
        message: str,
        related: Pod | None = None,
    ) -> None:
        now = self._now()
        body: Raw = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": f"{regarding.name}.{now:x}", "namespace": regarding.namespace},
            "eventTime": micro_time(now),
            "reportingController": self.reporting_controller,
            "reportingInstance": self.reporting_instance,
            "action": action,
            "reason": reason,
            "regarding": _ref(regarding),
            "note": message,
            "type": type_,
        }
        if related is not None:
            body["related"] = _ref(related)
        self.events.record(body, now)

    def preemption(
        self, preemptor: Pod, node: str, victims: Sequence[Pod], num_pdb_violations: int
    ) -> None:
        """Nothing to write: upstream records a preemption only by its events."""


def _set_annotations(body: Raw, annotations: Mapping[str, str]) -> None:
    meta = body.setdefault("metadata", {})
    if annotations:
        meta["annotations"] = dict(annotations)
    else:
        meta.pop("annotations", None)


def _claim_ref(ref: ClaimReference, cluster: LiveCluster | None) -> Raw:
    """``reference.GetReference`` of the claim (its cached resourceVersion too)."""
    out: Raw = {
        "kind": "PersistentVolumeClaim",
        "namespace": ref.namespace,
        "name": ref.name,
        "uid": ref.uid,
        "apiVersion": "v1",
    }
    claim = None if cluster is None else cluster.raw_volume("PersistentVolumeClaim", ref.key)
    meta = (claim or {}).get("metadata") or {}
    if meta.get("resourceVersion") and meta.get("uid") == ref.uid:
        out["resourceVersion"] = meta["resourceVersion"]
    return out


def _ref(pod: Pod) -> Raw:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "namespace": pod.namespace,
        "name": pod.name,
        "uid": pod.uid,
    }


def _condition(pod: Pod, cond: PodCondition, now: Time) -> Raw:
    """The condition as the patch sends it; the transition time stays when the
    status does not change (``UpdatePodCondition``)."""
    old = pod.condition(cond.type)
    if old is not None and old.status == cond.status and old.last_transition_time is not None:
        when = old.last_transition_time
    else:
        when = cond.last_transition_time if cond.last_transition_time is not None else now
    out: Raw = {"type": cond.type, "status": cond.status, "lastProbeTime": None}
    if cond.reason:
        out["reason"] = cond.reason
    if cond.message:
        out["message"] = cond.message
    out["lastTransitionTime"] = rfc3339(when)
    return out
