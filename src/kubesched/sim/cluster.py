"""The in-memory cluster: objects, the API calls the scheduler makes, watch events.

It plays the API server, the kubelet and the pod garbage collector: it answers the
scheduler's ``ClusterReader`` and takes its ``ClusterWriter`` writes (binding is
immediate and starts the pod Running; a deleted bound pod keeps its resources with
a ``deletionTimestamp`` for its grace period), replaces a changed object by a copy
and queues a typed watch event that ``flush()`` publishes in order to ``watchers``
and ``object_watchers``. It is the drive loop's ``Backend`` (its engine is the
clock), owns the run's ``RunRecord`` (fed through the ports, told every deletion's
reason) and keeps the storage objects (``kubesched.sim.storage``).
"""

from __future__ import annotations

import random
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final, cast

from kubesched.api.storage import PersistentVolume, PersistentVolumeClaim
from kubesched.api.types import (
    FAILED,
    NANOS,
    RUNNING,
    SUCCEEDED,
    LabelSelector,
    Namespace,
    Node,
    OwnerReference,
    Pod,
    PodCondition,
    PodDisruptionBudget,
)
from kubesched.driver.events import (
    Event,
    NodeAdded,
    NodeDeleted,
    ObjectAdded,
    ObjectDeleted,
    ObjectUpdated,
    ObjectWatcher,
    PodAdded,
    PodDeleted,
    PodUpdated,
    StorageObject,
    Watcher,
)
from kubesched.driver.record import RunRecord
from kubesched.sim.disruption import ScaleOf, compute_status
from kubesched.sim.engine import Engine
from kubesched.sim.storage import Storage

REASON_PREEMPTED: Final = "Preempted"
REASON_DELETED: Final = "Deleted"
REASON_NODE_DELETED: Final = "NodeDeleted"


