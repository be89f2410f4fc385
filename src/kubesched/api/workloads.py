"""The workload kinds kubesched runs controllers for, converted and validated.

``convert_workload(raw, kind)`` reads an apps/v1 Deployment, ReplicaSet,
StatefulSet or DaemonSet, or a batch/v1 Job or CronJob, into a
:class:`~kubesched.api.convert.Workload` whose ``details`` holds the kind's own
fields (the dataclasses below), with the API server's defaulting
(``SetDefaults_*``) and the validation that would reject the object, in
upstream's wording (pkg/apis/apps/validation, pkg/apis/batch/validation).

Status fields of a dump are read where a controller continues from them: a
StatefulSet's ``currentRevision``/``updateRevision``, a Job's counts,
completion and start time, a CronJob's ``lastScheduleTime`` and active Jobs.
Times stay absolute (nanoseconds since the Unix epoch); the simulator rebases.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from kubesched.api import convert
from kubesched.api.convert import (
    INT32_MAX,
    INT32_MIN,
    Raw,
    Workload,
    as_int,
    check_dns_subdomain,
    child,
    describe,
    fail,
    get_bool,
    get_int,
    get_list,
    get_map,
    get_str,
    get_str_map,
    invalid,
    label_selector,
    opt_int,
    opt_str,
    opt_time,
    pod_spec,
    read_meta,
    required,
    unsupported,
)
from kubesched.api.cron import CronError, CronSchedule, load_location, parse_standard
from kubesched.api.selectors import label_selector_matches
from kubesched.api.types import IntOrString, LabelSelector, OwnerReference, Time

KINDS: Final = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob")

POD_TEMPLATE_HASH: Final = "pod-template-hash"

# Job labels the API server adds (pkg/registry/batch/job/strategy.go generateSelector).
JOB_NAME_LABEL: Final = "batch.kubernetes.io/job-name"
LEGACY_JOB_NAME_LABEL: Final = "job-name"
CONTROLLER_UID_LABEL: Final = "batch.kubernetes.io/controller-uid"
LEGACY_CONTROLLER_UID_LABEL: Final = "controller-uid"

ROLLING_UPDATE: Final = "RollingUpdate"
RECREATE: Final = "Recreate"
ON_DELETE: Final = "OnDelete"
ORDERED_READY: Final = "OrderedReady"
PARALLEL: Final = "Parallel"
NON_INDEXED: Final = "NonIndexed"
INDEXED: Final = "Indexed"
TERMINATING_OR_FAILED: Final = "TerminatingOrFailed"
FAILED_ONLY: Final = "Failed"
ALLOW: Final = "Allow"
FORBID: Final = "Forbid"
REPLACE: Final = "Replace"
JOB_COMPLETE: Final = "Complete"
JOB_FAILED: Final = "Failed"


@dataclass(frozen=True, slots=True)
class DeploymentDetails:
    strategy: str = ROLLING_UPDATE
    max_surge: IntOrString = "25%"
    max_unavailable: IntOrString = "25%"


@dataclass(frozen=True, slots=True)
class StatefulSetDetails:
    pod_management_policy: str = ORDERED_READY
    update_strategy: str = ROLLING_UPDATE
    partition: int = 0
    start_ordinal: int = 0
    current_revision: str = ""
    update_revision: str = ""
    """``status.updateRevision`` of a dump ("" when absent)."""
    volume_claim_templates: tuple[str, ...] = ()
    max_unavailable: IntOrString = 1


@dataclass(frozen=True, slots=True)
class DaemonSetDetails:
    update_strategy: str = ROLLING_UPDATE
    template_generation: str | None = None
    """The ``deprecated.daemonset.template.generation`` annotation, if any."""


@dataclass(frozen=True, slots=True)
class JobDetails:
    parallelism: int = 1
    completions: int | None = 1
    """None: a work queue (done when a pod succeeds and none is left running)."""
    backoff_limit: int = 6
    active_deadline_seconds: int | None = None
    completion_mode: str = NON_INDEXED
    suspend: bool = False
    pod_replacement_policy: str = TERMINATING_OR_FAILED
    ttl_seconds_after_finished: int | None = None
    succeeded: int = 0
    failed: int = 0
    finished: str = ""
    """``Complete`` or ``Failed`` when the dumped Job has that condition True."""
    start_time: Time | None = None
    completed_indexes: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True)
class CronJobDetails:
    schedule: CronSchedule
    schedule_text: str
    job: JobDetails
    job_labels: Mapping[str, str]
    job_annotations: Mapping[str, str]
    time_zone: str | None = None
    concurrency_policy: str = ALLOW
    suspend: bool = False
    starting_deadline_seconds: int | None = None
    successful_jobs_history_limit: int = 3
    failed_jobs_history_limit: int = 1
    last_schedule_time: Time | None = None
    active: tuple[str, ...] = ()
    """Names of the Jobs in ``status.active``."""


def workload_times(w: Workload) -> tuple[Time | None, ...]:
    """The absolute times a workload of the input carries (creation, a Job's start,
    a CronJob's last schedule): the simulator rebases the run's clock on them."""
    d = w.details
    extra: tuple[Time | None, ...] = ()
    if isinstance(d, JobDetails):
        extra = (d.start_time,)
    elif isinstance(d, CronJobDetails):
        extra = (d.last_schedule_time,)
    return (w.creation_timestamp, *extra)


# --------------------------------------------------------------------------- helpers


def _normalized(value: Any) -> Any:
    """Null, empty maps and empty lists dropped (absent and empty serialize alike)."""
    if isinstance(value, Mapping):
        out = {str(k): _normalized(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v not in (None, {}, [])}
    if isinstance(value, list):
        return [_normalized(v) for v in value]
    return value


def template_key(template: Raw) -> str:
    """The pod template as canonical text without ``pod-template-hash``: upstream's
    ``EqualIgnoreHash`` compares a Deployment's template with its ReplicaSets'."""
    t = dict(_normalized(template))
    meta = dict(t.get("metadata", {}))
    labels = {k: v for k, v in dict(meta.get("labels", {})).items() if k != POD_TEMPLATE_HASH}
    meta["labels"] = labels
    t["metadata"] = _normalized(meta)
    return json.dumps(t, sort_keys=True, separators=(",", ":"), default=str)


def _owner(raw: Raw, path: str) -> OwnerReference:
    return OwnerReference(
        api_version=get_str(raw, "apiVersion", path),
        kind=get_str(raw, "kind", path),
        name=get_str(raw, "name", path),
        uid=get_str(raw, "uid", path),
        controller=get_bool(raw, "controller", path),
    )


def _nonnegative(raw: Raw, key: str, path: str, default: int = 0) -> int:
    value = get_int(raw, key, path, default, int32=True)
    if value < 0:
        raise fail(child(path, key), invalid(value, "must be greater than or equal to 0"))
    return value


def _opt_nonnegative(raw: Raw, key: str, path: str, *, int32: bool = True) -> int | None:
    value = opt_int(raw, key, path, int32=int32)
    if value is not None and value < 0:
        raise fail(child(path, key), invalid(value, "must be greater than or equal to 0"))
    return value


def _enum(raw: Raw, key: str, path: str, supported: tuple[str, ...], default: str) -> str:
    value = opt_str(raw, key, path)
    if value is None or value == "":
        return default
    if value not in supported:
        raise fail(child(path, key), unsupported(value, supported))
    return value


def _int_or_percent(raw: Raw, key: str, path: str, default: IntOrString) -> IntOrString:
    """A non-negative IntOrString (``ValidatePositiveIntOrPercent``)."""
    value = raw.get(key)
    p = child(path, key)
    if value is None:
        return default
    if isinstance(value, str):
        if not convert._PERCENT_RE.match(value):
            raise fail(p, invalid(value, convert.PERCENT_MSG))
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        n = as_int(value, p, INT32_MIN, INT32_MAX)
        if n < 0:
            raise fail(p, invalid(n, "must be greater than or equal to 0"))
        return n
    raise fail(p, f"expected an integer or a percentage, got {describe(value)}")


def _int_or_percent_value(v: IntOrString) -> int:
    return v if isinstance(v, int) else int(v[:-1])


@dataclass(frozen=True, slots=True)
class _Template:
    labels: dict[str, str]
    annotations: dict[str, str]
    fields: convert.SpecFields
    restart_policy: str
    key: str


def _template(raw: Raw, path: str) -> _Template:
    """A pod template (``path`` is its JSON path, e.g. ``spec.template``)."""
    tmeta = get_map(raw, "metadata", path)
    mpath = child(path, "metadata")
    spath = child(path, "spec")
    spec_raw = raw.get("spec")
    fields = pod_spec(spec_raw, spath)
    restart = opt_str(convert.as_map(spec_raw, spath), "restartPolicy", spath) or "Always"
    return _Template(
        labels=get_str_map(tmeta, "labels", mpath),
        annotations=get_str_map(tmeta, "annotations", mpath),
        fields=fields,
        restart_policy=restart,
        key=template_key(raw),
    )


def _selector(spec: Raw, what: str, *, required_: bool = True) -> LabelSelector | None:
    selector = label_selector(spec.get("selector"), "spec.selector")
    if selector is None:
        if required_:
            raise fail("spec.selector", required())
        return None
    if selector.is_empty():
        raise fail("spec.selector", invalid("{}", f"empty selector is invalid for {what}"))
    return selector


def _check_matches(selector: LabelSelector | None, labels: Mapping[str, str], path: str) -> None:
    if selector is not None and not label_selector_matches(selector, labels):
        raise fail(
            path,
            f"Invalid value: {json.dumps(dict(labels), sort_keys=True)}: "
            "`selector` does not match template `labels`",
        )


def _restart_policy(t: _Template, path: str, supported: tuple[str, ...]) -> None:
    if t.restart_policy not in supported:
        raise fail(child(path, "spec.restartPolicy"), unsupported(t.restart_policy, supported))


def _workload(
    kind: str,
    raw: Raw,
    t: _Template,
    *,
    replicas: int,
    selector: LabelSelector | None,
    details: object,
    labels: Mapping[str, str] | None = None,
) -> Workload:
    meta = read_meta(raw, namespaced=True)
    mraw = get_map(raw, "metadata", "")
    f = t.fields
    return Workload(
        kind=kind,
        namespace=meta.namespace,
        name=meta.name,
        uid=meta.uid or f"{kind.lower()}/{meta.namespace}/{meta.name}",
        labels=meta.labels,
        replicas=replicas,
        selector=selector,
        template_labels=t.labels if labels is None else labels,
        template_annotations=t.annotations,
        template_spec=f.spec,
        template_node_name=f.node_name,
        template_priority=f.priority,
        template_priority_class_name=f.priority_class_name,
        template_preemption_policy=f.preemption_policy,
        annotations=meta.annotations,
        owner_references=convert.map_list(mraw, "ownerReferences", "metadata", _owner),
        creation_timestamp=opt_time(mraw, "creationTimestamp", "metadata"),
        template_key=t.key,
        details=details,
    )


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
        return _job(raw), meta.annotations
    if kind == "CronJob":
        if len(meta.name) > 52:
            raise fail("metadata.name", invalid(meta.name, "must be no more than 52 characters"))
        return _cronjob(raw), meta.annotations
    raise ValueError(kind)


def _apps_replicas(raw: Raw, kind: str) -> Workload:
    base, _ = convert.convert_workload(raw, kind)
    spec = get_map(raw, "spec", "")
    t = _template(get_map(spec, "template", "spec"), "spec.template")
    details: object = None
    if kind == "Deployment":
        details = _deployment_strategy(get_map(spec, "strategy", "spec"), "spec.strategy")
    full = _workload(kind, raw, t, replicas=base.replicas, selector=base.selector, details=details)
    return replace(full, uid=base.uid)


def _deployment_strategy(raw: Raw, path: str) -> DeploymentDetails:
    kind = _enum(raw, "type", path, (RECREATE, ROLLING_UPDATE), ROLLING_UPDATE)
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
    surge = _int_or_percent(ru_map, "maxSurge", rp, "25%")
    unavailable = _int_or_percent(ru_map, "maxUnavailable", rp, "25%")
    if _int_or_percent_value(surge) == 0 and _int_or_percent_value(unavailable) == 0:
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
    replicas = _nonnegative(spec, "replicas", "spec", 1)
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
    partition = _nonnegative(rolling, "partition", rpath)
    max_unavailable = _int_or_percent(rolling, "maxUnavailable", rpath, 1)
    if _int_or_percent_value(max_unavailable) == 0:
        raise fail(
            child(rpath, "maxUnavailable"), invalid(max_unavailable, "must be greater than 0")
        )
    selector = _selector(spec, "statefulset")
    t = _template(get_map(spec, "template", "spec"), "spec.template")
    _check_matches(selector, t.labels, "spec.template.metadata.labels")
    _restart_policy(t, "spec.template", ("Always",))
    claims = []
    for i, vct in enumerate(get_list(spec, "volumeClaimTemplates", "spec")):
        vp = f"spec.volumeClaimTemplates[{i}]"
        vmeta = get_map(convert.as_map(vct, vp), "metadata", vp)
        claims.append(get_str(vmeta, "name", child(vp, "metadata")))
    status = get_map(raw, "status", "")
    details = StatefulSetDetails(
        pod_management_policy=policy,
        update_strategy=stype,
        partition=partition,
        start_ordinal=start,
        current_revision=get_str(status, "currentRevision", "status"),
        update_revision=get_str(status, "updateRevision", "status"),
        volume_claim_templates=tuple(claims),
        max_unavailable=max_unavailable,
    )
    return _workload("StatefulSet", raw, t, replicas=replicas, selector=selector, details=details)


def _daemonset(raw: Raw) -> Workload:
    spec = get_map(raw, "spec", "")
    selector = _selector(spec, "daemonset")
    t = _template(get_map(spec, "template", "spec"), "spec.template")
    _check_matches(selector, t.labels, "spec.template.metadata.labels")
    _restart_policy(t, "spec.template", ("Always",))
    strategy = get_map(spec, "updateStrategy", "spec")
    stype = _enum(
        strategy, "type", "spec.updateStrategy", (ROLLING_UPDATE, ON_DELETE), ROLLING_UPDATE
    )
    meta = read_meta(raw, namespaced=True)
    details = DaemonSetDetails(
        update_strategy=stype,
        template_generation=meta.annotations.get("deprecated.daemonset.template.generation"),
    )
    return _workload("DaemonSet", raw, t, replicas=0, selector=selector, details=details)


def _job_spec(spec: Raw, path: str) -> JobDetails:
    """``JobSpec`` with SetDefaults_Job: both parallelism and completions unset means
    1 and 1; parallelism alone defaults to 1; backoffLimit 6."""
    parallelism = _opt_nonnegative(spec, "parallelism", path)
    completions = _opt_nonnegative(spec, "completions", path)
    if parallelism is None and completions is None:
        parallelism, completions = 1, 1
    mode = _enum(spec, "completionMode", path, (NON_INDEXED, INDEXED), NON_INDEXED)
    if mode == INDEXED and completions is None:
        raise fail(child(path, "completions"), required("when completion mode is Indexed"))
    has_failure_policy = spec.get("podFailurePolicy") is not None
    replacement = _enum(
        spec,
        "podReplacementPolicy",
        path,
        (TERMINATING_OR_FAILED, FAILED_ONLY),
        FAILED_ONLY if has_failure_policy else TERMINATING_OR_FAILED,
    )
    return JobDetails(
        parallelism=1 if parallelism is None else parallelism,
        completions=completions,
        backoff_limit=_nonnegative(spec, "backoffLimit", path, 6),
        active_deadline_seconds=_opt_nonnegative(spec, "activeDeadlineSeconds", path, int32=False),
        completion_mode=mode,
        suspend=get_bool(spec, "suspend", path),
        pod_replacement_policy=replacement,
        ttl_seconds_after_finished=_opt_nonnegative(spec, "ttlSecondsAfterFinished", path),
    )


def _job_status(details: JobDetails, status: Raw) -> JobDetails:
    finished = ""
    for i, cond in enumerate(get_list(status, "conditions", "status")):
        c = convert.as_map(cond, f"status.conditions[{i}]")
        ctype = get_str(c, "type", f"status.conditions[{i}]")
        if ctype in (JOB_COMPLETE, JOB_FAILED) and get_str(c, "status", "") == "True":
            finished = ctype
    uncounted = get_map(status, "uncountedTerminatedPods", "status")
    upath = "status.uncountedTerminatedPods"
    return replace(
        details,
        succeeded=_nonnegative(status, "succeeded", "status")
        + len(get_list(uncounted, "succeeded", upath)),
        failed=_nonnegative(status, "failed", "status") + len(get_list(uncounted, "failed", upath)),
        finished=finished,
        start_time=opt_time(status, "startTime", "status"),
        completed_indexes=_indexes(get_str(status, "completedIndexes", "status")),
    )


def _indexes(text: str) -> frozenset[int]:
    """``status.completedIndexes`` (``1,3-5``); unreadable parts are skipped."""
    out: set[int] = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        if lo.isdigit() and (not hi or hi.isdigit()):
            out.update(range(int(lo), int(hi or lo) + 1))
    return frozenset(out)


def job_labels(
    name: str, uid: str, labels: Mapping[str, str]
) -> tuple[dict[str, str], LabelSelector]:
    """The labels the API server adds to a Job's template and the selector it
    generates (``generateSelector``, manualSelector unset): job-name and
    controller-uid, legacy and ``batch.kubernetes.io/`` forms, where absent."""
    out = dict(labels)
    for key in (LEGACY_JOB_NAME_LABEL, JOB_NAME_LABEL):
        out.setdefault(key, name)
    for key in (LEGACY_CONTROLLER_UID_LABEL, CONTROLLER_UID_LABEL):
        out.setdefault(key, uid)
    return out, LabelSelector({CONTROLLER_UID_LABEL: uid})


def _job(raw: Raw) -> Workload:
    spec = get_map(raw, "spec", "")
    details = _job_status(_job_spec(spec, "spec"), get_map(raw, "status", ""))
    t = _template(get_map(spec, "template", "spec"), "spec.template")
    _restart_policy(t, "spec.template", ("OnFailure", "Never"))
    meta = read_meta(raw, namespaced=True)
    uid = meta.uid or f"job/{meta.namespace}/{meta.name}"
    selector = label_selector(spec.get("selector"), "spec.selector")
    labels = dict(t.labels)
    if get_bool(spec, "manualSelector", "spec"):
        if selector is None:
            raise fail("spec.selector", required())
    elif selector is None:
        labels, selector = job_labels(meta.name, uid, t.labels)
    _check_matches(selector, labels, "spec.template.metadata.labels")
    w = _workload("Job", raw, t, replicas=0, selector=selector, details=details, labels=labels)
    return replace(w, uid=uid)


def _cronjob(raw: Raw) -> Workload:
    spec = get_map(raw, "spec", "")
    text = get_str(spec, "schedule", "spec")
    if not text:
        raise fail("spec.schedule", required())
    tz = opt_str(spec, "timeZone", "spec")
    if tz is not None:
        if tz == "":
            raise fail("spec.timeZone", invalid(tz, "timeZone must be nil or non-empty string"))
        if tz.lower() == "local":
            raise fail(
                "spec.timeZone",
                invalid(
                    tz,
                    "timeZone must be an explicit time zone as defined in "
                    "https://www.iana.org/time-zones",
                ),
            )
        problem = load_location(tz)
        if problem is not None:
            raise fail("spec.timeZone", invalid(tz, problem))
    try:
        schedule = parse_standard(text, tz)
    except CronError as err:
        raise fail("spec.schedule", invalid(text, str(err))) from None
    if "TZ" in text:
        raise fail(
            "spec.schedule",
            invalid(text, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"),
        )
    job_template = get_map(spec, "jobTemplate", "spec")
    jmeta = get_map(job_template, "metadata", "spec.jobTemplate")
    jspec = get_map(job_template, "spec", "spec.jobTemplate")
    job = _job_spec(jspec, "spec.jobTemplate.spec")
    t = _template(
        get_map(jspec, "template", "spec.jobTemplate.spec"), "spec.jobTemplate.spec.template"
    )
    _restart_policy(t, "spec.jobTemplate.spec.template", ("OnFailure", "Never"))
    status = get_map(raw, "status", "")
    active = tuple(
        get_str(convert.as_map(a, f"status.active[{i}]"), "name", f"status.active[{i}]")
        for i, a in enumerate(get_list(status, "active", "status"))
    )
    details = CronJobDetails(
        schedule=schedule,
        schedule_text=text,
        job=job,
        job_labels=get_str_map(jmeta, "labels", "spec.jobTemplate.metadata"),
        job_annotations=get_str_map(jmeta, "annotations", "spec.jobTemplate.metadata"),
        time_zone=tz,
        concurrency_policy=_enum(
            spec, "concurrencyPolicy", "spec", (ALLOW, FORBID, REPLACE), ALLOW
        ),
        suspend=get_bool(spec, "suspend", "spec"),
        starting_deadline_seconds=_opt_nonnegative(
            spec, "startingDeadlineSeconds", "spec", int32=False
        ),
        successful_jobs_history_limit=_nonnegative(spec, "successfulJobsHistoryLimit", "spec", 3),
        failed_jobs_history_limit=_nonnegative(spec, "failedJobsHistoryLimit", "spec", 1),
        last_schedule_time=opt_time(status, "lastScheduleTime", "status"),
        active=active,
    )
    return _workload("CronJob", raw, t, replicas=0, selector=None, details=details)
