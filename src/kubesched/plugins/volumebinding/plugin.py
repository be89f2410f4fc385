"""VolumeBinding: PersistentVolumeClaims of a pod, bound or bindable on the node
(upstream volumebinding/volume_binding.go, v1.36).

- PreFilter: Skip without claims; a missing, lost or deleting claim, an ephemeral
  claim not owned by the pod, or an unbound claim of an Immediate class (``pod has
  unbound immediate PersistentVolumeClaims``) is UnschedulableAndUnresolvable.
- Filter (``binder.find_pod_volumes``): UnschedulableAndUnresolvable with the
  node's conflict reasons; the node's bindings are kept for Reserve.
- PreScore: always Skip (StorageCapacityScoring is off in v1.36).
- Reserve decides the API updates (``binder.assume_pod_volumes``); PreBind makes
  them (PVs pre-bound, claims annotated ``volume.kubernetes.io/selected-node``)
  and waits (``Handle.poll_until``, every second up to ``bindTimeoutSeconds``)
  until checkBindings finds every claim bound on a volume admitting the node:
  the simulated controllers answer at once, a live cluster's PV controller and
  provisioners later. PreBind runs in the binding cycle (off the scheduling
  thread in live mode): it touches only its cycle state and the writer; the
  check reads the caches, on the scheduling thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from kubesched.api.storage import (
    ANN_MIGRATED_PLUGINS,
    ANN_SELECTED_NODE,
    CSINode,
    PersistentVolumeClaim,
    StorageClass,
)
from kubesched.api.types import Node, Pod
from kubesched.api.volume_helpers import (
    check_node_affinity,
    is_claim_fully_bound,
    pod_uses_claim,
)
from kubesched.framework.config import PluginArgs, VolumeBindingArgs
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventObject,
    EventResource,
    QueueingHint,
)
from kubesched.framework.interfaces import Handle, NodeSet
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.ports import StorageLister
from kubesched.framework.results import PreFilterResult
from kubesched.framework.status import SKIP, SUCCESS, Code, Status, error, unresolvable
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.volumebinding.binder import (
    UNBOUND_IMMEDIATE,
    BinderError,
    PodVolumeClaims,
    PodVolumes,
    assume_pod_volumes,
    find_pod_volumes,
    get_pod_volume_claims,
    pod_has_pvcs,
)

NAME: Final = "VolumeBinding"
STATE_KEY: Final = NAME


@dataclass(slots=True)
class StateData:
    """Upstream stateData (PreFilter writes, Filter fills per node, Reserve / PreBind
    read); shared by clones, as upstream's pointer is."""

    claims: PodVolumeClaims | None = None
    by_node: dict[str, PodVolumes] = field(default_factory=dict)
    all_bound: bool = False
    has_static_bindings: bool = False

    def clone(self) -> StateData:
        return self


_NO_CLAIMS: Final = StateData(all_bound=True)
"""The state of every pod without claims (upstream writes an empty stateData and
Reserve finds every volume bound): shared, never changed."""


BIND_POLL_INTERVAL: Final = 1.0
"""Seconds between two checks of the bindings (upstream's ``time.Second``)."""


