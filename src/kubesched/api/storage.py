"""Typed storage objects: PersistentVolumeClaim, PersistentVolume, StorageClass,
CSINode, and the volumes of a pod spec, holding only what scheduling needs.

Conventions as ``api.types``; in addition every object here is frozen (a change is
a ``dataclasses.replace`` copy, so watchers see (old, new) pairs), sizes are bytes,
and a field with ``nil`` versus ``""`` semantics (a claim's ``storageClassName``)
is ``str | None``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from kubesched.api.types import LabelSelector, NodeSelector, OwnerReference, Time

# Access modes (core/v1 PersistentVolumeAccessMode).
READ_WRITE_ONCE: Final = "ReadWriteOnce"
READ_ONLY_MANY: Final = "ReadOnlyMany"
READ_WRITE_MANY: Final = "ReadWriteMany"
READ_WRITE_ONCE_POD: Final = "ReadWriteOncePod"
ACCESS_MODES: Final = (READ_WRITE_ONCE, READ_ONLY_MANY, READ_WRITE_MANY, READ_WRITE_ONCE_POD)

# Volume modes.
FILESYSTEM: Final = "Filesystem"
BLOCK: Final = "Block"
VOLUME_MODES: Final = (BLOCK, FILESYSTEM)

# StorageClass volumeBindingMode.
IMMEDIATE: Final = "Immediate"
WAIT_FOR_FIRST_CONSUMER: Final = "WaitForFirstConsumer"
BINDING_MODES: Final = (IMMEDIATE, WAIT_FOR_FIRST_CONSUMER)

# Reclaim policies.
RECLAIM_DELETE: Final = "Delete"
RECLAIM_RETAIN: Final = "Retain"
RECLAIM_RECYCLE: Final = "Recycle"
RECLAIM_POLICIES: Final = (RECLAIM_DELETE, RECLAIM_RECYCLE, RECLAIM_RETAIN)

# Claim phases.
CLAIM_PENDING: Final = "Pending"
CLAIM_BOUND: Final = "Bound"
CLAIM_LOST: Final = "Lost"
CLAIM_PHASES: Final = (CLAIM_PENDING, CLAIM_BOUND, CLAIM_LOST)

# Volume phases.
VOLUME_PENDING: Final = "Pending"
VOLUME_AVAILABLE: Final = "Available"
VOLUME_BOUND: Final = "Bound"
VOLUME_RELEASED: Final = "Released"
VOLUME_FAILED: Final = "Failed"
VOLUME_PHASES: Final = (
    VOLUME_PENDING,
    VOLUME_AVAILABLE,
    VOLUME_BOUND,
    VOLUME_RELEASED,
    VOLUME_FAILED,
)

# Annotations (k8s.io/component-helpers/storage/volume and storage/v1).
ANN_BIND_COMPLETED: Final = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER: Final = "pv.kubernetes.io/bound-by-controller"
ANN_SELECTED_NODE: Final = "volume.kubernetes.io/selected-node"
ANN_DYNAMICALLY_PROVISIONED: Final = "pv.kubernetes.io/provisioned-by"
ANN_BETA_STORAGE_CLASS: Final = "volume.beta.kubernetes.io/storage-class"
ANN_DEFAULT_STORAGE_CLASS: Final = "storageclass.kubernetes.io/is-default-class"
ANN_BETA_DEFAULT_STORAGE_CLASS: Final = "storageclass.beta.kubernetes.io/is-default-class"
ANN_MIGRATED_PLUGINS: Final = "storage.alpha.kubernetes.io/migrated-plugins"

NOT_SUPPORTED_PROVISIONER: Final = "kubernetes.io/no-provisioner"
"""A StorageClass provisioner meaning "no dynamic provisioning"."""

STORAGE: Final = "storage"
"""The resource name of a claim's request and a volume's capacity."""


# --------------------------------------------------------------------------- StorageClass


@dataclass(frozen=True, slots=True)
class TopologySelectorRequirement:
    """``allowedTopologies[].matchLabelExpressions[]``: the label ``key`` has one of ``values``."""

    key: str
    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TopologySelectorTerm:
    """Requirements ANDed; an empty term matches nothing (v1helper.MatchTopologySelectorTerms)."""

    match_label_expressions: tuple[TopologySelectorRequirement, ...] = ()


@dataclass(frozen=True, slots=True, eq=False)
class StorageClass:
    """storage.k8s.io/v1 StorageClass; ``volume_binding_mode`` defaults to Immediate
    and ``reclaim_policy`` to Delete, as the API server defaults them."""

    name: str
    provisioner: str
    volume_binding_mode: str = IMMEDIATE
    allowed_topologies: tuple[TopologySelectorTerm, ...] = ()
    reclaim_policy: str = RECLAIM_DELETE
    uid: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    creation_timestamp: Time = 0

    @property
    def is_default(self) -> bool:
        """The default class for claims without ``storageClassName``
        (storageutil.IsDefaultAnnotation: GA or beta annotation ``"true"``)."""
        return (
            self.annotations.get(ANN_DEFAULT_STORAGE_CLASS) == "true"
            or self.annotations.get(ANN_BETA_DEFAULT_STORAGE_CLASS) == "true"
        )


# --------------------------------------------------------------------------- PV / PVC


@dataclass(frozen=True, slots=True)
class ClaimReference:
    """A volume's ``spec.claimRef`` (an ObjectReference to a claim)."""

    namespace: str
    name: str
    uid: str = ""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True, eq=False)
