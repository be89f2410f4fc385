"""The CronJob controller (sim/controllers/cronjob.py) against upstream
pkg/controller/cronjob/cronjob_controllerv2_test.go: TestControllerV2SyncCronJob's
table (same names, same inputs and expectations: whether a Job is created or
deleted, how many stay active, how many Warning events) and
TestControllerV2CleanupFinishedJobs; job naming as getJobFromTemplate2."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import pytest

from kubesched.api.types import NANOS
from tests.sim.controllers.rig import Rig, workload

CJ_UID = "c0000000-0000-4000-8000-000000000000"
EPOCH = int(dt.datetime(2016, 5, 19, tzinfo=dt.UTC).timestamp()) * NANOS

JUST_AFTER_THE_PRIOR_HOUR = "2016-05-19T09:01:00Z"
JUST_BEFORE_THE_PRIOR_HOUR = "2016-05-19T08:59:00Z"
JUST_BEFORE_THE_HOUR = "2016-05-19T09:59:00Z"
JUST_AFTER_THE_HOUR = "2016-05-19T10:01:00Z"
WEEK_AFTER_THE_HOUR = "2016-05-26T10:00:00Z"
SHORT_DEAD, MEDIUM_DEAD, LONG_DEAD = 10, 2 * 60 * 60, 1000000
ON_THE_HOUR = "0 * * * ?"


def at(text: str) -> int:
    d = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return int(d.timestamp()) * NANOS


def minutes(text: str) -> int:
    return at(text) // NANOS // 60


def cronjob(
    policy: str = "Allow",
    suspend: bool = False,
    deadline: int | None = None,
    created: str = JUST_BEFORE_THE_HOUR,
    status: str = "",
    extra: str = "",
) -> str:
    dl = f"\n  startingDeadlineSeconds: {deadline}" if deadline is not None else ""
    return f"""
apiVersion: batch/v1
kind: CronJob
metadata: {{name: mycronjob, namespace: snazzycats, uid: {CJ_UID}, creationTimestamp: "{created}"}}
spec:
  schedule: "{ON_THE_HOUR}"
  concurrencyPolicy: {policy}
  suspend: {str(suspend).lower()}{dl}{extra}
  jobTemplate:
    metadata: {{labels: {{a: b}}, annotations: {{x: y}}}}
    spec:
      parallelism: 1
      completions: 1
      template:
        metadata: {{labels: {{foo: bar}}}}
        spec:
          restartPolicy: Never
          containers: [{{name: c, image: foo/bar}}]
status: {{{status}}}
"""


def child_job(name: str, finished: str = "", started: str = JUST_AFTER_THE_PRIOR_HOUR) -> str:
    cond = f"conditions: [{{type: {finished}, status: 'True'}}], " if finished else ""
    return f"""
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: snazzycats
  uid: job-{name}
  ownerReferences:
  - {{apiVersion: batch/v1, kind: CronJob, name: mycronjob, uid: {CJ_UID}, controller: true}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{{name: c, image: foo/bar}}]
