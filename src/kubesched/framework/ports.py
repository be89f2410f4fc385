"""Ports: how the outside world (simulated or live cluster) reaches the scheduler core.

Each backend provides these; the scheduler never imports a backend. Tests
use small fakes. All times are integer nanoseconds of the run's clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from kubesched.api.types import Namespace, Pod, PodCondition, PodDisruptionBudget, Time


class Clock(Protocol):
    def now(self) -> Time: ...


class ClusterReader(Protocol):
    """Listers over the cluster's current objects (the informer caches upstream)."""

    def get_pod(self, namespace: str, name: str) -> Pod | None: ...

    def pdbs(self) -> Sequence[PodDisruptionBudget]: ...

    def namespace(self, name: str) -> Namespace | None: ...


class ClusterWriter(Protocol):
    """The API calls the scheduler makes."""

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
