"""The workload kinds kubesched runs controllers for, converted and validated.

``convert_workload(raw, kind)`` reads an apps/v1 Deployment, ReplicaSet,
StatefulSet or DaemonSet here, or a batch/v1 Job or CronJob (``convert.batch``),
into a :class:`~kubesched.api.workloads.Workload` with the API server's defaulting
(``SetDefaults_*``) and validation (pkg/apis/apps/validation,
pkg/apis/batch/validation). Claim templates the API server would refuse are kept
(``api.claim_templates``). Dump status fields a controller continues from are read:
a StatefulSet's revisions, a Job's counts, completion and start time, a CronJob's
``lastScheduleTime`` and active Jobs.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

from kubesched.api.claim_templates import (
    RETAIN,
    RETENTION_POLICIES,
    RetentionPolicy,
    VolumeClaimTemplate,
)
from kubesched.api.convert import batch
from kubesched.api.convert.meta import check_dns_subdomain, read_meta
from kubesched.api.convert.storage import claim_spec
from kubesched.api.convert.templates import (
    check_matches,
    enum_or,
    int_or_percent,
    int_or_percent_value,
    make_workload,
    nonnegative,
    read_selector,
    read_template,
    restart_policy,
)
from kubesched.api.errors import InputError
from kubesched.api.messages import child, fail, invalid
from kubesched.api.reader import Raw, as_map, get_int, get_list, get_map, get_str, get_str_map
from kubesched.api.workloads import (
    ON_DELETE,
    ORDERED_READY,
    PARALLEL,
    RECREATE,
    ROLLING_UPDATE,
    DaemonSetDetails,
    DeploymentDetails,
    StatefulSetDetails,
    Workload,
)

KINDS: Final = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob")


# --------------------------------------------------------------------------- kinds


def convert_workload(raw: Raw, kind: str) -> tuple[Workload, dict[str, str]]:
    """One workload object of ``kind`` (its metadata annotations second)."""
    meta = read_meta(raw, namespaced=True)
    check_dns_subdomain(meta.name, "metadata.name")
    if kind in ("Deployment", "ReplicaSet"):
        return _apps_replicas(raw, kind), meta.annotations
    if kind == "StatefulSet":
        return _statefulset(raw), meta.annotations
    if kind == "DaemonSet":
        return _daemonset(raw), meta.annotations
    if kind == "Job":
        return batch.convert_job(raw), meta.annotations
    if kind == "CronJob":
        if len(meta.name) > 52:
            raise fail("metadata.name", invalid(meta.name, "must be no more than 52 characters"))
        return batch.convert_cronjob(raw), meta.annotations
    raise ValueError(kind)


def _apps_replicas(raw: Raw, kind: str) -> Workload:
    """A Deployment or a ReplicaSet, validated in upstream's order (metadata, replicas,
    selector, template labels against it, then the template)."""
    meta = read_meta(raw, namespaced=True)
    check_dns_subdomain(meta.name, "metadata.name")
    spec = get_map(raw, "spec", "")
    replicas = get_int(spec, "replicas", "spec", 1, bits=32)
    if replicas < 0:
        raise fail("spec.replicas", invalid(replicas, "must be greater than or equal to 0"))
    selector = read_selector(spec, "deployment")  # upstream's word for a ReplicaSet too
    template = get_map(spec, "template", "spec")
    tmeta = get_map(template, "metadata", "spec.template")
    tlabels = get_str_map(tmeta, "labels", "spec.template.metadata")
    check_matches(selector, tlabels, "spec.template.metadata.labels")
    t = read_template(template, "spec.template")
    details: object = None
    if kind == "Deployment":
        details = _deployment_strategy(get_map(spec, "strategy", "spec"), "spec.strategy")
    return make_workload(kind, raw, t, replicas=replicas, selector=selector, details=details)


def _deployment_strategy(raw: Raw, path: str) -> DeploymentDetails:
    kind = enum_or(raw, "type", path, (RECREATE, ROLLING_UPDATE), ROLLING_UPDATE)
    ru = raw.get("rollingUpdate")
    if kind == RECREATE:
        if ru is not None:
            raise fail(
                child(path, "rollingUpdate"),
                "Forbidden: may not be specified when strategy `type` is 'Recreate'",
            )
        return DeploymentDetails(strategy=RECREATE, max_surge=0, max_unavailable=0)
    rp = child(path, "rollingUpdate")
    ru_map = as_map(ru, rp)
    surge = int_or_percent(ru_map, "maxSurge", rp, "25%")
    unavailable = int_or_percent(ru_map, "maxUnavailable", rp, "25%")
    if int_or_percent_value(surge) == 0 and int_or_percent_value(unavailable) == 0:
        raise fail(
            child(rp, "maxUnavailable"), invalid(unavailable, "may not be 0 when `maxSurge` is 0")
        )
    if isinstance(unavailable, str) and int(unavailable[:-1]) > 100:
        raise fail(
            child(rp, "maxUnavailable"), invalid(unavailable, "must not be greater than 100%")
        )
    return DeploymentDetails(ROLLING_UPDATE, surge, unavailable)


def _statefulset(raw: Raw) -> Workload:
    spec = get_map(raw, "spec", "")
    replicas = nonnegative(spec, "replicas", "spec", 1)
    ordinals = get_map(spec, "ordinals", "spec")
    start = get_int(ordinals, "start", "spec.ordinals", 0, bits=32)
    if start < 0:
        raise fail("spec.ordinals.start", invalid(start, "must be greater than or equal to 0"))
    policy = get_str(spec, "podManagementPolicy", "spec") or ORDERED_READY
    if policy not in (ORDERED_READY, PARALLEL):
        raise fail(
            "spec.podManagementPolicy",
            invalid(policy, f"must be '{ORDERED_READY}' or '{PARALLEL}'"),
        )
    strategy = get_map(spec, "updateStrategy", "spec")
    stype = get_str(strategy, "type", "spec.updateStrategy") or ROLLING_UPDATE
    if stype not in (ROLLING_UPDATE, ON_DELETE):
        raise fail(
            "spec.updateStrategy",
            invalid(stype, f"must be '{ROLLING_UPDATE}' or '{ON_DELETE}'"),
        )
    rolling = get_map(strategy, "rollingUpdate", "spec.updateStrategy")
    rpath = "spec.updateStrategy.rollingUpdate"
    partition = nonnegative(rolling, "partition", rpath)
    max_unavailable = int_or_percent(rolling, "maxUnavailable", rpath, 1)
    if int_or_percent_value(max_unavailable) == 0:
        raise fail(
            child(rpath, "maxUnavailable"), invalid(max_unavailable, "must be greater than 0")
        )
    retention = _retention_policy(spec)
    selector = read_selector(spec, "statefulset")
    t = read_template(get_map(spec, "template", "spec"), "spec.template")
    check_matches(selector, t.labels, "spec.template.metadata.labels")
    restart_policy(t, "spec.template", ("Always",))
    claims = _volume_claim_templates(spec)
    status = get_map(raw, "status", "")
    details = StatefulSetDetails(
        pod_management_policy=policy,
        update_strategy=stype,
        partition=partition,
        start_ordinal=start,
        current_revision=get_str(status, "currentRevision", "status"),
        update_revision=get_str(status, "updateRevision", "status"),
        volume_claim_templates=claims,
        max_unavailable=max_unavailable,
        retention=retention,
    )
    return make_workload(
        "StatefulSet", raw, t, replicas=replicas, selector=selector, details=details
    )


def _volume_claim_templates(spec: Raw) -> tuple[VolumeClaimTemplate, ...]:
    """``spec.volumeClaimTemplates``: each template's metadata must decode (else the
    StatefulSet is refused); a claim spec the API server would refuse is kept as
    the template's ``refusal`` (see ``kubesched.api.claim_templates``)."""
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
            claim = claim_spec(as_map(raw.get("spec"), "spec"), "spec")
        except InputError as err:
            out.append(VolumeClaimTemplate(name, None, str(err)))
            continue
        out.append(
            VolumeClaimTemplate(name, replace(claim, labels=labels, annotations=annotations))
        )
    return tuple(out)


