"""A StatefulSet's ``spec.volumeClaimTemplates`` and
``spec.persistentVolumeClaimRetentionPolicy``, as the API server stores them.

``ValidateStatefulSetSpec`` checks the retention policy (``whenDeleted`` and
``whenScaled``: ``Retain`` or ``Delete``, defaulting to ``Retain``) but not the
claim templates: the API server refuses a bad claim only when the controller
creates it. So a template whose claim would be refused is kept with the reason
(``VolumeClaimTemplate.refusal``) and the controller records ``FailedCreate``
events instead of creating pods; only a template ``metadata`` that fails to decode
makes the StatefulSet bad input.
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