class VolumeBinding:
    """Args VolumeBindingArgs: ``bindTimeoutSeconds`` bounds PreBind's wait
    (``shape`` has no effect here: no StorageCapacityScoring)."""

    name = NAME

    def __init__(self, args: PluginArgs | None, handle: Handle) -> None:
        self.bind_timeout = float(
            args.bind_timeout_seconds
            if isinstance(args, VolumeBindingArgs)
            else VolumeBindingArgs().bind_timeout_seconds
        )
        self.handle = handle

    def _storage(self) -> StorageLister:
        return self.handle.reader.storage()

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """Upstream's list (hints on) but CSIDriver / CSIStorageCapacity (not modelled)."""
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.STORAGE_CLASS, ActionType.ADD | ActionType.UPDATE),
                is_schedulable_after_storage_class_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD | ActionType.UPDATE
                ),
                is_schedulable_after_pvc_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME, ActionType.ADD | ActionType.UPDATE)
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSI_NODE, ActionType.ADD | ActionType.UPDATE),
                is_schedulable_after_csi_node_change,
            ),
        ]

    # ------------------------------------------------------------------ PreFilter
    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        p = pod.pod
        if not p.spec.volumes:
            state.write(STATE_KEY, _NO_CLAIMS)
            return None, SKIP
        storage = self._storage()
        has, reason = pod_has_pvcs(p, storage)
        if reason is not None:
            return None, unresolvable(reason)
        if not has:
            state.write(STATE_KEY, _NO_CLAIMS)
            return None, SKIP
        try:
            claims = get_pod_volume_claims(p, storage)
        except BinderError as err:
            return None, error(str(err))
        if claims.unbound_immediate:
            return None, unresolvable(UNBOUND_IMMEDIATE)
        state.write(
            STATE_KEY,
            StateData(
                PodVolumeClaims(claims.bound, claims.unbound_delay, (), claims.volumes_by_class)
            ),
        )
        return None, SUCCESS

    def pre_filter_extensions(self) -> None:
        return None

    # ------------------------------------------------------------------ Filter
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        s = _state(state)
        if isinstance(s, Status):
            return s
        if s.claims is None or node.node is None:
            return error("not found")
        try:
            volumes, reasons = find_pod_volumes(pod.pod, s.claims, node.node, self._storage())
        except BinderError as err:
            return error(str(err))
        if reasons:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons)
        s.by_node[node.node.name] = volumes
        s.has_static_bindings = s.has_static_bindings or bool(volumes.static_bindings)
        return SUCCESS

    # ------------------------------------------------------------------ Score
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> Status:
        """Skip: no scorer without the StorageCapacityScoring gate (off in v1.36)."""
        return SKIP

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        return 0, SUCCESS

    def score_extensions(self) -> None:
        return None

    # ------------------------------------------------------------------ binding cycle
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        s = _state(state)
        if s is _NO_CLAIMS:
            return SUCCESS
        if isinstance(s, Status):
            return s
        volumes = s.by_node.get(node_name)
        if volumes is None:
            s.all_bound = True  # the pod has no claims
            return SUCCESS
        s.all_bound = assume_pod_volumes(pod.pod, node_name, volumes, self._storage())
        return SUCCESS

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        """Nothing to revert: decisions reach the cluster only at PreBind."""

    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        """BindPodVolumes: the API updates, then the wait for the bindings. Reads
        only the cycle state and calls the writer (any thread); see the module
        docstring."""
        s = _state(state)
        if isinstance(s, Status):
            return s
        if s.all_bound:
            return SUCCESS
        volumes = s.by_node.get(node_name)
        if volumes is None:
            return error(f'no pod volumes found for node "{node_name}"')
        writer = self.handle.writer
        try:
            for pv, _ in volumes.static_bindings:
                writer.update_pv(pv)
            for claim in volumes.dynamic_provisions:
                writer.update_pvc(claim)
        except KeyError as err:
            return error(str(err.args[0]) if err.args else str(err))
        except Exception as err:  # the API server refused: its message, as upstream
            return error(str(err))
        problem = self.handle.poll_until(
            lambda: self._check_bindings(pod.pod, node_name, volumes),
            BIND_POLL_INTERVAL,
            self.bind_timeout,
        )
        if problem is not None:
            return error(f"binding volumes: {problem}")
        return SUCCESS

    def _check_bindings(
        self, pod: Pod, node_name: str, volumes: PodVolumes
    ) -> tuple[bool, str | None]:
        """checkBindings (the scheduling thread: it reads the caches): (every claim
        bound, the error that ends the wait)."""
        node = _node(self.handle.table, node_name)
        if node is None:
            return False, f'failed to get node "{node_name}": node "{node_name}" not found'
        if self.handle.reader.get_pod(pod.namespace, pod.name) is None:
            return False, f'pod does not exist any more: pod "{pod.name}" not found'
        storage = self._storage()
        pending = False
        for pv, claim in volumes.static_bindings:
            cur = storage.get_pv(pv.name)
            pvc = storage.get_pvc(claim.namespace, claim.name)
            if cur is None or pvc is None:
                what = f'PersistentVolume "{pv.name}"' if cur is None else f'PVC "{claim.key}"'
                return False, f"failed to check binding: cannot find {what}"
            if not check_node_affinity(cur, node.labels):
                return False, (
                    f'pv "{cur.name}" node affinity doesn\'t match node "{node.name}": '
                    "no matching NodeSelectorTerms"
                )
            if cur.claim_ref is None or not cur.claim_ref.uid:
                return False, f'ClaimRef got reset for pv "{cur.name}"'
            pending = pending or not is_claim_fully_bound(pvc)
        for claim in volumes.dynamic_provisions:
            pvc = storage.get_pvc(claim.namespace, claim.name)
            if pvc is None:
                return False, f'failed to check provisioning pvc: cannot find PVC "{claim.key}"'
            selected = pvc.annotations.get(ANN_SELECTED_NODE)
            if selected is None:
                return False, f'selectedNode annotation reset for PVC "{pvc.name}"'
            if selected != node_name:
                return False, f'provisioning failed for PVC "{pvc.name}"'
            if pvc.volume_name:
                provisioned = storage.get_pv(pvc.volume_name)
                if provisioned is None:
                    pending = True
                    continue
                if not check_node_affinity(provisioned, node.labels):
                    return False, (
                        f'pv "{provisioned.name}" node affinity doesn\'t match node '
                        f'"{node.name}": no matching NodeSelectorTerms'
                    )
            pending = pending or not is_claim_fully_bound(pvc)
        return not pending, None


def _state(state: CycleState) -> StateData | Status:
    value = state.get(STATE_KEY)
    if isinstance(value, StateData):
        return value
    if value is None:
        return error("not found")
    return error("unable to convert state into stateData")


def _node(table: NodeTable, name: str) -> Node | None:
    row = table.row_of.get(name)
    if row is None:
        return None
    info = table.infos[row]
    return info.node if info is not None else None


# --------------------------------------------------------------------------- hints


def is_schedulable_after_storage_class_change(
    pod: Pod, old: EventObject, new: EventObject
) -> QueueingHint:
    """QUEUE for a new class, or a class whose allowedTopologies changed
    (volumeBindingMode is immutable)."""
    if not isinstance(new, StorageClass) or not isinstance(old, StorageClass):
        return QueueingHint.QUEUE
    if new.allowed_topologies != old.allowed_topologies:
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def is_schedulable_after_pvc_change(pod: Pod, old: EventObject, new: EventObject) -> QueueingHint:
    """QUEUE when the claim, in the pod's namespace, is one of its claims
    (ephemeral ones included)."""
    if not isinstance(new, PersistentVolumeClaim):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE if pod_uses_claim(pod, new) else QueueingHint.SKIP


def is_schedulable_after_csi_node_change(
    pod: Pod, old: EventObject, new: EventObject
) -> QueueingHint:
    """QUEUE for a new CSINode, or one whose migrated-plugins annotation changed."""
    if not isinstance(old, CSINode) or not isinstance(new, CSINode):
        return QueueingHint.QUEUE
    if old.annotations.get(ANN_MIGRATED_PLUGINS) != new.annotations.get(ANN_MIGRATED_PLUGINS):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP
