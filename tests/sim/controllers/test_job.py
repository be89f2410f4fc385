"""The Job controller (sim/controllers/job.py) against upstream
pkg/controller/job/job_controller_test.go: TestControllerSyncJob's cases (named
as upstream), TestSyncJobPastDeadline, the pod replacement policy tests and
Indexed jobs. Pods are bound and finished by the test (the simulated kubelet)."""

from __future__ import annotations

import re

import pytest

from kubesched.api.types import OwnerReference, Pod
from kubesched.sim.controllers.naming import ALPHANUMS
from tests.builders import make_pod
from tests.sim.controllers.rig import Rig, workload

UID = "70b00000-0000-4000-8000-000000000000"
SUFFIX = f"[{ALPHANUMS}]{{5}}"


def job(spec: str = "", status: str = "", template_meta: str = "") -> str:
    return f"""
apiVersion: batch/v1
kind: Job
metadata: {{name: pi, uid: {UID}}}
spec:
  {spec or "{}"}
  template:
    metadata: {{{template_meta}}}
    spec:
      restartPolicy: Never
      containers: [{{name: c, image: perl}}]
status: {{{status}}}
""".replace("  {}\n", "")


def job_spec(**fields: object) -> str:
    return "\n  ".join(f"{k}: {v}" for k, v in fields.items())


def job_pod(name: str, phase: str = "Running", node: str = "n1") -> Pod:
    b = make_pod(name).uid(f"uid-{name}").labels(**{"batch.kubernetes.io/controller-uid": UID})
    if node:
        b.node(node)
    b.phase(phase)
    b._owners = (OwnerReference("batch/v1", "Job", "pi", UID, True),)
    return b.obj()


def start(rig: Rig, spec: str, *pods: Pod, status: str = "") -> None:
    rig.nodes("n1")
    for p in pods:
        rig.cluster.create_pod(p)
    rig.create(workload(job(spec, status)))


def finish(rig: Rig, name: str, phase: str = "Succeeded") -> None:
    if not rig.pod(name).node_name:
        rig.bind(name, "n1")
    rig.set_phase(name, phase)


def events(rig: Rig) -> list[tuple[str, str, str]]:
    return [(e.type, e.reason, e.message) for e in rig.events("Job")]


@pytest.mark.parametrize(
    ("spec", "active"),
    [
        pytest.param(
            job_spec(parallelism=2, completions=5), 2, id="TestControllerSyncJob/job start"
        ),
        pytest.param(job_spec(parallelism=2), 2, id="TestControllerSyncJob/WQ job start"),
        pytest.param(
            job_spec(parallelism=5, completions=3),
            3,
            id="TestControllerSyncJob/more parallelism than completions",
        ),
        pytest.param(
            job_spec(parallelism=0, completions=3), 0, id="TestControllerSyncJob/zero parallelism"
        ),
    ],
)
def test_job_start(spec: str, active: int) -> None:
    rig = Rig()
    start(rig, spec)
    names = rig.active()
    assert len(names) == active
    assert all(re.fullmatch(f"pi-{SUFFIX}", n) for n in names)
    for n in names:
        p = rig.pod(n)
        assert p.labels["batch.kubernetes.io/job-name"] == "pi"
        assert p.labels["job-name"] == "pi"
        assert p.labels["batch.kubernetes.io/controller-uid"] == UID
        assert p.labels["controller-uid"] == UID
        assert p.controller_ref() == OwnerReference("batch/v1", "Job", "pi", UID, True)


def test_correct_number_of_pods() -> None:
    """TestControllerSyncJob/correct # of pods: two dumped active pods, parallelism 2."""
    rig = Rig()
    start(rig, job_spec(parallelism=2, completions=5), job_pod("pi-a"), job_pod("pi-b"))
    assert rig.created() == ["pi-a", "pi-b"]


