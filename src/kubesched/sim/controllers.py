"""Controllers the simulation needs: ReplicaSet (and Deployment through it).

A ReplicaSet keeps ``replicas`` active pods from its template: a pod that
starts terminating (``deletionTimestamp`` set, e.g. a preemption victim),
finishes or disappears is replaced at once by a new pod with a fresh
generated name, as the ReplicaSet controller does. A Deployment owns one
ReplicaSet named ``<deployment>-<pod-template-hash>``; its pods are named
``<replicaset>-<5 random characters>`` from the seeded random source.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from kubesched.api.errors import InputError
from kubesched.api.types import (
    FAILED,
    SUCCEEDED,
    LabelSelector,
    Node,
    OwnerReference,
    Pod,
    PodSpec,
)

# utilrand's alphabet: no vowels, no confusable characters.
ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"


def random_suffix(rng: random.Random, n: int = 5) -> str:
    return "".join(rng.choice(ALPHANUMS) for _ in range(n))


def template_hash(key: str) -> str:
    """A stable pod-template-hash (upstream hashes the Go-encoded template with
    FNV-32a; kubesched hashes the workload's identity, stable across runs)."""
    digest = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")
    out = []
    for _ in range(10):
        digest, r = divmod(digest, len(ALPHANUMS))
        out.append(ALPHANUMS[r])
    return "".join(out)


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


EventFn = Callable[[str, str, str, str, str, str], None]
"""(kind, namespace, name, type, reason, message): an event about a controller's object."""

FAILED_CREATE: Final = "FailedCreate"


@dataclass(slots=True)
class ReplicaSetController:
    """Watches pods; keeps each ReplicaSet at its replica count.

    A pod creation the API server refuses (Priority admission: the template's
    PriorityClass was deleted) records upstream's ``FailedCreate`` event on the
    ReplicaSet (``Error creating: pods "<rs>-" is forbidden: ...``) and leaves the
    replica missing. Upstream retries with the workqueue's backoff (5 ms
    doubling to 1000 s); kubesched retries at the ReplicaSet's next sync (one of
    its pods goes) or when a PriorityClass is created, the only change that can
    make the retry succeed.
    """

    create_pod: Callable[[Pod, int | None], None]
    rng: random.Random
    event: EventFn | None = None
    sets: dict[str, ReplicaSetSpec] = field(default_factory=dict)
    active: dict[str, set[str]] = field(default_factory=dict)
    """ReplicaSet uid -> uids of its active pods."""

    def add(self, rs: ReplicaSetSpec) -> None:
        self.sets[rs.uid] = rs
        self.active.setdefault(rs.uid, set())
        self._reconcile(rs)

    def delete(self, uid: str) -> list[str]:
        """Stop managing a ReplicaSet; returns the uids of its active pods."""
        rs = self.sets.pop(uid, None)
        if rs is not None:
            rs.deleted = True
        return sorted(self.active.pop(uid, set()))

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

    def _reconcile(self, rs: ReplicaSetSpec) -> None:
        active = self.active[rs.uid]
        rs.create_failed = False
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
            pod.owner_references = (OwnerReference("apps/v1", "ReplicaSet", rs.name, rs.uid, True),)
            self.create_pod(pod, rs.run_for)
            active.add(pod.uid)

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
            self._reconcile(rs)

    # Watcher
    def on_node_add(self, node: Node) -> None:
        return None

    def on_node_update(self, old: Node, new: Node) -> None:
        return None

    def on_node_delete(self, node: Node) -> None:
        return None

    def on_pod_add(self, pod: Pod) -> None:
        return None

    def on_pod_update(self, old: Pod, new: Pod) -> None:
        if new.deletion_timestamp is not None or new.phase in (SUCCEEDED, FAILED):
            self._inactive(new)

    def on_pod_delete(self, pod: Pod) -> None:
        self._inactive(pod)
