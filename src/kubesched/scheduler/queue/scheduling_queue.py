"""SchedulingQueue: activeQ, backoffQ, the unschedulable pool and the nominator
(upstream PriorityQueue, backend/queue/scheduling_queue.go, with
SchedulerQueueingHints and SchedulerPopFromBackoffQ on).

Single-threaded: nothing blocks and nothing runs in the background. Upstream's
two goroutines become ``flush_backoff_q_completed`` (every whole second) and
``flush_unschedulable_pods_leftover`` (every 30 s from construction); the
owner asks ``next_timer_deadline()`` when one of them next matters and calls
``run_timers()`` at that time.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

from kubesched.api.types import NANOS, Pod, Time
from kubesched.framework.events import (
    ASSIGNED_POD_ADD,
    FORCE_ACTIVATE,
    UNSCHEDULABLE_TIMEOUT,
    UNSCHEDULED_POD_ADD,
    ClusterEvent,
    ClusterEventWithHint,
    EventObject,
)
from kubesched.framework.ports import Clock
from kubesched.framework.results import NominatingInfo
from kubesched.framework.status import Status
from kubesched.framework.types import PodInfo
from kubesched.scheduler.queue.active import ActiveQueue, InFlightEvent
from kubesched.scheduler.queue.backoff import ORDERING_WINDOW, BackoffQueue, align_to_window
from kubesched.scheduler.queue.events import (
    BACKOFF_COMPLETE,
    FORCE_ACTIVATE_LABEL,
    SCHEDULE_ATTEMPT_FAILURE,
    UNSCHEDULED_POD_UPDATE,
    pod_update_events,
)
from kubesched.scheduler.queue.heap import SortKey
from kubesched.scheduler.queue.hints import (
    HintRegistry,
    QueueingStrategy,
    is_pod_worth_requeuing,
    match_any_cluster_event,
)
from kubesched.scheduler.queue.metrics import (
    ACTIVE,
    BACKOFF,
    GATED,
    UNSCHEDULABLE,
    QueueMetrics,
)
from kubesched.scheduler.queue.nominator import Nominator, PodLister
from kubesched.scheduler.queue.queued_pod import QueuedPodInfo
from kubesched.scheduler.queue.unschedulable import UnschedulablePods

DEFAULT_POD_INITIAL_BACKOFF: Final = 1 * NANOS
DEFAULT_POD_MAX_BACKOFF: Final = 10 * NANOS
DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION: Final = 5 * 60 * NANOS
DEFAULT_MAX_IN_UNSCHEDULABLE: Final = DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION
LEFTOVER_FLUSH_PERIOD: Final = 30 * NANOS


QueueSortLess = Callable[[QueuedPodInfo, QueuedPodInfo], bool]
PreEnqueueFn = Callable[[Pod], Status]
"""Runs the profile's PreEnqueue plugins; a non-success status gates the pod and
must name the rejecting plugin in ``status.plugin``."""
PreEnqueueCheck = Callable[[Pod], bool]

_UNSCHEDULED_POD_ADD_LABEL: Final = UNSCHEDULED_POD_ADD.label()
_UNSCHEDULED_POD_UPDATE_LABEL: Final = UNSCHEDULED_POD_UPDATE.label()


class AlreadyQueuedError(ValueError):
    """``add_unschedulable_if_not_present`` found the pod already queued."""


def priority_sort_key(pinfo: QueuedPodInfo) -> tuple[int, int]:
    """A sort key equivalent to the default QueueSort, PrioritySort.Less
    (higher priority first, then the older timestamp)."""
    return (-pinfo.pod_info.pod.priority, pinfo.timestamp)


def active_sort_key(
    less: QueueSortLess, sort_key: Callable[[QueuedPodInfo], Any] | None
) -> SortKey:
    """The activeQ order: the QueueSort order, then the order in which timestamps
    were assigned (``seq``), which is what distinct real-clock timestamps give.

    With ``sort_key`` (which must order exactly as ``less``) keys are plain
    tuples compared in C; otherwise every comparison calls ``less``.
    """
    if sort_key is not None:
        key = sort_key
        return lambda p: (key(p), p.seq)

    def cmp(a: QueuedPodInfo, b: QueuedPodInfo) -> int:
        if less(a, b):
            return -1
        if less(b, a):
            return 1
        return (a.seq > b.seq) - (a.seq < b.seq)

    return functools.cmp_to_key(cmp)


class SchedulingQueue:
    """See the package docstring for the contract of each method."""

    def __init__(
        self,
        less: QueueSortLess,
        clock: Clock,
        *,
        pod_initial_backoff: int = DEFAULT_POD_INITIAL_BACKOFF,
        pod_max_backoff: int = DEFAULT_POD_MAX_BACKOFF,
        pod_max_in_unschedulable_pods_duration: int = DEFAULT_MAX_IN_UNSCHEDULABLE,
        pre_enqueue: PreEnqueueFn | None = None,
        event_registry: Mapping[str, Sequence[ClusterEventWithHint]] | None = None,
        metrics: QueueMetrics | None = None,
        pod_lister: PodLister | None = None,
        sort_key: Callable[[QueuedPodInfo], Any] | None = None,
    ) -> None:
        self._clock = clock
        self._pre_enqueue = pre_enqueue
        self.metrics = metrics if metrics is not None else QueueMetrics()
        self.hints = HintRegistry(event_registry or {})
        self.max_in_unschedulable_pods_duration = pod_max_in_unschedulable_pods_duration
        self._seq = itertools.count(1)
        self._started_at: Time = clock.now()

        self._active_key = active_sort_key(less, sort_key)
        self._backoff = BackoffQueue(
            clock, pod_initial_backoff, pod_max_backoff, self._active_key, self.metrics
        )
        self._active = ActiveQueue(self._active_key, self._backoff, self.metrics)
        self._unsched = UnschedulablePods(self.metrics, self._leftover_movable)
        self._nominator = Nominator(pod_lister, self._queued_pod_info)

    # ------------------------------------------------------------------ queries
    @property
    def scheduling_cycle(self) -> int:
        """Number of pods popped so far."""
        return self._active.scheduling_cycle

    def pending_pods(self) -> dict[str, int]:
        """Sizes for ``scheduler_pending_pods{queue}``: active, backoff, unschedulable, gated."""
        gated = self._unsched.gated_count()
        return {
            ACTIVE: len(self._active),
            BACKOFF: len(self._backoff),
            UNSCHEDULABLE: len(self._unsched) - gated,
            GATED: gated,
        }

    def pods_in_active_q(self) -> list[QueuedPodInfo]:
        return self._active.pods()

    def pods_in_backoff_q(self) -> list[QueuedPodInfo]:
        return self._backoff.pods()

    def unschedulable_pods(self) -> list[QueuedPodInfo]:
        return list(self._unsched)

    def waiting_pods(self) -> list[QueuedPodInfo]:
        """Pods only a timer would move: every pod in backoffQ (both heaps), and
        the pool's pods the leftover flush can move (not gated, or gated by a
        plugin that registered UnschedulableTimeout)."""
        return self._backoff.pods() + [p for p in self._unsched if self._leftover_movable(p)]

    def in_flight_pods(self) -> list[Pod]:
        return self._active.in_flight_pods()

    def in_flight_log(self) -> list[InFlightEvent | Pod]:
        return self._active.in_flight_log()

    def get_pod(self, name: str, namespace: str) -> QueuedPodInfo | None:
        """The queued entry of a pod in any of the three structures."""
        key = f"{namespace}/{name}"
        return (
            self._backoff.get(key)
            or self._unsched.get(Pod(name, namespace))
            or self._active.get(key)
        )

    def is_backing_off(self, pinfo: QueuedPodInfo) -> bool:
        return self._backoff.is_backing_off(pinfo)

    # ------------------------------------------------------------- pod events
    def new_queued_pod_info(self, pod: Pod, *plugins: str) -> QueuedPodInfo:
        """A fresh entry stamped with the current time (upstream newQueuedPodInfo)."""
        return QueuedPodInfo(
            PodInfo(pod),
            self._clock.now(),
            seq=next(self._seq),
            unschedulable_plugins=set(plugins),
        )

    def add(self, pod: Pod) -> None:
        """A new unscheduled pod: activeQ, or the pool if PreEnqueue gates it."""
        self._move_to_active_q(self.new_queued_pod_info(pod), _UNSCHEDULED_POD_ADD_LABEL, False)

    def update(self, old_pod: Pod | None, new_pod: Pod) -> None:
        """An unscheduled pod changed (upstream PriorityQueue.Update). In flight: its
        update events are logged for replay; in activeQ or backoffQ: the entry takes
        the new pod in place; in the pool: likewise, then each of
        ``pod_update_events(old, new)`` runs through its rejector hints until one
        moves it; nowhere: added to activeQ. The nominator is updated unless new."""
        events = (
            pod_update_events(old_pod, new_pod) if old_pod is not None else [UNSCHEDULED_POD_UPDATE]
        )
        if self._active.add_events_if_pod_in_flight(old_pod, new_pod, events):
            return
        if old_pod is not None:
            key = old_pod.key
            pinfo = self._active.update(new_pod, key) or self._backoff.update(new_pod, key)
            if pinfo is not None:
                self._nominator.update_nominated_pod(old_pod, pinfo.pod_info)
                return
        pinfo = self._unsched.get(new_pod)
        if pinfo is not None:
            pinfo.update(new_pod)
            self._nominator.update_nominated_pod(old_pod, pinfo.pod_info)
            for ev in events:
                strategy = is_pod_worth_requeuing(self.hints, pinfo, ev, old_pod, new_pod)
                queue = self._requeue(pinfo, strategy, ev.label())
                if queue != UNSCHEDULABLE:
                    break
            return
        self._move_to_active_q(
            self.new_queued_pod_info(new_pod), _UNSCHEDULED_POD_UPDATE_LABEL, False
        )

    def delete(self, pod: Pod) -> None:
        """An unscheduled pod was deleted: drop it from the nominator and any queue."""
        self._nominator.delete_nominated_pod_if_exists(pod)
        key = pod.key
        if self._active.delete(key) is not None:
            return
        if self._backoff.delete(key) is not None:
            return
        self._unsched.delete(pod)

    def activate(self, pods: Iterable[Pod]) -> None:
        """Move these pods from the pool / backoffQ (skipping PreEnqueue) to activeQ
        (event ForceActivate); an in-flight pod gets a ForceActivate wildcard event
        targeted at it, so it is requeued when it comes back; others are ignored."""
        for pod in pods:
            if self._activate(pod):
                continue
            self._active.add_events_if_pod_in_flight(None, pod, [FORCE_ACTIVATE])

    def _activate(self, pod: Pod) -> bool:
        pinfo = self._unsched.get(pod)
        from_backoff = False
        if pinfo is None:
            pinfo = self._backoff.delete(pod.key)
            if pinfo is None:
                return False
            from_backoff = True
        return self._move_to_active_q(pinfo, FORCE_ACTIVATE_LABEL, from_backoff)

    # ------------------------------------------------------------ the cycle
    def pop(self) -> QueuedPodInfo | None:
        """The head of activeQ, else of the backoff heap even before its backoff
        expired (never the error heap), else None; the pod is then in flight."""
        pinfo = self._active.pop()
        if pinfo is not None:
            pinfo.backoff_expiration = None
        return pinfo

    def done(self, uid: str) -> None:
        """The attempt for a popped pod is over (bound, skipped or dropped)."""
        self._active.done(uid)

    def add_unschedulable_if_not_present(
        self, pinfo: QueuedPodInfo, pod_scheduling_cycle: int
    ) -> None:
        """Hand a popped pod back after a failed attempt; always ends its flight.

        Raises AlreadyQueuedError if the pod is already queued. No rejector plugins
        (an error) counts a consecutive error, else an unschedulable attempt (errors
        reset); the timestamp is refreshed. The events logged during the flight are
        replayed through its rejector hints: none helps -> the pool; Queue ->
        backoffQ/activeQ; a Pending plugin's Queue -> activeQ. ``pod_scheduling_cycle``
        only matters with hints off (kept for parity).
        """
        try:
            pod = pinfo.pod
            if self._unsched.get(pod) is not None:
                raise AlreadyQueuedError(f"Pod {pod.key} is already present in unschedulable queue")
            if self._active.has(pinfo.key):
                raise AlreadyQueuedError(f"Pod {pod.key} is already present in the active queue")
            if self._backoff.has(pinfo.key):
                raise AlreadyQueuedError(f"Pod {pod.key} is already present in the backoff queue")
            rejectors = pinfo.rejector_plugins()
            if not rejectors:
                pinfo.consecutive_errors_count += 1
            else:
                pinfo.unschedulable_count += 1
                pinfo.consecutive_errors_count = 0
            pinfo.timestamp = self._clock.now()
            pinfo.seq = next(self._seq)
            pinfo.backoff_expiration = None
            pinfo.was_flushed_from_unschedulable = False
            for plugin in rejectors:
                self.metrics.unschedulable_reason(plugin, +1)
            pinfo.queued_by = ""
            strategy = self._hint_for_in_flight_pod(pinfo)
            self._requeue(pinfo, strategy, SCHEDULE_ATTEMPT_FAILURE)
        finally:
            self._active.done(pinfo.pod.uid)

    def _hint_for_in_flight_pod(self, pinfo: QueuedPodInfo) -> QueueingStrategy:
        if not pinfo.unschedulable_plugins and not pinfo.pending_plugins:
            return QueueingStrategy.AFTER_BACKOFF
        events = self._active.events_for_pod(pinfo.pod.uid)
        if events is None:
            # Not popped through this queue: upstream logs an error and retries.
            return QueueingStrategy.AFTER_BACKOFF
        strategy = QueueingStrategy.SKIP
        for e in events:
            s = is_pod_worth_requeuing(self.hints, pinfo, e.event, e.old, e.new)
            if s == QueueingStrategy.IMMEDIATELY:
                return s
            if s == QueueingStrategy.AFTER_BACKOFF:
                strategy = s
                if not pinfo.pending_plugins:
                    return s
        return strategy

    # ------------------------------------------------------------ cluster events
    def move_all_to_active_or_backoff_queue(
        self,
        event: ClusterEvent,
        old: EventObject = None,
        new: EventObject = None,
        pre_check: PreEnqueueCheck | None = None,
    ) -> None:
        """A cluster event happened: requeue the pool pods it may help (upstream
        MoveAllToActiveOrBackoffQueue). Nothing (``pre_check`` not called) unless an
        enabled plugin registered a matching event; else every pool pod that a
        plugin with a hint for it rejected (or none did) and that passes
        ``pre_check`` is offered it, and it is logged for in-flight pods."""
        if not self.hints.is_event_of_interest(event):
            return
        if event.is_wildcard():
            pods = list(self._unsched)
        else:
            pods = self._unsched.rejected_by(self.hints.plugins_for(event))
        if pre_check is not None:
            pods = [p for p in pods if pre_check(p.pod)]
        self._move_pods(pods, event, old, new)

    def assigned_pod_added(self, pod: Pod) -> None:
        """A bound pod appeared: event AssignedPodAdd for the whole pool (upstream
        addAssignedPodToCache with queueing hints on)."""
        self.move_all_to_active_or_backoff_queue(ASSIGNED_POD_ADD, None, pod)

    def assigned_pod_updated(self, old: Pod | None, new: Pod, event: ClusterEvent) -> None:
        """A bound pod changed; ``event`` is one of ``pod_update_events(old, new)``
        (upstream updateAssignedPodInCache with queueing hints on)."""
        self.move_all_to_active_or_backoff_queue(event, old, new)

    def _move_pods(
        self,
        pods: Sequence[QueuedPodInfo],
        event: ClusterEvent,
        old: EventObject,
        new: EventObject,
    ) -> list[QueuedPodInfo]:
        """Upstream movePodsToActiveOrBackoffQueue; returns the pods that left the pool."""
        if not self.hints.is_event_of_interest(event):
            return []
        label = event.label()
        moved: list[QueuedPodInfo] = []
        for pinfo in pods:
            if pinfo.gated() and not match_any_cluster_event(event, pinfo.gating_plugin_events):
                continue  # the gating plugin is not interested in this event
            strategy = is_pod_worth_requeuing(self.hints, pinfo, event, old, new)
            if strategy == QueueingStrategy.SKIP:
                continue
            self._unsched.delete(pinfo.pod)
            if self._requeue(pinfo, strategy, label) != UNSCHEDULABLE:
                moved.append(pinfo)
        self._active.add_event_if_any_in_flight(old, new, event)
        return moved

    # ------------------------------------------------------------------ timers
    def flush_backoff_q_completed(self) -> None:
        """Move every pod whose backoff completed to activeQ (event BackoffComplete;
        every whole second upstream; PreEnqueue is not re-run)."""
        for pinfo in self._backoff.pop_all_completed():
            self._move_to_active_q(pinfo, BACKOFF_COMPLETE, True)

    def flush_unschedulable_pods_leftover(self) -> None:
        """Requeue pool pods that waited strictly longer than the maximum (5 min;
        every 30 s upstream) with the wildcard event UnschedulableTimeout."""
        now = self._clock.now()
        limit = self.max_in_unschedulable_pods_duration
        stale = [p for p in self._unsched if now - p.timestamp > limit]
        if stale:
            for pinfo in self._move_pods(stale, UNSCHEDULABLE_TIMEOUT, None, None):
                pinfo.was_flushed_from_unschedulable = True

    def next_timer_deadline(self) -> Time | None:
        """The earliest time a periodic flush would move some pod, or None: the
        backoff flush moves a pod at ``expiry + 1 s``, the leftover flush (ticks at
        ``start + k * 30 s``) at the first tick strictly more than 5 min after its
        timestamp. It may be <= now if the owner is late."""
        backoff_tick = self._backoff_flush_due()
        leftover_tick = self._leftover_flush_due()
        if backoff_tick is None:
            return leftover_tick
        if leftover_tick is None:
            return backoff_tick
        return min(backoff_tick, leftover_tick)

    def run_timers(self) -> None:
        """Run the periodic flushes due now (backoff first): upstream's tickers, when
        called at every ``next_timer_deadline()`` (ticks that move nothing are skipped)."""
        now = self._clock.now()
        backoff_tick = self._backoff_flush_due()
        if backoff_tick is not None and now >= backoff_tick:
            self.flush_backoff_q_completed()
        leftover_tick = self._leftover_flush_due()
        if leftover_tick is not None and now >= leftover_tick:
            self.flush_unschedulable_pods_leftover()

    def _backoff_flush_due(self) -> Time | None:
        completion = self._backoff.next_completion()
        if completion is None:
            return None
        # The first tick is the first whole second after construction.
        return max(completion, align_to_window(self._started_at + ORDERING_WINDOW))

    def _leftover_flush_due(self) -> Time | None:
        ts = self._unsched.earliest_leftover_timestamp()
        if ts is None:
            return None
        # First tick start + k*period (k >= 0) strictly after ts + max duration.
        since_start = ts + self.max_in_unschedulable_pods_duration - self._started_at
        k = max(0, since_start // LEFTOVER_FLUSH_PERIOD + 1)
        return self._started_at + k * LEFTOVER_FLUSH_PERIOD

    # --------------------------------------------------------------- nominator
    def add_nominated_pod(self, pod_info: PodInfo, nominating_info: NominatingInfo | None) -> None:
        self._nominator.add_nominated_pod(pod_info, nominating_info)

    def delete_nominated_pod_if_exists(self, pod: Pod) -> None:
        self._nominator.delete_nominated_pod_if_exists(pod)

    def update_nominated_pod(self, old_pod: Pod | None, new_pod_info: PodInfo) -> None:
        self._nominator.update_nominated_pod(old_pod, new_pod_info)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        """``Nominator.nominated_pods_for_node``: each pod's PodInfo in activeQ,
        the pool or backoffQ, else a bare pod (name, namespace, UID)."""
        return self._nominator.nominated_pods_for_node(node_name)

    def has_poppable(self) -> bool:
        """True when ``pop()`` would return a pod."""
        return len(self._active) > 0 or self._backoff.len_backoff() > 0

    @property
    def nominator(self) -> Nominator:
        return self._nominator

    # -------------------------------------------------------------- internals
    def _queued_pod_info(self, key: str) -> PodInfo | None:
        """The nominator's lookup: the pod's entry in activeQ, the pool or backoffQ."""
        pinfo = self._active.get(key) or self._unsched.get_key(key) or self._backoff.get(key)
        return pinfo.pod_info if pinfo is not None else None

    def _leftover_movable(self, pinfo: QueuedPodInfo) -> bool:
        return not pinfo.gated() or match_any_cluster_event(
            UNSCHEDULABLE_TIMEOUT, pinfo.gating_plugin_events
        )

    def _run_pre_enqueue(self, pinfo: QueuedPodInfo) -> None:
        if self._pre_enqueue is None:
            pinfo.gating_plugin = ""
            return
        status = self._pre_enqueue(pinfo.pod)
        if status.is_success():
            pinfo.gating_plugin = ""
            return
        plugin = status.plugin or "PreEnqueue"
        # The gating plugin also counts as a rejector, so that its events move the pod.
        pinfo.unschedulable_plugins = pinfo.unschedulable_plugins | {plugin}
        self.metrics.unschedulable_reason(plugin, +1)
        pinfo.gating_plugin = plugin
        pinfo.gating_plugin_events = self.hints.events_of(plugin)

    def _move_to_active_q(self, pinfo: QueuedPodInfo, event: str, from_backoff: bool) -> bool:
        """activeQ unless PreEnqueue gates the pod (then the pool). PreEnqueue is
        skipped for pods coming straight from backoffQ (it ran on entry there)."""
        if not from_backoff:
            self._run_pre_enqueue(pinfo)
        if pinfo.gated():
            key = pinfo.key
            if self._active.has(key) or self._backoff.has(key):
                return False
            if self._unsched.get(pinfo.pod) is not None:
                self._unsched.refresh(pinfo)
                return False
            self._unsched.add_or_update(pinfo, event)
            return False
        if pinfo.initial_attempt_timestamp is None:
            pinfo.initial_attempt_timestamp = self._clock.now()
        self._unsched.delete(pinfo.pod)
        self._backoff.delete(pinfo.key)
        self._active.add(pinfo, event)
        if event in (_UNSCHEDULED_POD_ADD_LABEL, _UNSCHEDULED_POD_UPDATE_LABEL):
            self._nominator.add_nominated_pod(pinfo.pod_info, None)
        return True

    def _move_to_backoff_q(self, pinfo: QueuedPodInfo, event: str) -> bool:
        """backoffQ unless PreEnqueue gates the pod (then the pool)."""
        self._run_pre_enqueue(pinfo)
        if pinfo.gated():
            if self._unsched.get(pinfo.pod) is None:
                self._unsched.add_or_update(pinfo, event)
            else:
                self._unsched.refresh(pinfo)
            return False
        self._unsched.delete(pinfo.pod)
        self._backoff.add(pinfo, event)
        return True

    def _requeue(self, pinfo: QueuedPodInfo, strategy: QueueingStrategy, event: str) -> str:
        """Place a pod per ``strategy``; returns the queue it ended in."""
        if strategy == QueueingStrategy.SKIP:
            self._unsched.add_or_update(pinfo, event)
            return UNSCHEDULABLE
        if strategy == QueueingStrategy.AFTER_BACKOFF and self._backoff.is_backing_off(pinfo):
            return BACKOFF if self._move_to_backoff_q(pinfo, event) else UNSCHEDULABLE
        return ACTIVE if self._move_to_active_q(pinfo, event, False) else UNSCHEDULABLE