def test_too_few_active_pods() -> None:
    """TestControllerSyncJob/too few active pods: 1 active, 1 succeeded (counted in the
    dumped status), parallelism 2, completions 5: one more pod."""
    rig = Rig()
    start(
        rig,
        job_spec(parallelism=2, completions=5),
        job_pod("pi-a"),
        job_pod("pi-done", "Succeeded"),
        status="succeeded: 1",
    )
    assert len(rig.active()) == 2
    assert rig.cm.jobs.jobs[UID].succeeded == 1


def test_too_many_active_pods() -> None:
    """TestControllerSyncJob/too many active pods: 3 active, parallelism 2: one deleted."""
    rig = Rig()
    start(
        rig,
        job_spec(parallelism=2, completions=5),
        job_pod("pi-a"),
        job_pod("pi-b"),
        job_pod("pi-c", node=""),
    )
    assert rig.active() == ["pi-a", "pi-b"]


def test_more_active_pods_than_remaining_completions() -> None:
    """TestControllerSyncJob/more active pods than remaining completions: completions 3,
    2 succeeded, 2 active: one is deleted."""
    rig = Rig()
    start(
        rig,
        job_spec(parallelism=3, completions=3),
        job_pod("pi-a"),
        job_pod("pi-b", node=""),
        status="succeeded: 2",
    )
    assert rig.active() == ["pi-a"]


def test_job_finish() -> None:
    """TestControllerSyncJob/job finish: the last completion: ``Completed``, ``Job completed``."""
    rig = Rig()
    start(rig, job_spec(completions=2, parallelism=2))
    a, b = rig.active()
    finish(rig, a)
    assert events(rig) == []
    finish(rig, b)
    assert events(rig) == [("Normal", "Completed", "Job completed")]
    assert rig.cm.jobs.jobs[UID].finished == "Complete"
    assert rig.active() == []


def test_work_queue_job_finishing() -> None:
    """TestControllerSyncJob/WQ job finishing and WQ job all finished: once a pod
    succeeded no more are created; complete when none is left active."""
    rig = Rig()
    start(rig, job_spec(parallelism=2))
    a, b = rig.active()
    finish(rig, a)
    assert rig.active() == [b]
    assert events(rig) == []
    finish(rig, b)
    assert events(rig) == [("Normal", "Completed", "Job completed")]


def test_too_many_job_failures() -> None:
    """TestControllerSyncJob/too many job failures: backoffLimit 0, a pod fails: the
    Job fails (``BackoffLimitExceeded``) and its active pods are deleted."""
    rig = Rig()
    start(rig, job_spec(parallelism=2, completions=5, backoffLimit=0))
    a, b = rig.active()
    rig.bind(b, "n1")
    finish(rig, a, "Failed")
    assert events(rig) == [
        ("Warning", "BackoffLimitExceeded", "Job has reached the specified backoff limit")
    ]
    assert rig.terminating() == [b]
    assert rig.active() == []


def test_failed_pods_are_replaced_within_the_backoff_limit() -> None:
    rig = Rig()
    start(rig, job_spec(parallelism=1, completions=1))
    (a,) = rig.active()
    finish(rig, a, "Failed")
    (b,) = rig.active()
    assert b != a
    assert rig.cm.jobs.jobs[UID].failed == 1


def test_terminating_pods_are_replaced_at_once_by_default() -> None:
    """podReplacementPolicy TerminatingOrFailed (default without podFailurePolicy): a
    pod that starts terminating (a preemption victim) counts as failed and is
    replaced at once (isPodFailed)."""
    rig = Rig()
    start(rig, job_spec(parallelism=1, completions=1))
    (a,) = rig.active()
    rig.bind(a, "n1")
    rig.delete(a)
    (b,) = rig.active()
    assert b != a and rig.terminating() == [a]
    assert rig.cm.jobs.jobs[UID].failed == 1


