"""Who owns a StatefulSet's claims under its ``persistentVolumeClaimRetentionPolicy``
(upstream pkg/controller/statefulset/stateful_set_utils.go: ``matchesRef``,
``hasOwnerRef``, ``hasStaleOwnerRef``, ``hasUnexpectedController``,
``hasNonControllerOwner``, ``isClaimOwnerUpToDate``,
``updateClaimOwnerRefForSetAndPod``, ``podInOrdinalRange``).

The policy sets owner references so that the garbage collector deletes claims:

- ``whenScaled: Retain``, ``whenDeleted: Retain``: no reference to the set or pod;
- ``Retain``/``Delete`` (set deletion only): the StatefulSet controls the claim;
- ``Delete``/``Retain`` (scale-down only): the pod controls the claim once its
  ordinal is outside the set's range (condemned), nothing otherwise;
- ``Delete``/``Delete``: the pod when condemned, the set otherwise.

Claims with a stale reference (the set's or pod's kind and name, another uid) are
left alone; a claim another controller controls is left to it (our references are
removed). Pure functions; ``stateful_claims`` reads and writes the claims.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from kubesched.api.claim_templates import DELETE, RETAIN, RetentionPolicy
from kubesched.api.types import OwnerReference

SET_API: Final = "apps/v1"
SET_KIND: Final = "StatefulSet"
POD_API: Final = "v1"
POD_KIND: Final = "Pod"

_ORDINAL_RE: Final = re.compile(r"(.*)-([0-9]+)$")
_INT32_MAX: Final = 2**31 - 1


@dataclass(frozen=True, slots=True)
class Obj:
    """An object a claim may name as owner: its group/version, kind, name, uid."""

    api_version: str
    kind: str
    name: str
    uid: str


@dataclass(frozen=True, slots=True)
class SetView:
    """What the ownership rules read of a StatefulSet."""

    name: str
    uid: str
    policy: RetentionPolicy
    start: int
    replicas: int

    @property
    def obj(self) -> Obj:
        return Obj(SET_API, SET_KIND, self.name, self.uid)


def pod_obj(name: str, uid: str) -> Obj:
    return Obj(POD_API, POD_KIND, name, uid)


def get_ordinal(pod_name: str) -> int:
    """``getOrdinal``: the trailing ``-<n>`` of a pod's name (any prefix), -1 when
    there is none or it does not fit an int32."""
    m = _ORDINAL_RE.match(pod_name)
    if m is None:
        return -1
    n = int(m.group(2))
    return n if n <= _INT32_MAX else -1


def pod_in_ordinal_range(pod_name: str, sts: SetView) -> bool:
    ordinal = get_ordinal(pod_name)
    return sts.start <= ordinal <= sts.start + sts.replicas - 1


def matches_ref(ref: OwnerReference, obj: Obj) -> bool:
    """Same group/version, kind and name (the uid is not compared)."""
    return ref.api_version == obj.api_version and ref.kind == obj.kind and ref.name == obj.name


def has_owner_ref(refs: Iterable[OwnerReference], uid: str) -> bool:
    return any(r.uid == uid for r in refs)


def has_stale_owner_ref(refs: Iterable[OwnerReference], obj: Obj) -> bool:
    """The first reference naming ``obj`` has another uid."""
    for r in refs:
        if matches_ref(r, obj):
            return r.uid != obj.uid
    return False


def has_unexpected_controller(refs: Iterable[OwnerReference], sts: SetView, pod: Obj) -> bool:
    """Under a policy other than Retain/Retain: a controller that is neither the set
    nor the pod, or a reference to the set's or pod's name with another uid."""
    if sts.policy.when_scaled == RETAIN and sts.policy.when_deleted == RETAIN:
        return False
    set_obj = sts.obj
    for r in refs:
        if matches_ref(r, set_obj):
            if r.uid != sts.uid:
                return True
            continue
        if matches_ref(r, pod):
            if r.uid != pod.uid:
                return True
            continue
        if r.controller:
            return True
    return False


def has_non_controller_owner(refs: Iterable[OwnerReference], sts: SetView, pod: Obj) -> bool:
    """The set or the pod owns the claim without controlling it."""
    return any((r.uid in (sts.uid, pod.uid)) and not r.controller for r in refs)


def is_claim_owner_up_to_date(refs: tuple[OwnerReference, ...], sts: SetView, pod: Obj) -> bool:
    """``isClaimOwnerUpToDate``: the claim's references agree with the policy (claims
    in an unknown state, with stale references, count as up to date: not touched)."""
    set_obj = sts.obj
    if has_stale_owner_ref(refs, set_obj) or has_stale_owner_ref(refs, pod):
        return True
    set_ref = has_owner_ref(refs, sts.uid)
    pod_ref = has_owner_ref(refs, pod.uid)
    if has_unexpected_controller(refs, sts, pod):
        return not (set_ref or pod_ref)
    if has_non_controller_owner(refs, sts, pod):
        return False
    scaled, deleted = sts.policy.when_scaled, sts.policy.when_deleted
    condemned = not pod_in_ordinal_range(pod.name, sts)
    if scaled == DELETE and deleted == RETAIN:
        return not set_ref and condemned == pod_ref
    if scaled == DELETE and deleted == DELETE:
        return condemned != set_ref and condemned == pod_ref
    if scaled == RETAIN and deleted == DELETE:
        return set_ref and not pod_ref
    return not set_ref and not pod_ref  # Retain/Retain (and anything unknown)


def _add_controller_ref(refs: list[OwnerReference], owner: Obj) -> None:
    """``addControllerRef``: append a controller reference unless one has its uid."""
    if not has_owner_ref(refs, owner.uid):
        refs.append(OwnerReference(owner.api_version, owner.kind, owner.name, owner.uid, True))


def updated_owner_refs(
    refs: tuple[OwnerReference, ...], sts: SetView, pod: Obj
) -> tuple[OwnerReference, ...]:
    """``updateClaimOwnerRefForSetAndPod``: the claim's references with ours made to
    match the policy (ours only removed when another controller has the claim)."""
    unexpected = has_unexpected_controller(refs, sts, pod)
    set_obj = sts.obj
    out = [r for r in refs if not (matches_ref(r, set_obj) or matches_ref(r, pod))]
    if unexpected:
        return tuple(out)
    scaled, deleted = sts.policy.when_scaled, sts.policy.when_deleted
    condemned = not pod_in_ordinal_range(pod.name, sts)
    if scaled == RETAIN and deleted == DELETE:
        _add_controller_ref(out, set_obj)
    elif scaled == DELETE and deleted == RETAIN:
        if condemned:
            _add_controller_ref(out, pod)
    elif scaled == DELETE and deleted == DELETE:
        _add_controller_ref(out, pod if condemned else set_obj)
    return tuple(out)
