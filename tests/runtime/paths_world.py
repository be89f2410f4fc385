"""Random clusters for the generic paths test (``test_paths_agree.py``).

A ``World`` holds what every filter and score plugin of the in-tree profile
reads: nodes with zones, hostnames (sometimes missing), other labels, taints,
unschedulable, allocatable (an extended resource too), images; bound pods with
priorities, start times, labels in two namespaces, host ports and
(anti-)affinity terms of their own; pods nominated to nodes (or to a node that
does not exist); PDBs; and pending pods drawn from a small pool of shared
``PodSpec`` objects (pods of one spec share ``SpecFacts`` and every per-spec
memo), each with its own name, namespace, labels, priority, ``spec.nodeName``
and nominated node. Specs carry requests, images, host ports, node selectors,
required and preferred node affinity, tolerations, required and preferred pod
(anti-)affinity and topology spread constraints. ``profiles()`` draws the
profile: NodeResourcesFit's scoring strategy, InterPodAffinity's and
NodeAffinity's args, with or without Score plugins.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from hypothesis import strategies as st

from kubesched.api.types import (
    NANOS,
    NO_EXECUTE,
    NO_SCHEDULE,
    PREFER_NO_SCHEDULE,
    Affinity,
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodDisruptionBudget,
    PodDisruptionBudgetStatus,
    PodSpec,
    Taint,
    WeightedPodAffinityTerm,
)
from kubesched.driver.report import build_result
from kubesched.explain.recorder import ExplanationRecorder
from kubesched.framework.config import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesFitArgs,
    Profile,
    ResourceSpec,
    SchedulerConfig,
    ScoringStrategy,
    UtilizationShapePoint,
)
from kubesched.scheduler.config import default_config
from kubesched.scheduler.registry import in_tree_registry
from kubesched.sim.simulation import Simulation
from tests.builders import PodBuilder, make_node, make_pod
from tests.scheduler.harness import in_tree_profile

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
GPU = "example.com/gpu"
APPS = ("web", "db", "cache")
NAMESPACES = ("default", "other")
TAINTS = (
    Taint("dedicated", "gpu", NO_SCHEDULE),
    Taint("spot", "", PREFER_NO_SCHEDULE),
    Taint("maint", "", NO_EXECUTE),
    Taint("dedicated", "db", PREFER_NO_SCHEDULE),
)
IMAGES = ("nginx", "redis:7", "registry.io/app:v1")
CHANGES = ("taint", "cordon", "label", "remove", "add")
"""Node changes between pods: toggle a NoSchedule taint, toggle unschedulable,
move to another zone, remove the node, add a node (a removed one again, else a
copy under a new name)."""
PORTS = (80, 8080)
HOST_IPS = ("", "", "0.0.0.0", "10.0.0.1", "10.0.0.2")
IMAGE_SIZES = (10_000_000, 300_000_000, 900_000_000, 2_000_000_000)
"""Below ImageLocality's minimum threshold, between, and above its maximum."""


@dataclass
class World:
    nodes: list[Node]
    bound: list[Pod]
    nominated: list[tuple[Pod, str]]
    pending: list[Pod]
    pdbs: list[PodDisruptionBudget]
    changes: list[tuple[str, int]] = field(default_factory=list)
    """A node change before each pending pod (``CHANGES``; "" for none) and the
    index of the node it concerns (among the live nodes, modulo their number)."""

    def __repr__(self) -> str:  # Hypothesis prints it on failure: keep it readable
        return (
            f"World(nodes={[_node_repr(n) for n in self.nodes]}, "
            f"bound={[_pod_repr(p) for p in self.bound]}, "
            f"nominated={[(_pod_repr(p), n) for p, n in self.nominated]}, "
            f"pending={[_pod_repr(p) for p in self.pending]}, "
            f"pdbs={[(b.selector, b.status.disruptions_allowed) for b in self.pdbs]}, "
            f"changes={self.changes})"
        )


def _node_repr(n: Node) -> str:
    return (
        f"{n.name}(labels={dict(n.labels)}, taints={list(n.taints)}, "
        f"unschedulable={n.unschedulable}, alloc={dict(n.allocatable)}, images={list(n.images)})"
    )


def _pod_repr(p: Pod) -> str:
    return (
        f"{p.key}(prio={p.priority}, labels={dict(p.labels)}, node={p.node_name!r}, "
        f"nominated={p.nominated_node_name!r}, start={p.start_time}, spec@{id(p.spec):x}={p.spec})"
    )


