"""InterPodAffinity PreFilter / Filter / AddPod / RemovePod, re-expressing upstream
filtering_test.go (v1.36): TestRequiredAffinitySingleNode,
TestRequiredAffinityMultipleNodes, TestPreFilterDisabled,
TestPreFilterStateAddRemovePod, TestPreFilterStateClone,
TestGetTPMapMatchingIncomingAffinityAntiAffinity.

Every Filter case runs the exact and the vector path (``run_filter``).
Upstream's pods live in namespace ""; here they live in "default" (not among
the known namespaces, like "" upstream).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from kubesched.api.types import LabelSelector, Node, Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import SKIP, SUCCESS, Code, Status, unresolvable, unschedulable
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.interpodaffinity import (
    PRE_FILTER_STATE_KEY,
    InterPodAffinity,
)
from kubesched.plugins.interpodaffinity.filtering import PreFilterState
from tests.builders import build_table
from tests.plugins.fakes import table_infos
from tests.plugins.interpodaffinity.helpers import (
    affinity,
    make_plugin,
    node,
    node_with,
    pod,
    run_filter,
    sel_exists,
    sel_exprs,
    sel_in,
    sel_not_in,
    term,
)

AFF = unresolvable("node(s) didn't match pod affinity rules")
ANTI = unschedulable("node(s) didn't match pod anti-affinity rules")
EXIST = unschedulable("node(s) didn't satisfy existing pods anti-affinity rules")
OK = SUCCESS

POD_LABEL = {"service": "securityscan"}
POD_LABEL2 = {"security": "S1"}
NODE1 = node("node1", region="r1", zone="z11")
BAD = "{{.bad-value.}}"
BAD_MSG = (
    'parsing pod: requiredAffinityTerms: values[0][service]: Invalid value: "{{.bad-value.}}": '
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
TEAM1 = sel_in("team", "team1")


def existing(i: int, labels: dict[str, str], nodename: str = "node1", **kw: object) -> Pod:
    return pod(f"e{i}", labels=labels, node=nodename, **kw)  # type: ignore[arg-type]


EXISTING = existing(0, POD_LABEL)


@dataclass
class SingleNodeCase:
    incoming: Pod
    pods: list[Pod] = field(default_factory=list)
    pre: Status = SUCCESS
    want: Status = SUCCESS


SINGLE_NODE = [
    pytest.param(
        SingleNodeCase(pod(), pre=SKIP),
        id="TestRequiredAffinitySingleNode/A pod that has no required pod affinity scheduling "
        "rules can schedule onto a node with no existing pods",
    ),
    pytest.param(
        SingleNodeCase(
            pod(
                labels=POD_LABEL2,
                aff=affinity(
                    required=[term(sel_in("service", "securityscan", "value2"), "region")]
                ),
            ),
            [EXISTING],
        ),
        id="TestRequiredAffinitySingleNode/satisfies with requiredDuringScheduling"
        "IgnoredDuringExecution in PodAffinity using In operator that matches the existing pod",
    ),
    pytest.param(
        SingleNodeCase(
            pod(
                labels=POD_LABEL2,
                aff=affinity(
                    required=[term(sel_not_in("service", "securityscan3", "value3"), "region")]
                ),
            ),
            [EXISTING],
        ),
        id="TestRequiredAffinitySingleNode/satisfies the pod with requiredDuringScheduling"
        "IgnoredDuringExecution in PodAffinity using not in operator in labelSelector that "
        "matches the existing pod",
    ),
    pytest.param(
        SingleNodeCase(
            pod(
                labels=POD_LABEL2,
                aff=affinity(
                    required=[
                        term(
                            sel_in("service", "securityscan", "value2"),
                            "",
                            namespaces=["DiffNameSpace"],
                        )
                    ]
                ),
            ),
            [pod("e0", "ns", labels=POD_LABEL, node="node1")],
            want=AFF,
        ),
        id="TestRequiredAffinitySingleNode/Does not satisfy the PodAffinity with labelSelector "
        "because of diff Namespace",
    ),
    pytest.param(
        SingleNodeCase(
            pod(
                labels=POD_LABEL,
                aff=affinity(required=[term(sel_in("service", "antivirusscan", "value2"), "")]),
            ),
            [EXISTING],
            want=AFF,
        ),
        id="TestRequiredAffinitySingleNode/Doesn't satisfy the PodAffinity because of "
        "unmatching labelSelector with the existing pod",
    ),
    pytest.param(
        SingleNodeCase(
            pod(
                labels=POD_LABEL2,
                aff=affinity(
                    required=[
                        term(
                            sel_exprs(("service", "Exists", ()), ("wrongkey", "DoesNotExist", ())),
                            "region",
                        ),
                        term(
                            sel_exprs(
                                ("service", "In", ("securityscan",)),
                                ("service", "NotIn", ("WrongValue",)),
                            ),
                            "region",
                        ),
                    ]
                ),
            ),
            [EXISTING],
        ),
        id="TestRequiredAffinitySingleNode/satisfies the PodAffinity with different label "
        "Operators in multiple RequiredDuringSchedulingIgnoredDuringExecution",
    ),
    pytest.param(
        SingleNodeCase(
            pod(
                labels=POD_LABEL2,
                aff=affinity(
                    required=[
                        term(
                            sel_exprs(("service", "Exists", ()), ("wrongkey", "DoesNotExist", ())),
                            "region",
                        ),
                        term(
                            sel_exprs(
                                ("service", "In", ("securityscan2",)),
                                ("service", "NotIn", ("WrongValue",)),
                            ),
                            "region",
                        ),
                    ]
                ),
            ),
            [EXISTING],
            want=AFF,
        ),
        id="TestRequiredAffinitySingleNode/The labelSelector requirements(items of "
        "matchExpressions) are ANDed, the pod cannot schedule onto the node because one of the "
        "matchExpression item don't match.",
    ),
    pytest.param(
        SingleNodeCase(
            pod(
                labels=POD_LABEL2,
                aff=affinity(
                    required=[term(sel_in("service", "securityscan", "value2"), "region")],
                    anti=[term(sel_in("service", "antivirusscan", "value2"), "node")],
                ),
            ),
            [EXISTING],
        ),
        id="TestRequiredAffinitySingleNode/satisfies the PodAffinity and PodAntiAffinity with "
        "the existing pod",
    ),
    pytest.param(
        SingleNodeCase(
            pod(
                labels=POD_LABEL2,
                aff=affinity(
                    required=[term(sel_in("service", "securityscan", "value2"), "region")],
                    anti=[term(sel_in("service", "antivirusscan", "value2"), "node")],
                ),
            ),
            [
                existing(
                    0,
                    POD_LABEL,
                    aff=affinity(anti=[term(sel_in("service", "antivirusscan", "value2"), "node")]),
                )
            ],
        ),
        id="TestRequiredAffinitySingleNode/satisfies the PodAffinity and PodAntiAffinity and "
        "PodAntiAffinity symmetry with the existing pod",
    ),
    pytest.param(
        SingleNodeCase(
            pod(
                labels=POD_LABEL2,
                aff=affinity(
                    required=[term(sel_in("service", "securityscan", "value2"), "region")],
                    anti=[term(sel_in("service", "securityscan", "value2"), "zone")],
                ),
            ),
            [EXISTING],
            want=ANTI,
        ),
        id="TestRequiredAffinitySingleNode/satisfies the PodAffinity but doesn't satisfy the "
        "PodAntiAffinity with the existing pod",
    ),
    pytest.param(
        SingleNodeCase(
            pod(
                labels=POD_LABEL,
                aff=affinity(
                    required=[term(sel_in("service", "securityscan", "value2"), "region")],
                    anti=[term(sel_in("service", "antivirusscan", "value2"), "node")],
                ),
            ),
            [
                existing(
                    0,
                    POD_LABEL,
                    aff=affinity(anti=[term(sel_in("service", "securityscan", "value2"), "zone")]),
                )
            ],
            want=EXIST,
        ),
        id="TestRequiredAffinitySingleNode/satisfies the PodAffinity and PodAntiAffinity but "
        "doesn't satisfy PodAntiAffinity symmetry with the existing pod",
    ),
    pytest.param(
        SingleNodeCase(
            pod(
                labels=POD_LABEL,
                aff=affinity(
                    required=[term(sel_not_in("service", "securityscan", "value2"), "region")]
                ),
            ),
            # Upstream puts this pod on "node2", which is not in the snapshot.
            [existing(0, {"service": "securityscan"}, nodename="node2")],
            want=AFF,
        ),
        id="TestRequiredAffinitySingleNode/pod matches its own Label in PodAffinity and that "
        "matches the existing pod Labels",
    ),
    pytest.param(
        SingleNodeCase(
            pod(labels=POD_LABEL),
            [
                existing(
                    0,
                    POD_LABEL,
                    aff=affinity(anti=[term(sel_in("service", "securityscan", "value2"), "zone")]),
                )
            ],
            want=EXIST,
        ),
        id="TestRequiredAffinitySingleNode/verify that PodAntiAffinity from existing pod is "
        "respected when pod has no AntiAffinity constraints. doesn't satisfy PodAntiAffinity "
        "symmetry with the existing pod",
    ),
    pytest.param(
        SingleNodeCase(
            pod(labels=POD_LABEL),
            [
                existing(
                    0,
                    POD_LABEL,
                    aff=affinity(
                        anti=[term(sel_not_in("service", "securityscan", "value2"), "zone")]
                    ),
                )
            ],
            pre=SKIP,
        ),
        id="TestRequiredAffinitySingleNode/verify that PodAntiAffinity from existing pod is "
        "respected when pod has no AntiAffinity constraints. satisfy PodAntiAffinity symmetry "
        "with the existing pod",
    ),
    pytest.param(
        SingleNodeCase(
            pod(
                labels=POD_LABEL,
                aff=affinity(
                    anti=[
                        term(sel_exists("service"), "region"),
                        term(sel_exists("security"), "region"),
                    ]
                ),
            ),
            [existing(0, POD_LABEL2, aff=affinity(anti=[term(sel_exists("security"), "zone")]))],
            want=ANTI,
        ),
        id="TestRequiredAffinitySingleNode/satisfies the PodAntiAffinity with existing pod but "
        "doesn't satisfy PodAntiAffinity symmetry with incoming pod",
    ),
    pytest.param(
        SingleNodeCase(
            pod(
                labels=POD_LABEL,
                aff=affinity(
                    anti=[term(sel_exists("service"), "zone"), term(sel_exists("security"), "zone")]
                ),
            ),
            [existing(0, POD_LABEL2, aff=affinity(anti=[term(sel_exists("security"), "zone")]))],
            want=ANTI,
        ),
        id="TestRequiredAffinitySingleNode/PodAntiAffinity symmetry check a1: incoming pod and "
        "existing pod partially match each other on AffinityTerms",
    ),
    pytest.param(
        SingleNodeCase(
            pod(labels=POD_LABEL2, aff=affinity(anti=[term(sel_exists("security"), "zone")])),
            [
                existing(
                    0,
                    POD_LABEL,
                    aff=affinity(
                        anti=[
                            term(sel_exists("service"), "zone"),
                            term(sel_exists("security"), "zone"),
                        ]
                    ),
                )
            ],
            want=EXIST,
        ),
        id="TestRequiredAffinitySingleNode/PodAntiAffinity symmetry check a2: incoming pod and "
        "existing pod partially match each other on AffinityTerms",
    ),
    pytest.param(
        SingleNodeCase(
            pod(
                labels={"abc": "", "xyz": ""},
                aff=affinity(
                    anti=[term(sel_exists("abc"), "zone"), term(sel_exists("def"), "zone")]
                ),
            ),
            [
                existing(
                    0,
                    {"def": "", "xyz": ""},
                    aff=affinity(
                        anti=[term(sel_exists("abc"), "zone"), term(sel_exists("def"), "zone")]
                    ),
                )
            ],
            want=ANTI,
        ),
        id="TestRequiredAffinitySingleNode/PodAntiAffinity symmetry check b1: incoming pod and "
        "existing pod partially match each other on AffinityTerms",
    ),
    pytest.param(
        SingleNodeCase(
            pod(
                labels={"def": "", "xyz": ""},
                aff=affinity(
                    anti=[term(sel_exists("abc"), "zone"), term(sel_exists("def"), "zone")]
                ),
            ),
            [
                existing(
                    0,
                    {"abc": "", "xyz": ""},
                    aff=affinity(
                        anti=[term(sel_exists("abc"), "zone"), term(sel_exists("def"), "zone")]
                    ),
                )
            ],
            want=ANTI,
        ),
        id="TestRequiredAffinitySingleNode/PodAntiAffinity symmetry check b2: incoming pod and "
        "existing pod partially match each other on AffinityTerms",
    ),
    pytest.param(
        SingleNodeCase(
            pod(
                labels=POD_LABEL,
                aff=affinity(
                    required=[
                        term(sel_in("service", BAD), "region"),
                        term(sel_in("service", "antivirusscan", "value2"), "node"),
                    ]
                ),
            ),
            pre=unresolvable(BAD_MSG),
        ),
        id="TestRequiredAffinitySingleNode/PodAffinity fails PreFilter with an invalid affinity "
        "label syntax",
    ),
    pytest.param(
        SingleNodeCase(
            pod(
                labels=POD_LABEL,
                aff=affinity(
                    required=[
                        term(sel_in("service", "foo"), "region"),
                        term(sel_in("service", BAD), "node"),
                    ]
                ),
            ),
            pre=unresolvable(BAD_MSG),
        ),
        id="TestRequiredAffinitySingleNode/PodAntiAffinity fails PreFilter with an invalid "
        "antiaffinity label syntax",
    ),
    pytest.param(
        SingleNodeCase(
            pod(
                labels=POD_LABEL2,
                aff=affinity(
                    required=[
                        term(
                            sel_in("service", "securityscan", "value2"),
                            "region",
                            ns_selector=TEAM1,
                        )
                    ]
                ),
            ),
            [pod("e0", "subteam1.team1", labels=POD_LABEL, node="node1")],
        ),
        id="TestRequiredAffinitySingleNode/affinity with NamespaceSelector",
    ),
    pytest.param(
        SingleNodeCase(
            pod(
                labels=POD_LABEL2,
                aff=affinity(
                    required=[
                        term(
                            sel_in("service", "securityscan", "value2"),
                            "region",
                            ns_selector=TEAM1,
                        )
                    ]
                ),
            ),
            [pod("e0", "subteam1.team2", labels=POD_LABEL, node="node1")],
            want=AFF,
        ),
        id="TestRequiredAffinitySingleNode/affinity with non-matching NamespaceSelector",
    ),
    pytest.param(
        SingleNodeCase(
            pod(
                namespace="subteam1.team1",
                labels=POD_LABEL2,
                aff=affinity(
                    anti=[
                        term(
                            sel_in("service", "securityscan", "value2"),
                            "zone",
                            ns_selector=TEAM1,
                        )
                    ]
                ),
            ),
            [pod("e0", "subteam2.team1", labels=POD_LABEL, node="node1")],
            want=ANTI,
        ),
        id="TestRequiredAffinitySingleNode/anti-affinity with matching NamespaceSelector",
    ),
    pytest.param(
        SingleNodeCase(
            pod(
                namespace="subteam1.team1",
                labels=POD_LABEL2,
                aff=affinity(
                    anti=[
                        term(
                            sel_in("service", "securityscan", "value2"),
                            "zone",
                            ns_selector=LabelSelector(),
                        )
                    ]
                ),
            ),
            [pod("e0", "subteam2.team1", labels=POD_LABEL, node="node1")],
            want=ANTI,
        ),
        id="TestRequiredAffinitySingleNode/anti-affinity with matching all NamespaceSelector",
    ),
    pytest.param(
        SingleNodeCase(
            pod(
                namespace="subteam1.team1",
                labels=POD_LABEL2,
                aff=affinity(
                    anti=[
                        term(
                            sel_in("service", "securityscan", "value2"),
                            "zone",
                            ns_selector=TEAM1,
                        )
                    ]
                ),
            ),
            [pod("e0", "subteam1.team2", labels=POD_LABEL, node="node1")],
        ),
        id="TestRequiredAffinitySingleNode/anti-affinity with non-matching NamespaceSelector",
    ),
]


@pytest.mark.parametrize("case", SINGLE_NODE)
def test_required_affinity_single_node(case: SingleNodeCase) -> None:
    pre, got = run_filter(case.incoming, case.pods, [NODE1])
    assert pre == case.pre and pre.code == case.pre.code
    if pre.is_success():
        assert got == {"node1": case.want}
        assert got["node1"].code == case.want.code


# --------------------------------------------------------------------------- multiple nodes

CHINA = {"region": "China"}
CHINA_AZ1 = {"region": "China", "az": "az1"}
INDIA = {"region": "India"}


def abc_nodes(*labels: dict[str, str]) -> list[Node]:
    return [node_with(f"node{chr(ord('A') + i)}", lbl) for i, lbl in enumerate(labels)]


def rz(zone: str, host: str) -> dict[str, str]:
    return {"region": "r1", "zone": zone, "hostname": host}


@dataclass
class MultiCase:
    incoming: Pod
    pods: list[Pod]
    nodes: list[Node]
    want: list[Status]
    pre: Status = SUCCESS


MULTI = [
    pytest.param(
        MultiCase(
            pod(aff=affinity(required=[term(sel_in("foo", "bar"), "region")])),
            [pod("p1", node="node1", labels={"foo": "bar"})],
            [node_with("node1", CHINA), node_with("node2", CHINA_AZ1), node_with("node3", INDIA)],
            [OK, OK, AFF],
        ),
        id="TestRequiredAffinityMultipleNodes/A pod can be scheduled onto all the nodes that "
        "have the same topology key & label value with one of them has an existing pod that "
        "matches the affinity rules",
    ),
    pytest.param(
        MultiCase(
            pod(
                labels={"foo": "bar", "service": "securityscan"},
                aff=affinity(
                    required=[
                        term(sel_in("foo", "bar"), "zone"),
                        term(sel_in("service", "securityscan"), "zone"),
                    ]
                ),
            ),
            [pod("p1", node="nodeA", labels={"foo": "bar"})],
            abc_nodes({"zone": "az1", "hostname": "h1"}, {"zone": "az2", "hostname": "h2"}),
            [OK, OK],
        ),
        id="TestRequiredAffinityMultipleNodes/The affinity rule is to schedule all of the pods "
        "of this collection to the same zone. The first pod of the collection should not be "
        "blocked from being scheduled onto any node, even there's no existing pod that matches "
        "the rule anywhere.",
    ),
    pytest.param(
        MultiCase(
            pod(
                labels={"foo": "bar", "service": "securityscan"},
                aff=affinity(
                    required=[
                        term(sel_in("foo", "bar"), "zone"),
                        term(sel_in("service", "securityscan"), "zone"),
                    ]
                ),
            ),
            [pod("p1", node="nodeA", labels={"foo": "bar"})],
            abc_nodes(
                {"zoneLabel": "az1", "hostname": "h1"}, {"zoneLabel": "az2", "hostname": "h2"}
            ),
            [AFF, AFF],
        ),
        id="TestRequiredAffinityMultipleNodes/The first pod of the collection can only be "
        "scheduled on nodes labelled with the requested topology keys",
    ),
    pytest.param(
        MultiCase(
            pod(aff=affinity(anti=[term(sel_in("foo", "abc"), "region")])),
            [pod("e", node="nodeA", labels={"foo": "abc"})],
            abc_nodes({"region": "r1", "hostname": "nodeA"}, {"region": "r1", "hostname": "nodeB"}),
            [ANTI, ANTI],
        ),
        id="TestRequiredAffinityMultipleNodes/NodeA and nodeB have same topologyKey and label "
        "value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can "
        "not be scheduled onto nodeA and nodeB.",
    ),
    pytest.param(
        MultiCase(
            pod(
                aff=affinity(
                    anti=[
                        term(sel_in("foo", "abc"), "region"),
                        term(sel_in("service", "securityscan"), "zone"),
                    ]
                )
            ),
            [pod("e", node="nodeA", labels={"foo": "abc", "service": "securityscan"})],
            abc_nodes(rz("z1", "nodeA"), rz("z2", "nodeB")),
            [ANTI, ANTI],
        ),
        id="TestRequiredAffinityMultipleNodes/This test ensures that anti-affinity matches a "
        "pod when any term of the anti-affinity rule matches a pod.",
    ),
    pytest.param(
        MultiCase(
            pod(aff=affinity(anti=[term(sel_in("foo", "abc"), "region")])),
            [pod("e", node="nodeA", labels={"foo": "abc"})],
            abc_nodes(CHINA, CHINA_AZ1, INDIA),
            [ANTI, ANTI, OK],
        ),
        id="TestRequiredAffinityMultipleNodes/NodeA and nodeB have same topologyKey and label "
        "value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can "
        "not be scheduled onto nodeA and nodeB but can be scheduled onto nodeC",
    ),
    pytest.param(
        MultiCase(
            pod(
                namespace="NS1",
                labels={"foo": "123"},
                aff=affinity(anti=[term(sel_in("foo", "bar"), "region")]),
            ),
            [
                pod("e1", "NS1", node="nodeA", labels={"foo": "bar"}),
                pod(
                    "e2",
                    "NS2",
                    node="nodeC",
                    aff=affinity(anti=[term(sel_in("foo", "123"), "region")]),
                ),
            ],
            abc_nodes(CHINA, CHINA_AZ1, INDIA),
            [ANTI, ANTI, OK],
        ),
        id="TestRequiredAffinityMultipleNodes/NodeA and nodeB have same topologyKey and label "
        "value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can "
        "not be scheduled onto nodeA, nodeB, but can be scheduled onto nodeC (NodeC has an "
        "existing pod that match the inter pod affinity rule but in different namespace)",
    ),
    pytest.param(
        MultiCase(
            pod(labels={"foo": ""}),
            [
                pod(
                    "e",
                    node="nodeA",
                    aff=affinity(anti=[term(sel_exists("foo"), "invalid-node-label")]),
                )
            ],
            abc_nodes(rz("z1", "nodeA"), rz("z1", "nodeB")),
            [OK, OK],
            pre=SKIP,
        ),
        id="TestRequiredAffinityMultipleNodes/Test existing pod's anti-affinity: if an existing "
        "pod has a term with invalid topologyKey, labelSelector of the term is firstly checked, "
        "and then topologyKey of the term is also checked",
    ),
    pytest.param(
        MultiCase(
            pod(
                node="nodeA",
                aff=affinity(anti=[term(sel_exists("foo"), "invalid-node-label")]),
            ),
            [pod("e", node="nodeA", labels={"foo": ""})],
            abc_nodes(rz("z1", "nodeA"), rz("z1", "nodeB")),
            [OK, OK],
        ),
        id="TestRequiredAffinityMultipleNodes/Test incoming pod's anti-affinity: even if "
        "labelSelector matches, we still check if topologyKey matches",
    ),
    pytest.param(
        MultiCase(
            pod(labels={"foo": "", "bar": ""}),
            [
                pod("e1", node="nodeA", aff=affinity(anti=[term(sel_exists("foo"), "zone")])),
                pod("e2", node="nodeA", aff=affinity(anti=[term(sel_exists("bar"), "region")])),
            ],
            abc_nodes(rz("z1", "nodeA"), rz("z2", "nodeB")),
            [EXIST, EXIST],
        ),
        id="TestRequiredAffinityMultipleNodes/Test existing pod's anti-affinity: incoming pod "
        "wouldn't considered as a fit as it violates each existingPod's terms on all nodes",
    ),
    pytest.param(
        MultiCase(
            pod(
                aff=affinity(
                    anti=[term(sel_exists("foo"), "zone"), term(sel_exists("bar"), "region")]
                )
            ),
            [
                pod("e1", node="nodeA", labels={"foo": ""}),
                pod("e2", node="nodeB", labels={"bar": ""}),
            ],
            abc_nodes(rz("z1", "nodeA"), rz("z2", "nodeB")),
            [ANTI, ANTI],
        ),
        id="TestRequiredAffinityMultipleNodes/Test incoming pod's anti-affinity: incoming pod "
        "wouldn't considered as a fit as it at least violates one anti-affinity rule of "
        "existingPod",
    ),
    pytest.param(
        MultiCase(
            pod(labels={"foo": "", "bar": ""}),
            [
                pod(
                    "e",
                    node="nodeA",
                    aff=affinity(
                        anti=[
                            term(sel_exists("foo"), "invalid-node-label"),
                            term(sel_exists("bar"), "zone"),
                        ]
                    ),
                )
            ],
            abc_nodes(rz("z1", "nodeA"), rz("z2", "nodeB")),
            [EXIST, OK],
        ),
        id="TestRequiredAffinityMultipleNodes/Test existing pod's anti-affinity: only when "
        "labelSelector and topologyKey both match, it's counted as a single term match - case "
        "when one term has invalid topologyKey",
    ),
    pytest.param(
        MultiCase(
            pod(
                aff=affinity(
                    anti=[
                        term(sel_exists("foo"), "invalid-node-label"),
                        term(sel_exists("bar"), "zone"),
                    ]
                )
            ),
            [pod("podA", node="nodeA", labels={"foo": "", "bar": ""})],
            abc_nodes(rz("z1", "nodeA"), rz("z2", "nodeB")),
            [ANTI, OK],
        ),
        id="TestRequiredAffinityMultipleNodes/Test incoming pod's anti-affinity: only when "
        "labelSelector and topologyKey both match, it's counted as a single term match - case "
        "when one term has invalid topologyKey",
    ),
    pytest.param(
        MultiCase(
            pod(labels={"foo": "", "bar": ""}),
            [
                pod(
                    "e",
                    node="nodeA",
                    aff=affinity(
                        anti=[term(sel_exists("foo"), "region"), term(sel_exists("bar"), "zone")]
                    ),
                )
            ],
            abc_nodes(rz("z1", "nodeA"), rz("z2", "nodeB")),
            [EXIST, EXIST],
        ),
        id="TestRequiredAffinityMultipleNodes/Test existing pod's anti-affinity: only when "
        "labelSelector and topologyKey both match, it's counted as a single term match - case "
        "when all terms have valid topologyKey",
    ),
    pytest.param(
        MultiCase(
            pod(
                aff=affinity(
                    anti=[term(sel_exists("foo"), "region"), term(sel_exists("bar"), "zone")]
                )
            ),
            [pod("e", node="nodeA", labels={"foo": "", "bar": ""})],
            abc_nodes(rz("z1", "nodeA"), rz("z2", "nodeB")),
            [ANTI, ANTI],
        ),
        id="TestRequiredAffinityMultipleNodes/Test incoming pod's anti-affinity: only when "
        "labelSelector and topologyKey both match, it's counted as a single term match - case "
        "when all terms have valid topologyKey",
    ),
    pytest.param(
        MultiCase(
            pod(labels={"foo": "", "bar": ""}),
            [
                pod(
                    "e1",
                    node="nodeA",
                    aff=affinity(
                        anti=[term(sel_exists("foo"), "zone"), term(sel_exists("labelA"), "zone")]
                    ),
                ),
                pod(
                    "e2",
                    node="nodeB",
                    aff=affinity(
                        anti=[term(sel_exists("bar"), "zone"), term(sel_exists("labelB"), "zone")]
                    ),
                ),
            ],
            abc_nodes(rz("z1", "nodeA"), rz("z2", "nodeB"), rz("z3", "nodeC")),
            [EXIST, EXIST, OK],
        ),
        id="TestRequiredAffinityMultipleNodes/Test existing pod's anti-affinity: existingPod on "
        "nodeA and nodeB has at least one anti-affinity term matches incoming pod, so incoming "
        "pod can only be scheduled to nodeC",
    ),
    pytest.param(
        MultiCase(
            pod(
                aff=affinity(
                    required=[term(sel_exists("foo"), "region"), term(sel_exists("bar"), "zone")]
                )
            ),
            [pod("pod1", node="nodeA", labels={"foo": "", "bar": ""})],
            abc_nodes(rz("z1", "nodeA"), rz("z1", "nodeB")),
            [OK, OK],
        ),
        id="TestRequiredAffinityMultipleNodes/Test incoming pod's affinity: firstly check if "
        "all affinityTerms match, and then check if all topologyKeys match",
    ),
    pytest.param(
        MultiCase(
            pod(
                aff=affinity(
                    required=[term(sel_exists("foo"), "region"), term(sel_exists("bar"), "zone")]
                )
            ),
            [
                pod("pod1", node="nodeA", labels={"foo": ""}),
                pod("pod2", node="nodeB", labels={"bar": ""}),
            ],
            abc_nodes(rz("z1", "nodeA"), rz("z2", "nodeB")),
            [AFF, AFF],
        ),
        id="TestRequiredAffinityMultipleNodes/Test incoming pod's affinity: firstly check if "
        "all affinityTerms match, and then check if all topologyKeys match, and the match logic "
        "should be satisfied on the same pod",
    ),
]


@pytest.mark.parametrize("case", MULTI)
def test_required_affinity_multiple_nodes(case: MultiCase) -> None:
    pre, got = run_filter(case.incoming, case.pods, case.nodes)
    assert pre == case.pre
    if pre.is_skip():
        return
    assert got == {n.name: w for n, w in zip(case.nodes, case.want, strict=True)}
    for n, w in zip(case.nodes, case.want, strict=True):
        assert got[n.name].code == w.code


# --------------------------------------------------------------------------- no PreFilter


def test_pre_filter_disabled_filter_errors() -> None:
    """TestPreFilterDisabled: Filter without PreFilter state is an Error; the vector
    path declines so the exact path reports it; AddPod / RemovePod error too."""
    table = build_table([node("n1")])
    plugin = make_plugin(table)
    info = table.infos[table.row_of["n1"]]
    assert info is not None
    pi = PodInfo(pod())
    want = 'error reading "PreFilterInterPodAffinity" from cycleState: not found'
    got = plugin.filter(CycleState(), pi, info)
    assert got.code == Code.ERROR and got.message() == want
    assert plugin.filter_vector(CycleState(), pi, table) is None
    other = PodInfo(pod("o", node="n1"))
    assert plugin.add_pod(CycleState(), pi, other, info).message() == want
    assert plugin.remove_pod(CycleState(), pi, other, info).code == Code.ERROR


# --------------------------------------------------------------------------- AddPod / RemovePod

LABEL1 = {"region": "r1", "zone": "z11"}
LABEL2 = {"region": "r1", "zone": "z12"}
LABEL3 = {"region": "r2", "zone": "z21"}
FOO_BAR = {"foo": "bar"}
ANTI_FOO_BAR = [term(sel_in("foo", "bar"), "region")]
COMPLEX = [
    term(sel_in("foo", "bar", "buzz"), "region"),
    term(sel_not_in("service", "bar", "security", "test"), "zone"),
]
ADD_REMOVE_NODES = [
    node_with("nodeA", LABEL1),
    node_with("nodeB", LABEL2),
    node_with("nodeC", LABEL3),
]


@dataclass
class AddRemoveCase:
    pending: Pod
    existing: list[Pod]
    added: Pod
    want_anti: dict[tuple[str, str], int]
    want_affinity: dict[tuple[str, str], int]


ADD_REMOVE = [
    pytest.param(
        AddRemoveCase(
            pod("pending", labels=FOO_BAR, aff=affinity(anti=ANTI_FOO_BAR)),
            [
                pod("p1", labels=FOO_BAR, node="nodeA"),
                pod("p2", node="nodeC", aff=affinity(anti=ANTI_FOO_BAR)),
            ],
            pod("addedPod", labels=FOO_BAR, node="nodeB", aff=affinity(anti=ANTI_FOO_BAR)),
            {("region", "r1"): 2},
            {},
        ),
        id="TestPreFilterStateAddRemovePod/preFilterState anti-affinity terms are updated "
        "correctly after adding and removing a pod",
    ),
    pytest.param(
        AddRemoveCase(
            pod("pending", labels=FOO_BAR, aff=affinity(anti=COMPLEX)),
            [
                pod("p1", labels=FOO_BAR, node="nodeA"),
                pod("p2", node="nodeC", aff=affinity(anti=ANTI_FOO_BAR)),
            ],
            pod("addedPod", labels=FOO_BAR, node="nodeA", aff=affinity(anti=COMPLEX)),
            {("region", "r1"): 2, ("zone", "z11"): 2, ("zone", "z21"): 1},
            {},
        ),
        id="TestPreFilterStateAddRemovePod/preFilterState anti-affinity terms are updated "
        "correctly after adding and removing a pod (complex terms)",
    ),
    pytest.param(
        AddRemoveCase(
            pod("pending", labels=FOO_BAR, aff=affinity(required=COMPLEX)),
            [
                pod("p1", labels=FOO_BAR, node="nodeA"),
                pod("p2", node="nodeC", aff=affinity(required=COMPLEX, anti=ANTI_FOO_BAR)),
            ],
            pod("addedPod", labels=FOO_BAR, node="nodeA", aff=affinity(anti=COMPLEX)),
            {},
            {("region", "r1"): 2, ("zone", "z11"): 2},
        ),
        id="TestPreFilterStateAddRemovePod/preFilterState matching pod affinity and "
        "anti-affinity are updated correctly after adding and removing a pod",
    ),
]


def _state(pending: Pod, pods: list[Pod]) -> tuple[InterPodAffinity, CycleState, PreFilterState]:
    table = build_table(ADD_REMOVE_NODES, pods)
    plugin = make_plugin(table)
    cs = CycleState()
    _, status = plugin.pre_filter(cs, PodInfo(pending), table)
    assert status.is_success(), status
    s = cs.read(PRE_FILTER_STATE_KEY)
    assert isinstance(s, PreFilterState)
    return plugin, cs, s


def _counts(s: PreFilterState) -> tuple[dict[tuple[str, str], int], ...]:
    return s.existing_anti.as_dict(), s.affinity.as_dict(), s.anti.as_dict()


@pytest.mark.parametrize("case", ADD_REMOVE)
def test_pre_filter_state_add_remove_pod(case: AddRemoveCase) -> None:
    _, _, all_pods = _state(case.pending, [*case.existing, case.added])
    plugin, cs, s = _state(case.pending, case.existing)
    original = s.clone()
    nodeinfo = NodeInfo(next(n for n in ADD_REMOVE_NODES if n.name == case.added.node_name))
    status = plugin.add_pod(cs, PodInfo(case.pending), PodInfo(case.added), nodeinfo)
    assert status.is_success()
    assert s.anti.as_dict() == case.want_anti
    assert s.affinity.as_dict() == case.want_affinity
    assert _counts(s) == _counts(all_pods)
    status = plugin.remove_pod(cs, PodInfo(case.pending), PodInfo(case.added), nodeinfo)
    assert status.is_success()
    assert _counts(s) == _counts(original)


def test_pre_filter_state_clone_is_independent() -> None:
    """TestPreFilterStateClone: the clone has equal counts and does not share them."""
    _, _, s = _state(
        pod("pending", labels=FOO_BAR, aff=affinity(anti=COMPLEX)),
        [
            pod("p1", labels=FOO_BAR, node="nodeA"),
            pod("p2", node="nodeC", aff=affinity(anti=ANTI_FOO_BAR)),
        ],
    )
    c = s.clone()
    assert c is not s
    assert _counts(c) == _counts(s)
    c.update_with_pod(
        pod("x", labels=FOO_BAR, aff=affinity(anti=ANTI_FOO_BAR)), ADD_REMOVE_NODES[1], 1
    )
    assert _counts(c) != _counts(s)
    assert s.anti.as_dict() == {("region", "r1"): 1, ("zone", "z11"): 1, ("zone", "z21"): 1}


# --------------------------------------------------------------------------- incoming counts


def _ab(*keys: str) -> LabelSelector:
    return sel_exprs(*((k, "Exists", ()) for k in keys))


def normal(*labels: str) -> Pod:
    return pod("normal", node="nodeA", labels=dict.fromkeys(labels, ""))


INCOMING = [
    pytest.param(
        [],
        pod("aaa-normal"),
        {},
        {},
        id="TestGetTPMapMatchingIncomingAffinityAntiAffinity/nil test",
    ),
    pytest.param(
        [normal("aaa")],
        pod("aaa-normal"),
        {},
        {},
        id="TestGetTPMapMatchingIncomingAffinityAntiAffinity/incoming pod without "
        "affinity/anti-affinity causes a no-op",
    ),
    pytest.param(
        [normal("bbb")],
        pod(
            "aaa-anti",
            aff=affinity(
                required=[term(sel_exists("aaa"), "hostname")],
                anti=[term(sel_exists("aaa"), "hostname")],
            ),
        ),
        {},
        {},
        id="TestGetTPMapMatchingIncomingAffinityAntiAffinity/no pod has label that violates "
        "incoming pod's affinity and anti-affinity",
    ),
    pytest.param(
        [normal("aaa")],
        pod(
            "affi-antiaffi",
            aff=affinity(
                required=[term(sel_exists("aaa"), "hostname")],
                anti=[term(sel_exists("aaa"), "hostname")],
            ),
        ),
        {("hostname", "nodeA"): 1},
        {("hostname", "nodeA"): 1},
        id="TestGetTPMapMatchingIncomingAffinityAntiAffinity/existing pod matches incoming "
        "pod's affinity and anti-affinity - single term case",
    ),
    pytest.param(
        [normal("aaa", "bbb")],
        pod(
            "affi-antiaffi",
            aff=affinity(
                required=[
                    term(sel_exists("aaa"), "hostname"),
                    term(sel_exists("bbb"), "hostname"),
                ],
                anti=[term(sel_exists("aaa"), "hostname")],
            ),
        ),
        {("hostname", "nodeA"): 2},
        {("hostname", "nodeA"): 1},
        id="TestGetTPMapMatchingIncomingAffinityAntiAffinity/existing pod matches incoming "
        "pod's affinity and anti-affinity - multiple terms case",
    ),
    pytest.param(
        [normal("aaa")],
        pod(
            "affi-antiaffi",
            aff=affinity(
                required=[
                    term(sel_exists("aaa"), "hostname"),
                    term(sel_exists("bbb"), "hostname"),
                ],
                anti=[
                    term(sel_exists("aaa"), "hostname"),
                    term(sel_exists("bbb"), "hostname"),
                ],
            ),
        ),
        {},
        {("hostname", "nodeA"): 1},
        id="TestGetTPMapMatchingIncomingAffinityAntiAffinity/existing pod not match incoming "
        "pod's affinity but matches anti-affinity",
    ),
    pytest.param(
        [normal("aaa", "bbb")],
        pod(
            "anaffi-antiaffiti",
            aff=affinity(
                required=[
                    term(sel_exists("aaa"), "hostname"),
                    term(sel_exists("ccc"), "hostname"),
                ],
                anti=[
                    term(sel_exists("aaa"), "hostname"),
                    term(sel_exists("ccc"), "hostname"),
                ],
            ),
        ),
        {},
        {("hostname", "nodeA"): 1},
        id="TestGetTPMapMatchingIncomingAffinityAntiAffinity/incoming pod's anti-affinity has "
        "more than one term - existing pod violates partial term - case 1",
    ),
    pytest.param(
        [normal("bbb")],
        pod(
            "affi-antiaffi",
            aff=affinity(
                required=[
                    term(sel_exists("aaa"), "hostname"),
                    term(sel_exists("bbb"), "hostname"),
                ],
                anti=[
                    term(sel_exists("aaa"), "hostname"),
                    term(sel_exists("bbb"), "hostname"),
                ],
            ),
        ),
        {},
        {("hostname", "nodeA"): 1},
        id="TestGetTPMapMatchingIncomingAffinityAntiAffinity/incoming pod's anti-affinity has "
        "more than one term - existing pod violates partial term - case 2",
    ),
]


@pytest.mark.parametrize(("pods", "incoming", "want_aff", "want_anti"), INCOMING)
def test_incoming_affinity_anti_affinity_counts(
    pods: list[Pod],
    incoming: Pod,
    want_aff: dict[tuple[str, str], int],
    want_anti: dict[tuple[str, str], int],
) -> None:
    table = build_table([node("nodeA", hostname="nodeA")], pods)
    plugin = make_plugin(table)
    cs = CycleState()
    _, status = plugin.pre_filter(cs, PodInfo(incoming), table)
    s = cs.get(PRE_FILTER_STATE_KEY)
    if status.is_skip():
        assert s is None and not want_aff and not want_anti
        return
    assert isinstance(s, PreFilterState)
    assert s.affinity.as_dict() == want_aff
    assert s.anti.as_dict() == want_anti


def test_filter_vector_cache_dropped_on_update() -> None:
    """AddPod after a vector Filter: the next vector Filter sees the new pod."""
    nodes = [node("a", zone="z1"), node("b", zone="z2")]
    table = build_table(nodes)
    plugin = make_plugin(table)
    incoming = PodInfo(pod(aff=affinity(anti=[term(sel_in("app", "x"), "zone")])))
    cs = CycleState()
    assert plugin.pre_filter(cs, incoming, table)[1].is_success()
    v = plugin.filter_vector(cs, incoming, table)
    assert v is not None and (v.index[[table.row_of["a"], table.row_of["b"]]] == -1).all()
    info = table_infos(table)[0]
    plugin.add_pod(cs, incoming, PodInfo(pod("x", labels={"app": "x"}, node="a")), info)
    v = plugin.filter_vector(cs, incoming, table)
    assert v is not None
    assert v.statuses[v.index[table.row_of["a"]]] == ANTI
    assert v.index[table.row_of["b"]] == -1
