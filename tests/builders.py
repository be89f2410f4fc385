"""Fluent builders for tests, in the style of upstream's st.MakePod()/st.MakeNode().

make_pod("p").priority(10).req(cpu="500m", memory="1Gi").node("n1").obj()
make_node("n1").capacity(cpu="4", memory="32Gi", pods=110).label("zone", "a").obj()
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from kubesched.api.quantity import scheduler_amount
from kubesched.api.storage import PodVolume
from kubesched.api.types import (
    Affinity,
    Container,
    ContainerImage,
    ContainerPort,
    LabelSelector,
    Node,
    NodeAffinity,
    NodeCondition,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    OwnerReference,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodCondition,
    PodSpec,
    PreferredSchedulingTerm,
    Taint,
    Toleration,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.snapshot import node_image_sizes
from kubesched.framework.types import ImageStateSummary, NodeInfo, PodInfo

Q = str | int


def parse_resource_list(raw: Mapping[str, str | int | float | None]) -> dict[str, int]:
    """A ResourceList in the scheduler's units (``scheduler_amount`` per resource)."""
    return {str(name): scheduler_amount(str(name), text) for name, text in raw.items()}


def _rl(**res: Q) -> dict[str, int]:
    return parse_resource_list({k.replace("_", "-"): v for k, v in res.items()})