# --------------------------------------------------------------------------- nodes


@st.composite
def nodes(draw: st.DrawFn) -> list[Node]:
    out: list[Node] = []
    for i in range(draw(st.integers(1, 7))):
        b = make_node(f"n{i}").capacity(
            cpu=draw(st.sampled_from(("1", "2", "4"))),
            memory=draw(st.sampled_from(("1Gi", "4Gi"))),
            pods=draw(st.sampled_from((2, 3, 5, 110))),
        )
        if draw(st.integers(0, 3)) == 0:
            b.capacity_map({GPU: draw(st.integers(0, 2))})
        if draw(st.integers(0, 7)) == 0:
            b.no_hostname_label()
        zone = draw(st.sampled_from(("", "a", "a", "b", "c")))
        if zone:
            b.label(ZONE, zone)
        disk = draw(st.sampled_from(("", "ssd", "hdd")))
        if disk:
            b.label("disk", disk)
        tier = draw(st.sampled_from(("", "1", "3", "x")))
        if tier:
            b.label("tier", tier)
        for t in draw(
            st.lists(st.sampled_from(TAINTS), max_size=2, unique_by=lambda t: (t.key, t.effect))
        ):
            b.taint(t.key, t.value, t.effect)
        if draw(st.integers(0, 6)) == 0:
            b.unschedulable()
        for image in draw(st.lists(st.sampled_from(IMAGES), max_size=2, unique=True)):
            b.image(draw(st.sampled_from(IMAGE_SIZES)), image)
        out.append(b.obj())
    return out


# --------------------------------------------------------------------------- specs


def _selector(draw: st.DrawFn) -> LabelSelector:
    kind = draw(st.integers(0, 5))
    if kind == 0:
        return LabelSelector()  # everything
    if kind == 1:
        values = tuple(draw(st.lists(st.sampled_from(APPS), min_size=1, max_size=2, unique=True)))
        op = draw(st.sampled_from(("In", "NotIn")))
        return LabelSelector(match_expressions=(LabelSelectorRequirement("app", op, values),))
    return LabelSelector(match_labels={"app": draw(st.sampled_from(APPS))})


def _pod_affinity(draw: st.DrawFn, spec: PodSpec) -> PodSpec:
    """``spec`` with one or two pod (anti-)affinity terms, required or preferred,
    some with explicit namespaces or match label keys."""
    aff = spec.affinity or Affinity()
    for _ in range(draw(st.integers(1, 2))):
        anti = draw(st.booleans())
        term = PodAffinityTerm(
            _selector(draw),
            draw(st.sampled_from((HOST, ZONE, ZONE, "disk"))),
            namespaces=tuple(draw(st.lists(st.sampled_from(NAMESPACES), max_size=2)))
            if draw(st.integers(0, 3)) == 0
            else (),
            match_label_keys=("tier",) if draw(st.integers(0, 5)) == 0 else (),
        )
        cur = (aff.pod_anti_affinity if anti else aff.pod_affinity) or PodAffinity()
        weight = draw(st.sampled_from((0, 0, 1, 50, 100)))
        if weight:
            cur = replace(cur, preferred=(*cur.preferred, WeightedPodAffinityTerm(weight, term)))
        else:
            cur = replace(cur, required=(*cur.required, term))
        aff = replace(aff, pod_anti_affinity=cur) if anti else replace(aff, pod_affinity=cur)
    return replace(spec, affinity=aff)


def _spread(draw: st.DrawFn, b: PodBuilder) -> None:
    for key in draw(
        st.lists(st.sampled_from((ZONE, HOST, "disk")), min_size=1, max_size=2, unique=True)
    ):
        b.spread(
            draw(st.integers(1, 2)),
            key,
            draw(st.sampled_from(("DoNotSchedule", "ScheduleAnyway"))),
            _selector(draw),
            min_domains=draw(st.sampled_from((None, None, 2, 4))),
            node_affinity_policy=draw(st.sampled_from((None, "Honor", "Ignore"))),
            node_taints_policy=draw(st.sampled_from((None, "Honor", "Ignore"))),
            match_label_keys=("tier",) if draw(st.integers(0, 4)) == 0 else (),
        )


