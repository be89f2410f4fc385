"""framework.derive: rows grouped by declared columns, per-node answers spread to
rows, and the lifetime of the kept answers."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.selectors import parse_int64_label
from kubesched.api.types import Node, Taint
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.derive import MAX_ENTRIES, Derived, node_groups
from kubesched.framework.interfaces import NodeSet
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.reads import LabelRead, Reads
from kubesched.framework.results import NodeScore
from kubesched.framework.scoring import default_normalize_score
from kubesched.framework.status import SUCCESS, Status, error, unresolvable, unschedulable
from kubesched.framework.types import NodeInfo, PodInfo
from tests.builders import build_table, make_node, make_pod
from tests.hypothesis_profiles import scaled

ZONE_B = unresolvable("zone b")
NO_ZONE = unschedulable("no zone")


def live_rows(table: NodeTable) -> list[int]:
    return sorted(table.row_of.values())


def update(table: NodeTable, node: Node) -> None:
    info = table.infos[table.row_of[node.name]]
    assert info is not None
    info.set_node(node)
    table.update_node(info)


# --------------------------------------------------------------------------- groups


def column_value(table: NodeTable, row: int, reads: Reads) -> tuple[object, ...]:
    """What ``reads`` says a row's answer depends on, read from its NodeInfo."""
    info = table.infos[row]
    assert info is not None and info.node is not None
    node = info.node
    out: list[object] = []
    if reads.taints:
        out.append(node.taints)
    if reads.unschedulable:
        out.append(node.unschedulable)
    for lr in reads.labels:
        v = node.labels.get(lr.key)
        if v is None or lr.values is None:
            out.append(v)
            continue
        n = parse_int64_label(v)
        sides = tuple(None if n is None else (n < b, n == b) for b in sorted(lr.bounds))
        out.append((v if v in lr.values else "<other>", sides))
    if reads.names is not None:
        out.append(node.name if node.name in reads.names or not node.name else "<other>")
    for image in reads.images:
        st_ = info.image_states.get(image)
        out.append(None if st_ is None else (st_.size, st_.num_nodes))
    if reads.host_ports:
        out.append(row if len(info.used_ports) else None)
    return tuple(out)


_nodes = st.lists(
    st.tuples(
        st.sampled_from([(), (Taint("a", "", "NoSchedule"),), (Taint("b", "1", "NoExecute"),)]),
        st.booleans(),
        st.dictionaries(
            st.sampled_from(["zone", "gen"]), st.sampled_from(["a", "b", "1", "+1", "-1", "3", "7"])
        ),
        st.sets(st.sampled_from(["img1", "img2"])),
        st.booleans(),
    ),
    min_size=1,
    max_size=8,
)
_reads = st.builds(
    Reads,
    taints=st.booleans(),
    unschedulable=st.booleans(),
    labels=st.sampled_from(
        [
            (),
            (LabelRead("zone"),),
            (LabelRead("gen", frozenset({"1"})), LabelRead("zone", frozenset())),
            (LabelRead("gen", frozenset(), frozenset({1, 3})),),
            (LabelRead("gen", frozenset({"a"}), frozenset({-1})), LabelRead("zone")),
            (LabelRead("missing"),),
        ]
    ),
    names=st.sampled_from([None, frozenset(), frozenset({"n1", "n3", "zz"})]),
    images=st.sampled_from([(), ("img1:latest",), ("img1:latest", "img2:latest")]),
    host_ports=st.booleans(),
)


_sparse_reads = st.builds(
    Reads,
    names=_reads.map(lambda r: r.names),
    images=_reads.map(lambda r: r.images),
    host_ports=st.booleans(),
)


