"""The backend-neutral record of a run: what happened, for the reports.

``RunRecord`` is fed only through ports, never by reading a backend's store:

- as an ``EventSink`` it keeps each pod's life (``PodLife``: created, scheduled,
  finished, deleted, the pod as last seen), the ``--watch`` lines, and the nodes,
  claims and volumes as they are now;
- as the ``EventRecorder`` (``event``, ``preemption``, ``controller_event``) it
  keeps the Kubernetes events and preemptions;
- ``deleting(uid, reason)`` says why the backend deletes a pod (``Preempted``,
  ``Deleted``, ``NodeDeleted``); the first reason of a pod's life is kept, given
  before or after its add event.

Times come from the clock at delivery (a backend delivers every event of an
instant before its clock moves on).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kubesched.api.storage import PersistentVolume, PersistentVolumeClaim
from kubesched.api.types import FAILED, SUCCEEDED, Node, Pod
from kubesched.driver.events import StorageObject
from kubesched.framework.events import EventResource
from kubesched.framework.ports import Clock

_TERMINAL = (SUCCEEDED, FAILED)


@dataclass(slots=True)
class PodLife:
    """A pod's life, for the report (one per uid)."""

    pod: Pod
    """The pod as last seen."""
    created_at: int
    scheduled_at: int | None = None
    finished_at: int | None = None
    """When it became Succeeded or Failed (None: it never did while watched)."""
    deleted_at: int | None = None
    deletion_reason: str | None = None


@dataclass(slots=True)
class EventRecord:
    time: int
    type: str
    reason: str
    object: str
    related: str | None
    message: str
    kind: str = "Pod"
    """The kind of ``object`` (``ReplicaSet`` for a controller's FailedCreate)."""


@dataclass(slots=True)
class PreemptionRecord:
    time: int
    preemptor: str
    node: str
    victims: list[str]
    num_pdb_violations: int


@dataclass(slots=True)
class WatchLine:
    """One pod change, for ``--watch``."""

    time: int
    pod: Pod


class RunRecord:
    """What happened in a run (see the module docstring)."""

    def __init__(self, clock: Clock, *, watch: bool = False) -> None:
        self._now = clock.now
        self.watch = watch
        self.lives: dict[str, PodLife] = {}
        """Every pod that ever existed, by uid, in the order they appeared."""
        self.events: list[EventRecord] = []
        self.preemptions: list[PreemptionRecord] = []
        self.watch_lines: list[WatchLine] = []
        """Every pod change (only when ``watch``)."""
        self.nodes: dict[str, Node] = {}
        """The nodes that exist now, by name."""
        self.pvcs: dict[str, PersistentVolumeClaim] = {}
        """The claims that exist now, by ``namespace/name``."""
        self.pvs: dict[str, PersistentVolume] = {}
        """The volumes that exist now, by name."""
        self.storage_used = False
        """Some storage object existed during the run (the report then shows them)."""
        self._reasons: dict[str, str] = {}

    # ------------------------------------------------------------------ deletions
    def deleting(self, uid: str, reason: str) -> None:
        """The backend deletes pod ``uid`` for ``reason`` (the first reason stays)."""
        life = self.lives.get(uid)
        if life is not None and life.deleted_at is None:
            if life.deletion_reason is None:
                life.deletion_reason = reason
        else:
            # Its add event is not delivered yet (created and deleted in one instant).
            self._reasons.setdefault(uid, reason)

    # ------------------------------------------------------------------ nodes
    def on_node_add(self, node: Node) -> None:
        self.nodes[node.name] = node

    def on_node_update(self, old: Node, new: Node) -> None:
        self.nodes[new.name] = new

    def on_node_delete(self, node: Node) -> None:
        self.nodes.pop(node.name, None)

    # ------------------------------------------------------------------ pods
    def on_pod_add(self, pod: Pod) -> None:
        now = self._now()
        self.lives[pod.uid] = PodLife(
            pod,
            now,
            scheduled_at=now if pod.node_name else None,
            deletion_reason=self._reasons.pop(pod.uid, None),
        )
        if self.watch:
            self.watch_lines.append(WatchLine(now, pod))

    def on_pod_update(self, old: Pod, new: Pod) -> None:
        try:
            life = self.lives[new.uid]
        except KeyError:
            self.on_pod_add(new)  # first seen changing (a live run's pod from before)
            return
        now = self._now()
        life.pod = new
        if new.node_name and not old.node_name:
            life.scheduled_at = now
        if new.phase in _TERMINAL and old.phase not in _TERMINAL:
            life.finished_at = now
        if self.watch:
            self.watch_lines.append(WatchLine(now, new))

    def on_pod_delete(self, pod: Pod) -> None:
        life = self.lives.get(pod.uid)
        if life is None:
            self.on_pod_add(pod)
            life = self.lives[pod.uid]
        now = self._now()
        life.pod = pod
        life.deleted_at = now
        if life.deletion_reason is None:
            life.deletion_reason = self._reasons.pop(pod.uid, None)
        if self.watch:
            self.watch_lines.append(WatchLine(now, pod))

    # ------------------------------------------------------------------ storage objects
    def on_object_add(self, resource: str, obj: StorageObject) -> None:
        self.storage_used = True
        self._keep(resource, obj)

    def on_object_update(self, resource: str, old: StorageObject, new: StorageObject) -> None:
        self._keep(resource, new)

    def on_object_delete(self, resource: str, obj: StorageObject) -> None:
        if resource == EventResource.PERSISTENT_VOLUME_CLAIM:
            assert isinstance(obj, PersistentVolumeClaim)
            self.pvcs.pop(obj.key, None)
        elif resource == EventResource.PERSISTENT_VOLUME:
            assert isinstance(obj, PersistentVolume)
            self.pvs.pop(obj.name, None)

    def _keep(self, resource: str, obj: StorageObject) -> None:
        if resource == EventResource.PERSISTENT_VOLUME_CLAIM:
            assert isinstance(obj, PersistentVolumeClaim)
            self.pvcs[obj.key] = obj
        elif resource == EventResource.PERSISTENT_VOLUME:
            assert isinstance(obj, PersistentVolume)
            self.pvs[obj.name] = obj

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
        self.events.append(
            EventRecord(
                self._now(),
                type_,
                reason,
                regarding.key,
                related.key if related is not None else None,
                message,
            )
        )

    def preemption(
        self, preemptor: Pod, node: str, victims: Sequence[Pod], num_pdb_violations: int
    ) -> None:
        self.preemptions.append(
            PreemptionRecord(
                self._now(),
                preemptor.key,
                node,
                [v.key for v in victims],
                num_pdb_violations,
            )
        )

    def controller_event(
        self, kind: str, namespace: str, name: str, type_: str, reason: str, message: str
    ) -> None:
        """An event about a controller's object (not a pod)."""
        self.events.append(
            EventRecord(self._now(), type_, reason, f"{namespace}/{name}", None, message, kind)
        )