class PodBuilder:
    def __init__(self, name: str, namespace: str = "default") -> None:
        self._name = name
        self._ns = namespace
        self._uid = ""
        self._labels: dict[str, str] = {}
        self._spec = PodSpec()
        self._priority = 0
        self._pc_name = ""
        self._policy = "PreemptLowerPriority"
        self._node = ""
        self._nominated = ""
        self._phase = "Pending"
        self._start: int | None = None
        self._deletion: int | None = None
        self._conditions: list[PodCondition] = []
        self._owners: tuple[OwnerReference, ...] = ()
        self._created = 0

    # identity
    def uid(self, uid: str) -> PodBuilder:
        self._uid = uid
        return self

    def namespace(self, ns: str) -> PodBuilder:
        self._ns = ns
        return self

    def label(self, k: str, v: str) -> PodBuilder:
        self._labels[k] = v
        return self

    def labels(self, **kv: str) -> PodBuilder:
        self._labels.update(kv)
        return self

    def owner(self, kind: str, name: str, uid: str = "") -> PodBuilder:
        self._owners = (OwnerReference("apps/v1", kind, name, uid or name, True),)
        return self

    # priority
    def priority(self, p: int) -> PodBuilder:
        self._priority = p
        return self

    def priority_class(self, name: str) -> PodBuilder:
        self._pc_name = name
        return self

    def preemption_policy(self, policy: str) -> PodBuilder:
        self._policy = policy
        return self

    # spec
    def _with(self, **changes: Any) -> PodBuilder:
        self._spec = replace(self._spec, **changes)
        return self

    def req(self, **res: Q) -> PodBuilder:
        """Add a container with these requests (``ephemeral_storage`` -> ``ephemeral-storage``;
        use ``extended={"nvidia.com/gpu": 1}`` via :meth:`req_map` for domain names)."""
        return self.req_map(res)

    def req_map(self, res: dict[str, Q], image: str = "") -> PodBuilder:
        n = len(self._spec.containers)
        c = Container(f"c{n}", image=image, requests=_rl(**res) if res else {})
        return self._with(containers=(*self._spec.containers, c))

    def init_req(self, restart_policy: str | None = None, **res: Q) -> PodBuilder:
        n = len(self._spec.init_containers)
        c = Container(f"init{n}", requests=_rl(**res), restart_policy=restart_policy)
        return self._with(init_containers=(*self._spec.init_containers, c))

    def overhead(self, **res: Q) -> PodBuilder:
        return self._with(overhead=_rl(**res))

    def pod_resources(self, **res: Q) -> PodBuilder:
        return self._with(resources=_rl(**res))

    def container_image(self, image: str) -> PodBuilder:
        n = len(self._spec.containers)
        return self._with(containers=(*self._spec.containers, Container(f"c{n}", image=image)))

    def host_port(self, port: int, protocol: str = "TCP", host_ip: str = "") -> PodBuilder:
        n = len(self._spec.containers)
        c = Container(f"c{n}", ports=(ContainerPort(port, port, protocol, host_ip),))
        return self._with(containers=(*self._spec.containers, c))

    def node_selector(self, **kv: str) -> PodBuilder:
        return self._with(node_selector=dict(kv))

    def node_selector_map(self, kv: dict[str, str]) -> PodBuilder:
        return self._with(node_selector=dict(kv))

    def _affinity(self) -> Affinity:
        return self._spec.affinity or Affinity()

    def node_affinity_in(self, key: str, *values: str) -> PodBuilder:
        """Required node affinity: one term with ``key In values`` (ANDed into the last term)."""
        return self.node_affinity_term(NodeSelectorRequirement(key, "In", tuple(values)))

    def node_affinity_not_in(self, key: str, *values: str) -> PodBuilder:
        return self.node_affinity_term(NodeSelectorRequirement(key, "NotIn", tuple(values)))

    def node_affinity_term(
        self, *reqs: NodeSelectorRequirement, fields: tuple[NodeSelectorRequirement, ...] = ()
    ) -> PodBuilder:
        """Append one required NodeSelectorTerm (terms are ORed)."""
        aff = self._affinity()
        na = aff.node_affinity or NodeAffinity()
        terms = na.required.terms if na.required else ()
        term = NodeSelectorTerm(tuple(reqs), fields)
        na = replace(na, required=NodeSelector((*terms, term)))
        return self._with(affinity=replace(aff, node_affinity=na))

    def preferred_node_affinity(self, weight: int, *reqs: NodeSelectorRequirement) -> PodBuilder:
        aff = self._affinity()
        na = aff.node_affinity or NodeAffinity()
        pref = PreferredSchedulingTerm(weight, NodeSelectorTerm(tuple(reqs)))
        na = replace(na, preferred=(*na.preferred, pref))
        return self._with(affinity=replace(aff, node_affinity=na))

    def pod_affinity(
        self, topology_key: str, selector: LabelSelector, anti: bool = False, weight: int = 0
    ) -> PodBuilder:
        """Add a pod (anti-)affinity term; ``weight > 0`` makes it preferred."""
        aff = self._affinity()
        term = PodAffinityTerm(selector, topology_key)
        cur = (aff.pod_anti_affinity if anti else aff.pod_affinity) or PodAffinity()
        if weight:
            cur = replace(cur, preferred=(*cur.preferred, WeightedPodAffinityTerm(weight, term)))
        else:
            cur = replace(cur, required=(*cur.required, term))
        aff = replace(aff, pod_anti_affinity=cur) if anti else replace(aff, pod_affinity=cur)
        return self._with(affinity=aff)

    def toleration(
        self, key: str = "", value: str = "", effect: str = "", operator: str = "Equal"
    ) -> PodBuilder:
        t = Toleration(key, operator, value, effect)
        return self._with(tolerations=(*self._spec.tolerations, t))

    def spread(
        self, max_skew: int, topology_key: str, when: str, selector: LabelSelector | None, **kw: Any
    ) -> PodBuilder:
        c = TopologySpreadConstraint(max_skew, topology_key, when, selector, **kw)
        return self._with(topology_spread_constraints=(*self._spec.topology_spread_constraints, c))

    def scheduler_name(self, name: str) -> PodBuilder:
        return self._with(scheduler_name=name)

    def volume(self, v: PodVolume) -> PodBuilder:
        return self._with(volumes=(*self._spec.volumes, v))

    def pvc(self, claim_name: str) -> PodBuilder:
        """A ``persistentVolumeClaim`` volume named after the claim (upstream st.PVC)."""
        return self.volume(PodVolume(claim_name, "persistentVolumeClaim", claim_name=claim_name))

    def grace(self, seconds: int) -> PodBuilder:
        return self._with(termination_grace_period_seconds=seconds)

    def scheduling_gates(self, *names: str) -> PodBuilder:
        return self._with(scheduling_gates=tuple(names))

    # status
    def node(self, name: str) -> PodBuilder:
        self._node = name
        if self._phase == "Pending":
            self._phase = "Running"
        return self

    def nominated(self, name: str) -> PodBuilder:
        self._nominated = name
        return self

    def phase(self, phase: str) -> PodBuilder:
        self._phase = phase
        return self

    def start_time(self, t: int) -> PodBuilder:
        self._start = t
        return self

    def terminating(self, t: int = 0) -> PodBuilder:
        self._deletion = t
        return self

    def condition(self, type_: str, status: str, reason: str = "", message: str = "") -> PodBuilder:
        self._conditions.append(PodCondition(type_, status, reason, message))
        return self

    def created(self, t: int) -> PodBuilder:
        self._created = t
        return self

    def obj(self) -> Pod:
        return Pod(
            self._name,
            self._ns,
            uid=self._uid,
            labels=dict(self._labels),
            owner_references=self._owners,
            spec=self._spec,
            priority=self._priority,
            priority_class_name=self._pc_name,
            preemption_policy=self._policy,
            node_name=self._node,
            nominated_node_name=self._nominated,
            phase=self._phase,
            start_time=self._start,
            deletion_timestamp=self._deletion,
            conditions=list(self._conditions),
            creation_timestamp=self._created,
        )

    def info(self) -> PodInfo:
        return PodInfo(self.obj())