@settings(max_examples=scaled(200), deadline=None)
@given(_nodes, st.one_of(_reads, _sparse_reads), st.sets(st.integers(0, 7)))
def test_groups_are_the_rows_equal_on_the_declared_columns(
    spec: list[tuple[tuple[Taint, ...], bool, dict[str, str], set[str], bool]],
    reads: Reads,
    removed: set[int],
) -> None:
    nodes = []
    pods = []
    for i, (taints, cordoned, labels, images, port) in enumerate(spec):
        b = make_node(f"n{i}").labels(labels).unschedulable(cordoned)
        for t in taints:
            b = b.taint(t.key, t.value, t.effect)
        for j, image in enumerate(sorted(images)):
            b = b.image(100 + j * (i % 2), image)
        nodes.append(b.obj())
        if port:
            pods.append(make_pod(f"p{i}").host_port(80).node(f"n{i}").obj())
    table = build_table(nodes, pods)
    for i in sorted(removed):
        if i < len(nodes) and len(table) > 1:
            table.remove_node(f"n{i}")
    groups = node_groups(table, reads)
    rows = live_rows(table)
    assert len(groups.group_of_row) == table.capacity
    for r in range(table.capacity):
        if r not in table.row_of.values():
            assert groups.group_of_row[r] == len(groups), "free slots map past the groups"
    for a in rows:
        for b in rows:
            same = groups.group_of_row[a] == groups.group_of_row[b]
            assert same == (column_value(table, a, reads) == column_value(table, b, reads))
    assert sorted(set(groups.group_of_row[rows].tolist())) == list(range(len(groups)))
    for g, rep in enumerate(groups.representatives):
        assert groups.group_of_row[rep] == g
        assert rep == min(r for r in rows if groups.group_of_row[r] == g)


def test_groups_of_an_empty_table() -> None:
    groups = node_groups(NodeTable(8), Reads(taints=True))
    assert len(groups) == 0 and (groups.group_of_row == 0).all()


def test_many_distinct_values_are_grouped_by_sorting() -> None:
    """Wide keys (many columns with many values) take np.unique instead of bincount."""
    nodes = [
        make_node(f"n{i}").labels({"a": str(i % 7), "b": str(i % 11)}).obj() for i in range(90)
    ]
    table = build_table(nodes)
    groups = node_groups(table, Reads(labels=(LabelRead("a"), LabelRead("b"))))
    assert len(groups) == 77
    for r in live_rows(table):
        for s in live_rows(table):
            same = groups.group_of_row[r] == groups.group_of_row[s]
            assert same == ((r % 7, r % 11) == (s % 7, s % 11))


# --------------------------------------------------------------------------- filter


@dataclass(eq=False)
class ZoneFilter:
    """A static filter on the ``zone`` label that counts its per-node calls."""

    name: str = "ZoneFilter"
    calls: int = 0
    reads: Reads = field(default_factory=lambda: Reads(labels=(LabelRead("zone"),)))
    fail_zone: str = "b"

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        self.calls += 1
        assert node.node is not None
        zone = node.node.labels.get("zone")
        if zone is None:
            return NO_ZONE
        if zone == "err":
            return error("boom")
        return ZONE_B if zone == self.fail_zone else SUCCESS

    def filter_reads(self, state: CycleState, pod: PodInfo) -> Reads | None:
        return self.reads


def zoned(*zones: str | None) -> NodeTable:
    return build_table(
        [
            make_node(f"n{i}").labels({} if z is None else {"zone": z}).obj()
            for i, z in enumerate(zones)
        ]
    )


def verdict_of(
    table: NodeTable, index: np.ndarray, statuses: tuple[Status, ...]
) -> dict[str, Status]:
    return {
        name: SUCCESS if index[row] < 0 else statuses[index[row]]
        for name, row in table.row_of.items()
    }


def test_filter_calls_the_plugin_once_per_group_and_keeps_the_answer() -> None:
    table = zoned("a", "b", "a", None, "b", "c")
    pl, d, pod = ZoneFilter(), Derived(), make_pod("p").info()
    v = d.filter(pl, CycleState(), pod, table)
    assert v is not None
    assert pl.calls == 4, "zones a, b, c and none"
    assert verdict_of(table, v.index, tuple(v.statuses)) == {
        "n0": SUCCESS,
        "n1": ZONE_B,
        "n2": SUCCESS,
        "n3": NO_ZONE,
        "n4": ZONE_B,
        "n5": SUCCESS,
    }
    assert list(v.statuses) == [ZONE_B, NO_ZONE] or list(v.statuses) == [NO_ZONE, ZONE_B]
    assert v.statuses[0] is ZONE_B or v.statuses[0] is NO_ZONE, "the plugin's own objects"
    assert not v.index.flags.writeable
    again = d.filter(pl, CycleState(), make_pod("q").info(), table)
    assert again is v and pl.calls == 4, "kept while no node changes"
    table.add_pod(table.row_of["n0"], make_pod("x").node("n0").info())
    assert d.filter(pl, CycleState(), pod, table) is v, "pod changes keep it"
    update(table, make_node("n0").labels({"zone": "b"}).obj())
    v2 = d.filter(pl, CycleState(), pod, table)
    assert v2 is not v and pl.calls == 8, "a node change drops it"
    assert v2 is not None and verdict_of(table, v2.index, tuple(v2.statuses))["n0"] == ZONE_B
    other = zoned("b")
    v3 = d.filter(pl, CycleState(), pod, other)
    assert v3 is not None and verdict_of(other, v3.index, tuple(v3.statuses)) == {"n0": ZONE_B}