def _node_affinity(draw: st.DrawFn, b: PodBuilder, node_names: list[str]) -> None:
    kind = draw(st.integers(0, 9))
    if kind == 1:
        b.node_affinity_in(ZONE, *draw(st.lists(st.sampled_from("abc"), min_size=1, max_size=2)))
    elif kind == 2:
        b.node_affinity_not_in(ZONE, "c")
    elif kind == 3:
        b.node_affinity_term(NodeSelectorRequirement("tier", "Gt", ("2",)))
    elif kind == 4:
        b.node_affinity_term(NodeSelectorRequirement("disk", "Exists"))
        b.node_affinity_term(NodeSelectorRequirement("tier", "DoesNotExist"))
    elif kind == 5:
        names = draw(st.lists(st.sampled_from([*node_names, "ghost"]), min_size=1, max_size=3))
        b.node_affinity_term(fields=(NodeSelectorRequirement("metadata.name", "In", tuple(names)),))
    if draw(st.integers(0, 2)) == 0:
        key, values = draw(
            st.sampled_from(((("disk"), ("ssd",)), (ZONE, ("a",)), ("tier", ("1", "3"))))
        )
        b.preferred_node_affinity(
            draw(st.integers(1, 100)), NodeSelectorRequirement(key, "In", values)
        )
    if draw(st.integers(0, 4)) == 0:
        b.node_selector(disk="ssd")


def _tolerations(draw: st.DrawFn, b: PodBuilder) -> None:
    for key, op, value, effect in draw(
        st.lists(
            st.sampled_from(
                (
                    ("dedicated", "Equal", "gpu", NO_SCHEDULE),
                    ("maint", "Exists", "", NO_EXECUTE),
                    ("", "Exists", "", ""),
                    ("dedicated", "Exists", "", ""),
                    ("spot", "Exists", "", PREFER_NO_SCHEDULE),
                    ("node.kubernetes.io/unschedulable", "Exists", "", NO_SCHEDULE),
                    ("node.kubernetes.io/unschedulable", "Exists", "", NO_EXECUTE),
                    ("node.kubernetes.io/unschedulable", "Exists", "", ""),
                )
            ),
            max_size=2,
            unique=True,
        )
    ):
        b.toleration(key, value, effect, op)


@st.composite
def specs(draw: st.DrawFn, node_names: list[str], rich: bool) -> PodSpec:
    """A pod spec; ``rich`` adds node and pod constraints (pending pods), else only
    requests, images, host ports and sometimes pod (anti-)affinity (bound pods)."""
    b = make_pod("spec")
    req: dict[str, str | int] = {}
    cpu = draw(st.sampled_from(("", "100m", "500m", "1", "1500m", "2")))
    mem = draw(st.sampled_from(("", "", "256Mi", "1Gi")))
    if cpu:
        req["cpu"] = cpu
    if mem:
        req["memory"] = mem
    if draw(st.integers(0, 5)) == 0:
        req[GPU] = draw(st.integers(1, 2))
    image = draw(st.sampled_from(("", "", *IMAGES)))
    if req or image:
        b.req_map(req, image=image)
    if draw(st.integers(0, 4)) == 0:
        b.host_port(
            draw(st.sampled_from(PORTS)),
            protocol=draw(st.sampled_from(("TCP", "TCP", "UDP"))),
            host_ip=draw(st.sampled_from(HOST_IPS)),
        )
    if rich:
        _node_affinity(draw, b, node_names)
        _tolerations(draw, b)
        if draw(st.integers(0, 2)) == 0:
            _spread(draw, b)
    b.grace(draw(st.sampled_from((0, 0, 5))))
    spec = b.obj().spec
    if draw(st.integers(0, 2 if rich else 5)) == 0:
        spec = _pod_affinity(draw, spec)
    return spec


def _pod(
    draw: st.DrawFn, name: str, spec: PodSpec, *, priority: tuple[int, ...] = (0, 10, 100)
) -> Pod:
    labels: dict[str, str] = {}
    app = draw(st.sampled_from((None, *APPS)))
    if app:
        labels["app"] = app
    if draw(st.integers(0, 3)) == 0:
        labels["tier"] = draw(st.sampled_from(("1", "3")))
    return Pod(
        name,
        draw(st.sampled_from(("default", "default", "other"))),
        labels=labels,
        spec=spec,
        priority=draw(st.sampled_from(priority)),
    )


# --------------------------------------------------------------------------- worlds


