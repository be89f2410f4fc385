"""The CronJob controller (upstream pkg/controller/cronjob, cronjob_controllerv2.go
``sync`` / ``syncCronJob`` and utils.go).

Schedules run on wall-clock time (the run's time 0 is ``epoch``: the dump's
instant, else the Unix epoch), in UTC or ``spec.timeZone``. Each sync, as upstream:

- finished Jobs leave ``status.active`` (``SawCompletedJob``), missing ones too
  (``MissingJob``); finished Jobs beyond ``successfulJobsHistoryLimit`` (3) /
  ``failedJobsHistoryLimit`` (1) are deleted with their pods, oldest first
  (``SuccessfulDelete``);
- unless ``suspend``: the most recent unmet schedule time after
  ``lastScheduleTime`` (or the creation time) and not after now
  (``mostRecentScheduleTime``; more than 100 missed gives ``TooManyMissedTimes``);
  later than ``startingDeadlineSeconds`` it is skipped (``MissSchedule``);
  with ``concurrencyPolicy: Forbid`` and a Job still active it is skipped
  (``JobAlreadyActive``); with ``Replace`` the active Jobs are deleted first;
- the Job ``<cronjob>-<scheduled minutes since the Unix epoch>`` is created from
  ``jobTemplate`` (plus ``batch.kubernetes.io/cronjob-scheduled-timestamp``) and
  recorded as active (``SuccessfulCreate``);
- the next sync is at the next schedule time plus 100 ms (``nextScheduleDelta``).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Final
from zoneinfo import ZoneInfo

from kubesched.api.cron import NANOS
from kubesched.api.types import LabelSelector, Pod
from kubesched.api.workloads import (
    FORBID,
    JOB_COMPLETE,
    JOB_FAILED,
    REPLACE,
    CronJobDetails,
    job_labels,
)
from kubesched.sim.controllers.base import Env
from kubesched.sim.controllers.job import JobController, JobObj
from kubesched.sim.controllers.podutil import controller_ref
from kubesched.sim.controllers.template import PodTemplate

NEXT_SCHEDULE_DELTA: Final = 100_000_000
"""cronjob_controllerv2.go nextScheduleDelta: requeue 100 ms after the schedule time."""
SCHEDULED_TIMESTAMP: Final = "batch.kubernetes.io/cronjob-scheduled-timestamp"
MANY_MISSED: Final = 100


@dataclass(slots=True, eq=False)
class CronJobObj:
    namespace: str
    name: str
    uid: str
    template: PodTemplate
    details: CronJobDetails
    creation: int
    """``creationTimestamp`` on the run's clock."""
    last_schedule: int | None = None
    """``status.lastScheduleTime`` on the run's clock."""
    active: list[str] = field(default_factory=list)
    """Names of the active Jobs (``status.active``)."""
    wake_at: int | None = None
    deleted: bool = False


