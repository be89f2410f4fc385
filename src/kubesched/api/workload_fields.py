"""The fields of the workload kinds (api/workloads.py, api/batch.py): each kind's
own settings as the API server defaults them, the status a dump carries, and the
readers and checks the kinds share (pod templates, selectors, enums, counts),
with upstream's validation wording.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from kubesched.api import convert
from kubesched.api.claim_templates import RETAIN_ALL, RetentionPolicy, VolumeClaimTemplate
from kubesched.api.convert import (
    INT32_MAX,
    INT32_MIN,
    Raw,
    Workload,
    as_int,
    child,
    describe,
    fail,
    get_bool,
    get_int,
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
from kubesched.api.cron import CronSchedule
from kubesched.api.selectors import label_selector_matches
from kubesched.api.types import IntOrString, LabelSelector, OwnerReference, Time

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
    volume_claim_templates: tuple[VolumeClaimTemplate, ...] = ()
    max_unavailable: IntOrString = 1
    retention: RetentionPolicy = RETAIN_ALL
    """``spec.persistentVolumeClaimRetentionPolicy`` (Retain/Retain by default)."""


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


def owner_reference(raw: Raw, path: str) -> OwnerReference:
    return OwnerReference(
        api_version=get_str(raw, "apiVersion", path),
        kind=get_str(raw, "kind", path),
        name=get_str(raw, "name", path),
        uid=get_str(raw, "uid", path),
        controller=get_bool(raw, "controller", path),
    )


def nonnegative(raw: Raw, key: str, path: str, default: int = 0) -> int:
    value = get_int(raw, key, path, default, int32=True)
    if value < 0:
        raise fail(child(path, key), invalid(value, "must be greater than or equal to 0"))
    return value


def opt_nonnegative(raw: Raw, key: str, path: str, *, int32: bool = True) -> int | None:
    value = opt_int(raw, key, path, int32=int32)
    if value is not None and value < 0:
        raise fail(child(path, key), invalid(value, "must be greater than or equal to 0"))
    return value


def enum_or(raw: Raw, key: str, path: str, supported: tuple[str, ...], default: str) -> str:
    value = opt_str(raw, key, path)
    if value is None or value == "":
        return default
    if value not in supported:
        raise fail(child(path, key), unsupported(value, supported))
    return value


def int_or_percent(raw: Raw, key: str, path: str, default: IntOrString) -> IntOrString:
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


def int_or_percent_value(v: IntOrString) -> int:
    return v if isinstance(v, int) else int(v[:-1])


@dataclass(frozen=True, slots=True)
class Template:
    labels: dict[str, str]
    annotations: dict[str, str]
    fields: convert.SpecFields
    restart_policy: str
    key: str


def read_template(raw: Raw, path: str) -> Template:
    """A pod template (``path`` is its JSON path, e.g. ``spec.template``)."""
    tmeta = get_map(raw, "metadata", path)
    mpath = child(path, "metadata")
    spath = child(path, "spec")
    spec_raw = raw.get("spec")
    fields = pod_spec(spec_raw, spath)
    restart = opt_str(convert.as_map(spec_raw, spath), "restartPolicy", spath) or "Always"
    return Template(
        labels=get_str_map(tmeta, "labels", mpath),
        annotations=get_str_map(tmeta, "annotations", mpath),
        fields=fields,
        restart_policy=restart,
        key=template_key(raw),
    )


def read_selector(spec: Raw, what: str, *, required_: bool = True) -> LabelSelector | None:
    selector = label_selector(spec.get("selector"), "spec.selector")
    if selector is None:
        if required_:
            raise fail("spec.selector", required())
        return None
    if selector.is_empty():
        raise fail("spec.selector", invalid("{}", f"empty selector is invalid for {what}"))
    return selector


def check_matches(selector: LabelSelector | None, labels: Mapping[str, str], path: str) -> None:
    if selector is not None and not label_selector_matches(selector, labels):
        raise fail(
            path,
            f"Invalid value: {json.dumps(dict(labels), sort_keys=True)}: "
            "`selector` does not match template `labels`",
        )


def restart_policy(t: Template, path: str, supported: tuple[str, ...]) -> None:
    if t.restart_policy not in supported:
        raise fail(child(path, "spec.restartPolicy"), unsupported(t.restart_policy, supported))


def make_workload(
    kind: str,
    raw: Raw,
    t: Template,
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
        owner_references=convert.map_list(mraw, "ownerReferences", "metadata", owner_reference),
        creation_timestamp=opt_time(mraw, "creationTimestamp", "metadata"),
        template_key=t.key,
        details=details,
    )
