"""Building a NodeTable (the cycle's snapshot) from nodes and pods in one go.

The scheduler cache keeps its table current incrementally; this one-shot
builder serves tests and is the reference the incremental cache is checked
against.
"""

from __future__ import annotations

from collections.abc import Iterable

from kubesched.api.types import Node, Pod
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.types import ImageStateSummary, NodeInfo, PodInfo

DEFAULT_IMAGE_TAG = "latest"


def normalized_image_name(name: str) -> str:
    """Append ``:latest`` when the name has no tag (upstream normalizedImageName)."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":" + DEFAULT_IMAGE_TAG
    return name


def node_image_sizes(node: Node) -> dict[str, int]:
    """Normalized image name -> size for every name of every image on the node."""
    out: dict[str, int] = {}
    for image in node.images:
        for name in image.names:
            out[normalized_image_name(name)] = image.size_bytes
    return out


def build_table(nodes: Iterable[Node], pods: Iterable[Pod] = ()) -> NodeTable:
    """A table with these nodes (in this order) and the pods bound to them
    (pods whose ``node_name`` is not among the nodes are ignored)."""
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
