"""Per-pod and per-node scheduling data: Resource, PodInfo, NodeInfo, HostPortInfo.

These mirror upstream's framework types (pkg/scheduler/framework/types.go)
closely, because preemption's dry run and the nominated-pods pass depend on
their exact semantics (pod order in ``NodeInfo.pods``, swap-removal, clone).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Mapping
from typing import Final

from kubesched.api.resources import is_scalar_resource_name, pod_non_zero_requests, pod_requests
from kubesched.api.types import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    PODS,
    Node,
    Pod,
    PodSpec,
    ResourceList,
)

# --------------------------------------------------------------------------- Resource


class Resource:
    """Compute resources, as upstream's ``framework.Resource``."""

    __slots__ = ("allowed_pod_number", "ephemeral_storage", "memory", "milli_cpu", "scalar")

    def __init__(
        self,
        milli_cpu: int = 0,
        memory: int = 0,
        ephemeral_storage: int = 0,
        allowed_pod_number: int = 0,
        scalar: dict[str, int] | None = None,
    ) -> None:
        self.milli_cpu = milli_cpu
        self.memory = memory
        self.ephemeral_storage = ephemeral_storage
        self.allowed_pod_number = allowed_pod_number
        self.scalar: dict[str, int] = scalar if scalar is not None else {}

    @classmethod
    def from_list(cls, rl: ResourceList) -> Resource:
        r = cls()
        r.add_list(rl)
        return r

    def add_list(self, rl: ResourceList) -> None:
        for name, q in rl.items():
            if name == CPU:
                self.milli_cpu += q
            elif name == MEMORY:
                self.memory += q
            elif name == PODS:
                self.allowed_pod_number += q
            elif name == EPHEMERAL_STORAGE:
                self.ephemeral_storage += q
            elif is_scalar_resource_name(name):
                self.scalar[name] = self.scalar.get(name, 0) + q

    def add(self, other: Resource, sign: int = 1) -> None:
        """Add (sign=1) or subtract (sign=-1) another Resource; pods count excluded."""
        self.milli_cpu += sign * other.milli_cpu
        self.memory += sign * other.memory
        self.ephemeral_storage += sign * other.ephemeral_storage
        for k, v in other.scalar.items():
            self.scalar[k] = self.scalar.get(k, 0) + sign * v

    def get(self, name: str) -> int:
        """Amount of a resource by its API name (cpu in milli)."""
        if name == CPU:
            return self.milli_cpu
        if name == MEMORY:
            return self.memory
        if name == EPHEMERAL_STORAGE:
            return self.ephemeral_storage
        if name == PODS:
            return self.allowed_pod_number
        return self.scalar.get(name, 0)

    def clone(self) -> Resource:
        return Resource(
            self.milli_cpu,
            self.memory,
            self.ephemeral_storage,
            self.allowed_pod_number,
            dict(self.scalar),
        )

    def as_list(self) -> dict[str, int]:
        out = {CPU: self.milli_cpu, MEMORY: self.memory}
        if self.ephemeral_storage:
            out[EPHEMERAL_STORAGE] = self.ephemeral_storage
        if self.allowed_pod_number:
            out[PODS] = self.allowed_pod_number
        out.update(self.scalar)
        return out

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Resource):
            return NotImplemented
        return (
            self.milli_cpu == other.milli_cpu
            and self.memory == other.memory
            and self.ephemeral_storage == other.ephemeral_storage
            and self.allowed_pod_number == other.allowed_pod_number
            and {k: v for k, v in self.scalar.items() if v}
            == {k: v for k, v in other.scalar.items() if v}
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Resource({self.as_list()})"


# --------------------------------------------------------------------------- ports

DEFAULT_BIND_ALL_HOST_IP: Final = "0.0.0.0"


class HostPortInfo:
    """Host ports in use on a node: ip -> {(protocol, port)} (upstream HostPortInfo)."""

    __slots__ = ("_by_ip",)

    def __init__(self) -> None:
        self._by_ip: dict[str, set[tuple[str, int]]] = {}

    @staticmethod
    def _sanitize(ip: str, protocol: str) -> tuple[str, str]:
        return (ip or DEFAULT_BIND_ALL_HOST_IP, protocol or "TCP")

    def add(self, ip: str, protocol: str, port: int) -> None:
        if port <= 0:
            return
        ip, protocol = self._sanitize(ip, protocol)
        self._by_ip.setdefault(ip, set()).add((protocol, port))

    def remove(self, ip: str, protocol: str, port: int) -> None:
        if port <= 0:
            return
        ip, protocol = self._sanitize(ip, protocol)
        ports = self._by_ip.get(ip)
        if ports is None:
            return
        ports.discard((protocol, port))
        if not ports:
            del self._by_ip[ip]

    def check_conflict(self, ip: str, protocol: str, port: int) -> bool:
        """True if (ip, protocol, port) clashes; 0.0.0.0 clashes with every IP."""
        if port <= 0:
            return False
        ip, protocol = self._sanitize(ip, protocol)
        pp = (protocol, port)
        if ip == DEFAULT_BIND_ALL_HOST_IP:
            return any(pp in ports for ports in self._by_ip.values())
        return any(pp in self._by_ip.get(k, ()) for k in (DEFAULT_BIND_ALL_HOST_IP, ip))

    def __len__(self) -> int:
        return sum(len(p) for p in self._by_ip.values())

    def clone(self) -> HostPortInfo:
        c = HostPortInfo()
        c._by_ip = {ip: set(p) for ip, p in self._by_ip.items()}
        return c


def host_ports(spec: PodSpec) -> tuple[tuple[str, str, int], ...]:
    """(hostIP, protocol, hostPort) of every container port with hostPort > 0
    (schedutil.GetHostPorts: sidecar init containers first, then regular containers)."""
    out = []
    sidecars = [c for c in spec.init_containers if c.restart_policy == "Always"]
    for c in (*sidecars, *spec.containers):
        for p in c.ports:
            if p.host_port > 0:
                out.append((p.host_ip, p.protocol, p.host_port))
    return tuple(out)


# --------------------------------------------------------------------------- PodInfo


class SpecFacts:
    """What is derived from a PodSpec once and shared by every pod of that spec."""

    __slots__ = (
        "has_affinity",
        "has_required_anti_affinity",
        "host_ports",
        "memo",
        "non0_cpu",
        "non0_mem",
        "request",
        "requests",
    )

    def __init__(self, spec: PodSpec) -> None:
        self.memo: dict[object, object] = {}
        """Values plugins derive from the spec alone, once per spec; keys private to
        the writing plugin instance."""
        reqs = pod_requests(spec)
        self.requests: dict[str, int] = reqs
        self.request = Resource.from_list(reqs)
        self.non0_cpu, self.non0_mem = pod_non_zero_requests(spec, reqs)
        self.host_ports = host_ports(spec)
        aff = spec.affinity
        self.has_affinity = aff is not None and (
            aff.pod_affinity is not None or aff.pod_anti_affinity is not None
        )
        self.has_required_anti_affinity = (
            aff is not None
            and aff.pod_anti_affinity is not None
            and len(aff.pod_anti_affinity.required) > 0
        )


_SPEC_FACTS: weakref.WeakKeyDictionary[PodSpec, SpecFacts] = weakref.WeakKeyDictionary()


def spec_facts(spec: PodSpec) -> SpecFacts:
    facts = _SPEC_FACTS.get(spec)
    if facts is None:
        facts = SpecFacts(spec)
        _SPEC_FACTS[spec] = facts
    return facts


class PodInfo:
    """A pod plus what scheduling precomputes for it (upstream PodInfo): ``request``
    (``PodRequests``), ``non0_cpu`` / ``non0_mem`` (scoring defaults), plugins'
    ``extra`` by plugin name."""

    __slots__ = ("extra", "facts", "pod")

    def __init__(self, pod: Pod) -> None:
        self.pod = pod
        self.facts = spec_facts(pod.spec)
        self.extra: dict[str, object] = {}

    @property
    def request(self) -> Resource:
        return self.facts.request

    @property
    def requests(self) -> Mapping[str, int]:
        return self.facts.requests

    @property
    def non0_cpu(self) -> int:
        return self.facts.non0_cpu

    @property
    def non0_mem(self) -> int:
        return self.facts.non0_mem

    @property
    def uid(self) -> str:
        return self.pod.uid

    def __repr__(self) -> str:
        return f"PodInfo({self.pod.key})"


# --------------------------------------------------------------------------- NodeInfo


class ImageStateSummary:
    __slots__ = ("num_nodes", "size")

    def __init__(self, size: int, num_nodes: int) -> None:
        self.size = size
        self.num_nodes = num_nodes


class NodeInfo:
    """Aggregated node state: the node, its pods (in insertion order, swap-removed
    as upstream), their summed requests, used host ports and image states."""

    __slots__ = (
        "allocatable",
        "generation",
        "image_states",
        "node",
        "non_zero_requested",
        "pods",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "requested",
        "used_ports",
    )

    _next_generation = 0

    def __init__(self, node: Node | None = None, pods: Iterable[PodInfo] = ()) -> None:
        self.node: Node | None = None
        self.pods: list[PodInfo] = []
        self.pods_with_affinity: list[PodInfo] = []
        self.pods_with_required_anti_affinity: list[PodInfo] = []
        self.used_ports = HostPortInfo()
        self.requested = Resource()
        self.non_zero_requested = Resource()
        self.allocatable = Resource()
        self.image_states: dict[str, ImageStateSummary] = {}
        self.generation = NodeInfo._bump()
        if node is not None:
            self.set_node(node)
        for p in pods:
            self.add_pod(p)

    @staticmethod
    def _bump() -> int:
        NodeInfo._next_generation += 1
        return NodeInfo._next_generation

    @property
    def name(self) -> str:
        return self.node.name if self.node is not None else ""

    def set_node(self, node: Node) -> None:
        self.node = node
        self.allocatable = Resource.from_list(node.allocatable)
        self.generation = NodeInfo._bump()

    def add_pod(self, pi: PodInfo) -> None:
        self._append(pi)
        self._update(pi, 1)

    def remove_pod(self, pod: Pod) -> PodInfo:
        """Remove by UID (the last pod takes the freed slot); KeyError if absent."""
        removed = self._take(pod)
        self._update(removed, -1)
        return removed

    def replace_pod(self, old: Pod, new: PodInfo) -> PodInfo:
        """``remove_pod(old)`` then ``add_pod(new)`` (``new`` goes last, as upstream);
        returns the removed PodInfo, KeyError if absent."""
        removed = self._take(old)
        self._append(new)
        if removed.facts is new.facts:
            self.generation = NodeInfo._bump()
        else:
            self._update(removed, -1)
            self._update(new, 1)
        return removed

    def _append(self, pi: PodInfo) -> None:
        self.pods.append(pi)
        if pi.facts.has_affinity:
            self.pods_with_affinity.append(pi)
        if pi.facts.has_required_anti_affinity:
            self.pods_with_required_anti_affinity.append(pi)

    def _take(self, pod: Pod) -> PodInfo:
        uid = pod.uid
        removed = _swap_remove(self.pods, uid)
        if removed is None:
            raise KeyError(f"no corresponding pod {pod.name} in pods of node {self.name}")
        if removed.facts.has_affinity:
            _swap_remove(self.pods_with_affinity, uid)
        if removed.facts.has_required_anti_affinity:
            _swap_remove(self.pods_with_required_anti_affinity, uid)
        return removed

    def _update(self, pi: PodInfo, sign: int) -> None:
        f = pi.facts
        self.requested.add(f.request, sign)
        self.non_zero_requested.milli_cpu += sign * f.non0_cpu
        self.non_zero_requested.memory += sign * f.non0_mem
        for ip, proto, port in f.host_ports:
            if sign > 0:
                self.used_ports.add(ip, proto, port)
            else:
                self.used_ports.remove(ip, proto, port)
        self.generation = NodeInfo._bump()

    def clone(self) -> NodeInfo:
        """Copy for a dry run (upstream Snapshot()): pod lists and counters are copied,
        PodInfos and the Node object are shared."""
        c = NodeInfo.__new__(NodeInfo)
        c.node = self.node
        c.pods = list(self.pods)
        c.pods_with_affinity = list(self.pods_with_affinity)
        c.pods_with_required_anti_affinity = list(self.pods_with_required_anti_affinity)
        c.used_ports = self.used_ports.clone()
        c.requested = self.requested.clone()
        c.non_zero_requested = self.non_zero_requested.clone()
        c.allocatable = self.allocatable.clone()
        c.image_states = dict(self.image_states)
        c.generation = self.generation
        return c

    def __repr__(self) -> str:
        return f"NodeInfo({self.name}, pods={[p.pod.name for p in self.pods]})"


def _swap_remove(pods: list[PodInfo], uid: str) -> PodInfo | None:
    for i, p in enumerate(pods):
        if p.pod.uid == uid:
            last = pods.pop()
            if i < len(pods):
                pods[i] = last
            return p
    return None
