"""A StatefulSet's volumeClaimTemplates and persistentVolumeClaimRetentionPolicy
(api/claim_templates.py, read in api/convert/workloads.py):
SetDefaults_StatefulSet's Retain/Retain default,
ValidatePersistentVolumeClaimRetentionPolicy's messages (pkg/apis/apps/validation),
and templates kept as the API server stores them: their claims are validated when
the controller creates them, not with the StatefulSet (ValidateStatefulSetSpec
does not look into them)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.claim_templates import DELETE, RETAIN, RetentionPolicy
from kubesched.api.workloads import StatefulSetDetails
from tests.api.test_load import load, load_error, patched
from tests.api.test_workloads import STS


def details(raw: dict[str, Any]) -> StatefulSetDetails:
    (loaded,) = load(raw).objects
    d = loaded.obj.details  # type: ignore[union-attr]
    assert isinstance(d, StatefulSetDetails)
    return d


@pytest.mark.parametrize(
    ("fragment", "policy"),
    [
        pytest.param(
            "{}", RetentionPolicy(RETAIN, RETAIN), id="SetDefaults_StatefulSet/nil policy"
        ),
        pytest.param(
            "{spec: {persistentVolumeClaimRetentionPolicy: {whenScaled: Delete}}}",
            RetentionPolicy(when_deleted=RETAIN, when_scaled=DELETE),
            id="SetDefaults_StatefulSet/whenDeleted unset",
        ),
        pytest.param(
            "{spec: {persistentVolumeClaimRetentionPolicy: {whenDeleted: Delete, whenScaled: ''}}}",
            RetentionPolicy(when_deleted=DELETE, when_scaled=RETAIN),
            id="SetDefaults_StatefulSet/whenScaled empty",
        ),
        pytest.param(
            "{spec: {persistentVolumeClaimRetentionPolicy: "
            "{whenDeleted: Delete, whenScaled: Delete}}}",
            RetentionPolicy(DELETE, DELETE),
            id="TestGetPersistentVolumeClaimRetentionPolicy/delete both",
        ),
    ],
)
def test_retention_policy_defaults(fragment: str, policy: RetentionPolicy) -> None:
    assert details(patched(STS, fragment)).retention == policy


@pytest.mark.parametrize(
    ("fragment", "field", "message"),
    [
        pytest.param(
            "{spec: {persistentVolumeClaimRetentionPolicy: {whenDeleted: Keep}}}",
            "spec.persistentVolumeClaimRetentionPolicy.whenDeleted",
            'Unsupported value: "Keep": supported values: "Retain", "Delete"',
            id="ValidatePersistentVolumeClaimRetentionPolicy/whenDeleted",
        ),
        pytest.param(
            "{spec: {persistentVolumeClaimRetentionPolicy: {whenScaled: delete}}}",
            "spec.persistentVolumeClaimRetentionPolicy.whenScaled",
            'Unsupported value: "delete": supported values: "Retain", "Delete"',
            id="ValidatePersistentVolumeClaimRetentionPolicy/whenScaled is case-sensitive",
        ),
        pytest.param(
            "{spec: {volumeClaimTemplates: [{metadata: {name: [data]}}]}}",
            "spec.volumeClaimTemplates[0].metadata.name",
            "expected a string, got list",  # the decoder's wording, as for any field
            id="a template's metadata that does not decode",
        ),
    ],
)
def test_refused_with_the_statefulset(fragment: str, field: str, message: str) -> None:
    err = load_error(patched(STS, fragment))
    assert (err.field, err.message) == (field, message)
    assert err.obj == "statefulset prod/db"


def test_templates_are_read_with_metadata_and_defaulted_spec() -> None:
    d = details(
        patched(
            STS,
            """
            spec:
              volumeClaimTemplates:
              - metadata: {name: data, labels: {tier: db}, annotations: {a: b}}
                spec:
                  storageClassName: fast
                  accessModes: [ReadWriteOnce]
                  resources: {requests: {storage: 10Gi}}
            """,
        )
    )
    [t] = d.volume_claim_templates
    assert (t.name, t.refusal) == ("data", "")
    assert t.claim is not None
    c = t.claim
    assert (dict(c.labels), dict(c.annotations)) == ({"tier": "db"}, {"a": "b"})
    assert (c.storage_class_name, c.access_modes, c.request) == (
        "fast",
        ("ReadWriteOnce",),
        10 * 2**30,
    )
    assert c.volume_mode == "Filesystem"  # SetDefaults_PersistentVolumeClaimSpec


def test_a_template_the_api_server_would_refuse_keeps_its_reason() -> None:
    """ValidatePersistentVolumeClaimSpec's wording, on the claim's own field path;
    the StatefulSet loads (the controller reports the refusal as events)."""
    d = details(
        patched(
            STS,
            """
            spec:
              volumeClaimTemplates:
              - metadata: {name: data}
                spec:
                  accessModes: [ReadWriteMany, ReadWriteOncePod]
                  resources: {requests: {storage: 1Gi}}
            """,
        )
    )
    [t] = d.volume_claim_templates
    assert t.claim is None
    assert t.refusal == (
        "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes"
    )
