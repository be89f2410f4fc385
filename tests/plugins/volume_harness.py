"""Builders and a handle for the volume plugins' tests (upstream's makePVC / makePV /
makeNode helpers of volumebinding/test_utils.go, in short form).

``VolumeHandle`` is a ``FakeHandle`` whose reader serves a ``FakeStorage`` (and
pods, for the binder's checks) and whose writer applies the volume binder's
writes to that storage.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from kubesched.api.quantity import parse_quantity
from kubesched.api.storage import (
    ANN_BIND_COMPLETED,
    CLAIM_BOUND,
    READ_WRITE_ONCE,
    VOLUME_AVAILABLE,
    WAIT_FOR_FIRST_CONSUMER,
    ClaimReference,
    ClaimTemplate,
    CSINode,
    CSINodeDriver,
    PersistentVolume,
    PersistentVolumeClaim,
    PodVolume,
    StorageClass,
    TopologySelectorRequirement,
    TopologySelectorTerm,
)
from kubesched.api.types import (
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    OwnerReference,
    Pod,
)
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.ports import ClusterReader, ClusterWriter
from tests.fakes import FakeHandle, FakeReader, RecordingWriter
from tests.storage_fakes import FakeStorage

GI = 1024**3


def size(text: str) -> int:
    return math.ceil(parse_quantity(text))


def make_pvc(
    name: str,
    sc: str | None = "",
    *,
    namespace: str = "default",
    bound_pv: str = "",
    volume_name: str = "",
    phase: str = "",
    request: str = "1Gi",
    modes: tuple[str, ...] = (READ_WRITE_ONCE,),
    annotations: Mapping[str, str] | None = None,
    owner_uid: str = "",
    uid: str = "",
) -> PersistentVolumeClaim:
    """A claim; ``bound_pv`` makes it bound as the PV controller leaves it
    (upstream withBoundPV: volumeName plus the bind-completed annotation)."""
    ann = dict(annotations or {})
    if bound_pv:
        ann[ANN_BIND_COMPLETED] = "yes"
    owners = (OwnerReference("v1", "Pod", "", owner_uid, controller=True),) if owner_uid else ()
    return PersistentVolumeClaim(
        name,
        namespace,
        uid=uid or f"uid-{namespace}-{name}",
        annotations=ann,
        owner_references=owners,
        access_modes=modes,
        request=size(request),
        storage_class_name=sc,
        volume_name=bound_pv or volume_name,
        phase=phase or (CLAIM_BOUND if bound_pv else "Pending"),
    )


def affinity(labels: Mapping[str, Iterable[str]]) -> NodeSelector:
    """One required term: each key In its values (upstream withNodeAffinity)."""
    reqs = tuple(NodeSelectorRequirement(k, "In", tuple(v)) for k, v in labels.items())
    return NodeSelector((NodeSelectorTerm(reqs),))


def make_pv(
    name: str,
    sc: str = "",
    *,
    phase: str = VOLUME_AVAILABLE,
    capacity: str = "1Gi",
    node_affinity: Mapping[str, Iterable[str]] | None = None,
    claim: PersistentVolumeClaim | None = None,
    labels: Mapping[str, str] | None = None,
    modes: tuple[str, ...] = (READ_WRITE_ONCE,),
    driver: str = "",
    handle: str = "",
    source: str = "",
) -> PersistentVolume:
    return PersistentVolume(
        name,
        uid=f"uid-{name}",
        labels=dict(labels or {}),
        capacity=size(capacity),
        access_modes=modes,
        storage_class_name=sc,
        node_affinity=affinity(node_affinity) if node_affinity is not None else None,
        claim_ref=ClaimReference(claim.namespace, claim.name, claim.uid) if claim else None,
        source=source or ("csi" if driver else "local"),
        csi_driver=driver,
        volume_handle=handle,
        phase=phase,
    )


def make_sc(
    name: str,
    mode: str = WAIT_FOR_FIRST_CONSUMER,
    provisioner: str = "",
    topologies: Iterable[Mapping[str, Iterable[str]]] = (),
) -> StorageClass:
    terms = tuple(
        TopologySelectorTerm(tuple(TopologySelectorRequirement(k, tuple(v)) for k, v in t.items()))
        for t in topologies
    )
    return StorageClass(name, provisioner, mode, terms)


def make_csi_node(
    name: str,
    limits: Mapping[str, int | None] | None = None,
    annotations: Mapping[str, str] | None = None,
    topology_keys: Mapping[str, tuple[str, ...]] | None = None,
) -> CSINode:
    drivers = tuple(
        CSINodeDriver(d, name, (topology_keys or {}).get(d, ()), count)
        for d, count in (limits or {}).items()
    )
    return CSINode(name, annotations=dict(annotations or {}), drivers=drivers)


def ephemeral(name: str, sc: str | None = None, request: str = "1Gi") -> PodVolume:
    return PodVolume(
        name,
        "ephemeral",
        template=ClaimTemplate(
            access_modes=(READ_WRITE_ONCE,), request=size(request), storage_class_name=sc
        ),
    )


class VolumeReader(FakeReader):
    def __init__(self, storage: FakeStorage, pods: Iterable[Pod] = ()) -> None:
        super().__init__(pods, storage)


class VolumeWriter(RecordingWriter):
    def __init__(self, storage: FakeStorage) -> None:
        super().__init__()
        self.volumes = storage

    def update_pv(self, pv: PersistentVolume) -> None:
        self.volumes.update_pv(pv)

    def update_pvc(self, pvc: PersistentVolumeClaim) -> None:
        self.volumes.update_pvc(pvc)


class VolumeHandle(FakeHandle):
    def __init__(
        self, table: NodeTable, storage: FakeStorage | None = None, pods: Iterable[Pod] = ()
    ) -> None:
        super().__init__(table)
        self.storage = storage if storage is not None else FakeStorage()
        self._reader = VolumeReader(self.storage, pods)
        self._writer = VolumeWriter(self.storage)

    @property
    def reader(self) -> ClusterReader:
        return self._reader

    @property
    def writer(self) -> ClusterWriter:
        return self._writer
