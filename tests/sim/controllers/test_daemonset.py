"""The DaemonSet controller (sim/controllers/daemonset.py) against upstream
pkg/controller/daemon: daemon_controller_test.go (TestNodeShouldRunDaemonPod,
TestSimpleDaemonSetLaunchesPods, TestAddNode, TestDeleteUnscheduledPodForNotExistingNode,
the taint and selector tests, TestDealsWithExistingPods,
TestDaemonSetRespectsTermination) and util/daemonset_util_test.go
(TestAddOrUpdateDaemonPodTolerations via CreatePodTemplate,
TestReplaceDaemonSetPodNodeNameNodeAffinity, TestGetTargetNodeName)."""

from __future__ import annotations

import re

import pytest

from kubesched.api.types import (
    NO_EXECUTE,
    NO_SCHEDULE,
    Affinity,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    OwnerReference,
    Pod,
    PodSpec,
    PreferredSchedulingTerm,
    Toleration,
)
from kubesched.sim.controllers.daemonset import (
    add_or_update_tolerations,
    daemon_spec,
    node_should_run,
    target_node,
    with_node_affinity,
)
from kubesched.sim.controllers.naming import ALPHANUMS
from kubesched.sim.controllers.template import PodTemplate
from tests.builders import make_node, make_pod
from tests.sim.controllers.rig import Rig, workload

UID = "d5000000-0000-4000-8000-000000000000"


def ds(template_spec: str = "") -> str:
    return f"""
apiVersion: apps/v1
kind: DaemonSet
metadata: {{name: agent, uid: {UID}}}
spec:
  selector: {{matchLabels: {{app: agent}}}}
  template:
    metadata: {{labels: {{app: agent}}}}
    spec:
      containers: [{{name: c, image: a}}]{template_spec}
"""


DEFAULT_TOLERATIONS = [
    ("node.kubernetes.io/not-ready", NO_EXECUTE),
    ("node.kubernetes.io/unreachable", NO_EXECUTE),
    ("node.kubernetes.io/disk-pressure", NO_SCHEDULE),
    ("node.kubernetes.io/memory-pressure", NO_SCHEDULE),
    ("node.kubernetes.io/pid-pressure", NO_SCHEDULE),
    ("node.kubernetes.io/unschedulable", NO_SCHEDULE),
]


def node(name: str = "n1", **labels: str) -> Node:
    b = make_node(name).capacity(cpu="8", memory="16Gi", pods=110)
    for k, v in labels.items():
        b.label(k, v)
    return b.obj()


def tainted(key: str, effect: str, name: str = "n1") -> Node:
    return make_node(name).capacity(cpu="8", memory="16Gi", pods=110).taint(key, "", effect).obj()


def template(spec: PodSpec, node_name: str = "") -> PodTemplate:
    return PodTemplate("default", {"app": "agent"}, {}, spec, node_name)


def test_default_tolerations() -> None:
    """AddOrUpdateDaemonPodTolerations: six tolerations (operator Exists), and
    network-unavailable for hostNetwork pods; an equal user toleration is replaced
    in place, not duplicated."""
    spec = daemon_spec(PodSpec())
    assert [(t.key, t.operator, t.effect) for t in spec.tolerations] == [
        (k, "Exists", e) for k, e in DEFAULT_TOLERATIONS
    ]
    host = daemon_spec(PodSpec(host_network=True))
    assert host.tolerations[-1] == Toleration(
        "node.kubernetes.io/network-unavailable", "Exists", "", NO_SCHEDULE
    )
    mine = Toleration("node.kubernetes.io/not-ready", "Exists", "", NO_EXECUTE, 300)
    merged = add_or_update_tolerations((mine,), daemon_spec(PodSpec()).tolerations)
    assert len(merged) == 6
    assert merged[0].toleration_seconds is None