def test_filter_answers_are_kept_per_reads_value() -> None:
    table = zoned("a", "b")
    pl, d, pod = ZoneFilter(), Derived(), make_pod("p").info()
    first = d.filter(pl, CycleState(), pod, table)
    pl.reads = Reads(labels=(LabelRead("zone"),), fragment="other pod")
    pl.fail_zone = "a"
    second = d.filter(pl, CycleState(), pod, table)
    assert second is not None and second is not first
    assert verdict_of(table, second.index, tuple(second.statuses)) == {"n0": ZONE_B, "n1": SUCCESS}
    pl.reads = Reads(labels=(LabelRead("zone"),))  # equal to the first, another object
    assert d.filter(pl, CycleState(), pod, table) is first


def test_all_pass_has_no_status_and_an_error_defers_to_the_per_node_path() -> None:
    pl, d, pod = ZoneFilter(), Derived(), make_pod("p").info()
    v = d.filter(pl, CycleState(), pod, zoned("a", "c"))
    assert v is not None and not v.statuses
    assert d.filter(pl, CycleState(), pod, zoned("a", "err")) is None
    pl.reads = None  # type: ignore[assignment]
    assert d.filter(pl, CycleState(), pod, zoned("a")) is None


def test_pod_dependent_answers_are_never_kept() -> None:
    table = zoned("a", "b")
    pl, d, pod = ZoneFilter(), Derived(), make_pod("p").info()
    pl.reads = Reads(labels=(LabelRead("zone"),), host_ports=True)
    d.filter(pl, CycleState(), pod, table)
    d.filter(pl, CycleState(), pod, table)
    assert pl.calls == 4


def test_kept_answers_are_bounded() -> None:
    table = zoned("a", "b")
    pl, d, pod = ZoneFilter(), Derived(), make_pod("p").info()
    for i in range(MAX_ENTRIES + 3):
        pl.reads = Reads(labels=(LabelRead("zone"),), fragment=i)
        v = d.filter(pl, CycleState(), pod, table)
        assert v is not None and verdict_of(table, v.index, tuple(v.statuses))["n1"] == ZONE_B
    assert len(d._filters) <= MAX_ENTRIES


# --------------------------------------------------------------------------- score


@dataclass(eq=False)
class GenScore:
    """A static score: the ``gen`` label as an int; optionally normalised
    (DefaultNormalizeScore, reversed)."""

    name: str = "GenScore"
    normalise: bool = True
    calls: int = 0
    reads: Reads | None = field(default_factory=lambda: Reads(labels=(LabelRead("gen"),)))

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        self.calls += 1
        assert node.node is not None
        gen = node.node.labels.get("gen", "0")
        if gen == "err":
            return 0, error("boom")
        return int(gen), SUCCESS

    def score_extensions(self) -> GenScore | None:
        return self if self.normalise else None

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status:
        default_normalize_score(scores, reverse=True)
        return SUCCESS

    def score_reads(self, state: CycleState, pod: PodInfo) -> Reads | None:
        return self.reads


def gens(*values: str) -> NodeTable:
    return build_table([make_node(f"n{i}").labels({"gen": v}).obj() for i, v in enumerate(values)])


def per_node(pl: GenScore, table: NodeTable, names: list[str]) -> list[int]:
    pod = make_pod("p").info()
    out = []
    for n in names:
        info = table.infos[table.row_of[n]]
        assert info is not None
        out.append(NodeScore(n, pl.score(CycleState(), pod, info)[0]))
    if pl.normalise:
        pl.normalize_score(CycleState(), pod, out)
    return [x.score for x in out]


def nodeset(table: NodeTable, names: list[str]) -> NodeSet:
    return NodeSet(table, np.array([table.row_of[n] for n in names], dtype=np.int64))