def _retention_policy(spec: Raw) -> RetentionPolicy:
    """``spec.persistentVolumeClaimRetentionPolicy``, defaulted (``Retain`` when unset
    or empty, ``SetDefaults_StatefulSet``) and validated
    (``Unsupported value: "X": supported values: "Retain", "Delete"``)."""
    path = "spec.persistentVolumeClaimRetentionPolicy"
    raw = get_map(spec, "persistentVolumeClaimRetentionPolicy", "spec")
    return RetentionPolicy(
        when_deleted=enum_or(raw, "whenDeleted", path, RETENTION_POLICIES, RETAIN),
        when_scaled=enum_or(raw, "whenScaled", path, RETENTION_POLICIES, RETAIN),
    )


def _daemonset(raw: Raw) -> Workload:
    spec = get_map(raw, "spec", "")
    selector = read_selector(spec, "daemonset")
    t = read_template(get_map(spec, "template", "spec"), "spec.template")
    check_matches(selector, t.labels, "spec.template.metadata.labels")
    restart_policy(t, "spec.template", ("Always",))
    strategy = get_map(spec, "updateStrategy", "spec")
    stype = enum_or(
        strategy, "type", "spec.updateStrategy", (ROLLING_UPDATE, ON_DELETE), ROLLING_UPDATE
    )
    meta = read_meta(raw, namespaced=True)
    details = DaemonSetDetails(
        update_strategy=stype,
        template_generation=meta.annotations.get("deprecated.daemonset.template.generation"),
    )
    return make_workload("DaemonSet", raw, t, replicas=0, selector=selector, details=details)
