"""The workload kinds (api/workloads.py; api/convert/workloads.py, batch.py):
defaulting and validation as the API server does them
(pkg/apis/apps/v1/defaults.go, pkg/apis/batch/v1/defaults.go,
pkg/apis/apps/validation, pkg/apis/batch/validation, pkg/registry/batch/job
generateSelector), and the status fields a dump carries.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.convert.templates import template_key
from kubesched.api.workloads import (
    CronJobDetails,
    DaemonSetDetails,
    DeploymentDetails,
    JobDetails,
    StatefulSetDetails,
    Workload,
    workload_times,
)
from tests.api.test_load import load, load_error, patched, y

STS = y("""
    apiVersion: apps/v1
    kind: StatefulSet
    metadata: {name: db, namespace: prod, uid: u-db}
    spec:
      selector: {matchLabels: {app: x}}
      template:
        metadata: {labels: {app: x}}
        spec: {containers: [{name: c, image: i}]}
    """)
DS = y("""
    apiVersion: apps/v1
    kind: DaemonSet
    metadata: {name: agent, uid: u-ds}
    spec:
      selector: {matchLabels: {app: x}}
      template:
        metadata: {labels: {app: x}}
        spec: {containers: [{name: c, image: i}]}
    """)
JOB = y("""
    apiVersion: batch/v1
    kind: Job
    metadata: {name: pi, uid: u-job}
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: c, image: i}]
    """)
CRONJOB = y("""
    apiVersion: batch/v1
    kind: CronJob
    metadata: {name: tick, uid: u-cj}
    spec:
      schedule: "*/5 * * * *"
      jobTemplate:
        metadata: {labels: {team: a}, annotations: {note: b}}
        spec:
          template:
            spec:
              restartPolicy: OnFailure
              containers: [{name: c, image: i}]
    """)
DEPLOY = y("""
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web}
    spec:
      selector: {matchLabels: {app: x}}
      template:
        metadata: {labels: {app: x}}
        spec: {containers: [{name: c, image: i}]}
    """)


def with_selector(raw: dict[str, Any], selector: Any) -> dict[str, Any]:
    out = patched(raw, "{}")
    out["spec"]["selector"] = selector
    return out


def one(raw: dict[str, Any]) -> Workload:
    result = load(raw)
    (loaded,) = result.objects
    assert isinstance(loaded.obj, Workload)
    return loaded.obj


def test_statefulset_defaults_and_dumped_revisions() -> None:
    w = one(patched(STS, "status: {currentRevision: db-1, updateRevision: db-2}"))
    assert (w.kind, w.namespace, w.name, w.uid, w.replicas) == (
        "StatefulSet",
        "prod",
        "db",
        "u-db",
        1,
    )
    assert w.details == StatefulSetDetails(current_revision="db-1", update_revision="db-2")
    d = w.details
    assert isinstance(d, StatefulSetDetails)
    assert (d.pod_management_policy, d.update_strategy, d.partition, d.start_ordinal) == (
        "OrderedReady",
        "RollingUpdate",
        0,
        0,
    )


def test_statefulset_fields() -> None:
    w = one(
        patched(
            STS,
            """
            spec:
              replicas: 3
              podManagementPolicy: Parallel
              ordinals: {start: 5}
              updateStrategy:
                type: RollingUpdate
                rollingUpdate: {partition: 2, maxUnavailable: 50%}
              volumeClaimTemplates: [{metadata: {name: data}}]
            """,
        )
    )
    d = w.details
    assert isinstance(d, StatefulSetDetails)
    assert w.replicas == 3
    assert (d.pod_management_policy, d.start_ordinal, d.partition, d.max_unavailable) == (
        "Parallel",
        5,
        2,
        "50%",
    )
    # Upstream's StatefulSet validation does not look into the templates: a template
    # without a claim spec is kept, with the API server's reason for refusing its claims.
    [t] = d.volume_claim_templates
    assert (t.name, t.claim) == ("data", None)
    assert t.refusal.startswith("spec.")


def test_daemonset_defaults() -> None:
    w = one(patched(DS, "metadata: {annotations: {deprecated.daemonset.template.generation: '3'}}"))
    assert w.kind == "DaemonSet"
    assert w.details == DaemonSetDetails(template_generation="3")


@pytest.mark.parametrize(
    ("spec", "parallelism", "completions"),
    [
        pytest.param("{}", 1, 1, id="both unset: 1 and 1 (SetDefaults_Job)"),
        pytest.param("{parallelism: 3}", 3, None, id="parallelism alone: a work queue"),
        pytest.param("{completions: 4}", 1, 4, id="completions alone: parallelism 1"),
    ],
)
def test_job_parallelism_and_completions_defaults(
    spec: str, parallelism: int, completions: int | None
) -> None:
    d = one(patched(JOB, f"spec: {spec}")).details
    assert isinstance(d, JobDetails)
    assert (d.parallelism, d.completions, d.backoff_limit) == (parallelism, completions, 6)
    assert (d.completion_mode, d.pod_replacement_policy) == ("NonIndexed", "TerminatingOrFailed")


def test_job_generated_selector_and_labels() -> None:
    """generateSelector: job-name and controller-uid labels, legacy and
    batch.kubernetes.io/ forms, and a selector on batch.kubernetes.io/controller-uid."""
    w = one(JOB)
    assert w.selector is not None
    assert dict(w.selector.match_labels) == {"batch.kubernetes.io/controller-uid": "u-job"}
    assert dict(w.template_labels) == {
        "job-name": "pi",
        "batch.kubernetes.io/job-name": "pi",
        "controller-uid": "u-job",
        "batch.kubernetes.io/controller-uid": "u-job",
    }


def test_job_from_a_dump_keeps_its_selector_and_status() -> None:
    w = one(
        patched(
            JOB,
            """
            spec:
              selector: {matchLabels: {batch.kubernetes.io/controller-uid: u-job}}
              template: {metadata: {labels: {batch.kubernetes.io/controller-uid: u-job}}}
            status:
              succeeded: 2
              failed: 1
              startTime: "2024-05-01T10:00:00Z"
              conditions: [{type: Complete, status: "True"}]
              uncountedTerminatedPods: {succeeded: [a]}
            """,
        )
    )
    d = w.details
    assert isinstance(d, JobDetails)
    assert (d.succeeded, d.failed, d.finished) == (3, 1, "Complete")
    assert d.start_time == 1714557600 * 10**9
    assert dict(w.template_labels) == {"batch.kubernetes.io/controller-uid": "u-job"}
    assert workload_times(w) == (None, d.start_time)


def test_cronjob_defaults_and_status() -> None:
    w = one(
        patched(
            CRONJOB,
            """
            status:
              lastScheduleTime: "2024-05-01T10:00:00Z"
              active: [{kind: Job, name: tick-28574400, namespace: default}]
            """,
        )
    )
    d = w.details
    assert isinstance(d, CronJobDetails)
    assert (d.schedule_text, d.concurrency_policy, d.suspend) == ("*/5 * * * *", "Allow", False)
    assert (d.successful_jobs_history_limit, d.failed_jobs_history_limit) == (3, 1)
    assert d.starting_deadline_seconds is None
    assert (dict(d.job_labels), dict(d.job_annotations)) == ({"team": "a"}, {"note": "b"})
    assert d.job == JobDetails()
    assert d.active == ("tick-28574400",)
    assert d.last_schedule_time == 1714557600 * 10**9


def test_deployment_strategy_defaults() -> None:
    assert one(DEPLOY).details == DeploymentDetails("RollingUpdate", "25%", "25%")
    recreate = one(patched(DEPLOY, "spec: {strategy: {type: Recreate}}")).details
    assert isinstance(recreate, DeploymentDetails)
    assert recreate.strategy == "Recreate"


def test_template_key_ignores_pod_template_hash_and_empty_fields() -> None:
    """EqualIgnoreHash: a ReplicaSet's template equals its Deployment's once the
    pod-template-hash label is dropped; null and empty values serialize alike."""
    deployment = {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [{"name": "c"}]}}
    rs = {
        "metadata": {"labels": {"app": "x", "pod-template-hash": "abc"}, "annotations": {}},
        "spec": {"containers": [{"name": "c", "env": None}]},
    }
    other = {"metadata": {"labels": {"app": "y"}}, "spec": {"containers": [{"name": "c"}]}}
    assert template_key(deployment) == template_key(rs)
    assert template_key(deployment) != template_key(other)


@pytest.mark.parametrize(
    ("raw", "field", "message"),
    [
        pytest.param(
            with_selector(STS, {"matchLabels": {}}),
            "spec.selector",
            'Invalid value: "{}": empty selector is invalid for statefulset',
            id="ValidateStatefulSetSpec/empty selector",
        ),
        pytest.param(
            patched(STS, "spec: {podManagementPolicy: Sometimes}"),
            "spec.podManagementPolicy",
            "Invalid value: \"Sometimes\": must be 'OrderedReady' or 'Parallel'",
            id="ValidateStatefulSetSpec/podManagementPolicy",
        ),
        pytest.param(
            patched(STS, "spec: {updateStrategy: {type: Partition}}"),
            "spec.updateStrategy",
            "Invalid value: \"Partition\": must be 'RollingUpdate' or 'OnDelete'",
            id="ValidateStatefulSetSpec/updateStrategy",
        ),
        pytest.param(
            patched(STS, "spec: {replicas: -1}"),
            "spec.replicas",
            "Invalid value: -1: must be greater than or equal to 0",
            id="ValidateStatefulSetSpec/negative replicas",
        ),
        pytest.param(
            patched(STS, "spec: {template: {metadata: {labels: {app: y}}}}"),
            "spec.template.metadata.labels",
            'Invalid value: {"app": "y"}: `selector` does not match template `labels`',
            id="ValidatePodTemplateSpecForStatefulSet/selector mismatch",
        ),
        pytest.param(
            patched(STS, "spec: {template: {spec: {restartPolicy: Never}}}"),
            "spec.template.spec.restartPolicy",
            'Unsupported value: "Never": supported values: "Always"',
            id="ValidateStatefulSetSpec/restartPolicy",
        ),
        pytest.param(
            with_selector(DS, {}),
            "spec.selector",
            'Invalid value: "{}": empty selector is invalid for daemonset',
            id="ValidateDaemonSetSpec/empty selector",
        ),
        pytest.param(
            patched(DS, "spec: {selector: null}"),
            "spec.selector",
            "Required value",
            id="ValidateDaemonSetSpec/missing selector",
        ),
        pytest.param(
            patched(JOB, "spec: {template: {spec: {restartPolicy: Always}}}"),
            "spec.template.spec.restartPolicy",
            'Unsupported value: "Always": supported values: "OnFailure", "Never"',
            id="ValidateJobSpec/restartPolicy Always",
        ),
        pytest.param(
            patched(JOB, "spec: {completionMode: Indexed, parallelism: 2}"),
            "spec.completions",
            "Required value: when completion mode is Indexed",
            id="ValidateJobSpec/Indexed without completions",
        ),
        pytest.param(
            patched(JOB, "spec: {completionMode: Sometimes}"),
            "spec.completionMode",
            'Unsupported value: "Sometimes": supported values: "NonIndexed", "Indexed"',
            id="ValidateJobSpec/completionMode",
        ),
        pytest.param(
            patched(JOB, "spec: {parallelism: -2}"),
            "spec.parallelism",
            "Invalid value: -2: must be greater than or equal to 0",
            id="ValidateJobSpec/negative parallelism",
        ),
        pytest.param(
            patched(CRONJOB, "spec: {schedule: '* * * *'}"),
            "spec.schedule",
            'Invalid value: "* * * *": expected exactly 5 fields, found 4: [* * * *]',
            id="ValidateCronJobSpec/schedule",
        ),
        pytest.param(
            patched(CRONJOB, "spec: {schedule: ''}"),
            "spec.schedule",
            "Required value",
            id="ValidateCronJobSpec/empty schedule",
        ),
        pytest.param(
            patched(CRONJOB, "spec: {schedule: 'TZ=UTC 0 * * * *'}"),
            "spec.schedule",
            'Invalid value: "TZ=UTC 0 * * * *": cannot use TZ or CRON_TZ in schedule, '
            "use timeZone field instead",
            id="ValidateCronJobSpec/TZ in schedule",
        ),
        pytest.param(
            patched(CRONJOB, "spec: {timeZone: Mars/Olympus}"),
            "spec.timeZone",
            'Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus',
            id="validateTimeZone/unknown",
        ),
        pytest.param(
            patched(CRONJOB, "spec: {concurrencyPolicy: Sometimes}"),
            "spec.concurrencyPolicy",
            'Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"',
            id="ValidateCronJobSpec/concurrencyPolicy",
        ),
        pytest.param(
            patched(CRONJOB, "metadata: {name: " + "a" * 53 + "}"),
            "metadata.name",
            f'Invalid value: "{"a" * 53}": must be no more than 52 characters',
            id="ValidateCronJob/name longer than 52",
        ),
        pytest.param(
            patched(DEPLOY, "spec: {strategy: {rollingUpdate: {maxSurge: 0, maxUnavailable: 0}}}"),
            "spec.strategy.rollingUpdate.maxUnavailable",
            "Invalid value: 0: may not be 0 when `maxSurge` is 0",
            id="ValidateRollingUpdateDeployment/both zero",
        ),
        pytest.param(
            patched(DEPLOY, "spec: {strategy: {type: Recreate, rollingUpdate: {maxSurge: 1}}}"),
            "spec.strategy.rollingUpdate",
            "Forbidden: may not be specified when strategy `type` is 'Recreate'",
            id="ValidateDeploymentStrategy/Recreate with rollingUpdate",
        ),
        pytest.param(
            patched(JOB, "apiVersion: batch/v2"),
            "apiVersion",
            'no matches for kind "Job" in version "batch/v2"',
            id="an unserved version",
        ),
    ],
)
def test_validation_errors(raw: dict[str, Any], field: str, message: str) -> None:
    err = load_error(raw)
    assert (err.field, err.message) == (field, message)
    assert err.source == "in.yaml"


def test_the_new_kinds_are_acted_on() -> None:
    result = load(STS, DS, JOB, CRONJOB)
    assert [o.kind for o in result.objects] == ["StatefulSet", "DaemonSet", "Job", "CronJob"]
    assert not result.ignored
