"""Property tests of InterPodAffinity on random clusters (random node labels,
existing pods with random required / preferred (anti-)affinity terms, random
namespaces and namespace selectors, random pending pods):

1. PreFilter counts, Filter statuses and normalized scores equal a pod-by-pod
   port of upstream (``reference``), on the per-node and the vector path, with
   the states built from the ``PodIndex`` or pod by pod (``Handle.per_node``);
2. removing / adding random pods through RemovePod / AddPod on a cloned state
   gives the same Filter answers as PreFilter recomputed from scratch on the
   modified cluster (what preemption's dry run relies on), and leaves the
   original state untouched;
3. the incrementally synced ``PodIndex`` equals one built from scratch after
   random pod additions and removals.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.types import (
    Affinity,
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    Pod,
    PodAffinityTerm,
    PodSpec,
)
from kubesched.framework.config import InterPodAffinityArgs
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import NodeSet
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.status import SUCCESS, Status, unresolvable, unschedulable
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.interpodaffinity import PRE_FILTER_STATE_KEY, InterPodAffinity
from kubesched.plugins.interpodaffinity.filtering import PreFilterState
from kubesched.plugins.interpodaffinity.index import PodIndex
from tests.builders import build_table, rows_named
from tests.hypothesis_profiles import scaled
from tests.plugins.fakes import check_filter, check_score, table_infos
from tests.plugins.interpodaffinity import reference as ref
from tests.plugins.interpodaffinity.helpers import affinity, make_plugin, wterm

NAMESPACES = {"ns1": {"team": "t1"}, "ns2": {"team": "t2"}}  # ns3 does not exist
ALL_NS = ["ns1", "ns2", "ns3"]
TOPO_KEYS = ["zone", "region", "host"]
POD_KEYS = ["app", "tier"]
VALS = ["a", "b"]

REASON = {
    "affinity": "node(s) didn't match pod affinity rules",
    "anti": "node(s) didn't match pod anti-affinity rules",
    "existing": "node(s) didn't satisfy existing pods anti-affinity rules",
}

# --------------------------------------------------------------------------- strategies

requirement = st.one_of(
    st.builds(
        lambda k, op, vs: LabelSelectorRequirement(k, op, tuple(vs)),
        st.sampled_from(POD_KEYS),
        st.sampled_from(["In", "NotIn"]),
        st.lists(st.sampled_from(VALS), min_size=1, max_size=2, unique=True),
    ),
    st.builds(
        LabelSelectorRequirement,
        st.sampled_from(POD_KEYS),
        st.sampled_from(["Exists", "DoesNotExist"]),
    ),
)
selector = st.one_of(
    st.just(None),
    st.just(LabelSelector()),
    # Single-key selectors match often, which is what makes the counts interesting.
    st.builds(
        lambda k: LabelSelector(match_expressions=(LabelSelectorRequirement(k, "Exists"),)),
        st.sampled_from(POD_KEYS),
    ),
    st.builds(
        lambda d: LabelSelector(match_labels=d),
        st.dictionaries(st.sampled_from(POD_KEYS), st.sampled_from(VALS), min_size=1, max_size=2),
    ),
    st.builds(
        lambda rs: LabelSelector(match_expressions=tuple(rs)),
        st.lists(requirement, min_size=1, max_size=2),
    ),
)
ns_selector = st.sampled_from(
    [
        None,
        LabelSelector(),
        LabelSelector(match_labels={"team": "t1"}),
        # Matches a namespace without labels: exercises the unknown-namespace asymmetry.
        LabelSelector(match_expressions=(LabelSelectorRequirement("team", "NotIn", ("t1",)),)),
    ]
)
affinity_term = st.builds(
    lambda s, k, names, nss: PodAffinityTerm(s, k, tuple(names), nss),
    selector,
    st.sampled_from([*TOPO_KEYS, *TOPO_KEYS, "missing"]),
    st.lists(st.sampled_from(ALL_NS), max_size=2, unique=True),
    ns_selector,
)
weighted = st.builds(wterm, st.integers(1, 100), affinity_term)
affinity_spec = st.builds(
    affinity,
    st.lists(affinity_term, max_size=2),
    st.lists(affinity_term, max_size=2),
    st.lists(weighted, max_size=2),
    st.lists(weighted, max_size=2),
)
pod_labels = st.dictionaries(st.sampled_from(POD_KEYS), st.sampled_from(VALS), max_size=2)
node_labels = st.dictionaries(st.sampled_from(TOPO_KEYS), st.sampled_from(["x", "y"]))


@dataclass
class Cluster:
    nodes: list[Node]
    pods: list[Pod]
    incoming: Pod


@st.composite
def clusters(draw: st.DrawFn) -> Cluster:
    n = draw(st.integers(1, 6))
    nodes = [Node(f"n{i}", labels=draw(node_labels)) for i in range(n)]
    # A few shared specs, as pods of one template share theirs.
    specs = [PodSpec(affinity=a) for a in draw(st.lists(affinity_spec, min_size=1, max_size=3))]
    specs.append(PodSpec())

    def make(name: str, node: str) -> Pod:
        spec = specs[draw(st.integers(0, len(specs) - 1))]
        return Pod(
            name,
            draw(st.sampled_from(ALL_NS)),
            labels=draw(pod_labels),
            spec=spec,
            node_name=node,
        )

    count = draw(st.integers(0, 12))
    pods = [make(f"e{i}", f"n{draw(st.integers(0, n - 1))}") for i in range(count)]
    incoming_aff: Affinity | None = draw(st.one_of(st.none(), affinity_spec))
    incoming = Pod(
        "incoming",
        draw(st.sampled_from(ALL_NS)),
        labels=draw(pod_labels),
        spec=PodSpec(affinity=incoming_aff),
    )
    return Cluster(nodes, pods, incoming)


# --------------------------------------------------------------------------- helpers


def _filter_all(
    plugin: InterPodAffinity, cs: CycleState, incoming: Pod, table: NodeTable
) -> dict[str, Status]:
    return check_filter(plugin, cs, PodInfo(incoming), table)


def _ref_statuses(state: ref.RefState | None, nodes: Sequence[Node]) -> dict[str, Status]:
    out: dict[str, Status] = {}
    for node in nodes:
        r = None if state is None else ref.ref_filter(state, node)
        if r is None:
            out[node.name] = SUCCESS
        elif r == "affinity":
            out[node.name] = unresolvable(REASON[r])
        else:
            out[node.name] = unschedulable(REASON[r])
    return out


def _pre_filter(
    cluster_nodes: list[Node], pods: list[Pod], incoming: Pod, per_node: bool = False
) -> tuple[InterPodAffinity, CycleState, NodeTable, Status]:
    table = build_table(cluster_nodes, pods)
    plugin = make_plugin(table, namespaces=NAMESPACES, per_node=per_node)
    cs = CycleState()
    _, status = plugin.pre_filter(cs, PodInfo(incoming), table)
    return plugin, cs, table, status


# --------------------------------------------------------------------------- 1. reference


@settings(max_examples=scaled(300), deadline=None)
@given(clusters(), st.integers(0, 3), st.booleans(), st.booleans())
def test_matches_reference_on_both_paths(
    c: Cluster, hard: int, ignore: bool, per_node: bool
) -> None:
    """``per_node``: the states are built pod by pod (``Handle.per_node``)."""
    plugin, cs, table, status = _pre_filter(c.nodes, c.pods, c.incoming, per_node)
    infos = table_infos(table)
    want = ref.ref_pre_filter(c.incoming, infos, NAMESPACES)
    assert status.is_skip() == (want is None), status
    if want is not None:
        assert status.is_success()
        s = cs.read(PRE_FILTER_STATE_KEY)
        assert isinstance(s, PreFilterState)
        assert s.existing_anti.as_dict() == want.existing
        assert s.affinity.as_dict() == want.affinity
        assert s.anti.as_dict() == want.anti
        assert _filter_all(plugin, cs, c.incoming, table) == _ref_statuses(want, c.nodes)

    args = InterPodAffinityArgs(hard, ignore)
    plugin = make_plugin(table, args, NAMESPACES, per_node)
    pre, scores = check_score(plugin, CycleState(), PodInfo(c.incoming), table)
    want_scores = ref.ref_pre_score(c.incoming, infos, NAMESPACES, hard, ignore)
    assert pre.is_skip() == (want_scores is None), pre
    if want_scores is not None:
        assert scores == ref.ref_scores(want_scores, c.nodes)


@settings(max_examples=scaled(100), deadline=None)
@given(clusters(), st.data())
def test_scores_on_a_subset_of_nodes(c: Cluster, data: st.DataObject) -> None:
    """Normalization runs over the nodes being scored, not the whole table."""
    names = data.draw(st.lists(st.sampled_from([n.name for n in c.nodes]), min_size=1, unique=True))
    table = build_table(c.nodes, c.pods)
    plugin = make_plugin(table, namespaces=NAMESPACES)
    pre, scores = check_score(plugin, CycleState(), PodInfo(c.incoming), table, names)
    want = ref.ref_pre_score(c.incoming, table_infos(table), NAMESPACES)
    assert pre.is_skip() == (want is None)
    if want is not None:
        assert scores == ref.ref_scores(want, [n for n in c.nodes if n.name in names])


# --------------------------------------------------------------------------- 2. AddPod / RemovePod


@settings(max_examples=scaled(300), deadline=None)
@given(clusters(), st.data())
def test_add_remove_pod_equals_recomputed_pre_filter(c: Cluster, data: st.DataObject) -> None:
    per_node = data.draw(st.booleans(), label="per_node")
    plugin, cs, table, status = _pre_filter(c.nodes, c.pods, c.incoming, per_node)
    if not status.is_success():
        return
    original = cs.read(PRE_FILTER_STATE_KEY)
    assert isinstance(original, PreFilterState)
    before = (
        original.existing_anti.as_dict(),
        original.affinity.as_dict(),
        original.anti.as_dict(),
    )

    removed = data.draw(st.sets(st.integers(0, max(len(c.pods) - 1, 0)))) if c.pods else set()
    added: list[Pod] = []
    for i in range(data.draw(st.integers(0, 3))):
        donor = data.draw(st.sampled_from(c.pods)) if c.pods else c.incoming
        added.append(
            Pod(
                f"added{i}",
                data.draw(st.sampled_from(ALL_NS)),
                labels=data.draw(pod_labels),
                spec=donor.spec,
                node_name=data.draw(st.sampled_from([n.name for n in c.nodes])),
            )
        )

    clone = cs.clone()
    pi = PodInfo(c.incoming)
    by_node = {info.name: info.clone() for info in table_infos(table)}
    for i in sorted(removed):
        victim = c.pods[i]
        info = by_node[victim.node_name]
        removed_pi = info.remove_pod(victim)
        assert plugin.remove_pod(clone, pi, removed_pi, info).is_success()
    for p in added:
        info = by_node[p.node_name]
        api = PodInfo(p)
        info.add_pod(api)
        assert plugin.add_pod(clone, pi, api, info).is_success()

    # The original state is untouched.
    assert (
        original.existing_anti.as_dict(),
        original.affinity.as_dict(),
        original.anti.as_dict(),
    ) == before

    remaining = [p for i, p in enumerate(c.pods) if i not in removed] + added
    fresh_plugin, fresh_cs, fresh_table, fresh_status = _pre_filter(c.nodes, remaining, c.incoming)
    if fresh_status.is_skip():
        want = {n.name: SUCCESS for n in c.nodes}
    else:
        want = _filter_all(fresh_plugin, fresh_cs, c.incoming, fresh_table)
    # The updated clone on the exact path (per modified NodeInfo) ...
    got = {name: plugin.filter(clone, pi, info) for name, info in by_node.items()}
    assert got == want
    # ... and on the vector path (node labels are unchanged, so the table still fits).
    v = plugin.filter_vector(clone, pi, table)
    assert v is not None
    for name, status_ in want.items():
        i = int(v.index[table.row_of[name]])
        assert (SUCCESS if i < 0 else v.statuses[i]) == status_


# --------------------------------------------------------------------------- 3. index


def _snapshot(index: PodIndex) -> tuple[dict[object, dict[int, int]], dict[object, dict[int, int]]]:
    return (
        {k: dict(g.rows) for k, g in index.label_groups.items()},
        {(k[1], id(g.spec)): dict(g.rows) for k, g in index.spec_groups.items()},
    )


@settings(max_examples=scaled(150), deadline=None)
@given(clusters(), st.data())
def test_index_sync_is_incremental_and_exact(c: Cluster, data: st.DataObject) -> None:
    table = build_table(c.nodes, c.pods)
    index = PodIndex()
    index.sync(table)
    live = list(c.pods)
    for step in range(data.draw(st.integers(1, 6))):
        remove = data.draw(st.booleans())
        if live and remove:
            victim = live.pop(data.draw(st.integers(0, len(live) - 1)))
            row = table.row_of[victim.node_name]
            info = table.infos[row]
            assert info is not None
            table.remove_pod(row, info.remove_pod(victim))
        else:
            donor = live[0] if live else c.incoming
            p = Pod(
                f"new{step}",
                data.draw(st.sampled_from(ALL_NS)),
                labels=data.draw(pod_labels),
                spec=donor.spec,
                node_name=data.draw(st.sampled_from([n.name for n in c.nodes])),
            )
            live.append(p)
            row = table.row_of[p.node_name]
            info = table.infos[row]
            assert info is not None
            api = PodInfo(p)
            info.add_pod(api)
            table.add_pod(row, api)
        index.sync(table)
        fresh = PodIndex()
        fresh.sync(table)
        assert _snapshot(index) == _snapshot(fresh)
        assert set(index.anti_groups) == {
            g.serial for g in index.spec_groups.values() if g.terms.required_anti
        }


def test_index_follows_node_removal_and_replacement() -> None:
    nodes = [Node("a", labels={"zone": "1"}), Node("b", labels={"zone": "2"})]
    pods = [
        Pod("x", labels={"app": "x"}, node_name="a"),
        Pod("y", labels={"app": "y"}, node_name="b"),
    ]
    table = build_table(nodes, pods)
    index = PodIndex()
    index.sync(table)
    assert len(index.label_groups) == 2
    table.remove_node("b")
    index.sync(table)
    assert [dict(g.rows) for g in index.label_groups.values()] == [{table.row_of["a"]: 1}]
    table.add_node(NodeInfo(Node("c"), [PodInfo(Pod("z", labels={"app": "x"}, node_name="c"))]))
    index.sync(table)
    (group,) = index.label_groups.values()
    assert group.rows == {table.row_of["a"]: 1, table.row_of["c"]: 1}
    assert np.array_equal(
        np.sort(list(group.rows)), np.sort([table.row_of["a"], table.row_of["c"]])
    )


def test_pre_score_uses_node_set_table() -> None:
    """PreScore counts pods on every node of the table, not only the scored ones."""
    nodes = [Node("a", labels={"zone": "1"}), Node("b", labels={"zone": "1"})]
    pods = [Pod("x", labels={"app": "x"}, node_name="b")]
    table = build_table(nodes, pods)
    plugin = make_plugin(table)
    incoming = PodInfo(
        Pod(
            "p",
            spec=PodSpec(
                affinity=affinity(
                    preferred=[
                        wterm(1, PodAffinityTerm(LabelSelector(match_labels={"app": "x"}), "zone"))
                    ]
                )
            ),
        )
    )
    cs = CycleState()
    rows = rows_named(table, ["a"])
    assert plugin.pre_score(cs, incoming, NodeSet(table, rows)).is_success()
    info = table.infos[table.row_of["a"]]
    assert info is not None
    assert plugin.score(cs, incoming, info) == (1, SUCCESS)
