"""Ports: how the outside world (simulated or live cluster) reaches the scheduler core.

Each backend provides these; the scheduler never imports a backend. Tests
use small fakes. All times are integer nanoseconds of the run's clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from kubesched.api.storage import CSINode, PersistentVolume, PersistentVolumeClaim, StorageClass
from kubesched.api.types import Namespace, Pod, PodCondition, PodDisruptionBudget, Time


class Clock(Protocol):
    def now(self) -> Time: ...


class StorageLister(Protocol):
    """Listers over the storage objects (PersistentVolumeClaim, PersistentVolume,
    StorageClass and CSINode informer caches upstream). None = not found."""

    def get_pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None: ...

    def get_pv(self, name: str) -> PersistentVolume | None: ...

    def list_pvs(self, storage_class: str) -> Sequence[PersistentVolume]:
        """The volumes of a class (``GetPersistentVolumeClass``), in creation order."""
        ...

    def get_storage_class(self, name: str) -> StorageClass | None: ...

    def get_csi_node(self, name: str) -> CSINode | None: ...


class ClusterReader(Protocol):
    """Listers over the cluster's current objects (the informer caches upstream)."""

    def get_pod(self, namespace: str, name: str) -> Pod | None: ...

    def pdbs(self) -> Sequence[PodDisruptionBudget]: ...

    def namespace(self, name: str) -> Namespace | None: ...

    def storage(self) -> StorageLister:
        """The storage listers."""
        ...


class NotFound(Exception):
    """A ``ClusterWriter`` call's object is gone (a live API server's 404, or a
    UID precondition that failed because the object was replaced)."""


class ClusterWriter(Protocol):
    """The API calls the scheduler makes. A call whose pod is gone may raise
    ``NotFound``; any other failure raises an exception whose text is the
    server's message."""

    def bind(self, pod: Pod, node_name: str) -> None:
        """Create the pod's Binding (``spec.nodeName = node_name``)."""

    def patch_pod_status(
        self,
        pod: Pod,
        *,
        condition: PodCondition | None = None,
        nominated_node_name: str | None = None,
    ) -> None:
        """Update a status condition and/or ``status.nominatedNodeName``
        (``""`` clears it; ``None`` leaves it)."""

    def delete_pod(self, pod: Pod) -> None:
        """DELETE with the pod's default grace period (preemption)."""

    def update_pv(self, pv: PersistentVolume) -> None:
        """PUT a PersistentVolume (the volume binder pre-binds it: ``spec.claimRef``).
        Raises KeyError when it does not exist."""

    def update_pvc(self, pvc: PersistentVolumeClaim) -> None:
        """PUT a PersistentVolumeClaim (the volume binder sets
        ``volume.kubernetes.io/selected-node``). Raises KeyError when it does not exist."""


class EventRecorder(Protocol):
    def event(
        self,
        regarding: Pod,
        type_: str,
        reason: str,
        action: str,
        message: str,
        related: Pod | None = None,
    ) -> None:
        """A Kubernetes event (``Scheduled``, ``FailedScheduling``, ``Preempted`` ...)."""

    def preemption(
        self, preemptor: Pod, node: str, victims: Sequence[Pod], num_pdb_violations: int
    ) -> None:
        """A successful preemption decision (for reports and explanations)."""


class MetricsRecorder(Protocol):
    """Metrics plugins report under upstream's names."""

    def preemption_attempt(self) -> None:
        """``scheduler_preemption_attempts_total`` += 1."""

    def preemption_victims(self, n: int) -> None:
        """Observe ``scheduler_preemption_victims``."""
