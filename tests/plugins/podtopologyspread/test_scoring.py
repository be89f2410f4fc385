"""PodTopologySpread PreScore / Score / NormalizeScore, re-expressing upstream
scoring_test.go (TestPreScoreSkip, TestPreScoreStateEmptyNodes,
TestPodTopologySpreadScore). Every case runs on the exact and the vector path
(``harness.scores`` asserts equal states and equal final scores).

Services do not exist in kubesched: the cases that select pods through a
Service are re-expressed with a ReplicaSet owner whose selector the cluster
reader reports. Cases that only test a feature gate switched off are left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pytest

from kubesched.api.goformat import go_round
from kubesched.api.types import (
    LABEL_HOSTNAME,
    LABEL_ZONE,
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    Pod,
    TopologySpreadConstraint,
)
from kubesched.framework.config import PodTopologySpreadArgs
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code, error
from kubesched.framework.types import PodInfo
from kubesched.plugins.podtopologyspread.scoring import topology_normalizing_weight
from tests.builders import make_pod, selector
from tests.plugins.podtopologyspread.harness import (
    BAR,
    FOO,
    LIST,
    SYSTEM,
    SelectorReader,
    node,
    node_with,
    plugin,
    pod,
    pre_score_domains,
    rs_owned,
    scores,
)

SA = "ScheduleAnyway"
DNS = "DoNotSchedule"
H = LABEL_HOSTNAME
w = topology_normalizing_weight


def spread(
    base: Pod,
    *constraints: tuple[int, str, str, LabelSelector | None],
    min_domains: int | None = None,
    node_affinity_policy: str | None = None,
    node_taints_policy: str | None = None,
    match_label_keys: tuple[str, ...] = (),
) -> Pod:
    cs = tuple(
        TopologySpreadConstraint(
            m,
            k,
            wu,
            s,
            min_domains=min_domains,
            node_affinity_policy=node_affinity_policy,
            node_taints_policy=node_taints_policy,
            match_label_keys=match_label_keys,
        )
        for m, k, wu, s in constraints
    )
    base.spec = replace(
        base.spec, topology_spread_constraints=base.spec.topology_spread_constraints + cs
    )
    return base


def p(**labels: str) -> Pod:
    return make_pod("p").labels(**labels).obj()


def hn(*names: str, **labels: str) -> list[Node]:
    """Nodes with their hostname label (and these labels)."""
    return [node_with(n, labels, hostname=True) for n in names]


def foo_on(*spec: str) -> list[Pod]:
    out = []
    for s in spec:
        name, on = s.split("@")
        out.append(pod(name, on, foo=""))
    return out


# --------------------------------------------------------------------------- TestPreScoreSkip


@pytest.mark.parametrize(
    ("incoming", "args", "nodes"),
    [
        pytest.param(
            p(),
            LIST,
            hn("node-a", "node-b"),
            id="TestPreScoreSkip/the pod doesn't have soft topology spread Constraints",
        ),
        pytest.param(
            rs_owned(p(foo="bar", baz="sup"), "rs2"),
            PodTopologySpreadArgs((TopologySpreadConstraint(2, "planet", SA),), "List"),
            [node("node-a", planet="mars")],
            id="TestPreScoreSkip/default constraints and a replicaset that doesn't match",
        ),
        pytest.param(
            spread(p(foo=""), (1, H, SA, FOO)),
            LIST,
            [],
            id="no node in the snapshot: Skip",
        ),
    ],
)
def test_pre_score_skip(incoming: Pod, args: PodTopologySpreadArgs, nodes: list[Node]) -> None:
    reader = SelectorReader(
        {"rs1": LabelSelector(match_expressions=(LabelSelectorRequirement("tar", "Exists"),))}
    )
    status, got, _ = scores(incoming, nodes, args=args, reader=reader)
    assert status.code == Code.SKIP
    assert got == {}


def test_pre_score_error_when_selector_does_not_parse() -> None:
    bad = LabelSelector(match_labels={"a b": "c"})
    status, _, _ = scores(spread(p(foo=""), (1, H, SA, bad)), hn("node-a"))
    assert status.code == Code.ERROR
    assert status.message().startswith(
        "calculating preScoreState: obtaining pod's soft topology spread constraints: "
    )


def test_score_without_pre_score_state_is_an_error() -> None:
    from tests.builders import build_table

    table = build_table(hn("node-a"))
    plug = plugin(table)
    info = table.infos[0]
    assert info is not None
    want = error('error reading "PreScorePodTopologySpread" from cycleState: not found')
    assert plug.score(CycleState(), PodInfo(p()), info) == (0, want)
    assert plug.normalize_score(CycleState(), PodInfo(p()), []) == want


# ---------------------------------------------------------------- TestPreScoreStateEmptyNodes


@dataclass
class PreScoreCase:
    pod: Pod
    nodes: list[Node]
    domains: list[dict[str, int]]
    weights: list[float]
    ignored: frozenset[str] = frozenset()
    keys: list[str] = field(default_factory=list)
    args: PodTopologySpreadArgs = LIST
    reader: SelectorReader | None = None


ABX = [
    node("node-a", hostname=True, zone="zone1"),
    node("node-b", hostname=True, zone="zone1"),
    node("node-x", hostname=True, zone="zone2"),
]
ABX_FOO = [
    node("node-a", hostname=True, zone="zone1", foo=""),
    node("node-b", hostname=True, zone="zone1", foo=""),
    node("node-x", hostname=True, zone="zone2"),
]
ABX_TAINT = [
    node("node-a", hostname=True, zone="zone1", foo=""),
    node("node-b", hostname=True, zone="zone1", foo=""),
    node("node-x", hostname=True, zone="zone2", taint=True),
]
RS_FOO = SelectorReader({"rs1": FOO})

PRE_SCORE_CASES = [
    pytest.param(
        PreScoreCase(
            spread(p(foo=""), (1, "zone", SA, FOO), (1, H, SA, FOO)),
            ABX,
            [{"zone1": 0, "zone2": 0}, {}],
            [w(2), w(3)],
            keys=["zone", H],
        ),
        id="TestPreScoreStateEmptyNodes/normal case",
    ),
    pytest.param(
        PreScoreCase(
            spread(p(foo=""), (1, "zone", SA, None)),
            ABX,
            [{"zone1": 0, "zone2": 0}],
            [w(2)],
        ),
        id="TestPreScoreStateEmptyNodes/null selector",
    ),
    pytest.param(
        PreScoreCase(
            spread(p(foo=""), (1, "zone", SA, FOO), (1, H, SA, BAR)),
            [*ABX[:2], node("node-x", hostname=True)],
            [{"zone1": 0}, {}],
            [w(1), w(2)],
            ignored=frozenset({"node-x"}),
        ),
        id="TestPreScoreStateEmptyNodes/node-x doesn't have label zone",
    ),
    pytest.param(
        PreScoreCase(
            rs_owned(p(foo="tar", baz="sup")),
            [
                node_with("node-a", {LABEL_ZONE: "mars"}, hostname=True),
                node_with("node-b", {LABEL_ZONE: "mars"}, hostname=True),
                # Nodes with no zone are not excluded. They are considered a separate zone.
                node("node-c", hostname=True),
                node("node-d", hostname=True),
            ],
            [{}, {"mars": 0, "": 0}],
            [w(4), w(2)],
            keys=[H, LABEL_ZONE],
            args=SYSTEM,
            reader=RS_FOO,
        ),
        id="TestPreScoreStateEmptyNodes/system default constraints and a replicaset",
    ),
    pytest.param(
        PreScoreCase(
            rs_owned(p(foo="tar", baz="sup")),
            [node("node-a", hostname=True, rack="rack1", planet="mars")],
            [{}, {"mars": 0}],
            [w(1), w(1)],
            keys=[H, "planet"],
            args=PodTopologySpreadArgs(
                (
                    TopologySpreadConstraint(1, H, SA),
                    TopologySpreadConstraint(2, "rack", DNS),
                    TopologySpreadConstraint(2, "planet", SA),
                ),
                "List",
            ),
            reader=RS_FOO,
        ),
        id="TestPreScoreStateEmptyNodes/default constraints and a replicaset",
    ),
    pytest.param(
        PreScoreCase(
            spread(
                rs_owned(p(foo="bar", baz="sup")),
                (1, "zone", DNS, BAR),
                (2, "planet", SA, selector(baz="sup")),
            ),
            [node("node-a", planet="mars", galaxy="andromeda")],
            [{"mars": 0}],
            [w(1)],
            keys=["planet"],
            args=PodTopologySpreadArgs((TopologySpreadConstraint(2, "galaxy", SA),), "List"),
            reader=RS_FOO,
        ),
        id="TestPreScoreStateEmptyNodes/default constraints and a replicaset, "
        "but pod has constraints",
    ),
    pytest.param(
        PreScoreCase(
            spread(make_pod("p").labels(foo="").node_selector(foo="").obj(), (1, "zone", SA, BAR)),
            ABX_FOO,
            [{"zone1": 0, "zone2": 0}],
            [w(2)],
        ),
        id="TestPreScoreStateEmptyNodes/NodeAffinityPolicy honored with labelSelectors",
    ),
    pytest.param(
        PreScoreCase(
            spread(
                make_pod("p").labels(foo="").node_selector(foo="").obj(),
                (1, "zone", SA, BAR),
                node_affinity_policy="Ignore",
            ),
            ABX_FOO,
            [{"zone1": 0, "zone2": 0}],
            [w(2)],
        ),
        id="TestPreScoreStateEmptyNodes/NodeAffinityPolicy ignored with labelSelectors",
    ),
    pytest.param(
        PreScoreCase(
            spread(
                make_pod("p").labels(foo="").node_affinity_in("foo", "").obj(),
                (1, "zone", SA, BAR),
            ),
            ABX_FOO,
            [{"zone1": 0, "zone2": 0}],
            [w(2)],
        ),
        id="TestPreScoreStateEmptyNodes/NodeAffinityPolicy honored with nodeAffinity",
    ),
    pytest.param(
        PreScoreCase(
            spread(p(foo=""), (1, "zone", SA, BAR), node_taints_policy="Honor"),
            ABX_TAINT,
            [{"zone1": 0, "zone2": 0}],
            [w(2)],
        ),
        id="TestPreScoreStateEmptyNodes/NodeTaintsPolicy honored",
    ),
    pytest.param(
        PreScoreCase(
            spread(p(foo=""), (1, "zone", SA, BAR)),
            ABX_TAINT,
            [{"zone1": 0, "zone2": 0}],
            [w(2)],
        ),
        id="TestPreScoreStateEmptyNodes/NodeTaintsPolicy ignored",
    ),
]


@pytest.mark.parametrize("case", PRE_SCORE_CASES)
def test_pre_score_state_empty_nodes(case: PreScoreCase) -> None:
    status, _, states = scores(case.pod, case.nodes, args=case.args, reader=case.reader)
    assert status.is_success(), status
    assert states is not None
    s = states[1]
    assert pre_score_domains(s) == case.domains
    assert list(s.weights) == case.weights
    assert s.ignored == case.ignored
    if case.keys:
        assert [c.topology_key for c in s.constraints] == case.keys


# ---------------------------------------------------------------- TestPodTopologySpreadScore


@dataclass
class ScoreCase:
    pod: Pod
    nodes: list[Node]
    want: dict[str, int]
    existing: list[Pod] = field(default_factory=list)
    failed: list[Node] = field(default_factory=list)
    reader: SelectorReader | None = None


TWO_ONE_ZERO_THREE = foo_on(
    "p-a1@node-a", "p-a2@node-a", "p-b1@node-b", "p-d1@node-d", "p-d2@node-d", "p-d3@node-d"
)
FOUR_THREE_TWO_ONE = foo_on(
    "p-a1@node-a",
    "p-a2@node-a",
    "p-a3@node-a",
    "p-a4@node-a",
    "p-b1@node-b",
    "p-b2@node-b",
    "p-b3@node-b",
    "p-c1@node-c",
    "p-c2@node-c",
    "p-d1@node-d",
)
FOUR_TWO_ONE_THREE = foo_on(
    "p-a1@node-a",
    "p-a2@node-a",
    "p-a3@node-a",
    "p-a4@node-a",
    "p-b1@node-b",
    "p-b2@node-b",
    "p-x1@node-x",
    "p-y1@node-y",
    "p-y2@node-y",
    "p-y3@node-y",
)
ZONES4 = [
    node("node-a", hostname=True, zone="zone1"),
    node("node-b", hostname=True, zone="zone1"),
    node("node-x", hostname=True, zone="zone2"),
    node("node-y", hostname=True, zone="zone2"),
]
NODE_ABC_FOO = [
    node("node-a", node="node-a", foo=""),
    node("node-b", node="node-b", foo=""),
    node("node-c", node="node-c"),
]
TWO_ONE_ONE = foo_on("p-a1@node-a", "p-a2@node-a", "p-b1@node-b", "p-c1@node-c")
ZONE_NODE_DIFF = [
    pod("p-a1", "node-a", foo=""),
    pod("p-b1", "node-b", foo="", bar=""),
    pod("p-y1", "node-y", foo=""),
    pod("p-y2", "node-y", bar=""),
]
NODE_ABC_TAINT = [
    node("node-a", node="node-a"),
    node("node-b", node="node-b"),
    node("node-c", node="node-c", taint=True),
]
ABCD_ZONES = [
    node("node-a", hostname=True, zone="zone1"),
    node("node-b", hostname=True, zone="zone1"),
    node("node-c", hostname=True, zone="zone2"),
    node("node-d", hostname=True, zone="zone2"),
]

SCORE_CASES = [
    pytest.param(
        ScoreCase(
            spread(p(foo=""), (1, H, SA, FOO)),
            hn("node-a", "node-b"),
            {"node-a": 100, "node-b": 100},
        ),
        id="TestPodTopologySpreadScore/one constraint on node, no existing pods",
    ),
    pytest.param(
        ScoreCase(
            spread(p(foo=""), (1, H, SA, FOO)),
            hn("node-a"),
            {"node-a": 100},
            foo_on("p-a1@node-a", "p-a2@node-a", "p-b1@node-b"),
            hn("node-b"),
        ),
        id="TestPodTopologySpreadScore/one constraint on node, only one node is candidate",
    ),
    pytest.param(
        ScoreCase(
            spread(p(foo=""), (1, H, SA, FOO)),
            hn("node-a", "node-b"),
            {"node-a": 100, "node-b": 100},
            foo_on("p-a1@node-a", "p-b1@node-b"),
        ),
        id="TestPodTopologySpreadScore/one constraint on node, all nodes have the same number "
        "of matching pods",
    ),
    pytest.param(
        ScoreCase(
            spread(p(foo=""), (1, H, SA, FOO)),
            hn("node-a", "node-b", "node-c", "node-d"),
            {"node-a": 20, "node-b": 60, "node-c": 100, "node-d": 0},
            TWO_ONE_ZERO_THREE,
        ),
        id="TestPodTopologySpreadScore/one constraint on node, all 4 nodes are candidates",
    ),
    pytest.param(
        ScoreCase(
            spread(p(foo=""), (1, H, SA, None)),
            hn("node-a", "node-b", "node-c", "node-d"),
            {"node-a": 100, "node-b": 100, "node-c": 100, "node-d": 100},
            TWO_ONE_ZERO_THREE,
        ),
        id="TestPodTopologySpreadScore/one constraint on node, null selector",
    ),
    pytest.param(
        ScoreCase(
            spread(p(foo=""), (2, H, SA, FOO)),
            hn("node-a", "node-b", "node-c", "node-d"),
            {"node-a": 33, "node-b": 66, "node-c": 100, "node-d": 16},
            TWO_ONE_ZERO_THREE,
        ),
        id="TestPodTopologySpreadScore/one constraint on node, all 4 nodes are candidates, "
        "maxSkew=2",
    ),
    pytest.param(
        ScoreCase(
            spread(p(foo=""), (3, H, SA, FOO)),
            hn("node-a", "node-b", "node-c", "node-d"),
            {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100},
            FOUR_THREE_TWO_ONE,
        ),
        id="TestPodTopologySpreadScore/one constraint on node, all 4 nodes are candidates, "
        "maxSkew=3",
    ),
    pytest.param(
        ScoreCase(
            rs_owned(p(foo="")),
            hn("node-a", "node-b", "node-c", "node-d"),
            {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100},
            FOUR_THREE_TWO_ONE,
            reader=SelectorReader({"rs1": selector(foo="")}),
        ),
        id="TestPodTopologySpreadScore/system defaulting, nodes don't have zone, pods match "
        "service (a ReplicaSet here)",
    ),
    pytest.param(
        ScoreCase(
            rs_owned(p(foo="")),
            hn("node-a", "node-b", "node-c", "node-d"),
            {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100},
            FOUR_THREE_TWO_ONE,
        ),
        id="system defaulting with a ReplicaSet owner the reader cannot describe: "
        "the pod's labels stand in for its selector",
    ),
    pytest.param(
        ScoreCase(
            p(foo=""),
            hn("node-a", "node-b", "node-c", "node-d"),
            {},
            FOUR_THREE_TWO_ONE,
        ),
        id="system defaulting without a controller: no default constraints (PreScore skips)",
    ),
    pytest.param(
        ScoreCase(
            spread(p(foo=""), (1, H, SA, FOO)),
            hn("node-a", "node-b", "node-x"),
            {"node-a": 33, "node-b": 83, "node-x": 100},
            FOUR_TWO_ONE_THREE,
            hn("node-y"),
        ),
        id="TestPodTopologySpreadScore/one constraint on node, 3 out of 4 nodes are candidates",
    ),
    pytest.param(
        ScoreCase(
            spread(p(foo=""), (1, H, SA, FOO)),
            [
                node("node-a", hostname=True),
                node("node-b", n="node-b"),
                node("node-x", hostname=True),
            ],
            {"node-a": 16, "node-b": 0, "node-x": 100},
            FOUR_TWO_ONE_THREE,
            hn("node-y"),
        ),
        id="TestPodTopologySpreadScore/one constraint on node, 3 out of 4 nodes are candidates, "
        "one node doesn't match topology key",
    ),
    pytest.param(
        ScoreCase(
            spread(p(foo=""), (1, "zone", SA, FOO)),
            ZONES4[:3],
            {"node-a": 75, "node-b": 75, "node-x": 100},
            FOUR_TWO_ONE_THREE,
            ZONES4[3:],
        ),
        id="TestPodTopologySpreadScore/one constraint on zone, 3 out of 4 nodes are candidates",
    ),
    pytest.param(
        ScoreCase(
            spread(p(foo=""), (1, "zone", SA, FOO), (1, H, SA, FOO)),
            [ZONES4[0], ZONES4[2]],
            {"node-a": 100, "node-x": 63},
            foo_on(
                "p-a1@node-a",
                "p-a2@node-a",
                "p-b1@node-b",
                "p-x1@node-x",
                "p-x2@node-x",
                "p-y1@node-y",
                "p-y2@node-y",
                "p-y3@node-y",
                "p-y4@node-y",
            ),
            [ZONES4[1], ZONES4[3]],
        ),
        id="TestPodTopologySpreadScore/two Constraints on zone and node, 2 out of 4 nodes are "
        "candidates",
    ),
    pytest.param(
        ScoreCase(
            spread(p(foo="", bar=""), (1, "zone", SA, FOO), (1, "zone", SA, BAR)),
            [node("node-a", zone="zone1"), node("node-x", zone="zone2")],
            {"node-a": 85, "node-x": 100},
            [
                pod("p-a1", "node-a", foo="", bar=""),
                pod("p-a2", "node-a", foo=""),
                pod("p-b1", "node-b", foo="", bar=""),
                pod("p-y1", "node-y", foo=""),
                pod("p-y2", "node-y", foo="", bar=""),
                pod("p-y3", "node-y", foo=""),
            ],
            [node("node-b", zone="zone1"), node("node-y", zone="zone2")],
        ),
        id="TestPodTopologySpreadScore/two Constraints on zone, 2 out of 4 nodes are candidates",
    ),
    pytest.param(
        ScoreCase(
            spread(p(foo="", bar=""), (1, "zone", SA, FOO), (1, H, SA, BAR)),
            ZONES4,
            {"node-a": 60, "node-b": 20, "node-x": 100, "node-y": 60},
            ZONE_NODE_DIFF,
        ),
        id="TestPodTopologySpreadScore/two Constraints on zone and node, with different "
        "labelSelectors",
    ),
    pytest.param(
        ScoreCase(
            spread(p(foo="", bar=""), (1, "zone", SA, FOO), (1, H, SA, BAR)),
            ZONES4,
            {"node-a": 100, "node-b": 60, "node-x": 40, "node-y": 0},
            [
                pod("p-b1", "node-b", bar=""),
                pod("p-x1", "node-x", foo=""),
                pod("p-y1", "node-y", foo="", bar=""),
            ],
        ),
        id="TestPodTopologySpreadScore/two Constraints on zone and node, with different "
        "labelSelectors, some nodes have 0 pods",
    ),
    pytest.param(
        ScoreCase(
            spread(p(foo="", bar=""), (1, "zone", SA, FOO), (1, H, SA, BAR)),
            ZONES4[:3],
            {"node-a": 50, "node-b": 25, "node-x": 100},
            ZONE_NODE_DIFF,
            ZONES4[3:],
        ),
        id="TestPodTopologySpreadScore/two Constraints on zone and node, with different "
        "labelSelectors, 3 out of 4 nodes are candidates",
    ),
    pytest.param(
        ScoreCase(
            spread(p(foo=""), (1, H, SA, FOO)),
            hn("node-a", "node-b"),
            {"node-a": 100, "node-b": 33},
            [
                pod("p-a1", "node-a", "ns1", foo=""),
                pod("p-a2", "node-a", foo=""),
                pod("p-b1", "node-b", foo=""),
                pod("p-b2", "node-b", foo=""),
            ],
        ),
        id="TestPodTopologySpreadScore/existing pods in a different namespace do not count",
    ),
    pytest.param(
        ScoreCase(
            spread(p(foo=""), (1, H, SA, FOO)),
            hn("node-a", "node-b"),
            {"node-a": 100, "node-b": 0},
            [pod("p-a", "node-a", terminating=True, foo=""), pod("p-b", "node-b", foo="")],
        ),
        id="TestPodTopologySpreadScore/terminating Pods should be excluded",
    ),
    pytest.param(
        ScoreCase(
            spread(p(foo=""), (2, "node", SA, FOO), min_domains=10),
            [node(n, node=n) for n in ("node-a", "node-b", "node-c")],
            {"node-a": 75, "node-b": 75, "node-c": 100},
            foo_on("p-a1@node-a", "p-a2@node-a", "p-b1@node-b", "p-b2@node-b", "p-c1@node-c"),
        ),
        id="TestPodTopologySpreadScore/minDomains has no effect when ScheduleAnyway",
    ),
    pytest.param(
        ScoreCase(
            spread(make_pod("p").labels(foo="").node_selector(foo="").obj(), (1, "node", SA, FOO)),
            NODE_ABC_FOO,
            {"node-a": 0, "node-b": 33, "node-c": 100},
            TWO_ONE_ONE,
        ),
        id="TestPodTopologySpreadScore/NodeAffinityPolicy honoed with labelSelectors",
    ),
    pytest.param(
        ScoreCase(
            spread(
                make_pod("p").labels(foo="").node_selector(foo="").obj(),
                (1, "node", SA, FOO),
                node_affinity_policy="Ignore",
            ),
            NODE_ABC_FOO,
            {"node-a": 66, "node-b": 100, "node-c": 100},
            TWO_ONE_ONE,
        ),
        id="TestPodTopologySpreadScore/NodeAffinityPolicy ignored with labelSelectors",
    ),
    pytest.param(
        ScoreCase(
            spread(
                make_pod("p").labels(foo="").node_affinity_in("foo", "").obj(),
                (1, "node", SA, FOO),
            ),
            NODE_ABC_FOO,
            {"node-a": 0, "node-b": 33, "node-c": 100},
            TWO_ONE_ONE,
        ),
        id="TestPodTopologySpreadScore/NodeAffinityPolicy honoed with nodeAffinity",
    ),
    pytest.param(
        ScoreCase(
            spread(
                make_pod("p").labels(foo="").node_affinity_in("foo", "").obj(),
                (1, "node", SA, FOO),
                node_affinity_policy="Ignore",
            ),
            NODE_ABC_FOO,
            {"node-a": 66, "node-b": 100, "node-c": 100},
            TWO_ONE_ONE,
        ),
        id="TestPodTopologySpreadScore/NodeAffinityPolicy ignored with nodeAffinity",
    ),
    pytest.param(
        ScoreCase(
            spread(p(foo=""), (1, "node", SA, FOO), node_taints_policy="Honor"),
            NODE_ABC_TAINT,
            {"node-a": 0, "node-b": 33, "node-c": 100},
            TWO_ONE_ONE,
        ),
        id="TestPodTopologySpreadScore/NodeTaintsPolicy honored",
    ),
    pytest.param(
        ScoreCase(
            spread(p(foo=""), (1, "node", SA, FOO)),
            NODE_ABC_TAINT,
            {"node-a": 66, "node-b": 100, "node-c": 100},
            TWO_ONE_ONE,
        ),
        id="TestPodTopologySpreadScore/NodeTaintsPolicy ignored",
    ),
    pytest.param(
        ScoreCase(
            spread(
                spread(
                    p(foo="", bar=""), (1, "zone", SA, LabelSelector()), match_label_keys=("foo",)
                ),
                (1, H, SA, LabelSelector()),
                match_label_keys=("bar",),
            ),
            ABCD_ZONES,
            {"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100},
            [
                pod("p-a1", "node-a", foo=""),
                pod("p-b1", "node-b", foo="", bar=""),
                pod("p-y1", "node-c", foo=""),
                pod("p-y2", "node-c", bar=""),
            ],
        ),
        id="TestPodTopologySpreadScore/matchLabelKeys ANDed with LabelSelector when "
        "LabelSelector is empty",
    ),
    pytest.param(
        ScoreCase(
            spread(
                spread(p(foo="", bar="", baz=""), (1, "zone", SA, FOO)),
                (1, H, SA, BAR),
                match_label_keys=("baz",),
            ),
            ABCD_ZONES,
            {"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100},
            [
                pod("p-a1", "node-a", foo=""),
                pod("p-b1", "node-b", foo="", bar="", baz=""),
                pod("p-c1", "node-c", foo=""),
                pod("p-c2", "node-c", bar=""),
                pod("p-d3", "node-c", bar="", baz=""),
            ],
        ),
        id="TestPodTopologySpreadScore/matchLabelKeys ANDed with LabelSelector when "
        "LabelSelector isn't empty",
    ),
]


@pytest.mark.parametrize("case", SCORE_CASES)
def test_pod_topology_spread_score(case: ScoreCase) -> None:
    # Upstream runs this table with defaultingType System.
    status, got, _ = scores(
        case.pod, case.nodes, case.failed, case.existing, SYSTEM, reader=case.reader
    )
    if not case.want:
        assert status.code == Code.SKIP
        return
    assert status.is_success(), status
    assert got == case.want


def test_system_defaults_score_nodes_without_zone_as_one_domain() -> None:
    """With system defaults a node lacking the zone label is kept (hostname spreading
    still applies) and forms the "" zone with nodes whose zone label is "";
    the "" domain counts in the zone weight but never in a score."""
    nodes = [
        node_with("a", {LABEL_ZONE: "z1"}, hostname=True),
        node("b", hostname=True),
        node_with("c", {LABEL_ZONE: ""}, hostname=True),
    ]
    existing = [rs_owned(pod(f"x{i}", on, app="w")) for i, on in enumerate(["a", "b", "b", "c"])]
    status, got, states = scores(rs_owned(p(app="w")), nodes, existing=existing)
    assert status.is_success()
    assert states is not None
    assert pre_score_domains(states[1]) == [{}, {"z1": 1, "": 3}]
    # a: 1*w(3)+2 + 1*w(2)+4 ; b: 2*w(3)+2 (no zone) ; c: 1*w(3)+2 + 3*w(2)+4
    raw = {
        "a": go_round(1 * w(3) + 2 + 1 * w(2) + 4),
        "b": go_round(2 * w(3) + 2),
        "c": go_round(1 * w(3) + 2 + 3 * w(2) + 4),
    }
    lo, hi = min(raw.values()), max(raw.values())
    assert got == {n: 100 * (hi + lo - s) // hi for n, s in raw.items()}


def test_go_round_halves_away_from_zero() -> None:
    assert [go_round(x) for x in (0.0, 0.49999999999999994, 0.5, 1.5, 2.5, 2.4999)] == [
        0,
        0,
        1,
        2,
        3,
        2,
    ]
