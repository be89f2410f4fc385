"""DynamicResources (DRA) for pods without ResourceClaims (upstream
dynamicresources/dynamicresources.go, v1.36, DynamicResourceAllocation GA).

kubesched models no ResourceClaims, DeviceClasses or ResourceSlices, so every
pod is claim-less (the loader rejects ``spec.resourceClaims``; without DeviceClasses
DRAExtendedResource builds no claim and extended resources stay NodeResourcesFit's).
For such pods upstream's plugin does, point by point (Error ``not found`` wherever
its state is missing):

- PreEnqueue: Success. PreFilter: writes an empty state under
  ``"DynamicResources"`` and returns Skip. Filter: Success.
- PostFilter: Unschedulable ``"no new claims to deallocate"`` (a failed preemption
  reads ``... no new claims to deallocate, preemption: ...``); without state (an
  earlier PreFilter was UnschedulableAndUnresolvable) the Error stops
  RunPostFilterPlugins before DefaultPreemption.
- No PreScore; Score 0 everywhere (DefaultNormalizeScore keeps 0).
- Reserve / PreBind: Success; Unreserve: nothing; PreBindPreFlight: Skip.
- EventsToRegister: Node Add|UpdateNodeLabel|UpdateNodeAllocatable, DeviceClass
  and ResourceSlice Add|Update (no hint); ResourceClaim Add|Update, Pod
  UpdatePodGeneratedResourceClaim (hints).
"""

from __future__ import annotations

from typing import Final

import numpy as np

from kubesched.api.types import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventObject,
    EventResource,
    QueueingHint,
)
from kubesched.framework.interfaces import Handle, NodeSet, Verdicts
from kubesched.framework.nodetable import IntArray, NodeTable
from kubesched.framework.results import (
    MAX_NODE_SCORE,
    NodeScore,
    NodeToStatus,
    PostFilterResult,
    PreFilterResult,
)
from kubesched.framework.scoring import default_normalize_score
from kubesched.framework.status import SKIP, SUCCESS, Status, error, unschedulable
from kubesched.framework.types import NodeInfo, PodInfo

NAME: Final = "DynamicResources"
STATE_KEY: Final = NAME
"""Upstream ``stateKey = Name`` (no "PreFilter" prefix)."""

MSG_NO_CLAIMS: Final = "no new claims to deallocate"
"""PostFilter reason for a pod without claims; code Unschedulable."""
ERR_NOT_FOUND: Final = "not found"
"""Upstream ``fwk.ErrNotFound``, returned as is (no "reading ..." wrapper) when
the PreFilter state is missing; code Error."""

# Upstream fwk.EventResource values of the DRA objects (kubesched never emits them).
RESOURCE_CLAIM: Final = "resource.k8s.io/ResourceClaim"
RESOURCE_SLICE: Final = "resource.k8s.io/ResourceSlice"
DEVICE_CLASS: Final = "resource.k8s.io/DeviceClass"

_NO_CLAIMS: Final = unschedulable(MSG_NO_CLAIMS)
_NO_STATE: Final = error(ERR_NOT_FOUND)


class _State:
    """The PreFilter state of a claim-less pod: no claims. Shared by clones, as
    upstream's ``stateData.Clone`` returns the same pointer."""

    __slots__ = ()

    def clone(self) -> _State:
        return self


_EMPTY_STATE: Final = _State()


def _has_state(state: CycleState) -> bool:
    return isinstance(state.get(STATE_KEY), _State)


class DynamicResources:
    """The plugin for claim-less pods; DynamicResourcesArgs are parsed and ignored."""

    name = NAME
    static_filter = True
    """Its Filter never depends on the pods of a node (it always passes)."""

    def __init__(self, args: object | None, handle: Handle) -> None:
        del args, handle

    # ------------------------------------------------------------------ queue
    def events_to_register(self) -> list[ClusterEventWithHint]:
        """Upstream EventsToRegister with queueing hints on (v1.36 default)."""
        node_actions = ActionType.ADD | ActionType.UPDATE_NODE_LABEL
        node_actions |= ActionType.UPDATE_NODE_ALLOCATABLE
        add_update = ActionType.ADD | ActionType.UPDATE
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, node_actions)),
            ClusterEventWithHint(
                ClusterEvent(RESOURCE_CLAIM, add_update), is_schedulable_after_claim_change
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM),
                is_schedulable_after_pod_change,
            ),
            ClusterEventWithHint(ClusterEvent(DEVICE_CLASS, add_update)),
            ClusterEventWithHint(ClusterEvent(RESOURCE_SLICE, add_update)),
        ]

    def pre_enqueue(self, pod: Pod) -> Status:
        """Success: a claim-less pod has no ResourceClaim that could be missing."""
        return SUCCESS

    # ------------------------------------------------------------------ filtering
    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        """Write the empty state (the other points read it), then Skip."""
        state.write(STATE_KEY, _EMPTY_STATE)
        return None, SKIP

    def pre_filter_extensions(self) -> None:
        # Upstream v1.36 has no AddPod/RemovePod (DRA preemption comes in v1.37).
        return None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        """Success with the state (no claims), Error ``not found`` without it.
        The runtime skips this Filter whenever PreFilter ran (it said Skip)."""
        return SUCCESS if _has_state(state) else _NO_STATE

    def filter_vector(self, state: CycleState, pod: PodInfo, table: NodeTable) -> Verdicts | None:
        """Every row passes; None without state (the per-node path reports the Error)."""
        if not _has_state(state):
            return None
        return Verdicts.all_pass(table.capacity)

    def post_filter(
        self, state: CycleState, pod: PodInfo, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        """(None, Unschedulable ``no new claims to deallocate``); (None, Error
        ``not found``) when PreFilter did not run."""
        if not _has_state(state):
            return None, _NO_STATE
        return None, _NO_CLAIMS

    # ------------------------------------------------------------------ scoring
    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        """0 (no allocation to rate); Error ``not found`` without state."""
        if not _has_state(state):
            return 0, _NO_STATE
        return 0, SUCCESS

    def score_extensions(self) -> DynamicResources:
        return self

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status:
        """Upstream DefaultNormalizeScore(MaxNodeScore, reverse=false)."""
        default_normalize_score(scores, False, MAX_NODE_SCORE)
        return SUCCESS

    def score_vector(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> IntArray | None:
        """Zeros (already normalised: all-zero scores stay 0); None without state."""
        if not _has_state(state):
            return None
        return np.zeros(len(nodes), dtype=np.int64)

    # ------------------------------------------------------------------ binding cycle
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        """Success: nothing to allocate."""
        return SUCCESS if _has_state(state) else _NO_STATE

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        """Nothing to release."""

    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        """Success: no claim to reserve for the pod."""
        return SUCCESS if _has_state(state) else _NO_STATE


# --------------------------------------------------------------------------- hints


def is_schedulable_after_claim_change(pod: Pod, old: EventObject, new: EventObject) -> QueueingHint:
    """Upstream isSchedulableAfterClaimChange: kubesched delivers no claims, and for a
    non-claim object upstream returns Queue (its "unexpected object" path)."""
    return QueueingHint.QUEUE


def is_schedulable_after_pod_change(pod: Pod, old: EventObject, new: EventObject) -> QueueingHint:
    """Upstream isSchedulableAfterPodChange: another pod -> Skip; the pod itself
    with every claim present (a claim-less pod trivially) -> Queue; a non-pod
    object -> Queue (upstream's error path)."""
    if not isinstance(new, Pod):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE if new.uid == pod.uid else QueueingHint.SKIP
