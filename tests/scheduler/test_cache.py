"""The scheduler cache keeps NodeInfos and the NodeTable current incrementally.

A hypothesis state machine applies random node add/update/remove and pod
add/update/remove/assume/forget/confirm operations to a ``Cache`` and to a
plain model of the final objects. After every step the cache must equal a
fresh build of the model: every NodeInfo (requests, non-zero requests, pods,
ports, image states) equals one built from scratch, the NodeTable arrays
equal those of ``framework.snapshot.build_table`` row by row (by node name,
since rows are slots), and the table's order is upstream's node-tree order
(zones round-robin, insertion order within a zone; a zone change moves the
node to the end of its new zone; an emptied zone leaves the zone list).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from kubesched.api.types import LABEL_REGION, LABEL_ZONE, NO_EXECUTE, NO_SCHEDULE, Node, Pod
from kubesched.framework.nodetable import NodeTable, zone_key
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.scheduler.cache import Cache, CacheError
from tests.builders import build_table, make_node, make_pod, selector
from tests.hypothesis_profiles import scaled

NODE_NAMES = ("n0", "n1", "n2", "n3", "n4", "n5")
GPU = "example.com/gpu"
LABEL_KEYS = ("disk", LABEL_ZONE, LABEL_REGION)
IMAGE_SIZES = {"nginx": 1_000, "redis:7": 50_000_000, "app": 7_000_000}


# --------------------------------------------------------------------------- strategies


@st.composite
def nodes(draw: st.DrawFn, name: str) -> Node:
    b = make_node(name).capacity(
        cpu=draw(st.sampled_from(("1", "2", "4"))),
        memory=draw(st.sampled_from(("1Gi", "4Gi"))),
        pods=draw(st.integers(1, 20)),
    )
    if draw(st.booleans()):
        b.capacity_map({GPU: draw(st.integers(1, 4))})
    zone = draw(st.sampled_from(("", "a", "b", "c")))
    if zone:
        b.label(LABEL_ZONE, zone)
    if draw(st.booleans()):
        b.label(LABEL_REGION, draw(st.sampled_from(("r1", "r2"))))
    disk = draw(st.sampled_from(("", "ssd", "hdd")))
    if disk:
        b.label("disk", disk)
    if draw(st.booleans()):
        b.taint("dedicated", draw(st.sampled_from(("a", "b"))), NO_SCHEDULE)
    if draw(st.integers(0, 3)) == 0:
        b.taint("maint", "", NO_EXECUTE)
    if draw(st.integers(0, 4)) == 0:
        b.unschedulable()
    for image in draw(st.lists(st.sampled_from(sorted(IMAGE_SIZES)), max_size=2, unique=True)):
        # One size per image name: the cache keeps the first size it saw for a name
        # (see test_image_size_is_the_first_one_seen), a fresh build each node's own.
        b.image(IMAGE_SIZES[image], image)
    return b.obj()


@st.composite
def pods(draw: st.DrawFn, name: str, port: int) -> Pod:
    """A pod spec; its node is set by the caller. ``port`` is unique per pod, because
    two pods using the same host port on one node make the incremental port set
    differ from a fresh one after removing one of them (upstream has the same
    property: HostPortInfo is a set)."""
    b = make_pod(name).uid(name)
    req: dict[str, str | int] = {}
    cpu = draw(st.sampled_from(("", "100m", "1")))
    if cpu:
        req["cpu"] = cpu
    mem = draw(st.sampled_from(("", "128Mi")))
    if mem:
        req["memory"] = mem
    if draw(st.integers(0, 3)) == 0:
        req[GPU] = 1
    b.req_map(req)
    if draw(st.booleans()):
        b.host_port(port)
    if draw(st.integers(0, 3)) == 0:
        b.pod_affinity("kubernetes.io/hostname", selector(app="x"), anti=draw(st.booleans()))
    return b.obj()


# --------------------------------------------------------------------------- the reference


class NodeTree:
    """Upstream's nodeTree (backend/cache/node_tree.go): zones in order of creation,
    removed when emptied; nodes appended to their zone."""

    def __init__(self) -> None:
        self.zones: dict[str, list[str]] = {}

    def add(self, node: Node) -> None:
        self.zones.setdefault(zone_key(node.labels), []).append(node.name)

    def remove(self, node: Node) -> None:
        zone = zone_key(node.labels)
        self.zones[zone].remove(node.name)
        if not self.zones[zone]:
            del self.zones[zone]

    def update(self, old: Node, new: Node) -> None:
        if zone_key(old.labels) == zone_key(new.labels):
            return
        self.remove(old)
        self.add(new)

    def list(self) -> list[str]:
        out: list[str] = []
        depth = 0
        total = sum(len(z) for z in self.zones.values())
        while len(out) < total:
            for names in self.zones.values():
                if depth < len(names):
                    out.append(names[depth])
            depth += 1
        return out


def resource_cols(table: NodeTable, row: int, which: str) -> dict[str, int]:
    arr = table.allocatable if which == "allocatable" else table.requested
    return {name: int(arr[row, col]) for name, col in table.res_index.items() if arr[row, col]}


def row_facts(table: NodeTable, name: str) -> dict[str, object]:
    row = table.row_of[name]
    images = {img: rows[row] for img, rows in table.images.items() if row in rows}
    labels = {}
    for key in LABEL_KEYS:
        col = table.label(key)
        code = int(col.codes[row])
        labels[key] = col.values[code] if code >= 0 else None
    return {
        "name": table.names[row],
        "alive": bool(table.alive[row]),
        "allocatable": resource_cols(table, row, "allocatable"),
        "requested": resource_cols(table, row, "requested"),
        "non_zero": table.non_zero[row].tolist(),
        "unschedulable": bool(table.unschedulable[row]),
        "taints": table.taint_sets[int(table.taint_set[row])],
        "has_ports": bool(table.has_ports[row]),
        "images": images,
        "labels": labels,
    }


def info_facts(info: NodeInfo) -> dict[str, object]:
    return {
        "node": info.node,
        "requested": info.requested.as_list(),
        "non_zero": (info.non_zero_requested.milli_cpu, info.non_zero_requested.memory),
        "allocatable": info.allocatable.as_list(),
        "pods": sorted(p.pod.uid for p in info.pods),
        "with_affinity": sorted(p.pod.uid for p in info.pods_with_affinity),
        "with_anti_affinity": sorted(p.pod.uid for p in info.pods_with_required_anti_affinity),
        "ports": {ip: sorted(ports) for ip, ports in info.used_ports._by_ip.items()},
        "images": {n: (s.size, s.num_nodes) for n, s in info.image_states.items()},
    }


def clean(resources: object) -> object:
    """Resource.as_list always carries cpu and memory; drop zeros for comparison."""
    assert isinstance(resources, dict)
    return {k: v for k, v in resources.items() if v}


def assert_cache_matches(
    cache: Cache, model_nodes: dict[str, Node], model_pods: dict[str, Pod], tree: NodeTree
) -> None:
    fresh = build_table(model_nodes.values(), model_pods.values())
    table = cache.table
    assert set(cache.nodes) == set(model_nodes)
    assert len(table) == len(model_nodes)
    assert set(table.row_of) == set(model_nodes)
    assert table.ordered_names == tree.list()
    assert [i.name for i in table.ordered_infos()] == tree.list()
    for name in model_nodes:
        got, want = row_facts(table, name), row_facts(fresh, name)
        assert got == want, name
        row = table.row_of[name]
        info = cache.nodes[name]
        assert table.infos[row] is info
        fresh_info = fresh.infos[fresh.row_of[name]]
        assert fresh_info is not None
        gi, wi = info_facts(info), info_facts(fresh_info)
        for key in ("requested", "allocatable"):
            gi[key], wi[key] = clean(gi[key]), clean(wi[key])
        assert gi == wi, name
    for row in range(table.capacity):
        if table.alive[row]:
            continue
        assert table.infos[row] is None
        assert not table.requested[row].any()
        assert not table.allocatable[row].any()
        assert not table.non_zero[row].any()
        assert not table.has_ports[row]
        assert not table.unschedulable[row]
        assert all(row not in rows for rows in table.images.values())
    assert cache.pod_count() == len(model_pods)


# --------------------------------------------------------------------------- the machine


@dataclass
class PodState:
    pod: Pod
    assumed: bool


class CacheMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.cache = Cache()
        self.nodes: dict[str, Node] = {}
        self.pods: dict[str, PodState] = {}
        self.tree = NodeTree()
        self.next_pod = 0

    # ------------------------------------------------------------------ nodes
    @initialize()
    def start(self) -> None:
        pass

    @precondition(lambda self: len(self.nodes) < len(NODE_NAMES))
    @rule(data=st.data())
    def add_node(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from([n for n in NODE_NAMES if n not in self.nodes]))
        node = data.draw(nodes(name))
        self.cache.add_node(node)
        self.nodes[name] = node
        self.tree.add(node)

    @precondition(lambda self: bool(self.nodes))
    @rule(data=st.data())
    def update_node(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(sorted(self.nodes)))
        new = data.draw(nodes(name))
        old = self.nodes[name]
        if data.draw(st.booleans()):
            self.cache.update_node(old, new)
        else:
            self.cache.add_node(new)  # an add for a known node is an update
        self.nodes[name] = new
        self.tree.update(old, new)

    @precondition(lambda self: bool(self.nodes))
    @rule(data=st.data())
    def remove_node(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(sorted(self.nodes)))
        node = self.nodes.pop(name)
        self.cache.remove_node(node)
        self.tree.remove(node)

    # ------------------------------------------------------------------ pods
    def _new_pod(self, data: st.DataObject) -> Pod:
        self.next_pod += 1
        pod = data.draw(pods(f"p{self.next_pod}", 1000 + self.next_pod))
        pod.node_name = data.draw(st.sampled_from(NODE_NAMES))
        return pod

    @rule(data=st.data())
    def add_pod(self, data: st.DataObject) -> None:
        """An assigned pod seen in the cluster (its node may not be known yet)."""
        pod = self._new_pod(data)
        pod.phase = "Running"
        self.cache.add_pod(pod)
        self.pods[pod.uid] = PodState(pod, False)

    @rule(data=st.data())
    def assume_pod(self, data: st.DataObject) -> None:
        pod = self._new_pod(data)
        self.cache.assume_pod(PodInfo(pod), pod.node_name)
        self.pods[pod.uid] = PodState(pod, True)

    def _pick(self, data: st.DataObject, assumed: bool) -> PodState:
        uids = sorted(u for u, s in self.pods.items() if s.assumed == assumed)
        return self.pods[data.draw(st.sampled_from(uids))]

    @precondition(lambda self: any(s.assumed for s in self.pods.values()))
    @rule(data=st.data())
    def forget_pod(self, data: st.DataObject) -> None:
        st_ = self._pick(data, True)
        self.cache.forget_pod(st_.pod)
        del self.pods[st_.pod.uid]

    @precondition(lambda self: any(s.assumed for s in self.pods.values()))
    @rule(data=st.data())
    def confirm_pod(self, data: st.DataObject) -> None:
        """The binding shows up as an Add, possibly on another node than assumed."""
        st_ = self._pick(data, True)
        pod = st_.pod.copy()
        if data.draw(st.booleans()):
            pod.node_name = data.draw(st.sampled_from(NODE_NAMES))
        self.cache.add_pod(pod)
        assert not self.cache.is_assumed(pod.uid)
        self.pods[pod.uid] = PodState(pod, False)

    @precondition(lambda self: any(not s.assumed for s in self.pods.values()))
    @rule(data=st.data())
    def update_pod(self, data: st.DataObject) -> None:
        st_ = self._pick(data, False)
        new = data.draw(pods(st_.pod.name, 1000 + int(st_.pod.name[1:])))
        new.node_name = (
            data.draw(st.sampled_from(NODE_NAMES))
            if data.draw(st.booleans())
            else st_.pod.node_name
        )
        self.cache.update_pod(st_.pod, new)
        self.pods[new.uid] = PodState(new, False)

    @precondition(lambda self: any(not s.assumed for s in self.pods.values()))
    @rule(data=st.data())
    def patch_pod_status(self, data: st.DataObject) -> None:
        """A status patch or graceful deletion: a copy sharing the spec (the cache's
        one-step replace that keeps the summed requests)."""
        st_ = self._pick(data, False)
        new = st_.pod.copy()
        if data.draw(st.booleans()):
            new.deletion_timestamp = 1
        else:
            new.phase = "Running" if new.phase != "Running" else "Pending"
        self.cache.update_pod(st_.pod, new)
        self.pods[new.uid] = PodState(new, False)

    @precondition(lambda self: any(not s.assumed for s in self.pods.values()))
    @rule(data=st.data())
    def remove_pod(self, data: st.DataObject) -> None:
        st_ = self._pick(data, False)
        self.cache.remove_pod(st_.pod)
        del self.pods[st_.pod.uid]

    # ------------------------------------------------------------------ check
    @invariant()
    def matches_a_fresh_build(self) -> None:
        assert_cache_matches(
            self.cache, self.nodes, {u: s.pod for u, s in self.pods.items()}, self.tree
        )
        for uid, s in self.pods.items():
            assert self.cache.is_assumed(uid) == s.assumed


CacheMachine.TestCase.settings = settings(
    max_examples=scaled(60),
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
TestCacheStateMachine = CacheMachine.TestCase


# --------------------------------------------------------------------------- table-driven


@pytest.mark.parametrize(
    "same_spec",
    [
        pytest.param(True, id="a status patch moves the pod to the end of its node's list"),
        pytest.param(False, id="a spec change moves the pod to the end of its node's list"),
    ],
)
def test_update_pod_is_remove_then_add(same_spec: bool) -> None:
    """update_pod on one node equals remove_pod then add_pod: the node's pods in the
    same order (the last takes the freed slot, the updated pod goes last) and the
    same table row."""
    node = make_node("n1").capacity(cpu="8", memory="8Gi", pods=10).obj()
    pods = [make_pod(f"p{i}").node("n1").req(cpu=f"{i + 1}00m").obj() for i in range(4)]
    updated = pods[1].copy()
    updated.deletion_timestamp = 5
    if not same_spec:
        updated = make_pod("p1").node("n1").req(cpu="700m").obj()
        updated.uid = pods[1].uid
    got, want = Cache(), Cache()
    for cache in (got, want):
        cache.add_node(node)
        for p in pods:
            cache.add_pod(p)
    got.update_pod(pods[1], updated)
    want.remove_pod(pods[1])
    want.add_pod(updated)
    got_info, want_info = got.nodes["n1"], want.nodes["n1"]
    assert [p.pod.name for p in got_info.pods] == ["p0", "p3", "p2", "p1"]
    assert [p.pod for p in got_info.pods] == [p.pod for p in want_info.pods]
    assert info_facts(got_info) == info_facts(want_info)
    assert row_facts(got.table, "n1") == row_facts(want.table, "n1")


def test_zone_order_survives_removing_a_zones_first_node() -> None:
    """upstream keeps a zone's place while it has nodes: a, b, a minus the first a
    lists a's remaining node first."""
    cache = Cache()
    n1 = make_node("n1").label(LABEL_ZONE, "a").obj()
    n2 = make_node("n2").label(LABEL_ZONE, "b").obj()
    n3 = make_node("n3").label(LABEL_ZONE, "a").obj()
    for n in (n1, n2, n3):
        cache.add_node(n)
    assert cache.table.ordered_names == ["n1", "n2", "n3"]
    cache.remove_node(n1)
    assert cache.table.ordered_names == ["n3", "n2"]


