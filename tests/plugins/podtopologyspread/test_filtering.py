"""PodTopologySpread PreFilter / AddPod / RemovePod / Filter, re-expressing upstream
filtering_test.go (TestPreFilterState, TestPreFilterStateAddPod,
TestPreFilterStateRemovePod, TestSingleConstraint, TestMultipleConstraints,
TestPreFilterDisabled). Every case runs on the exact and the vector path
(``harness.pre_filter`` / ``harness.filter_all`` assert they agree).

Upstream's expected ``CriticalPaths`` are checked through their first entry
(the global minimum, the only value Filter reads) and ``TpValueToMatchNum``
through the domain counts. Cases that only exist to test a feature gate
switched off (NodeInclusionPolicy and MatchLabelKeys are on in v1.36) are
left out; cases with Services are re-expressed with a ReplicaSet owner.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pytest

from kubesched.api.types import LabelSelector, Node, Pod, TopologySpreadConstraint
from kubesched.framework.config import PodTopologySpreadArgs
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import SKIP, Code, Status, error
from kubesched.framework.types import PodInfo
from kubesched.plugins.podtopologyspread.common import MAX_INT32
from tests.builders import make_pod, selector
from tests.plugins.podtopologyspread.harness import (
    BAR,
    FOO,
    LIST,
    SelectorReader,
    assert_same_pre_filter_states,
    domains_of,
    filter_all,
    mins_of,
    node,
    plugin,
    pod,
    pre_filter,
    rs_owned,
)

DNS = "DoNotSchedule"
SA = "ScheduleAnyway"
OK = Code.SUCCESS
UNS = Code.UNSCHEDULABLE
UAU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def p(*labels: str) -> Pod:
    """The incoming pod "p" with these labels (value "")."""
    return make_pod("p").labels(**dict.fromkeys(labels, "")).obj()


def spread(
    base: Pod,
    *constraints: tuple[int, str, str, LabelSelector | None],
    min_domains: int | None = None,
    node_affinity_policy: str | None = None,
    node_taints_policy: str | None = None,
    match_label_keys: tuple[str, ...] = (),
) -> Pod:
    """Append constraints (maxSkew, topologyKey, whenUnsatisfiable, selector) with
    these optional fields, like upstream's ``SpreadConstraint(...)`` wrapper."""
    cs = tuple(
        TopologySpreadConstraint(
            m,
            k,
            w,
            s,
            min_domains=min_domains,
            node_affinity_policy=node_affinity_policy,
            node_taints_policy=node_taints_policy,
            match_label_keys=match_label_keys,
        )
        for m, k, w, s in constraints
    )
    tsc = base.spec.topology_spread_constraints + cs
    base.spec = replace(base.spec, topology_spread_constraints=tsc)
    return base


def four_nodes() -> list[Node]:
    return [
        node("node-a", zone="zone1", node="node-a"),
        node("node-b", zone="zone1", node="node-b"),
        node("node-x", zone="zone2", node="node-x"),
        node("node-y", zone="zone2", node="node-y"),
    ]


def foo_pods(*spec: str) -> list[Pod]:
    """Pods labelled foo="": "p-a1@node-a"."""
    out = []
    for s in spec:
        name, on = s.split("@")
        out.append(pod(name, on, foo=""))
    return out


# --------------------------------------------------------------------------- TestPreFilterState


@dataclass
class StateCase:
    pod: Pod
    nodes: list[Node]
    existing: list[Pod] = field(default_factory=list)
    domains: list[dict[str, int]] | None = None
    mins: list[int] | None = None
    status: Status | None = None
    args: PodTopologySpreadArgs = LIST
    reader: SelectorReader | None = None
    keys: list[str] | None = None


STANDARD = foo_pods("p-a1@node-a", "p-a2@node-a", "p-b1@node-b", "p-y1@node-y", "p-y2@node-y")
FOUR_Y = foo_pods(
    "p-a1@node-a",
    "p-a2@node-a",
    "p-b1@node-b",
    "p-y1@node-y",
    "p-y2@node-y",
    "p-y3@node-y",
    "p-y4@node-y",
)
TAINTED_C = [
    node("node-a", node="node-a"),
    node("node-b", node="node-b"),
    node("node-c", node="node-c", taint=True, bar=""),
]
BAR_ABC = [pod("p-a", "node-a", bar=""), pod("p-b", "node-b", bar=""), pod("p-c", "node-b", bar="")]
FOO_NODES = [
    node("node-a", node="node-a", foo=""),
    node("node-b", node="node-b", foo=""),
    node("node-c", node="node-c", bar=""),
]

