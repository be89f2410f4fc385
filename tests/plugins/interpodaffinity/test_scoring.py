"""InterPodAffinity PreScore / Score / NormalizeScore, re-expressing upstream
scoring_test.go (v1.36): TestPreferredAffinity and
TestPreferredAffinityWithHardPodAffinitySymmetricWeight. Every case runs the
exact and the vector path (``run_score``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from kubesched.api.types import Affinity, Node, Pod
from kubesched.framework.config import InterPodAffinityArgs
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import NodeSet
from kubesched.framework.results import NodeScore
from kubesched.framework.status import SKIP, SUCCESS, Code, Status
from kubesched.framework.types import PodInfo
from kubesched.plugins.interpodaffinity import InterPodAffinity
from tests.builders import build_table, rows_named
from tests.plugins.fakes import table_infos
from tests.plugins.interpodaffinity.helpers import (
    affinity,
    fake_handle,
    make_plugin,
    node,
    node_with,
    pod,
    run_score,
    sel_exprs,
    sel_in,
    term,
    wterm,
)

CHINA = {"region": "China"}
INDIA = {"region": "India"}
AZ1 = {"az": "az1"}
AZ2 = {"az": "az2"}
CHINA_AZ1 = {"region": "China", "az": "az1"}
S1 = {"security": "S1"}
S2 = {"security": "S2"}
TEAM1 = sel_in("team", "team1")
BAD = "{{.bad-value.}}"

STAY_S1_REGION = affinity(preferred=[wterm(5, term(sel_in("security", "S1"), "region"))])
STAY_S2_REGION = affinity(preferred=[wterm(6, term(sel_in("security", "S2"), "region"))])
AFFINITY3 = affinity(
    preferred=[
        wterm(
            8,
            term(sel_exprs(("security", "NotIn", ("S1",)), ("security", "In", ("S2",))), "region"),
        ),
        wterm(
            2,
            term(sel_exprs(("security", "Exists", ()), ("wrongkey", "DoesNotExist", ())), "region"),
        ),
    ]
)
HARD_AFFINITY = affinity(
    required=[
        term(sel_in("security", "S1", "value2"), "region"),
        term(sel_exprs(("security", "Exists", ()), ("wrongkey", "DoesNotExist", ())), "region"),
    ]
)
AWAY_S1_AZ = affinity(preferred_anti=[wterm(5, term(sel_in("security", "S1"), "az"))])
AWAY_S2_AZ = affinity(preferred_anti=[wterm(5, term(sel_in("security", "S2"), "az"))])
STAY_S1_AWAY_S2 = affinity(
    preferred=[wterm(8, term(sel_in("security", "S1"), "region"))],
    preferred_anti=[wterm(5, term(sel_in("security", "S2"), "az"))],
)
NS_SEL_TERM = term(
    sel_in("security", "S1"), "region", namespaces=["subteam2.team2"], ns_selector=TEAM1
)
AFFINITY_NS_SELECTOR = affinity(preferred=[wterm(5, NS_SEL_TERM)])
ANTI_AFFINITY_NS_SELECTOR = affinity(preferred_anti=[wterm(5, NS_SEL_TERM)])
INVALID_AFFINITY = affinity(preferred=[wterm(8, term(sel_in("security", BAD), "region"))])
INVALID_ANTI = affinity(preferred_anti=[wterm(5, term(sel_in("security", BAD), "az"))])


def nodes(*labels: dict[str, str]) -> list[Node]:
    return [node_with(f"node{i + 1}", lbl) for i, lbl in enumerate(labels)]


def on(
    nodename: str,
    labels: dict[str, str] | None = None,
    aff: Affinity | None = None,
    ns: str = "default",
) -> tuple[str, dict[str, str] | None, Affinity | None, str]:
    return (nodename, labels, aff, ns)


@dataclass
class Case:
    incoming: Pod
    placed: list[tuple[str, dict[str, str] | None, Affinity | None, str]]
    nodes: list[Node]
    want: list[int] = field(default_factory=list)
    status: Status = SUCCESS
    message: str = ""
    ignore_existing: bool = False


PREFERRED = [
    pytest.param(
        Case(pod(labels=S1), [], nodes(CHINA, INDIA, AZ1), status=SKIP),
        id="TestPreferredAffinity/all nodes are same priority as Affinity is nil",
    ),
    pytest.param(
        Case(
            pod(labels=S1, aff=STAY_S1_REGION),
            [on("node1", S1), on("node2", S2), on("node3", S1)],
            nodes(CHINA, INDIA, AZ1),
            [100, 0, 0],
        ),
        id="TestPreferredAffinity/Affinity: pod that matches topology key & pods in nodes will "
        "get high score comparing to otherswhich doesn't match either pods in nodes or in "
        "topology key",
    ),
    pytest.param(
        Case(
            pod(aff=STAY_S1_REGION),
            [on("node1", S1)],
            nodes(CHINA, CHINA_AZ1, INDIA),
            [100, 100, 0],
        ),
        id="TestPreferredAffinity/All the nodes that have the same topology key & label value "
        "with one of them has an existing pod that match the affinity rules, have the same score",
    ),
    pytest.param(
        Case(
            pod(labels=S1, aff=STAY_S2_REGION),
            [
                on("node1", S2),
                on("node1", S2),
                on("node2", S2),
                on("node3", S2),
                on("node4", S2),
                on("node5", S2),
            ],
            nodes(CHINA, INDIA, CHINA, CHINA, INDIA),
            [100, 0, 100, 100, 0],
        ),
        id="TestPreferredAffinity/Affinity: nodes in one region has more matching pods comparing "
        "to other region, so the region which has more matches will get high score",
    ),
    pytest.param(
        Case(
            pod(labels=S1, aff=AFFINITY3),
            [on("node1", S1), on("node2", S2), on("node3", S1)],
            nodes(CHINA, INDIA, AZ1),
            [20, 100, 0],
        ),
        id="TestPreferredAffinity/Affinity: different Label operators and values for pod "
        "affinity scheduling preference, including some match failures ",
    ),
    pytest.param(
        Case(
            pod(labels=S2),
            [on("node1", S1, STAY_S1_REGION), on("node2", S2, STAY_S2_REGION)],
            nodes(CHINA, INDIA, AZ1),
            [0, 100, 0],
        ),
        id="TestPreferredAffinity/Affinity symmetry: considered only the preferredDuring"
        "SchedulingIgnoredDuringExecution in pod affinity symmetry",
    ),
    pytest.param(
        Case(
            pod(namespace="subteam1.team1", labels=S1),
            [on("node1", S1, AFFINITY_NS_SELECTOR), on("node2", S2, STAY_S2_REGION)],
            nodes(CHINA, INDIA, AZ1),
            [100, 0, 0],
        ),
        id="TestPreferredAffinity/Affinity symmetry with namespace selector",
    ),
    pytest.param(
        Case(
            pod(namespace="subteam1.team1", labels=S1),
            [on("node1", S1, ANTI_AFFINITY_NS_SELECTOR), on("node2", S2, STAY_S2_REGION)],
            nodes(CHINA, INDIA, AZ1),
            [0, 100, 100],
        ),
        id="TestPreferredAffinity/AntiAffinity symmetry with namespace selector",
    ),
    pytest.param(
        Case(
            pod(labels=S1),
            [on("node1", S1, HARD_AFFINITY), on("node2", S2, HARD_AFFINITY)],
            nodes(CHINA, INDIA, AZ1),
            [100, 100, 0],
        ),
        id="TestPreferredAffinity/Affinity symmetry: considered RequiredDuringScheduling"
        "IgnoredDuringExecution in pod affinity symmetry",
    ),
    pytest.param(
        Case(
            pod(labels=S1, aff=AWAY_S1_AZ),
            [on("node1", S1), on("node2", S2)],
            nodes(AZ1, CHINA),
            [0, 100],
        ),
        id="TestPreferredAffinity/Anti Affinity: pod that does not match existing pods in node "
        "will get high score ",
    ),
    pytest.param(
        Case(
            pod(labels=S1, aff=AWAY_S1_AZ),
            [on("node1", S1), on("node2", S1)],
            nodes(AZ1, CHINA),
            [0, 100],
        ),
        id="TestPreferredAffinity/Anti Affinity: pod that does not match topology key & match "
        "the pods in nodes will get higher score comparing to others ",
    ),
    pytest.param(
        Case(
            pod(labels=S1, aff=AWAY_S1_AZ),
            [on("node1", S1), on("node1", S1), on("node2", S2)],
            nodes(AZ1, INDIA),
            [0, 100],
        ),
        id="TestPreferredAffinity/Anti Affinity: one node has more matching pods comparing to "
        "other node, so the node which has more unmatches will get high score",
    ),
    pytest.param(
        Case(
            pod(labels=S2),
            [on("node1", S1, AWAY_S2_AZ), on("node2", S2, AWAY_S1_AZ)],
            nodes(AZ1, AZ2),
            [0, 100],
        ),
        id="TestPreferredAffinity/Anti Affinity symmetry: the existing pods in node which has "
        "anti affinity match will get high score",
    ),
    pytest.param(
        Case(
            pod(labels=S1, aff=STAY_S1_AWAY_S2),
            [on("node1", S1), on("node2", S1)],
            nodes(CHINA, AZ1),
            [100, 0],
        ),
        id="TestPreferredAffinity/Affinity and Anti Affinity: considered only preferredDuring"
        "SchedulingIgnoredDuringExecution in both pod affinity & anti affinity",
    ),
    pytest.param(
        Case(
            pod(labels=S1, aff=STAY_S1_AWAY_S2),
            [
                on("node1", S1),
                on("node1", S1),
                on("node2", S1),
                on("node3", S1),
                on("node3", S1),
                on("node4", S1),
                on("node5", S1),
            ],
            nodes(CHINA_AZ1, INDIA, CHINA, CHINA, INDIA),
            [100, 0, 100, 100, 0],
        ),
        id="TestPreferredAffinity/Affinity and Anti Affinity: considering both affinity and "
        "anti-affinity, the pod to schedule and existing pods have the same labels",
    ),
    pytest.param(
        Case(
            pod(labels=S1, aff=STAY_S1_AWAY_S2),
            [
                on("node1", S1),
                on("node2", S2),
                on("node3", None, STAY_S1_AWAY_S2),
                on("node4", None, AWAY_S1_AZ),
            ],
            nodes(CHINA, AZ1, INDIA, AZ2),
            [100, 0, 100, 0],
        ),
        id="TestPreferredAffinity/Affinity and Anti Affinity and symmetry: considered only "
        "preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity "
        "& symmetry",
    ),
    pytest.param(
        Case(
            pod(labels=S1),
            [on("node1", S1), on("node2", None, STAY_S1_AWAY_S2)],
            nodes(CHINA, CHINA),
            [0, 0],
        ),
        id="TestPreferredAffinity/Avoid panic when partial nodes in a topology don't have pods "
        "with affinity",
    ),
    pytest.param(
        Case(
            pod(aff=INVALID_AFFINITY),
            [],
            nodes(CHINA, CHINA),
            status=Status(Code.ERROR),
            message='Invalid value: "{{.bad-value.}}"',
        ),
        id="TestPreferredAffinity/invalid Affinity fails PreScore",
    ),
    pytest.param(
        Case(
            pod(aff=INVALID_ANTI),
            [],
            nodes(CHINA, CHINA),
            status=Status(Code.ERROR),
            message='Invalid value: "{{.bad-value.}}"',
        ),
        id="TestPreferredAffinity/invalid AntiAffinity fails PreScore",
    ),
    pytest.param(
        Case(
            pod(namespace="subteam1.team1", labels=S1, aff=AFFINITY_NS_SELECTOR),
            [
                on("node1", S1, ns="subteam1.team1"),
                on("node1", S1, ns="subteam1.team1"),
                on("node1", S1, ns="subteam1.team2"),
                on("node2", S1, ns="subteam2.team1"),
            ],
            nodes(CHINA, INDIA),
            [100, 0],
        ),
        id="TestPreferredAffinity/Affinity with pods matching NamespaceSelector",
    ),
    pytest.param(
        Case(
            pod(namespace="subteam1.team1", labels=S1, aff=AFFINITY_NS_SELECTOR),
            [
                on("node1", S1, ns="subteam1.team1"),
                on("node1", S1, ns="subteam1.team1"),
                on("node1", S1, ns="subteam2.team2"),
                on("node2", S1, ns="subteam2.team1"),
            ],
            nodes(CHINA, INDIA),
            [100, 0],
        ),
        id="TestPreferredAffinity/Affinity with pods matching both NamespaceSelector and "
        "Namespaces fields",
    ),
    pytest.param(
        Case(
            pod(namespace="subteam1.team1", labels=S1, aff=ANTI_AFFINITY_NS_SELECTOR),
            [
                on("node1", S1, ns="subteam1.team1"),
                on("node1", S1, ns="subteam1.team1"),
                on("node1", S1, ns="subteam1.team2"),
                on("node2", S1, ns="subteam2.team1"),
            ],
            nodes(CHINA, INDIA),
            [0, 100],
        ),
        id="TestPreferredAffinity/Affinity with pods matching NamespaceSelector (anti-affinity)",
    ),
    pytest.param(
        Case(
            pod(namespace="subteam1.team1", labels=S1, aff=ANTI_AFFINITY_NS_SELECTOR),
            [
                on("node1", S1, ns="subteam1.team1"),
                on("node1", S1, ns="subteam1.team1"),
                on("node1", S1, ns="subteam2.team2"),
                on("node2", S1, ns="subteam2.team1"),
            ],
            nodes(CHINA, INDIA),
            [0, 100],
        ),
        id="TestPreferredAffinity/Affinity with pods matching both NamespaceSelector and "
        "Namespaces fields (anti-affinity)",
    ),
    pytest.param(
        Case(
            pod(labels=S2),
            [on("node1", S1, STAY_S1_AWAY_S2), on("node2", S2, STAY_S2_REGION)],
            nodes(CHINA, INDIA),
            status=SKIP,
            ignore_existing=True,
        ),
        id="TestPreferredAffinity/Ignore preferred terms of existing pods",
    ),
    pytest.param(
        Case(
            pod(labels=S2),
            [on("node1", S1, STAY_S1_AWAY_S2), on("node2", S2, STAY_S2_REGION)],
            nodes(CHINA, INDIA),
            [0, 100],
        ),
        id="TestPreferredAffinity/Do not ignore preferred terms of existing pods",
    ),
    pytest.param(
        Case(pod(labels=S2), [], [], status=SKIP),
        id="TestPreferredAffinity/No nodes to score",
    ),
]


def placed_pods(case: Case) -> list[Pod]:
    return [
        pod(f"e{i}", ns, labels=lbl, node=n, aff=a) for i, (n, lbl, a, ns) in enumerate(case.placed)
    ]


@pytest.mark.parametrize("case", PREFERRED)
def test_preferred_affinity(case: Case) -> None:
    args = InterPodAffinityArgs(1, case.ignore_existing)
    status, scores = run_score(case.incoming, placed_pods(case), case.nodes, args)
    assert status.code == case.status.code
    assert case.message in status.message()
    if status.is_success():
        assert scores == {n.name: w for n, w in zip(case.nodes, case.want, strict=True)}


HARD_POD_AFFINITY = affinity(
    required=[
        term(
            sel_in("service", "S1"),
            "region",
            namespaces=["default", "subteam2.team2"],
            ns_selector=TEAM1,
        )
    ]
)
SERVICE_S1 = {"service": "S1"}


@pytest.mark.parametrize(
    ("namespace", "weight", "want"),
    [
        pytest.param(
            "default",
            1,
            [100, 100, 0],
            id="TestPreferredAffinityWithHardPodAffinitySymmetricWeight/with default weight",
        ),
        pytest.param(
            "default",
            0,
            None,
            id="TestPreferredAffinityWithHardPodAffinitySymmetricWeight/with zero weight",
        ),
        pytest.param(
            "subteam1.team2",
            1,
            None,
            id="TestPreferredAffinityWithHardPodAffinitySymmetricWeight/with no matching namespace",
        ),
        pytest.param(
            "subteam1.team1",
            1,
            [100, 100, 0],
            id="TestPreferredAffinityWithHard"
            "PodAffinitySymmetricWeight/with matching NamespaceSelector",
        ),
        pytest.param(
            "subteam2.team2",
            1,
            [100, 100, 0],
            id="TestPreferredAffinityWithHardPodAffinitySymmetricWeight/with matching Namespaces",
        ),
    ],
)
def test_preferred_affinity_with_hard_pod_affinity_symmetric_weight(
    namespace: str, weight: int, want: list[int] | None
) -> None:
    existing = [
        pod("e1", node="node1", aff=HARD_POD_AFFINITY),
        pod("e2", node="node2", aff=HARD_POD_AFFINITY),
    ]
    ns = nodes(CHINA, INDIA, AZ1)
    status, scores = run_score(
        pod(namespace=namespace, labels=SERVICE_S1), existing, ns, InterPodAffinityArgs(weight)
    )
    if want is None:
        assert status == SKIP
    else:
        assert status.is_success()
        assert scores == {n.name: w for n, w in zip(ns, want, strict=True)}


def test_hard_pod_affinity_weight_scales_raw_score() -> None:
    """The symmetric weight multiplies each matching required term of an existing pod."""
    ns = nodes(CHINA, INDIA)
    existing = [pod("e1", node="node1", aff=HARD_POD_AFFINITY)]
    table = build_table(ns, existing)
    plugin = make_plugin(table, InterPodAffinityArgs(7))
    cs = CycleState()
    infos = table_infos(table)
    rows = rows_named(table, [n.name for n in ns])
    pi = PodInfo(pod(labels=SERVICE_S1))
    assert plugin.pre_score(cs, pi, NodeSet(table, rows, infos)).is_success()
    assert [plugin.score(cs, pi, i)[0] for i in infos] == [7, 0]


def test_normalize_min_max_with_negative_scores() -> None:
    """Upstream NormalizeScore maps [min, max] to [0, 100] in float64 and truncates."""
    ns = nodes({"z": "a"}, {"z": "b"}, {"z": "c"})
    existing = [pod("e1", node="node1", labels=S1), pod("e2", node="node3", labels=S2)]
    incoming = pod(
        aff=affinity(
            preferred=[wterm(3, term(sel_in("security", "S2"), "z"))],
            preferred_anti=[wterm(7, term(sel_in("security", "S1"), "z"))],
        )
    )
    # raw: node1 -7, node2 0, node3 3 -> (x+7)/10*100 = 0, 70, 100
    status, scores = run_score(incoming, existing, ns)
    assert status.is_success()
    assert scores == {"node1": 0, "node2": 70, "node3": 100}


def test_score_without_pre_score_errors() -> None:
    table = build_table([node("n1")])
    plugin = make_plugin(table)
    info = table.infos[table.row_of["n1"]]
    assert info is not None
    _, status = plugin.score(CycleState(), PodInfo(pod()), info)
    assert status.code == Code.ERROR
    assert (
        status.message() == 'failed to read "PreScoreInterPodAffinity" from cycleState: not found'
    )
    lst = [NodeScore("n1", 0)]
    assert plugin.normalize_score(CycleState(), PodInfo(pod()), lst).code == Code.ERROR


@pytest.mark.parametrize(
    ("args", "error"),
    [
        pytest.param(InterPodAffinityArgs(-1), ValueError, id="negative hardPodAffinityWeight"),
        pytest.param(InterPodAffinityArgs(101), ValueError, id="hardPodAffinityWeight above 100"),
    ],
)
def test_new_validates_args(args: InterPodAffinityArgs, error: type[Exception]) -> None:
    with pytest.raises(error, match=r"not in valid range \[0, 100\]"):
        InterPodAffinity(args, fake_handle())


def test_new_defaults_and_name() -> None:
    p = InterPodAffinity(None, fake_handle())
    assert p.name == "InterPodAffinity"
    assert p.args == InterPodAffinityArgs(1, False)
    assert p.pre_filter_extensions() is p
    assert p.score_extensions() is p
    with pytest.raises(TypeError):
        InterPodAffinity(object(), fake_handle())  # type: ignore[arg-type]


def test_node_without_labels_scores_zero() -> None:
    """Nodes missing every topology key get raw score 0 (and the minimum here)."""
    status, scores = run_score(
        pod(aff=STAY_S1_REGION),
        [pod("e", node="node1", labels=S1)],
        [node("node1", region="r"), node("node2")],
    )
    assert status.is_success()
    assert scores == {"node1": 100, "node2": 0}