class NodeBuilder:
    def __init__(self, name: str) -> None:
        self._name = name
        self._labels: dict[str, str] = {"kubernetes.io/hostname": name}
        self._taints: list[Taint] = []
        self._unschedulable = False
        self._alloc: dict[str, int] = {}
        self._conditions: list[NodeCondition] = []
        self._images: list[ContainerImage] = []

    def label(self, k: str, v: str) -> NodeBuilder:
        self._labels[k] = v
        return self

    def labels(self, kv: dict[str, str]) -> NodeBuilder:
        self._labels.update(kv)
        return self

    def no_hostname_label(self) -> NodeBuilder:
        self._labels.pop("kubernetes.io/hostname", None)
        return self

    def capacity(self, **res: Q) -> NodeBuilder:
        self._alloc.update(_rl(**res))
        return self

    def capacity_map(self, res: dict[str, Q]) -> NodeBuilder:
        self._alloc.update(parse_resource_list(res))
        return self

    def taint(self, key: str, value: str = "", effect: str = "NoSchedule") -> NodeBuilder:
        self._taints.append(Taint(key, value, effect))
        return self

    def unschedulable(self, v: bool = True) -> NodeBuilder:
        self._unschedulable = v
        return self

    def condition(self, type_: str, status: str) -> NodeBuilder:
        self._conditions.append(NodeCondition(type_, status))
        return self

    def image(self, size: int, *names: str) -> NodeBuilder:
        self._images.append(ContainerImage(tuple(names), size))
        return self

    def obj(self) -> Node:
        return Node(
            self._name,
            labels=dict(self._labels),
            taints=tuple(self._taints),
            unschedulable=self._unschedulable,
            allocatable=dict(self._alloc),
            conditions=tuple(self._conditions),
            images=tuple(self._images),
        )

    def info(self, *pods: Pod) -> NodeInfo:
        """A NodeInfo holding these pods (image states counted for this node alone)."""
        return build_table([self.obj()], list(pods)).infos[0]  # type: ignore[return-value]


def make_pod(name: str, namespace: str = "default") -> PodBuilder:
    return PodBuilder(name, namespace)


def make_node(name: str) -> NodeBuilder:
    return NodeBuilder(name)


def selector(**match_labels: str) -> LabelSelector:
    return LabelSelector(match_labels=dict(match_labels))


def build_table(nodes: Iterable[Node], pods: Iterable[Pod] = ()) -> NodeTable:
    """A table with these nodes (in this order) and the pods bound to them, built
    in one go (pods whose ``node_name`` is not among the nodes are ignored): the
    reference the scheduler cache's incremental table is checked against."""
    nodes = list(nodes)
    infos = {n.name: NodeInfo(n) for n in nodes}
    counts: dict[str, int] = {}
    sizes = {n.name: node_image_sizes(n) for n in nodes}
    for s in sizes.values():
        for image in s:
            counts[image] = counts.get(image, 0) + 1
    for name, info in infos.items():
        info.image_states = {
            image: ImageStateSummary(size, counts[image]) for image, size in sizes[name].items()
        }
    for p in pods:
        holder = infos.get(p.node_name)
        if holder is not None:
            holder.add_pod(PodInfo(p))
    table = NodeTable(max(64, len(nodes)))
    for n in nodes:
        table.add_node(infos[n.name])
    return table


def rows_named(table: NodeTable, names: Iterable[str]) -> np.ndarray:
    """The rows of the nodes named (names not in the table left out)."""
    return np.array([table.row_of[n] for n in names if n in table.row_of], dtype=np.int64)