STATE_CASES = [
    pytest.param(
        StateCase(
            spread(p("foo"), (5, "zone", DNS, selector(foo="bar"))),
            four_nodes(),
            domains=[{"zone1": 0, "zone2": 0}],
            mins=[0],
        ),
        id="TestPreFilterState/clean cluster with one spreadConstraint",
    ),
    pytest.param(
        StateCase(
            spread(p("foo"), (1, "zone", DNS, FOO)),
            four_nodes(),
            STANDARD,
            [{"zone1": 3, "zone2": 2}],
            [2],
        ),
        id="TestPreFilterState/normal case with one spreadConstraint",
    ),
    pytest.param(
        StateCase(
            spread(p("foo"), (1, "zone", DNS, None)),
            four_nodes(),
            STANDARD,
            [{"zone1": 0, "zone2": 0}],
            [0],
        ),
        id="TestPreFilterState/normal case with null label selector",
    ),
    pytest.param(
        StateCase(
            spread(p("foo"), (1, "zone", DNS, FOO)),
            [*four_nodes(), node("node-o", zone="zone3"), node("node-p", zone="zone3")],
            STANDARD,
            [{"zone1": 3, "zone2": 2, "zone3": 0}],
            [0],
        ),
        id="TestPreFilterState/normal case with one spreadConstraint, on a 3-zone cluster",
    ),
    pytest.param(
        StateCase(
            spread(p("foo"), (1, "zone", DNS, FOO)),
            four_nodes(),
            [
                pod("p-a1", "node-a", foo=""),
                pod("p-a2", "node-a", "ns1", foo=""),
                pod("p-b1", "node-b", foo=""),
                pod("p-y1", "node-y", "ns2", foo=""),
                pod("p-y2", "node-y", foo=""),
            ],
            [{"zone1": 2, "zone2": 1}],
            [1],
        ),
        id="TestPreFilterState/namespace mismatch doesn't count",
    ),
    pytest.param(
        StateCase(
            spread(p("foo"), (1, "zone", DNS, FOO), (1, "node", DNS, FOO)),
            four_nodes(),
            FOUR_Y,
            [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}],
            [3, 0],
        ),
        id="TestPreFilterState/normal case with two spreadConstraints",
    ),
    pytest.param(
        StateCase(
            spread(
                p("foo"),
                (1, "zone", SA, FOO),
                (1, "zone", DNS, FOO),
                (1, "node", SA, FOO),
                (1, "node", DNS, FOO),
            ),
            [
                node("node-a", zone="zone1", node="node-a"),
                node("node-b", zone="zone1", node="node-b"),
                node("node-y", zone="zone2", node="node-y"),
            ],
            FOUR_Y,
            [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-y": 4}],
            [3, 1],
        ),
        id="TestPreFilterState/soft spreadConstraints should be bypassed",
    ),
    pytest.param(
        StateCase(
            spread(p("foo", "bar"), (1, "zone", DNS, FOO), (1, "node", DNS, BAR)),
            [
                node("node-a", zone="zone1", node="node-a"),
                node("node-b", zone="zone1", node="node-b"),
                node("node-y", zone="zone2", node="node-y"),
            ],
            [pod("p-a", "node-a", foo=""), pod("p-b", "node-b", bar="")],
            [{"zone1": 1, "zone2": 0}, {"node-a": 0, "node-b": 1, "node-y": 0}],
            [0, 0],
        ),
        id="TestPreFilterState/different labelSelectors - simple version",
    ),
    pytest.param(
        StateCase(
            spread(p("foo", "bar"), (1, "zone", DNS, FOO), (1, "node", DNS, BAR)),
            [
                node("node-a", zone="zone1", node="node-a"),
                node("node-b", zone="zone1", node="node-b"),
                node("node-y", zone="zone2", node="node-y"),
            ],
            [
                pod("p-a1", "node-a", foo=""),
                pod("p-a2", "node-a", foo="", bar=""),
                pod("p-b1", "node-b", foo=""),
                pod("p-y1", "node-y", foo=""),
                pod("p-y2", "node-y", foo="", bar=""),
                pod("p-y3", "node-y", foo=""),
                pod("p-y4", "node-y", foo="", bar=""),
            ],
            [{"zone1": 3, "zone2": 4}, {"node-a": 1, "node-b": 0, "node-y": 2}],
            [3, 0],
        ),
        id="TestPreFilterState/different labelSelectors - complex pods",
    ),
    pytest.param(
        StateCase(
            spread(
                make_pod("p").labels(foo="").node_affinity_not_in("node", "node-x").obj(),
                (1, "zone", DNS, FOO),
                (1, "node", DNS, FOO),
            ),
            four_nodes(),
            FOUR_Y,
            [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-y": 4}],
            [3, 1],
        ),
        id="TestPreFilterState/two spreadConstraints, and with podAffinity",
    ),
    pytest.param(
        StateCase(
            rs_owned(make_pod("p").labels(foo="bar", baz="kar").obj()),
            [],
            args=PodTopologySpreadArgs(
                default_constraints=(
                    TopologySpreadConstraint(3, "node", DNS),
                    TopologySpreadConstraint(2, "node", SA),
                    TopologySpreadConstraint(5, "rack", DNS),
                ),
                defaulting_type="List",
            ),
            reader=SelectorReader({"rs1": selector(foo="bar")}),
            domains=[{}, {}],
            mins=[MAX_INT32, MAX_INT32],
            keys=["node", "rack"],
        ),
        id="TestPreFilterState/default constraints and a service "
        "(a ReplicaSet selecting foo=bar here)",
    ),
    pytest.param(
        StateCase(
            make_pod("p").labels(foo="bar").obj(),
            [],
            args=PodTopologySpreadArgs(
                default_constraints=(TopologySpreadConstraint(3, "node", DNS),),
                defaulting_type="List",
            ),
            reader=SelectorReader({"rs1": selector(baz="kep")}),
            status=SKIP,
        ),
        id="TestPreFilterState/default constraints and a service that doesn't match "
        "(a pod without controller here)",
    ),
    pytest.param(
        StateCase(
            rs_owned(make_pod("p").labels(foo="bar").obj(), "unknown"),
            [],
            args=PodTopologySpreadArgs(
                default_constraints=(TopologySpreadConstraint(3, "node", DNS),),
                defaulting_type="List",
            ),
            reader=SelectorReader({"rs1": selector(foo="bar")}),
            status=SKIP,
        ),
        id="default constraints and a ReplicaSet the cluster does not know: no selector, Skip",
    ),
    pytest.param(
        StateCase(
            spread(
                rs_owned(make_pod("p").labels(foo="bar", baz="tar").obj()),
                (1, "zone", DNS, selector(baz="tar")),
                (2, "planet", SA, selector(fot="rok")),
            ),
            [],
            args=PodTopologySpreadArgs(
                default_constraints=(TopologySpreadConstraint(2, "node", DNS),),
                defaulting_type="List",
            ),
            reader=SelectorReader({"rs1": selector(foo="bar")}),
            domains=[{}],
            mins=[MAX_INT32],
            keys=["zone"],
        ),
        id="TestPreFilterState/default constraints and a service, but pod has constraints",
    ),
    pytest.param(
        StateCase(
            rs_owned(make_pod("p").labels(foo="bar").obj()),
            [],
            args=PodTopologySpreadArgs(
                default_constraints=(TopologySpreadConstraint(2, "node", SA),),
                defaulting_type="List",
            ),
            reader=SelectorReader({"rs1": selector(foo="bar")}),
            status=SKIP,
        ),
        id="TestPreFilterState/default soft constraints and a service",
    ),
    pytest.param(
        StateCase(
            spread(p("foo"), (1, "zone", DNS, FOO), (1, "node", DNS, FOO)),
            four_nodes(),
            FOUR_Y,
            [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}],
            [3, 0],
        ),
        id="TestPreFilterState/TpKeyToDomainsNum is calculated when MinDomains is enabled",
    ),
    pytest.param(
        StateCase(
            spread(make_pod("p").labels(foo="").node_selector(foo="").obj(), (1, "node", DNS, BAR)),
            FOO_NODES,
            [*BAR_ABC, pod("p-d", "node-c")],
            [{"node-a": 1, "node-b": 2}],
            [1],
        ),
        id="TestPreFilterState/NodeAffinityPolicy honored with labelSelectors",
    ),
    pytest.param(
        StateCase(
            spread(
                make_pod("p").labels(foo="").node_selector(foo="").obj(),
                (1, "node", DNS, BAR),
                node_affinity_policy="Ignore",
            ),
            FOO_NODES,
            [*BAR_ABC, pod("p-d", "node-c")],
            [{"node-a": 1, "node-b": 2, "node-c": 0}],
            [0],
        ),
        id="TestPreFilterState/NodeAffinityPolicy ignored with labelSelectors",
    ),
    pytest.param(
        StateCase(
            spread(
                make_pod("p").labels(foo="").node_affinity_in("foo", "").obj(),
                (1, "node", DNS, BAR),
            ),
            FOO_NODES,
            [
                pod("p-a", "node-a", bar=""),
                pod("p-c", "node-b", bar=""),
                pod("p-d", "node-b", bar=""),
            ],
            [{"node-a": 1, "node-b": 2}],
            [1],
        ),
        id="TestPreFilterState/NodeAffinityPolicy honored with nodeAffinity",
    ),
    pytest.param(
        StateCase(
            spread(
                make_pod("p").labels(foo="").node_affinity_in("foo", "").obj(),
                (1, "node", DNS, BAR),
                node_affinity_policy="Ignore",
            ),
            FOO_NODES,
            [*BAR_ABC, pod("p-d", "node-c")],
            [{"node-a": 1, "node-b": 2, "node-c": 0}],
            [0],
        ),
        id="TestPreFilterState/NodeAffinityPolicy ignored with nodeAffinity",
    ),
    pytest.param(
        StateCase(
            spread(p("foo"), (1, "node", DNS, BAR)),
            TAINTED_C,
            [*BAR_ABC, pod("p-d", "node-c")],
            [{"node-a": 1, "node-b": 2, "node-c": 0}],
            [0],
        ),
        id="TestPreFilterState/NodeTaintsPolicy ignored",
    ),
    pytest.param(
        StateCase(
            spread(p("foo"), (1, "node", DNS, BAR), node_taints_policy="Honor"),
            TAINTED_C,
            [*BAR_ABC, pod("p-d", "node-c")],
            [{"node-a": 1, "node-b": 2}],
            [1],
        ),
        id="TestPreFilterState/NodeTaintsPolicy honored",
    ),
    pytest.param(
        StateCase(
            spread(
                make_pod("p")
                .labels(foo="")
                .toleration("node.kubernetes.io/unschedulable", operator="Exists")
                .obj(),
                (1, "node", DNS, BAR),
                node_taints_policy="Honor",
            ),
            TAINTED_C,
            [*BAR_ABC, pod("p-d", "node-c")],
            [{"node-a": 1, "node-b": 2, "node-c": 0}],
            [0],
        ),
        id="TestPreFilterState/NodeTaintsPolicy honored with tolerated taints",
    ),
    pytest.param(
        StateCase(
            spread(
                spread(
                    make_pod("p").labels(foo="").node_selector(foo="").obj(),
                    (1, "zone", DNS, FOO),
                ),
                (1, "node", DNS, FOO),
                node_affinity_policy="Ignore",
            ),
            [
                node("node-a", zone="zone1", node="node-a", foo=""),
                node("node-b", zone="zone1", node="node-b"),
                node("node-x", zone="zone2", node="node-x", foo=""),
            ],
            [
                pod("p-b1", "node-b", foo=""),
                pod("p-b2", "node-b", foo=""),
                pod("p-x1", "node-x", foo=""),
            ],
            [{"zone1": 0, "zone2": 1}, {"node-a": 0, "node-b": 2, "node-x": 1}],
            [0, 0],
        ),
        id="TestPreFilterState/two node inclusion Constraints, zone: honor/ignore, "
        "node: ignore/ignore",
    ),
    pytest.param(
        StateCase(
            spread(
                spread(p("foo"), (1, "zone", DNS, FOO), node_taints_policy="Honor"),
                (1, "node", DNS, FOO),
            ),
            [
                node("node-a", zone="zone1", node="node-a", foo=""),
                node("node-b", zone="zone1", node="node-b", taint=True),
                node("node-x", zone="zone2", node="node-x", foo=""),
            ],
            [
                pod("p-b1", "node-b", foo=""),
                pod("p-b2", "node-b", foo=""),
                pod("p-x1", "node-x", foo=""),
            ],
            [{"zone1": 0, "zone2": 1}, {"node-a": 0, "node-b": 2, "node-x": 1}],
            [0, 0],
        ),
        id="TestPreFilterState/two node inclusion Constraints, zone: honor/honor, "
        "node: honor/ignore",
    ),
    pytest.param(
        StateCase(
            spread(
                make_pod("p").labels(foo="").node_selector(foo="").obj(),
                (1, "zone", DNS, FOO),
                (1, "node", DNS, FOO),
            ),
            [
                node("node-a", zone="zone1", node="node-a"),
                node("node-b", zone="zone1", node="node-b", foo="", taint=True),
                node("node-x", zone="zone2", node="node-x", foo=""),
                node("node-y", zone="zone2", node="node-y"),
            ],
            foo_pods("p-a1@node-a", "p-a2@node-a", "p-x1@node-x", "p-y1@node-y"),
            [{"zone1": 0, "zone2": 1}, {"node-b": 0, "node-x": 1}],
            [0, 0],
        ),
        id="TestPreFilterState/two node inclusion Constraints, zone: honor/ignore, "
        "node: honor/ignore",
    ),
    pytest.param(
        StateCase(
            spread(
                spread(
                    make_pod("p").labels(foo="").node_selector(foo="").obj(),
                    (1, "zone", DNS, FOO),
                    node_affinity_policy="Ignore",
                ),
                (1, "node", DNS, FOO),
                node_taints_policy="Honor",
            ),
            [
                node("node-a", zone="zone1", node="node-a"),
                node("node-b", zone="zone1", node="node-b", foo="", taint=True),
                node("node-x", zone="zone2", node="node-x", foo=""),
                node("node-y", zone="zone2", node="node-y", foo=""),
            ],
            foo_pods("p-a1@node-a", "p-a2@node-a", "p-x1@node-x", "p-x2@node-x", "p-y1@node-y"),
            [{"zone1": 2, "zone2": 3}, {"node-x": 2, "node-y": 1}],
            [2, 1],
        ),
        id="TestPreFilterState/two node inclusion Constraints, zone: ignore/ignore, "
        "node: honor/honor",
    ),
    pytest.param(
        StateCase(
            spread(
                make_pod("p").labels(foo="", bar="a").obj(),
                (1, "zone", DNS, FOO),
                match_label_keys=("bar",),
            ),
            four_nodes(),
            [
                pod("p-a1", "node-a", foo=""),
                pod("p-a2", "node-a", foo="", bar="a"),
                pod("p-b1", "node-b", foo=""),
                pod("p-y1", "node-y", foo="", bar="a"),
                pod("p-y2", "node-y", bar=""),
            ],
            [{"zone1": 1, "zone2": 1}],
            [1],
        ),
        id="T"
        "estPreFilterState/matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
    ),
    pytest.param(
        StateCase(
            spread(
                make_pod("p").labels(foo="a").obj(),
                (1, "zone", DNS, LabelSelector()),
                match_label_keys=("foo",),
            ),
            four_nodes(),
            [
                pod("p-a1", "node-a", foo="a"),
                pod("p-a2", "node-a", foo="a"),
                pod("p-b1", "node-b", foo="a"),
                pod("p-y1", "node-y", foo="a"),
                pod("p-y2", "node-y", foo="a"),
            ],
            [{"zone1": 3, "zone2": 2}],
            [2],
        ),
        id="TestPreFilterState/matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
    ),
    pytest.param(
        StateCase(
            spread(p("foo"), (1, "zone", DNS, None), match_label_keys=("bar",)),
            four_nodes(),
            [pod(n, on, foo="a") for n, on in [("p-a1", "node-a"), ("p-b1", "node-b")]],
            [{"zone1": 0, "zone2": 0}],
            [0],
        ),
        id="TestPreFilterState/key in matchLabelKeys is ignored when LabelSelector is nil "
        "when feature gate enabled",
    ),
    pytest.param(
        StateCase(
            spread(p("foo"), (1, "zone", DNS, FOO), match_label_keys=("bar",)),
            four_nodes(),
            [
                pod(n, on, foo="a")
                for n, on in [
                    ("p-a1", "node-a"),
                    ("p-a2", "node-a"),
                    ("p-b1", "node-b"),
                    ("p-y1", "node-y"),
                    ("p-y2", "node-y"),
                ]
            ],
            [{"zone1": 3, "zone2": 2}],
            [2],
        ),
        id="TestPreFilterState/key in matchLabelKeys is ignored when it isn't exist in pod.labels",
    ),
    pytest.param(
        StateCase(
            spread(p("foo", "bar"), (1, "zone", DNS, FOO), (1, "zone", DNS, BAR)),
            four_nodes(),
            [
                pod("p-a1", "node-a", foo="", bar=""),
                pod("p-b1", "node-b", foo=""),
                pod("p-x1", "node-x", bar=""),
                pod("p-y1", "node-y", foo="", bar=""),
                pod("p-y2", "node-y", bar=""),
            ],
            [{"zone1": 2, "zone2": 1}, {"zone1": 1, "zone2": 3}],
            [1, 1],
        ),
        id="TestPreFilterState/two spreadConstraints with the same topologyKey",
    ),
    pytest.param(
        StateCase(p("foo"), [node("node-a", zone="zone1", node="node-a")], status=SKIP),
        id="TestPreFilterState/skip if not specified",
    ),
]