status: {{{cond}startTime: "{started}"}}
"""


@dataclass(frozen=True)
class Case:
    policy: str
    suspend: bool
    deadline: int | None
    ran_previously: bool
    still_active: bool
    now: str
    expect_create: bool
    expect_delete: bool
    expect_active: int
    expect_warnings: int


A, F, R = "Allow", "Forbid", "Replace"
T, N = True, False
NEVER, NOT_TIME, IS_TIME = "never", JUST_BEFORE_THE_HOUR, JUST_AFTER_THE_HOUR
PAST_SHORT = "2016-05-19T10:12:00Z"  # justAfterTheHour + (shortDead + 1) minutes

CASES = {
    "never ran, not time, A": Case(A, N, None, N, N, NOT_TIME, N, N, 0, 0),
    "never ran, not time, F": Case(F, N, None, N, N, NOT_TIME, N, N, 0, 0),
    "never ran, not time, R": Case(R, N, None, N, N, NOT_TIME, N, N, 0, 0),
    "never ran, is time, A": Case(A, N, None, N, N, IS_TIME, T, N, 1, 0),
    "never ran, is time, F": Case(F, N, None, N, N, IS_TIME, T, N, 1, 0),
    "never ran, is time, R": Case(R, N, None, N, N, IS_TIME, T, N, 1, 0),
    "never ran, is time, suspended": Case(A, T, None, N, N, IS_TIME, N, N, 0, 0),
    "never ran, is time, past deadline": Case(A, N, SHORT_DEAD, N, N, PAST_SHORT, N, N, 0, 0),
    "never ran, is time, not past deadline": Case(A, N, LONG_DEAD, N, N, IS_TIME, T, N, 1, 0),
    "prev ran but done, not time, A": Case(A, N, None, T, N, NOT_TIME, N, N, 0, 0),
    "prev ran but done, not time, F": Case(F, N, None, T, N, NOT_TIME, N, N, 0, 0),
    "prev ran but done, not time, R": Case(R, N, None, T, N, NOT_TIME, N, N, 0, 0),
    "prev ran but done, is time, A": Case(A, N, None, T, N, IS_TIME, T, N, 1, 0),
    "prev ran but done, is time, F": Case(F, N, None, T, N, IS_TIME, T, N, 1, 0),
    "prev ran but done, is time, R": Case(R, N, None, T, N, IS_TIME, T, N, 1, 0),
    "prev ran but done, is time, suspended": Case(A, T, None, T, N, IS_TIME, N, N, 0, 0),
    "prev ran but done, is time, past deadline": Case(A, N, SHORT_DEAD, T, N, IS_TIME, N, N, 0, 0),
    "prev ran but done, is time, not past deadline": Case(
        A, N, LONG_DEAD, T, N, IS_TIME, T, N, 1, 0
    ),
    "still active, not time, A": Case(A, N, None, T, T, NOT_TIME, N, N, 1, 0),
    "still active, not time, F": Case(F, N, None, T, T, NOT_TIME, N, N, 1, 0),
    "still active, not time, R": Case(R, N, None, T, T, NOT_TIME, N, N, 1, 0),
    "still active, is time, A": Case(A, N, None, T, T, IS_TIME, T, N, 2, 0),
    "still active, is time, F": Case(F, N, None, T, T, IS_TIME, N, N, 1, 0),
    "still active, is time, R": Case(R, N, None, T, T, IS_TIME, T, T, 1, 0),
    "still active, is time, suspended": Case(A, T, None, T, T, IS_TIME, N, N, 1, 0),
    "still active, is time, past deadline": Case(A, N, SHORT_DEAD, T, T, IS_TIME, N, N, 1, 0),
    "still active, is time, not past deadline": Case(A, N, LONG_DEAD, T, T, IS_TIME, T, N, 2, 0),
    "prev ran but done, long overdue, not past deadline, A": Case(
        A, N, LONG_DEAD, T, N, WEEK_AFTER_THE_HOUR, T, N, 1, 1
    ),
    "prev ran but done, long overdue, not past deadline, R": Case(
        R, N, LONG_DEAD, T, N, WEEK_AFTER_THE_HOUR, T, N, 1, 1
    ),
    "prev ran but done, long overdue, not past deadline, F": Case(
        F, N, LONG_DEAD, T, N, WEEK_AFTER_THE_HOUR, T, N, 1, 1
    ),
    "prev ran but done, long overdue, no deadline, A": Case(
        A, N, None, T, N, WEEK_AFTER_THE_HOUR, T, N, 1, 1
    ),
    "prev ran but done, long overdue, no deadline, R": Case(
        R, N, None, T, N, WEEK_AFTER_THE_HOUR, T, N, 1, 1
    ),
    "prev ran but done, long overdue, no deadline, F": Case(
        F, N, None, T, N, WEEK_AFTER_THE_HOUR, T, N, 1, 1
    ),
    "prev ran but done, long overdue, past medium deadline, A": Case(
        A, N, MEDIUM_DEAD, T, N, WEEK_AFTER_THE_HOUR, T, N, 1, 0
    ),
    "prev ran but done, long overdue, past short deadline, A": Case(
        A, N, SHORT_DEAD, T, N, WEEK_AFTER_THE_HOUR, T, N, 1, 0
    ),
    "prev ran but done, long overdue, past medium deadline, R": Case(
        R, N, MEDIUM_DEAD, T, N, WEEK_AFTER_THE_HOUR, T, N, 1, 0
    ),
    "prev ran but done, long overdue, past short deadline, R": Case(
        R, N, SHORT_DEAD, T, N, WEEK_AFTER_THE_HOUR, T, N, 1, 0
    ),
    "prev ran but done, long overdue, past medium deadline, F": Case(
        F, N, MEDIUM_DEAD, T, N, WEEK_AFTER_THE_HOUR, T, N, 1, 0
    ),
    "prev ran but done, long overdue, past short deadline, F": Case(
        F, N, SHORT_DEAD, T, N, WEEK_AFTER_THE_HOUR, T, N, 1, 0
    ),
}


@pytest.mark.parametrize(
    "case", [pytest.param(c, id=f"TestControllerV2SyncCronJob/{name}") for name, c in CASES.items()]
)
def test_sync_cronjob(case: Case) -> None:
    """The CronJob is created at its creation time with status as upstream's table sets
    it (ran previously: created just before the prior hour, last scheduled just after
    it, its Job done or still active), then synced once at ``now``."""
    rig = Rig(epoch=EPOCH)
    rig.engine.now = at(case.now) - EPOCH
    old_job = f"mycronjob-{minutes(JUST_AFTER_THE_PRIOR_HOUR)}"
    objs = []
    if case.ran_previously:
        status = f'lastScheduleTime: "{JUST_AFTER_THE_PRIOR_HOUR}"'
        if case.still_active:
            status += f", active: [{{kind: Job, name: {old_job}, namespace: snazzycats}}]"
        cj = cronjob(case.policy, case.suspend, case.deadline, JUST_BEFORE_THE_PRIOR_HOUR, status)
        objs.append(workload(child_job(old_job, "" if case.still_active else "Complete")))
    else:
        cj = cronjob(case.policy, case.suspend, case.deadline)
    rig.nodes("n1")
    rig.create(workload(cj), *objs)
    jobs = rig.cm.jobs.jobs
    created = [j for j in jobs.values() if j.name != old_job]
    assert len(created) == (1 if case.expect_create else 0)
    deleted = case.ran_previously and f"job-{old_job}" not in jobs
    assert deleted == case.expect_delete
    state = rig.cm.cronjobs.cronjobs[CJ_UID]
    assert len(state.active) == case.expect_active
    warnings = [e for e in rig.events("CronJob") if e.type == "Warning"]
    assert len(warnings) == case.expect_warnings, warnings
    if case.expect_warnings:
        assert warnings[0].reason == "TooManyMissedTimes"


def test_job_from_template() -> None:
    """getJobFromTemplate2: ``<cronjob>-<scheduled minutes since the Unix epoch>``, the
    job template's labels and annotations plus the scheduled timestamp, controlled
    by the CronJob; its pods carry the template's labels and the job labels. The
    controller wakes 100 ms after the schedule time (nextScheduleDelta)."""
    rig = Rig(epoch=EPOCH)
    rig.engine.now = at(JUST_BEFORE_THE_HOUR) - EPOCH
    rig.nodes("n1")
    rig.create(workload(cronjob()))
    assert rig.cm.jobs.jobs == {}
    rig.advance(60)
    assert rig.cm.jobs.jobs == {}
    rig.advance(0.1)
    (job,) = rig.cm.jobs.jobs.values()
    assert job.name == f"mycronjob-{minutes('2016-05-19T10:00:00Z')}"
    assert dict(job.labels) == {"a": "b"}
    assert job.owner is not None and (job.owner.kind, job.owner.uid) == ("CronJob", CJ_UID)
    (pod,) = [rig.pod(n, "snazzycats") for n in rig.names()]
    assert pod.name.startswith(job.name + "-")
    assert pod.labels["foo"] == "bar"
    assert pod.labels["batch.kubernetes.io/job-name"] == job.name
    (event,) = rig.events("CronJob")
    assert (event.reason, event.message) == ("SuccessfulCreate", f"Created job {job.name}")


def test_forbid_skips_with_an_event() -> None:
    rig = Rig(epoch=EPOCH)
    rig.engine.now = at(JUST_AFTER_THE_HOUR) - EPOCH
    old = f"mycronjob-{minutes(JUST_AFTER_THE_PRIOR_HOUR)}"
    status = (
        f'lastScheduleTime: "{JUST_AFTER_THE_PRIOR_HOUR}", '
        f"active: [{{kind: Job, name: {old}, namespace: snazzycats}}]"
    )
    rig.nodes("n1")
    rig.create(
        workload(cronjob(F, status=status, created=JUST_BEFORE_THE_PRIOR_HOUR)),
        workload(child_job(old)),
    )
    (event,) = rig.events("CronJob")
    assert (event.type, event.reason, event.message) == (
        "Normal",
        "JobAlreadyActive",
        "Not starting job because prior execution is running and concurrency policy is Forbid",
    )


def test_cleanup_finished_jobs() -> None:
    """TestControllerV2CleanupFinishedJobs: beyond successfulJobsHistoryLimit the
    oldest finished Jobs (by start time) are deleted, with their pods."""
    rig = Rig(epoch=EPOCH)
    rig.engine.now = at(NOT_TIME) - EPOCH
    jobs = [
        child_job("done-1", "Complete", "2016-05-19T06:00:00Z"),
        child_job("done-2", "Complete", "2016-05-19T07:00:00Z"),
        child_job("done-3", "Complete", "2016-05-19T08:00:00Z"),
    ]
    rig.nodes("n1")
    rig.create(
        workload(cronjob(extra="\n  successfulJobsHistoryLimit: 1")),
        *(workload(j) for j in jobs),
    )
    assert sorted(j.name for j in rig.cm.jobs.jobs.values()) == ["done-3"]
    assert [(e.reason, e.message) for e in rig.events("CronJob")] == [
        ("SuccessfulDelete", "Deleted job done-1"),
        ("SuccessfulDelete", "Deleted job done-2"),
    ]


def test_saw_completed_job() -> None:
    """A Job of status.active finishes: it leaves the active list (SawCompletedJob)."""
    rig = Rig(epoch=EPOCH)
    rig.engine.now = at(JUST_BEFORE_THE_HOUR) - EPOCH
    rig.nodes("n1")
    rig.create(workload(cronjob()))
    rig.advance(60.1)
    (job,) = rig.cm.jobs.jobs.values()
    (pod,) = rig.names()
    rig.bind(pod, "n1", "snazzycats")
    rig.set_phase(pod, "Succeeded", "snazzycats")
    assert rig.cm.cronjobs.cronjobs[CJ_UID].active == []
    assert [(e.reason, e.message) for e in rig.events("CronJob")][-1] == (
        "SawCompletedJob",
        f"Saw completed job: {job.name}, condition: Complete",
    )
