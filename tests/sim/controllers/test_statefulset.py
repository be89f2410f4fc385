"""The StatefulSet controller (sim/controllers/statefulset.py) against upstream
pkg/controller/statefulset: stateful_set_control_test.go (TestStatefulSetControl
subtests, TestParallelScale, TestStatefulSetControlRollingUpdate*),
stateful_set_test.go (TestStatefulSetControllerRespectsTermination,
TestGetPodsForStatefulSetAdopt) and stateful_set_utils_test.go
(TestGetParentNameAndOrdinal). The simulated kubelet makes a bound pod Running
and Ready at once, so "bind" is what lets an OrderedReady set go on."""

from __future__ import annotations

import pytest

from kubesched.api.types import OwnerReference, Pod
from kubesched.sim.controllers.statefulset import parse_ordinal
from tests.builders import make_pod
from tests.sim.controllers.rig import Rig, workload

UID = "5e000000-0000-4000-8000-000000000000"


def sts(replicas: int = 3, policy: str = "OrderedReady", extra: str = "", status: str = "") -> str:
    return f"""
apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: web, uid: {UID}}}
spec:
  replicas: {replicas}
  podManagementPolicy: {policy}
  serviceName: web
  selector: {{matchLabels: {{app: web}}}}{extra}
  template:
    metadata: {{labels: {{app: web}}}}
    spec: {{containers: [{{name: c, image: nginx}}]}}
status: {{{status}}}
"""


def member(ordinal: int, node: str = "n1", revision: str = "", owned: bool = True) -> Pod:
    name = f"web-{ordinal}"
    b = make_pod(name).uid(f"uid-{name}").labels(app="web").node(node)
    if revision:
        b.label("controller-revision-hash", revision)
    if owned:
        b._owners = (OwnerReference("apps/v1", "StatefulSet", "web", UID, True),)
    return b.obj()


def test_creates_pods_in_order() -> None:
    """TestStatefulSetControl/CreatesPods (OrderedReady): web-0 first; web-(i+1) only
    once web-i is Running and Ready. Labels as upstream's newStatefulSetPod."""
    rig = Rig()
    rig.nodes("n1")
    rig.create(workload(sts(3)))
    assert rig.names() == ["web-0"]
    pod = rig.pod("web-0")
    assert pod.labels["statefulset.kubernetes.io/pod-name"] == "web-0"
    assert pod.labels["apps.kubernetes.io/pod-index"] == "0"
    assert pod.labels["controller-revision-hash"].startswith("web-")
    assert pod.controller_ref() == OwnerReference("apps/v1", "StatefulSet", "web", UID, True)
    rig.bind("web-0", "n1")
    assert rig.names() == ["web-0", "web-1"]
    rig.bind("web-1", "n1")
    rig.bind("web-2", "n1")
    assert rig.names() == ["web-0", "web-1", "web-2"]


def test_parallel_creates_every_pod_at_once() -> None:
    """TestParallelScale / podManagementPolicy Parallel (burst)."""
    rig = Rig()
    rig.nodes("n1")
    rig.create(workload(sts(3, "Parallel")))
    assert rig.names() == ["web-0", "web-1", "web-2"]


def test_start_ordinal() -> None:
    """spec.ordinals.start: replicas are [start, start + replicas)."""
    rig = Rig()
    rig.nodes("n1")
    rig.create(workload(sts(2, "Parallel", extra="\n  ordinals: {start: 5}")))
    assert rig.names() == ["web-5", "web-6"]


def test_adopts_the_dumped_pods() -> None:
    """TestGetPodsForStatefulSetAdopt: its own pods by controller reference, and an
    orphan member (name web-<n>, selector matches) adopted; nothing created."""
    rig = Rig()
    rig.nodes("n1")
    rig.cluster.create_pod(member(0))
    rig.cluster.create_pod(member(1, owned=False))
    rig.create(workload(sts(2)))
    assert rig.created() == ["web-0", "web-1"]
    assert rig.terminating() == []  # no revision label, no dumped updateRevision: kept
    ref = rig.pod("web-1").controller_ref()
    assert ref is not None and ref.uid == UID