def test_zone_change_moves_the_node_to_the_end_of_its_new_zone() -> None:
    cache = Cache()
    a1 = make_node("a1").label(LABEL_ZONE, "a").obj()
    b1 = make_node("b1").label(LABEL_ZONE, "b").obj()
    a2 = make_node("a2").label(LABEL_ZONE, "a").obj()
    for n in (a1, b1, a2):
        cache.add_node(n)
    moved = make_node("a1").label(LABEL_ZONE, "b").obj()
    cache.update_node(a1, moved)
    # zones: a=[a2], b=[b1, a1]
    assert cache.table.ordered_names == ["a2", "b1", "a1"]


def test_image_size_is_the_first_one_seen() -> None:
    """upstream cacheImpl.addNodeImageStates creates one ImageStateSummary per image
    name with the size of the first node reporting it; later nodes only join its
    node set. NumNodes counts the nodes currently holding the image."""
    cache = Cache()
    n1 = make_node("n1").image(100, "img").obj()
    n2 = make_node("n2").image(999, "img").obj()
    cache.add_node(n1)
    cache.add_node(n2)
    for name in ("n1", "n2"):
        info = cache.nodes.get(name)
        assert info is not None
        state = info.image_states["img:latest"]
        assert (state.size, state.num_nodes) == (100, 2)
        assert cache.table.images["img:latest"][cache.table.row_of[name]] == 100
    cache.remove_node(n1)
    info = cache.nodes.get("n2")
    assert info is not None
    assert (info.image_states["img:latest"].size, info.image_states["img:latest"].num_nodes) == (
        100,
        1,
    )


