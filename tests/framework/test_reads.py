"""Reads declarations: value semantics and what node selectors read."""

from __future__ import annotations

from kubesched.api.types import NodeSelectorRequirement, NodeSelectorTerm, PreferredSchedulingTerm
from kubesched.framework.reads import (
    NO_READS,
    LabelRead,
    Reads,
    preferred_value,
    selector_reads,
    term_value,
)

R = NodeSelectorRequirement


def test_reads_compare_and_hash_by_value() -> None:
    a = Reads(taints=True, labels=(LabelRead("zone", frozenset({"a"})),), fragment=("x", 1))
    b = Reads(taints=True, labels=(LabelRead("zone", frozenset({"a"})),), fragment=("x", 1))
    assert a == b and hash(a) == hash(b) and a is not b
    assert {a: 1}[b] == 1
    c = Reads(taints=True, labels=(LabelRead("zone", frozenset({"a"})),), fragment=("x", 2))
    assert c != a, "the fragment is part of the value"
    assert c.columns == a.columns, "but not of the columns rows are grouped by"
    assert Reads(unschedulable=True) != Reads(taints=True)
    assert Reads() == NO_READS and NO_READS.columns == (False, False, (), None, (), False)


def test_only_host_ports_are_pod_dependent() -> None:
    assert Reads(host_ports=True).pod_dependent
    assert not Reads(taints=True, unschedulable=True, names=frozenset({"n"})).pod_dependent
    assert not Reads(images=("i:latest",), labels=(LabelRead("k"),)).pod_dependent


def test_selector_reads_per_operator() -> None:
    term = NodeSelectorTerm(
        (
            R("zone", "In", ("a", "b")),
            R("zone", "NotIn", ("c",)),
            R("gpu", "Exists"),
            R("disk", "DoesNotExist"),
            R("gen", "Gt", ("3",)),
            R("odd", "Near", ("x",)),
        )
    )
    got = selector_reads([term])
    assert got.labels == (
        LabelRead("disk", frozenset()),
        LabelRead("gen", frozenset(), frozenset({3})),
        LabelRead("gpu", frozenset()),
        LabelRead("odd", None),
        LabelRead("zone", frozenset({"a", "b", "c"})),
    )
    assert got.names is None, "no matchFields: the name is not read"
    assert not (got.taints or got.unschedulable or got.images or got.host_ports)


def test_gt_and_lt_read_their_bounds_or_the_whole_value() -> None:
    terms = [
        NodeSelectorTerm((R("gen", "Gt", ("+3",)), R("gen", "In", ("x",)))),
        NodeSelectorTerm((R("gen", "Lt", ("-2",)), R("rank", "Lt", ("ten",)))),
        NodeSelectorTerm((R("size", "Gt", ("1", "2")),)),
    ]
    assert selector_reads(terms).labels == (
        LabelRead("gen", frozenset({"x"}), frozenset({3, -2})),
        LabelRead("rank", None),
        LabelRead("size", None),
    )


def test_selector_reads_merge_map_terms_and_fields() -> None:
    terms = [
        NodeSelectorTerm((R("zone", "In", ("a",)),)),
        NodeSelectorTerm(
            (R("zone", "Lt", ("2",)),),
            (R("metadata.name", "In", ("n1",)), R("metadata.name", "NotIn", ("n2",))),
        ),
        NodeSelectorTerm(match_fields=(R("metadata.namespace", "In", ("x",)),)),
    ]
    got = selector_reads(terms, {"rack": "r1", "zone": "b"}, fragment="f")
    assert got.labels == (
        LabelRead("rack", frozenset({"r1"})),
        LabelRead("zone", frozenset({"a", "b"}), frozenset({2})),
    )
    assert got.names == frozenset({"n1", "n2", "x"})
    assert got.fragment == "f"
    empty_fields = selector_reads([NodeSelectorTerm(match_fields=(R("f", "In", ()),))])
    assert empty_fields.names == frozenset(), "matchFields read the name even with no values"


def test_values_of_selectors() -> None:
    def make() -> NodeSelectorTerm:
        return NodeSelectorTerm((R("zone", "In", ("a",)),), (R("metadata.name", "In", ("n",)),))

    assert make() != make(), "the API types compare by identity"
    assert term_value(make()) == term_value(make())
    assert term_value(make()) != term_value(NodeSelectorTerm((R("zone", "In", ("a",)),)))
    assert preferred_value([PreferredSchedulingTerm(2, make())]) == preferred_value(
        [PreferredSchedulingTerm(2, make())]
    )
    assert preferred_value([PreferredSchedulingTerm(2, make())]) != preferred_value(
        [PreferredSchedulingTerm(3, make())]
    )
