"""The cluster as the scheduler reads it: typed objects kept current by informers.

``ClusterCache(client)`` runs one ``Informer`` per kind the scheduler and its
plugins read (``CACHED_KINDS``: nodes, every pod whatever its scheduler or
state, PodDisruptionBudgets, namespaces, PriorityClasses, PVCs, PVs,
StorageClasses, CSINodes) and converts every object it delivers with
``kubesched.api.convert``'s readers, the ones the simulator's loader uses, into
``kubesched.api`` types. Each kind's objects are a ``TypedStore`` keyed as the
informer keys them (``namespace/name``; ``name`` for cluster-scoped kinds):
``cache.nodes.get("n1")``, ``cache.pods.items()``.

The API server has validated and defaulted what it serves (a pod's
``spec.priority`` is the admitted priority), so nothing is admitted or
validated again. An object the readers refuse (an ``InputError``: a value
kubesched does not model, or one newer than its readers) is not cached: its
previous version leaves the store too (as if deleted), a warning names it and
the reason once per resourceVersion, and ``TypedStore.unreadable`` lists it
until a readable version replaces it or it is deleted. Nothing else stops.

``on_change(kind, key, old, new)``, when given, is called after each store
change with the typed objects (``old`` None for an addition, ``new`` None for a
removal), on the informer's thread of that kind: in order per kind, in no
particular order across kinds. ``has_synced()`` is true once every kind's
first list is converted.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from typing import Any, Final, Generic, TypeVar

from kubesched.api import convert
from kubesched.api.convert import storage as convert_storage
from kubesched.api.errors import InputError
from kubesched.api.storage import CSINode, PersistentVolume, PersistentVolumeClaim, StorageClass
from kubesched.api.types import Namespace, Node, Pod, PodDisruptionBudget, PriorityClass
from kubesched.live.client import KubeClient, Raw, Resource
from kubesched.live.informer import Clock, Informer, Timing, key_of, version_of

log = logging.getLogger(__name__)

T = TypeVar("T")

Listener = Callable[[str, str, Any, Any], None]
"""``on_change(kind, key, old, new)``, see the module docstring."""

NODES: Final = Resource("", "v1", "nodes", "Node")
PODS: Final = Resource("", "v1", "pods", "Pod")
PDBS: Final = Resource("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget")
NAMESPACES: Final = Resource("", "v1", "namespaces", "Namespace")
PRIORITY_CLASSES: Final = Resource("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass")
PVCS: Final = Resource("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim")
PVS: Final = Resource("", "v1", "persistentvolumes", "PersistentVolume")
STORAGE_CLASSES: Final = Resource("storage.k8s.io", "v1", "storageclasses", "StorageClass")
CSINODES: Final = Resource("storage.k8s.io", "v1", "csinodes", "CSINode")

CACHED_KINDS: Final = (
    NAMESPACES,
    PRIORITY_CLASSES,
    STORAGE_CLASSES,
    CSINODES,
    PVS,
    PVCS,
    NODES,
    PDBS,
    PODS,
)
"""What a ``ClusterCache`` watches (its stores, in this order)."""


def _storage(kind: str) -> Callable[[Raw], Any]:
    return lambda raw: convert_storage.convert_storage_object(kind, raw)[0]


class TypedStore(Generic[T]):
    """One kind's converted objects by key; the handler of that kind's informer."""

    def __init__(
        self, resource: Resource, reader: Callable[[Raw], T], on_change: Listener | None
    ) -> None:
        self.resource = resource
        self._reader = reader
        self._on_change = on_change
        self._objects: dict[str, T] = {}
        self._lock = threading.Lock()
        self.unreadable: dict[str, str] = {}
        """Keys of objects the readers refused, and why."""

    # -- reading ---------------------------------------------------------------

    def get(self, key: str) -> T | None:
        with self._lock:
            return self._objects.get(key)

    def items(self) -> dict[str, T]:
        """The objects by key (a new dict; the objects are shared, do not mutate)."""
        with self._lock:
            return dict(self._objects)

    def __len__(self) -> int:
        with self._lock:
            return len(self._objects)

    # -- the informer's Handler ----------------------------------------------

    def on_add(self, obj: Raw, initial: bool) -> None:
        self._put(obj)

    def on_update(self, old: Raw, new: Raw) -> None:
        self._put(new)

    def on_delete(self, obj: Raw, final_state_unknown: bool) -> None:
        key = key_of(obj)
        with self._lock:
            previous = self._objects.pop(key, None)
            self.unreadable.pop(key, None)
        if previous is not None:
            self._notify(key, previous, None)

    def _put(self, raw: Raw) -> None:
        key = key_of(raw)
        converted = self._read(key, raw)
        with self._lock:
            previous = self._objects.get(key)
            if converted is None:
                self._objects.pop(key, None)
            else:
                self._objects[key] = converted
                self.unreadable.pop(key, None)
        if previous is not None or converted is not None:
            self._notify(key, previous, converted)

    def _read(self, key: str, raw: Raw) -> T | None:
        kind = self.resource.kind
        try:
            return self._reader(raw)
        except InputError as err:
            reason = str(err)
        except Exception as err:  # a reader's bug must not stop the informer
            log.exception("%s %s: conversion failed", kind, key)
            reason = f"conversion failed: {type(err).__name__}: {err}"
        with self._lock:
            repeated = self.unreadable.get(key) == reason
            self.unreadable[key] = reason
        if not repeated:
            log.warning(
                "%s %s (resourceVersion %s) left out of the cache: %s",
                kind,
                key,
                version_of(raw),
                reason,
            )
        return None

    def _notify(self, key: str, old: T | None, new: T | None) -> None:
        if self._on_change is not None:
            self._on_change(self.resource.kind, key, old, new)


class ClusterCache:
    """Typed stores of ``CACHED_KINDS`` fed by informers (see the module docstring)."""

    def __init__(
        self,
        client: KubeClient,
        on_change: Listener | None = None,
        clock: Clock | None = None,
        rng: random.Random | None = None,
        timing: Timing | None = None,
    ) -> None:
        self.namespaces = TypedStore[Namespace](
            NAMESPACES, lambda raw: convert.convert_namespace(raw)[0], on_change
        )
        self.priority_classes = TypedStore[PriorityClass](
            PRIORITY_CLASSES, lambda raw: convert.convert_priority_class(raw)[0], on_change
        )
        self.storage_classes = TypedStore[StorageClass](
            STORAGE_CLASSES, _storage("StorageClass"), on_change
        )
        self.csinodes = TypedStore[CSINode](CSINODES, _storage("CSINode"), on_change)
        self.pvs = TypedStore[PersistentVolume](PVS, _storage("PersistentVolume"), on_change)
        self.pvcs = TypedStore[PersistentVolumeClaim](
            PVCS, _storage("PersistentVolumeClaim"), on_change
        )
        self.nodes = TypedStore[Node](NODES, lambda raw: convert.convert_node(raw)[0], on_change)
        self.pdbs = TypedStore[PodDisruptionBudget](
            PDBS, lambda raw: convert.convert_pdb(raw)[0], on_change
        )
        self.pods = TypedStore[Pod](PODS, lambda raw: convert.convert_pod(raw)[0], on_change)
        stores: tuple[TypedStore[Any], ...] = (
            self.namespaces,
            self.priority_classes,
            self.storage_classes,
            self.csinodes,
            self.pvs,
            self.pvcs,
            self.nodes,
            self.pdbs,
            self.pods,
        )
        self.informers = tuple(
            Informer(
                client,
                store.resource,
                store,
                clock=clock,
                rng=rng,
                timing=timing if timing is not None else Timing(),
            )
            for store in stores
        )
        """One per kind, in ``CACHED_KINDS`` order."""

    def start(self) -> ClusterCache:
        for informer in self.informers:
            informer.start()
        return self

    def stop(self) -> None:
        for informer in self.informers:
            informer.stop()

    def has_synced(self) -> bool:
        return all(i.has_synced() for i in self.informers)

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        """Block until every kind's first list is in (True) or ``timeout`` real
        seconds pass (the one timeout covers all kinds)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for informer in self.informers:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not informer.wait_for_sync(left):
                return False
        return True
