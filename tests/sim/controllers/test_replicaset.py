"""ReplicaSet ownership through the controller manager: what a ReplicaSet claims,
adopts, creates and deletes (upstream pkg/controller/replicaset replica_set.go
``syncReplicaSet`` / ``claimPods`` / ``manageReplicas``; replica_set_test.go).

The replacement of pods it created, and its generated names, are covered by
tests/sim/test_controllers.py.
"""

from __future__ import annotations

import pytest

from kubesched.api.types import OwnerReference, Pod
from tests.builders import make_pod
from tests.sim.controllers.rig import Rig, workload

RS_UID = "11111111-1111-4111-8111-111111111111"

RS = f"""
apiVersion: apps/v1
kind: ReplicaSet
metadata: {{name: web, uid: {RS_UID}}}
spec:
  replicas: {{replicas}}
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec: {{containers: [{{name: c, image: nginx}}]}}
"""


def rs(replicas: int) -> str:
    return RS.replace("{replicas}", str(replicas))


def owned(name: str, node: str = "", uid: str = RS_UID) -> Pod:
    b = make_pod(name).uid(f"uid-{name}").labels(app="web")
    b._owners = (OwnerReference("apps/v1", "ReplicaSet", "web", uid, True),)
    if node:
        b.node(node)
    return b.obj()


def orphan(name: str, node: str = "") -> Pod:
    b = make_pod(name).uid(f"uid-{name}").labels(app="web")
    if node:
        b.node(node)
    return b.obj()


@pytest.mark.parametrize("pods_first", [True, False], ids=["pods first", "ReplicaSet first"])
def test_sync_replica_set_does_nothing(pods_first: bool) -> None:
    """TestSyncReplicaSetDoesNothing: 2 replicas, 2 pods it owns (a dump), in either
    input order within the instant: nothing is created."""
    rig = Rig()
    rig.nodes("n1")
    pods = [owned("web-a", "n1"), owned("web-b", "n1")]
    w = workload(rs(2))
    if pods_first:
        for p in pods:
            rig.cluster.create_pod(p)
        rig.cm.create(w, None)
    else:
        rig.cm.create(w, None)
        for p in pods:
            rig.cluster.create_pod(p)
    rig.settle()
    assert rig.created() == ["web-a", "web-b"]


def test_orphans_matching_the_selector_are_adopted() -> None:
    """claimPods adopts active orphans its selector matches and counts them."""
    rig = Rig()
    rig.nodes("n1")
    rig.cluster.create_pod(orphan("loose-1", "n1"))
    rig.cluster.create_pod(orphan("loose-2"))
    rig.create(workload(rs(2)))
    assert rig.created() == ["loose-1", "loose-2"]
    for name in ("loose-1", "loose-2"):
        ref = rig.pod(name).controller_ref()
        assert ref is not None
        assert (ref.kind, ref.name, ref.uid) == ("ReplicaSet", "web", RS_UID)


def test_sync_replica_set_deletes_the_surplus_unscheduled_first() -> None:
    """TestSyncReplicaSetDeletes / getPodsToDelete: 1 replica, 2 pods: the one not
    scheduled yet is deleted."""
    rig = Rig()
    rig.nodes("n1")
    rig.cluster.create_pod(owned("web-bound", "n1"))
    rig.cluster.create_pod(owned("web-pending"))
    rig.create(workload(rs(1)))
    assert rig.names() == ["web-bound"]
    assert rig.cluster.record.lives["uid-web-pending"].deletion_reason == "Deleted"


def test_a_terminating_orphan_is_not_adopted() -> None:
    """ClaimObject ignores orphans being deleted: the ReplicaSet creates its replica."""
    rig = Rig()
    rig.nodes("n1")
    going = make_pod("going").uid("uid-going").labels(app="web").node("n1").terminating(50).obj()
    rig.cluster.create_pod(going)
    rig.create(workload(rs(1)))
    assert rig.pod("going").controller_ref() is None
    assert len(rig.active("web-")) == 1


def test_pods_of_another_controller_are_left_alone() -> None:
    """TestDoNotPatchPodWithOtherControlRef."""
    rig = Rig()
    rig.nodes("n1")
    theirs = owned("theirs", "n1", uid="someone-else")
    rig.cluster.create_pod(theirs)
    rig.create(workload(rs(1)))
    ref = rig.pod("theirs").controller_ref()
    assert ref is not None and ref.uid == "someone-else"
    assert len(rig.active("web-")) == 1


def test_an_orphan_created_later_is_adopted_and_the_surplus_deleted() -> None:
    """addPod of an orphan enqueues the ReplicaSets that match it: the ReplicaSet adopts
    it, now has 2 pods for 1 replica, and deletes the unscheduled one (the orphan)."""
    rig = Rig()
    rig.nodes("n1")
    rig.create(workload(rs(1)))
    (first,) = rig.active("web-")
    rig.bind(first, "n1")
    rig.add_pods(orphan("late"))
    assert rig.names() == [first]
    assert rig.cluster.record.lives["uid-late"].deletion_reason == "Deleted"


def test_an_adopted_pod_that_is_deleted_is_replaced() -> None:
    """Adopted pods count like created ones: one starting to terminate is replaced at once."""
    rig = Rig()
    rig.nodes("n1")
    rig.cluster.create_pod(owned("web-a", "n1"))
    rig.create(workload(rs(1)))
    rig.delete("web-a")
    assert rig.terminating() == ["web-a"]
    (replacement,) = rig.active("web-")
    assert replacement != "web-a"
