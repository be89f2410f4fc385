"""The scheduler cache: NodeInfos and the NodeTable, kept current from cluster events.

Like upstream's backend/cache it tracks assumed pods and applies pod
add/update/remove to the node's aggregate; an update is remove-then-add, so the pod
moves to the end of its node's list, as upstream (victim order depends on it). The
cycle is synchronous, so the cache itself is the cycle's snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubesched.api.types import Node, Pod
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.snapshot import node_image_sizes
from kubesched.framework.types import ImageStateSummary, NodeInfo, PodInfo


@dataclass(slots=True)
class _PodState:
    info: PodInfo
    node: str
    assumed: bool


class CacheError(Exception):
    """An inconsistent event (e.g. removing a pod the cache never saw)."""


class Cache:
    def __init__(self) -> None:
        self.table = NodeTable()
        self.nodes: dict[str, NodeInfo] = {}
        self._pods: dict[str, _PodState] = {}
        self._orphans: dict[str, dict[str, PodInfo]] = {}
        """Pods bound to a node the cache does not know (yet)."""
        self._images: dict[str, ImageStateSummary] = {}
        self._image_nodes: dict[str, set[str]] = {}

    # ------------------------------------------------------------------ queries
    def pod_info(self, uid: str) -> PodInfo | None:
        st = self._pods.get(uid)
        return st.info if st is not None else None

    def is_assumed(self, uid: str) -> bool:
        st = self._pods.get(uid)
        return st is not None and st.assumed

    def pod_count(self) -> int:
        return len(self._pods)

    # ------------------------------------------------------------------ nodes
    def add_node(self, node: Node) -> NodeInfo:
        if node.name in self.nodes:
            self.update_node(self.nodes[node.name].node or node, node)
            return self.nodes[node.name]
        info = NodeInfo(node)
        self._set_images(info, node)
        for pi in self._orphans.pop(node.name, {}).values():
            info.add_pod(pi)
        self.nodes[node.name] = info
        self.table.add_node(info)
        return info

    def update_node(self, old: Node, new: Node) -> None:
        info = self.nodes[new.name]
        self._unset_images(info)
        info.set_node(new)
        self._set_images(info, new)
        self.table.update_node(info)

    def remove_node(self, node: Node) -> None:
        info = self.nodes.pop(node.name)
        self._unset_images(info)
        self.table.remove_node(node.name)
        if info.pods:
            self._orphans[node.name] = {p.pod.uid: p for p in info.pods}

    def _set_images(self, info: NodeInfo, node: Node) -> None:
        states: dict[str, ImageStateSummary] = {}
        for name, size in node_image_sizes(node).items():
            nodes = self._image_nodes.setdefault(name, set())
            nodes.add(node.name)
            summary = self._images.setdefault(name, ImageStateSummary(size, 0))
            summary.num_nodes = len(nodes)
            states[name] = summary
        info.image_states = states

    def _unset_images(self, info: NodeInfo) -> None:
        for name in info.image_states:
            nodes = self._image_nodes.get(name)
            if nodes is None:
                continue
            nodes.discard(info.name)
            if nodes:
                self._images[name].num_nodes = len(nodes)
            else:
                del self._image_nodes[name]
                del self._images[name]
        info.image_states = {}

    # ------------------------------------------------------------------ pods
    def _attach(self, pi: PodInfo, node_name: str) -> None:
        info = self.nodes.get(node_name)
        if info is None:
            self._orphans.setdefault(node_name, {})[pi.pod.uid] = pi
            return
        info.add_pod(pi)
        self.table.add_pod(self.table.row_of[node_name], pi)

    def _detach(self, pi: PodInfo, node_name: str) -> None:
        info = self.nodes.get(node_name)
        if info is None:
            self._orphans.get(node_name, {}).pop(pi.pod.uid, None)
            return
        removed = info.remove_pod(pi.pod)
        self.table.remove_pod(self.table.row_of[node_name], removed)

    def assume_pod(self, pi: PodInfo, node_name: str) -> None:
        """Count the pod on the node before the cluster confirms the binding."""
        uid = pi.pod.uid
        if uid in self._pods:
            raise CacheError(f"pod {pi.pod.key}({uid}) is in the cache, so can't be assumed")
        self._attach(pi, node_name)
        self._pods[uid] = _PodState(pi, node_name, True)

    def forget_pod(self, pod: Pod) -> None:
        st = self._pods.get(pod.uid)
        if st is None or not st.assumed:
            raise CacheError(f"pod {pod.key} wasn't assumed so cannot be forgotten")
        self._detach(st.info, st.node)
        del self._pods[pod.uid]

    def add_pod(self, pod: Pod) -> None:
        """An assigned pod seen in the cluster (confirms an assumed one)."""
        st = self._pods.get(pod.uid)
        if st is not None and st.assumed:
            # The binding confirmed: remove-then-add, as upstream.
            self._pods[pod.uid] = _PodState(self._move(st, pod), pod.node_name, False)
            return
        if st is not None:
            raise CacheError(f"pod {pod.key}({pod.uid}) was already in added state")
        pi = PodInfo(pod)
        self._attach(pi, pod.node_name)
        self._pods[pod.uid] = _PodState(pi, pod.node_name, False)

    def update_pod(self, old: Pod, new: Pod) -> None:
        st = self._pods.get(old.uid)
        if st is None:
            raise CacheError(f"pod {old.key}({old.uid}) is not added to scheduler cache")
        if new.uid == old.uid:
            st.info = self._move(st, new)
            st.node = new.node_name
            return
        self._pods[new.uid] = _PodState(self._move(st, new), new.node_name, st.assumed)

    def _move(self, st: _PodState, new: Pod) -> PodInfo:
        """Upstream's remove-then-add of a cached pod (``st``) as ``new``; returns
        its new PodInfo. On one node it is a single step: the pod goes to the end
        of the node's list and, when its spec is unchanged (binding confirmed,
        status patches, graceful deletion), the summed requests are not recomputed."""
        pi = PodInfo(new)
        info = self.nodes.get(st.node)
        if info is not None and st.node == new.node_name:
            removed = info.replace_pod(st.info.pod, pi)
            self.table.replace_pod(self.table.row_of[st.node], removed, pi)
        else:
            self._detach(st.info, st.node)
            self._attach(pi, new.node_name)
        return pi

    def remove_pod(self, pod: Pod) -> None:
        st = self._pods.pop(pod.uid, None)
        if st is None:
            raise CacheError(f"pod {pod.key}({pod.uid}) is not found in scheduler cache")
        self._detach(st.info, st.node)