@pytest.mark.parametrize("case", STATE_CASES)
def test_pre_filter_state(case: StateCase) -> None:
    run = pre_filter(case.pod, case.nodes, case.existing, case.args, case.reader)
    if case.status is not None:
        assert run.status == case.status
        assert run.status.code == case.status.code
        return
    assert run.status.is_success(), run.status
    s = run.pre_filter_state()
    assert domains_of(s) == case.domains
    assert mins_of(s) == case.mins
    if case.keys is not None:
        assert [c.topology_key for c in s.constraints] == case.keys


def test_pre_filter_state_constraint_defaults() -> None:
    """TestPreFilterState's expected constraints: MinDomains 1, NodeAffinityPolicy
    Honor and NodeTaintsPolicy Ignore when unset; minDomains kept when set."""
    run = pre_filter(
        spread(spread(p("foo"), (1, "zone", DNS, FOO)), (2, "node", DNS, FOO), min_domains=3),
        four_nodes(),
    )
    c1, c2 = run.pre_filter_state().constraints
    assert (c1.max_skew, c1.min_domains, c1.node_affinity_policy, c1.node_taints_policy) == (
        1,
        1,
        "Honor",
        "Ignore",
    )
    assert (c2.max_skew, c2.min_domains) == (2, 3)


def test_pre_filter_merges_match_label_keys_once_more_without_double_counting() -> None:
    """The API server merged matchLabelKeys at creation (prepare_pod_for_create);
    the plugin merges them again as upstream does. The repeated requirement
    selects the same pods: counts equal those of a single merge."""
    from kubesched.api.admission import prepare_pod_for_create

    incoming = spread(make_pod("p").labels(foo="", bar="a").obj(), (1, "zone", DNS, FOO))
    merged = spread(
        make_pod("p").labels(foo="", bar="a").obj(),
        (1, "zone", DNS, FOO),
        match_label_keys=("bar",),
    )
    prepare_pod_for_create(merged)
    sel = merged.spec.topology_spread_constraints[0].label_selector
    assert sel is not None and len(sel.match_expressions) == 2  # Exists foo, bar In (a)
    existing = [
        pod("p-a1", "node-a", foo="", bar="a"),
        pod("p-a2", "node-a", foo="", bar="b"),
        pod("p-y1", "node-y", foo="", bar="a"),
    ]
    run = pre_filter(merged, four_nodes(), existing)
    assert domains_of(run.pre_filter_state()) == [{"zone1": 1, "zone2": 1}]
    assert len(run.pre_filter_state().constraints[0].selector.key[2]) == 3  # type: ignore[arg-type]
    plain = pre_filter(incoming, four_nodes(), existing)
    assert domains_of(plain.pre_filter_state()) == [{"zone1": 2, "zone2": 1}]