@pytest.mark.parametrize(
    ("spec", "node_", "expected"),
    [
        pytest.param(
            PodSpec(), node(), (True, True), id="TestNodeShouldRunDaemonPod/ShouldRunDaemonPod"
        ),
        pytest.param(
            PodSpec(node_selector={"type": "production"}),
            node(type="test"),
            (False, False),
            id="TestNodeShouldRunDaemonPod/ErrNodeSelectorNotMatch",
        ),
        pytest.param(
            PodSpec(node_selector={"type": "production"}),
            node(type="production"),
            (True, True),
            id="TestNodeShouldRunDaemonPod/node selector matches",
        ),
        pytest.param(
            PodSpec(
                affinity=Affinity(
                    NodeAffinity(
                        NodeSelector(
                            (
                                NodeSelectorTerm(
                                    (NodeSelectorRequirement("type", "In", ("production",)),)
                                ),
                            )
                        )
                    )
                )
            ),
            node(type="test"),
            (False, False),
            id="TestNodeShouldRunDaemonPod/required node affinity not matched",
        ),
        pytest.param(
            PodSpec(),
            tainted("dedicated", NO_SCHEDULE),
            (False, True),
            id="TestNodeShouldRunDaemonPod/ErrTaintsTolerationsNotMatch NoSchedule: may continue",
        ),
        pytest.param(
            PodSpec(),
            tainted("dedicated", NO_EXECUTE),
            (False, False),
            id="TestNodeShouldRunDaemonPod/untolerated NoExecute: may not continue",
        ),
        pytest.param(
            PodSpec(tolerations=(Toleration("dedicated", "Exists"),)),
            tainted("dedicated", NO_EXECUTE),
            (True, True),
            id="TestNodeShouldRunDaemonPod/tolerated taint",
        ),
        pytest.param(
            PodSpec(),
            tainted("node.kubernetes.io/unschedulable", NO_SCHEDULE),
            (True, True),
            id="TestNodeShouldRunDaemonPod/ShouldRunDaemonPodOnUnschedulableNode",
        ),
        pytest.param(
            PodSpec(),
            tainted("node.kubernetes.io/memory-pressure", NO_SCHEDULE),
            (True, True),
            id="TestTaintPressureNodeDaemonLaunchesPod",
        ),
        pytest.param(
            PodSpec(),
            tainted("node.kubernetes.io/network-unavailable", NO_SCHEDULE),
            (False, True),
            id="network-unavailable is tolerated by hostNetwork pods only",
        ),
        pytest.param(
            PodSpec(host_network=True),
            tainted("node.kubernetes.io/network-unavailable", NO_SCHEDULE),
            (True, True),
            id="network-unavailable tolerated with hostNetwork",
        ),
    ],
)
def test_node_should_run(spec: PodSpec, node_: Node, expected: tuple[bool, bool]) -> None:
    assert node_should_run(node_, template(spec), daemon_spec(spec)) == expected


def test_node_name_in_the_template() -> None:
    """TestNodeShouldRunDaemonPod/ErrPodNotMatchHostName."""
    t = template(PodSpec(), node_name="other")
    assert node_should_run(node("n1"), t, daemon_spec(PodSpec())) == (False, False)
    assert node_should_run(node("other"), t, daemon_spec(PodSpec())) == (True, True)


def test_replace_node_affinity() -> None:
    """TestReplaceDaemonSetPodNodeNameNodeAffinity: the required term becomes the one
    matchFields term for the node; preferred terms and other affinity stay."""
    preferred = PreferredSchedulingTerm(
        1, NodeSelectorTerm((NodeSelectorRequirement("zone", "In", ("a",)),))
    )
    required = NodeSelector((NodeSelectorTerm((NodeSelectorRequirement("type", "In", ("x",)),)),))
    spec = PodSpec(affinity=Affinity(NodeAffinity(required, (preferred,))))
    out = with_node_affinity(spec, "n7")
    assert out.affinity is not None and out.affinity.node_affinity is not None
    na = out.affinity.node_affinity
    assert na.preferred == (preferred,)
    assert na.required is not None
    (term,) = na.required.terms
    assert term.match_expressions == ()
    assert [(r.key, r.operator, r.values) for r in term.match_fields] == [
        ("metadata.name", "In", ("n7",))
    ]
    assert target_node(Pod("p", spec=out)) == "n7"


@pytest.mark.parametrize(
    ("pod_", "expected"),
    [
        pytest.param(make_pod("p").node("n1").obj(), "n1", id="TestGetTargetNodeName/scheduled"),
        pytest.param(
            Pod("p", spec=with_node_affinity(PodSpec(), "n2")),
            "n2",
            id="TestGetTargetNodeName/matchFields",
        ),
        pytest.param(make_pod("p").obj(), None, id="TestGetTargetNodeName/no affinity"),
    ],
)
def test_target_node(pod_: Pod, expected: str | None) -> None:
    assert target_node(pod_) == expected


# --------------------------------------------------------------------------- the controller


def test_simple_daemon_set_launches_pods() -> None:
    """TestSimpleDaemonSetLaunchesPods: one pod per node, ``agent-<5 characters>``, left
    to the scheduler with matchFields on its node and the default tolerations."""
    rig = Rig()
    rig.nodes("n1", "n2", "n3")
    rig.create(workload(ds()))
    pods = [rig.pod(n) for n in rig.names()]
    assert len(pods) == 3
    assert all(re.fullmatch(f"agent-[{ALPHANUMS}]{{5}}", p.name) for p in pods)
    assert sorted(target_node(p) or "" for p in pods) == ["n1", "n2", "n3"]
    assert all(not p.node_name for p in pods)
    p = pods[0]
    assert [(t.key, t.effect) for t in p.spec.tolerations] == DEFAULT_TOLERATIONS
    assert p.labels["controller-revision-hash"]
    assert p.controller_ref() == OwnerReference("apps/v1", "DaemonSet", "agent", UID, True)


