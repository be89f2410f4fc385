"""ImageLocality: prefer nodes that already hold the pod's container images
(upstream imagelocality/image_locality.go).

Score only, no normalisation. For every init and regular container whose
normalised image name is on the node, the image adds
``int(size * numNodesWithImage / totalNodes)`` (float arithmetic, truncated, as
upstream). The sum is clamped to ``[23 MiB, 1000 MiB * numContainers]`` and
mapped linearly onto ``[0, 100]`` with integer division.
The vectorised Score is derived (reads the node's state of the pod's images).
"""

from __future__ import annotations

from typing import Final

from kubesched.api.types import PodSpec
from kubesched.framework.config import PluginArgs
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import Handle
from kubesched.framework.reads import Reads
from kubesched.framework.results import MAX_NODE_SCORE
from kubesched.framework.snapshot import normalized_image_name
from kubesched.framework.status import SUCCESS, Status
from kubesched.framework.types import NodeInfo, PodInfo

NAME: Final = "ImageLocality"

MB: Final = 1024 * 1024
MIN_THRESHOLD: Final = 23 * MB
MAX_CONTAINER_THRESHOLD: Final = 1000 * MB


def pod_images(spec: PodSpec) -> list[str]:
    """Normalised image names of init containers then containers, one per container."""
    return [normalized_image_name(c.image) for c in (*spec.init_containers, *spec.containers)]


def scaled_image_score(size: int, num_nodes: int, total_nodes: int) -> int:
    """``int64(float64(size) * (float64(numNodes) / float64(total)))``."""
    return int(float(size) * (float(num_nodes) / float(total_nodes)))


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    """Clamp and scale the summed image scores to [0, MaxNodeScore]."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    num = MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD)
    den = max_threshold - MIN_THRESHOLD
    # Go division truncates toward zero; den < 0 only with no containers (num == 0 then).
    q = abs(num) // abs(den)
    return q if (num >= 0) == (den > 0) else -q


class ImageLocality:
    """Score plugin; takes no args. Needs ``handle.table`` for the total node count."""

    name = NAME

    def __init__(self, args: PluginArgs | None, handle: Handle) -> None:
        del args
        self._handle = handle
        self._memo = object()
        """This object's key of its ``Reads`` in ``SpecFacts.memo``."""

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        """Always Success."""
        total = len(self._handle.table)
        images = pod_images(pod.pod.spec)
        states = node.image_states
        total_score = 0
        for name in images:
            st = states.get(name)
            if st is not None:
                total_score += scaled_image_score(st.size, st.num_nodes, total)
        return calculate_priority(total_score, len(images)), SUCCESS

    def score_extensions(self) -> None:
        return None

    def score_reads(self, state: CycleState, pod: PodInfo) -> Reads:
        """The node's state of the pod's images; the images and the node count."""
        total = len(self._handle.table)
        memo = pod.facts.memo
        got = memo.get(self._memo)
        if isinstance(got, tuple) and got[0] == total:
            reads: Reads = got[1]
            return reads
        images = tuple(pod_images(pod.pod.spec))
        reads = Reads(images=tuple(sorted(set(images))), fragment=(images, total))
        memo[self._memo] = (total, reads)
        return reads