def test_pre_filter_error_when_selector_does_not_parse() -> None:
    bad = LabelSelector(match_labels={"a b": "c"})
    run = pre_filter(spread(p("foo"), (1, "zone", DNS, bad)), four_nodes())
    assert run.status.code == Code.ERROR
    assert run.status.message().startswith(
        "get constraints from pod: obtaining pod's hard topology spread constraints: "
    )


# --------------------------------------------------------------------------- AddPod / RemovePod


@dataclass
class UpdateCase:
    preemptor: Pod
    nodes: list[Node]
    existing: list[Pod]
    changed: Pod
    node: str
    domains: list[dict[str, int]]
    mins: list[int]


ZONE_AB = [
    node("node-a", zone="zone1", node="node-a", foo="bar"),
    node("node-b", zone="zone2", node="node-b", foo=""),
]

ADD_CASES = [
    pytest.param(
        UpdateCase(
            spread(p("foo"), (1, "node", DNS, FOO)),
            [
                node("node-a", zone="zone1", node="node-a"),
                node("node-b", zone="zone1", node="node-b"),
            ],
            [],
            pod("p-a1", "node-a", foo=""),
            "node-a",
            [{"node-a": 1, "node-b": 0}],
            [0],
        ),
        id="TestPreFilterStateAddPod/node a and b both impact current min match",
    ),
    pytest.param(
        UpdateCase(
            spread(p("foo"), (1, "node", DNS, FOO)),
            [
                node("node-a", zone="zone1", node="node-a"),
                node("node-b", zone="zone1", node="node-b"),
            ],
            [pod("p-b1", "node-b", foo="")],
            pod("p-a1", "node-a", foo=""),
            "node-a",
            [{"node-a": 1, "node-b": 1}],
            [1],
        ),
        id="TestPreFilterStateAddPod/only node a impacts current min match",
    ),
    pytest.param(
        UpdateCase(
            spread(p("foo"), (1, "node", DNS, FOO)),
            [
                node("node-a", zone="zone1", node="node-a"),
                node("node-b", zone="zone1", node="node-b"),
            ],
            [pod("p-b1", "node-b", foo="")],
            pod("p-a1", "node-a", "ns1", foo=""),
            "node-a",
            [{"node-a": 0, "node-b": 1}],
            [0],
        ),
        id="TestPreFilterStateAddPod/add a pod in a different namespace doesn't change "
        "topologyKeyToMinPodsMap",
    ),
    pytest.param(
        UpdateCase(
            spread(p("foo"), (1, "node", DNS, FOO)),
            [
                node("node-a", zone="zone1", node="node-a"),
                node("node-b", zone="zone1", node="node-b"),
            ],
            [pod("p-b1", "node-b", foo="")],
            pod("p-b2", "node-b", foo=""),
            "node-b",
            [{"node-a": 0, "node-b": 2}],
            [0],
        ),
        id="TestPreFilterStateAddPod/add pod on non-critical node won't trigger re-calculation",
    ),
    pytest.param(
        UpdateCase(
            spread(p("foo"), (1, "zone", DNS, FOO), (1, "node", DNS, FOO)),
            [
                node("node-a", zone="zone1", node="node-a"),
                node("node-x", zone="zone2", node="node-x"),
            ],
            [],
            pod("p-a1", "node-a", foo=""),
            "node-a",
            [{"zone1": 1, "zone2": 0}, {"node-a": 1, "node-x": 0}],
            [0, 0],
        ),
        id="T"
        "estPreFilterStateAddPod/node a and x both impact topologyKeyToMinPodsMap on zone and node",
    ),
    pytest.param(
        UpdateCase(
            spread(p("foo"), (1, "zone", DNS, FOO), (1, "node", DNS, FOO)),
            [
                node("node-a", zone="zone1", node="node-a"),
                node("node-x", zone="zone2", node="node-x"),
            ],
            [pod("p-x1", "node-x", foo="")],
            pod("p-a1", "node-a", foo=""),
            "node-a",
            [{"zone1": 1, "zone2": 1}, {"node-a": 1, "node-x": 1}],
            [1, 1],
        ),
        id="TestPreFilterStateAddPod/only node a impacts topologyKeyToMinPodsMap on zone and node",
    ),
    pytest.param(
        UpdateCase(
            spread(p("foo"), (1, "zone", DNS, FOO), (1, "node", DNS, FOO)),
            [
                node("node-a", zone="zone1", node="node-a"),
                node("node-b", zone="zone1", node="node-b"),
                node("node-x", zone="zone2", node="node-x"),
            ],
            foo_pods("p-b1@node-b", "p-b2@node-b", "p-x1@node-x"),
            pod("p-a1", "node-a", foo=""),
            "node-a",
            [{"zone1": 3, "zone2": 1}, {"node-a": 1, "node-b": 2, "node-x": 1}],
            [1, 1],
        ),
        id="TestPreFilterStateAddPod/node a impacts topologyKeyToMinPodsMap on node, "
        "node x impacts topologyKeyToMinPodsMap on zone",
    ),
    pytest.param(
        UpdateCase(
            spread(p("foo", "bar"), (1, "zone", DNS, FOO), (1, "node", DNS, BAR)),
            [
                node("node-a", zone="zone1", node="node-a"),
                node("node-b", zone="zone1", node="node-b"),
                node("node-x", zone="zone2", node="node-x"),
            ],
            [
                pod("p-b1", "node-b", foo="", bar=""),
                pod("p-x1", "node-x", foo="", bar=""),
                pod("p-x2", "node-x", bar=""),
            ],
            pod("p-a1", "node-a", foo=""),
            "node-a",
            [{"zone1": 2, "zone2": 1}, {"node-a": 0, "node-b": 1, "node-x": 2}],
            [1, 0],
        ),
        id="TestPreFilterStateAddPod/Constraints hold different labelSelectors, "
        "node a impacts topologyKeyToMinPodsMap on zone",
    ),
    pytest.param(
        UpdateCase(
            spread(p("foo", "bar"), (1, "zone", DNS, FOO), (1, "node", DNS, BAR)),
            [
                node("node-a", zone="zone1", node="node-a"),
                node("node-b", zone="zone1", node="node-b"),
                node("node-x", zone="zone2", node="node-x"),
            ],
            [
                pod("p-b1", "node-b", bar=""),
                pod("p-x1", "node-x", foo="", bar=""),
                pod("p-x2", "node-x", bar=""),
            ],
            pod("p-a1", "node-a", foo="", bar=""),
            "node-a",
            [{"zone1": 1, "zone2": 1}, {"node-a": 1, "node-b": 1, "node-x": 2}],
            [1, 1],
        ),
        id="TestPreFilterStateAddPod/Constraints hold different labelSelectors, "
        "node a impacts topologyKeyToMinPodsMap on both zone and node",
    ),
    pytest.param(
        UpdateCase(
            spread(
                make_pod("p").labels(foo="").node_affinity_not_in("foo", "bar").obj(),
                (1, "zone", DNS, FOO),
            ),
            ZONE_AB,
            [
                pod("p-a2", "node-a", foo="", zone="zone1"),
                pod("p-b1", "node-b", foo="", zone="zone2"),
            ],
            pod("p-a1", "node-a", foo="", zone="zone1"),
            "node-a",
            [{"zone2": 1}],
            [1],
        ),
        id="TestPreFilterStateAddPod/add a pod when scheduling node affinity unmatched pod "
        "with NodeInclusionPolicy enabled",
    ),
    pytest.param(
        UpdateCase(
            spread(p("foo"), (1, "zone", DNS, FOO)),
            ZONE_AB,
            [
                pod("p-a1", "node-a", foo="", zone="zone1"),
                pod("p-b2", "node-b", foo="", zone="zone2"),
            ],
            pod("p-b1", "node-b", foo="", zone="zone2"),
            "node-b",
            [{"zone1": 1, "zone2": 2}],
            [1],
        ),
        id="TestPreFilterStateAddPod/add a pod when scheduling node affinity matched pod "
        "with NodeInclusionPolicy enabled",
    ),
    pytest.param(
        UpdateCase(
            spread(p("foo"), (1, "zone", DNS, FOO)),
            ZONE_AB,
            [
                pod("p-a1", "node-a", foo="", zone="zone1"),
                pod("p-b2", "node-b", foo="", zone="zone2"),
            ],
            pod("p-b1", "node-b", zone="zone2"),
            "node-b",
            [{"zone1": 1, "zone2": 1}],
            [1],
        ),
        id="TestPreFilterStateAddPod/add a label selector not matched pod when with "
        "NodeInclusionPolicy enabled",
    ),
    pytest.param(
        UpdateCase(
            spread(
                make_pod("p")
                .labels(foo="")
                .toleration("node.kubernetes.io/unschedulable", operator="Exists")
                .obj(),
                (1, "zone", DNS, FOO),
            ),
            [
                node("node-a", zone="zone1", node="node-a", taint=True),
                node("node-b", zone="zone2", node="node-b"),
            ],
            [
                pod("p-a1", "node-a", foo="", zone="zone1"),
                pod("p-b2", "node-b", foo="", zone="zone2"),
            ],
            pod("p-b1", "node-b", foo="", zone="zone2"),
            "node-b",
            [{"zone1": 1, "zone2": 2}],
            [1],
        ),
        id="TestPreFilterStateAddPod/add a pod when scheduling taint tolerated pod with "
        "NodeInclusionPolicy enabled",
    ),
]