def _rfc3339(unix_ns: int, tz: _dt.tzinfo) -> str:
    d = _dt.datetime.fromtimestamp(unix_ns // NANOS, _dt.UTC).astimezone(tz)
    text = d.isoformat()
    return text.replace("+00:00", "Z") if tz is _dt.UTC else text


def _rfc1123z(unix_ns: int) -> str:
    d = _dt.datetime.fromtimestamp(unix_ns // NANOS, _dt.UTC)
    return d.strftime("%a, %d %b %Y %H:%M:%S +0000")


@dataclass(slots=True)
class CronJobController:
    env: Env
    jobs: JobController
    make_selector: Callable[[str, str, Mapping[str, str]], tuple[dict[str, str], LabelSelector]] = (
        job_labels
    )
    cronjobs: dict[str, CronJobObj] = field(default_factory=dict)

    def add(self, cj: CronJobObj) -> None:
        self.cronjobs[cj.uid] = cj

    def children(self, cj: CronJobObj) -> list[JobObj]:
        """The Jobs the CronJob controls, oldest first."""
        out = [
            j
            for j in self.jobs.jobs.values()
            if j.namespace == cj.namespace and j.owner is not None and j.owner.uid == cj.uid
        ]
        return sorted(out, key=lambda j: (j.creation, j.name))

    def delete(self, uid: str) -> list[Pod]:
        """The CronJob is deleted: its Jobs go, and their pods (returned)."""
        cj = self.cronjobs.pop(uid, None)
        if cj is None:
            return []
        cj.deleted = True
        pods: list[Pod] = []
        for job in self.children(cj):
            pods.extend(self.jobs.delete(job.uid))
        return pods

    def _wall(self, t: int) -> int:
        return t + self.env.epoch

    # ------------------------------------------------------------------ sync
    def sync(self, uid: str) -> None:
        cj = self.cronjobs.get(uid)
        if cj is None or cj.deleted:
            return
        children = self.children(cj)
        self._cleanup_finished(cj, children)
        self._reconcile_active(cj, self.children(cj))
        if cj.details.suspend:
            return
        now = self.env.now
        scheduled, missed = self._most_recent(cj, now, with_deadline=True)
        if scheduled is not None and missed > MANY_MISSED:
            self._event(
                cj,
                "Warning",
                "TooManyMissedTimes",
                "too many missed start times. Set or decrease .spec.startingDeadlineSeconds "
                "or check clock skew",
            )
        if scheduled is not None:
            self._start(cj, scheduled, now)
        self._requeue(cj, now)

    def _start(self, cj: CronJobObj, scheduled: int, now: int) -> None:
        d = cj.details
        deadline = d.starting_deadline_seconds
        if deadline is not None and scheduled + deadline * NANOS < now:
            self._event(
                cj,
                "Warning",
                "MissSchedule",
                "Missed scheduled time to start a job: " + _rfc1123z(self._wall(scheduled)),
            )
            return
        name = f"{cj.name}-{self._wall(scheduled) // NANOS // 60}"
        if name in cj.active or cj.last_schedule == scheduled:
            return
        if d.concurrency_policy == FORBID and cj.active:
            self._event(
                cj,
                "Normal",
                "JobAlreadyActive",
                "Not starting job because prior execution is running and concurrency policy "
                "is Forbid",
            )
            return
        if d.concurrency_policy == REPLACE:
            for job in self.children(cj):
                if job.name in cj.active:
                    self._delete_job(cj, job)
            cj.active.clear()
        existing = next((j for j in self.children(cj) if j.name == name), None)
        if existing is None:
            self._create_job(cj, name, scheduled)
            self._event(cj, "Normal", "SuccessfulCreate", f"Created job {name}")
        cj.active.append(name)
        cj.last_schedule = scheduled

    def _create_job(self, cj: CronJobObj, name: str, scheduled: int) -> None:
        d = cj.details
        uid = f"job/{cj.namespace}/{name}"
        labels, selector = self.make_selector(name, uid, cj.template.labels)
        annotations = dict(d.job_annotations)
        tz = _dt.UTC if d.time_zone in (None, "UTC") else _zone(d.time_zone)
        annotations[SCHEDULED_TIMESTAMP] = _rfc3339(self._wall(scheduled), tz)
        job = JobObj(
            cj.namespace,
            name,
            uid,
            selector,
            replace(cj.template, labels=labels),
            d.job,
            labels=dict(d.job_labels),
            owner=controller_ref("CronJob", cj.name, cj.uid, "batch/v1"),
            creation=self.env.now,
            ttl_seconds_after_finished=d.job.ttl_seconds_after_finished,
        )
        self.jobs.add(job)
        self.env.enqueue("Job", uid)

    def _delete_job(self, cj: CronJobObj, job: JobObj) -> None:
        for pod in self.jobs.delete(job.uid):
            self.env.delete(pod)
        self._event(cj, "Normal", "SuccessfulDelete", f"Deleted job {job.name}")

    def _reconcile_active(self, cj: CronJobObj, children: list[JobObj]) -> None:
        names = {j.name: j for j in children}
        for job in children:
            if job.name in cj.active and job.finished:
                cj.active.remove(job.name)
                self._event(
                    cj,
                    "Normal",
                    "SawCompletedJob",
                    f"Saw completed job: {job.name}, condition: {job.finished}",
                )
            elif job.name not in cj.active and not job.finished:
                self._event(
                    cj,
                    "Warning",
                    "UnexpectedJob",
                    f"Saw a job that the controller did not create or forgot: {job.name}",
                )
        for name in list(cj.active):
            if name not in names:
                cj.active.remove(name)
                self._event(cj, "Normal", "MissingJob", f"Active job went missing: {name}")

    def _cleanup_finished(self, cj: CronJobObj, children: list[JobObj]) -> None:
        d = cj.details
        for condition, limit in (
            (JOB_COMPLETE, d.successful_jobs_history_limit),
            (JOB_FAILED, d.failed_jobs_history_limit),
        ):
            done = [j for j in children if j.finished == condition]
            surplus = len(done) - limit
            if surplus <= 0:
                continue
            done.sort(key=lambda j: (j.start is None, j.start or 0, j.name))
            for job in done[:surplus]:
                self._delete_job(cj, job)

    def _most_recent(
        self, cj: CronJobObj, now: int, *, with_deadline: bool
    ) -> tuple[int | None, int]:
        """``mostRecentScheduleTime``: (the most recent schedule time in
        (earliest, now], or None; how many were missed)."""
        earliest = cj.last_schedule if cj.last_schedule is not None else cj.creation
        deadline = cj.details.starting_deadline_seconds
        if with_deadline and deadline is not None:
            earliest = max(earliest, now - deadline * NANOS)
        t1 = self._next(cj, earliest)
        if t1 is None or now < t1:
            return None, 0
        t2 = self._next(cj, t1)
        if t2 is None or now < t2:
            return t1, 1
        between = round((t2 - t1) / NANOS)
        if between < 1:
            return None, 0
        missed = (now - t1) // NANOS // between + 1
        most_recent = None
        t: int | None = self._next(cj, t1 + ((missed - 2) * between) * NANOS)
        while t is not None and t <= now:
            most_recent = t
            t = self._next(cj, t)
        return most_recent, missed

    def _next(self, cj: CronJobObj, t: int) -> int | None:
        wall = cj.details.schedule.next(self._wall(t))
        return None if wall is None else wall - self.env.epoch

    def _requeue(self, cj: CronJobObj, now: int) -> None:
        """``nextScheduleTimeDuration``: sync again 100 ms after the next schedule time."""
        recent, _ = self._most_recent(cj, now, with_deadline=False)
        base = (
            recent
            if recent is not None
            else (cj.last_schedule if cj.last_schedule is not None else cj.creation)
        )
        nxt = self._next(cj, base)
        if nxt is None:
            return
        wake = nxt + NEXT_SCHEDULE_DELTA
        if cj.wake_at is not None and now < cj.wake_at <= wake:
            return
        cj.wake_at = wake
        uid = cj.uid

        def wake_up() -> None:
            cur = self.cronjobs.get(uid)
            if cur is not None and cur.wake_at == wake:
                cur.wake_at = None
                self.env.enqueue("CronJob", uid)

        self.env.cluster.engine.at(wake, wake_up)

    def job_finished(self, job: JobObj) -> None:
        if job.owner is not None and job.owner.uid in self.cronjobs:
            self.env.enqueue("CronJob", job.owner.uid)

    def _event(self, cj: CronJobObj, type_: str, reason: str, msg: str) -> None:
        self.env.event("CronJob", cj.namespace, cj.name, type_, reason, msg)


def _zone(name: str | None) -> _dt.tzinfo:
    return ZoneInfo(name or "UTC")
