"""A live cluster as the scheduler's backend: the informer caches, the
``ClusterReader`` over them, and the ``driver.loop.Backend`` on wall-clock time.

Informers (one thread each) call ``notify(kind, change, raw)`` with every
ADDED / MODIFIED / DELETED object as the API server sent it (a raw dict); the
notifications wait in one queue, in arrival order. ``flush`` (the scheduling
thread, called by ``driver.loop.drive``) converts each with
``kubesched.api.convert``'s readers, updates the typed caches and publishes the
typed event (``driver.events``) to the subscribers (the scheduler) — so the
scheduler's state only changes between its cycles, as with the simulated
cluster. An object that fails conversion is logged and counted in
``rejected`` (its previous state, if any, stays cached); it never stops the
scheduler.

Pods arrive admitted: their ``spec.priority`` and ``spec.preemptionPolicy``
are the server's Priority admission's, taken as they are.

The clock is the injected wall clock (integer nanoseconds since the Unix epoch,
the unit of every timestamp the API readers produce). ``next_time`` is one
``poll`` ahead (a live cluster always may change); ``advance(t)`` waits until
``t`` or until a notification (or a ``post``-ed call: an asynchronous binding's
outcome, run by ``flush`` in turn) arrives, whichever is first; ``stop()`` wakes it
and makes ``stopping`` true (``drive`` then ends its loop).

PersistentVolumes and claims keep their raw dicts too (``raw_volume``: the body
``LiveWriter`` PUTs back, at the cached resourceVersion), and an object the
writer wrote is ``notify``-ed with the server's answer at once (upstream's
assume cache: PreBind's check sees its own writes without waiting for the
watch). So that an older answer never replaces a newer state, a PV or claim
whose resourceVersion is not newer than the cached one (both integers, as the
assume cache compares them) changes nothing.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, Final

from kubesched.api.convert import convert_namespace, convert_node, convert_pdb, convert_pod
from kubesched.api.convert.pod import SpecFields, pod_spec_reusing
from kubesched.api.convert.storage import convert_storage_object
from kubesched.api.errors import InputError
from kubesched.api.storage import CSINode, PersistentVolume, PersistentVolumeClaim, StorageClass
from kubesched.api.types import (
    PREEMPT_LOWER_PRIORITY,
    Namespace,
    Node,
    Pod,
    PodDisruptionBudget,
    Time,
)
from kubesched.driver.events import (
    NodeAdded,
    NodeDeleted,
    NodeUpdated,
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
from kubesched.framework.ports import StorageLister
from kubesched.live.informer import key_of

log = logging.getLogger(__name__)

ADDED: Final = "ADDED"
MODIFIED: Final = "MODIFIED"
DELETED: Final = "DELETED"

DEFAULT_POLL: Final = 1_000_000_000
"""How far ahead ``next_time`` looks (ns): the queue's timers are checked at least
this often."""

Raw = dict[str, Any]


def wall_clock() -> Time:
    return time.time_ns()


class LiveStorage:
    """``StorageLister`` over the storage caches."""

    def __init__(self) -> None:
        self.pvcs: dict[str, PersistentVolumeClaim] = {}
        self.pvs: dict[str, PersistentVolume] = {}
        self.classes: dict[str, StorageClass] = {}
        self.csi_nodes: dict[str, CSINode] = {}

    def get_pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return self.pvcs.get(f"{namespace}/{name}")

    def get_pv(self, name: str) -> PersistentVolume | None:
        return self.pvs.get(name)

    def list_pvs(self, storage_class: str) -> Sequence[PersistentVolume]:
        return [pv for pv in self.pvs.values() if pv.storage_class_name == storage_class]

    def get_storage_class(self, name: str) -> StorageClass | None:
        return self.classes.get(name)

    def get_csi_node(self, name: str) -> CSINode | None:
        return self.csi_nodes.get(name)

    def table_of(self, obj: StorageObject) -> tuple[dict[str, Any], str]:
        """The cache ``obj`` belongs in, and its key there."""
        if isinstance(obj, PersistentVolumeClaim):
            return self.pvcs, f"{obj.namespace}/{obj.name}"
        if isinstance(obj, PersistentVolume):
            return self.pvs, obj.name
        if isinstance(obj, StorageClass):
            return self.classes, obj.name
        return self.csi_nodes, obj.name


_CALL: Final = "call"
"""The kind of a ``post``-ed call in the queue."""

_STORAGE_KINDS: Final = ("PersistentVolumeClaim", "PersistentVolume", "StorageClass", "CSINode")
_VOLUME_KINDS: Final = ("PersistentVolumeClaim", "PersistentVolume")
"""The kinds whose raw objects are kept (``raw_volume``)."""


def _version(raw: Raw | None) -> int | None:
    """An object's resourceVersion as an integer (None: absent or not a number)."""
    if raw is None:
        return None
    try:
        return int((raw.get("metadata") or {}).get("resourceVersion") or "")
    except ValueError:
        return None


