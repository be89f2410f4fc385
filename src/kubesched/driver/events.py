"""The scheduler's inbound event port: typed watch events and the sinks they reach.

A backend turns every change of the cluster into one event, in order, and delivers
it as an informer would: ``Node*``/``Pod*`` events to every ``Watcher``,
``Object*`` events (PersistentVolumeClaim, PersistentVolume, StorageClass,
CSINode, named by upstream's ``EventResource``) to every ``ObjectWatcher``. An
``EventSink`` (the scheduler, the ``RunRecord``) watches both. An update carries
the old and the new object (a change replaces the object), a deletion the last
state. ``event.to(sink)`` hands one event to one sink, ``event.publish(subscribers)``
to every subscriber of its kind in subscription order. Events are immutable by
convention (slotted, not frozen: a frozen dataclass costs 3x to create on the hot
path).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from kubesched.api.storage import CSINode, PersistentVolume, PersistentVolumeClaim, StorageClass
from kubesched.api.types import Node, Pod

StorageObject = PersistentVolumeClaim | PersistentVolume | StorageClass | CSINode
"""The kinds ``ObjectWatcher``s watch (besides nodes and pods)."""


class Watcher(Protocol):
    """Watches nodes and pods."""

    def on_node_add(self, node: Node) -> None: ...
    def on_node_update(self, old: Node, new: Node) -> None: ...
    def on_node_delete(self, node: Node) -> None: ...
    def on_pod_add(self, pod: Pod) -> None: ...
    def on_pod_update(self, old: Pod, new: Pod) -> None: ...
    def on_pod_delete(self, pod: Pod) -> None: ...


class ObjectWatcher(Protocol):
    """Watches the storage objects, by resource name (``PersistentVolumeClaim`` ...)."""

    def on_object_add(self, resource: str, obj: StorageObject) -> None: ...
    def on_object_update(self, resource: str, old: StorageObject, new: StorageObject) -> None: ...
    def on_object_delete(self, resource: str, obj: StorageObject) -> None: ...


class EventSink(Watcher, ObjectWatcher, Protocol):
    """Watches every kind: the scheduler's inbound port."""


class Subscribers(Protocol):
    """Who a backend delivers to, in this order."""

    @property
    def watchers(self) -> Sequence[Watcher]: ...

    @property
    def object_watchers(self) -> Sequence[ObjectWatcher]: ...


class _NodePodEvent:
    """A node or pod event: ``to`` hands it to one watcher, ``publish`` to every
    watcher of the subscribers, in subscription order."""

    __slots__ = ()

    def to(self, sink: Watcher) -> None:
        raise NotImplementedError

    def publish(self, subscribers: Subscribers) -> None:
        for w in subscribers.watchers:
            self.to(w)


class _StorageEvent:
    """A storage object event, handed to object watchers as ``_NodePodEvent``."""

    __slots__ = ()

    def to(self, sink: ObjectWatcher) -> None:
        raise NotImplementedError

    def publish(self, subscribers: Subscribers) -> None:
        for w in subscribers.object_watchers:
            self.to(w)


@dataclass(slots=True)
class NodeAdded(_NodePodEvent):
    node: Node

    def to(self, sink: Watcher) -> None:
        sink.on_node_add(self.node)


@dataclass(slots=True)
class NodeUpdated(_NodePodEvent):
    old: Node
    new: Node

    def to(self, sink: Watcher) -> None:
        sink.on_node_update(self.old, self.new)


@dataclass(slots=True)
class NodeDeleted(_NodePodEvent):
    node: Node

    def to(self, sink: Watcher) -> None:
        sink.on_node_delete(self.node)


@dataclass(slots=True)
class PodAdded(_NodePodEvent):
    pod: Pod

    def to(self, sink: Watcher) -> None:
        sink.on_pod_add(self.pod)


@dataclass(slots=True)
class PodUpdated(_NodePodEvent):
    old: Pod
    new: Pod

    def to(self, sink: Watcher) -> None:
        sink.on_pod_update(self.old, self.new)


@dataclass(slots=True)
class PodDeleted(_NodePodEvent):
    pod: Pod

    def to(self, sink: Watcher) -> None:
        sink.on_pod_delete(self.pod)


@dataclass(slots=True)
class ObjectAdded(_StorageEvent):
    resource: str
    obj: StorageObject

    def to(self, sink: ObjectWatcher) -> None:
        sink.on_object_add(self.resource, self.obj)


@dataclass(slots=True)
class ObjectUpdated(_StorageEvent):
    resource: str
    old: StorageObject
    new: StorageObject

    def to(self, sink: ObjectWatcher) -> None:
        sink.on_object_update(self.resource, self.old, self.new)


@dataclass(slots=True)
class ObjectDeleted(_StorageEvent):
    resource: str
    obj: StorageObject

    def to(self, sink: ObjectWatcher) -> None:
        sink.on_object_delete(self.resource, self.obj)


WatchEvent = NodeAdded | NodeUpdated | NodeDeleted | PodAdded | PodUpdated | PodDeleted
ObjectEvent = ObjectAdded | ObjectUpdated | ObjectDeleted
Event = WatchEvent | ObjectEvent
