"""A StatefulSet's ``spec.volumeClaimTemplates`` and
``spec.persistentVolumeClaimRetentionPolicy``, as the API server stores them.

Upstream's StatefulSet validation (pkg/apis/apps/validation
``ValidateStatefulSetSpec``) checks the retention policy (``whenDeleted`` and
``whenScaled``: ``Retain`` or ``Delete``, ``Retain`` when unset, as
``SetDefaults_StatefulSet`` defaults them) but not the claim templates: a
template is validated when the StatefulSet controller creates a claim from it,
and the API server refuses that claim. So a template whose claim would be
refused does not make the StatefulSet bad input; it is kept with the API
server's reason (``VolumeClaimTemplate.refusal``), and the controller records
upstream's ``FailedCreate`` events instead of creating pods.

A template's ``metadata`` must still decode (a map, string name, string maps of
labels and annotations): a wrong type there is refused with the StatefulSet.

Made by ``kubesched.api.convert.workloads`` (a StatefulSet's
``StatefulSetDetails``); read by the simulated StatefulSet controller
(``kubesched.sim.controllers``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kubesched.api.storage import ClaimTemplate

RETAIN: Final = "Retain"
DELETE: Final = "Delete"
RETENTION_POLICIES: Final = (RETAIN, DELETE)
"""apps/v1 PersistentVolumeClaimRetentionPolicyType, in validation's order."""


@dataclass(frozen=True, slots=True, eq=False)
class VolumeClaimTemplate:
    """One ``spec.volumeClaimTemplates[]`` entry: ``name`` is its
    ``metadata.name``; ``claim`` its labels, annotations and claim spec (defaulted
    as the API server defaults a claim), or None when the API server would refuse
    the claim, ``refusal`` then saying why (``field: message``, the claim's own
    field path, e.g. ``spec.accessModes: Required value: ...``)."""

    name: str
    claim: ClaimTemplate | None
    refusal: str = ""


@dataclass(frozen=True, slots=True)
class RetentionPolicy:
    """``spec.persistentVolumeClaimRetentionPolicy`` (GA since v1.32)."""

    when_deleted: str = RETAIN
    when_scaled: str = RETAIN


RETAIN_ALL: Final = RetentionPolicy()
"""The default policy: claims are kept when pods or the StatefulSet go."""
