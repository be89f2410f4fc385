"""PodDisruptionBudget status, computed as the disruption controller does.

Upstream: pkg/controller/disruption/disruption.go (``trySync``,
``getExpectedPodCount``, ``countHealthyPods``, ``updatePdbStatus``):

- its pods are those of its namespace its selector matches (none without one);
- ``minAvailable`` as an integer: expected = number of pods, desired = the value;
- ``maxUnavailable`` or a percentage ``minAvailable``: expected = the summed scale
  of the pods' controllers (percentages rounded up); a pod without a controller
  fails safe (nothing may be disrupted);
- healthy = ready pods (Running, not being deleted, not listed in
  ``disruptedPods`` within the 2-minute deletion timeout);
- ``disruptionsAllowed = healthy - desired``, never below 0, and 0 when no
  pod is expected.

The simulator recomputes it when the scheduler lists PDBs after a pod changed
(the controller with no lag).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Final

from kubesched.api.selectors import label_selector_matches
from kubesched.api.types import (
    NANOS,
    RUNNING,
    IntOrString,
    OwnerReference,
    Pod,
    PodDisruptionBudget,
    PodDisruptionBudgetStatus,
)

DELETION_TIMEOUT: Final = 2 * 60 * NANOS

ScaleOf = Callable[[str, OwnerReference], "tuple[str, int] | None"]
"""(namespace, controller ref) -> (controller uid, replicas) or None if unknown."""


class NoControllerError(Exception):
    pass


def scaled_value(value: IntOrString, total: int, round_up: bool = True) -> int:
    """intstr.GetScaledValueFromIntOrPercent."""
    if isinstance(value, int):
        return value
    pct = int(value.rstrip("%"))
    exact = pct * total / 100
    return math.ceil(exact) if round_up else math.floor(exact)


def pods_for_pdb(pdb: PodDisruptionBudget, pods: Iterable[Pod]) -> list[Pod]:
    sel = pdb.selector
    if sel is None:
        return []
    return [
        p for p in pods if p.namespace == pdb.namespace and label_selector_matches(sel, p.labels)
    ]


def expected_scale(pods: Iterable[Pod], scale_of: ScaleOf) -> int:
    scales: dict[str, int] = {}
    for p in pods:
        ref = p.controller_ref()
        if ref is None:
            raise NoControllerError(f'found no controllers for pod "{p.name}"')
        if ref.uid in scales:
            continue
        found = scale_of(p.namespace, ref)
        if found is None:
            raise NoControllerError(f'found no controllers for pod "{p.name}"')
        uid, replicas = found
        scales[uid] = replicas
    return sum(scales.values())


def is_ready(pod: Pod) -> bool:
    return pod.phase == RUNNING and bool(pod.node_name)


def count_healthy(pods: Iterable[Pod], disrupted: dict[str, int], now: int) -> int:
    healthy = 0
    for p in pods:
        if p.deletion_timestamp is not None:
            continue
        t = disrupted.get(p.name)
        if t is not None and t + DELETION_TIMEOUT > now:
            continue
        if is_ready(p):
            healthy += 1
    return healthy


def compute_status(
    pdb: PodDisruptionBudget, all_pods: Iterable[Pod], scale_of: ScaleOf, now: int
) -> PodDisruptionBudgetStatus:
    """The status the disruption controller would write now."""
    pods = pods_for_pdb(pdb, all_pods)
    disrupted = dict(pdb.status.disrupted_pods)
    names = {p.name for p in pods}
    disrupted = {n: t for n, t in disrupted.items() if n in names and t + DELETION_TIMEOUT > now}
    try:
        if pdb.max_unavailable is not None:
            expected = expected_scale(pods, scale_of)
            max_unavailable = scaled_value(pdb.max_unavailable, expected)
            desired = max(expected - max_unavailable, 0)
        elif isinstance(pdb.min_available, int):
            expected = len(pods)
            desired = pdb.min_available
        elif pdb.min_available is not None:
            expected = expected_scale(pods, scale_of)
            desired = scaled_value(pdb.min_available, expected)
        else:
            expected = len(pods)
            desired = 0
    except NoControllerError:
        return PodDisruptionBudgetStatus(disrupted_pods=disrupted)
    healthy = count_healthy(pods, disrupted, now)
    allowed = healthy - desired
    if expected <= 0 or allowed <= 0:
        allowed = 0
    return PodDisruptionBudgetStatus(
        disruptions_allowed=allowed,
        current_healthy=healthy,
        desired_healthy=desired,
        expected_pods=expected,
        disrupted_pods=disrupted,
    )