def test_selector_daemon_launches_pods() -> None:
    """TestSelectorDaemonLaunchesPods: only nodes its nodeSelector matches."""
    rig = Rig()
    rig.node(node("n1", type="gpu"))
    rig.node(node("n2", type="cpu"))
    rig.create(workload(ds("\n      nodeSelector: {type: gpu}")))
    assert [target_node(rig.pod(n)) for n in rig.names()] == ["n1"]


@pytest.mark.parametrize(
    ("taint", "launches"),
    [
        pytest.param(
            ("dedicated", NO_SCHEDULE), False, id="TestTaintedNodeDaemonDoesNotLaunchIntolerantPod"
        ),
        pytest.param(
            ("node.kubernetes.io/not-ready", NO_EXECUTE),
            True,
            id="TestNotReadyNodeDaemonDoesLaunchPod",
        ),
        pytest.param(
            ("node.kubernetes.io/unreachable", NO_EXECUTE),
            True,
            id="TestUnreachableTaintedNodeDaemonLaunchesPod",
        ),
        pytest.param(
            ("node.kubernetes.io/disk-pressure", NO_SCHEDULE),
            True,
            id="TestTaintPressureNodeDaemonLaunchesPod",
        ),
    ],
)
def test_tainted_nodes(taint: tuple[str, str], launches: bool) -> None:
    rig = Rig()
    rig.node(tainted(*taint))
    rig.create(workload(ds()))
    assert len(rig.names()) == (1 if launches else 0)


def test_add_node() -> None:
    """TestAddNode: a node added later gets its pod."""
    rig = Rig()
    rig.nodes("n1")
    rig.create(workload(ds()))
    rig.nodes("n2")
    assert sorted(target_node(rig.pod(n)) or "" for n in rig.names()) == ["n1", "n2"]


def test_delete_unscheduled_pod_for_not_existing_node() -> None:
    """TestDeleteUnscheduledPodForNotExistingNode: the node of a pending daemon pod goes;
    the controller deletes the pod (nothing else would)."""
    rig = Rig()
    rig.nodes("n1", "n2")
    rig.create(workload(ds()))
    rig.cluster.delete_node("n2")
    rig.settle()
    assert [target_node(rig.pod(n)) for n in rig.names()] == ["n1"]


def daemon_pod(name: str, node_name: str, created: int = 0) -> Pod:
    b = make_pod(name).uid(f"uid-{name}").labels(app="agent").node(node_name).created(created)
    b._owners = (OwnerReference("apps/v1", "DaemonSet", "agent", UID, True),)
    return b.obj()


def test_deals_with_existing_pods() -> None:
    """TestDealsWithExistingPods: dumped pods are kept; of two running on one node all but
    the first by podByCreationTimestampAndPhase (scheduled, oldest, then by name: both
    are created at the run's start here) are deleted; nodes without one get one."""
    rig = Rig()
    rig.nodes("n1", "n2", "n3")
    rig.cluster.create_pod(daemon_pod("agent-second", "n1"))
    rig.cluster.create_pod(daemon_pod("agent-first", "n1"))
    rig.cluster.create_pod(daemon_pod("agent-two", "n2"))
    rig.create(workload(ds()))
    assert rig.terminating() == ["agent-second"]
    targets = sorted(target_node(rig.pod(n)) or "" for n in rig.active())
    assert targets == ["n1", "n2", "n3"]
    assert {"agent-first", "agent-two"} <= set(rig.active())


def test_daemon_set_respects_termination() -> None:
    """TestDaemonSetRespectsTermination: a terminating pod (a preemption victim, say)
    still occupies its node: no new pod until it is gone (30 s grace)."""
    rig = Rig()
    rig.nodes("n1")
    rig.cluster.create_pod(daemon_pod("agent-a", "n1"))
    rig.create(workload(ds()))
    rig.delete("agent-a")
    assert rig.names() == ["agent-a"]
    rig.advance(30)
    (new,) = rig.names()
    assert new != "agent-a"
    assert target_node(rig.pod(new)) == "n1"


@pytest.mark.parametrize(
    ("phase", "reason", "type_"),
    [
        pytest.param("Failed", "FailedDaemonPod", "Warning", id="TestDaemonKillFailedPods"),
        pytest.param("Succeeded", "SucceededDaemonPod", "Normal", id="succeeded daemon pod"),
    ],
)
def test_finished_pods_are_deleted_and_replaced(phase: str, reason: str, type_: str) -> None:
    rig = Rig()
    rig.nodes("n1")
    rig.cluster.create_pod(daemon_pod("agent-a", "n1"))
    rig.create(workload(ds()))
    rig.set_phase("agent-a", phase)
    (event,) = rig.events("DaemonSet")
    assert (event.type, event.reason) == (type_, reason)
    verb = "kill it" if phase == "Failed" else "delete it"
    assert (
        event.message
        == f"Found {phase.lower()} daemon pod default/agent-a on node n1, will try to {verb}"
    )
    (new,) = rig.names()
    assert new != "agent-a"
