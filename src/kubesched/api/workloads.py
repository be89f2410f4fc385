"""The workload kinds kubesched runs controllers for, as typed objects: a
:class:`Workload` (an apps/v1 Deployment, ReplicaSet, StatefulSet or DaemonSet, a
batch/v1 Job or CronJob) whose ``details`` holds the kind's own fields, the
kinds' enum values and the labels the API server adds to a Job (made by
``api.convert.workloads``/``batch``, read by ``sim.controllers``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from kubesched.api.claim_templates import RETAIN_ALL, RetentionPolicy, VolumeClaimTemplate
from kubesched.api.cron import CronSchedule
from kubesched.api.types import IntOrString, LabelSelector, OwnerReference, PodSpec, Time

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


@dataclass(frozen=True, slots=True, eq=False)
class Workload:
    """A controller of pods made from a template: an apps/v1 Deployment, ReplicaSet,
    StatefulSet or DaemonSet, a batch/v1 Job or CronJob.

    ``template_spec`` is shared by every pod made from the template. The template's
    priority fields are kept as written: each pod made from it is admitted.
    ``replicas`` is ``spec.replicas`` where the kind has it (0 otherwise);
    ``details`` holds the kind's own fields (one of the ``*Details`` classes below).
    """

    kind: str
    namespace: str
    name: str
    uid: str
    labels: Mapping[str, str]
    replicas: int
    selector: LabelSelector | None
    template_labels: Mapping[str, str]
    template_annotations: Mapping[str, str]
    template_spec: PodSpec
    template_node_name: str = ""
    template_priority: int | None = None
    template_priority_class_name: str = ""
    template_preemption_policy: str | None = None
    annotations: Mapping[str, str] = field(default_factory=dict)
    owner_references: tuple[OwnerReference, ...] = ()
    creation_timestamp: Time | None = None
    """``metadata.creationTimestamp`` as written (nanoseconds since the Unix epoch)."""
    template_key: str = ""
    """The pod template as canonical text without the ``pod-template-hash`` label:
    two workloads' templates are equal (EqualIgnoreHash) when their keys are."""
    details: object = None
    """The kind's own fields (a ``*Details`` dataclass, None for a ReplicaSet)."""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


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