def _apply(case: UpdateCase, delta: int) -> None:
    run = pre_filter(case.preemptor, case.nodes, case.existing)
    assert run.status.is_success()
    info = run.info(case.node)
    changed = next(
        (pi for pi in info.pods if pi.pod.name == case.changed.name), PodInfo(case.changed)
    )
    for plug, state in ((run.exact, run.exact_state), (run.vec, run.vec_state)):
        ext = plug.pre_filter_extensions()
        op = ext.add_pod if delta > 0 else ext.remove_pod
        assert op(state, run.pod, changed, info).is_success()
    a = run.exact_state.read("PreFilterPodTopologySpread")
    b = run.vec_state.read("PreFilterPodTopologySpread")
    assert isinstance(a, type(run.pre_filter_state()))
    assert_same_pre_filter_states(a, b)  # type: ignore[arg-type]
    assert domains_of(b) == case.domains  # type: ignore[arg-type]
    assert mins_of(b) == case.mins  # type: ignore[arg-type]


@pytest.mark.parametrize("case", ADD_CASES)
def test_add_pod(case: UpdateCase) -> None:
    _apply(case, 1)


THREE = [
    node("node-a", zone="zone1", node="node-a"),
    node("node-b", zone="zone1", node="node-b"),
    node("node-x", zone="zone2", node="node-x"),
]

REMOVE_CASES = [
    pytest.param(
        UpdateCase(
            spread(p("foo"), (1, "zone", DNS, FOO)),
            THREE,
            foo_pods("p-a1@node-a", "p-b1@node-b", "p-x1@node-x"),
            pod("p-a1", "node-a", foo=""),
            "node-a",
            [{"zone1": 1, "zone2": 1}],
            [1],
        ),
        id="TestPreFilterStateRemovePod/one spreadConstraint on zone, "
        "topologyKeyToMinPodsMap unchanged",
    ),
    pytest.param(
        UpdateCase(
            spread(p("foo"), (1, "zone", DNS, FOO)),
            four_nodes(),
            foo_pods("p-a1@node-a", "p-b1@node-b", "p-x1@node-x", "p-y1@node-y"),
            pod("p-a1", "node-a", foo=""),
            "node-a",
            [{"zone1": 1, "zone2": 2}],
            [1],
        ),
        id="TestPreFilterStateRemovePod/one spreadConstraint on node, "
        "topologyKeyToMinPodsMap changed",
    ),
    pytest.param(
        UpdateCase(
            spread(p("foo"), (1, "zone", DNS, FOO)),
            four_nodes(),
            [
                pod("p-a0", "node-a", bar=""),
                *foo_pods("p-a1@node-a", "p-b1@node-b", "p-x1@node-x", "p-y1@node-y"),
            ],
            pod("p-a0", "node-a", bar=""),
            "node-a",
            [{"zone1": 2, "zone2": 2}],
            [2],
        ),
        id="TestPreFilterStateRemovePod/delete an irrelevant pod won't help",
    ),
    pytest.param(
        UpdateCase(
            spread(p("foo"), (1, "zone", DNS, FOO)),
            four_nodes(),
            foo_pods("p-a1@node-a", "p-b1@node-b", "p-x1@node-x", "p-y1@node-y"),
            pod("p-a0", "node-a", bar=""),
            "node-a",
            [{"zone1": 2, "zone2": 2}],
            [2],
        ),
        id="TestPreFilterStateRemovePod/delete a non-existing pod won't help",
    ),
    pytest.param(
        UpdateCase(
            spread(p("foo"), (1, "zone", DNS, FOO), (1, "node", DNS, FOO)),
            THREE,
            foo_pods("p-a1@node-a", "p-a2@node-a", "p-b1@node-b", "p-x1@node-x", "p-x2@node-x"),
            pod("p-x1", "node-x", foo=""),
            "node-x",
            [{"zone1": 3, "zone2": 1}, {"node-a": 2, "node-b": 1, "node-x": 1}],
            [1, 1],
        ),
        id="TestPreFilterStateRemovePod/two spreadConstraints",
    ),
    pytest.param(
        UpdateCase(
            spread(
                make_pod("p").labels(foo="").node_affinity_not_in("foo", "bar").obj(),
                (1, "zone", DNS, FOO),
            ),
            ZONE_AB,
            [
                pod("p-a2", "node-a", foo="", zone="zone1"),
                pod("p-b1", "node-b", foo="", zone="zone2"),
            ],
            pod("p-a1", "node-a", foo="", zone="zone1"),
            "node-a",
            [{"zone2": 1}],
            [1],
        ),
        id="TestPreFilterStateRemovePod/remove a pod when scheduling node affinity unmatched "
        "pod with NodeInclusionPolicy enabled",
    ),
    pytest.param(
        UpdateCase(
            spread(p("foo"), (1, "zone", DNS, FOO)),
            ZONE_AB,
            [
                pod("p-a1", "node-a", foo="", zone="zone1"),
                pod("p-b2", "node-b", foo="", zone="zone2"),
            ],
            pod("p-b1", "node-b", foo="", zone="zone2"),
            "node-b",
            [{"zone1": 1, "zone2": 0}],
            [0],
        ),
        id="TestPreFilterStateRemovePod/remove a pod when scheduling node affinity matched pod "
        "with NodeInclusionPolicy enabled",
    ),
]


