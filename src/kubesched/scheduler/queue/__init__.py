"""The scheduling queue and the nominator (upstream ``pkg/scheduler/backend/queue``,
v1.36, with SchedulerQueueingHints and SchedulerPopFromBackoffQ on).

Single-threaded and clock-driven: nothing blocks, nothing runs by itself.
activeQ (``active``) breaks QueueSort ties FIFO by timestamp assignment order, as
distinct real-clock timestamps do upstream; backoffQ (``backoff``) holds rejected
and errored pods; the pool (``unschedulable``) rejected and PreEnqueue-gated pods;
the nominator maps nodes to nominated pods in insertion order.

``SchedulingQueue`` takes ``event_registry`` (plugin name -> the plugin's
``events_to_register()``, rules in ``hints.HintRegistry``), ``pre_enqueue`` (the
profile's PreEnqueue plugins), an optional ``sort_key`` ordering exactly as ``less``
(``priority_sort_key``: heap comparisons run in C, 2-4x faster) and an optional
``pod_lister(namespace, name)`` with which the nominator refuses gone or bound pods.
A popped pod is *in flight* until ``add_unschedulable_if_not_present`` or ``done``.
"""

from kubesched.scheduler.queue.events import node_update_events, pod_update_events
from kubesched.scheduler.queue.hints import HintRegistry, QueueingStrategy
from kubesched.scheduler.queue.metrics import QueueMetrics
from kubesched.scheduler.queue.nominator import Nominator
from kubesched.scheduler.queue.queued_pod import QueuedPodInfo
from kubesched.scheduler.queue.scheduling_queue import (
    DEFAULT_POD_INITIAL_BACKOFF,
    DEFAULT_POD_MAX_BACKOFF,
    DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
    AlreadyQueuedError,
    SchedulingQueue,
    priority_sort_key,
)

__all__ = [
    "DEFAULT_POD_INITIAL_BACKOFF",
    "DEFAULT_POD_MAX_BACKOFF",
    "DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION",
    "AlreadyQueuedError",
    "HintRegistry",
    "Nominator",
    "QueueMetrics",
    "QueuedPodInfo",
    "QueueingStrategy",
    "SchedulingQueue",
    "node_update_events",
    "pod_update_events",
    "priority_sort_key",
]
