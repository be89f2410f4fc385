"""The Job controller (upstream pkg/controller/job, job_controller.go ``syncJob`` /
``manageJob``).

A Job's pods are those it controls or orphans its selector matches. Each sync counts
the pods finished since the last: Succeeded as succeeded, Failed as failed, and
with ``podReplacementPolicy: TerminatingOrFailed`` (the default) a terminating pod
as failed at once (``isPodFailed``), so it is replaced at once; with ``Failed``, only
once it is gone.

It keeps ``min(parallelism, completions - succeeded)`` pods active; without
``completions`` (a work queue), ``parallelism`` until a pod succeeds, then none
new, complete when none is left. Pods are ``<job>-<5 random characters>`` (Indexed:
``<job>-<index>-<5 characters>``, one per index not yet succeeded, lowest first,
with the ``batch.kubernetes.io/job-completion-index`` annotation and label). The
Job completes (``Completed``) when enough pods succeeded and none is active; it
fails (``BackoffLimitExceeded`` / ``DeadlineExceeded``, active pods deleted) when
more than ``backoffLimit`` pods failed or it ran past ``activeDeadlineSeconds``.
``suspend`` keeps no pod active; ``ttlSecondsAfterFinished`` deletes a finished Job
and its pods. A dump's Job continues from its status (counts with
``uncountedTerminatedPods``, completion, start time), taking the finished pods of
its first sync as counted.

Not modelled: the failure backoff before a replacement, podFailurePolicy rules,
successPolicy, backoffLimitPerIndex.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from kubesched.api.errors import InputError
from kubesched.api.types import NANOS, SUCCEEDED, LabelSelector, OwnerReference, Pod
from kubesched.api.workloads import (
    FAILED_ONLY,
    INDEXED,
    JOB_COMPLETE,
    JOB_FAILED,
    JobDetails,
)
from kubesched.sim.controllers.base import Env
from kubesched.sim.controllers.naming import random_suffix
from kubesched.sim.controllers.podutil import (
    controller_ref,
    is_active,
    is_terminal,
    pods_to_delete,
)
from kubesched.sim.controllers.template import PodTemplate

COMPLETION_INDEX: str = "batch.kubernetes.io/job-completion-index"


@dataclass(slots=True, eq=False)
class JobObj:
    namespace: str
    name: str
    uid: str
    selector: LabelSelector
    template: PodTemplate
    details: JobDetails
    labels: Mapping[str, str] = field(default_factory=dict)
    owner: OwnerReference | None = None
    creation: int = 0
    ttl_seconds_after_finished: int | None = None
    succeeded: int = 0
    failed: int = 0
    finished: str = ""
    start: int | None = None
    completion: int | None = None
    succeeded_indexes: set[int] = field(default_factory=set)
    counted: set[str] = field(default_factory=set)
    known: dict[str, bool] = field(default_factory=dict)
    """Uid -> counted, for every pod of the Job seen (to count pods that vanish)."""
    deleted: bool = False
    create_failed: bool = False
    synced: bool = False
    """The first sync happened: finished pods found then are in the status counts
    already (a dump's ``status.succeeded``/``failed``, uncounted pods included)."""

    def __post_init__(self) -> None:
        self.succeeded = max(self.succeeded, self.details.succeeded)
        self.failed = max(self.failed, self.details.failed)
        self.finished = self.finished or self.details.finished
        self.succeeded_indexes |= set(self.details.completed_indexes)

    @property
    def indexed(self) -> bool:
        return self.details.completion_mode == INDEXED


def completion_index(pod: Pod) -> int | None:
    text = pod.annotations.get(COMPLETION_INDEX)
    if text is None or not text.isascii() or not text.isdigit():
        return None
    return int(text)


@dataclass(slots=True)
class JobController:
    env: Env
    rng: random.Random
    on_finished: Callable[[JobObj], None] | None = None
    """Called when a Job completes or fails (its CronJob re-syncs)."""
    on_deleted: Callable[[JobObj], None] | None = None
    jobs: dict[str, JobObj] = field(default_factory=dict)

    def add(self, job: JobObj) -> None:
        self.jobs[job.uid] = job

    def delete(self, uid: str) -> list[Pod]:
        """The Job is deleted: its pods, for the garbage collector."""
        job = self.jobs.pop(uid, None)
        if job is None:
            return []
        job.deleted = True
        if self.on_deleted is not None:
            self.on_deleted(job)
        return self.env.owned_pods(job.namespace, uid)

    def _pods(self, job: JobObj) -> list[Pod]:
        ref = controller_ref("Job", job.name, job.uid, "batch/v1")
        return self.env.claim_pods(ref, job.namespace, job.selector)

    def _is_failed(self, job: JobObj, pod: Pod) -> bool:
        """``isPodFailed``."""
        if pod.phase == "Failed":
            return True
        if job.details.pod_replacement_policy == FAILED_ONLY:
            return False
        return pod.deletion_timestamp is not None and pod.phase != SUCCEEDED

    def _count(self, job: JobObj, pods: list[Pod]) -> None:
        present = set()
        first = not job.synced
        job.synced = True
        for pod in pods:
            present.add(pod.uid)
            job.known.setdefault(pod.uid, False)
            if pod.uid in job.counted:
                continue
            if first and is_terminal(pod):
                job.counted.add(pod.uid)  # counted in the dumped status
                index = completion_index(pod)
                if pod.phase == SUCCEEDED and index is not None:
                    job.succeeded_indexes.add(index)
                continue
            if pod.phase == SUCCEEDED:
                job.succeeded += 1
                index = completion_index(pod)
                if index is not None:
                    job.succeeded_indexes.add(index)
            elif self._is_failed(job, pod):
                job.failed += 1
            else:
                continue
            job.counted.add(pod.uid)
        for uid in list(job.known):
            if uid not in present:
                # Gone without having been counted: it never succeeded.
                if uid not in job.counted:
                    job.failed += 1
                    job.counted.add(uid)
                del job.known[uid]

    # ------------------------------------------------------------------ sync
    def sync(self, uid: str) -> None:
        job = self.jobs.get(uid)
        if job is None or job.deleted or job.finished:
            return
        pods = self._pods(job)
        self._count(job, pods)
        active = [p for p in pods if is_active(p)]
        d = job.details
        if job.start is None and not d.suspend:
            job.start = self.env.now
            self._arm_deadline(job)
        if job.failed > d.backoff_limit:
            self._fail(
                job, active, "BackoffLimitExceeded", "Job has reached the specified backoff limit"
            )
            return
        deadline = d.active_deadline_seconds
        if (
            deadline is not None
            and job.start is not None
            and not d.suspend
            and self.env.now - job.start >= deadline * NANOS
        ):
            self._fail(
                job, active, "DeadlineExceeded", "Job was active longer than specified deadline"
            )
            return
        if d.suspend:
            for pod in active:
                self.env.delete(pod)
            return
        terminating = sum(
            1 for p in pods if p.deletion_timestamp is not None and not is_terminal(p)
        )
        blocked = terminating if d.pod_replacement_policy == FAILED_ONLY else 0
        if job.indexed:
            active = self._manage_indexed(job, active, blocked)
            complete = d.completions is not None and len(job.succeeded_indexes) >= d.completions
        else:
            active = self._manage(job, active, blocked)
            if d.completions is None:
                complete = job.succeeded > 0
            else:
                complete = job.succeeded >= d.completions
        if complete and not active:
            self._finish(job, JOB_COMPLETE)
            self.env.event("Job", job.namespace, job.name, "Normal", "Completed", "Job completed")

    def _manage(self, job: JobObj, active: list[Pod], blocked: int) -> list[Pod]:
        d = job.details
        if d.completions is None:
            want = len(active) if job.succeeded > 0 else d.parallelism
        else:
            want = max(0, min(d.completions - job.succeeded, d.parallelism))
        if len(active) > want:
            gone = pods_to_delete(active, active, len(active) - want, self.env.now)
            for pod in gone:
                self.env.delete(pod)
            return [p for p in active if p not in gone]
        out = list(active)
        for _ in range(want - len(active) - blocked):
            created = self._create(job, None)
            if created is None:
                break
            out.append(created)
        return out

    def _manage_indexed(self, job: JobObj, active: list[Pod], blocked: int) -> list[Pod]:
        d = job.details
        assert d.completions is not None
        by_index: dict[int, list[Pod]] = {}
        keep: list[Pod] = []
        for pod in active:
            index = completion_index(pod)
            if index is None or index >= d.completions or index in job.succeeded_indexes:
                self.env.delete(pod)
            elif index in by_index:
                self.env.delete(pod)  # a duplicate of an index
            else:
                by_index[index] = [pod]
                keep.append(pod)
        want = max(0, min(d.completions - len(job.succeeded_indexes), d.parallelism))
        if len(keep) > want:
            keep.sort(key=lambda p: completion_index(p) or 0)
            for pod in keep[want:]:
                self.env.delete(pod)
            return keep[:want]
        missing = [
            i for i in range(d.completions) if i not in job.succeeded_indexes and i not in by_index
        ]
        for index in missing[: max(0, want - len(keep) - blocked)]:
            created = self._create(job, index)
            if created is None:
                break
            keep.append(created)
        return keep

    def _create(self, job: JobObj, index: int | None) -> Pod | None:
        labels = dict(job.template.labels)
        annotations = dict(job.template.annotations)
        prefix = job.name if index is None else f"{job.name}-{index}"
        if index is not None:
            labels[COMPLETION_INDEX] = str(index)
            annotations[COMPLETION_INDEX] = str(index)
        name = f"{prefix}-{random_suffix(self.rng)}"
        try:
            pod = job.template.pod(
                name,
                controller_ref("Job", job.name, job.uid, "batch/v1"),
                self.env.classes,
                labels=labels,
                annotations=annotations,
            )
        except InputError as err:
            job.create_failed = True
            self.env.event(
                "Job",
                job.namespace,
                job.name,
                "Warning",
                "FailedCreate",
                f'Error creating: pods "{prefix}-" is forbidden: {err.message}',
            )
            return None
        job.create_failed = False
        self.env.create(pod, job.template.run_for)
        job.known[pod.uid] = False
        return pod

    def _fail(self, job: JobObj, active: list[Pod], reason: str, message: str) -> None:
        for pod in active:
            self.env.delete(pod)
        self._finish(job, JOB_FAILED)
        self.env.event("Job", job.namespace, job.name, "Warning", reason, message)

    def _finish(self, job: JobObj, condition: str) -> None:
        job.finished = condition
        job.completion = self.env.now
        if job.ttl_seconds_after_finished is not None:
            uid = job.uid
            self.env.cluster.engine.after(
                job.ttl_seconds_after_finished * NANOS, lambda: self._expire(uid)
            )
        if self.on_finished is not None:
            self.on_finished(job)

    def _expire(self, uid: str) -> None:
        """The TTL-after-finished controller deletes the Job (and its pods)."""
        for pod in self.delete(uid):
            self.env.delete(pod)

    def _arm_deadline(self, job: JobObj) -> None:
        deadline = job.details.active_deadline_seconds
        if deadline is None or job.start is None:
            return
        uid = job.uid
        self.env.cluster.engine.at(
            job.start + deadline * NANOS, lambda: self.env.enqueue("Job", uid)
        )

    def retry_failed_creates(self) -> None:
        for job in self.jobs.values():
            if job.create_failed:
                self.env.enqueue("Job", job.uid)