class LiveCluster:
    """The informers' caches, the ``ClusterReader`` and the live ``Backend``."""

    def __init__(self, clock: Callable[[], Time] = wall_clock, poll: int = DEFAULT_POLL) -> None:
        self._clock = clock
        self.poll = poll
        self.pods: dict[str, Pod] = {}
        self._specs: dict[str, tuple[Any, SpecFields]] = {}
        """Per pod: its latest raw spec and what it converted to (``pod_spec_reusing``)."""
        self.nodes: dict[str, Node] = {}
        self._pdbs: dict[str, PodDisruptionBudget] = {}
        self.namespaces: dict[str, Namespace] = {}
        self._storage = LiveStorage()
        self.watchers: list[Watcher] = []
        self.object_watchers: list[ObjectWatcher] = []
        self.rejected = 0
        """Notifications whose object failed conversion (logged)."""
        self._queue: deque[tuple[str, str, Any]] = deque()
        self._wake = threading.Condition()
        self.stopped = threading.Event()
        """Set by ``stop()``: what ``drive`` and a waiting binding cycle
        (``CachePoller``) watch."""
        self._volume_raws: dict[tuple[str, str], Raw] = {}
        self._raws_lock = threading.Lock()

    # ------------------------------------------------------------------ informers' side
    def notify(self, kind: str, change: str, raw: Raw) -> None:
        """One change of one object (any thread)."""
        with self._wake:
            self._queue.append((kind, change, raw))
            self._wake.notify_all()

    def post(self, call: Callable[[], None]) -> None:
        """Run ``call`` on the scheduling thread, in turn with the notifications
        (any thread: the outcome of an asynchronous binding)."""
        with self._wake:
            self._queue.append((_CALL, "", call))
            self._wake.notify_all()

    @property
    def stopping(self) -> bool:
        """``stop()`` was called."""
        return self.stopped.is_set()

    def stop(self) -> None:
        """Stop waiting and make ``stopping`` true (any thread)."""
        self.stopped.set()
        with self._wake:
            self._wake.notify_all()

    def raw_volume(self, kind: str, key: str) -> Raw | None:
        """The cached raw PersistentVolume (key: its name) or claim (key:
        ``namespace/name``), as the server last sent it; None when not cached
        (any thread; the dict must not be changed)."""
        with self._raws_lock:
            return self._volume_raws.get((kind, key))

    # ------------------------------------------------------------------ Backend
    @property
    def now(self) -> Time:
        return self._clock()

    def run_due(self) -> int:
        return 0

    def next_time(self) -> int | None:
        return self._clock() + self.poll

    def advance(self, to: int) -> None:
        with self._wake:
            while not self._queue and not self.stopping:
                left = to - self._clock()
                if left <= 0:
                    return
                self._wake.wait(left / 1e9)

    def flush(self) -> int:
        n = 0
        while True:
            with self._wake:
                if not self._queue:
                    return n
                kind, change, raw = self._queue.popleft()
            n += 1
            if kind is _CALL:
                raw()
                continue
            try:
                self._apply(kind, change, raw)
            except InputError as err:
                self.rejected += 1
                log.warning("%s %s: ignored: %s", kind, key_of(raw), err)

    def _apply(self, kind: str, change: str, raw: Raw) -> None:
        if kind == "Pod":
            self._pod(change, raw)
        elif kind == "Node":
            self._node(change, raw)
        elif kind == "PodDisruptionBudget":
            pdb = convert_pdb(raw)[0]
            if change == DELETED:
                self._pdbs.pop(pdb.key, None)
            else:
                self._pdbs[pdb.key] = pdb
        elif kind == "Namespace":
            ns = convert_namespace(raw)[0]
            if change == DELETED:
                self.namespaces.pop(ns.name, None)
            else:
                self.namespaces[ns.name] = ns
        elif kind in _STORAGE_KINDS:
            self._storage_object(kind, change, raw)

    def _pod(self, change: str, raw: Raw) -> None:
        spec = raw.get("spec")
        key = key_of(raw)
        fields = pod_spec_reusing(spec, self._specs.get(key))
        pod, priority, policy = convert_pod(raw, fields)
        if change == DELETED:
            self._specs.pop(key, None)
        else:
            self._specs[key] = (spec, fields)
        pod.priority = priority or 0
        pod.preemption_policy = policy or PREEMPT_LOWER_PRIORITY
        old = self.pods.get(pod.key)
        if change == DELETED:
            if old is not None:
                del self.pods[pod.key]
                PodDeleted(old).publish(self)
            return
        self.pods[pod.key] = pod
        if old is None:
            PodAdded(pod).publish(self)
        elif old.uid != pod.uid:  # replaced between two notifications
            PodDeleted(old).publish(self)
            PodAdded(pod).publish(self)
        else:
            PodUpdated(old, pod).publish(self)

    def _node(self, change: str, raw: Raw) -> None:
        node = convert_node(raw)[0]
        old = self.nodes.get(node.name)
        if change == DELETED:
            if old is not None:
                del self.nodes[node.name]
                NodeDeleted(old).publish(self)
            return
        self.nodes[node.name] = node
        if old is None:
            NodeAdded(node).publish(self)
        else:
            NodeUpdated(old, node).publish(self)

    def _storage_object(self, kind: str, change: str, raw: Raw) -> None:
        obj = convert_storage_object(kind, raw)[0]
        table, key = self._storage.table_of(obj)
        old: StorageObject | None = table.get(key)
        volume = kind in _VOLUME_KINDS
        if change == DELETED:
            if volume:
                with self._raws_lock:
                    self._volume_raws.pop((kind, key), None)
            if old is not None:
                del table[key]
                ObjectDeleted(kind, old).publish(self)
            return
        if volume:
            with self._raws_lock:
                cached = _version(self._volume_raws.get((kind, key)))
                new = _version(raw)
                if old is not None and cached is not None and new is not None and new <= cached:
                    return  # an answer the cache has seen already, or older
                self._volume_raws[(kind, key)] = raw
        table[key] = obj
        if old is None:
            ObjectAdded(kind, obj).publish(self)
        else:
            ObjectUpdated(kind, old, obj).publish(self)

    # ------------------------------------------------------------------ ClusterReader
    def get_pod(self, namespace: str, name: str) -> Pod | None:
        return self.pods.get(f"{namespace}/{name}")

    def pdbs(self) -> Sequence[PodDisruptionBudget]:
        return list(self._pdbs.values())

    def namespace(self, name: str) -> Namespace | None:
        return self.namespaces.get(name)

    def storage(self) -> StorageLister:
        return self._storage