@st.composite
def worlds(draw: st.DrawFn) -> World:
    ns = draw(nodes())
    names = [n.name for n in ns]
    bound: list[Pod] = []
    for i in range(draw(st.integers(0, 9))):
        p = _pod(draw, f"b{i}", draw(specs(names, rich=False)))
        p.node_name = draw(st.sampled_from(names))
        p.phase = "Running"
        p.start_time = draw(st.sampled_from((0, 1, 2))) * NANOS
        bound.append(p)
    nominated: list[tuple[Pod, str]] = []
    for i in range(draw(st.integers(0, 3))):
        p = _pod(draw, f"nom{i}", draw(specs(names, rich=False)), priority=(0, 10, 100, 1000))
        node = draw(st.sampled_from([*names, "ghost"]))
        p.nominated_node_name = node
        nominated.append((p, node))
    pool = [draw(specs(names, rich=True)) for _ in range(draw(st.integers(1, 3)))]
    pending: list[Pod] = []
    for i in range(draw(st.integers(1, 5))):
        p = _pod(draw, f"p{i}", draw(st.sampled_from(pool)), priority=(1000, 100, 10, 0))
        if draw(st.integers(0, 5)) == 0:
            p.node_name = draw(st.sampled_from([*names, "ghost"]))  # spec.nodeName
        if draw(st.integers(0, 4)) == 0:
            p.nominated_node_name = draw(st.sampled_from(names))
        pending.append(p)
    pdbs = [
        PodDisruptionBudget(
            f"pdb-{app}",
            selector=LabelSelector({"app": app}),
            status=PodDisruptionBudgetStatus(disruptions_allowed=draw(st.integers(0, 1))),
        )
        for app in draw(st.lists(st.sampled_from(APPS), max_size=2, unique=True))
    ]
    changes = [
        (draw(st.sampled_from(("", "", "", *CHANGES))), draw(st.integers(0, 6))) for _ in pending
    ]
    return World(ns, bound, nominated, pending, pdbs, changes)


def changed_node(node: Node, kind: str, name: str = "") -> Node:
    """``node`` after a ``taint`` / ``cordon`` / ``label`` change, or renamed (``name``)."""
    taints, unschedulable, labels = node.taints, node.unschedulable, dict(node.labels)
    if kind == "taint":
        t = TAINTS[0]
        taints = tuple(x for x in taints if x != t) if t in taints else (*taints, t)
    elif kind == "cordon":
        unschedulable = not unschedulable
    elif kind == "label":
        zone = labels.pop(ZONE, "")
        if zone != "b":
            labels[ZONE] = "b" if zone else "a"
    if name:
        labels[HOST] = name
    return Node(
        name or node.name,
        labels=labels,
        taints=taints,
        unschedulable=unschedulable,
        allocatable=dict(node.allocatable),
        images=node.images,
    )


# --------------------------------------------------------------------------- profiles


@st.composite
def profiles(draw: st.DrawFn) -> Profile:
    """The in-tree default profile with drawn plugin args, sometimes without Score."""
    prof = in_tree_profile(with_score=draw(st.integers(0, 5)) != 5)
    args = dict(prof.plugin_args)
    kind = draw(st.sampled_from((LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)))
    resources: tuple[ResourceSpec, ...] = (
        ResourceSpec("cpu", draw(st.integers(1, 3))),
        ResourceSpec("memory", 1),
    )
    if draw(st.booleans()):
        resources = (*resources, ResourceSpec(GPU, 2))
    shape: tuple[UtilizationShapePoint, ...] = ()
    if kind == REQUESTED_TO_CAPACITY_RATIO:
        shape = draw(
            st.sampled_from(
                (
                    (UtilizationShapePoint(0, 10), UtilizationShapePoint(100, 0)),
                    (
                        UtilizationShapePoint(0, 0),
                        UtilizationShapePoint(50, 7),
                        UtilizationShapePoint(100, 10),
                    ),
                )
            )
        )
    args["NodeResourcesFit"] = NodeResourcesFitArgs(
        scoring_strategy=ScoringStrategy(kind, resources, shape)
    )
    args["InterPodAffinity"] = InterPodAffinityArgs(draw(st.integers(0, 3)), draw(st.booleans()))
    if draw(st.integers(0, 5)) == 0:
        added = NodeAffinity(
            required=NodeSelector(
                (NodeSelectorTerm((NodeSelectorRequirement(ZONE, "NotIn", ("c",)),)),)
            )
        )
        args["NodeAffinity"] = NodeAffinityArgs(added)
    return replace(prof, plugin_args=args)


# --------------------------------------------------------------------------- guard world


