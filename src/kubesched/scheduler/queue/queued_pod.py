"""QueuedPodInfo: a pending pod plus its bookkeeping in the scheduling queue.

Mirrors upstream ``framework.QueuedPodInfo`` (pkg/scheduler/framework/types.go)
and satisfies ``framework.interfaces.QueuedInfo``, so a QueueSort ``less`` compares
two directly. The queue writes every field except ``unschedulable_plugins`` /
``pending_plugins``, which the scheduling cycle sets from the Diagnosis.
"""

from __future__ import annotations

from kubesched.api.types import Pod, Time
from kubesched.framework.events import ClusterEvent
from kubesched.framework.types import PodInfo


class QueuedPodInfo:
    """A pod waiting in (or popped from) the scheduling queue."""

    __slots__ = (
        "attempts",
        "backoff_expiration",
        "consecutive_errors_count",
        "gating_plugin",
        "gating_plugin_events",
        "initial_attempt_timestamp",
        "pending_plugins",
        "pod_info",
        "queued_by",
        "seen_changes",
        "seq",
        "timestamp",
        "unschedulable_count",
        "unschedulable_plugins",
        "was_flushed_from_unschedulable",
    )

    def __init__(
        self,
        pod_info: PodInfo,
        timestamp: Time = 0,
        *,
        seq: int = 0,
        unschedulable_plugins: set[str] | None = None,
        pending_plugins: set[str] | None = None,
    ) -> None:
        self.pod_info = pod_info
        self.timestamp: Time = timestamp
        """When the pod was added to the queue, refreshed on every re-add after a failure."""
        self.seq = seq
        """Order in which ``timestamp`` values were assigned. Ties between equal
        timestamps are broken by it, which reproduces what a real (strictly
        increasing) clock would give; see ``SchedulingQueue`` docs."""
        self.attempts = 0
        """Scheduling attempts (incremented on every pop)."""
        self.initial_attempt_timestamp: Time | None = None
        self.unschedulable_count = 0
        """Attempts that ended with a rejection (drives the backoff)."""
        self.consecutive_errors_count = 0
        """Attempts in a row that ended with an error (drives the error backoff)."""
        self.backoff_expiration: Time | None = None
        """Cached backoff expiry (window-aligned); ``None`` = not computed yet."""
        self.unschedulable_plugins: set[str] = (
            unschedulable_plugins if unschedulable_plugins is not None else set()
        )
        self.pending_plugins: set[str] = pending_plugins if pending_plugins is not None else set()
        self.gating_plugin = ""
        """The PreEnqueue plugin that gated the pod ("" = not gated)."""
        self.gating_plugin_events: tuple[ClusterEvent, ...] = ()
        """Events the gating plugin registered: only these can move the gated pod."""
        self.was_flushed_from_unschedulable = False
        """Set when the leftover flush moved the pod; cleared when it fails again."""
        self.queued_by = ""
        """The plugin whose queueing hint last said Queue for this pod ("" when no
        hint decided: no rejector, or a wildcard event); for explanations."""
        self.seen_changes = -1
        """The owner's count of cluster changes when the pod was last popped (-1:
        never). Not used by the queue: the simulation compares it with the
        current count to tell whether a retry could give a different answer."""

    @property
    def pod(self) -> Pod:
        return self.pod_info.pod

    @property
    def key(self) -> str:
        """``namespace/name``: the identity used by every queue structure."""
        return self.pod_info.pod.key

    def gated(self) -> bool:
        return self.gating_plugin != ""

    def rejector_plugins(self) -> set[str]:
        """Unschedulable plugins plus Pending plugins."""
        if not self.pending_plugins:
            return self.unschedulable_plugins
        return self.unschedulable_plugins | self.pending_plugins

    def update(self, pod: Pod) -> None:
        """Take a newer version of the same pod (upstream QueuedPodInfo.Update); the
        precomputed data, derived from the spec, is kept only for the same spec object."""
        old = self.pod_info.pod
        if old.uid == pod.uid and old.spec is pod.spec:
            self.pod_info.pod = pod
        else:
            self.pod_info = PodInfo(pod)

    def __repr__(self) -> str:
        return f"QueuedPodInfo({self.pod.key}, ts={self.timestamp}, attempts={self.attempts})"
