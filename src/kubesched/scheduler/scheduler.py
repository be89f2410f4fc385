"""Scheduler: event handlers, the scheduling cycle, failure handling and binding.

Backends drive it: cluster changes arrive through the ``on_*`` handlers (upstream's
informer event handlers); ``schedule_one()`` runs one scheduling + binding cycle
synchronously through the ``ClusterWriter`` port (with ``run_async``, live mode,
the PreBind and Bind plugins and the async preemption's API calls run on another
thread, and what follows them when their outcome comes back; ``poll_until`` lets
PreBind wait there for the caches, as VolumeBinding waits for its claims);
``next_timer_deadline()`` / ``on_timer()`` run the queue's flushes on the
backend's clock. A failed status patch after a failed attempt is logged and the
pod stays queued (upstream logs "Error updating pod").

Upstream: pkg/scheduler/schedule_one.go and eventhandlers.go.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Final, Protocol

from kubesched.api.types import Node, Pod, PodCondition
from kubesched.framework.config import SchedulerConfig
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import (
    ASSIGNED_POD_DELETE,
    NODE_ADD,
    NODE_DELETE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventObject,
)
from kubesched.framework.interfaces import PollCheck
from kubesched.framework.nominated import NominatedLoadIndex
from kubesched.framework.ports import Clock, ClusterReader, ClusterWriter, EventRecorder
from kubesched.framework.results import (
    Diagnosis,
    FitError,
    NodeToStatus,
    NominatingInfo,
    NominatingMode,
)
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo
from kubesched.runtime.framework import (
    Framework,
    PluginFactory,
    Poller,
    ScoreError,
    Services,
    poll_once,
    run_now,
)
from kubesched.scheduler.cache import Cache, CacheError
from kubesched.scheduler.metrics import (
    RESULT_ERROR,
    RESULT_SCHEDULED,
    RESULT_UNSCHEDULABLE,
    Metrics,
)
from kubesched.scheduler.queue import QueuedPodInfo, SchedulingQueue
from kubesched.scheduler.queue.events import node_update_events, pod_update_events
from kubesched.scheduler.queue.scheduling_queue import priority_sort_key
from kubesched.scheduler.schedule_one import (
    NoNodesAvailable,
    ScheduleOne,
    ScheduleResult,
    SchedulingError,
)

log = logging.getLogger(__name__)

NOTE_LENGTH_LIMIT: Final = 1024
CLEAR_NOMINATED_NODE: Final = NominatingInfo("", NominatingMode.OVERRIDE)

REASON_UNSCHEDULABLE: Final = "Unschedulable"
REASON_SCHEDULER_ERROR: Final = "SchedulerError"


def truncate_message(message: str) -> str:
    """Event notes are limited to 1024 characters (upstream truncateMessage)."""
    if len(message) <= NOTE_LENGTH_LIMIT:
        return message
    suffix = " ..."
    return message[: NOTE_LENGTH_LIMIT - len(suffix)] + suffix


class DecisionObserver(Protocol):
    """Told every decision as it is made (shadow mode, explanations)."""

    def scheduled(self, pod: Pod, result: ScheduleResult) -> None:
        """The pod is bound (or would be) to ``result.suggested_host``."""

    def unschedulable(
        self,
        pod: Pod,
        status: Status,
        fit: FitError | None,
        nominated_node: str,
        post_filter: object | None,
    ) -> None:
        """A scheduling attempt failed with ``status``; ``fit`` is its diagnosis
        when no node fit, ``nominated_node`` the node preemption nominated (""),
        ``post_filter`` what PostFilter told of how it decided
        (``PostFilterResult.explanation``)."""


AsyncRunner = Callable[[Callable[[], Status], Callable[[Status], None]], None]
"""``run_async(work, done)``: run ``work`` (what upstream runs in a goroutine: the
PreBind and Bind plugins, the async preemption's API calls) on another thread, then call
``done`` with its status on the scheduling thread (live mode)."""


class Scheduler:
    """One kube-scheduler: its profiles, queue, cache and algorithm."""

    def __init__(
        self,
        config: SchedulerConfig,
        registry: Mapping[str, PluginFactory],
        *,
        clock: Clock,
        rng: random.Random,
        reader: ClusterReader,
        writer: ClusterWriter,
        recorder: EventRecorder,
        metrics: Metrics | None = None,
    ) -> None:
        self.config = config
        self.clock = clock
        self.reader = reader
        self.writer = writer
        self.recorder = recorder
        self.metrics = metrics or Metrics()
        self.observer: DecisionObserver | None = None
        """Told every decision (None: nobody)."""
        self.run_async: AsyncRunner | None = None
        """Runs goroutine work off the scheduling thread (None: at once)."""
        self.poll_until: Poller | None = None
        """``Handle.poll_until`` of a backend whose caches change while a binding
        cycle waits (live); None: ``poll_once``."""
        self.changes = 0
        """Cluster changes delivered so far that can change some pod's scheduling
        answer (see ``would_retry_on_a_changed_cluster``)."""
        self.cache = Cache()
        self.algorithm = ScheduleOne(config.percentage_of_nodes_to_score)
        services = Services(
            table=self.cache.table,
            nominator=self,  # nominated pods come from the queue, see below
            clock=clock,
            rng=rng,
            reader=reader,
            writer=writer,
            recorder=recorder,
            metrics=self.metrics,
            activate=self.activate,
            run_async=self._run_async,
            poll_until=self._poll_until,
        )
        self.profiles: dict[str, Framework] = {
            p.scheduler_name: Framework(p, registry, services) for p in config.profiles
        }
        first = next(iter(self.profiles.values()))
        registry_events: dict[str, list[ClusterEventWithHint]] = {}
        for fwk in self.profiles.values():
            registry_events.update(fwk.events_to_register())
        self.queue = SchedulingQueue(
            first.less,
            clock,
            pod_initial_backoff=config.pod_initial_backoff_seconds * 1_000_000_000,
            pod_max_backoff=config.pod_max_backoff_seconds * 1_000_000_000,
            pre_enqueue=self._pre_enqueue,
            event_registry=registry_events,
            metrics=None,
            pod_lister=reader.get_pod,
            sort_key=priority_sort_key if _uses_priority_sort(first) else None,
        )

    # ------------------------------------------------------------------ nominator port
    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return self.queue.nominator.nominated_pods_for_node(node_name)

    def nominated_node_names(self) -> list[str]:
        return self.queue.nominator.nominated_node_names()

    def load_index(self) -> NominatedLoadIndex:
        return self.queue.nominator.load_index()

    def activate(self, pods: Sequence[Pod]) -> None:
        self.queue.activate(pods)

    def _pre_enqueue(self, pod: Pod) -> Status:
        fwk = self.profiles.get(pod.spec.scheduler_name)
        if fwk is None:
            return Status(Code.SUCCESS)
        return fwk.run_pre_enqueue_plugins(pod)

    def responsible_for(self, pod: Pod) -> bool:
        return pod.spec.scheduler_name in self.profiles

    # ------------------------------------------------------------------ node events
    def on_node_add(self, node: Node) -> None:
        self.changes += 1
        self.cache.add_node(node)
        self.queue.move_all_to_active_or_backoff_queue(NODE_ADD, None, node)

    def on_node_update(self, old: Node, new: Node) -> None:
        self.changes += 1
        self.cache.update_node(old, new)
        for event in node_update_events(old, new):
            self.queue.move_all_to_active_or_backoff_queue(event, old, new)

    def on_node_delete(self, node: Node) -> None:
        """Upstream deleteNodeFromCache: the queue hears NodeDelete first, then the
        node leaves the cache."""
        self.changes += 1
        self.queue.move_all_to_active_or_backoff_queue(NODE_DELETE, node, None)
        self.cache.remove_node(node)

    # ------------------------------------------------------------------ other kinds
    def on_object_add(self, resource: str, obj: EventObject) -> None:
        """A PersistentVolumeClaim, PersistentVolume, StorageClass or CSINode was
        created: ``<resource>/Add`` to the queue (upstream buildEvtResHandler)."""
        self._on_object(ClusterEvent(resource, ActionType.ADD), None, obj)

    def on_object_update(self, resource: str, old: EventObject, new: EventObject) -> None:
        self._on_object(ClusterEvent(resource, ActionType.UPDATE), old, new)

    def on_object_delete(self, resource: str, obj: EventObject) -> None:
        self._on_object(ClusterEvent(resource, ActionType.DELETE), obj, None)

    def _on_object(self, event: ClusterEvent, old: EventObject, new: EventObject) -> None:
        self.changes += 1
        self.queue.move_all_to_active_or_backoff_queue(event, old, new)

    # ------------------------------------------------------------------ pod events
    def on_pod_add(self, pod: Pod) -> None:
        if _terminal(pod):
            return  # the informer's field selector: status.phase!=Succeeded,Failed
        if pod.node_name:
            self.changes += 1
            self.cache.add_pod(pod)
            self.queue.assigned_pod_added(pod)
        elif self.responsible_for(pod):
            if pod.nominated_node_name:
                self.changes += 1  # counted by lower-priority pods from now on
            self.queue.add(pod)

    def on_pod_update(self, old: Pod, new: Pod) -> None:
        old_assigned = bool(old.node_name) and not _terminal(old)
        new_assigned = bool(new.node_name) and not _terminal(new)
        if old_assigned and new_assigned:
            self.changes += 1
            self.cache.update_pod(old, new)
            for event in pod_update_events(old, new):
                self.queue.assigned_pod_updated(old, new, event)
        elif not old.node_name and new_assigned:
            # Bound: leaves the queue side, enters the cache side.
            self.changes += 1
            if self.responsible_for(old):
                self.queue.delete(old)
            self.cache.add_pod(new)
            self.queue.assigned_pod_added(new)
        elif old_assigned and not new_assigned:
            self.changes += 1
            self._remove_assigned(old)
        elif not old.node_name and not new.node_name and self.responsible_for(new):
            if _terminal(new):
                # Leaves the informer's field selector: seen as a deletion.
                if not _terminal(old):
                    self.on_pod_delete(old)
                return
            if self.cache.is_assumed(new.uid):
                return
            self._count_pending_pod_update(old, new)
            self.queue.update(old, new)
            if has_nominated_node_name_changed(old, new):
                self._nomination_released(old)

    def on_pod_delete(self, pod: Pod) -> None:
        if _terminal(pod):
            return  # never in the informer's view
        if pod.node_name:
            self.changes += 1
            self._remove_assigned(pod)
        elif self.responsible_for(pod):
            self.queue.delete(pod)
            if pod.nominated_node_name:
                self.changes += 1
                self._nomination_released(pod)

    def _nomination_released(self, pod: Pod) -> None:
        """A pending pod gave up its nominated node (deleted, nomination cleared or
        changed): equal- and lower-priority pods, which counted it there, are offered
        an ``AssignedPodDelete`` of it (upstream getLEPriorityPreCheck)."""
        priority = pod.priority
        self.queue.move_all_to_active_or_backoff_queue(
            ASSIGNED_POD_DELETE, pod, None, lambda p: p.priority <= priority
        )

    def _count_pending_pod_update(self, old: Pod, new: Pod) -> None:
        """Count an update of a pending pod as a cluster change when it can change some
        pod's next attempt: its spec or labels changed, or its nominated node did (for
        the others; its own nomination is its own write). Conditions alone are none."""
        if new.spec is not old.spec or new.labels is not old.labels:
            self.changes += 1
        elif new.nominated_node_name != old.nominated_node_name:
            queued = self.queue.get_pod(new.name, new.namespace)
            if queued is not None and queued.seen_changes == self.changes:
                queued.seen_changes += 1
            self.changes += 1

    def _remove_assigned(self, pod: Pod) -> None:
        self.cache.remove_pod(pod)
        self.queue.move_all_to_active_or_backoff_queue(ASSIGNED_POD_DELETE, pod, None)

    def would_retry_on_a_changed_cluster(self) -> bool:
        """Some pod only a queue timer would move (backoffQ, or the pool's 5-minute
        flush) was last attempted before the latest cluster change, so a retry's
        answer may differ; False: every retry would see the cluster its pod saw."""
        changes = self.changes
        return any(p.seen_changes < changes for p in self.queue.waiting_pods())

    # ------------------------------------------------------------------ timers
    def next_timer_deadline(self) -> int | None:
        return self.queue.next_timer_deadline()

    def on_timer(self) -> None:
        self.queue.run_timers()

    # ------------------------------------------------------------------ the cycle
    def schedule_one(self) -> bool:
        """Run one scheduling cycle; False when no pod was ready to pop."""
        qpi = self.queue.pop()
        if qpi is None:
            return False
        qpi.seen_changes = self.changes
        pod = qpi.pod_info.pod
        fwk = self.profiles.get(pod.spec.scheduler_name)
        if fwk is None:
            self.queue.done(pod.uid)
            return True
        if self._skip_pod_schedule(fwk, pod):
            self.queue.done(pod.uid)
            return True
        state = CycleState()
        try:
            result = self.algorithm.schedule_pod(fwk, state, qpi.pod_info)
        except FitError as fit:
            self._on_fit_error(fwk, state, qpi, fit)
            return True
        except NoNodesAvailable as err:
            self._handle_failure(
                fwk,
                qpi,
                Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, str(err)),
                CLEAR_NOMINATED_NODE,
            )
            return True
        except (SchedulingError, ScoreError) as err:
            self._handle_failure(fwk, qpi, Status(Code.ERROR, str(err)), CLEAR_NOMINATED_NODE)
            return True
        self._assume_and_bind(fwk, state, qpi, result)
        return True

    def _skip_pod_schedule(self, fwk: Framework, pod: Pod) -> bool:
        if pod.deletion_timestamp is not None:
            self.recorder.event(
                pod,
                "Warning",
                "FailedScheduling",
                "Scheduling",
                f"skip schedule deleting pod: {pod.namespace}/{pod.name}",
            )
            return True
        return self.cache.is_assumed(pod.uid)

    def _on_fit_error(
        self, fwk: Framework, state: CycleState, qpi: QueuedPodInfo, fit: FitError
    ) -> None:
        if not fwk.post_filter_plugins:
            self._handle_failure(
                fwk, qpi, Status(Code.UNSCHEDULABLE, str(fit)), CLEAR_NOMINATED_NODE, fit
            )
            return
        result, status = fwk.run_post_filter_plugins(
            state, qpi.pod_info, fit.diagnosis.node_to_status
        )
        fit.diagnosis.post_filter_msg = status.message()
        nominating = result.nominating_info if result is not None else None
        explanation = result.explanation if result is not None else None
        self._handle_failure(
            fwk, qpi, Status(Code.UNSCHEDULABLE, str(fit)), nominating, fit, explanation
        )

    def _assume_and_bind(
        self, fwk: Framework, state: CycleState, qpi: QueuedPodInfo, result: ScheduleResult
    ) -> None:
        host = result.suggested_host
        pod = qpi.pod_info.pod
        assumed = pod.copy()
        assumed.node_name = host
        assumed_info = PodInfo(assumed)
        self.cache.assume_pod(assumed_info, host)
        self.queue.delete_nominated_pod_if_exists(pod)
        s = fwk.run_reserve_plugins_reserve(state, assumed_info, host)
        if s.is_success():
            s = fwk.run_permit_plugins(state, assumed_info, host)
        if not s.is_success():
            fwk.run_reserve_plugins_unreserve(state, assumed_info, host)
            self.cache.forget_pod(assumed)
            if s.is_rejected():
                # Upstream wraps a Reserve/Permit rejection in a FitError on one node.
                diag = Diagnosis(NodeToStatus({host: s}))
                diag.add_plugin_status(s)
                fit = FitError(pod, 1, diag)
                self._handle_failure(
                    fwk, qpi, Status(s.code, str(fit), plugin=s.plugin), CLEAR_NOMINATED_NODE, fit
                )
            else:
                self._handle_failure(fwk, qpi, s, CLEAR_NOMINATED_NODE)
            return

        # Binding cycle: upstream runs it in a goroutine; with ``run_async`` (live
        # mode) PreBind and Bind run elsewhere and their outcome comes back
        # through ``done`` (the simulator runs them at once, in the same order).
        def binding_cycle() -> Status:
            s = fwk.run_pre_bind_plugins(state, assumed_info, host)
            return fwk.run_bind_plugins(state, assumed_info, host) if s.is_success() else s

        done = partial(self._binding_done, fwk, state, qpi, result, assumed_info)
        self._run_async(binding_cycle, done)

    def _run_async(self, work: Callable[[], Status], done: Callable[[Status], None]) -> None:
        """``run_async`` when set (live), else ``work`` and ``done`` at once."""
        (self.run_async or run_now)(work, done)

    def _poll_until(self, check: PollCheck, interval: float, timeout: float) -> str | None:
        """``poll_until`` when set (live), else ``poll_once``."""
        return (self.poll_until or poll_once)(check, interval, timeout)

    def _binding_done(
        self,
        fwk: Framework,
        state: CycleState,
        qpi: QueuedPodInfo,
        result: ScheduleResult,
        assumed_info: PodInfo,
        s: Status,
    ) -> None:
        host = result.suggested_host
        pod = qpi.pod_info.pod
        assumed = assumed_info.pod
        if not s.is_success():
            fwk.run_reserve_plugins_unreserve(state, assumed_info, host)
            try:
                self.cache.forget_pod(assumed)
            except CacheError as err:  # confirmed meanwhile (async binding): logged
                log.error("scheduler cache ForgetPod failed: %s", err)
            self.queue.move_all_to_active_or_backoff_queue(ASSIGNED_POD_DELETE, assumed, None)
            self._handle_failure(fwk, qpi, s, CLEAR_NOMINATED_NODE)
            return
        if self.observer is not None:
            self.observer.scheduled(pod, result)
        self.recorder.event(
            assumed,
            "Normal",
            "Scheduled",
            "Binding",
            f"Successfully assigned {pod.namespace}/{pod.name} to {host}",
        )
        self.metrics.schedule_attempt(RESULT_SCHEDULED, fwk.scheduler_name)
        self.metrics.pod_scheduling_attempts.observe(qpi.attempts)
        fwk.run_post_bind_plugins(state, assumed_info, host)
        self.queue.done(pod.uid)

    def _handle_failure(
        self,
        fwk: Framework,
        qpi: QueuedPodInfo,
        status: Status,
        nominating: NominatingInfo | None,
        fit: FitError | None = None,
        post_filter: object | None = None,
    ) -> None:
        """Requeue, keep/clear the nomination, emit FailedScheduling and patch
        PodScheduled=False (upstream handleSchedulingFailure); ``post_filter`` is
        for the observer only."""
        pod = qpi.pod_info.pod
        rejected = status.is_rejected()
        reason = REASON_UNSCHEDULABLE if rejected else REASON_SCHEDULER_ERROR
        self.metrics.schedule_attempt(
            RESULT_UNSCHEDULABLE if rejected else RESULT_ERROR, fwk.scheduler_name
        )
        if fit is not None:
            qpi.unschedulable_plugins = set(fit.diagnosis.unschedulable_plugins)
            qpi.pending_plugins = set(fit.diagnosis.pending_plugins)
        else:
            qpi.unschedulable_plugins = {status.plugin} if rejected and status.plugin else set()
            qpi.pending_plugins = set()
        cached = self.reader.get_pod(pod.namespace, pod.name)
        if cached is None or cached.uid != pod.uid or cached.node_name:
            self.queue.done(pod.uid)
        else:
            qpi.pod_info = PodInfo(cached)
            self.queue.add_unschedulable_if_not_present(qpi, self.queue.scheduling_cycle)
        self.queue.add_nominated_pod(qpi.pod_info, nominating)
        if self.observer is not None:
            nominated = ""
            if nominating is not None and nominating.mode == NominatingMode.OVERRIDE:
                nominated = nominating.node_name
            self.observer.unschedulable(pod, status, fit, nominated, post_filter)
        message = status.message()
        self.recorder.event(
            pod, "Warning", "FailedScheduling", "Scheduling", truncate_message(message)
        )
        nnn: str | None = None
        if (
            nominating is not None
            and nominating.mode == NominatingMode.OVERRIDE
            and nominating.node_name != (cached.nominated_node_name if cached else "")
        ):
            nnn = nominating.node_name
        if cached is not None and not cached.node_name:
            try:
                self.writer.patch_pod_status(
                    cached,
                    condition=PodCondition("PodScheduled", "False", reason, message),
                    nominated_node_name=nnn,
                )
            except Exception as err:  # an API error (or the pod is gone): logged only
                log.error("Error updating pod %s/%s: %s", pod.namespace, pod.name, err)

    # ------------------------------------------------------------------ introspection
    def pending_counts(self) -> dict[str, int]:
        return self.queue.pending_pods()


def _uses_priority_sort(fwk: Framework) -> bool:
    return fwk.queue_sort is not None and fwk.queue_sort.name == "PrioritySort"


def has_nominated_node_name_changed(old: Pod, new: Pod) -> bool:
    """The pod had a nominated node and no longer has that one (upstream
    hasNominatedNodeNameChanged)."""
    return bool(old.nominated_node_name) and old.nominated_node_name != new.nominated_node_name


def _terminal(pod: Pod) -> bool:
    """Succeeded or Failed: outside the pod informer's field selector
    (``status.phase!=Succeeded,status.phase!=Failed``), so the scheduler never sees
    such a pod; a pod that becomes terminal is a deletion to it."""
    return pod.phase in ("Succeeded", "Failed")


__all__ = ["ClusterEvent", "Scheduler"]
