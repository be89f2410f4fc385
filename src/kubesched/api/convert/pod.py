"""The Pod kind and the pod spec (of a Pod or a pod template), with the pod
defaulting that changes what the scheduler sees: container requests default to
limits, pod-level requests, host-network ports, the default scheduler name."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Final

from kubesched.api.convert.meta import check_dns_subdomain, owner_reference, read_meta
from kubesched.api.convert.scheduling import spread_constraints, toleration
from kubesched.api.convert.selectors import affinity
from kubesched.api.convert.storage import pod_volumes
from kubesched.api.convert.values import opt_time, resource_list
from kubesched.api.messages import child, fail, forbidden, invalid, quote, required
from kubesched.api.reader import (
    Raw,
    as_map,
    enum,
    get_bool,
    get_int,
    get_map,
    get_str,
    get_str_map,
    map_list,
    opt_enum,
    opt_int,
    opt_map,
    opt_str,
    req_str,
)
from kubesched.api.resources import is_supported_pod_level_resource, pod_requests
from kubesched.api.storage import PodVolume
from kubesched.api.types import (
    CPU,
    DEFAULT_SCHEDULER_NAME,
    MEMORY,
    PREEMPT_LOWER_PRIORITY,
    PREEMPT_NEVER,
    Container,
    ContainerPort,
    Pod,
    PodCondition,
    PodSpec,
)

PREEMPTION_POLICIES: Final = (PREEMPT_LOWER_PRIORITY, PREEMPT_NEVER)
PORT_PROTOCOLS: Final = ("SCTP", "TCP", "UDP")
POD_PHASES: Final = ("Pending", "Running", "Succeeded", "Failed", "Unknown")
CONTAINER_RESTART_POLICIES: Final = ("Always", "OnFailure", "Never")


def _port(raw: Raw, path: str) -> ContainerPort:
    container_port = get_int(raw, "containerPort", path, bits=32)
    if container_port == 0:
        raise fail(child(path, "containerPort"), required())
    if not 1 <= container_port <= 65535:
        raise fail(
            child(path, "containerPort"),
            invalid(container_port, "must be between 1 and 65535, inclusive"),
        )
    host_port = get_int(raw, "hostPort", path, bits=32)
    if host_port != 0 and not 1 <= host_port <= 65535:
        raise fail(
            child(path, "hostPort"), invalid(host_port, "must be between 1 and 65535, inclusive")
        )
    protocol = get_str(raw, "protocol", path) or "TCP"  # defaulted before validation
    enum(protocol, PORT_PROTOCOLS, child(path, "protocol"))
    return ContainerPort(
        container_port=container_port,
        host_port=host_port,
        protocol=protocol,
        host_ip=get_str(raw, "hostIP", path),
    )


def _container(raw: Raw, path: str, *, init: bool, host_network: bool) -> Container:
    name = req_str(raw, "name", path)
    rp = child(path, "resources")
    resources = get_map(raw, "resources", path)
    requests = resource_list(resources, "requests", rp)
    # SetDefaults_Pod: a resource with a limit and no request requests its limit.
    for res, amount in resource_list(resources, "limits", rp).items():
        requests.setdefault(res, amount)
    ports = map_list(raw, "ports", path, _port)
    if host_network:
        # SetDefaults_Pod (defaultHostNetworkPorts): with hostNetwork every container
        # port is also a host port.
        ports = tuple(
            ContainerPort(p.container_port, p.container_port, p.protocol, p.host_ip)
            if p.host_port == 0
            else p
            for p in ports
        )
    restart_policy = None
    if init:
        restart_policy = opt_str(raw, "restartPolicy", path)
        if restart_policy is not None:
            enum(restart_policy, CONTAINER_RESTART_POLICIES, child(path, "restartPolicy"))
    return Container(
        name=name,
        image=get_str(raw, "image", path),
        requests=requests,
        ports=ports,
        restart_policy=restart_policy,
    )


def _containers(
    raw: Raw, key: str, path: str, *, init: bool, host_network: bool
) -> tuple[Container, ...]:
    return map_list(
        raw, key, path, lambda c, p: _container(c, p, init=init, host_network=host_network)
    )


def _pod_level_requests(
    resources: Raw, path: str, containers: tuple[Container, ...], inits: tuple[Container, ...]
) -> dict[str, int]:
    """Pod-level ``spec.resources.requests`` after upstream's defaultPodRequests
    (PodLevelResources, beta and on since v1.34): with pod-level limits, a missing
    pod-level cpu/memory request defaults to the containers' aggregate request, then
    any supported resource's missing request to its pod-level limit."""
    requests = resource_list(resources, "requests", path)
    limits = resource_list(resources, "limits", path)
    if not limits:
        return requests
    aggregate = pod_requests(PodSpec(containers=containers, init_containers=inits))
    for res in (CPU, MEMORY):  # supported pod-level resources that allow overcommit
        if res in aggregate and res not in requests:
            requests[res] = aggregate[res]
    for res, amount in limits.items():
        if res not in requests and is_supported_pod_level_resource(res):
            requests[res] = amount
    return requests


def _scheduling_gates(raw: Raw, path: str) -> tuple[str, ...]:
    names = map_list(raw, "schedulingGates", path, lambda g, p: req_str(g, "name", p))
    seen: set[str] = set()
    for i, name in enumerate(names):
        if name in seen:
            raise fail(
                f"{child(path, 'schedulingGates')}[{i}].name", f"Duplicate value: {quote(name)}"
            )
        seen.add(name)
    return names


@dataclass(frozen=True, slots=True)
class SpecFields:
    """A converted pod spec plus the fields that live on ``Pod`` rather than ``PodSpec``
    (priority fields as written, before admission)."""

    spec: PodSpec
    node_name: str
    priority: int | None
    priority_class_name: str
    preemption_policy: str | None


