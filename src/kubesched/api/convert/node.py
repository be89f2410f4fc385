"""The Node kind: labels, taints, ``unschedulable``, allocatable resources,
conditions and images."""

from __future__ import annotations

from kubesched.api.convert.meta import check_dns_subdomain, read_meta
from kubesched.api.convert.scheduling import taints
from kubesched.api.convert.values import resource_list
from kubesched.api.reader import (
    Raw,
    get_bool,
    get_int,
    get_map,
    get_str,
    get_str_list,
    map_list,
    req_str,
)
from kubesched.api.types import ContainerImage, Node, NodeCondition


def _node_condition(raw: Raw, path: str) -> NodeCondition:
    return NodeCondition(
        type=req_str(raw, "type", path),
        status=get_str(raw, "status", path),
        reason=get_str(raw, "reason", path),
        message=get_str(raw, "message", path),
    )


def _image(raw: Raw, path: str) -> ContainerImage:
    return ContainerImage(
        names=get_str_list(raw, "names", path), size_bytes=get_int(raw, "sizeBytes", path)
    )


def convert_node(raw: Raw) -> tuple[Node, dict[str, str]]:
    """A Node. ``status.allocatable`` falls back to ``status.capacity`` as a whole when
    it is absent (SetDefaults_NodeStatus), not resource by resource."""
    meta = read_meta(raw, namespaced=False)
    check_dns_subdomain(meta.name, "metadata.name")
    spec = get_map(raw, "spec", "")
    status = get_map(raw, "status", "")
    capacity = resource_list(status, "capacity", "status")
    if status.get("allocatable") is None:
        allocatable = capacity
    else:
        allocatable = resource_list(status, "allocatable", "status")
    node = Node(
        meta.name,
        uid=meta.uid,
        labels=meta.labels,
        annotations=meta.annotations,
        taints=taints(spec, "taints", "spec"),
        unschedulable=get_bool(spec, "unschedulable", "spec"),
        allocatable=allocatable,
        conditions=map_list(status, "conditions", "status", _node_condition),
        images=map_list(status, "images", "status", _image),
        creation_timestamp=meta.creation_timestamp,
    )
    return node, meta.annotations