@pytest.mark.parametrize("case", REMOVE_CASES)
def test_remove_pod(case: UpdateCase) -> None:
    _apply(case, -1)


def test_remove_pod_of_terminating_victim_still_decrements() -> None:
    """Upstream ``updateWithPod`` does not look at deletionTimestamp: removing a
    terminating pod (which PreFilter did not count) still decrements its domain."""
    case = UpdateCase(
        spread(p("foo"), (1, "zone", DNS, FOO)),
        THREE,
        [*foo_pods("p-a1@node-a", "p-x1@node-x"), pod("p-b1", "node-b", terminating=True, foo="")],
        pod("p-b1", "node-b", terminating=True, foo=""),
        "node-b",
        [{"zone1": 0, "zone2": 1}],
        [0],
    )
    _apply(case, -1)


def test_add_pod_with_empty_selector_counts_although_pre_filter_does_not() -> None:
    """An empty (``{}``) selector counts no pod in PreFilter (``Selector.Empty()``)
    but matches every pod in AddPod, as upstream."""
    case = UpdateCase(
        spread(p("foo"), (1, "zone", DNS, LabelSelector())),
        THREE,
        foo_pods("p-a1@node-a"),
        pod("p-x1", "node-x", foo=""),
        "node-x",
        [{"zone1": 0, "zone2": 1}],
        [0],
    )
    _apply(case, 1)


def test_extensions_without_pre_filter_state_are_errors() -> None:
    from tests.builders import build_table

    table = build_table([node("node-a", zone="z")])
    plug = plugin(table)
    info = table.infos[0]
    assert info is not None
    pi = PodInfo(p("foo"))
    want = error('reading "PreFilterPodTopologySpread" from cycleState: not found')
    assert plug.add_pod(CycleState(), pi, pi, info) == want
    assert plug.remove_pod(CycleState(), pi, pi, info) == want


# --------------------------------------------------------------------------- TestSingleConstraint


@dataclass
class FilterCase:
    pod: Pod
    nodes: list[Node]
    existing: list[Pod]
    want: dict[str, Code]


def codes(**kv: Code) -> dict[str, Code]:
    return {k.replace("_", "-"): v for k, v in kv.items()}


TWO_ONE_ZERO_THREE = foo_pods(
    "p-a1@node-a", "p-a2@node-a", "p-b1@node-b", "p-y1@node-y", "p-y2@node-y", "p-y3@node-y"
)
NODE_ABXY_FOO = [
    node("node-a", node="node-a", foo=""),
    node("node-b", node="node-b", foo=""),
    node("node-x", node="node-x", foo=""),
    node("node-y", node="node-y"),
]
ONE_ONE_ZERO_ONE = foo_pods("p-b1@node-a", "p-b2@node-b", "p-y1@node-y")
NODES_ABC = [node(n, node=n) for n in ("node-a", "node-b", "node-c")]
TWO_TWO_ONE = foo_pods("p-a1@node-a", "p-a2@node-a", "p-b1@node-b", "p-b2@node-b", "p-c1@node-c")

