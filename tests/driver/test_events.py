"""The inbound event port (driver/events.py): each typed event reaches the method of
its kind with the objects it carries, node and pod events reach the watchers and
storage-object events the object watchers, in subscription order."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest

from kubesched.api.storage import PersistentVolume, PersistentVolumeClaim, StorageClass
from kubesched.api.types import Node, Pod
from kubesched.driver.events import (
    Event,
    EventSink,
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
from kubesched.framework.events import EventResource
from kubesched.scheduler.config import default_config
from kubesched.scheduler.registry import in_tree_registry
from kubesched.scheduler.scheduler import Scheduler
from tests.builders import make_node, make_pod

N1 = make_node("n1").obj()
N1B = make_node("n1").label("zone", "a").obj()
P = make_pod("p").obj()
PB = make_pod("p").node("n1").obj()
PVC = PersistentVolumeClaim("data")
PVC_B = PersistentVolumeClaim("data", volume_name="pv-1")
PV = PersistentVolume("pv-1")
SC = StorageClass("fast", "example.com/csi")
PVC_RES = EventResource.PERSISTENT_VOLUME_CLAIM


class Log:
    """An EventSink writing down each call: (method, args)."""

    def __init__(
        self, name: str = "", calls: list[tuple[str, str, tuple[object, ...]]] | None = None
    ) -> None:
        self.name = name
        self.calls: list[tuple[str, str, tuple[object, ...]]] = [] if calls is None else calls

    def _log(self, method: str, *args: object) -> None:
        self.calls.append((self.name, method, args))

    def on_node_add(self, node: Node) -> None:
        self._log("on_node_add", node)

    def on_node_update(self, old: Node, new: Node) -> None:
        self._log("on_node_update", old, new)

    def on_node_delete(self, node: Node) -> None:
        self._log("on_node_delete", node)

    def on_pod_add(self, pod: Pod) -> None:
        self._log("on_pod_add", pod)

    def on_pod_update(self, old: Pod, new: Pod) -> None:
        self._log("on_pod_update", old, new)

    def on_pod_delete(self, pod: Pod) -> None:
        self._log("on_pod_delete", pod)

    def on_object_add(self, resource: str, obj: StorageObject) -> None:
        self._log("on_object_add", resource, obj)

    def on_object_update(self, resource: str, old: StorageObject, new: StorageObject) -> None:
        self._log("on_object_update", resource, old, new)

    def on_object_delete(self, resource: str, obj: StorageObject) -> None:
        self._log("on_object_delete", resource, obj)


@dataclass
class Subs:
    watchers: list[Watcher] = field(default_factory=list)
    object_watchers: list[ObjectWatcher] = field(default_factory=list)


CASES = [
    pytest.param(NodeAdded(N1), "on_node_add", (N1,), id="NodeAdded"),
    pytest.param(NodeUpdated(N1, N1B), "on_node_update", (N1, N1B), id="NodeUpdated"),
    pytest.param(NodeDeleted(N1), "on_node_delete", (N1,), id="NodeDeleted"),
    pytest.param(PodAdded(P), "on_pod_add", (P,), id="PodAdded"),
    pytest.param(PodUpdated(P, PB), "on_pod_update", (P, PB), id="PodUpdated"),
    pytest.param(PodDeleted(PB), "on_pod_delete", (PB,), id="PodDeleted"),
    pytest.param(ObjectAdded(PVC_RES, PVC), "on_object_add", (PVC_RES, PVC), id="ObjectAdded"),
    pytest.param(
        ObjectUpdated(PVC_RES, PVC, PVC_B),
        "on_object_update",
        (PVC_RES, PVC, PVC_B),
        id="ObjectUpdated",
    ),
    pytest.param(
        ObjectDeleted(EventResource.STORAGE_CLASS, SC),
        "on_object_delete",
        (EventResource.STORAGE_CLASS, SC),
        id="ObjectDeleted",
    ),
]


@pytest.mark.parametrize(("event", "method", "args"), CASES)
def test_deliver_calls_the_method_of_the_kind(
    event: Event, method: str, args: Sequence[object]
) -> None:
    sink = Log()
    event.to(sink)
    assert len(sink.calls) == 1
    _, got_method, got_args = sink.calls[0]
    assert got_method == method
    # The very objects the event carries (watchers compare old and new by identity).
    assert len(got_args) == len(args)
    assert all(g is w for g, w in zip(got_args, args, strict=True))


@pytest.mark.parametrize(("event", "method", "args"), CASES)
def test_publish_reaches_the_subscribers_of_its_kind_in_order(
    event: Event, method: str, args: Sequence[object]
) -> None:
    calls: list[tuple[str, str, tuple[object, ...]]] = []
    a, b, c = Log("a", calls), Log("b", calls), Log("c", calls)
    subs = Subs(watchers=[a, b], object_watchers=[c, a])
    event.publish(subs)
    is_object = method.startswith("on_object_")
    want = ["c", "a"] if is_object else ["a", "b"]
    assert [(name, m) for name, m, _ in calls] == [(name, method) for name in want]


def test_the_scheduler_is_an_event_sink() -> None:
    # The scheduler takes every kind through the port: a node added through it is in
    # its cache, a pending pod in its queue, and the node and the claim count as
    # cluster changes (a new pending pod is none: Scheduler.on_pod_add).
    sched = _scheduler()
    sink: EventSink = sched
    before = sched.changes
    for event in (NodeAdded(N1), PodAdded(P), ObjectAdded(PVC_RES, PVC)):
        event.to(sink)
    assert sched.cache.nodes.get("n1") is not None
    assert sched.queue.get_pod("p", "default") is not None
    assert sched.changes == before + 2


class _Clock:
    def now(self) -> int:
        return 0


class _Reader:
    def get_pod(self, namespace: str, name: str) -> Pod | None:
        return None


def _scheduler() -> Scheduler:
    registry = dict(in_tree_registry())
    return Scheduler(
        default_config(supported=registry.keys()),
        registry,
        clock=_Clock(),
        rng=random.Random(0),
        reader=_Reader(),  # type: ignore[arg-type]
        writer=None,  # type: ignore[arg-type]
        recorder=None,  # type: ignore[arg-type]
    )
