"""Pod predicates and orderings the workload controllers share (upstream
pkg/controller/controller_utils.go, pkg/api/v1/pod and controller_ref_manager.go).

The simulated kubelet makes a bound pod Running and Ready at once; a pod of the
input keeps an explicit ``Ready=False`` condition it was dumped with (nothing in
the simulation would make it ready).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final

from kubesched.api.selectors import label_selector_matches
from kubesched.api.types import (
    FAILED,
    PENDING,
    RUNNING,
    SUCCEEDED,
    LabelSelector,
    OwnerReference,
    Pod,
)

POD_DELETION_COST: Final = "controller.kubernetes.io/pod-deletion-cost"

# Claim outcomes (ClaimObject).
OWNED: Final = "owned"
ADOPT: Final = "adopt"
RELEASE: Final = "release"


def is_terminal(pod: Pod) -> bool:
    """Succeeded or Failed (podutil.IsPodTerminal)."""
    return pod.phase in (SUCCEEDED, FAILED)


def is_active(pod: Pod) -> bool:
    """Not terminal and not terminating (controller.IsPodActive)."""
    return pod.deletion_timestamp is None and not is_terminal(pod)


def is_ready(pod: Pod) -> bool:
    """Running with no ``Ready`` condition other than True (podutil.IsPodReady, with
    the simulated kubelet making every running pod ready)."""
    if pod.phase != RUNNING:
        return False
    cond = pod.condition("Ready")
    return cond is None or cond.status == "True"


def ready_time(pod: Pod) -> int | None:
    """When the pod became ready: its Ready condition's transition time, else its start."""
    cond = pod.condition("Ready")
    if cond is not None and cond.last_transition_time is not None:
        return cond.last_transition_time
    return pod.start_time


def controller_ref(kind: str, name: str, uid: str, api_version: str = "apps/v1") -> OwnerReference:
    """metav1.NewControllerRef."""
    return OwnerReference(api_version, kind, name, uid, True)


def claim(pod: Pod, owner_uid: str, namespace: str, selector: LabelSelector | None) -> str | None:
    """``BaseControllerRefManager.ClaimObject`` for one pod: ``OWNED`` (ours, matching),
    ``RELEASE`` (ours, no longer matching), ``ADOPT`` (a matching orphan of the
    namespace, not being deleted), or None."""
    ref = pod.controller_ref()
    matches = selector is not None and label_selector_matches(selector, pod.labels)
    if ref is not None:
        if ref.uid != owner_uid:
            return None
        return OWNED if matches else RELEASE
    if not matches or pod.deletion_timestamp is not None or pod.namespace != namespace:
        return None
    return ADOPT


def without_controller(refs: Sequence[OwnerReference], uid: str) -> tuple[OwnerReference, ...]:
    """The owner references left after releasing the controller ``uid``."""
    return tuple(r for r in refs if r.uid != uid)


def deletion_cost(pod: Pod) -> int:
    """``controller.kubernetes.io/pod-deletion-cost`` (0 when absent or not an int32)."""
    text = pod.annotations.get(POD_DELETION_COST)
    if text is None:
        return 0
    try:
        value = int(text, 10)
    except ValueError:
        return 0
    return value if -(2**31) <= value < 2**31 else 0


_PHASE_ORDINAL: Final[Mapping[str, int]] = {PENDING: 0, "Unknown": 1, RUNNING: 2}


def _log_rank(t: int, now: int) -> int:
    d = now - t
    return int(math.log2(d)) if d > 0 else -1


def _after_or_zero(t1: int | None, t2: int | None) -> bool:
    """afterOrZero: an empty time sorts first, then the later one."""
    if t1 is None or t2 is None:
        return t1 is None
    return t1 > t2


def _time_less(t1: int | None, t2: int | None, now: int, uid1: str, uid2: str) -> bool:
    """LogarithmicScaleDown (on by default): compare the base-2 log buckets of the ages."""
    if t1 is None or t2 is None:
        return _after_or_zero(t1, t2)
    diff = _log_rank(t1, now) - _log_rank(t2, now)
    if diff == 0:
        return uid1 < uid2
    return diff < 0


def _less(a: Pod, ra: int, b: Pod, rb: int, now: int) -> bool:
    """ActivePodsWithRanks.Less: which pod to delete first."""
    if a.node_name != b.node_name and (not a.node_name or not b.node_name):
        return not a.node_name
    pa, pb = _PHASE_ORDINAL.get(a.phase, 0), _PHASE_ORDINAL.get(b.phase, 0)
    if pa != pb:
        return pa < pb
    if is_ready(a) != is_ready(b):
        return not is_ready(a)
    ca, cb = deletion_cost(a), deletion_cost(b)
    if ca != cb:
        return ca < cb
    if ra != rb:
        return ra > rb
    if is_ready(a) and is_ready(b):
        ta, tb = ready_time(a), ready_time(b)
        if ta != tb:
            return _time_less(ta, tb, now, a.uid, b.uid)
    if a.creation_timestamp != b.creation_timestamp:
        return _time_less(a.creation_timestamp, b.creation_timestamp, now, a.uid, b.uid)
    return False


def pods_to_delete(
    candidates: Sequence[Pod], related: Iterable[Pod], diff: int, now: int
) -> list[Pod]:
    """``getPodsToDelete``: the ``diff`` pods to delete first, ranked by
    ActivePodsWithRanks with each pod's rank the number of active ``related`` pods
    on its node. The sort is stable (upstream's is not: equal pods keep input order)."""
    if diff >= len(candidates):
        return list(candidates)
    on_node: dict[str, int] = {}
    for p in related:
        if is_active(p):
            on_node[p.node_name] = on_node.get(p.node_name, 0) + 1
    ranked = [(p, on_node.get(p.node_name, 0)) for p in candidates]

    def cmp(x: tuple[Pod, int], y: tuple[Pod, int]) -> int:
        if _less(x[0], x[1], y[0], y[1], now):
            return -1
        if _less(y[0], y[1], x[0], x[1], now):
            return 1
        return 0

    ranked.sort(key=functools.cmp_to_key(cmp))
    return [p for p, _ in ranked[:diff]]


PodLister = Callable[[str], Iterable[Pod]]
"""namespace -> the live pods of that namespace (the API server's current state)."""
