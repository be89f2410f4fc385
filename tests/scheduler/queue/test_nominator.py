"""The nominator and its queue-facing API (upstream nominator.go and the
nominator cases of scheduling_queue_test.go)."""

from __future__ import annotations

import pytest

from kubesched.api.types import Pod
from kubesched.framework.results import NominatingInfo, NominatingMode
from kubesched.framework.types import PodInfo
from kubesched.scheduler.queue import SchedulingQueue
from kubesched.scheduler.queue.nominator import Nominator, PodRef
from tests.builders import build_table, make_node, make_pod
from tests.scheduler.queue.helpers import clone, make_queue

MED = make_pod("mpp", "ns2").uid("mppns2").priority(500).nominated("node1").obj()
UNSCHED = make_pod("up", "ns1").uid("upns1").priority(0).nominated("node1").obj()
HIGH = make_pod("hpp", "ns1").uid("hppns1").priority(1000).obj()
HIGH_NOMINATED = clone(HIGH, nominated_node_name="node1")
NON_EXISTENT = make_pod("ne", "ns1").uid("nens1").obj()
SCHEDULED = make_pod("sp", "ns1").uid("spns1").node("foo").obj()


def _ref(pod: Pod) -> PodRef:
    return PodRef(pod.name, pod.namespace, pod.uid)


def _override(node: str) -> NominatingInfo:
    return NominatingInfo(node, NominatingMode.OVERRIDE)


def _lister(*pods: Pod) -> object:
    by_key = {p.key: p for p in pods}
    return lambda ns, name: by_key.get(f"{ns}/{name}")


def test_add_registers_pods_with_nominated_node_name() -> None:
    """TestPriorityQueue_Add (nominator part)."""
    q, _ = make_queue()
    for p in (MED, UNSCHED, HIGH):
        q.add(p)
    assert q.nominator.nominated_pod_to_node == {MED.uid: "node1", UNSCHED.uid: "node1"}
    assert q.nominator.nominated_pods == {"node1": [_ref(MED), _ref(UNSCHED)]}
    for _ in range(3):
        q.pop()
    assert len(q.nominator.nominated_pods["node1"]) == 2


def test_update_nominated_pod_for_node() -> None:
    """TestPriorityQueue_UpdateNominatedPodForNode."""
    bound = clone(SCHEDULED)
    q, _ = make_queue(pod_lister=_lister(MED, UNSCHED, HIGH, bound))
    q.add(MED)
    q.add_nominated_pod(PodInfo(UNSCHED), _override("node5"))
    q.add_nominated_pod(PodInfo(HIGH), _override("node2"))
    want_nodes = {MED.uid: "node1", HIGH.uid: "node2", UNSCHED.uid: "node5"}
    want_pods = {"node1": [_ref(MED)], "node2": [_ref(HIGH)], "node5": [_ref(UNSCHED)]}
    assert (q.nominator.nominated_pod_to_node, q.nominator.nominated_pods) == (
        want_nodes,
        want_pods,
    )
    q.pop()
    assert q.nominator.nominated_pods == want_pods
    q.add_nominated_pod(PodInfo(HIGH), _override("node4"))
    want_nodes[HIGH.uid] = "node4"
    want_pods = {"node1": [_ref(MED)], "node4": [_ref(HIGH)], "node5": [_ref(UNSCHED)]}
    assert (q.nominator.nominated_pod_to_node, q.nominator.nominated_pods) == (
        want_nodes,
        want_pods,
    )
    # A pod deleted from the informer cache is not nominated.
    q.add_nominated_pod(PodInfo(NON_EXISTENT), _override("node1"))
    # Nor is a pod the informer already shows bound, whatever the caller holds.
    q.add_nominated_pod(PodInfo(clone(SCHEDULED, node_name="")), _override("node1"))
    assert (q.nominator.nominated_pod_to_node, q.nominator.nominated_pods) == (
        want_nodes,
        want_pods,
    )
    q.delete_nominated_pod_if_exists(HIGH)
    del want_nodes[HIGH.uid]
    assert q.nominator.nominated_pod_to_node == want_nodes
    assert q.nominator.nominated_pods == {"node1": [_ref(MED)], "node5": [_ref(UNSCHED)]}


@pytest.mark.parametrize(
    ("pod", "deleted", "want"),
    [
        pytest.param(
            MED, False, 1, id="TestPriorityQueue_NominatedPodDeleted/alive pod gets added"
        ),
        pytest.param(
            HIGH_NOMINATED,
            True,
            0,
            id="TestPriorityQueue_NominatedPodDeleted/deleted pod isn't added",
        ),
        pytest.param(
            HIGH, False, 0, id="TestPriorityQueue_NominatedPodDeleted/pod without nominatedNodeName"
        ),
    ],
)
def test_nominated_pod_deleted(pod: Pod, deleted: bool, want: int) -> None:
    n = Nominator(_lister() if deleted else _lister(pod))  # type: ignore[arg-type]
    n.add_nominated_pod(PodInfo(pod), None)
    assert len(n.nominated_pods.get(pod.nominated_node_name, ())) == want