def guard_world() -> World:
    """A fixed world that takes every route the generic test guards, whatever the
    random examples do: a full node with a low-priority victim (batched dry run
    with a candidate), a high-priority nominated pod on another node (overrides
    answered by what-if), a pod with requests and no constraints (what-if, every
    resource scorer), and one with a soft spread constraint and preferred pod
    affinity and preferred node affinity (PodTopologySpread, InterPodAffinity and
    NodeAffinity scores), and one with a host port, required node affinity, a
    hard spread constraint and required anti-affinity (every filter's vector, a
    dry run node by node with a candidate)."""
    ns = [
        make_node(f"n{i}")
        .capacity(cpu="2", memory="4Gi", pods=110)
        .label(ZONE, "ab"[i // 2])
        .image(300_000_000, "nginx")
        .obj()
        for i in range(4)
    ]
    web = {"app": "web"}
    bound = [
        Pod("b0", labels=web, spec=make_pod("s").req(cpu="2").obj().spec, node_name="n0"),
        Pod("b1", labels=web, spec=make_pod("s").req(cpu="1").obj().spec, node_name="n1"),
    ]
    for p in bound:
        p.phase, p.start_time = "Running", 0
    nom = Pod("nom0", spec=make_pod("s").req(cpu="1").obj().spec, priority=1000)
    nom.nominated_node_name = "n2"
    plain = make_pod("s").req_map({"cpu": "1500m", "memory": "1Gi"}, image="nginx").obj()
    soft = (
        make_pod("s")
        .req(cpu="100m", memory="64Mi")
        .spread(1, ZONE, "ScheduleAnyway", LabelSelector(match_labels=web))
        .pod_affinity(ZONE, LabelSelector(match_labels=web), weight=10)
        .preferred_node_affinity(5, NodeSelectorRequirement(ZONE, "In", ("a",)))
        .obj()
    )
    hard = (
        make_pod("s")
        .req(cpu="1500m")
        .host_port(80)
        .node_affinity_in(ZONE, "a", "b")
        .spread(1, ZONE, "DoNotSchedule", LabelSelector(match_labels=web))
        .pod_affinity(HOST, LabelSelector(match_labels={"app": "db"}), anti=True)
        .obj()
    )
    pending = [
        Pod("p0", spec=plain.spec, priority=100),
        Pod("p1", labels=web, spec=soft.spec, priority=10),
        Pod("p2", labels=web, spec=hard.spec, priority=1000),
    ]
    return World(ns, bound, [(nom, "n2")], pending, [])


def run_world(
    world: World, prof: Profile, seed: int, *, exact: bool, explain: bool = False
) -> dict[str, Any]:
    """The world scheduled end to end on the simulated cluster (bound pods and PDBs
    at 0, a pending pod every half second, then the nominated ones as more
    preemptors): its result document (with ``explanations`` when ``explain``)."""
    registry = in_tree_registry()
    base = default_config(supported=registry.keys())
    config = SchedulerConfig((prof,), base.percentage_of_nodes_to_score)
    sim = Simulation(config, dict(registry), seed=seed)
    for fwk in sim.scheduler.profiles.values():
        fwk.per_node = exact
    cluster = sim.cluster
    recorder = None
    if explain:
        recorder = ExplanationRecorder.attach(sim.scheduler)

    def start() -> None:
        for n in world.nodes:
            cluster.create_node(n)
        for p in world.bound:
            cluster.create_pod(_fresh(p), None)
        for pdb in world.pdbs:
            # A fresh object (the cluster keeps its status): at least one pod stays.
            cluster.add_pdb(PodDisruptionBudget(pdb.name, selector=pdb.selector, min_available=1))

    def create(p: Pod) -> Callable[[], None]:
        return lambda: cluster.create_pod(_fresh(p, pending=True), None)

    sim.engine.at(0, start)
    for i, p in enumerate(world.pending):
        sim.engine.at(i * NANOS // 2, create(p))
    for i, (p, _) in enumerate(world.nominated):
        # Pods nominated in the per-cycle check arrive late here, as more preemptors.
        sim.engine.at((i + 1) * NANOS, create(p))
    stats = sim.run()
    return build_result(
        sim.record,
        seed=seed,
        end_time=stats.end_time,
        metrics=sim.metrics.snapshot(),
        explanations=None if recorder is None else recorder.result(),
    )


def _fresh(p: Pod, *, pending: bool = False) -> Pod:
    """A new Pod object with ``p``'s fields (the cluster writes to the pods it holds);
    ``pending``: without node or nomination."""
    return Pod(
        p.name,
        p.namespace,
        labels=dict(p.labels),
        spec=p.spec,
        priority=p.priority,
        node_name="" if pending else p.node_name,
        start_time=None if pending else p.start_time,
    )
