"""The Deployment controller (sim/controllers/deployment.py) against upstream
pkg/controller/deployment: deployment_controller_test.go (TestSyncDeployment*,
TestGetReplicaSetsForDeployment*), rolling_test.go, recreate_test.go and
util/deployment_util_test.go (TestNewRSNewReplicas, TestResolveFenceposts,
TestMaxUnavailable)."""

from __future__ import annotations

import re

import pytest

from kubesched.api.types import IntOrString, LabelSelector, OwnerReference, Pod, PodSpec
from kubesched.api.workloads import DeploymentDetails
from kubesched.sim.controllers.deployment import (
    DeploymentObj,
    max_unavailable,
    new_rs_new_replicas,
    resolve_fenceposts,
)
from kubesched.sim.controllers.naming import ALPHANUMS
from kubesched.sim.controllers.replicaset import ReplicaSetSpec
from kubesched.sim.controllers.template import PodTemplate
from tests.builders import make_pod
from tests.sim.controllers.rig import Rig, workload

D_UID = "d0000000-0000-4000-8000-000000000000"
NEW_UID = "a1111111-1111-4111-8111-111111111111"
OLD_UID = "b2222222-2222-4222-8222-222222222222"


def deployment(replicas: int = 2, image: str = "v2", strategy: str = "") -> str:
    strat = f"\n  strategy: {{type: {strategy}}}" if strategy else ""
    return f"""
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, uid: {D_UID}}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: web}}}}{strat}
  template:
    metadata: {{labels: {{app: web}}}}
    spec: {{containers: [{{name: c, image: "{image}"}}]}}
"""


def replica_set(
    name: str, uid: str, replicas: int, image: str, *, owned_by_deployment: bool = True
) -> str:
    pth = name.rsplit("-", 1)[-1]
    owner = (
        f"\n  ownerReferences: [{{apiVersion: apps/v1, kind: Deployment, name: web, uid: {D_UID},"
        " controller: true}]"
        if owned_by_deployment
        else ""
    )
    return f"""
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: {name}
  uid: {uid}
  creationTimestamp: "2024-05-01T09:00:00Z"
  labels: {{app: web, pod-template-hash: {pth}}}{owner}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: web, pod-template-hash: {pth}}}}}
  template:
    metadata: {{labels: {{app: web, pod-template-hash: {pth}}}}}
    spec: {{containers: [{{name: c, image: "{image}"}}]}}
"""


def rs_pod(name: str, rs_name: str, rs_uid: str, node: str = "n1") -> Pod:
    b = make_pod(name).uid(f"uid-{name}").node(node)
    b.labels(app="web", **{"pod-template-hash": rs_name.rsplit("-", 1)[-1]})
    b._owners = (OwnerReference("apps/v1", "ReplicaSet", rs_name, rs_uid, True),)
    return b.obj()


def rs_of(rig: Rig, name: str) -> ReplicaSetSpec:
    (found,) = [rs for rs in rig.cm.rs.sets.values() if rs.name == name]
    return found


def test_a_dumped_deployment_stays_as_dumped() -> None:
    """TestGetReplicaSetsForDeployment: the Deployment claims its ReplicaSet (controller
    reference), whose template equals its own but for pod-template-hash: the new
    ReplicaSet, already at 2 replicas with its 2 pods. Nothing is created."""
    rig = Rig()
    rig.nodes("n1")
    for p in (rs_pod("web-abc-1", "web-abc", NEW_UID), rs_pod("web-abc-2", "web-abc", NEW_UID)):
        rig.cluster.create_pod(p)
    rig.create(workload(deployment(2)), workload(replica_set("web-abc", NEW_UID, 2, "v2")))
    assert rig.created() == ["web-abc-1", "web-abc-2"]
    assert [rs.name for rs in rig.cm.rs.sets.values()] == ["web-abc"]
    d = rig.cm.deployments.deployments[D_UID]
    assert not d.in_progress


def test_old_replica_sets_stay_at_zero() -> None:
    """An old ReplicaSet (another template, 0 replicas) of a finished rollout keeps 0."""
    rig = Rig()
    rig.nodes("n1")
    for p in (rs_pod("web-new-1", "web-new", NEW_UID), rs_pod("web-new-2", "web-new", NEW_UID)):
        rig.cluster.create_pod(p)
    rig.create(
        workload(deployment(2)),
        workload(replica_set("web-old", OLD_UID, 0, "v1")),
        workload(replica_set("web-new", NEW_UID, 2, "v2")),
    )
    assert rig.created() == ["web-new-1", "web-new-2"]
    assert (rs_of(rig, "web-old").replicas, rs_of(rig, "web-new").replicas) == (0, 2)


