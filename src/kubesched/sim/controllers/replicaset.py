"""The ReplicaSet controller (upstream pkg/controller/replicaset).

A ReplicaSet keeps ``replicas`` *active* pods of its template: a pod that
starts terminating (``deletionTimestamp`` set, e.g. a preemption victim),
finishes or disappears is replaced at once by a new pod with a fresh generated
name (``<replicaset>-<5 random characters>`` from the seeded random source).

Ownership is claimed as ``PodControllerRefManager.ClaimPods`` does: the
ReplicaSet's own active pods (controller reference with its uid), and active
orphans of its namespace its selector matches, which it adopts. Replicas are
counted against them: with more active pods than ``replicas`` it deletes the
surplus, the pods ``getPodsToDelete`` ranks first (unscheduled before
scheduled, pending before running, not ready before ready, lower
``pod-deletion-cost``, more replicas on the same node, ready for less time,
newer; with ``related`` pods, the other ReplicaSets of its Deployment, counted
on each node as upstream's ``getIndirectlyRelatedPods``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from kubesched.api.errors import InputError
from kubesched.api.types import (
    LabelSelector,
    Node,
    OwnerReference,
    Pod,
    PodSpec,
)
from kubesched.sim.controllers.naming import random_suffix
from kubesched.sim.controllers.podutil import is_active, is_ready, pods_to_delete


@dataclass(slots=True)
class ReplicaSetSpec:
    """What the controller needs of a ReplicaSet (or a Deployment's ReplicaSet)."""

    namespace: str
    name: str
    uid: str
    replicas: int
    labels: dict[str, str]
    annotations: dict[str, str]
    spec: PodSpec
    make_pod: Callable[[str], Pod]
    """Builds (and admits) a pod of the template with the given name; raises
    InputError when admission refuses it (the API server's Forbidden)."""
    run_for: int | None = None
    deleted: bool = False
    selector: LabelSelector | None = None
    create_failed: bool = False
    """The last pod creation was refused; retried by ``retry_failed_creates``."""
    owner: OwnerReference | None = None
    """The controller reference of the ReplicaSet itself (its Deployment), if any."""
    creation: int = 0
    """``metadata.creationTimestamp`` on the run's clock (older ReplicaSets first)."""
    template_key: str = ""
    """The template as text without ``pod-template-hash`` (Deployment's EqualIgnoreHash)."""


EventFn = Callable[[str, str, str, str, str, str], None]
"""(kind, namespace, name, type, reason, message): an event about a controller's object."""

FAILED_CREATE: Final = "FailedCreate"


@dataclass(slots=True)
class ReplicaSetController:
    """Keeps each ReplicaSet at its replica count; its pod events come from a watch.

    A pod creation the API server refuses (the template's PriorityClass was deleted)
    records ``FailedCreate`` and leaves the replica missing; instead of upstream's
    workqueue backoff, kubesched retries at the next sync or when a PriorityClass is
    created (the only change that can help)."""

    create_pod: Callable[[Pod, int | None], None]
    rng: random.Random
    event: EventFn | None = None
    delete_pod: Callable[[Pod], None] | None = None
    adopt_pod: Callable[[Pod, tuple[OwnerReference, ...]], Pod | None] | None = None
    related: Callable[[ReplicaSetSpec], Iterable[Pod]] | None = None
    now: Callable[[], int] = lambda: 0
    sets: dict[str, ReplicaSetSpec] = field(default_factory=dict)
    active: dict[str, set[str]] = field(default_factory=dict)
    """ReplicaSet uid -> uids of its active pods."""
    pods: dict[str, Pod] = field(default_factory=dict)
    """Pod uid -> the latest version seen of each active pod of a ReplicaSet."""

    def add(self, rs: ReplicaSetSpec, claimed: Sequence[Pod] = ()) -> None:
        """Manage ``rs``: claim ``claimed`` (its own or orphan active pods) and sync."""
        self.sets[rs.uid] = rs
        self.active.setdefault(rs.uid, set())
        self._claim(rs, claimed)
        self._reconcile(rs)

    def claim(self, uid: str, pods: Sequence[Pod]) -> None:
        """Claim more pods (orphans that appeared later) and sync."""
        rs = self.sets.get(uid)
        if rs is None:
            return
        self._claim(rs, pods)
        self._reconcile(rs)

    def scale(self, uid: str, replicas: int) -> None:
        """Set ``spec.replicas`` (a Deployment scaling its ReplicaSet) and sync."""
        rs = self.sets.get(uid)
        if rs is None or rs.replicas == replicas:
            return
        rs.replicas = replicas
        self._reconcile(rs)

    def delete(self, uid: str) -> list[str]:
        """Stop managing a ReplicaSet; returns the uids of its active pods."""
        rs = self.sets.pop(uid, None)
        if rs is not None:
            rs.deleted = True
        uids = self.active.pop(uid, set())
        for p in uids:
            self.pods.pop(p, None)
        return sorted(uids)

    def pods_of(self, uid: str) -> list[Pod]:
        """The active pods of a ReplicaSet, in creation order."""
        found = [self.pods[p] for p in self.active.get(uid, ()) if p in self.pods]
        return sorted(found, key=lambda p: (p.creation_timestamp, p.name))

    def available(self, uid: str) -> int:
        """``status.availableReplicas`` (minReadySeconds 0): active ready pods."""
        return sum(1 for p in self.pods_of(uid) if is_ready(p))

    def scale_of(self, namespace: str, ref: OwnerReference) -> tuple[str, int] | None:
        """(uid, replicas) of the controller a pod's controller reference names."""
        rs = self.sets.get(ref.uid)
        if rs is None or rs.namespace != namespace:
            return None
        return rs.uid, rs.replicas

    def selector_of(self, namespace: str, ref: OwnerReference) -> LabelSelector | None:
        """The selector of the ReplicaSet a controller reference names."""
        rs = self.sets.get(ref.uid)
        if rs is None or rs.namespace != namespace or ref.kind != "ReplicaSet":
            return None
        return rs.selector

    def retry_failed_creates(self) -> None:
        """Sync every ReplicaSet whose last pod creation was refused."""
        for rs in list(self.sets.values()):
            if rs.create_failed:
                self._reconcile(rs)

    def _ref(self, rs: ReplicaSetSpec) -> OwnerReference:
        return OwnerReference("apps/v1", "ReplicaSet", rs.name, rs.uid, True)

    def _claim(self, rs: ReplicaSetSpec, pods: Sequence[Pod]) -> None:
        active = self.active[rs.uid]
        for pod in pods:
            if not is_active(pod) or pod.uid in active:
                continue
            if pod.controller_ref() is None:
                if self.adopt_pod is None:
                    continue
                adopted = self.adopt_pod(pod, (*pod.owner_references, self._ref(rs)))
                if adopted is None:
                    continue
                pod = adopted
            active.add(pod.uid)
            self.pods[pod.uid] = pod

    def _reconcile(self, rs: ReplicaSetSpec) -> None:
        active = self.active[rs.uid]
        rs.create_failed = False
        if len(active) > rs.replicas and self.delete_pod is not None and not rs.deleted:
            self._scale_down(rs, len(active) - rs.replicas)
            return
        while len(active) < rs.replicas and not rs.deleted:
            name = f"{rs.name}-{random_suffix(self.rng)}"
            try:
                pod = rs.make_pod(name)
            except InputError as err:
                rs.create_failed = True
                if self.event is not None:
                    self.event(
                        "ReplicaSet",
                        rs.namespace,
                        rs.name,
                        "Warning",
                        FAILED_CREATE,
                        f'Error creating: pods "{rs.name}-" is forbidden: {err.message}',
                    )
                return
            pod.owner_references = (self._ref(rs),)
            self.create_pod(pod, rs.run_for)
            active.add(pod.uid)
            self.pods[pod.uid] = pod

    def _scale_down(self, rs: ReplicaSetSpec, diff: int) -> None:
        assert self.delete_pod is not None
        candidates = self.pods_of(rs.uid)
        related = list(self.related(rs)) if self.related is not None else candidates
        for pod in pods_to_delete(candidates, related, diff, self.now()):
            self.active[rs.uid].discard(pod.uid)
            self.pods.pop(pod.uid, None)
            self.delete_pod(pod)

    def _owner(self, pod: Pod) -> ReplicaSetSpec | None:
        ref = pod.controller_ref()
        if ref is None or ref.kind != "ReplicaSet":
            return None
        return self.sets.get(ref.uid)

    def _inactive(self, pod: Pod) -> None:
        rs = self._owner(pod)
        if rs is None:
            return
        active = self.active.get(rs.uid)
        if active is not None and pod.uid in active:
            active.discard(pod.uid)
            self.pods.pop(pod.uid, None)
            self._reconcile(rs)

    # Watcher
    def on_node_add(self, node: Node) -> None:
        return None

    def on_node_update(self, old: Node, new: Node) -> None:
        return None

    def on_node_delete(self, node: Node) -> None:
        return None

    def on_pod_add(self, pod: Pod) -> None:
        """A pod the ReplicaSet owns but did not create (an input pod created after
        the ReplicaSet's first sync) is counted, which may make it scale down."""
        rs = self._owner(pod)
        if rs is None or not is_active(pod) or pod.uid in self.active[rs.uid]:
            return
        self.active[rs.uid].add(pod.uid)
        self.pods[pod.uid] = pod
        self._reconcile(rs)

    def on_pod_update(self, old: Pod, new: Pod) -> None:
        if not is_active(new):
            self._inactive(new)
        elif new.uid in self.pods:
            self.pods[new.uid] = new

    def on_pod_delete(self, pod: Pod) -> None:
        self._inactive(pod)