def test_pods_of_a_removed_node_come_back_with_it() -> None:
    cache = Cache()
    node = make_node("n1").capacity(cpu="4", pods=10).obj()
    cache.add_node(node)
    cache.add_pod(make_pod("p").uid("p").req(cpu="1").node("n1").obj())
    cache.remove_node(node)
    assert cache.nodes.get("n1") is None
    cache.add_node(node)
    info = cache.nodes.get("n1")
    assert info is not None
    assert [p.pod.name for p in info.pods] == ["p"]
    assert info.requested.milli_cpu == 1000
    row = cache.table.row_of["n1"]
    assert int(cache.table.requested[row, 0]) == 1000


def test_pod_of_an_unknown_node_is_counted_once_the_node_arrives() -> None:
    cache = Cache()
    cache.add_pod(make_pod("p").uid("p").req(cpu="500m").node("later").obj())
    assert cache.pod_count() == 1
    cache.add_node(make_node("later").capacity(cpu="1").obj())
    info = cache.nodes.get("later")
    assert info is not None and info.requested.milli_cpu == 500


@pytest.mark.parametrize(
    ("op", "message"),
    [
        pytest.param("forget-unknown", "pod default/p wasn't assumed so cannot be forgotten"),
        pytest.param("remove-unknown", "pod default/p(p) is not found in scheduler cache"),
        pytest.param("update-unknown", "pod default/p(p) is not added to scheduler cache"),
        pytest.param("assume-twice", "pod default/p(p) is in the cache, so can't be assumed"),
        pytest.param("add-twice", "pod default/p(p) was already in added state"),
    ],
)
def test_inconsistent_events_raise(op: str, message: str) -> None:
    cache = Cache()
    cache.add_node(make_node("n1").obj())
    pod = make_pod("p").uid("p").node("n1").obj()
    with pytest.raises(CacheError) as exc:
        if op == "forget-unknown":
            cache.forget_pod(pod)
        elif op == "remove-unknown":
            cache.remove_pod(pod)
        elif op == "update-unknown":
            cache.update_pod(pod, pod)
        elif op == "assume-twice":
            cache.assume_pod(PodInfo(pod), "n1")
            cache.assume_pod(PodInfo(pod), "n1")
        else:
            cache.add_pod(pod)
            cache.add_pod(pod)
    assert str(exc.value) == message
