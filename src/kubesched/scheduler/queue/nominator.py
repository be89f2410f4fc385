"""The nominator: pods nominated to run on nodes (upstream backend/queue/nominator.go).

The scheduler's view of a nomination can be ahead of ``status.nominatedNodeName``
(preemption nominates before the API update lands). References (name, namespace,
uid) resolve to the queue's current PodInfos through the queue's lookup (upstream
``nominatedPodsToInfo``); the nominated-load index (``load_index``) is told of
every change.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from kubesched.api.types import Pod, PodSpec
from kubesched.framework.nominated import NominatedLoadIndex
from kubesched.framework.results import NominatingInfo, NominatingMode
from kubesched.framework.types import PodInfo

PodLister = Callable[[str, str], Pod | None]
"""(namespace, name) -> the pod as the informer cache has it, or None if it is gone."""

QueuedPodLookup = Callable[[str], PodInfo | None]
"""Pod key ("namespace/name") -> its PodInfo in activeQ, the unschedulable pool
or backoffQ (searched in that order), or None when it is in none of them."""


_BARE_SPEC: Final = PodSpec()


@dataclass(frozen=True, slots=True)
class PodRef:
    name: str
    namespace: str
    uid: str

    def to_pod(self) -> Pod:
        """The bare pod upstream substitutes when the pod is in no queue (all bare
        pods share one empty spec, so their spec facts are computed once)."""
        return Pod(self.name, self.namespace, uid=self.uid, spec=_BARE_SPEC)


class Nominator:
    """Implements ``framework.interfaces.Nominator`` (the framework's view)."""

    def __init__(
        self, pod_lister: PodLister | None = None, lookup: QueuedPodLookup | None = None
    ) -> None:
        self._pod_lister = pod_lister
        self._lookup = lookup
        self.nominated_pods: dict[str, list[PodRef]] = {}
        """Node name -> nominated pods, in nomination order."""
        self.nominated_pod_to_node: dict[str, str] = {}
        """Pod UID -> node name."""
        self._load = NominatedLoadIndex()
        self._bare: dict[str, PodInfo] = {}
        """UID -> the bare PodInfo standing in for a nominated pod found in no
        queue; kept while the nomination lasts (a reference never changes)."""

    def add_nominated_pod(self, pod_info: PodInfo, info: NominatingInfo | None) -> None:
        """Record the nomination, replacing any previous one: ``info.node_name`` in
        OVERRIDE mode, the pod's ``status.nominatedNodeName`` in NOOP mode (or
        ``info=None``); an empty name only clears. With a pod lister, nothing is
        stored for a pod gone or already bound."""
        pod = pod_info.pod
        self._delete(pod.uid)
        if info is not None and info.mode == NominatingMode.OVERRIDE:
            node = info.node_name
        else:
            node = pod.nominated_node_name
        if not node:
            return
        if self._pod_lister is not None:
            current = self._pod_lister(pod.namespace, pod.name)
            if current is None or current.node_name:
                return
        self.nominated_pod_to_node[pod.uid] = node
        refs = self.nominated_pods.setdefault(node, [])
        if any(r.uid == pod.uid for r in refs):
            return
        refs.append(PodRef(pod.name, pod.namespace, pod.uid))
        self._load.add(pod_info, node)

    def update_nominated_pod(self, old_pod: Pod | None, new_pod_info: PodInfo) -> None:
        """Re-register the pod after an update event: the new version's
        ``nominatedNodeName`` wins, except that an in-memory nomination survives an
        update where neither version has one (maybe a stale event)."""
        info: NominatingInfo | None = None
        uid = old_pod.uid if old_pod is not None else new_pod_info.pod.uid
        old_nnn = old_pod.nominated_node_name if old_pod is not None else ""
        if not old_nnn and not new_pod_info.pod.nominated_node_name:
            node = self.nominated_pod_to_node.get(uid)
            if node is not None:
                info = NominatingInfo(node, NominatingMode.OVERRIDE)
        self._delete(uid)
        self.add_nominated_pod(new_pod_info, info)

    def delete_nominated_pod_if_exists(self, pod: Pod) -> None:
        self._delete(pod.uid)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        """The queue's current PodInfos of the pods nominated to ``node_name``, in
        nomination order; a pod in no queue (in flight) is a bare pod with name,
        namespace and UID (priority 0), as upstream. Read-only (upstream copies)."""
        out: list[PodInfo] = []
        lookup = self._lookup
        for ref in self.nominated_pods.get(node_name, ()):
            key = f"{ref.namespace}/{ref.name}"
            info = lookup(key) if lookup is not None else None
            if info is None:
                bare = self._bare.get(ref.uid)
                if bare is None or bare.pod.key != key:
                    bare = self._bare[ref.uid] = PodInfo(ref.to_pod())
                info = bare
            out.append(info)
        return out

    def nominated_node_names(self) -> list[str]:
        """Nodes that currently have at least one nominated pod."""
        return [n for n, refs in self.nominated_pods.items() if refs]

    def load_index(self) -> NominatedLoadIndex:
        """The nominated pods' summed requests over table rows, kept current with
        every nomination recorded here."""
        return self._load

    def _delete(self, uid: str) -> None:
        node = self.nominated_pod_to_node.pop(uid, None)
        if node is None:
            return
        self._load.delete(uid)
        self._bare.pop(uid, None)
        refs = self.nominated_pods.get(node)
        if refs is None:
            return
        for i, r in enumerate(refs):
            if r.uid == uid:
                del refs[i]  # order-preserving, as upstream
                break
        if not refs:
            del self.nominated_pods[node]