def test_nominated_pods_for_node_resolves_queued_pod_infos() -> None:
    """TestPriorityQueue_NominatedPodsForNode."""
    q, _ = make_queue()
    for p in (MED, UNSCHED, HIGH):
        q.add(p)
    popped = q.pop()
    assert popped is not None and popped.pod is HIGH
    got = q.nominated_pods_for_node("node1")
    assert [pi.pod for pi in got] == [MED, UNSCHED]
    assert q.nominated_pods_for_node("node2") == []


def test_in_flight_nominated_pod_is_a_bare_pod() -> None:
    """A nominated pod found in no queue (e.g. in flight) becomes name/namespace/uid only."""
    q, _ = make_queue()
    q.add(MED)
    q.pop()
    (bare,) = q.nominated_pods_for_node("node1")
    assert (bare.pod.name, bare.pod.namespace, bare.pod.uid) == ("mpp", "ns2", "mppns2")
    assert bare.pod.priority == 0 and bare.pod is not MED


def test_the_bare_pod_lasts_as_long_as_the_nomination() -> None:
    """The bare PodInfo of an in-flight nominated pod is built once while the
    nomination lasts, and afresh after the nomination was deleted and made again."""
    q, _ = make_queue()
    q.add(MED)
    q.pop()
    (first,) = q.nominated_pods_for_node("node1")
    assert q.nominated_pods_for_node("node1")[0] is first
    q.delete_nominated_pod_if_exists(MED)
    assert q.nominated_pods_for_node("node1") == []
    q.add_nominated_pod(PodInfo(MED), None)
    (again,) = q.nominated_pods_for_node("node1")
    assert again is not first and again.pod.uid == MED.uid


def test_the_load_index_follows_the_nominations() -> None:
    """The queue's nominator feeds its load index: a nomination's requests count
    on its node for an equal-priority pod until the nomination is deleted."""
    q, _ = make_queue()
    table = build_table([make_node("node1").capacity(cpu="4").obj()])
    asking = PodInfo(make_pod("asking").uid("asking").priority(500).obj())
    big = make_pod("big").uid("big").priority(500).req(cpu="3").nominated("node1").obj()
    q.add(big)
    index = q.nominator.load_index()
    rows, load = index.query(asking, table)
    assert rows.tolist() == [0] and load[0, table.res_index["cpu"]] == 3000
    q.delete(big)
    assert index.query(asking, table)[0].tolist() == []


def test_delete_removes_from_queue_and_nominator() -> None:
    """TestPriorityQueue_Delete."""
    q, _ = make_queue()
    q.update(HIGH, HIGH_NOMINATED)
    q.add(UNSCHED)
    q.delete(HIGH_NOMINATED)
    assert [p.pod.name for p in q.pods_in_active_q()] == ["up"]
    assert q.nominator.nominated_pods == {"node1": [_ref(UNSCHED)]}
    q.delete(UNSCHED)
    assert q.nominator.nominated_pods == {}


def _nominated(q: SchedulingQueue) -> dict[str, str]:
    return dict(q.nominator.nominated_pod_to_node)


def test_stale_update_keeps_in_memory_nomination() -> None:
    """R2.10: an update where neither version has nominatedNodeName keeps the in-memory node;
    an update that sets or clears it wins."""
    q, _ = make_queue()
    q.add(HIGH)
    q.add_nominated_pod(PodInfo(HIGH), _override("node1"))  # preemption, before the API write
    v2 = clone(HIGH, labels={"a": "b"})
    q.update(HIGH, v2)  # a stale event without nominatedNodeName
    assert _nominated(q) == {HIGH.uid: "node1"}
    v3 = clone(v2, nominated_node_name="node2")
    q.update(v2, v3)
    assert _nominated(q) == {HIGH.uid: "node2"}
    v4 = clone(v3, nominated_node_name="")
    q.update(v3, v4)
    assert _nominated(q) == {}


@pytest.mark.parametrize(
    ("info", "want"),
    [
        pytest.param(
            None, {MED.uid: "node1"}, id="nil info is NOOP: the pod's own nominatedNodeName"
        ),
        pytest.param(
            NominatingInfo("", NominatingMode.NOOP), {MED.uid: "node1"}, id="NOOP keeps the pod's"
        ),
        pytest.param(_override("node9"), {MED.uid: "node9"}, id="OVERRIDE sets the node"),
        pytest.param(_override(""), {}, id="OVERRIDE with an empty node clears"),
    ],
)
def test_add_nominated_pod_modes(info: NominatingInfo | None, want: dict[str, str]) -> None:
    n = Nominator()
    n.add_nominated_pod(PodInfo(MED), _override("node3"))
    n.add_nominated_pod(PodInfo(MED), info)
    assert n.nominated_pod_to_node == want
    assert sum(len(v) for v in n.nominated_pods.values()) == len(want)
    assert "" not in n.nominated_pods


def test_delete_preserves_order() -> None:
    n = Nominator()
    pods = [make_pod(f"p{i}").obj() for i in range(4)]
    for p in pods:
        n.add_nominated_pod(PodInfo(p), _override("n"))
    n.delete_nominated_pod_if_exists(pods[1])
    assert [r.name for r in n.nominated_pods["n"]] == ["p0", "p2", "p3"]
