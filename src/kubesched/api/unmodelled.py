"""Kinds that change what the scheduler would do, but that kubesched does not model.

``kubesched.api.load`` counts such objects apart from the ignored kinds, and the
CLI names them in one warning (``warning: 3 objects that can change scheduling are
not modelled: 2 LimitRange, 1 ResourceQuota``). Each entry is ``kind: (API group,
why it matters)``; delete a line when the kind gets modelled (``load.KINDS`` wins).

Left out on purpose: ``Service`` (only a score's default spreading selector; the
``ignored`` line counts it), ``HorizontalPodAutoscaler`` (replica counts, not a
scheduling decision), ``Workload``/``PodGroup`` (alpha, off in v1.36).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

UNMODELLED: Final[Mapping[str, tuple[str, str]]] = {
    "ResourceQuota": ("", "quota admission refuses pods beyond the namespace's quota"),
    "LimitRange": ("", "LimitRanger admission sets default requests and limits"),
    "RuntimeClass": ("node.k8s.io", "adds pod overhead, a node selector and tolerations"),
    "ReplicationController": ("", "its controller creates pods"),
    "CSIDriver": ("storage.k8s.io", "NodeVolumeLimits and VolumeBinding read it"),
    "CSIStorageCapacity": ("storage.k8s.io", "VolumeBinding checks storage capacity"),
    "VolumeAttachment": ("storage.k8s.io", "NodeVolumeLimits counts attached volumes"),
    "ResourceClaim": ("resource.k8s.io", "DynamicResources allocates devices"),
    "ResourceClaimTemplate": ("resource.k8s.io", "DynamicResources allocates devices"),
    "DeviceClass": ("resource.k8s.io", "DynamicResources allocates devices"),
    "ResourceSlice": ("resource.k8s.io", "DynamicResources allocates devices"),
    "DeviceTaintRule": ("resource.k8s.io", "DynamicResources honours device taints"),
}


def is_unmodelled(kind: str, group: str) -> bool:
    """Whether ``kind`` in API ``group`` is in :data:`UNMODELLED`."""
    entry = UNMODELLED.get(kind)
    return entry is not None and entry[0] == group


def unmodelled_summary(counts: Mapping[str, int]) -> str:
    """``3 objects that can change scheduling are not modelled: 2 LimitRange, 1
    ResourceQuota`` (most first, then by name), or "" when there are none."""
    if not counts:
        return ""
    total = sum(counts.values())
    parts = ", ".join(f"{n} {k}" for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    noun = "object that can" if total == 1 else "objects that can"
    verb = "is" if total == 1 else "are"
    return f"{total} {noun} change scheduling {verb} not modelled: {parts}"
