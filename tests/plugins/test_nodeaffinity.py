"""NodeAffinity (upstream node_affinity TestNodeAffinity, TestNodeAffinityPriority,
Test_isSchedulableAfterNodeChange) on the exact and vector paths."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.types import (
    Affinity,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PodSpec,
    PreferredSchedulingTerm,
)
from kubesched.framework.config import NodeAffinityArgs
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.derive import Derived
from kubesched.framework.events import ActionType, EventResource, QueueingHint
from kubesched.framework.interfaces import NodeSet
from kubesched.framework.results import PreFilterResult
from kubesched.framework.status import SKIP, SUCCESS, Code, Status, unresolvable
from kubesched.framework.types import PodInfo
from kubesched.plugins.nodeaffinity import NodeAffinity as NodeAffinityPlugin
from tests.builders import build_table, make_node
from tests.fakes import FakeHandle
from tests.hypothesis_profiles import scaled
from tests.plugins.fakes import check_filter, check_score

R = NodeSelectorRequirement
POD = unresolvable("node(s) didn't match Pod's node affinity/selector")
ENFORCED = unresolvable("node(s) didn't match scheduler-enforced node affinity")
CONFLICT = unresolvable("pod affinity terms conflict")


def spec_pod(
    required: tuple[NodeSelectorTerm, ...] | None = None,
    node_selector: dict[str, str] | None = None,
    preferred: tuple[PreferredSchedulingTerm, ...] = (),
    affinity: bool = True,
) -> Pod:
    aff = None
    if affinity and (required is not None or preferred):
        aff = Affinity(
            node_affinity=NodeAffinity(
                required=NodeSelector(required) if required is not None else None,
                preferred=preferred,
            )
        )
    return Pod("p", spec=PodSpec(node_selector=node_selector or {}, affinity=aff))


def term(
    *exprs: NodeSelectorRequirement, fields: tuple[NodeSelectorRequirement, ...] = ()
) -> NodeSelectorTerm:
    return NodeSelectorTerm(exprs, fields)


def name_in(*names: str) -> NodeSelectorRequirement:
    return R("metadata.name", "In", names)


def added(
    required: tuple[NodeSelectorTerm, ...] | None = None,
    preferred: tuple[PreferredSchedulingTerm, ...] = (),
) -> NodeAffinityArgs:
    return NodeAffinityArgs(
        NodeAffinity(
            required=NodeSelector(required) if required is not None else None, preferred=preferred
        )
    )


@dataclass
class Case:
    pod: Pod
    labels: dict[str, str] = field(default_factory=dict)
    node_name: str = "node1"
    want: Status = SUCCESS
    want_pre: Status = SUCCESS
    want_result: PreFilterResult | None = None
    args: NodeAffinityArgs | None = None
    run_pre_filter: bool = True


CASES = [
    pytest.param(
        Case(spec_pod(node_selector={"foo": "bar"}), want=POD), id="TestNodeAffinity/missing labels"
    ),
    pytest.param(
        Case(spec_pod(node_selector={"foo": "bar"}), {"foo": "bar"}),
        id="TestNodeAffinity/same labels",
    ),
    pytest.param(
        Case(spec_pod(node_selector={"foo": "bar"}), {"foo": "bar", "baz": "blah"}),
        id="TestNodeAffinity/node labels are superset",
    ),
    pytest.param(
        Case(spec_pod(node_selector={"foo": "bar", "baz": "blah"}), {"foo": "bar"}, want=POD),
        id="TestNodeAffinity/node labels are subset",
    ),
    pytest.param(
        Case(spec_pod((term(R("foo", "In", ("bar", "value2"))),)), {"foo": "bar"}),
        id="TestNodeAffinity/Pod with matchExpressions using In operator that matches the "
        "existing node",
    ),
    pytest.param(
        Case(spec_pod((term(R("kernel-version", "Gt", ("0204",))),)), {"kernel-version": "0206"}),
        id="TestNodeAffinity/Pod with matchExpressions using Gt operator that matches the "
        "existing node",
    ),
    pytest.param(
        Case(spec_pod((term(R("mem-type", "NotIn", ("DDR", "DDR2"))),)), {"mem-type": "DDR3"}),
        id="TestNodeAffinity/Pod with matchExpressions using NotIn operator that matches the "
        "existing node",
    ),
    pytest.param(
        Case(spec_pod((term(R("GPU", "Exists")),)), {"GPU": "NVIDIA-GRID-K1"}),
        id="TestNodeAffinity/Pod with matchExpressions using Exists operator that matches the "
        "existing node",
    ),
    pytest.param(
        Case(spec_pod((term(R("foo", "In", ("value1", "value2"))),)), {"foo": "bar"}, want=POD),
        id="TestNodeAffinity/Pod with affinity that don't match node's labels won't schedule onto "
        "the node",
    ),
    pytest.param(
        Case(spec_pod((term(),)), {"foo": "bar"}, want=POD),
        id="TestNodeAffinity/Pod with empty MatchExpressions is not a valid value will match no "
        "objects "
        "and won't schedule onto the node",
    ),
    pytest.param(
        Case(spec_pod(), {"foo": "bar"}, want_pre=SKIP),
        id="TestNodeAffinity/Pod with no Affinity will schedule onto a node",
    ),
    pytest.param(
        Case(
            Pod("p", spec=PodSpec(affinity=Affinity(node_affinity=NodeAffinity()))),
            {"foo": "bar"},
            want_pre=SKIP,
        ),
        id="TestNodeAffinity/Pod with Affinity but nil NodeSelector will schedule onto a node",
    ),
    pytest.param(
        Case(
            spec_pod((term(R("GPU", "Exists"), R("GPU", "NotIn", ("AMD", "INTER"))),)),
            {"GPU": "NVIDIA-GRID-K1"},
        ),
        id="TestNodeAffinity/Pod with multiple matchExpressions ANDed that matches the existing "
        "node",
    ),
    pytest.param(
        Case(
            spec_pod((term(R("GPU", "Exists"), R("GPU", "In", ("AMD", "INTER"))),)),
            {"GPU": "NVIDIA-GRID-K1"},
            want=POD,
        ),
        id="TestNodeAffinity/Pod with multiple matchExpressions ANDed that doesn't match the "
        "existing node",
    ),
    pytest.param(
        Case(
            spec_pod(
                (
                    term(R("foo", "In", ("bar", "value2"))),
                    term(R("diffkey", "In", ("wrong", "value2"))),
                )
            ),
            {"foo": "bar"},
        ),
        id="TestNodeAffinity/Pod with multiple NodeSelectorTerms ORed in affinity, matches the "
        "node's labels "
        "and will schedule onto the node",
    ),
    pytest.param(
        Case(spec_pod((term(R("foo", "Exists")),), node_selector={"foo": "bar"}), {"foo": "bar"}),
        id="TestNodeAffinity/Pod with an Affinity and a PodSpec.NodeSelector(the old thing that "
        "we are "
        "deprecating) both are satisfied, will schedule onto the node",
    ),
    pytest.param(
        Case(
            spec_pod((term(R("foo", "Exists")),), node_selector={"foo": "bar"}),
            {"foo": "barrrrrr"},
            want=POD,
        ),
        id="TestNodeAffinity/Pod with an Affinity matches node's labels but the "
        "PodSpec.NodeSelector(the old "
        "thing that we are deprecating) is not satisfied, won't schedule onto the node",
    ),
    pytest.param(
        Case(
            spec_pod((term(R("foo", "NotIn", ("invalid value: ___@#$%^",))),)),
            {"foo": "bar"},
            want=POD,
        ),
        id="TestNodeAffinity/Pod with an invalid value in Affinity term won't be scheduled onto "
        "the node",
    ),
    pytest.param(
        Case(
            spec_pod((term(fields=(name_in("node1"),)),)),
            want_result=PreFilterResult(frozenset({"node1"})),
        ),
        id="TestNodeAffinity/Pod with matchFields using In operator that matches the existing node",
    ),
    pytest.param(
        Case(
            spec_pod((term(fields=(name_in("node1"),)),)),
            node_name="node2",
            want=POD,
            want_result=PreFilterResult(frozenset({"node1"})),
        ),
        id="TestNodeAffinity/Pod with matchFields using In operator that does not match the "
        "existing node",
    ),
    pytest.param(
        Case(
            spec_pod(
                (term(fields=(name_in("node1"), name_in("node2"))), term(R("foo", "In", ("bar",))))
            ),
            {"foo": "bar"},
            node_name="node2",
        ),
        id="TestNodeAffinity/Pod with two terms: matchFields does not match, but matchExpressions "
        "matches",
    ),
    pytest.param(
        Case(
            spec_pod((term(R("foo", "In", ("bar",)), fields=(name_in("node1"),)),)),
            {"foo": "bar"},
            node_name="node2",
            want=POD,
            want_result=PreFilterResult(frozenset({"node1"})),
        ),
        id="TestNodeAffinity/Pod with one term: matchFields does not match, but matchExpressions "
        "matches",
    ),
    pytest.param(
        Case(
            spec_pod((term(R("foo", "In", ("bar",)), fields=(name_in("node1"),)),)),
            {"foo": "bar"},
            want_result=PreFilterResult(frozenset({"node1"})),
        ),
        id="TestNodeAffinity/Pod with one term: both matchFields and matchExpressions match",
    ),
    pytest.param(
        Case(
            spec_pod(
                (term(fields=(name_in("node1"),)), term(R("foo", "In", ("not-match-to-bar",))))
            ),
            {"foo": "bar"},
            node_name="node2",
            want=POD,
        ),
        id="TestNodeAffinity/Pod with two terms: both matchFields and matchExpressions do not "
        "match",
    ),
    pytest.param(
        Case(
            spec_pod((term(fields=(name_in("node1"),)), term(fields=(name_in("node2"),)))),
            node_name="node2",
            want_result=PreFilterResult(frozenset({"node1", "node2"})),
        ),
        id="TestNodeAffinity/Pod with two terms of node.Name affinity",
    ),
    pytest.param(
        Case(
            spec_pod((term(fields=(name_in("node1"), name_in("node2"))),)),
            {"foo": "bar"},
            node_name="node2",
            want=POD,
            want_pre=CONFLICT,
        ),
        id="TestNodeAffinity/Pod with two conflicting mach field requirements",
    ),
    pytest.param(
        Case(
            spec_pod((term(R("zone", "In", ("foo",))),)),
            {"zone": "foo"},
            node_name="node2",
            args=added((term(fields=(name_in("node2"),)),)),
        ),
        id="TestNodeAffinity/Matches added affinity and Pod's node affinity",
    ),
    pytest.param(
        Case(
            spec_pod((term(R("zone", "In", ("bar",))),)),
            {"zone": "foo"},
            node_name="node2",
            want=POD,
            args=added((term(fields=(name_in("node2"),)),)),
        ),
        id="TestNodeAffinity/Matches added affinity but not Pod's node affinity",
    ),
    pytest.param(
        Case(
            spec_pod(),
            {"zone": "foo"},
            node_name="node2",
            want=ENFORCED,
            args=added((term(R("zone", "In", ("bar",))),)),
        ),
        id="TestNodeAffinity/Doesn't match added affinity",
    ),
    pytest.param(
        Case(
            spec_pod(node_selector={"foo": "bar"}),
            {"foo": "bar", "baz": "blah"},
            run_pre_filter=False,
        ),
        id="TestNodeAffinity/Matches node selector correctly even if PreFilter is not called",
    ),
    pytest.param(
        Case(
            spec_pod((term(R("GPU", "Exists"), R("GPU", "NotIn", ("AMD", "INTER"))),)),
            {"GPU": "NVIDIA-GRID-K1"},
            run_pre_filter=False,
        ),
        id="TestNodeAffinity/Matches node affinity correctly even if PreFilter is not called",
    ),
    pytest.param(
        Case(
            spec_pod((term(R("zone", "In", ("bar",))),)),
            {"zone": "foo"},
            want=ENFORCED,
            args=added((term(R("zone", "In", ("bar",))),)),
        ),
        id="the enforced reason wins when both the added and the pod affinity fail",
    ),
    pytest.param(
        Case(spec_pod((term(R("foo", "Gt", ("5",))),)), {"foo": "+7"}),
        id="Gt parses a label value with a plus sign as strconv.ParseInt does",
    ),
    pytest.param(
        Case(spec_pod((term(R("foo", "Lt", ("5",))),)), {"foo": "x4"}, want=POD),
        id="Lt does not match a label value that is not an integer",
    ),
    pytest.param(
        Case(
            spec_pod((term(fields=(R("metadata.name", "In", ("node1", "node2")),)),)),
            want=POD,
            want_result=PreFilterResult(frozenset({"node1", "node2"})),
        ),
        id="a matchFields In with two values narrows in PreFilter but fails to parse in Filter",
    ),
]


@pytest.mark.parametrize("case", CASES)
def test_node_affinity(case: Case) -> None:
    node = make_node(case.node_name).no_hostname_label().labels(case.labels).obj()
    others = [
        make_node(f"other{i}").label("foo", "bar").label("zone", v).obj()
        for i, v in enumerate("abc")
    ]
    table = build_table([node, *others])
    pl = NodeAffinityPlugin(case.args, FakeHandle(table))
    state = CycleState()
    pod = _info(case.pod)
    if case.run_pre_filter:
        result, status = pl.pre_filter(state, pod, table)
        assert status == case.want_pre
        assert status.code == case.want_pre.code
        assert result == case.want_result
    got = check_filter(pl, state, pod, table)
    assert got[case.node_name] == case.want
    assert got[case.node_name].code == case.want.code


def _info(pod: Pod) -> PodInfo:
    return PodInfo(pod)


# --------------------------------------------------------------------------- Score

LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}

AFFINITY1 = (PreferredSchedulingTerm(2, term(R("foo", "In", ("bar",)))),)
AFFINITY2 = (
    PreferredSchedulingTerm(2, term(R("foo", "In", ("bar",)))),
    PreferredSchedulingTerm(4, term(R("key", "In", ("value",)))),
    PreferredSchedulingTerm(
        5, term(R("foo", "In", ("bar",)), R("key", "In", ("value",)), R("az", "In", ("az1",)))
    ),
)


def labelled(*nodes: tuple[str, dict[str, str]]) -> list[Node]:
    return [make_node(n).no_hostname_label().labels(lbl).obj() for n, lbl in nodes]


@pytest.mark.parametrize(
    ("pod", "nodes", "args", "want_pre", "want"),
    [
        pytest.param(
            spec_pod(),
            labelled(("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)),
            None,
            SKIP,
            {},
            id="TestNodeAffinityPriority/Skip is returned in PreScore when NodeAffinity is nil",
        ),
        pytest.param(
            spec_pod(preferred=AFFINITY1),
            labelled(("node1", LABEL4), ("node2", LABEL2), ("node3", LABEL3)),
            None,
            SUCCESS,
            {"node1": 0, "node2": 0, "node3": 0},
            id="TestNodeAffinityPriority/no node matches preferred scheduling requirements in "
            "NodeAffinity of pod "
            "so all nodes' priority is zero",
        ),
        pytest.param(
            spec_pod(preferred=AFFINITY1),
            labelled(("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)),
            None,
            SUCCESS,
            {"node1": 100, "node2": 0, "node3": 0},
            id="TestNodeAffinityPriority/only node1 matches the preferred scheduling requirements "
            "of pod",
        ),
        pytest.param(
            spec_pod(preferred=AFFINITY2),
            labelled(("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)),
            None,
            SUCCESS,
            {"node1": 18, "node5": 100, "node2": 36},
            id="TestNodeAffinityPriority/all nodes matches the preferred scheduling requirements "
            "of pod but with "
            "different priorities",
        ),
        pytest.param(
            spec_pod(),
            labelled(("node1", LABEL1), ("node2", LABEL2)),
            added(preferred=AFFINITY1),
            SUCCESS,
            {"node1": 100, "node2": 0},
            id="TestNodeAffinityPriority/added affinity",
        ),
        pytest.param(
            spec_pod(preferred=AFFINITY1),
            labelled(("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL5)),
            added(preferred=(PreferredSchedulingTerm(3, term(R("key", "In", ("value",)))),)),
            SUCCESS,
            {"node1": 40, "node2": 60, "node3": 100},
            id="TestNodeAffinityPriority/added affinity and pod has default affinity",
        ),
        pytest.param(
            spec_pod(preferred=(PreferredSchedulingTerm(0, term(R("foo", "In", ("bar",)))),)),
            labelled(("node1", LABEL1), ("node2", LABEL2)),
            None,
            SUCCESS,
            {"node1": 0, "node2": 0},
            id="a zero-weight term does not skip PreScore but scores nothing",
        ),
        pytest.param(
            spec_pod(
                preferred=(
                    PreferredSchedulingTerm(
                        7, term(fields=(R("metadata.name", "NotIn", ("node1",)),))
                    ),
                )
            ),
            labelled(("node1", LABEL1), ("node2", LABEL2)),
            None,
            SUCCESS,
            {"node1": 0, "node2": 100},
            id="a preferred term on metadata.name",
        ),
    ],
)
def test_priority(
    pod: Pod,
    nodes: list[Node],
    args: NodeAffinityArgs | None,
    want_pre: Status,
    want: dict[str, int],
) -> None:
    table = build_table(nodes)
    pl = NodeAffinityPlugin(args, FakeHandle(table))
    pre, got = check_score(pl, CycleState(), _info(pod), table)
    assert pre == want_pre
    assert pre.code == want_pre.code
    assert got == want


def test_priority_without_pre_score() -> None:
    """TestNodeAffinityPriority/calculate the priorities correctly even if PreScore is not
    called."""
    table = build_table(labelled(("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)))
    pl = NodeAffinityPlugin(None, FakeHandle(table))
    pod = _info(spec_pod(preferred=AFFINITY2))
    state = CycleState()
    infos = [table.infos[table.row_of[n]] for n in ("node1", "node5", "node2")]
    raw = [pl.score(state, pod, i)[0] for i in infos if i is not None]
    assert raw == [2, 11, 4]
    rows = np.array([table.row_of[n] for n in ("node1", "node5", "node2")], dtype=np.int64)
    v = Derived().scores(pl, state, pod, NodeSet(table, rows))
    assert v is not None
    assert v.tolist() == [18, 100, 36]


INVALID_KEY_MSG = (
    '[0].matchExpressions[0].key: Invalid value: "invalid key": name part must consist of '
    "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
    "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


def test_pre_score_error_on_broken_affinity() -> None:
    """TestNodeAffinityPriority/PreScore returns error when an incoming Pod has a broken
    affinity."""
    table = build_table(labelled(("node1", LABEL1)))
    pl = NodeAffinityPlugin(None, FakeHandle(table))
    pod = _info(
        spec_pod(preferred=(PreferredSchedulingTerm(2, term(R("invalid key", "In", ("bar",)))),))
    )
    pre, _ = check_score(pl, CycleState(), pod, table)
    assert pre.code == Code.ERROR
    assert pre.message() == INVALID_KEY_MSG
    # Without PreScore, Score reports the same error and the vector path defers to it.
    info = table.infos[0]
    assert info is not None
    _, status = pl.score(CycleState(), pod, info)
    assert status.code == Code.ERROR and status.message() == INVALID_KEY_MSG
    one = NodeSet(table, np.array([0], dtype=np.int64))
    assert Derived().scores(pl, CycleState(), pod, one) is None


def test_invalid_added_affinity_fails_construction() -> None:
    with pytest.raises(
        ValueError, match=r"parsing addedAffinity\.requiredDuringSchedulingIgnoredDuringExecution"
    ):
        NodeAffinityPlugin(added((term(R("foo", "Bogus", ("x",))),)), FakeHandle())
    with pytest.raises(
        ValueError, match=r"parsing addedAffinity\.preferredDuringSchedulingIgnoredDuringExecution"
    ):
        NodeAffinityPlugin(
            added(preferred=(PreferredSchedulingTerm(1, term(R("a b", "Exists"))),)), FakeHandle()
        )


# --------------------------------------------------------------------------- hints


def _node(**labels: str) -> Node:
    return make_node("n").no_hostname_label().labels(labels).obj()


ENFORCED_ARGS = added((term(R("foo", "In", ("bar",))),))


@pytest.mark.parametrize(
    ("args", "old", "new", "want"),
    [
        pytest.param(
            None,
            None,
            "not-a-node",
            QueueingHint.QUEUE,
            id="Test_isSchedulableAfterNodeChange/backoff-wrong-new-object",
        ),
        pytest.param(
            None,
            None,
            _node(),
            QueueingHint.SKIP,
            id="Test_isSchedulableAfterNodeChange/skip-queue-on-add",
        ),
        pytest.param(
            None,
            None,
            _node(foo="bar"),
            QueueingHint.QUEUE,
            id="Test_isSchedulableAfterNodeChange/queue-on-add",
        ),
        pytest.param(
            None,
            _node(),
            _node(),
            QueueingHint.SKIP,
            id="Test_isSchedulableAfterNodeChange/skip-unrelated-changes",
        ),
        pytest.param(
            None,
            _node(),
            _node(k="v"),
            QueueingHint.SKIP,
            id="Test_isSchedulableAfterNodeChange/skip-unrelated-changes-on-labels",
        ),
        pytest.param(
            None,
            _node(foo="bar"),
            _node(k="v"),
            QueueingHint.SKIP,
            id="Test_isSchedulableAfterNodeChange/skip-labels-changes-on-node-from-suitable-to-unsuitable",
        ),
        pytest.param(
            None,
            _node(),
            _node(foo="bar"),
            QueueingHint.QUEUE,
            id="Test_isSchedulableAfterNodeChange/queue-on-labels-change-makes-pod-schedulable",
        ),
        pytest.param(
            ENFORCED_ARGS,
            None,
            _node(),
            QueueingHint.SKIP,
            id="Test_isSchedulableAfterNodeChange/skip-queue-on-add-scheduler-enforced-node-affinity",
        ),
        pytest.param(
            ENFORCED_ARGS,
            None,
            _node(foo="bar"),
            QueueingHint.QUEUE,
            id="Test_isSchedulableAfterNodeChange/queue-on-add-scheduler-enforced-node-affinity",
        ),
        pytest.param(
            None,
            _node(foo="bar"),
            _node(foo="bar", k="v"),
            QueueingHint.SKIP,
            id="a node that already matched is skipped",
        ),
    ],
)
def test_node_change_hint(
    args: NodeAffinityArgs | None, old: object, new: object, want: QueueingHint
) -> None:
    pod = spec_pod((term(R("foo", "In", ("bar",))),))
    pl = NodeAffinityPlugin(args, FakeHandle())
    assert pl.is_schedulable_after_node_change(pod, old, new) == want  # type: ignore[arg-type]


def test_events() -> None:
    events = NodeAffinityPlugin(None, FakeHandle()).events_to_register()
    assert [(e.event.resource, e.event.action_type) for e in events] == [
        (EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)
    ]


# --------------------------------------------------------------------------- property

_values = st.sampled_from(["a", "b", "1", "-2", "x y", "n1"])
_keys = st.sampled_from(["zone", "gen", "kubernetes.io/hostname"])
_reqs = st.builds(
    R,
    _keys,
    st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]),
    st.lists(_values, max_size=2).map(tuple),
)
_terms = st.builds(
    NodeSelectorTerm,
    st.lists(_reqs, max_size=2).map(tuple),
    st.lists(
        st.sampled_from(
            [name_in("n0"), R("metadata.name", "NotIn", ("n1",)), R("metadata.uid", "In", ("",))]
        ),
        max_size=1,
    ).map(tuple),
)
_labels = st.dictionaries(st.sampled_from(["zone", "gen"]), _values, max_size=2)


@settings(max_examples=scaled(150), deadline=None)
@given(
    st.lists(_labels, min_size=1, max_size=8),
    st.one_of(st.none(), st.lists(_terms, max_size=2).map(tuple)),
    st.dictionaries(st.sampled_from(["zone", "kubernetes.io/hostname"]), _values, max_size=1),
    st.lists(st.tuples(st.integers(0, 3), _terms), max_size=2),
    st.booleans(),
    _labels,
    st.sets(st.integers(0, 7)),
)
def test_vector_paths_agree_with_exact(
    labels: list[dict[str, str]],
    required: tuple[NodeSelectorTerm, ...] | None,
    node_selector: dict[str, str],
    preferred: list[tuple[int, NodeSelectorTerm]],
    with_added: bool,
    relabel: dict[str, str],
    subset: set[int],
) -> None:
    """The derived Filter and Score equal the per-node ones (added affinity,
    matchFields and per-node distinct hostname labels included), on any subset of
    scored nodes, and again after a node's labels change."""
    table = build_table([make_node(f"n{i}").labels(lbl).obj() for i, lbl in enumerate(labels)])
    args = None
    if with_added:
        args = added(
            (term(R("zone", "NotIn", ("b",))),),
            (PreferredSchedulingTerm(3, term(R("gen", "Exists"))),),
        )
    pl = NodeAffinityPlugin(args, FakeHandle(table))
    pref = tuple(PreferredSchedulingTerm(w, t) for w, t in preferred)
    pod = _info(spec_pod(required, node_selector, pref))
    names = [f"n{i}" for i in range(len(labels)) if i in subset]
    for _ in range(2):
        state = CycleState()
        pl.pre_filter(state, pod, table)
        check_filter(pl, state, pod, table)
        check_filter(pl, CycleState(), pod, table)
        check_score(pl, state, pod, table)
        check_score(pl, CycleState(), pod, table, names=names)
        info = table.infos[table.row_of["n0"]]
        assert info is not None
        info.set_node(make_node("n0").labels(relabel).obj())
        table.update_node(info)
