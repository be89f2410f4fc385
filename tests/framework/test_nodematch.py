"""Vector node-selector masks agree with the per-node matchers of ``api.selectors``."""

from __future__ import annotations

import gc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.selectors import (
    match_node_selector_map,
    node_selector_matches,
    node_selector_term_matches,
)
from kubesched.api.types import (
    Affinity,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PodSpec,
)
from kubesched.framework.nodematch import (
    SpecCache,
    node_selector_mask,
    required_node_affinity_mask,
    selector_map_mask,
    term_mask,
)
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.snapshot import build_table
from tests.hypothesis_profiles import scaled

R = NodeSelectorRequirement


def nodes_table() -> tuple[NodeTable, list[Node]]:
    nodes = [
        Node("n1", labels={"zone": "a", "gen": "3", "gpu": ""}),
        Node("n2", labels={"zone": "b", "gen": "+7"}),
        Node("n3", labels={"zone": "c", "gen": "x"}),
        Node("n4", labels={}),
        Node("n5", labels={"zone": "a", "gen": "-2"}),
    ]
    return build_table(nodes), nodes


def mask_names(table: NodeTable, mask: np.ndarray) -> set[str]:
    return {name for name, row in table.row_of.items() if mask[row]}


@pytest.mark.parametrize(
    ("term", "want"),
    [
        pytest.param(NodeSelectorTerm((R("zone", "In", ("a", "c")),)), {"n1", "n3", "n5"}, id="In"),
        pytest.param(
            NodeSelectorTerm((R("zone", "NotIn", ("a",)),)),
            {"n2", "n3", "n4"},
            id="NotIn matches nodes without the label",
        ),
        pytest.param(
            NodeSelectorTerm((R("gpu", "Exists"),)), {"n1"}, id="Exists with an empty value"
        ),
        pytest.param(NodeSelectorTerm((R("zone", "DoesNotExist"),)), {"n4"}, id="DoesNotExist"),
        pytest.param(
            NodeSelectorTerm((R("gen", "Gt", ("2",)),)),
            {"n1", "n2"},
            id="Gt parses +7 and skips values that are not integers",
        ),
        pytest.param(
            NodeSelectorTerm((R("gen", "Lt", ("0",)),)), {"n5"}, id="Lt with a negative value"
        ),
        pytest.param(
            NodeSelectorTerm((R("gen", "Gt", ("two",)),)), set(), id="Gt bound not an integer"
        ),
        pytest.param(
            NodeSelectorTerm((R("zone", "In", ("a",)), R("gen", "Gt", ("0",)))),
            {"n1"},
            id="requirements are ANDed",
        ),
        pytest.param(NodeSelectorTerm(), set(), id="an empty term matches nothing"),
        pytest.param(
            NodeSelectorTerm((R("zone", "In", ("a", "bad value!")),)),
            set(),
            id="a term that fails to parse matches nothing",
        ),
        pytest.param(NodeSelectorTerm((R("zone", "Near", ("a",)),)), set(), id="unknown operator"),
        pytest.param(
            NodeSelectorTerm(match_fields=(R("metadata.name", "In", ("n2",)),)),
            {"n2"},
            id="matchFields In metadata.name",
        ),
        pytest.param(
            NodeSelectorTerm(match_fields=(R("metadata.name", "NotIn", ("n2",)),)),
            {"n1", "n3", "n4", "n5"},
            id="matchFields NotIn metadata.name",
        ),
        pytest.param(
            NodeSelectorTerm(match_fields=(R("metadata.name", "In", ("n1", "n2")),)),
            set(),
            id="matchFields In needs exactly one value",
        ),
        pytest.param(
            NodeSelectorTerm(match_fields=(R("metadata.name", "In", ("gone",)),)),
            set(),
            id="matchFields naming no node",
        ),
        pytest.param(
            NodeSelectorTerm(
                (R("zone", "In", ("a",)),), match_fields=(R("metadata.name", "In", ("n5",)),)
            ),
            {"n5"},
            id="expressions and fields are ANDed",
        ),
    ],
)
def test_term_mask(term: NodeSelectorTerm, want: set[str]) -> None:
    table, nodes = nodes_table()
    got = mask_names(table, term_mask(table, term))
    assert got == want
    assert got == {n.name for n in nodes if node_selector_term_matches(term, n.name, n.labels)}