def test_sync_deployment_creates_replica_set() -> None:
    """TestSyncDeploymentCreatesReplicaSet: ``<deployment>-<hash>``, with
    pod-template-hash added to its labels, selector and pods, at 3 replicas."""
    rig = Rig()
    rig.nodes("n1")
    rig.create(workload(deployment(3)))
    (rs,) = rig.cm.rs.sets.values()
    m = re.fullmatch(f"web-([{ALPHANUMS}]{{10}})", rs.name)
    assert m, rs.name
    pth = m.group(1)
    assert rs.replicas == 3
    assert rs.labels == {"app": "web", "pod-template-hash": pth}
    assert rs.selector is not None
    assert dict(rs.selector.match_labels) == {"app": "web", "pod-template-hash": pth}
    assert rs.owner == OwnerReference("apps/v1", "Deployment", "web", D_UID, True)
    pods = rig.active("web-")
    assert len(pods) == 3
    assert all(rig.pod(p).labels["pod-template-hash"] == pth for p in pods)


def test_an_orphan_replica_set_is_adopted() -> None:
    """TestGetReplicaSetsForDeploymentAdoptRelease: an orphan ReplicaSet whose labels the
    selector matches is adopted; its template equals the Deployment's, so it is the
    new one and no other is created."""
    rig = Rig()
    rig.nodes("n1")
    rig.cluster.create_pod(rs_pod("web-abc-1", "web-abc", NEW_UID))
    rig.create(
        workload(deployment(1)),
        workload(replica_set("web-abc", NEW_UID, 1, "v2", owned_by_deployment=False)),
    )
    assert rs_of(rig, "web-abc").owner == OwnerReference(
        "apps/v1", "Deployment", "web", D_UID, True
    )
    assert rig.created() == ["web-abc-1"]


def test_rolling_update_from_a_dumped_old_replica_set() -> None:
    """rolloutRolling from a ReplicaSet of another template (2 running pods), 2
    replicas, maxSurge 25% -> 1 (rounded up), maxUnavailable 25% -> 0 (down):

    - the new ReplicaSet is created at 1 (NewRSNewReplicas: at most 3 pods in all);
      old ones cannot scale down while the new pod is unavailable;
    - its pod ready: old scaled to 1 (3 available > minAvailable 2);
    - that old pod terminating: new scaled to 2 (2 counted replicas < 3);
    - the second new pod ready: old scaled to 0."""
    rig = Rig()
    rig.nodes("n1")
    for p in (rs_pod("web-old-1", "web-old", OLD_UID), rs_pod("web-old-2", "web-old", OLD_UID)):
        rig.cluster.create_pod(p)
    rig.create(workload(deployment(2)), workload(replica_set("web-old", OLD_UID, 2, "v1")))
    old = rs_of(rig, "web-old")
    (new,) = [rs for rs in rig.cm.rs.sets.values() if rs is not old]

    def state() -> tuple[int, int, int, int]:
        return (
            new.replicas,
            old.replicas,
            len(rig.cm.rs.pods_of(new.uid)),
            len(rig.cm.rs.pods_of(old.uid)),
        )

    assert state() == (1, 2, 1, 2)
    (first,) = [p.name for p in rig.cm.rs.pods_of(new.uid)]
    rig.bind(first, "n1")
    assert state() == (2, 1, 2, 1)
    assert len(rig.terminating()) == 1
    (second,) = [p.name for p in rig.cm.rs.pods_of(new.uid) if p.name != first]
    rig.bind(second, "n1")
    assert state() == (2, 0, 2, 0)
    assert sorted(rig.terminating()) == ["web-old-1", "web-old-2"]
    assert not rig.cm.deployments.deployments[D_UID].in_progress


def test_recreate_waits_for_old_pods_to_be_gone() -> None:
    """rolloutRecreate / TestOldPodsRunning: old ReplicaSets scale to 0 first; the new
    one is created only once no old pod is left, terminating ones included (30 s)."""
    rig = Rig()
    rig.nodes("n1")
    rig.cluster.create_pod(rs_pod("web-old-1", "web-old", OLD_UID))
    rig.create(
        workload(deployment(1, strategy="Recreate")),
        workload(replica_set("web-old", OLD_UID, 1, "v1")),
    )
    assert rig.terminating() == ["web-old-1"]
    assert [rs.name for rs in rig.cm.rs.sets.values()] == ["web-old"]
    rig.advance(30)
    assert not any(n.startswith("web-old") for n in rig.names())
    new = [rs for rs in rig.cm.rs.sets.values() if rs.name != "web-old"]
    assert len(new) == 1 and new[0].replicas == 1
    assert len(rig.active("web-")) == 1