@settings(max_examples=scaled(200), deadline=None)
@given(
    st.lists(st.sampled_from(["0", "1", "2", "5"]), min_size=1, max_size=8),
    st.sets(st.integers(0, 7)),
    st.booleans(),
)
def test_scores_equal_per_node_scores_on_any_subset(
    values: list[str], subset: set[int], normalise: bool
) -> None:
    table = gens(*values)
    names = [f"n{i}" for i in range(len(values)) if i in subset]
    pl, d = GenScore(normalise=normalise), Derived()
    got = d.scores(pl, CycleState(), make_pod("p").info(), nodeset(table, names))
    assert got is not None and got.tolist() == per_node(pl, table, names)
    assert pl.calls <= len(set(values)) + len(names), "one call per group, plus the reference"
    slots = d.slots(pl, CycleState(), make_pod("p").info(), table)
    if slots is not None:
        assert [int(slots[table.row_of[n]]) for n in names] == per_node(pl, table, names)
    if not normalise or len(set(values)) == 1:
        assert slots is not None


def test_slots_are_one_array_while_nodes_do_not_change() -> None:
    table = gens("1", "2", "1")
    pl, d, pod = GenScore(normalise=False), Derived(), make_pod("p").info()
    slots = d.slots(pl, CycleState(), pod, table)
    assert slots is not None and not slots.flags.writeable
    assert [int(slots[table.row_of[f"n{i}"]]) for i in range(3)] == [1, 2, 1]
    assert d.slots(pl, CycleState(), pod, table) is slots
    update(table, make_node("n0").labels({"gen": "5"}).obj())
    again = d.slots(pl, CycleState(), pod, table)
    assert again is not None and again is not slots and int(again[table.row_of["n0"]]) == 5


def test_normalised_slots_only_when_one_raw_score_everywhere() -> None:
    table = gens("2", "2")
    pl, d, pod = GenScore(), Derived(), make_pod("p").info()
    a = d.slots(pl, CycleState(), pod, table)
    assert a is not None and (a == 0).all(), "reversed: the maximum maps to 0"
    assert d.slots(pl, CycleState(), pod, table) is a
    assert d.slots(pl, CycleState(), pod, gens("1", "2")) is None, "depends on the scored nodes"


def test_failing_scores_defer_to_the_per_node_path() -> None:
    table = gens("1", "err")
    pl, d, pod = GenScore(), Derived(), make_pod("p").info()
    assert d.scores(pl, CycleState(), pod, nodeset(table, ["n0"])) is None
    assert d.slots(pl, CycleState(), pod, table) is None
    pl.reads = None
    assert d.scores(pl, CycleState(), pod, nodeset(gens("1"), ["n0"])) is None
    empty = d.scores(GenScore(), CycleState(), pod, nodeset(gens("1"), []))
    assert empty is not None and len(empty) == 0


def test_pod_dependent_scores_give_no_slots() -> None:
    table = gens("1", "2")
    pl, d, pod = GenScore(normalise=False), Derived(), make_pod("p").info()
    pl.reads = Reads(labels=(LabelRead("gen"),), host_ports=True)
    got = d.scores(pl, CycleState(), pod, nodeset(table, ["n0", "n1"]))
    assert got is not None and got.tolist() == [1, 2]
    assert d.slots(pl, CycleState(), pod, table) is None


def test_a_node_without_a_name_is_told_apart_when_names_are_read() -> None:
    """The per-node matchers ignore matchFields for a node without a name, so such a
    node must not share a group with other nodes the names do not list."""
    table = build_table([Node(""), Node("x"), Node("n1")])
    groups = node_groups(table, Reads(names=frozenset({"n1"})))
    g = groups.group_of_row
    assert len(groups) == 3
    assert len({int(g[table.row_of[n]]) for n in ("", "x", "n1")}) == 3


def test_label_bounds_group_values_by_their_place_among_the_bounds() -> None:
    """Gt / Lt with bounds 1 and 3: values below 1, equal to 1, between, equal to 3
    and above answer alike within each class; values that do not parse as int64 and
    nodes without the label form their own classes."""
    values = ["a", "-1", "0", "1", "+1", "2", "3", "9", "10", None, "x"]
    table = build_table(
        [
            make_node(f"n{i}").labels({} if v is None else {"gen": v}).obj()
            for i, v in enumerate(values)
        ]
    )
    groups = node_groups(table, Reads(labels=(LabelRead("gen", frozenset(), frozenset({1, 3})),)))
    g = [int(groups.group_of_row[table.row_of[f"n{i}"]]) for i in range(len(values))]
    classes: dict[int, set[str | None]] = {}
    for v, gi in zip(values, g, strict=True):
        classes.setdefault(gi, set()).add(v)
    assert sorted(classes.values(), key=lambda c: sorted(map(str, c))) == sorted(
        [{"a", "x"}, {"-1", "0"}, {"1", "+1"}, {"2"}, {"3"}, {"9", "10"}, {None}],
        key=lambda c: sorted(map(str, c)),
    )
