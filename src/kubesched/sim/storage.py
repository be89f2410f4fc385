"""The simulated cluster's storage: objects, and the controllers that act on them.

``Storage`` keeps PersistentVolumeClaims, PersistentVolumes, StorageClasses and
CSINodes, answers the scheduler's ``StorageLister``, takes the volume binder's
writes (``update_pv`` / ``update_pvc``) and plays, at once:

- DefaultStorageClass admission: a claim without ``storageClassName`` gets the
  default class (newest, then by name), also retroactively (GA since v1.28);
- the PV controller (pkg/controller/volume/persistentvolume): binds an unbound
  claim to the best Available volume (``find_matching_volume`` without a node) or
  pre-bound partners, releases (Retain) or deletes (Delete) a volume whose claim
  is gone, marks a claim whose volume is gone Lost; WaitForFirstConsumer claims
  wait for the scheduler. Instead of upstream's 15 s retry, a new or freed volume
  is offered to pending claims at once;
- the external provisioner (not ``kubernetes.io/no-provisioner``): a volume
  ``pvc-<claim uid>`` (request, the class's reclaim policy, a CSI source), with
  the selected node's values of the CSINode ``topologyKeys`` (else of the keys
  ``allowedTopologies`` names) as node affinity, or without a selected node the
  class's ``allowedTopologies`` as they are;
- the ephemeral volume controller: claim ``<pod>-<volume>``, owned by the pod;
- PVC protection: a claim deleted while a scheduled, unfinished pod uses it keeps
  a ``deletionTimestamp`` until no such pod is left.

Changes are reported through ``emit(resource, op, old, new)``; a change replaces
the (immutable) object.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Final, Protocol

from kubesched.api.storage import (
    ANN_BETA_STORAGE_CLASS,
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_DYNAMICALLY_PROVISIONED,
    ANN_SELECTED_NODE,
    CLAIM_BOUND,
    CLAIM_LOST,
    CSI_SOURCE,
    NOT_SUPPORTED_PROVISIONER,
    RECLAIM_DELETE,
    VOLUME_AVAILABLE,
    VOLUME_BOUND,
    VOLUME_RELEASED,
    ClaimReference,
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    TopologySelectorTerm,
)
from kubesched.api.types import (
    FAILED,
    SUCCEEDED,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    OwnerReference,
    Pod,
)
from kubesched.api.volume_helpers import (
    claim_class,
    ephemeral_claim_name,
    find_matching_volume,
    is_claim_fully_bound,
    is_volume_bound_to_claim,
    pod_uses_claim,
    volume_class,
)
from kubesched.framework.events import EventResource

# The resources of the watch events (upstream's EventResource names).
PVC: Final = EventResource.PERSISTENT_VOLUME_CLAIM
PV: Final = EventResource.PERSISTENT_VOLUME
STORAGE_CLASS: Final = EventResource.STORAGE_CLASS
CSI_NODE: Final = EventResource.CSI_NODE

StorageObject = PersistentVolumeClaim | PersistentVolume | StorageClass | CSINode


class Host(Protocol):
    """What the storage needs of the cluster it lives in."""

    @property
    def now(self) -> int: ...

    def new_uid(self) -> str: ...


Emit = Callable[[str, str, object, object], None]
"""(resource, op: add|update|delete, old, new)."""


class Storage:
    """Storage objects and their controllers (see the module docstring)."""

    def __init__(self, host: Host, emit: Emit, pods: Callable[[], Iterable[Pod]]) -> None:
        self._host = host
        self._emit = emit
        self._pods = pods
        self.pvcs: dict[str, PersistentVolumeClaim] = {}
        """Claims by ``namespace/name``, in creation order."""
        self.pvs: dict[str, PersistentVolume] = {}
        self.classes: dict[str, StorageClass] = {}
        self.csi_nodes: dict[str, CSINode] = {}
        self._nodes: Callable[[str], Node | None] = lambda name: None

    def set_node_lookup(self, nodes: Callable[[str], Node | None]) -> None:
        self._nodes = nodes

    # ------------------------------------------------------------------ StorageLister
    def get_pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return self.pvcs.get(f"{namespace}/{name}")

    def get_pv(self, name: str) -> PersistentVolume | None:
        return self.pvs.get(name)

    def list_pvs(self, storage_class: str) -> Sequence[PersistentVolume]:
        return [pv for pv in self.pvs.values() if volume_class(pv) == storage_class]

    def get_storage_class(self, name: str) -> StorageClass | None:
        return self.classes.get(name)

    def get_csi_node(self, name: str) -> CSINode | None:
        return self.csi_nodes.get(name)

    # ------------------------------------------------------------------ create / delete
    def create(self, obj: StorageObject) -> None:
        """Create an input object (its uid is generated when it has none)."""
        now = self._host.now
        uid = obj.uid or self._host.new_uid()
        if isinstance(obj, PersistentVolumeClaim):
            self._create_pvc(replace(obj, uid=uid, creation_timestamp=now))
        elif isinstance(obj, PersistentVolume):
            pv = replace(obj, uid=uid, creation_timestamp=now)
            self.pvs[pv.name] = pv
            self._emit(PV, "add", None, pv)
            self._sync_volume(pv)
        elif isinstance(obj, StorageClass):
            sc = replace(obj, uid=uid, creation_timestamp=now)
            self.classes[sc.name] = sc
            self._emit(STORAGE_CLASS, "add", None, sc)
            self._sync_pending_claims()
        else:
            csi = replace(obj, uid=uid)
            self.csi_nodes[csi.name] = csi
            self._emit(CSI_NODE, "add", None, csi)

    def delete(self, obj: StorageObject) -> None:
        """Delete an input object by identity (claims honour PVC protection)."""
        if isinstance(obj, PersistentVolumeClaim):
            self.delete_pvc(obj.key)
        elif isinstance(obj, PersistentVolume):
            pv = self.pvs.pop(obj.name, None)
            if pv is not None:
                self._emit(PV, "delete", pv, None)
                self._volume_gone(pv)
        elif isinstance(obj, StorageClass):
            sc = self.classes.pop(obj.name, None)
            if sc is not None:
                self._emit(STORAGE_CLASS, "delete", sc, None)
        else:
            csi = self.csi_nodes.pop(obj.name, None)
            if csi is not None:
                self._emit(CSI_NODE, "delete", csi, None)

    def _create_pvc(self, pvc: PersistentVolumeClaim) -> None:
        if pvc.storage_class_name is None and ANN_BETA_STORAGE_CLASS not in pvc.annotations:
            default = self.default_class()
            if default is not None:
                pvc = replace(pvc, storage_class_name=default.name)
        self.pvcs[pvc.key] = pvc
        self._emit(PVC, "add", None, pvc)
        if pvc.deletion_timestamp is not None:
            self.delete_pvc(pvc.key)  # dumped while terminating: protection decides
            return
        self._sync_claim(pvc)

    def default_class(self) -> StorageClass | None:
        """GetDefaultClass: the newest default class; equal times by name."""
        defaults = [sc for sc in self.classes.values() if sc.is_default]
        if not defaults:
            return None
        return min(defaults, key=lambda sc: (-sc.creation_timestamp, sc.name))

    def delete_pvc(self, key: str) -> None:
        pvc = self.pvcs.get(key)
        if pvc is None:
            return
        if self._claim_in_use(pvc):
            if pvc.deletion_timestamp is None:
                self._replace_pvc(pvc, replace(pvc, deletion_timestamp=self._host.now))
            return
        del self.pvcs[key]
        self._emit(PVC, "delete", pvc, None)
        if pvc.volume_name:
            pv = self.pvs.get(pvc.volume_name)
            if pv is not None:
                self._sync_volume(pv)

    def _claim_in_use(self, pvc: PersistentVolumeClaim) -> bool:
        """PVC protection: a scheduled pod that has not finished uses the claim."""
        return any(
            pod.node_name and pod.phase not in (SUCCEEDED, FAILED) and pod_uses_claim(pod, pvc)
            for pod in self._pods()
        )

    def update(self, obj: StorageObject) -> None:
        """Replace an existing object by a changed one (an API update); KeyError
        when it does not exist."""
        if isinstance(obj, PersistentVolumeClaim):
            self.update_pvc(obj)
        elif isinstance(obj, PersistentVolume):
            self.update_pv(obj)
        elif isinstance(obj, StorageClass):
            old_sc = self.classes[obj.name]
            self.classes[obj.name] = obj
            self._emit(STORAGE_CLASS, "update", old_sc, obj)
            self._sync_pending_claims()
        else:
            old_csi = self.csi_nodes[obj.name]
            self.csi_nodes[obj.name] = obj
            self._emit(CSI_NODE, "update", old_csi, obj)

    # ------------------------------------------------------------------ API writes
    def update_pv(self, pv: PersistentVolume) -> None:
        """PUT a volume; KeyError when it does not exist."""
        old = self.pvs.get(pv.name)
        if old is None:
            raise KeyError(f'persistentvolumes "{pv.name}" not found')
        self._replace_pv(old, pv)
        self._sync_volume(pv)

    def update_pvc(self, pvc: PersistentVolumeClaim) -> None:
        """PUT a claim; KeyError when it does not exist."""
        old = self.pvcs.get(pvc.key)
        if old is None:
            raise KeyError(f'persistentvolumeclaims "{pvc.name}" not found')
        self._replace_pvc(old, pvc)
        self._sync_claim(pvc)

    def _replace_pv(self, old: PersistentVolume, new: PersistentVolume) -> None:
        self.pvs[new.name] = new
        self._emit(PV, "update", old, new)

    def _replace_pvc(self, old: PersistentVolumeClaim, new: PersistentVolumeClaim) -> None:
        self.pvcs[new.key] = new
        self._emit(PVC, "update", old, new)

    # ------------------------------------------------------------------ PV controller
    def _sync_pending_claims(self) -> None:
        """Offer every unbound claim another try (upstream's periodic claim resync)."""
        for pvc in list(self.pvcs.values()):
            cur = self.pvcs.get(pvc.key)
            if cur is not None and not cur.volume_name:
                self._sync_claim(cur)

    def _sync_claim(self, pvc: PersistentVolumeClaim) -> None:
        if pvc.deletion_timestamp is not None:
            return
        if is_claim_fully_bound(pvc):
            self._sync_bound_claim(pvc)
            return
        if pvc.volume_name:
            pv = self.pvs.get(pvc.volume_name)
            if pv is not None and (pv.claim_ref is None or is_volume_bound_to_claim(pv, pvc)):
                self._bind(pv, pvc)
            return
        if pvc.storage_class_name is None and ANN_BETA_STORAGE_CLASS not in pvc.annotations:
            default = self.default_class()
            if default is not None:
                new = replace(pvc, storage_class_name=default.name)
                self._replace_pvc(pvc, new)
                pvc = new
        name = claim_class(pvc)
        sc = self.classes.get(name) if name else None
        delay = sc is not None and sc.volume_binding_mode == "WaitForFirstConsumer"
        pv = find_matching_volume(pvc, self.list_pvs(name), None, None, delay)
        if pv is not None:
            self._bind(pv, pvc)
            return
        if delay and ANN_SELECTED_NODE not in pvc.annotations:
            return  # the scheduler decides
        if sc is not None and sc.provisioner and sc.provisioner != NOT_SUPPORTED_PROVISIONER:
            self._provision(pvc, sc)

    def _sync_bound_claim(self, pvc: PersistentVolumeClaim) -> None:
        pv = self.pvs.get(pvc.volume_name)
        if pv is None:
            if pvc.phase != CLAIM_LOST:
                self._replace_pvc(pvc, replace(pvc, phase=CLAIM_LOST))
            return
        if pv.claim_ref is None:
            self._bind(pv, pvc)
        elif is_volume_bound_to_claim(pv, pvc):
            if pvc.phase != CLAIM_BOUND or pv.phase != VOLUME_BOUND:
                self._bind(pv, pvc)
        elif pvc.phase != CLAIM_LOST:
            self._replace_pvc(pvc, replace(pvc, phase=CLAIM_LOST))

    def _bind(self, pv: PersistentVolume, pvc: PersistentVolumeClaim) -> None:
        """bind(): the volume's claimRef and phase, then the claim's volume name,
        annotations and phase."""
        new_pv = pv
        ref = pv.claim_ref
        if ref is None or ref.uid != pvc.uid or ref.key != pvc.key:
            annotations = dict(pv.annotations)
            if not is_volume_bound_to_claim(pv, pvc):
                annotations[ANN_BOUND_BY_CONTROLLER] = "yes"
            new_pv = replace(
                new_pv,
                claim_ref=ClaimReference(pvc.namespace, pvc.name, pvc.uid),
                annotations=annotations,
            )
        if new_pv.phase != VOLUME_BOUND:
            new_pv = replace(new_pv, phase=VOLUME_BOUND)
        if new_pv is not pv:
            self._replace_pv(pv, new_pv)
        annotations = dict(pvc.annotations)
        if not pvc.volume_name:
            annotations[ANN_BOUND_BY_CONTROLLER] = "yes"
        annotations[ANN_BIND_COMPLETED] = "yes"
        new_pvc = replace(pvc, volume_name=pv.name, annotations=annotations, phase=CLAIM_BOUND)
        if (
            pvc.volume_name != pv.name
            or pvc.phase != CLAIM_BOUND
            or dict(pvc.annotations) != annotations
        ):
            self._replace_pvc(pvc, new_pvc)

    def _sync_volume(self, pv: PersistentVolume) -> None:
        ref = pv.claim_ref
        if ref is None:
            if pv.phase != VOLUME_AVAILABLE:
                pv = replace(pv, phase=VOLUME_AVAILABLE)
                self._replace_pv(self.pvs[pv.name], pv)
            self._sync_pending_claims()
            return
        pvc = self.pvcs.get(ref.key)
        if pvc is None or (ref.uid and ref.uid != pvc.uid):
            if not ref.uid:
                # Pre-bound to a claim that does not exist yet.
                if pv.phase != VOLUME_AVAILABLE:
                    self._replace_pv(pv, replace(pv, phase=VOLUME_AVAILABLE))
                return
            self._release(pv)
            return
        if not pvc.volume_name or pvc.volume_name == pv.name:
            self._sync_claim(pvc)

    def _release(self, pv: PersistentVolume) -> None:
        """The volume's claim is gone: Delete removes it, Retain leaves it Released."""
        if pv.reclaim_policy == RECLAIM_DELETE:
            if self.pvs.pop(pv.name, None) is not None:
                self._emit(PV, "delete", pv, None)
            return
        if pv.phase != VOLUME_RELEASED:
            self._replace_pv(pv, replace(pv, phase=VOLUME_RELEASED))

    def _volume_gone(self, pv: PersistentVolume) -> None:
        ref = pv.claim_ref
        if ref is None:
            return
        pvc = self.pvcs.get(ref.key)
        if pvc is not None and pvc.volume_name == pv.name and is_claim_fully_bound(pvc):
            self._replace_pvc(pvc, replace(pvc, phase=CLAIM_LOST))

    # ------------------------------------------------------------------ provisioner
    def _provision(self, pvc: PersistentVolumeClaim, sc: StorageClass) -> None:
        name = f"pvc-{pvc.uid}"
        if name in self.pvs:
            return
        selected = pvc.annotations.get(ANN_SELECTED_NODE)
        pv = PersistentVolume(
            name=name,
            uid=self._host.new_uid(),
            annotations={ANN_DYNAMICALLY_PROVISIONED: sc.provisioner},
            capacity=pvc.request or 0,
            access_modes=pvc.access_modes,
            storage_class_name=sc.name,
            volume_mode=pvc.volume_mode,
            node_affinity=self._provisioned_affinity(sc, selected),
            claim_ref=ClaimReference(pvc.namespace, pvc.name, pvc.uid),
            reclaim_policy=sc.reclaim_policy,
            volume_attributes_class_name=pvc.volume_attributes_class_name,
            source=CSI_SOURCE,
            csi_driver=sc.provisioner,
            volume_handle=name,
            creation_timestamp=self._host.now,
        )
        self.pvs[name] = pv
        self._emit(PV, "add", None, pv)
        self._bind(pv, pvc)

    def _provisioned_affinity(self, sc: StorageClass, selected: str | None) -> NodeSelector | None:
        if selected is None:
            return _terms_selector(sc.allowed_topologies)
        node = self._nodes(selected)
        if node is None:
            return None
        csi = self.csi_nodes.get(selected)
        driver = csi.driver(sc.provisioner) if csi is not None else None
        if driver is not None and driver.topology_keys:
            keys: Iterable[str] = driver.topology_keys
        else:
            keys = dict.fromkeys(
                r.key for t in sc.allowed_topologies for r in t.match_label_expressions
            )
        reqs = tuple(
            NodeSelectorRequirement(k, "In", (node.labels[k],)) for k in keys if k in node.labels
        )
        if not reqs:
            return None
        return NodeSelector((NodeSelectorTerm(match_expressions=reqs),))

    # ------------------------------------------------------------------ pod events
    def pod_added(self, pod: Pod) -> None:
        """The ephemeral volume controller: create the pod's missing ephemeral claims."""
        for v in pod.spec.volumes:
            t = v.template
            if t is None:
                continue
            name = ephemeral_claim_name(pod, v)
            if f"{pod.namespace}/{name}" in self.pvcs:
                continue
            pvc = PersistentVolumeClaim(
                name=name,
                namespace=pod.namespace,
                uid=self._host.new_uid(),
                labels=dict(t.labels),
                annotations=dict(t.annotations),
                owner_references=(OwnerReference("v1", "Pod", pod.name, pod.uid, controller=True),),
                access_modes=t.access_modes,
                request=t.request,
                storage_class_name=t.storage_class_name,
                volume_name=t.volume_name,
                selector=t.selector,
                volume_mode=t.volume_mode,
                volume_attributes_class_name=t.volume_attributes_class_name,
                creation_timestamp=self._host.now,
            )
            self._create_pvc(pvc)

    def pod_released(self) -> None:
        """A pod stopped using its claims (finished or gone): deletions PVC
        protection held back can complete."""
        for pvc in list(self.pvcs.values()):
            if pvc.deletion_timestamp is not None:
                self.delete_pvc(pvc.key)

    def pod_deleted(self, pod: Pod) -> None:
        """The garbage collector deletes the claims the pod owned."""
        self.owner_deleted(pod.uid)
        self.pod_released()

    def owner_deleted(self, uid: str) -> None:
        """The garbage collector deletes the claims whose controller (a pod, or a
        StatefulSet under ``whenDeleted: Delete``) is gone; PVC protection holds
        those a scheduled pod still uses."""
        for pvc in list(self.pvcs.values()):
            if any(r.controller and r.uid == uid for r in pvc.owner_references):
                self.delete_pvc(pvc.key)

    # ------------------------------------------------------------------ Watcher
    def on_node_add(self, node: Node) -> None:
        pass

    def on_node_update(self, old: Node, new: Node) -> None:
        pass

    def on_node_delete(self, node: Node) -> None:
        pass

    def on_pod_add(self, pod: Pod) -> None:
        if pod.spec.volumes:
            self.pod_added(pod)

    def on_pod_update(self, old: Pod, new: Pod) -> None:
        if new.phase != old.phase and new.phase in (SUCCEEDED, FAILED) and new.spec.volumes:
            self.pod_released()

    def on_pod_delete(self, pod: Pod) -> None:
        if pod.spec.volumes:
            self.pod_deleted(pod)


def _terms_selector(terms: tuple[TopologySelectorTerm, ...]) -> NodeSelector | None:
    """allowedTopologies as a node selector (each term's keys In their values)."""
    out = tuple(
        NodeSelectorTerm(
            match_expressions=tuple(
                NodeSelectorRequirement(r.key, "In", r.values) for r in t.match_label_expressions
            )
        )
        for t in terms
        if t.match_label_expressions
    )
    return NodeSelector(out) if out else None
