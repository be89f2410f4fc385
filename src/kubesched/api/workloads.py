"""The workload kinds kubesched runs controllers for, converted and validated.

``convert_workload(raw, kind)`` reads an apps/v1 Deployment, ReplicaSet,
StatefulSet or DaemonSet here, or a batch/v1 Job or CronJob
(``kubesched.api.batch``), into a :class:`~kubesched.api.convert.Workload`
whose ``details`` holds the kind's own fields (``kubesched.api.workload_fields``),
with the API server's defaulting (``SetDefaults_*``) and the validation that
would reject the object, in upstream's wording (pkg/apis/apps/validation,
pkg/apis/batch/validation).

Status fields of a dump are read where a controller continues from them: a
StatefulSet's ``currentRevision``/``updateRevision``, a Job's counts,
completion and start time, a CronJob's ``lastScheduleTime`` and active Jobs.
Times stay absolute (nanoseconds since the Unix epoch); the simulator rebases.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

from kubesched.api import batch, convert
from kubesched.api.claim_templates import read_retention_policy, read_volume_claim_templates
from kubesched.api.convert import (
    Raw,
    Workload,
    check_dns_subdomain,
    child,
    fail,
    get_int,
    get_map,
    get_str,
    invalid,
    read_meta,
)
from kubesched.api.workload_fields import (
    ALLOW,
    CONTROLLER_UID_LABEL,
    FAILED_ONLY,
    FORBID,
    INDEXED,
    JOB_COMPLETE,
    JOB_FAILED,
    JOB_NAME_LABEL,
    LEGACY_CONTROLLER_UID_LABEL,
    LEGACY_JOB_NAME_LABEL,
    NON_INDEXED,
    ON_DELETE,
    ORDERED_READY,
    PARALLEL,
    POD_TEMPLATE_HASH,
    RECREATE,
    REPLACE,
    ROLLING_UPDATE,
    TERMINATING_OR_FAILED,
    CronJobDetails,
    DaemonSetDetails,
    DeploymentDetails,
    JobDetails,
    StatefulSetDetails,
    check_matches,
    enum_or,
    int_or_percent,
    int_or_percent_value,
    make_workload,
    nonnegative,
    read_selector,
    read_template,
    restart_policy,
    template_key,
    workload_times,
)

KINDS: Final = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob")

__all__ = [
    "ALLOW",
    "CONTROLLER_UID_LABEL",
    "FAILED_ONLY",
    "FORBID",
    "INDEXED",
    "JOB_COMPLETE",
    "JOB_FAILED",
    "JOB_NAME_LABEL",
    "KINDS",
    "LEGACY_CONTROLLER_UID_LABEL",
    "LEGACY_JOB_NAME_LABEL",
    "NON_INDEXED",
    "ON_DELETE",
    "ORDERED_READY",
    "PARALLEL",
    "POD_TEMPLATE_HASH",
    "RECREATE",
    "REPLACE",
    "ROLLING_UPDATE",
    "TERMINATING_OR_FAILED",
    "CronJobDetails",
    "DaemonSetDetails",
    "DeploymentDetails",
    "JobDetails",
    "StatefulSetDetails",
    "convert_workload",
    "job_labels",
    "template_key",
    "workload_times",
]

job_labels = batch.job_labels


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
    base, _ = convert.convert_workload(raw, kind)
    spec = get_map(raw, "spec", "")
    t = read_template(get_map(spec, "template", "spec"), "spec.template")
    details: object = None
    if kind == "Deployment":
        details = _deployment_strategy(get_map(spec, "strategy", "spec"), "spec.strategy")
    full = make_workload(
        kind, raw, t, replicas=base.replicas, selector=base.selector, details=details
    )
    return replace(full, uid=base.uid)


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
    ru_map = convert.as_map(ru, rp)
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
    start = get_int(ordinals, "start", "spec.ordinals", 0, int32=True)
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
    retention = read_retention_policy(spec)
    selector = read_selector(spec, "statefulset")
    t = read_template(get_map(spec, "template", "spec"), "spec.template")
    check_matches(selector, t.labels, "spec.template.metadata.labels")
    restart_policy(t, "spec.template", ("Always",))
    claims = read_volume_claim_templates(spec)
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