def test_scales_down_from_the_highest_ordinal_one_at_a_time() -> None:
    """TestStatefulSetControl/ScalesDown (OrderedReady): web-2 is deleted first; web-1
    only once web-2 is gone."""
    rig = Rig()
    rig.nodes("n1")
    for i in range(3):
        rig.cluster.create_pod(member(i))
    rig.create(workload(sts(1)))
    assert rig.terminating() == ["web-2"]
    rig.advance(30)
    assert rig.terminating() == ["web-1"]
    rig.advance(30)
    assert rig.names() == ["web-0"]


def test_respects_termination_and_recreates_under_the_same_name() -> None:
    """TestStatefulSetControllerRespectsTermination: a terminating replica (e.g. a
    preemption victim) holds its name; when its grace period ends it is created
    again, Pending, and an OrderedReady set creates nothing after it meanwhile."""
    rig = Rig()
    rig.nodes("n1")
    rig.cluster.create_pod(member(0))
    rig.create(workload(sts(2)))
    assert rig.names() == ["web-0", "web-1"]
    rig.bind("web-1", "n1")
    old_uid = rig.pod("web-1").uid
    rig.delete("web-1")
    assert rig.names() == ["web-0", "web-1"]
    rig.advance(30)
    assert rig.names() == ["web-0", "web-1"]
    again = rig.pod("web-1")
    assert again.uid != old_uid
    assert (again.node_name, again.phase) == ("", "Pending")


@pytest.mark.parametrize("phase", ["Failed", "Succeeded"])
def test_recreates_failed_and_succeeded_pods(phase: str) -> None:
    """TestStatefulSetControl/RecreatesFailedPod and RecreatesSucceededPod: the pod is
    deleted, and created anew at the next sync once it is gone."""
    rig = Rig()
    rig.nodes("n1")
    rig.cluster.create_pod(member(0))
    rig.create(workload(sts(1)))
    uid = rig.pod("web-0").uid
    rig.set_phase("web-0", phase)
    assert rig.pod("web-0").uid != uid
    assert rig.cluster.record.lives[uid].deletion_reason == "Deleted"


def test_ordered_ready_waits_for_an_unready_replica() -> None:
    """processReplica: a created replica not Running and Ready blocks the next one."""
    rig = Rig()
    rig.nodes("n1")
    rig.create(workload(sts(3)))
    rig.advance(60)
    assert rig.names() == ["web-0"]


def test_rolling_update_replaces_old_revisions_from_the_highest_ordinal() -> None:
    """updateStatefulSetAfterInvariantEstablished (MaxUnavailableStatefulSet, on in
    v1.35+), maxUnavailable 1: a dump whose pods carry the current revision while
    the update revision is another: web-1 is deleted first; web-0 once web-1 is back
    and ready."""
    rig = Rig()
    rig.nodes("n1")
    rig.cluster.create_pod(member(0, revision="web-old"))
    rig.cluster.create_pod(member(1, revision="web-old"))
    rig.create(workload(sts(2, status="currentRevision: web-old, updateRevision: web-new")))
    assert rig.terminating() == ["web-1"]
    rig.advance(30)
    assert rig.pod("web-1").labels["controller-revision-hash"] == "web-new"
    assert rig.terminating() == []
    rig.bind("web-1", "n1")
    assert rig.terminating() == ["web-0"]


def test_on_delete_leaves_old_revisions() -> None:
    rig = Rig()
    rig.nodes("n1")
    rig.cluster.create_pod(member(0, revision="web-old"))
    rig.create(
        workload(
            sts(
                1,
                extra="\n  updateStrategy: {type: OnDelete}",
                status="currentRevision: web-old, updateRevision: web-new",
            )
        )
    )
    assert rig.terminating() == []


@pytest.mark.parametrize(
    ("name", "ordinal"),
    [
        pytest.param("web-0", 0, id="TestGetParentNameAndOrdinal/web-0"),
        pytest.param("web-12", 12, id="TestGetParentNameAndOrdinal/web-12"),
        pytest.param("web-x", -1, id="TestGetParentNameAndOrdinal/not a number"),
        pytest.param("other-1", -1, id="TestGetParentNameAndOrdinal/another parent"),
        pytest.param("web-a-1", -1, id="TestGetParentNameAndOrdinal/parent web-a"),
    ],
)
def test_parse_ordinal(name: str, ordinal: int) -> None:
    assert parse_ordinal("web", name) == ordinal