def test_selector_terms_are_ored_and_map_is_anded() -> None:
    table, nodes = nodes_table()
    sel = NodeSelector(
        (NodeSelectorTerm((R("zone", "In", ("b",)),)), NodeSelectorTerm((R("gpu", "Exists"),)))
    )
    assert mask_names(table, node_selector_mask(table, sel)) == {"n1", "n2"}
    assert mask_names(table, node_selector_mask(table, NodeSelector(()))) == set()
    assert mask_names(table, selector_map_mask(table, {"zone": "a", "gen": "3"})) == {"n1"}
    assert mask_names(table, selector_map_mask(table, {})) == {f"n{i}" for i in range(1, 6)}
    assert mask_names(table, selector_map_mask(table, {"gpu": ""})) == {"n1"}
    spec = PodSpec(
        node_selector={"zone": "a"},
        affinity=Affinity(node_affinity=NodeAffinity(required=sel)),
    )
    assert mask_names(table, required_node_affinity_mask(table, spec)) == {"n1"}
    assert mask_names(table, node_selector_mask(table, sel)) == {
        n.name for n in nodes if node_selector_matches(sel, n.name, n.labels)
    }


def test_masks_follow_node_updates_and_row_reuse() -> None:
    table, _ = nodes_table()
    term = NodeSelectorTerm((R("zone", "In", ("a",)),))
    assert mask_names(table, term_mask(table, term)) == {"n1", "n5"}
    table.remove_node("n1")
    assert mask_names(table, term_mask(table, term)) == {"n5"}
    info = build_table([Node("n6", labels={"zone": "a"})]).infos[0]
    assert info is not None
    table.add_node(info)
    assert mask_names(table, term_mask(table, term)) == {"n5", "n6"}


def test_spec_cache() -> None:
    table, _ = nodes_table()
    other = build_table([Node("x")])
    cache: SpecCache[int] = SpecCache()
    spec = PodSpec()
    assert cache.get(spec, table) is None
    cache.put(spec, table, 1)
    assert cache.get(spec, table) == 1
    assert cache.get(spec, other) is None, "another table never reuses a value"
    assert cache.get(PodSpec(), table) is None, "keyed by spec identity"
    table.remove_node("n4")
    assert cache.get(spec, table) is None, "a node change invalidates"
    cache.put(spec, table, 2)
    del spec
    gc.collect()
    assert len(cache._entries) == 0, "entries die with their spec"


# --------------------------------------------------------------------------- property

KEYS = ["a", "b", "gen", "bad key"]
VALUES = ["", "1", "2", "+3", "-4", "05", "x", "bar", "9223372036854775808", "a b"]
NAMES = ["n0", "n1", "n2", "n3"]

label_sets = st.dictionaries(st.sampled_from(KEYS[:3]), st.sampled_from(VALUES[:-1]), max_size=3)
requirements = st.builds(
    R,
    st.sampled_from(KEYS),
    st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Bogus"]),
    st.lists(st.sampled_from(VALUES), max_size=3).map(tuple),
)
field_requirements = st.builds(
    R,
    st.sampled_from(["metadata.name", "metadata.namespace"]),
    st.sampled_from(["In", "NotIn", "Exists"]),
    st.lists(st.sampled_from([*NAMES, "", "zz"]), min_size=0, max_size=2).map(tuple),
)
terms = st.builds(
    NodeSelectorTerm,
    st.lists(requirements, max_size=3).map(tuple),
    st.lists(field_requirements, max_size=2).map(tuple),
)


@settings(max_examples=scaled(300), deadline=None)
@given(
    st.lists(label_sets, min_size=1, max_size=len(NAMES)),
    st.lists(terms, max_size=3),
    st.dictionaries(st.sampled_from(KEYS[:3]), st.sampled_from(VALUES[:-1]), max_size=2),
)
def test_masks_agree_with_per_node_matchers(
    labels: list[dict[str, str]],
    sel_terms: list[NodeSelectorTerm],
    selector_map: dict[str, str],
) -> None:
    nodes = [Node(NAMES[i], labels=lbl) for i, lbl in enumerate(labels)]
    table = build_table(nodes)
    sel = NodeSelector(tuple(sel_terms))
    sel_mask = node_selector_mask(table, sel)
    map_mask = selector_map_mask(table, selector_map)
    for n in nodes:
        row = table.row_of[n.name]
        assert sel_mask[row] == node_selector_matches(sel, n.name, n.labels)
        for t in sel_terms:
            assert term_mask(table, t)[row] == node_selector_term_matches(t, n.name, n.labels)
        assert map_mask[row] == match_node_selector_map(selector_map, n.labels)
