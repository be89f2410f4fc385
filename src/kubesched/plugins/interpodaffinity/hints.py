"""InterPodAffinity EventsToRegister and queueing hints (upstream
interpodaffinity/plugin.go, v1.36).

Events: Pod Add | UpdatePodLabel | Delete (``is_schedulable_after_pod_change``)
and Node Add | UpdateNodeLabel (``is_schedulable_after_node_change``; queueing
hints are always on in v1.36, so UpdateNodeTaint is not registered).

The pod hint is v1.36's (PRs #135325, #135392, #135394; anti-affinity still
"all terms", #139161 came later), matching without unrolling namespace selectors
and with empty namespace labels.
"""

from __future__ import annotations

from kubesched.api.types import Node, Pod
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventObject,
    EventResource,
    QueueingHint,
)
from kubesched.plugins.interpodaffinity.terms import EMPTY_LABELS, matches_all, pod_terms


def events_to_register() -> list[ClusterEventWithHint]:
    return [
        ClusterEventWithHint(
            ClusterEvent(
                EventResource.POD,
                ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE,
            ),
            is_schedulable_after_pod_change,
        ),
        ClusterEventWithHint(
            ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
            is_schedulable_after_node_change,
        ),
    ]


def _required_parse_failed(pod: Pod) -> bool:
    # GetAffinityTerms of the required terms errs -> upstream returns Queue.
    return any(
        e.startswith(("requiredAffinityTerms:", "requiredAntiAffinityTerms:"))
        for e in pod_terms(pod).errors
    )


def _assigned_or_nominated(p: Pod) -> bool:
    return bool(p.node_name or p.nominated_node_name)


def is_schedulable_after_pod_change(pod: Pod, old: EventObject, new: EventObject) -> QueueingHint:
    """QUEUE when the added / updated / deleted pod may let ``pod`` pass InterPodAffinity."""
    original = old if isinstance(old, Pod) else None
    modified = new if isinstance(new, Pod) else None
    if original is None and modified is None:
        return QueueingHint.QUEUE
    # The rejected pod's own labels changed: it may now match its own affinity.
    if (
        modified is not None
        and original is not None
        and modified.uid == pod.uid
        and dict(original.labels) != dict(modified.labels)
    ):
        return QueueingHint.QUEUE
    if (modified is not None and not _assigned_or_nominated(modified)) or (
        original is not None and not _assigned_or_nominated(original)
    ):
        return QueueingHint.SKIP
    if _required_parse_failed(pod):
        return QueueingHint.QUEUE
    terms = pod_terms(pod)
    aff, anti = terms.required_affinity, terms.required_anti
    if modified is not None and original is not None:
        # A single existing pod must satisfy all affinity terms, hence "all".
        if not matches_all(aff, original, EMPTY_LABELS) and matches_all(
            aff, modified, EMPTY_LABELS
        ):
            return QueueingHint.QUEUE
        if matches_all(anti, original, EMPTY_LABELS) and not matches_all(
            anti, modified, EMPTY_LABELS
        ):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP
    if modified is not None:
        return QueueingHint.QUEUE if matches_all(aff, modified, EMPTY_LABELS) else QueueingHint.SKIP
    assert original is not None
    if matches_all(anti, original, EMPTY_LABELS):
        return QueueingHint.QUEUE
    # The deleted pod's own anti-affinity may have been what rejected the pod.
    deleted = pod_terms(original)
    if any(e.startswith("requiredAntiAffinityTerms:") for e in deleted.errors):
        return QueueingHint.QUEUE
    if matches_all(deleted.required_anti, pod, EMPTY_LABELS):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def is_schedulable_after_node_change(pod: Pod, old: EventObject, new: EventObject) -> QueueingHint:
    """QUEUE when the node may let ``pod`` pass: affinity — a new node with a
    term's key, or one that gained it or changed its value; anti-affinity — any
    new node, or one that lost a term's key or changed its value."""
    if not isinstance(new, Node):
        return QueueingHint.QUEUE
    original = old if isinstance(old, Node) else None
    if _required_parse_failed(pod):
        return QueueingHint.QUEUE
    terms = pod_terms(pod)
    for t in terms.required_affinity:
        key = t.topology_key
        if original is None:
            if key in new.labels:
                return QueueingHint.QUEUE
            continue
        was, now = original.labels.get(key), new.labels.get(key)
        if now is not None and (was is None or was != now):
            return QueueingHint.QUEUE
    for t in terms.required_anti:
        if original is None:
            return QueueingHint.QUEUE
        key = t.topology_key
        was, now = original.labels.get(key), new.labels.get(key)
        if was is not None and (now is None or was != now):
            return QueueingHint.QUEUE
    return QueueingHint.SKIP
