"""The nominator: pods nominated to run on nodes (upstream backend/queue/nominator.go).

It exists because the scheduler's own view of a nomination can be ahead of
(or differ from) ``pod.status.nominatedNodeName``: preemption nominates in
memory before the API update lands. It stores references (name, namespace,
uid); the queue resolves them to current PodInfos.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from kubesched.api.types import Pod, PodSpec
from kubesched.framework.results import NominatingInfo, NominatingMode
from kubesched.framework.types import PodInfo

PodLister = Callable[[str, str], Pod | None]
"""(namespace, name) -> the pod as the informer cache has it, or None if it is gone."""


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
    def __init__(self, pod_lister: PodLister | None = None) -> None:
        self._pod_lister = pod_lister
        self.nominated_pods: dict[str, list[PodRef]] = {}
        """Node name -> nominated pods, in nomination order."""
        self.nominated_pod_to_node: dict[str, str] = {}
        """Pod UID -> node name."""
        self.infos: dict[str, PodInfo] = {}
        """Pod UID -> the PodInfo it was nominated with (priority and requests do
        not change, so this resolves like the queue lookup upstream does)."""
        self.log: list[tuple[str, str]] = []
        """(uid, node) for each nomination added, (uid, "") for each removed, since
        the last ``take_log``."""

    def add_nominated_pod(self, pod_info: PodInfo, info: NominatingInfo | None) -> None:
        """Record the nomination ``info`` describes, replacing any previous one.

        The node is ``info.node_name`` in OVERRIDE mode and the pod's own
        ``status.nominatedNodeName`` in NOOP mode (``info=None`` is NOOP). An
        empty node name only clears. With a pod lister, nothing is stored if
        the pod is gone or already bound (``spec.nodeName`` set).
        """
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
        self.infos[pod.uid] = pod_info
        self.log.append((pod.uid, node))

    def update_nominated_pod(self, old_pod: Pod | None, new_pod_info: PodInfo) -> None:
        """Re-register the pod after an update event.

        When neither version carries ``status.nominatedNodeName``, an in-memory
        nomination is kept: the update may be a stale event that arrived right
        after the scheduler nominated the pod. Otherwise the new version's own
        ``nominatedNodeName`` wins (added, changed or cleared).
        """
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

    def nominated_refs_for_node(self, node_name: str) -> list[PodRef]:
        return list(self.nominated_pods.get(node_name, ()))

    def take_log(self) -> list[tuple[str, str]]:
        """The changes since the last call (and forget them)."""
        log = self.log
        self.log = []
        return log

    def _delete(self, uid: str) -> None:
        node = self.nominated_pod_to_node.pop(uid, None)
        if node is None:
            return
        self.infos.pop(uid, None)
        self.log.append((uid, ""))
        refs = self.nominated_pods.get(node)
        if refs is None:
            return
        for i, r in enumerate(refs):
            if r.uid == uid:
                del refs[i]  # order-preserving, as upstream
                break
        if not refs:
            del self.nominated_pods[node]