SINGLE_CASES = [
    pytest.param(
        FilterCase(
            spread(p("foo"), (1, "zone", DNS, FOO)),
            four_nodes(),
            [],
            codes(node_a=OK, node_b=OK, node_x=OK, node_y=OK),
        ),
        id="TestSingleConstraint/no existing pods",
    ),
    pytest.param(
        FilterCase(
            spread(p("foo"), (1, "zone", DNS, BAR)),
            four_nodes(),
            [],
            codes(node_a=OK, node_b=OK, node_x=OK, node_y=OK),
        ),
        id="TestSingleConstraint/no existing pods, incoming pod doesn't match itself",
    ),
    pytest.param(
        FilterCase(
            spread(p("foo"), (1, "zone", DNS, FOO)),
            four_nodes(),
            [
                pod("p-a1", "node-a", "ns1", foo=""),
                pod("p-b1", "node-a", "ns2", foo=""),
                pod("p-x1", "node-x", foo=""),
                pod("p-y1", "node-y", foo=""),
            ],
            codes(node_a=OK, node_b=OK, node_x=UNS, node_y=UNS),
        ),
        id="TestSingleConstraint/existing pods in a different namespace do not count",
    ),
    pytest.param(
        FilterCase(
            spread(p("foo"), (1, "zone", DNS, None)),
            four_nodes(),
            foo_pods("p-x1@node-x", "p-y1@node-y"),
            codes(node_a=OK, node_b=OK, node_x=OK, node_y=OK),
        ),
        id="TestSingleConstraint/existing pods do not match null selector",
    ),
    pytest.param(
        FilterCase(
            spread(p("foo"), (1, "zone", DNS, FOO)),
            four_nodes(),
            TWO_ONE_ZERO_THREE,
            codes(node_a=OK, node_b=OK, node_x=OK, node_y=OK),
        ),
        id="TestSingleConstraint/pods spread across zones as 3/3, all nodes fit",
    ),
    pytest.param(
        FilterCase(
            spread(p("foo"), (1, "zone", DNS, FOO)),
            [
                node("node-a", zone="zone1", node="node-a"),
                node("node-b", zon="zone1", node="node-b"),
                node("node-x", zone="zone2", node="node-x"),
                node("node-y", zone="zone2", node="node-y"),
            ],
            foo_pods("p-a1@node-a", "p-b1@node-b", "p-x1@node-x", "p-y1@node-y"),
            codes(node_a=OK, node_b=UAU, node_x=UNS, node_y=UNS),
        ),
        id="TestSingleConstraint/pods spread across zones as 1/2 due to absence of label "
        "'zone' on node-b",
    ),
    pytest.param(
        FilterCase(
            spread(p("foo"), (1, "rack", DNS, FOO)),
            [
                node("node-a", zone="zone1", node="node-a"),
                node("node-x", zone="zone2", node="node-x"),
            ],
            [],
            codes(node_a=UAU, node_x=UAU),
        ),
        id="TestSingleConstraint/pod cannot be scheduled as all nodes don't have label 'rack'",
    ),
    pytest.param(
        FilterCase(
            spread(p("foo"), (1, "node", DNS, FOO)),
            four_nodes(),
            TWO_ONE_ZERO_THREE,
            codes(node_a=UNS, node_b=UNS, node_x=OK, node_y=UNS),
        ),
        id="TestSingleConstraint/pods spread across nodes as 2/1/0/3, only node-x fits",
    ),
    pytest.param(
        FilterCase(
            spread(p("foo"), (2, "node", DNS, FOO)),
            four_nodes(),
            TWO_ONE_ZERO_THREE,
            codes(node_a=UNS, node_b=OK, node_x=OK, node_y=UNS),
        ),
        id="TestSingleConstraint/pods spread across nodes as 2/1/0/3, maxSkew is 2, "
        "node-b and node-x fit",
    ),
    pytest.param(
        FilterCase(
            spread(p("bar"), (1, "node", DNS, FOO)),
            four_nodes(),
            TWO_ONE_ZERO_THREE,
            codes(node_a=UNS, node_b=OK, node_x=OK, node_y=UNS),
        ),
        id="TestSingleConstraint/pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
    ),
    pytest.param(
        FilterCase(
            spread(
                make_pod("p").labels(foo="").node_affinity_in("node", "node-a", "node-y").obj(),
                (1, "node", DNS, FOO),
            ),
            four_nodes(),
            TWO_ONE_ZERO_THREE,
            codes(node_a=OK, node_b=OK, node_x=OK, node_y=UNS),
        ),
        id="TestSingleConstraint/incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, "
        "hence node-a fits",
    ),
    pytest.param(
        FilterCase(
            spread(p("foo"), (1, "node", DNS, FOO)),
            [node("node-a", node="node-a"), node("node-b", node="node-b")],
            [pod("p-a", "node-a", terminating=True, foo=""), pod("p-b", "node-b", foo="")],
            codes(node_a=OK, node_b=UNS),
        ),
        id="TestSingleConstraint/terminating Pods should be excluded",
    ),
    pytest.param(
        FilterCase(
            spread(
                make_pod("p").labels(foo="").node_affinity_not_in("node", "node-b").obj(),
                (1, "zone", DNS, FOO),
            ),
            four_nodes(),
            foo_pods("p-b1@node-b", "p-b2@node-b", "p-y1@node-y"),
            codes(node_a=OK, node_b=OK, node_x=UNS, node_y=UNS),
        ),
        id="TestSingleConstraint/incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, "
        "hence node-a fits",
    ),
    pytest.param(
        FilterCase(
            spread(p("foo"), (2, "node", DNS, FOO), min_domains=4),
            NODES_ABC,
            TWO_TWO_ONE,
            codes(node_a=UNS, node_b=UNS, node_c=OK),
        ),
        id="TestSingleConstraint/pods spread across nodes as 2/2/1, maxSkew is 2, and the "
        "number of domains < minDomains, then the third node fits",
    ),
    pytest.param(
        FilterCase(
            spread(p("foo"), (2, "node", DNS, FOO), min_domains=2),
            NODES_ABC,
            TWO_TWO_ONE,
            codes(node_a=OK, node_b=OK, node_c=OK),
        ),
        id="TestSingleConstraint/pods spread across nodes as 2/2/1, maxSkew is 2, and the "
        "number of domains > minDomains, then the all nodes fit",
    ),
    pytest.param(
        FilterCase(
            spread(p("foo"), (2, "zone", DNS, FOO), min_domains=3),
            four_nodes(),
            foo_pods("p-b1@node-a", "p-b2@node-b", "p-y1@node-y"),
            codes(node_a=UNS, node_b=UNS, node_x=OK, node_y=OK),
        ),
        id="TestSingleConstraint/pods spread across zone as 2/1, maxSkew is 2 and the number "
        "of domains < minDomains, then the third and fourth nodes fit",
    ),
    pytest.param(
        FilterCase(
            spread(p("foo"), (2, "zone", DNS, FOO), min_domains=1),
            four_nodes(),
            foo_pods("p-b1@node-a", "p-b2@node-b", "p-y1@node-y"),
            codes(node_a=OK, node_b=OK, node_x=OK, node_y=OK),
        ),
        id="TestSingleConstraint/pods spread across zone as 2/1, maxSkew is 2 and the number "
        "of domains > minDomains, then the all nodes fit",
    ),
    pytest.param(
        FilterCase(
            spread(make_pod("p").labels(foo="").node_selector(foo="").obj(), (1, "node", DNS, FOO)),
            NODE_ABXY_FOO,
            ONE_ONE_ZERO_ONE,
            codes(node_a=UNS, node_b=UNS, node_x=OK, node_y=OK),
        ),
        id="TestSingleConstraint/NodeAffinityPolicy honored with labelSelectors",
    ),
    pytest.param(
        FilterCase(
            spread(
                make_pod("p").labels(foo="").node_selector(foo="").obj(),
                (1, "node", DNS, FOO),
                node_affinity_policy="Ignore",
            ),
            NODE_ABXY_FOO,
            ONE_ONE_ZERO_ONE,
            codes(node_a=UNS, node_b=UNS, node_x=OK, node_y=UNS),
        ),
        id="TestSingleConstraint/NodeAffinityPolicy ignored with labelSelectors",
    ),
    pytest.param(
        FilterCase(
            spread(
                make_pod("p").labels(foo="").node_affinity_in("foo", "").obj(),
                (1, "node", DNS, FOO),
            ),
            NODE_ABXY_FOO,
            ONE_ONE_ZERO_ONE,
            codes(node_a=UNS, node_b=UNS, node_x=OK, node_y=OK),
        ),
        id="TestSingleConstraint/NodeAffinityPolicy honored with nodeAffinity",
    ),
    pytest.param(
        FilterCase(
            spread(
                make_pod("p").labels(foo="").node_affinity_in("foo", "").obj(),
                (1, "node", DNS, FOO),
                node_affinity_policy="Ignore",
            ),
            NODE_ABXY_FOO,
            ONE_ONE_ZERO_ONE,
            codes(node_a=UNS, node_b=UNS, node_x=OK, node_y=UNS),
        ),
        id="TestSingleConstraint/NodeAffinityPolicy ignored with nodeAffinity",
    ),
    pytest.param(
        FilterCase(
            spread(p("foo"), (1, "node", DNS, FOO), node_taints_policy="Honor"),
            [*NODE_ABXY_FOO[:3], node("node-y", node="node-y", taint=True)],
            ONE_ONE_ZERO_ONE,
            codes(node_a=UNS, node_b=UNS, node_x=OK, node_y=OK),
        ),
        id="TestSingleConstraint/NodeTaintsPolicy honored",
    ),
    pytest.param(
        FilterCase(
            spread(p("foo"), (1, "node", DNS, FOO)),
            [*NODE_ABXY_FOO[:3], node("node-y", node="node-y", taint=True)],
            ONE_ONE_ZERO_ONE,
            codes(node_a=UNS, node_b=UNS, node_x=OK, node_y=UNS),
        ),
        id="TestSingleConstraint/NodeTaintsPolicy ignored",
    ),
]


@pytest.mark.parametrize("case", SINGLE_CASES)
def test_single_constraint(case: FilterCase) -> None:
    run = pre_filter(case.pod, case.nodes, case.existing)
    got = filter_all(run)
    assert {n: s.code for n, s in got.items()} == case.want


def test_filter_reasons_are_upstream_strings() -> None:
    run = pre_filter(
        spread(p("foo"), (1, "zone", DNS, FOO)),
        [node("node-a", zone="z1"), node("node-b"), node("node-c", zone="z2")],
        foo_pods("p-a1@node-a"),
    )
    got = filter_all(run)
    assert got["node-a"] == Status(
        Code.UNSCHEDULABLE, "node(s) didn't match pod topology spread constraints"
    )
    assert got["node-b"] == Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "node(s) didn't match pod topology spread constraints (missing required label)",
    )
    assert got["node-c"].is_success()


# ------------------------------------------------------------------------- TestMultipleConstraints

TWO_ZONE_NODE = ((1, "zone", DNS, FOO), (1, "node", DNS, FOO))
ZONE_FOO_NODE_BAR = ((1, "zone", DNS, FOO), (1, "node", DNS, BAR))
FOO_NODES4 = [
    node("node-a", zone="zone1", node="node-a", foo=""),
    node("node-b", zone="zone1", node="node-b", foo=""),
    node("node-x", zone="zone2", node="node-x", foo=""),
]