def _pod_volumes(raw: Raw, path: str) -> tuple[PodVolume, ...]:
    if raw.get("volumes") in (None, []):
        return ()
    return pod_volumes(raw, path)


def pod_spec(value: Any, path: str) -> SpecFields:
    """A ``PodSpec`` (of a Pod or a pod template) with pod defaulting applied.
    Resource claims (DRA) are not read: ``kubesched.api.load`` skips pods that
    have any."""
    raw = as_map(value, path)
    host_network = get_bool(raw, "hostNetwork", path)
    containers = _containers(raw, "containers", path, init=False, host_network=host_network)
    if not containers:
        raise fail(child(path, "containers"), required())
    inits = _containers(raw, "initContainers", path, init=True, host_network=host_network)
    seen: set[str] = set()
    for key, group in (("containers", containers), ("initContainers", inits)):
        for i, c in enumerate(group):
            if c.name in seen:
                raise fail(f"{child(path, key)}[{i}].name", f"Duplicate value: {quote(c.name)}")
            seen.add(c.name)
    resources = get_map(raw, "resources", path)
    aff = opt_map(raw, "affinity", path)
    grace = opt_int(raw, "terminationGracePeriodSeconds", path)
    if grace is not None and grace < 0:
        raise fail(
            child(path, "terminationGracePeriodSeconds"),
            invalid(grace, "must be greater than or equal to 0"),
        )
    spec = PodSpec(
        containers=containers,
        init_containers=inits,
        overhead=resource_list(raw, "overhead", path),
        resources=_pod_level_requests(resources, child(path, "resources"), containers, inits),
        node_selector=get_str_map(raw, "nodeSelector", path),
        affinity=None if aff is None else affinity(aff, child(path, "affinity")),
        tolerations=map_list(raw, "tolerations", path, toleration),
        scheduler_name=get_str(raw, "schedulerName", path) or DEFAULT_SCHEDULER_NAME,
        termination_grace_period_seconds=grace,
        scheduling_gates=_scheduling_gates(raw, path),
        topology_spread_constraints=spread_constraints(raw, path),
        host_network=host_network,
        volumes=_pod_volumes(raw, path),
    )
    return SpecFields(
        spec=spec,
        node_name=get_str(raw, "nodeName", path),
        priority=opt_int(raw, "priority", path, bits=32),
        priority_class_name=get_str(raw, "priorityClassName", path),
        preemption_policy=opt_enum(raw, "preemptionPolicy", path, PREEMPTION_POLICIES),
    )


def _pod_condition(raw: Raw, path: str) -> PodCondition:
    return PodCondition(
        type=req_str(raw, "type", path),
        status=get_str(raw, "status", path),
        reason=get_str(raw, "reason", path),
        message=get_str(raw, "message", path),
        last_transition_time=opt_time(raw, "lastTransitionTime", path),
    )


def pod_spec_reusing(value: Any, previous: tuple[Any, SpecFields] | None) -> SpecFields:
    """``pod_spec(value, "spec")``, or ``previous``'s fields (with this ``nodeName``)
    when ``previous`` = (an earlier raw spec, its fields) equals ``value`` but for
    ``nodeName``: a watch's update of a pod (bound, status) rarely changes its spec,
    and the same ``PodSpec`` object keeps what the scheduler derived from it."""
    if previous is not None and isinstance(value, dict):
        old, fields = previous
        node = value.get("nodeName", "")
        if old is value or old == value:
            return fields
        if (
            isinstance(old, dict)
            and isinstance(node, str)
            and _without_node_name(value) == _without_node_name(old)
        ):
            return dataclasses.replace(fields, node_name=node)
    return pod_spec(value, "spec")


def _without_node_name(spec: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in spec.items() if k != "nodeName"}


def convert_pod(raw: Raw, fields: SpecFields | None = None) -> tuple[Pod, int | None, str | None]:
    """A Pod, and its ``spec.priority`` and ``spec.preemptionPolicy`` as written (for
    admission). ``priority`` is the written value or 0 until admitted. ``fields``:
    the spec already converted (``pod_spec_reusing``)."""
    meta = read_meta(raw, namespaced=True)
    check_dns_subdomain(meta.name, "metadata.name")
    owners = map_list(get_map(raw, "metadata", ""), "ownerReferences", "metadata", owner_reference)
    deletion = opt_time(get_map(raw, "metadata", ""), "deletionTimestamp", "metadata")
    if fields is None:
        fields = pod_spec(raw.get("spec"), "spec")
    if fields.node_name and fields.spec.scheduling_gates:
        raise fail(
            "spec.nodeName",
            forbidden("cannot be set until all schedulingGates have been cleared"),
        )
    status = get_map(raw, "status", "")
    phase = get_str(status, "phase", "status") or "Pending"
    enum(phase, POD_PHASES, "status.phase")
    pod = Pod(
        meta.name,
        meta.namespace,
        uid=meta.uid,
        labels=meta.labels,
        annotations=meta.annotations,
        owner_references=owners,
        spec=fields.spec,
        priority=fields.priority or 0,
        priority_class_name=fields.priority_class_name,
        preemption_policy=fields.preemption_policy or PREEMPT_LOWER_PRIORITY,
        node_name=fields.node_name,
        nominated_node_name=get_str(status, "nominatedNodeName", "status"),
        phase=phase,
        start_time=opt_time(status, "startTime", "status"),
        deletion_timestamp=deletion,
        conditions=list(map_list(status, "conditions", "status", _pod_condition)),
        creation_timestamp=meta.creation_timestamp,
    )
    return pod, fields.priority, fields.preemption_policy
