"""The volume binder: which of a pod's claims are bound, and how a node can
satisfy the others (upstream volumebinding/binder.go, v1.36).

Pure functions over a ``StorageLister``; the plugin keeps their results in the
cycle state. ``find_pod_volumes`` returns the node's conflict reasons in
upstream's order: volume node affinity conflict, no persistent volume to bind,
not enough free storage (CSIStorageCapacity is not modelled, so never), bound
to a missing volume.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Final

from kubesched.api.storage import (
    ANN_SELECTED_NODE,
    NOT_SUPPORTED_PROVISIONER,
    PVC_SOURCE,
    WAIT_FOR_FIRST_CONSUMER,
    PersistentVolume,
    PersistentVolumeClaim,
)
from kubesched.api.types import Node, Pod
from kubesched.api.volume_helpers import (
    bind_volume_to_claim,
    check_node_affinity,
    claim_class,
    ephemeral_claim_name,
    find_matching_volume,
    is_claim_fully_bound,
    match_topology_selector_terms,
    volume_is_for_pod,
)
from kubesched.framework.ports import StorageLister

ERR_REASON_BIND_CONFLICT: Final = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT: Final = "node(s) had volume node affinity conflict"
ERR_REASON_PV_NOT_EXIST: Final = (
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
)
UNBOUND_IMMEDIATE: Final = "pod has unbound immediate PersistentVolumeClaims"


class BinderError(Exception):
    """Something upstream reports as an error (the status code is Error)."""


@dataclass(frozen=True, slots=True)
class PodVolumeClaims:
    """The pod's claims by state, and the volumes of the delayed claims' classes."""

    bound: tuple[PersistentVolumeClaim, ...] = ()
    unbound_delay: tuple[PersistentVolumeClaim, ...] = ()
    unbound_immediate: tuple[PersistentVolumeClaim, ...] = ()
    volumes_by_class: Mapping[str, Sequence[PersistentVolume]] = field(default_factory=dict)


@dataclass(slots=True)
class PodVolumes:
    """A node's answer for the pod: claims to bind to existing volumes (static
    bindings, as (volume, claim)) and claims to provision."""

    static_bindings: list[tuple[PersistentVolume, PersistentVolumeClaim]] = field(
        default_factory=list
    )
    dynamic_provisions: list[PersistentVolumeClaim] = field(default_factory=list)


def pod_has_pvcs(pod: Pod, storage: StorageLister) -> tuple[bool, str | None]:
    """podHasPVCs: (the pod uses a claim, the UnschedulableAndUnresolvable reason
    when one is missing, lost, being deleted or an ephemeral claim not the pod's)."""
    has = False
    for v in pod.spec.volumes:
        if v.source == PVC_SOURCE:
            name, ephemeral = v.claim_name, False
        elif v.template is not None:
            name, ephemeral = ephemeral_claim_name(pod, v), True
        else:
            continue
        has = True
        pvc = storage.get_pvc(pod.namespace, name)
        if pvc is None:
            if ephemeral:
                return has, (
                    "waiting for ephemeral volume controller to create the "
                    f'persistentvolumeclaim "{name}"'
                )
            return has, f'persistentvolumeclaim "{name}" not found'
        if pvc.phase == "Lost":
            return has, (
                f'persistentvolumeclaim "{pvc.name}" bound to non-existent '
                f'persistentvolume "{pvc.volume_name}"'
            )
        if pvc.deletion_timestamp is not None:
            return has, f'persistentvolumeclaim "{pvc.name}" is being deleted'
        if ephemeral:
            err = volume_is_for_pod(pod, pvc)
            if err is not None:
                return has, err
    return has, None


def _claim_of(pod: Pod, storage: StorageLister, index: int) -> PersistentVolumeClaim | None:
    """isVolumeBound's lookup for volume ``index`` (None: not a claim volume)."""
    v = pod.spec.volumes[index]
    if v.source == PVC_SOURCE:
        name = v.claim_name
    elif v.template is not None:
        name = ephemeral_claim_name(pod, v)
    else:
        return None
    pvc = storage.get_pvc(pod.namespace, name)
    if pvc is None:
        raise BinderError(f'error getting PVC "{pod.namespace}/{name}": not found')
    if v.template is not None:
        err = volume_is_for_pod(pod, pvc)
        if err is not None:
            raise BinderError(err)
    return pvc


def is_delay_binding_mode(claim: PersistentVolumeClaim, storage: StorageLister) -> bool:
    """IsDelayBindingMode: the claim's class exists and waits for the first consumer."""
    name = claim_class(claim)
    if not name:
        return False
    sc = storage.get_storage_class(name)
    return sc is not None and sc.volume_binding_mode == WAIT_FOR_FIRST_CONSUMER


def get_pod_volume_claims(pod: Pod, storage: StorageLister) -> PodVolumeClaims:
    """GetPodVolumeClaims; raises BinderError."""
    bound: list[PersistentVolumeClaim] = []
    delay: list[PersistentVolumeClaim] = []
    immediate: list[PersistentVolumeClaim] = []
    for i in range(len(pod.spec.volumes)):
        pvc = _claim_of(pod, storage, i)
        if pvc is None:
            continue
        if is_claim_fully_bound(pvc):
            bound.append(pvc)
        elif is_delay_binding_mode(pvc, storage) and not pvc.volume_name:
            delay.append(pvc)
        else:
            # Pre-bound claims (volumeName set, not yet bound) count as immediate.
            immediate.append(pvc)
    by_class = {claim_class(c): storage.list_pvs(claim_class(c)) for c in delay}
    return PodVolumeClaims(tuple(bound), tuple(delay), tuple(immediate), by_class)


def are_pod_volumes_bound(pod: Pod, storage: StorageLister) -> bool:
    """arePodVolumesBound: every claim of the pod exists and is fully bound."""
    for i in range(len(pod.spec.volumes)):
        try:
            pvc = _claim_of(pod, storage, i)
        except BinderError:
            return False
        if pvc is not None and not is_claim_fully_bound(pvc):
            return False
    return True


def find_pod_volumes(
    pod: Pod, claims: PodVolumeClaims, node: Node, storage: StorageLister
) -> tuple[PodVolumes, list[str]]:
    """FindPodVolumes: (the node's bindings and provisions, conflict reasons);
    raises BinderError."""
    out = PodVolumes()
    bound_ok = unbound_ok = pvs_found = True
    if claims.bound:
        bound_ok, pvs_found = _check_bound_claims(claims.bound, node, storage)
    if claims.unbound_delay:
        unbound_ok = _find_unbound(pod, claims, node, storage, out)
    reasons = []
    if not bound_ok:
        reasons.append(ERR_REASON_NODE_CONFLICT)
    if not unbound_ok:
        reasons.append(ERR_REASON_BIND_CONFLICT)
    if not pvs_found:
        reasons.append(ERR_REASON_PV_NOT_EXIST)
    return out, reasons


def _check_bound_claims(
    claims: Sequence[PersistentVolumeClaim], node: Node, storage: StorageLister
) -> tuple[bool, bool]:
    """checkBoundClaims: (node affinity satisfied, volumes found); stops at the first failure."""
    for pvc in claims:
        pv = storage.get_pv(pvc.volume_name)
        if pv is None:
            return True, False
        if not check_node_affinity(pv, node.labels):
            return False, True
    return True, True


def _find_unbound(
    pod: Pod, claims: PodVolumeClaims, node: Node, storage: StorageLister, out: PodVolumes
) -> bool:
    to_match: list[PersistentVolumeClaim] = []
    to_provision: list[PersistentVolumeClaim] = []
    for claim in claims.unbound_delay:
        selected = claim.annotations.get(ANN_SELECTED_NODE)
        if selected is not None:
            if selected != node.name:
                return False  # the fast path: provisioning already chose another node
            to_provision.append(claim)
        else:
            to_match.append(claim)
    satisfied = True
    if to_match:
        satisfied, unmatched = _find_matching_volumes(to_match, claims, node, out)
        to_provision.extend(unmatched)
    if to_provision:
        satisfied = _check_volume_provisions(to_provision, node, storage, out)
    return satisfied


def _find_matching_volumes(
    to_match: list[PersistentVolumeClaim],
    claims: PodVolumeClaims,
    node: Node,
    out: PodVolumes,
) -> tuple[bool, list[PersistentVolumeClaim]]:
    """findMatchingVolumes: smallest claims first, each gets the smallest fitting
    volume not chosen for an earlier claim of the pod."""
    chosen: dict[str, PersistentVolume] = {}
    unmatched: list[PersistentVolumeClaim] = []
    found = True
    for pvc in sorted(to_match, key=lambda c: c.request or 0):
        pvs = claims.volumes_by_class.get(claim_class(pvc), ())
        pv = find_matching_volume(pvc, pvs, node.labels, chosen, True)
        if pv is None:
            unmatched.append(pvc)
            found = False
            continue
        chosen[pv.name] = pv
        out.static_bindings.append((pv, pvc))
    return found, unmatched


def _check_volume_provisions(
    claims: list[PersistentVolumeClaim], node: Node, storage: StorageLister, out: PodVolumes
) -> bool:
    """checkVolumeProvisions: every claim's class can provision on this node (its
    provisioner is set and its allowedTopologies admit the node)."""
    provisions: list[PersistentVolumeClaim] = []
    for claim in claims:
        name = claim_class(claim)
        if not name:
            raise BinderError(f'no class for claim "{claim.namespace}/{claim.name}"')
        sc = storage.get_storage_class(name)
        if sc is None:
            raise BinderError(f'failed to find storage class "{name}"')
        if not sc.provisioner or sc.provisioner == NOT_SUPPORTED_PROVISIONER:
            return False
        if not match_topology_selector_terms(sc.allowed_topologies, node.labels):
            return False
        provisions.append(claim)
    out.dynamic_provisions = provisions
    return True


def assume_pod_volumes(
    pod: Pod, node_name: str, volumes: PodVolumes, storage: StorageLister
) -> bool:
    """AssumePodVolumes: True when every claim is already bound; otherwise rewrite
    ``volumes`` into the API updates PreBind makes (volumes pre-bound to their
    claims, claims annotated with the selected node) and return False."""
    if are_pod_volumes_bound(pod, storage):
        return True
    bindings = []
    for pv, pvc in volumes.static_bindings:
        new_pv, _ = bind_volume_to_claim(pv, pvc)
        bindings.append((new_pv, pvc))
    provisions = [
        replace(c, annotations={**c.annotations, ANN_SELECTED_NODE: node_name})
        for c in volumes.dynamic_provisions
    ]
    volumes.static_bindings = bindings
    volumes.dynamic_provisions = provisions
    return False