class PersistentVolume:
    """core/v1 PersistentVolume. ``source`` names the volume source written
    (``csi``, ``local``, ``hostPath``, ``nfs``, ...); ``csi_driver`` and
    ``volume_handle`` are ``spec.csi``'s. ``capacity`` is ``spec.capacity.storage``;
    ``node_affinity`` is ``spec.nodeAffinity.required``."""

    name: str
    uid: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    capacity: int = 0
    access_modes: tuple[str, ...] = ()
    storage_class_name: str = ""
    volume_mode: str = FILESYSTEM
    node_affinity: NodeSelector | None = None
    claim_ref: ClaimReference | None = None
    reclaim_policy: str = RECLAIM_RETAIN
    volume_attributes_class_name: str = ""
    source: str = ""
    csi_driver: str = ""
    volume_handle: str = ""
    disk: str = ""
    """``gcePersistentDisk.pdName`` or ``awsElasticBlockStore.volumeID`` (in-tree sources
    NodeVolumeLimits translates to CSI)."""
    phase: str = VOLUME_PENDING
    creation_timestamp: Time = 0
    deletion_timestamp: Time | None = None


@dataclass(frozen=True, slots=True, eq=False)
class PersistentVolumeClaim:
    """core/v1 PersistentVolumeClaim. ``request`` is ``spec.resources.requests.storage``
    (None when absent); ``storage_class_name`` None means unset (the
    DefaultStorageClass admission may fill it in), ``""`` means "no class"."""

    name: str
    namespace: str = "default"
    uid: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    owner_references: tuple[OwnerReference, ...] = ()
    access_modes: tuple[str, ...] = ()
    request: int | None = None
    storage_class_name: str | None = None
    volume_name: str = ""
    selector: LabelSelector | None = None
    volume_mode: str = FILESYSTEM
    volume_attributes_class_name: str = ""
    phase: str = CLAIM_PENDING
    creation_timestamp: Time = 0
    deletion_timestamp: Time | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


# --------------------------------------------------------------------------- CSI


@dataclass(frozen=True, slots=True)
class CSINodeDriver:
    """``spec.drivers[]`` of a CSINode; ``allocatable_count`` None = no limit."""

    name: str
    node_id: str = ""
    topology_keys: tuple[str, ...] = ()
    allocatable_count: int | None = None


@dataclass(frozen=True, slots=True, eq=False)
class CSINode:
    """storage.k8s.io/v1 CSINode (named after its node)."""

    name: str
    uid: str = ""
    annotations: Mapping[str, str] = field(default_factory=dict)
    drivers: tuple[CSINodeDriver, ...] = ()

    def driver(self, name: str) -> CSINodeDriver | None:
        for d in self.drivers:
            if d.name == name:
                return d
        return None


# --------------------------------------------------------------------------- pod volumes

PVC_SOURCE: Final = "persistentVolumeClaim"
EPHEMERAL_SOURCE: Final = "ephemeral"
GCE_PD_SOURCE: Final = "gcePersistentDisk"
AWS_EBS_SOURCE: Final = "awsElasticBlockStore"
ISCSI_SOURCE: Final = "iscsi"
RBD_SOURCE: Final = "rbd"
CSI_SOURCE: Final = "csi"

INLINE_MIGRATABLE_SOURCES: Final = frozenset(
    {
        AWS_EBS_SOURCE,
        GCE_PD_SOURCE,
        "azureDisk",
        "azureFile",
        "cinder",
        "portworxVolume",
        "vsphereVolume",
    }
)
"""In-tree inline volume sources csi-translation-lib can migrate to CSI
(translator.IsInlineMigratable)."""


@dataclass(frozen=True, slots=True, eq=False)
class ClaimTemplate:
    """``ephemeral.volumeClaimTemplate``: the claim the ephemeral volume controller
    creates for the pod (metadata labels/annotations and the claim spec)."""

    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    access_modes: tuple[str, ...] = ()
    request: int | None = None
    storage_class_name: str | None = None
    volume_name: str = ""
    selector: LabelSelector | None = None
    volume_mode: str = FILESYSTEM
    volume_attributes_class_name: str = ""


@dataclass(frozen=True, slots=True)
class RBDImage:
    """An ``rbd`` volume's identity: monitors, pool and image."""

    monitors: tuple[str, ...]
    pool: str
    image: str


@dataclass(frozen=True, slots=True, eq=False)
class PodVolume:
    """One ``spec.volumes[]`` entry: ``source`` is the volume source's key as written
    (``persistentVolumeClaim``, ``ephemeral``, ``emptyDir``, ...); ``disk`` is
    ``gcePersistentDisk.pdName``, ``awsElasticBlockStore.volumeID`` or ``iscsi.iqn``;
    the other fields are their sources' (``claimName``, ``volumeClaimTemplate``, the
    rbd image, ``readOnly``, an inline ``csi`` driver)."""

    name: str
    source: str
    claim_name: str = ""
    template: ClaimTemplate | None = None
    disk: str = ""
    rbd: RBDImage | None = None
    read_only: bool = False
    csi_driver: str = ""
