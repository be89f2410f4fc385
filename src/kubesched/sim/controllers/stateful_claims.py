"""A StatefulSet's claims: the PersistentVolumeClaim side of upstream's
StatefulPodControl (pkg/controller/statefulset/stateful_pod_control.go) and the
claim helpers of stateful_set_utils.go.

- ``new_claims`` (``getPersistentVolumeClaims``): for ordinal n, one claim
  ``<template>-<sts>-<n>`` per ``volumeClaimTemplates`` entry, in the set's
  namespace, with the template's labels, annotations and spec, the labels of
  the set's ``selector.matchLabels`` winning over the template's;
- ``pod_spec`` (``updateStorage``): the pod's volumes are a
  ``persistentVolumeClaim`` volume per template (named after it), then the pod
  template's other volumes (one of a template's name is replaced);
- ``create_claims`` (``createPersistentVolumeClaims``): each missing claim is
  created through the simulated API server (``sim.storage``); an existing claim is
  reused (a dump's, or a deleted pod's of that name), one being deleted is an
  error. Errors are returned for the pod's ``FailedCreate`` event; a claim the API
  server refuses also gets its own ``FailedCreate`` event;
- ``matches_retention`` / ``update_for_retention``
  (``ClaimsMatchRetentionPolicy`` / ``UpdatePodClaimForRetentionPolicy``): the
  claims' owner references follow the retention policy (``claim_owners``), so
  that the garbage collector deletes them with a condemned pod or with the set;
- ``is_stale`` (``PodClaimIsStale``): with ``whenScaled: Delete``, a claim still
  referring to an earlier pod of that name blocks the pod's creation.

Claims are never deleted here: the pod created again under the same name uses
them again. ``SuccessfulCreate`` of claims is not recorded (as for pods); each
failure event is recorded once per claim until it succeeds.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from kubesched.api.claim_templates import RETAIN
from kubesched.api.convert import check_dns_label, check_dns_subdomain
from kubesched.api.errors import InputError
from kubesched.api.storage import PVC_SOURCE, PersistentVolumeClaim, PodVolume
from kubesched.api.types import PodSpec
from kubesched.sim.controllers.base import Env
from kubesched.sim.controllers.claim_owners import (
    SetView,
    get_ordinal,
    has_stale_owner_ref,
    has_unexpected_controller,
    is_claim_owner_up_to_date,
    pod_obj,
    updated_owner_refs,
)

if TYPE_CHECKING:
    from kubesched.sim.controllers.statefulset import StatefulSetObj


@dataclass(frozen=True, slots=True)
class NewClaim:
    """A claim a pod of the set uses: its name, the template it comes from, and the
    claim to create (None, with the API server's reason, when it would be refused)."""

    template: str
    name: str
    claim: PersistentVolumeClaim | None
    refusal: str = ""


def claim_name(template: str, sts_name: str, ordinal: int) -> str:
    """``getPersistentVolumeClaimName``."""
    return f"{template}-{sts_name}-{ordinal}"


def set_view(sts: StatefulSetObj) -> SetView:
    d = sts.details
    return SetView(sts.name, sts.uid, d.retention, d.start_ordinal, sts.replicas)


def new_claims(sts: StatefulSetObj, ordinal: int) -> list[NewClaim]:
    """``getPersistentVolumeClaims`` (a later template of the same name wins, as in
    upstream's map), in template order."""
    by_template: dict[str, NewClaim] = {}
    match_labels = sts.selector.match_labels
    for t in sts.details.volume_claim_templates:
        name = claim_name(t.name, sts.name, ordinal)
        c = t.claim
        if c is None:
            by_template[t.name] = NewClaim(t.name, name, None, t.refusal)
            continue
        labels = {**c.labels, **match_labels} if c.labels else dict(match_labels)
        pvc = PersistentVolumeClaim(
            name=name,
            namespace=sts.namespace,
            labels=labels,
            annotations=dict(c.annotations),
            access_modes=c.access_modes,
            request=c.request,
            storage_class_name=c.storage_class_name,
            volume_name=c.volume_name,
            selector=c.selector,
            volume_mode=c.volume_mode,
            volume_attributes_class_name=c.volume_attributes_class_name,
        )
        by_template[t.name] = NewClaim(t.name, name, pvc)
    return list(by_template.values())


@dataclass(slots=True)
class StatefulClaims:
    """The StatefulSet controller's claim operations (see the module docstring)."""

    env: Env
    _failed: set[str] = field(default_factory=set)
    """Claim keys whose FailedCreate event is recorded (until they are created)."""
    _conflicts: set[str] = field(default_factory=set)
    """Claim keys whose ConflictingController event is recorded."""
    _specs: dict[tuple[str, int], PodSpec] = field(default_factory=dict)

    # ------------------------------------------------------------------ pods
    def pod_spec(self, sts: StatefulSetObj, ordinal: int) -> PodSpec:
        """``updateStorage`` on the template's spec; InputError (field
        ``spec.volumes[i].name``) when a template's name is no valid volume name."""
        base = sts.template.spec
        if not sts.details.volume_claim_templates:
            return base
        key = (sts.uid, ordinal)
        spec = self._specs.get(key)
        if spec is not None:
            return spec
        claims = new_claims(sts, ordinal)
        volumes = [PodVolume(c.template, PVC_SOURCE, claim_name=c.name) for c in claims]
        for i, v in enumerate(volumes):
            check_dns_label(v.name, f"spec.volumes[{i}].name")
        names = {c.template for c in claims}
        volumes.extend(v for v in base.volumes if v.name not in names)
        spec = replace(base, volumes=tuple(volumes))
        self._specs[key] = spec
        return spec

    # ------------------------------------------------------------------ claims
    def create_claims(self, sts: StatefulSetObj, pod_name: str, ordinal: int) -> list[str]:
        """``createPersistentVolumeClaims``: the errors (empty when every claim exists)."""
        storage = self.env.cluster.volumes
        errors = []
        for nc in new_claims(sts, ordinal):
            existing = storage.get_pvc(sts.namespace, nc.name)
            if existing is not None:
                if existing.deletion_timestamp is not None:
                    errors.append(f"pvc {nc.name} is being deleted")
                continue
            refusal = self._refusal(nc)
            key = f"{sts.namespace}/{nc.name}"
            if refusal:
                errors.append(f"failed to create PVC {nc.name}: {refusal}")
                if key not in self._failed:
                    self._failed.add(key)
                    self._event(
                        sts,
                        "FailedCreate",
                        f"create Claim {nc.name} for Pod {pod_name} in StatefulSet "
                        f"{sts.name} failed error: {refusal}",
                    )
                continue
            assert nc.claim is not None
            self._failed.discard(key)
            storage.create(nc.claim)
        return errors

    @staticmethod
    def _refusal(nc: NewClaim) -> str:
        """The API server's answer to creating the claim ("" when it is created):
        the name is checked first (ValidateObjectMeta), then the template's spec."""
        try:
            check_dns_subdomain(nc.name, "metadata.name")
        except InputError as err:
            return f'PersistentVolumeClaim "{nc.name}" is invalid: {err}'
        if nc.claim is None:
            return f'PersistentVolumeClaim "{nc.name}" is invalid: {nc.refusal}'
        return ""

    def is_stale(self, sts: StatefulSetObj, pod_name: str, ordinal: int) -> bool:
        """``PodClaimIsStale`` for a pod not created yet (no uid: any reference to a
        pod of that name is an earlier pod's)."""
        if sts.details.retention.when_scaled == RETAIN:
            return False
        storage = self.env.cluster.volumes
        pod = pod_obj(pod_name, "")
        for nc in new_claims(sts, ordinal):
            existing = storage.get_pvc(sts.namespace, nc.name)
            if existing is not None and has_stale_owner_ref(existing.owner_references, pod):
                return True
        return False

    # ------------------------------------------------------------------ retention
    def _existing(self, sts: StatefulSetObj, pod_name: str) -> list[PersistentVolumeClaim]:
        ordinal = get_ordinal(pod_name)
        storage = self.env.cluster.volumes
        names = dict.fromkeys(t.name for t in sts.details.volume_claim_templates)
        out = []
        for template in names:
            pvc = storage.get_pvc(sts.namespace, claim_name(template, sts.name, ordinal))
            if pvc is not None:
                out.append(pvc)
        return out

    def matches_retention(self, sts: StatefulSetObj, pod_name: str, pod_uid: str) -> bool:
        """``ClaimsMatchRetentionPolicy`` (missing claims are left for a later sync)."""
        view, pod = set_view(sts), pod_obj(pod_name, pod_uid)
        return all(
            is_claim_owner_up_to_date(pvc.owner_references, view, pod)
            for pvc in self._existing(sts, pod_name)
        )

    def update_for_retention(self, sts: StatefulSetObj, pod_name: str, pod_uid: str) -> None:
        """``UpdatePodClaimForRetentionPolicy``: set the claims' owner references."""
        view, pod = set_view(sts), pod_obj(pod_name, pod_uid)
        storage = self.env.cluster.volumes
        for pvc in self._existing(sts, pod_name):
            refs = pvc.owner_references
            if has_unexpected_controller(refs, view, pod) and pvc.key not in self._conflicts:
                self._conflicts.add(pvc.key)
                self.env.event(
                    "StatefulSet",
                    sts.namespace,
                    sts.name,
                    "Warning",
                    "ConflictingController",
                    f"PersistentVolumeClaim {pvc.name} has a conflicting OwnerReference that "
                    "acts as a manging controller, the retention policy is ignored for this "
                    "claim",
                )
            if is_claim_owner_up_to_date(refs, view, pod):
                continue
            new_refs = updated_owner_refs(refs, view, pod)
            if new_refs != refs:
                storage.update_pvc(replace(pvc, owner_references=new_refs))

    def _event(self, sts: StatefulSetObj, reason: str, message: str) -> None:
        self.env.event("StatefulSet", sts.namespace, sts.name, "Warning", reason, message)