def test_deleting_a_deployment_deletes_its_replica_sets_and_pods() -> None:
    """The garbage collector (background propagation): the ReplicaSets go, then their
    pods, gracefully (a bound pod terminates for its grace period)."""
    rig = Rig()
    rig.nodes("n1")
    w = workload(deployment(2))
    rig.create(w)
    first, _ = rig.active("web-")
    rig.bind(first, "n1")
    rig.cm.delete(w)
    rig.settle()
    assert rig.cm.rs.sets == {}
    assert rig.names() == [first]
    assert rig.terminating() == [first]
    assert rig.active() == []


# --------------------------------------------------------------------------- arithmetic


def obj(
    replicas: int, surge: IntOrString, unavailable: IntOrString, strategy: str = "RollingUpdate"
) -> DeploymentObj:
    template = PodTemplate("default", {"app": "web"}, {}, PodSpec())
    return DeploymentObj(
        "default",
        "web",
        D_UID,
        replicas,
        LabelSelector({"app": "web"}),
        template,
        "",
        DeploymentDetails(strategy, surge, unavailable),
    )


def rs_with(replicas: int) -> ReplicaSetSpec:
    return ReplicaSetSpec("default", "rs", "rs", replicas, {}, {}, PodSpec(), Pod)


@pytest.mark.parametrize(
    ("strategy", "dep_replicas", "new_replicas", "max_surge", "expected"),
    [
        pytest.param(
            "RollingUpdate",
            1,
            5,
            1,
            5,
            id="TestNewRSNewReplicas/can not scale up - to newRSReplicas",
        ),
        pytest.param(
            "RollingUpdate", 6, 2, 10, 6, id="TestNewRSNewReplicas/scale up - to depReplicas"
        ),
        pytest.param("Recreate", 3, 1, 1, 3, id="TestNewRSNewReplicas/recreate - to depReplicas"),
    ],
)
def test_new_rs_new_replicas(
    strategy: str, dep_replicas: int, new_replicas: int, max_surge: int, expected: int
) -> None:
    new = rs_with(new_replicas)
    assert new_rs_new_replicas(obj(dep_replicas, max_surge, 1, strategy), [new], new) == expected


@pytest.mark.parametrize(
    ("surge", "unavailable", "desired", "expected"),
    [
        pytest.param(0, 0, 0, (0, 1), id="TestResolveFenceposts/0 and 0 make unavailability 1"),
        pytest.param(
            "39%",
            "39%",
            10,
            (4, 3),
            id="TestResolveFenceposts/39% rounds surge up, unavailability down",
        ),
        pytest.param(0, "39%", 10, (0, 3), id="TestResolveFenceposts/no surge"),
        pytest.param("39%", 0, 10, (4, 0), id="TestResolveFenceposts/no unavailability"),
    ],
)
def test_resolve_fenceposts(
    surge: IntOrString, unavailable: IntOrString, desired: int, expected: tuple[int, int]
) -> None:
    assert resolve_fenceposts(obj(desired, surge, unavailable)) == expected


@pytest.mark.parametrize(
    ("replicas", "unavailable", "strategy", "expected"),
    [
        pytest.param(
            10, 5, "RollingUpdate", 5, id="TestMaxUnavailable/maxUnavailable less than replicas"
        ),
        pytest.param(
            10, 10, "RollingUpdate", 10, id="TestMaxUnavailable/maxUnavailable equal replicas"
        ),
        pytest.param(
            5, 10, "RollingUpdate", 5, id="TestMaxUnavailable/maxUnavailable greater than replicas"
        ),
        pytest.param(
            0, 10, "RollingUpdate", 0, id="TestMaxUnavailable/maxUnavailable with replicas is 0"
        ),
        pytest.param(
            10,
            5,
            "Recreate",
            0,
            id="TestMaxUnavailable/maxUnavailable with Recreate deployment strategy",
        ),
        pytest.param(
            10,
            "50%",
            "RollingUpdate",
            5,
            id="TestMaxUnavailable/maxUnavailable less than replicas with percents",
        ),
        pytest.param(
            10,
            "100%",
            "RollingUpdate",
            10,
            id="TestMaxUnavailable/maxUnavailable equal replicas with percents",
        ),
        pytest.param(
            5,
            "100%",
            "RollingUpdate",
            5,
            id="TestMaxUnavailable/maxUnavailable greater than replicas with percents",
        ),
    ],
)
def test_max_unavailable(
    replicas: int, unavailable: IntOrString, strategy: str, expected: int
) -> None:
    assert max_unavailable(obj(replicas, 1, unavailable, strategy)) == expected
