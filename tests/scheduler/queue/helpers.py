"""Shared fixtures for the queue tests: PrioritySort's less and hints."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kubesched.api.types import NANOS, Pod
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventObject,
    EventResource,
    QueueingHint,
    QueueingHintFn,
)
from kubesched.framework.status import Code, Status
from kubesched.scheduler.queue import QueuedPodInfo, SchedulingQueue
from kubesched.scheduler.queue.scheduling_queue import PreEnqueueFn
from tests.fakes import FakeClock

SECOND = NANOS
MINUTE = 60 * NANOS

NODE_ADD = ClusterEvent(EventResource.NODE, ActionType.ADD)
PV_ADD = ClusterEvent("PersistentVolume", ActionType.ADD)
PV_UPDATE = ClusterEvent("PersistentVolume", ActionType.UPDATE)
PVC_ADD = ClusterEvent("PersistentVolumeClaim", ActionType.ADD)
CSI_NODE_UPDATE = ClusterEvent("storage.k8s.io/CSINode", ActionType.UPDATE)


def priority_less(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    """queuesort.PrioritySort.Less."""
    pa, pb = a.pod.priority, b.pod.priority
    return pa > pb or (pa == pb and a.timestamp < b.timestamp)


def hint_queue(pod: Pod, old: EventObject, new: EventObject) -> QueueingHint:
    return QueueingHint.QUEUE


def hint_skip(pod: Pod, old: EventObject, new: EventObject) -> QueueingHint:
    return QueueingHint.SKIP


def hint_error(pod: Pod, old: EventObject, new: EventObject) -> QueueingHint:
    raise RuntimeError("unexpected error")


Registry = Mapping[str, Sequence[tuple[ClusterEvent, QueueingHintFn | None]]]


def registry(spec: Registry) -> dict[str, list[ClusterEventWithHint]]:
    """{plugin: [(event, hint), ...]} -> the event_registry the queue takes."""
    return {p: [ClusterEventWithHint(e, h) for e, h in regs] for p, regs in spec.items()}


def allowlist_pre_enqueue(*allowed_labels: str, plugin: str = "preEnqueuePlugin") -> PreEnqueueFn:
    """Upstream test plugin: admits pods carrying one of the allowed label keys."""

    def run(pod: Pod) -> Status:
        if any(k in pod.labels for k in allowed_labels):
            return Status(Code.SUCCESS)
        return Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "pod name not in allowlists", plugin=plugin
        )

    return run


def make_queue(
    clock: FakeClock | None = None,
    reg: Registry | None = None,
    **kw: object,
) -> tuple[SchedulingQueue, FakeClock]:
    clock = clock if clock is not None else FakeClock(1_000 * SECOND)
    q = SchedulingQueue(priority_less, clock, event_registry=registry(reg or {}), **kw)  # type: ignore[arg-type]
    return q, clock


def names(pinfos: Sequence[QueuedPodInfo]) -> list[str]:
    return sorted(p.pod.name for p in pinfos)


def where(q: SchedulingQueue, pod: Pod) -> str:
    """Which structure holds the pod: active, backoff, unschedulable or none."""
    key = pod.key
    if any(p.key == key for p in q.pods_in_active_q()):
        return "active"
    if any(p.key == key for p in q.pods_in_backoff_q()):
        return "backoff"
    if any(p.key == key for p in q.unschedulable_pods()):
        return "unschedulable"
    return "none"


def pop_and_fail(q: SchedulingQueue, *plugins: str, pending: Sequence[str] = ()) -> QueuedPodInfo:
    """Pop the head and hand it back rejected by ``plugins`` (an error if none)."""
    p = q.pop()
    assert p is not None
    p.unschedulable_plugins = set(plugins)
    p.pending_plugins = set(pending)
    q.add_unschedulable_if_not_present(p, q.scheduling_cycle)
    return p


def clone(pod: Pod, **changes: object) -> Pod:
    """A new Pod object with the same fields as ``pod`` except ``changes``."""
    new = Pod.__new__(Pod)
    for slot in Pod.__slots__:
        setattr(new, slot, getattr(pod, slot))
    for k, v in changes.items():
        setattr(new, k, v)
    return new
