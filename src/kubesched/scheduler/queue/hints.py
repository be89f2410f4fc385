"""Queueing hints: which registered hint functions an event triggers, and the
resulting requeue strategy for one pod (upstream isPodWorthRequeuing).

``HintRegistry`` is built per profile from ``plugin name -> events_to_register()``
with upstream ``buildQueueingHintMap``'s rules: a plugin registering no events is
left out (its rejects move only on wildcard events or the pod's own updates); a
missing hint function means "always Queue"; a plugin registering ``Node/Add`` but
no ``UpdateNodeTaint`` event also gets ``Node/UpdateNodeTaint`` with the default
hint (issue 109437's mitigation). The owner registers plugins without
EnqueueExtensions for the wildcard ``*/All``, as upstream does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum

from kubesched.api.types import Pod
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventObject,
    EventResource,
    QueueingHint,
    QueueingHintFn,
    match_cluster_events,
)
from kubesched.scheduler.queue.queued_pod import QueuedPodInfo


class QueueingStrategy(IntEnum):
    """How a pod leaves the unschedulable pool (upstream queueingStrategy)."""

    SKIP = 0
    """Stay in the unschedulable pool."""
    AFTER_BACKOFF = 1
    """backoffQ if still backing off, else activeQ."""
    IMMEDIATELY = 2
    """activeQ, skipping any remaining backoff (a Pending plugin said Queue)."""


def default_hint(pod: object, old: EventObject, new: EventObject) -> QueueingHint:
    """Upstream defaultQueueingHintFn: always Queue."""
    return QueueingHint.QUEUE


@dataclass(frozen=True, slots=True)
class HintFunction:
    plugin: str
    fn: QueueingHintFn


_NODE_ADD = ClusterEvent(EventResource.NODE, ActionType.ADD)
_NODE_TAINT = ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_TAINT)


class HintRegistry:
    """Registered events and hint functions of one profile (upstream QueueingHintMap)."""

    def __init__(self, event_registry: Mapping[str, Sequence[ClusterEventWithHint]]) -> None:
        self._by_event: dict[ClusterEvent, list[HintFunction]] = {}
        self._plugin_events: dict[str, tuple[ClusterEvent, ...]] = {}
        for plugin, registrations in event_registry.items():
            if not registrations:
                continue
            node_added = node_taint = False
            for reg in registrations:
                ev = reg.event
                if ev.resource == EventResource.NODE:
                    node_added |= bool(ev.action_type & ActionType.ADD)
                    node_taint |= bool(ev.action_type & ActionType.UPDATE_NODE_TAINT)
                self._register(plugin, ev, reg.hint or default_hint)
            if node_added and not node_taint:
                self._register(plugin, _NODE_TAINT, default_hint)
        # Caches keyed by the incoming event (ClusterEvent is frozen and hashable).
        self._interest: dict[ClusterEvent, bool] = {}
        self._matching: dict[ClusterEvent, tuple[HintFunction, ...]] = {}
        self._plugins: dict[ClusterEvent, tuple[str, ...]] = {}

    def _register(self, plugin: str, event: ClusterEvent, fn: QueueingHintFn) -> None:
        self._by_event.setdefault(event, []).append(HintFunction(plugin, fn))
        self._plugin_events[plugin] = (*self._plugin_events.get(plugin, ()), event)

    def events_of(self, plugin: str) -> tuple[ClusterEvent, ...]:
        """Events ``plugin`` registered (upstream pluginToEventsMap)."""
        return self._plugin_events.get(plugin, ())

    def is_event_of_interest(self, event: ClusterEvent) -> bool:
        """Wildcard events always are; otherwise some registered event must match."""
        cached = self._interest.get(event)
        if cached is None:
            cached = event.is_wildcard() or any(
                match_cluster_events(registered, event) for registered in self._by_event
            )
            self._interest[event] = cached
        return cached

    def matching_hints(self, event: ClusterEvent) -> tuple[HintFunction, ...]:
        """Hint functions of every registered event that ``event`` matches."""
        cached = self._matching.get(event)
        if cached is None:
            cached = tuple(
                h
                for registered, hints in self._by_event.items()
                if match_cluster_events(registered, event)
                for h in hints
            )
            self._matching[event] = cached
        return cached

    def plugins_for(self, event: ClusterEvent) -> tuple[str, ...]:
        """Plugins with a hint for ``event``, sorted: only a pod one of them rejected
        (or a pod with no rejector) can be moved by it (isPodWorthRequeuing)."""
        cached = self._plugins.get(event)
        if cached is None:
            cached = tuple(sorted({h.plugin for h in self.matching_hints(event)}))
            self._plugins[event] = cached
        return cached


def match_any_cluster_event(event: ClusterEvent, registered: Sequence[ClusterEvent]) -> bool:
    """Some event in ``registered`` matches the incoming ``event`` (MatchAnyClusterEvent)."""
    return any(match_cluster_events(r, event) for r in registered)


def is_pod_worth_requeuing(
    registry: HintRegistry,
    pinfo: QueuedPodInfo,
    event: ClusterEvent,
    old: EventObject,
    new: EventObject,
) -> QueueingStrategy:
    """Run the hints of the pod's rejector plugins for ``event`` (upstream isPodWorthRequeuing).

    - no rejector plugins (an error brought the pod back): AFTER_BACKOFF;
    - wildcard event: AFTER_BACKOFF, unless ``new`` is a Pod with another UID
      (a wildcard targeted at another pod, e.g. ForceActivate): SKIP;
    - otherwise only hints of plugins in UnschedulablePlugins or PendingPlugins
      run. Queue from a Pending plugin -> IMMEDIATELY; Queue from an
      Unschedulable plugin -> AFTER_BACKOFF; all Skip -> SKIP. A hint that
      raises counts as Queue.
    """
    rejectors = pinfo.rejector_plugins()
    pinfo.queued_by = ""
    if not rejectors:
        return QueueingStrategy.AFTER_BACKOFF
    if event.is_wildcard():
        if new is not None and (not isinstance(new, Pod) or new.uid != pinfo.pod.uid):
            return QueueingStrategy.SKIP
        return QueueingStrategy.AFTER_BACKOFF

    pending = pinfo.pending_plugins
    pod = pinfo.pod
    strategy = QueueingStrategy.SKIP
    for h in registry.matching_hints(event):
        if h.plugin not in rejectors:
            continue
        try:
            hint = h.fn(pod, old, new)
        except Exception:
            # Upstream treats an erroring hint as Queue so that the pod cannot
            # get stuck in the unschedulable pool.
            hint = QueueingHint.QUEUE
        if hint == QueueingHint.SKIP:
            continue
        pinfo.queued_by = h.plugin
        if h.plugin in pending:
            return QueueingStrategy.IMMEDIATELY
        if not pending:
            return QueueingStrategy.AFTER_BACKOFF
        strategy = QueueingStrategy.AFTER_BACKOFF
    return strategy
