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
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Final

from kubesched.api.convert import (
    Raw,
    as_map,
    child,
    fail,
    get_list,
    get_map,
    get_str,
    get_str_map,
    opt_str,
    unsupported,
)
from kubesched.api.convert_storage import read_claim_spec
from kubesched.api.errors import InputError
from kubesched.api.storage import ClaimTemplate

RETAIN: Final = "Retain"
DELETE: Final = "Delete"
RETENTION_POLICIES: Final = (RETAIN, DELETE)
"""apps/v1 PersistentVolumeClaimRetentionPolicyType, in validation's order."""

RETENTION_PATH: Final = "spec.persistentVolumeClaimRetentionPolicy"


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


def read_volume_claim_templates(spec: Raw) -> tuple[VolumeClaimTemplate, ...]:
    """``spec.volumeClaimTemplates`` of a StatefulSet spec."""
    out = []
    for i, item in enumerate(get_list(spec, "volumeClaimTemplates", "spec")):
        path = f"spec.volumeClaimTemplates[{i}]"
        raw = as_map(item, path)
        meta = get_map(raw, "metadata", path)
        mpath = child(path, "metadata")
        name = get_str(meta, "name", mpath)
        labels = get_str_map(meta, "labels", mpath)
        annotations = get_str_map(meta, "annotations", mpath)
        try:
            claim = read_claim_spec(as_map(raw.get("spec"), "spec"), "spec")
        except InputError as err:
            out.append(VolumeClaimTemplate(name, None, str(err)))
            continue
        out.append(
            VolumeClaimTemplate(name, replace(claim, labels=labels, annotations=annotations))
        )
    return tuple(out)


def read_retention_policy(spec: Raw) -> RetentionPolicy:
    """``spec.persistentVolumeClaimRetentionPolicy``, defaulted and validated
    (``Unsupported value: "X": supported values: "Retain", "Delete"``)."""
    raw = get_map(spec, "persistentVolumeClaimRetentionPolicy", "spec")
    values = []
    for key in ("whenDeleted", "whenScaled"):
        value = opt_str(raw, key, RETENTION_PATH) or RETAIN
        if value not in RETENTION_POLICIES:
            raise fail(child(RETENTION_PATH, key), unsupported(value, RETENTION_POLICIES))
        values.append(value)
    return RetentionPolicy(values[0], values[1])