def test_failed_replacement_policy_waits_for_terminating_pods() -> None:
    """podReplacementPolicy Failed: the replacement comes when the pod is gone."""
    rig = Rig()
    start(rig, job_spec(parallelism=1, completions=1, podReplacementPolicy="Failed"))
    (a,) = rig.active()
    rig.bind(a, "n1")
    rig.delete(a)
    assert rig.active() == []
    rig.advance(30)
    (b,) = rig.active()
    assert b != a


def test_suspending_a_job() -> None:
    """TestControllerSyncJob/suspending a job with satisfied expectations: no pod active."""
    rig = Rig()
    start(rig, job_spec(parallelism=2, completions=4, suspend="true"), job_pod("pi-a"))
    assert rig.active() == []
    assert rig.terminating() == ["pi-a"]


def test_a_finished_job_of_a_dump_does_nothing() -> None:
    rig = Rig()
    start(
        rig,
        job_spec(completions=1),
        job_pod("pi-done", "Succeeded"),
        status="succeeded: 1, conditions: [{type: Complete, status: 'True'}]",
    )
    assert rig.created() == ["pi-done"]
    assert events(rig) == []


def test_past_deadline() -> None:
    """TestSyncJobPastDeadline/activeDeadlineSeconds less than single pod execution: at
    the deadline the Job fails (``DeadlineExceeded``) and its pods are deleted."""
    rig = Rig()
    start(rig, job_spec(parallelism=1, completions=1, activeDeadlineSeconds=10))
    (a,) = rig.active()
    rig.bind(a, "n1")
    rig.advance(9)
    assert events(rig) == []
    rig.advance(1)
    assert events(rig) == [
        ("Warning", "DeadlineExceeded", "Job was active longer than specified deadline")
    ]
    assert rig.terminating() == [a]


def test_indexed_job() -> None:
    """Indexed: one pod per index, ``pi-<index>-<5 characters>`` with the completion
    index annotation and label; a succeeded index is not run again; the next free
    index is started; complete when every index succeeded."""
    rig = Rig()
    start(rig, job_spec(parallelism=2, completions=3, completionMode="Indexed"))
    names = rig.active()
    assert [n[:5] for n in names] == ["pi-0-", "pi-1-"]
    for i, n in enumerate(names):
        assert re.fullmatch(f"pi-{i}-{SUFFIX}", n)
        p = rig.pod(n)
        assert p.annotations["batch.kubernetes.io/job-completion-index"] == str(i)
        assert p.labels["batch.kubernetes.io/job-completion-index"] == str(i)
    finish(rig, names[0])
    assert sorted(n[:5] for n in rig.active()) == ["pi-1-", "pi-2-"]
    for n in rig.active():
        finish(rig, n)
    assert events(rig) == [("Normal", "Completed", "Job completed")]


def test_ttl_after_finished_deletes_the_job_and_its_pods() -> None:
    rig = Rig()
    start(rig, job_spec(completions=1, ttlSecondsAfterFinished=100))
    (a,) = rig.active()
    finish(rig, a)
    rig.advance(99)
    assert rig.names() == [a]
    rig.advance(1)
    assert rig.names() == []
    assert UID not in rig.cm.jobs.jobs


def test_pods_run_for_the_template_duration() -> None:
    """kubesched.io/run-for on the template: each pod succeeds that long after binding;
    completions 2, parallelism 1: two pods in sequence, then Complete."""
    rig = Rig()
    rig.nodes("n1")
    rig.create(
        workload(job(job_spec(completions=2), template_meta="annotations: {x: y}")), run_for=10**10
    )
    (a,) = rig.active()
    rig.bind(a, "n1")
    rig.advance(10)
    (b,) = rig.active()
    rig.bind(b, "n1")
    rig.advance(10)
    assert events(rig) == [("Normal", "Completed", "Job completed")]
    assert [r.pod.phase for r in rig.cluster.record.lives.values()] == ["Succeeded", "Succeeded"]