class EngineClock:
    """The engine's time as a ``Clock`` port."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def now(self) -> int:
        return self._engine.now


@dataclass(slots=True)
class Cluster:
    engine: Engine
    rng: random.Random
    watch: bool = False
    nodes: dict[str, Node] = field(default_factory=dict)
    pods: dict[str, Pod] = field(default_factory=dict)
    """Live pods by ``namespace/name``."""
    pdb_list: list[PodDisruptionBudget] = field(default_factory=list)
    namespaces: dict[str, Namespace] = field(default_factory=dict)
    watchers: list[Watcher] = field(default_factory=list)
    """Delivered node and pod events, in this order (the storage and the record
    first, then the scheduler and the controllers as they subscribe)."""
    on_pod_deleted: list[Callable[[Pod], None]] = field(default_factory=list)
    scale_of: ScaleOf | None = None
    """Controller scale lookup for PDB status (set by the scenario)."""
    selector_of: Callable[[str, OwnerReference], LabelSelector | None] | None = None
    """Controller selector lookup (set by the scenario)."""
    bound_log: list[str] | None = None
    """When a list, ``bind`` appends the key of every pod it binds (the bench's
    stop condition reads it instead of rescanning every pending pod)."""
    object_watchers: list[ObjectWatcher] = field(default_factory=list)
    """Delivered storage-object events, in this order (the record first)."""
    volumes: Storage = field(init=False)
    """Storage objects and their controllers (a watcher of pod events)."""
    record: RunRecord = field(init=False)
    """What happened, for the reports (a subscriber, and the recorder's sink)."""
    _pending: deque[Event] = field(default_factory=deque)
    _run_for: dict[str, int] = field(default_factory=dict)
    """``kubesched.io/run-for`` of the pods that have one, by uid."""
    _pdbs_dirty: bool = True

    def __post_init__(self) -> None:
        # A lambda: the pods dict may be replaced (tests do), the storage must see the current one.
        self.volumes = Storage(self, self._emit_object, lambda: self.pods.values())  # noqa: PLW0108
        self.volumes.set_node_lookup(self.nodes.get)
        self.record = RunRecord(EngineClock(self.engine), watch=self.watch)
        self.watchers.append(self.volumes)
        self.watchers.append(self.record)
        self.object_watchers.append(self.record)

    # ------------------------------------------------------------------ helpers
    @property
    def now(self) -> int:
        return self.engine.now

    def new_uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def _emit_pod(self, event: PodAdded | PodUpdated | PodDeleted) -> None:
        self._pending.append(event)
        self._pdbs_dirty = True

    def _emit_object(self, resource: str, op: str, old: object, new: object) -> None:
        """The storage's changes (``kubesched.sim.storage.Emit``) as watch events."""
        if op == "add":
            self._pending.append(ObjectAdded(resource, cast(StorageObject, new)))
        elif op == "update":
            self._pending.append(
                ObjectUpdated(resource, cast(StorageObject, old), cast(StorageObject, new))
            )
        else:
            self._pending.append(ObjectDeleted(resource, cast(StorageObject, old)))

    def flush(self) -> int:
        """Publish queued watch events to the watchers, in order (events the
        deliveries cause are published too); returns how many there were."""
        n = 0
        pending = self._pending
        while pending:
            pending.popleft().publish(self)
            n += 1
        return n

    # ------------------------------------------------------------------ Backend
    def run_due(self) -> int:
        """Apply every change the engine has due now."""
        return self.engine.run_due()

    def next_time(self) -> int | None:
        return self.engine.next_time()

    def advance(self, to: int) -> None:
        self.engine.now = to

    # ------------------------------------------------------------------ ClusterReader
    def get_pod(self, namespace: str, name: str) -> Pod | None:
        return self.pods.get(f"{namespace}/{name}")

    def storage(self) -> Storage:
        return self.volumes

    def pdbs(self) -> Sequence[PodDisruptionBudget]:
        """The PDBs with their status as the disruption controller keeps it."""
        if self._pdbs_dirty and self.pdb_list:
            self.refresh_pdbs()
        return self.pdb_list

    def add_pdb(self, pdb: PodDisruptionBudget) -> None:
        self.pdb_list.append(pdb)
        self._pdbs_dirty = True

    def remove_pdb(self, pdb: PodDisruptionBudget) -> None:
        self.pdb_list = [p for p in self.pdb_list if p is not pdb]

    def refresh_pdbs(self) -> None:
        scale_of = self.scale_of or (lambda ns, ref: None)
        pods = list(self.pods.values())
        for pdb in self.pdb_list:
            pdb.status = compute_status(pdb, pods, scale_of, self.now)
        self._pdbs_dirty = False

    def namespace(self, name: str) -> Namespace | None:
        return self.namespaces.get(name)

    def workload_selector(self, namespace: str, ref: OwnerReference) -> LabelSelector | None:
        """The label selector of the workload a controller reference names."""
        return self.selector_of(namespace, ref) if self.selector_of is not None else None

    # ------------------------------------------------------------------ nodes
    def create_node(self, node: Node) -> None:
        node.creation_timestamp = self.now
        self.nodes[node.name] = node
        self._pending.append(NodeAdded(node))

    def delete_node(self, name: str) -> None:
        node = self.nodes.pop(name, None)
        if node is None:
            return
        self._pending.append(NodeDeleted(node))
        for pod in [p for p in self.pods.values() if p.node_name == name]:
            self._remove_pod(pod, REASON_NODE_DELETED)

    # ------------------------------------------------------------------ pods
    def create_pod(self, pod: Pod, run_for: int | None = None) -> None:
        if not pod.uid or pod.uid == pod.key:
            pod.uid = self.new_uid()
        pod.creation_timestamp = self.now
        if pod.node_name and pod.phase not in (SUCCEEDED, FAILED):
            # A bound pod runs at once; one dumped Succeeded or Failed keeps its phase
            # (and holds no resources: the scheduler's informer filters it out).
            pod.phase = RUNNING
            if pod.start_time is None:
                pod.start_time = self.now
        self.pods[pod.key] = pod
        if run_for is None:
            self._run_for.pop(pod.uid, None)
        else:
            self._run_for[pod.uid] = run_for
        self._emit_pod(PodAdded(pod))
        if pod.node_name and run_for is not None and pod.phase == RUNNING:
            self._finish_later(pod, run_for)

    def _replace(self, old: Pod, new: Pod) -> None:
        self.pods[new.key] = new
        self._emit_pod(PodUpdated(old, new))

    def _finish_later(self, pod: Pod, run_for: int) -> None:
        key, uid = pod.key, pod.uid
        self.engine.after(run_for, lambda: self._finish(key, uid))

    def _finish(self, key: str, uid: str) -> None:
        cur = self.pods.get(key)
        if cur is None or cur.uid != uid or cur.phase not in (RUNNING,):
            return
        new = cur.copy()
        new.phase = SUCCEEDED
        self._replace(cur, new)

    def delete_gracefully(self, pod: Pod, reason: str) -> None:
        """DELETE with the pod's grace period: the pod keeps its node and resources
        until the grace period ends (a pod never bound, or already finished, goes at once)."""
        cur = self.pods.get(pod.key)
        if cur is None or cur.uid != pod.uid or cur.deletion_timestamp is not None:
            return
        grace = cur.termination_grace_period_seconds
        if not cur.node_name or cur.phase in (SUCCEEDED, FAILED) or grace <= 0:
            self.record.deleting(cur.uid, reason)
            if cur.node_name and grace <= 0 and cur.phase not in (SUCCEEDED, FAILED):
                new = cur.copy()
                new.deletion_timestamp = self.now  # now + grace (0), as the API server sets it
                self._replace(cur, new)
                cur = new
            self._remove_pod(cur, reason)
            return
        new = cur.copy()
        # The API server sets deletionTimestamp to the end of the grace period.
        new.deletion_timestamp = self.now + grace * NANOS
        self._replace(cur, new)
        self.expire_at(new, new.deletion_timestamp, reason)

    def expire_at(self, pod: Pod, when: int, reason: str) -> None:
        """Remove a terminating pod at ``when`` (its grace period's end)."""
        key, uid = pod.key, pod.uid
        self.record.deleting(uid, reason)
        self.engine.at(when, lambda: self._grace_over(key, uid, reason))

    def _grace_over(self, key: str, uid: str, reason: str) -> None:
        cur = self.pods.get(key)
        if cur is not None and cur.uid == uid:
            self._remove_pod(cur, reason)

    def _remove_pod(self, pod: Pod, reason: str) -> None:
        cur = self.pods.pop(pod.key, None)
        if cur is None:
            return
        self.record.deleting(cur.uid, reason)
        self._emit_pod(PodDeleted(cur))
        for cb in self.on_pod_deleted:
            cb(cur)

    def patch_owner_references(self, pod: Pod, refs: tuple[OwnerReference, ...]) -> Pod | None:
        """A controller adopts or releases a pod: its ``metadata.ownerReferences``
        replaced; returns the updated pod (None if it is gone)."""
        cur = self.pods.get(pod.key)
        if cur is None or cur.uid != pod.uid:
            return None
        new = cur.copy()
        new.owner_references = refs
        self._replace(cur, new)
        return new

    # ------------------------------------------------------------------ ClusterWriter
    def bind(self, pod: Pod, node_name: str) -> None:
        cur = self.pods.get(pod.key)
        if cur is None or cur.uid != pod.uid:
            raise KeyError(f'pods "{pod.name}" not found')
        if cur.node_name:
            raise ValueError(f'pod {pod.key} is already assigned to node "{cur.node_name}"')
        if node_name not in self.nodes:
            raise KeyError(f'node "{node_name}" not found')
        new = cur.copy()
        new.node_name = node_name
        new.phase = RUNNING
        new.start_time = self.now
        new.nominated_node_name = ""
        _set_condition(new, PodCondition("PodScheduled", "True", "", "", self.now))
        self._replace(cur, new)
        if self.bound_log is not None:
            self.bound_log.append(new.key)
        run_for = self._run_for.get(new.uid)
        if run_for is not None:
            self._finish_later(new, run_for)

    def patch_pod_status(
        self,
        pod: Pod,
        *,
        condition: PodCondition | None = None,
        nominated_node_name: str | None = None,
    ) -> None:
        cur = self.pods.get(pod.key)
        if cur is None or cur.uid != pod.uid:
            return
        new = cur.copy()
        changed = False
        if condition is not None:
            changed |= _set_condition(new, condition)
        if nominated_node_name is not None and nominated_node_name != cur.nominated_node_name:
            new.nominated_node_name = nominated_node_name
            changed = True
        if changed:
            self._replace(cur, new)

    def delete_pod(self, pod: Pod) -> None:
        cur = self.pods.get(pod.key)
        if cur is None or cur.uid != pod.uid:
            return
        preempted = cur.preemption_condition() is not None
        self.delete_gracefully(cur, REASON_PREEMPTED if preempted else REASON_DELETED)

    def update_pv(self, pv: PersistentVolume) -> None:
        self.volumes.update_pv(pv)

    def update_pvc(self, pvc: PersistentVolumeClaim) -> None:
        self.volumes.update_pvc(pvc)

    # ------------------------------------------------------------------ events
    def controller_event(
        self, kind: str, namespace: str, name: str, type_: str, reason: str, message: str
    ) -> None:
        """An event about a controller's object (not a pod)."""
        self.record.controller_event(kind, namespace, name, type_, reason, message)


def _set_condition(pod: Pod, cond: PodCondition) -> bool:
    """Set a condition as podutil.UpdatePodCondition; True if anything changed."""
    for i, c in enumerate(pod.conditions):
        if c.type == cond.type:
            if c.status == cond.status and c.reason == cond.reason and c.message == cond.message:
                return False
            t = c.last_transition_time if c.status == cond.status else cond.last_transition_time
            pod.conditions[i] = PodCondition(cond.type, cond.status, cond.reason, cond.message, t)
            return True
    pod.conditions.append(cond)
    return True
