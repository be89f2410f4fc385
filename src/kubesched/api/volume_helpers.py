"""Storage helpers shared by the volume plugins and the simulated controllers.

Pure functions over ``api.storage`` objects re-expressing component-helpers
storage/volume and storage/ephemeral, MatchTopologySelectorTerms, LabelZonesToSet
and GetCSIAttachLimitKey.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Final

from kubesched.api.selectors import label_selector_matches, node_selector_matches
from kubesched.api.storage import (
    ANN_BETA_STORAGE_CLASS,
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    PVC_SOURCE,
    VOLUME_AVAILABLE,
    ClaimReference,
    PersistentVolume,
    PersistentVolumeClaim,
    PodVolume,
    TopologySelectorTerm,
)
from kubesched.api.types import Pod

CSI_ATTACH_LIMIT_PREFIX: Final = "attachable-volumes-csi-"
RESOURCE_NAME_LENGTH_LIMIT: Final = 63
LABEL_MULTI_ZONE_DELIMITER: Final = "__"


# --------------------------------------------------------------------------- classes


def claim_class(claim: PersistentVolumeClaim) -> str:
    """GetPersistentVolumeClaimClass: the beta annotation wins, then
    ``spec.storageClassName``; "" when neither is set."""
    ann = claim.annotations.get(ANN_BETA_STORAGE_CLASS)
    if ann is not None:
        return ann
    return claim.storage_class_name or ""


def volume_class(volume: PersistentVolume) -> str:
    """GetPersistentVolumeClass: the beta annotation wins, then ``spec.storageClassName``."""
    ann = volume.annotations.get(ANN_BETA_STORAGE_CLASS)
    if ann is not None:
        return ann
    return volume.storage_class_name


# --------------------------------------------------------------------------- binding


def is_volume_bound_to_claim(volume: PersistentVolume, claim: PersistentVolumeClaim) -> bool:
    """IsVolumeBoundToClaim: ``claimRef`` names the claim (and its uid, when the ref has one)."""
    ref = volume.claim_ref
    if ref is None or ref.name != claim.name or ref.namespace != claim.namespace:
        return False
    return not ref.uid or ref.uid == claim.uid


def is_claim_fully_bound(claim: PersistentVolumeClaim) -> bool:
    """The binder's isPVCFullyBound: ``spec.volumeName`` set and the PV controller's
    ``pv.kubernetes.io/bind-completed`` annotation present."""
    return bool(claim.volume_name) and ANN_BIND_COMPLETED in claim.annotations


def bind_volume_to_claim(
    volume: PersistentVolume, claim: PersistentVolumeClaim
) -> tuple[PersistentVolume, bool]:
    """GetBindVolumeToClaim: (the volume with ``claimRef`` set to the claim and
    ``pv.kubernetes.io/bound-by-controller`` added when it was not pre-bound, dirty)."""
    dirty = False
    out = volume
    set_by_controller = not is_volume_bound_to_claim(volume, claim)
    ref = volume.claim_ref
    if ref is None or (ref.name, ref.namespace, ref.uid) != (
        claim.name,
        claim.namespace,
        claim.uid,
    ):
        out = replace(out, claim_ref=ClaimReference(claim.namespace, claim.name, claim.uid))
        dirty = True
    if set_by_controller and ANN_BOUND_BY_CONTROLLER not in out.annotations:
        out = replace(out, annotations={**out.annotations, ANN_BOUND_BY_CONTROLLER: "yes"})
        dirty = True
    return out, dirty


def check_node_affinity(volume: PersistentVolume, node_labels: Mapping[str, str]) -> bool:
    """CheckNodeAffinity: the volume's required node affinity matches a node with
    these labels (matchFields are not evaluated: the node is built from labels only)."""
    sel = volume.node_affinity
    return sel is None or node_selector_matches(sel, "", node_labels)


def check_access_modes(claim: PersistentVolumeClaim, volume: PersistentVolume) -> bool:
    """CheckAccessModes: the volume offers every access mode the claim asks for."""
    have = set(volume.access_modes)
    return all(m in have for m in claim.access_modes)


def find_matching_volume(
    claim: PersistentVolumeClaim,
    volumes: Iterable[PersistentVolume],
    node_labels: Mapping[str, str] | None,
    excluded: Mapping[str, PersistentVolume] | None = None,
    delay_binding: bool = False,
) -> PersistentVolume | None:
    """FindMatchingVolume (VolumeAttributesClass GA since v1.34): a volume pre-bound to
    the claim wins at once (if its node affinity fits ``node_labels``); else the
    smallest Available volume of the claim's class with enough capacity, the same
    volume mode and attributes class, a matching selector and node affinity (with
    ``node_labels``, the scheduler's path, also the access modes). ``delay_binding``
    without a node (the PV controller, WaitForFirstConsumer) matches only pre-bound."""
    requested = claim.request or 0
    requested_class = claim_class(claim)
    excluded = excluded or {}
    smallest: PersistentVolume | None = None
    for volume in volumes:
        if volume.name in excluded:
            continue
        if volume.claim_ref is not None and not is_volume_bound_to_claim(volume, claim):
            continue
        if volume.capacity < requested:
            continue
        if volume.volume_mode != claim.volume_mode:
            continue
        if volume.volume_attributes_class_name != claim.volume_attributes_class_name:
            continue  # also for a volume pre-bound to the claim (upstream "fail-prebound-vac")
        if volume.deletion_timestamp is not None:
            continue
        affinity_ok = node_labels is None or check_node_affinity(volume, node_labels)
        if is_volume_bound_to_claim(volume, claim):
            return volume if affinity_ok else None
        if node_labels is None and delay_binding:
            continue
        if volume.phase != VOLUME_AVAILABLE:
            continue
        if claim.selector is not None and not label_selector_matches(claim.selector, volume.labels):
            continue
        if volume_class(volume) != requested_class:
            continue
        if not affinity_ok:
            continue
        if node_labels is not None and not check_access_modes(claim, volume):
            continue
        if smallest is None or smallest.capacity > volume.capacity:
            smallest = volume
    return smallest


# --------------------------------------------------------------------------- topology


def match_topology_selector_terms(
    terms: tuple[TopologySelectorTerm, ...], labels: Mapping[str, str]
) -> bool:
    """MatchTopologySelectorTerms: no terms match everything; terms are ORed; an
    empty term matches nothing; a term's requirements (key In values) are ANDed."""
    if not terms:
        return True
    for term in terms:
        if not term.match_label_expressions:
            continue
        if all(r.values and labels.get(r.key) in r.values for r in term.match_label_expressions):
            return True
    return False


def label_zones_to_set(value: str) -> frozenset[str] | None:
    """LabelZonesToSet: a ``__``-separated zone list (entries trimmed); None when an
    entry is empty (upstream's error: the label is then ignored)."""
    zones = set()
    for part in value.split(LABEL_MULTI_ZONE_DELIMITER):
        zone = part.strip()
        if not zone:
            return None
        zones.add(zone)
    return frozenset(zones)


# --------------------------------------------------------------------------- pods


def ephemeral_claim_name(pod: Pod, volume: PodVolume) -> str:
    """ephemeral.VolumeClaimName: ``<pod name>-<volume name>``."""
    return f"{pod.name}-{volume.name}"


def volume_is_for_pod(pod: Pod, claim: PersistentVolumeClaim) -> str | None:
    """ephemeral.VolumeIsForPod: None when the pod controls the claim, else the error."""
    for ref in claim.owner_references:
        if ref.controller:
            if ref.uid == pod.uid:
                return None
            break
    return (
        f"PVC {claim.namespace}/{claim.name} was not created for pod "
        f"{pod.namespace}/{pod.name} (pod is not owner)"
    )


def pod_uses_claim(pod: Pod, claim: PersistentVolumeClaim, *, ephemeral: bool = True) -> bool:
    """The claim, in the pod's namespace, is one of the pod's ``persistentVolumeClaim``
    volumes (or, with ``ephemeral``, the claim of one of its ``ephemeral`` volumes):
    what the volume plugins' claim hints ask."""
    if claim.namespace != pod.namespace:
        return False
    for v in pod.spec.volumes:
        if v.source == PVC_SOURCE:
            if v.claim_name == claim.name:
                return True
        elif ephemeral and v.template is not None and ephemeral_claim_name(pod, v) == claim.name:
            return True
    return False


def csi_attach_limit_key(driver: str) -> str:
    """GetCSIAttachLimitKey: ``attachable-volumes-csi-<driver>``; names too long for a
    resource name keep 23 characters of the driver plus 16 hex digits of its SHA-1."""
    if len(CSI_ATTACH_LIMIT_PREFIX) + len(driver) >= RESOURCE_NAME_LENGTH_LIMIT:
        digest = hashlib.sha1(driver.encode()).hexdigest()[:16]
        return CSI_ATTACH_LIMIT_PREFIX + driver[:23] + digest
    return CSI_ATTACH_LIMIT_PREFIX + driver