MULTI_CASES = [
    pytest.param(
        FilterCase(
            spread(p("foo"), *TWO_ZONE_NODE),
            four_nodes(),
            TWO_ONE_ZERO_THREE,
            codes(node_a=UNS, node_b=UNS, node_x=OK, node_y=UNS),
        ),
        id="TestMultipleConstraints/two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
    ),
    pytest.param(
        FilterCase(
            spread(p("foo"), *TWO_ZONE_NODE),
            four_nodes(),
            [*TWO_ONE_ZERO_THREE, pod("p-y4", "node-y", foo="")],
            codes(node_a=UNS, node_b=UNS, node_x=UNS, node_y=UNS),
        ),
        id="TestMultipleConstraints/two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
    ),
    pytest.param(
        FilterCase(
            spread(p("foo", "bar"), *ZONE_FOO_NODE_BAR),
            four_nodes(),
            [pod("p-a1", "node-a", foo=""), pod("p-y1", "node-y", bar="")],
            codes(node_a=UNS, node_b=UNS, node_x=OK, node_y=UNS),
        ),
        id="TestMultipleConstraints/Constraints hold different labelSelectors, "
        "spreads = [1/0, 1/0/0/1]",
    ),
    pytest.param(
        FilterCase(
            spread(p("foo", "bar"), *ZONE_FOO_NODE_BAR),
            four_nodes(),
            [
                pod("p-a1", "node-a", foo=""),
                pod("p-x1", "node-x", bar=""),
                pod("p-y1", "node-y", bar=""),
            ],
            codes(node_a=UNS, node_b=UNS, node_x=UNS, node_y=UNS),
        ),
        id="TestMultipleConstraints/Constraints hold different labelSelectors, "
        "spreads = [1/0, 0/0/1/1]",
    ),
    pytest.param(
        FilterCase(
            spread(p("foo", "bar"), *ZONE_FOO_NODE_BAR),
            four_nodes(),
            [
                pod("p-a1", "node-a", foo=""),
                pod("p-a2", "node-a", foo="", bar=""),
                pod("p-y1", "node-y", foo=""),
                pod("p-y2", "node-y", foo="", bar=""),
                pod("p-y3", "node-y", foo=""),
            ],
            codes(node_a=UNS, node_b=OK, node_x=UNS, node_y=UNS),
        ),
        id="TestMultipleConstraints/Constraints hold different labelSelectors, "
        "spreads = [2/3, 1/0/0/1]",
    ),
    pytest.param(
        FilterCase(
            spread(p("bar"), *ZONE_FOO_NODE_BAR),
            four_nodes(),
            [
                pod("p-a1", "node-a", foo=""),
                pod("p-x1", "node-x", bar=""),
                pod("p-y1", "node-y", bar=""),
            ],
            codes(node_a=OK, node_b=OK, node_x=UNS, node_y=UNS),
        ),
        id="TestMultipleConstraints/Constraints hold different labelSelectors but pod doesn't "
        "match itself on 'zone' constraint",
    ),
    pytest.param(
        FilterCase(
            spread(p("foo"), *TWO_ZONE_NODE),
            [
                node("node-a", zone="zone1", node="node-a"),
                node("node-b", zone="zone1", node="node-b"),
                node("node-x", zone="zone2"),
                node("node-y", zone="zone2", node="node-y"),
            ],
            foo_pods("p-a1@node-a", "p-y3@node-y"),
            codes(node_a=UNS, node_b=OK, node_x=UAU, node_y=UNS),
        ),
        id="TestMultipleConstraints/two Constraints on zone and node, absence of label 'node' "
        "on node-x, spreads = [1/1, 1/0/0/1]",
    ),
    pytest.param(
        FilterCase(
            spread(
                spread(make_pod("p").labels(foo="").node_selector(foo="").obj(), TWO_ZONE_NODE[0]),
                TWO_ZONE_NODE[1],
                node_affinity_policy="Ignore",
            ),
            [*FOO_NODES4, node("node-y", zone="zone2", node="node-y")],
            foo_pods("p-a1@node-a", "p-b1@node-b", "p-y1@node-y"),
            codes(node_a=UNS, node_b=UNS, node_x=OK, node_y=UNS),
        ),
        id="TestMultipleConstraints/two node inclusion Constraints, zone: honor/ignore, "
        "node: ignore/ignore",
    ),
    pytest.param(
        FilterCase(
            spread(
                spread(p("foo"), TWO_ZONE_NODE[0], node_taints_policy="Honor"), TWO_ZONE_NODE[1]
            ),
            [*FOO_NODES4, node("node-y", zone="zone2", node="node-y", taint=True)],
            foo_pods("p-a1@node-a", "p-b1@node-b", "p-y1@node-y"),
            codes(node_a=UNS, node_b=UNS, node_x=OK, node_y=UNS),
        ),
        id="TestMultipleConstraints/two node inclusion Constraints, zone: honor/honor, "
        "node: honor/ignore",
    ),
    pytest.param(
        FilterCase(
            spread(make_pod("p").labels(foo="").node_selector(foo="").obj(), *TWO_ZONE_NODE),
            [
                node("node-a", zone="zone1", node="node-a", foo=""),
                node("node-b", zone="zone1", node="node-b"),
                node("node-x", zone="zone2", node="node-x", foo=""),
                node("node-y", zone="zone2", node="node-y", foo="", taint=True),
            ],
            foo_pods("p-a1@node-a", "p-b1@node-b", "p-y1@node-y"),
            codes(node_a=UNS, node_b=OK, node_x=OK, node_y=UNS),
        ),
        id="TestMultipleConstraints/two node inclusion Constraints, zone: honor/ignore, "
        "node: honor/ignore",
    ),
    pytest.param(
        FilterCase(
            spread(
                spread(
                    make_pod("p").labels(foo="").node_selector(foo="").obj(),
                    TWO_ZONE_NODE[0],
                    node_taints_policy="Honor",
                ),
                TWO_ZONE_NODE[1],
                node_affinity_policy="Ignore",
            ),
            [
                node("node-a", zone="zone1", node="node-a", foo=""),
                node("node-b", zone="zone1", node="node-b"),
                node("node-x", zone="zone2", node="node-x", foo=""),
                node("node-y", zone="zone2", node="node-y", foo="", taint=True),
            ],
            foo_pods("p-a1@node-a", "p-b1@node-b", "p-y1@node-y"),
            codes(node_a=UNS, node_b=UNS, node_x=OK, node_y=UNS),
        ),
        id="TestMultipleConstraints/two node inclusion Constraints, zone: honor/honor, "
        "node: ignore/ignore",
    ),
    pytest.param(
        FilterCase(
            spread(p("foo", "bar"), (1, "zone", DNS, BAR), (1, "zone", DNS, FOO)),
            four_nodes(),
            [
                pod("p-a1", "node-a", foo="", bar=""),
                pod("p-a2", "node-a", foo=""),
                pod("p-b1", "node-b", foo="", bar=""),
                pod("p-y1", "node-y", foo=""),
                pod("p-y2", "node-y", foo="", bar=""),
                pod("p-y3", "node-y", foo=""),
            ],
            codes(node_a=UNS, node_b=UNS, node_x=OK, node_y=OK),
        ),
        id="TestMultipleConstraints/two Constraints on zone, spreads = [3/3, 2/1]",
    ),
    pytest.param(
        FilterCase(
            spread(p("foo", "bar"), (1, "zone", DNS, BAR), (1, "zone", DNS, FOO)),
            four_nodes(),
            [
                pod("p-a1", "node-a", foo="", bar=""),
                pod("p-a2", "node-a", foo=""),
                pod("p-b1", "node-b", foo="", bar=""),
                pod("p-y1", "node-y", foo=""),
                pod("p-y2", "node-y", foo="", bar=""),
                pod("p-y3", "node-y", foo=""),
                pod("p-y4", "node-y", foo=""),
            ],
            codes(node_a=UNS, node_b=UNS, node_x=UNS, node_y=UNS),
        ),
        id="TestMultipleConstraints/two Constraints on zone, spreads = [3/4, 2/1]",
    ),
]


@pytest.mark.parametrize("case", MULTI_CASES)
def test_multiple_constraints(case: FilterCase) -> None:
    run = pre_filter(case.pod, case.nodes, case.existing)
    got = filter_all(run)
    assert {n: s.code for n, s in got.items()} == case.want


def test_pre_filter_disabled() -> None:
    """TestPreFilterDisabled: Filter without the PreFilter state is an Error."""
    from tests.builders import build_table

    table = build_table([node("node-a")])
    info = table.infos[0]
    assert info is not None
    plug = plugin(table)
    got = plug.filter(CycleState(), PodInfo(Pod("p")), info)
    assert got == error('reading "PreFilterPodTopologySpread" from cycleState: not found')
    assert plug.filter_vector(CycleState(), PodInfo(Pod("p")), table) is None
