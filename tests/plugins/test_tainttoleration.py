"""TaintToleration (upstream taint_toleration TestTaintTolerationScore,
TestTaintTolerationFilter, TestIsSchedulableAfterNodeChange) on both paths."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.types import Node, Taint, Toleration
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, EventResource, QueueingHint
from kubesched.framework.status import SUCCESS, Code, Status, unresolvable
from kubesched.framework.types import PodInfo
from kubesched.plugins.tainttoleration import (
    ERR_REASON_UNTOLERATED,
    TaintToleration,
    is_schedulable_after_node_change,
    is_schedulable_after_pod_toleration_change,
)
from tests.builders import build_table, make_pod
from tests.fakes import FakeHandle
from tests.hypothesis_profiles import scaled
from tests.plugins.fakes import check_filter, check_score

NS, PNS, NE = "NoSchedule", "PreferNoSchedule", "NoExecute"
UNTOLERATED = unresolvable("node(s) had untolerated taint(s)")


def node(name: str, *taints: Taint) -> Node:
    return Node(name, taints=taints)


def pod(*tols: Toleration) -> PodInfo:
    b = make_pod("pod1")
    for t in tols:
        b = b.toleration(t.key, t.value, t.effect, t.operator)
    return b.info()


# --------------------------------------------------------------------------- Score

ARM = Taint("cpu-type", "arm64", PNS)
SSD = Taint("disk-type", "ssd", PNS)


@pytest.mark.parametrize(
    ("p", "nodes", "want"),
    [
        pytest.param(
            pod(Toleration("foo", "Equal", "bar", PNS)),
            [node("nodeA", Taint("foo", "bar", PNS)), node("nodeB", Taint("foo", "blah", PNS))],
            {"nodeA": 100, "nodeB": 0},
            id="TestTaintTolerationScore/node with taints tolerated by the pod, gets a higher "
            "score "
            "than those node with intolerable taints",
        ),
        pytest.param(
            pod(
                Toleration("cpu-type", "Equal", "arm64", PNS),
                Toleration("disk-type", "Equal", "ssd", PNS),
            ),
            [node("nodeA"), node("nodeB", ARM), node("nodeC", ARM, SSD)],
            {"nodeA": 100, "nodeB": 100, "nodeC": 100},
            id="TestTaintTolerationScore/the nodes that all of their taints are tolerated by the "
            "pod, "
            "get the same score, no matter how many tolerable taints a node has",
        ),
        pytest.param(
            pod(Toleration("foo", "Equal", "bar", PNS)),
            [node("nodeA"), node("nodeB", ARM), node("nodeC", ARM, SSD)],
            {"nodeA": 100, "nodeB": 50, "nodeC": 0},
            id="TestTaintTolerationScore/the more intolerable taints a node has, the lower score "
            "it gets.",
        ),
        pytest.param(
            pod(
                Toleration("cpu-type", "Equal", "arm64", NS),
                Toleration("disk-type", "Equal", "ssd", NS),
            ),
            [node("nodeA"), node("nodeB", Taint("cpu-type", "arm64", NS)), node("nodeC", ARM, SSD)],
            {"nodeA": 100, "nodeB": 100, "nodeC": 0},
            id="TestTaintTolerationScore/only taints and tolerations that have effect "
            "PreferNoSchedule "
            "are checked by taints-tolerations priority function",
        ),
        pytest.param(
            pod(),
            [node("nodeA"), node("nodeB", ARM)],
            {"nodeA": 100, "nodeB": 0},
            id="TestTaintTolerationScore/Default behaviour No taints and tolerations, lands on "
            "node with no taints",
        ),
        pytest.param(
            pod(Toleration("cpu-type", "Exists")),
            [
                node("nodeA", ARM),
                node("nodeB", ARM, SSD),
                node("nodeC", SSD, Taint("x", "", PNS), Taint("y", "", PNS)),
            ],
            {"nodeA": 100, "nodeB": 67, "nodeC": 0},
            id="toleration without effect counts for PreferNoSchedule; 100 - 100*1/3 truncates",
        ),
    ],
)
def test_score(p: PodInfo, nodes: list[Node], want: dict[str, int]) -> None:
    table = build_table(nodes)
    pre, got = check_score(TaintToleration(None, FakeHandle(table)), CycleState(), p, table)
    assert pre == SUCCESS
    assert got == want


def test_score_subset_normalises_over_the_given_nodes_only() -> None:
    table = build_table([node("a"), node("b", ARM), node("c", ARM, SSD)])
    _, got = check_score(
        TaintToleration(None, FakeHandle(table)), CycleState(), pod(), table, names=["a", "b"]
    )
    assert got == {"a": 100, "b": 0}


def test_score_without_pre_score_is_an_error() -> None:
    table = build_table([node("a")])
    pl = TaintToleration(None, FakeHandle(table))
    _, status = pl.score(CycleState(), pod(), table.infos[0])  # type: ignore[arg-type]
    assert status.code == Code.ERROR
    assert status.message() == 'failed to read "PreScoreTaintToleration" from cycleState: not found'


# --------------------------------------------------------------------------- Filter


@pytest.mark.parametrize(
    ("p", "taints", "want"),
    [
        pytest.param(
            pod(),
            (Taint("dedicated", "user1", NS),),
            UNTOLERATED,
            id="TestTaintTolerationFilter/A pod having no tolerations can't be scheduled onto a "
            "node with nonempty taints",
        ),
        pytest.param(
            pod(Toleration("dedicated", "", "user1", NS)),
            (Taint("dedicated", "user1", NS),),
            SUCCESS,
            id="TestTaintTolerationFilter/A pod which can be scheduled on a dedicated node "
            "assigned to user1 with effect NoSchedule",
        ),
        pytest.param(
            pod(Toleration("dedicated", "Equal", "user2", NS)),
            (Taint("dedicated", "user1", NS),),
            UNTOLERATED,
            id="TestTaintTolerationFilter/A pod which can't be scheduled on a dedicated node "
            "assigned to user2 with effect NoSchedule",
        ),
        pytest.param(
            pod(Toleration("foo", "Exists", effect=NS)),
            (Taint("foo", "bar", NS),),
            SUCCESS,
            id="TestTaintTolerationFilter/A pod can be scheduled onto the node, with a toleration "
            "uses operator Exists "
            "that tolerates the taints on the node",
        ),
        pytest.param(
            pod(
                Toleration("dedicated", "Equal", "user2", NS),
                Toleration("foo", "Exists", effect=NS),
            ),
            (Taint("dedicated", "user2", NS), Taint("foo", "bar", NS)),
            SUCCESS,
            id="TestTaintTolerationFilter/A pod has multiple tolerations, node has multiple "
            "taints, all the taints "
            "are tolerated, pod can be scheduled onto the node",
        ),
        pytest.param(
            pod(Toleration("foo", "Equal", "bar", PNS)),
            (Taint("foo", "bar", NS),),
            UNTOLERATED,
            id="TestTaintTolerationFilter/A pod has a toleration that keys and values match the "
            "taint on the node, "
            "but (non-empty) effect doesn't match, can't be scheduled onto the node",
        ),
        pytest.param(
            pod(Toleration("foo", "Equal", "bar")),
            (Taint("foo", "bar", NS),),
            SUCCESS,
            id="TestTaintTolerationFilter/The pod has a toleration that keys and values match the "
            "taint on the node, "
            "the effect of toleration is empty, and the effect of taint is NoSchedule. Pod can be "
            "scheduled onto the node",
        ),
        pytest.param(
            pod(Toleration("dedicated", "Equal", "user2", NS)),
            (Taint("dedicated", "user1", PNS),),
            SUCCESS,
            id="TestTaintTolerationFilter/The pod has a toleration that key and value don't match "
            "the taint on the node, "
            "but the effect of taint on node is PreferNoSchedule. Pod can be scheduled onto the "
            "node",
        ),
        pytest.param(
            pod(),
            (Taint("dedicated", "user1", PNS),),
            SUCCESS,
            id="TestTaintTolerationFilter/The pod has no toleration, but the effect of taint on "
            "node is "
            "PreferNoSchedule. Pod can be scheduled onto the node",
        ),
        pytest.param(
            pod(Toleration("a", "Exists")),
            (Taint("a", "", NS), Taint("b", "", NE)),
            UNTOLERATED,
            id="an untolerated NoExecute taint rejects too",
        ),
    ],
)
def test_filter(p: PodInfo, taints: tuple[Taint, ...], want: Status) -> None:
    table = build_table([node("nodeA", *taints), node("clean")])
    got = check_filter(TaintToleration(None, FakeHandle(table)), CycleState(), p, table)
    assert got == {"nodeA": want, "clean": SUCCESS}
    assert got["nodeA"].code == want.code


def test_filter_vector_shares_taint_sets_and_cache() -> None:
    """Many nodes with a few distinct taint sets; the cached answer follows node updates."""
    nodes = [node(f"n{i}", *([Taint("gpu", "", NS)] if i % 3 == 0 else [])) for i in range(30)]
    table = build_table(nodes)
    pl = TaintToleration(None, FakeHandle(table))
    p = pod()
    got = check_filter(pl, CycleState(), p, table)
    assert [n for n, s in got.items() if not s.is_success()] == [f"n{i}" for i in range(0, 30, 3)]
    # Same spec again: served from the cache, still equal to the exact path.
    check_filter(pl, CycleState(), PodInfo(p.pod), table)
    # A node update bumps the generation: the cached vector must not be reused.
    info = table.infos[table.row_of["n1"]]
    assert info is not None
    info.set_node(node("n1", Taint("gpu", "", NS)))
    table.update_node(info)
    got = check_filter(pl, CycleState(), p, table)
    assert not got["n1"].is_success()
    assert ERR_REASON_UNTOLERATED == "node(s) had untolerated taint(s)"


# --------------------------------------------------------------------------- hints


def test_node_change_hint() -> None:
    """TestIsSchedulableAfterNodeChange cases."""
    p = make_pod("pod1").toleration("dedicated", "user2", NS).obj()
    user1 = node("nodeA", Taint("dedicated", "user1", NS))
    user2 = node("nodeA", Taint("dedicated", "user2", NS))
    both = node("nodeA", Taint("dedicated", "user1", NS), Taint("dedicated", "user3", NS))
    hint = is_schedulable_after_node_change
    assert hint(p, None, "not-a-node") == QueueingHint.QUEUE  # type: ignore[arg-type]
    assert hint(p, None, user1) == QueueingHint.SKIP  # skip-queue-on-untoleratedtaint-node-added
    assert hint(p, None, user2) == QueueingHint.QUEUE  # queue-on-toleratedtaint-node-added
    assert hint(p, user1, both) == QueueingHint.SKIP  # skip-unrelated-change
    assert hint(p, user1, user2) == QueueingHint.QUEUE  # queue-on-taint-change


def test_pod_toleration_hint_and_events() -> None:
    p = make_pod("p").uid("u1").obj()
    other = make_pod("q").uid("u2").obj()
    assert is_schedulable_after_pod_toleration_change(p, p, p) == QueueingHint.QUEUE
    assert is_schedulable_after_pod_toleration_change(p, other, other) == QueueingHint.SKIP
    events = TaintToleration(None, FakeHandle()).events_to_register()
    assert [(e.event.resource, e.event.action_type) for e in events] == [
        (EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
        (EventResource.POD, ActionType.UPDATE_POD_TOLERATION),
    ]


# --------------------------------------------------------------------------- property

taints = st.builds(
    Taint,
    st.sampled_from(["a", "b", "c"]),
    st.sampled_from(["", "1", "x"]),
    st.sampled_from([NS, PNS, NE]),
)
tolerations = st.builds(
    Toleration,
    st.sampled_from(["", "a", "b"]),
    st.sampled_from(["Equal", "Exists", "", "Gt"]),
    st.sampled_from(["", "1", "x"]),
    st.sampled_from(["", NS, PNS, NE]),
)


@settings(max_examples=scaled(150), deadline=None)
@given(
    st.lists(st.lists(taints, max_size=3), min_size=1, max_size=6),
    st.lists(tolerations, max_size=3),
    st.integers(min_value=0, max_value=5),
    st.lists(taints, max_size=2),
)
def test_vector_paths_agree_with_exact(
    node_taints: list[list[Taint]], tols: list[Toleration], subset: int, retaint: list[Taint]
) -> None:
    """The derived Filter and Score equal the per-node ones, also after a node's
    taints change (the kept answers must follow)."""
    table = build_table([node(f"n{i}", *ts) for i, ts in enumerate(node_taints)])
    pl = TaintToleration(None, FakeHandle(table))
    p = pod(*tols)
    names = [f"n{i}" for i in range(len(node_taints)) if i != subset]
    for _ in range(2):
        check_filter(pl, CycleState(), p, table)
        check_score(pl, CycleState(), p, table, names=names)
        check_score(pl, CycleState(), p, table)
        info = table.infos[table.row_of["n0"]]
        assert info is not None
        info.set_node(node("n0", *retaint))
        table.update_node(info)
