"""A fake PV controller and provisioner: what kube-controller-manager's
persistentvolume controller and an external provisioner do for the scheduler's
volume binding, at once, on every write of a PersistentVolume or claim.

- A volume without ``spec.claimRef`` still ``Pending`` becomes ``Available``.
- A volume whose ``spec.claimRef`` names an existing claim (same UID, when the
  reference has one) that is not bound yet binds it (``bindVolumeToClaim`` /
  ``bindClaimToVolume``): the claim gets ``spec.volumeName``, the annotations
  ``pv.kubernetes.io/bind-completed: "yes"`` and (its volumeName was empty)
  ``pv.kubernetes.io/bound-by-controller: "yes"``, ``status.phase: Bound`` and
  the volume's access modes and capacity; the volume gets the claim's UID in its
  claimRef and ``status.phase: Bound``.
- A claim annotated ``volume.kubernetes.io/selected-node``, without a volume,
  whose StorageClass has a provisioner (not ``kubernetes.io/no-provisioner``)
  gets a volume provisioned: ``pvc-<claim uid>``, the claim's request as
  capacity, its access modes, volume mode and class, the class's reclaim
  policy, ``spec.csi`` of the provisioner, annotated
  ``pv.kubernetes.io/provisioned-by``, pre-bound to the claim (so the rule
  above binds them), and with ``provision_node_affinity`` a required node
  affinity on ``kubernetes.io/hostname`` of the selected node.

Off unless ``enabled`` (``ApiServerDouble(volume_controller=True)``); the writes
bypass admission and validation, as the fake kubelet's.
"""

from __future__ import annotations

import copy
from typing import Any, Final

from kubesched.live.apiserver_double.registry import Registry
from kubesched.live.apiserver_double.resources import PVCS, PVS, STORAGE_CLASSES, store_key
from kubesched.live.apiserver_double.store import StoreEvent

Obj = dict[str, Any]

ANN_BIND_COMPLETED: Final = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER: Final = "pv.kubernetes.io/bound-by-controller"
ANN_SELECTED_NODE: Final = "volume.kubernetes.io/selected-node"
ANN_PROVISIONED_BY: Final = "pv.kubernetes.io/provisioned-by"
NO_PROVISIONER: Final = "kubernetes.io/no-provisioner"
HOSTNAME: Final = "kubernetes.io/hostname"


class FakeVolumeController:
    """Binds pre-bound volumes and provisions selected claims; see the module docstring."""

    def __init__(
        self, registry: Registry, enabled: bool = False, provision_node_affinity: bool = False
    ) -> None:
        self.registry = registry
        self.enabled = enabled
        self.provision_node_affinity = provision_node_affinity
        registry.store.listeners.append(self._on_event)

    def _on_event(self, event: StoreEvent) -> None:
        if not self.enabled or event.type == "DELETED":
            return
        if event.store == PVS.store:
            self._sync_volume(event.key, event.obj)
        elif event.store == PVCS.store:
            self._sync_claim(event.key, event.obj)

    # -- the PV controller -----------------------------------------------------

    def _sync_volume(self, key: str, pv: Obj) -> None:
        store = self.registry.store
        ref = (pv.get("spec") or {}).get("claimRef")
        phase = (pv.get("status") or {}).get("phase")
        if not ref:
            if phase in (None, "Pending"):
                store.put(PVS.store, key, _with_phase(pv, "Available"))
            return
        claim_key = store_key(ref.get("namespace") or "", ref.get("name") or "")
        claim = store.get(PVCS.store, claim_key)
        if claim is None or (ref.get("uid") and ref["uid"] != claim["metadata"].get("uid")):
            return
        name = pv["metadata"]["name"]
        spec = claim.get("spec") or {}
        annotations = claim["metadata"].get("annotations") or {}
        if spec.get("volumeName") not in (None, "", name):
            return  # the claim is bound elsewhere
        if spec.get("volumeName") != name or ANN_BIND_COMPLETED not in annotations:
            store.put(PVCS.store, claim_key, _bound_claim(claim, pv))
        if phase != "Bound" or not ref.get("uid"):
            new = _with_phase(pv, "Bound")
            new["spec"]["claimRef"]["uid"] = claim["metadata"].get("uid")
            store.put(PVS.store, key, new)

    # -- the provisioner -------------------------------------------------------

    def _sync_claim(self, key: str, claim: Obj) -> None:
        meta = claim["metadata"]
        spec = claim.get("spec") or {}
        node = (meta.get("annotations") or {}).get(ANN_SELECTED_NODE)
        if not node or spec.get("volumeName"):
            return
        name = f"pvc-{meta.get('uid')}"
        store = self.registry.store
        if store.get(PVS.store, name) is not None:
            return
        sc = store.get(STORAGE_CLASSES.store, spec.get("storageClassName") or "")
        provisioner = (sc or {}).get("provisioner")
        if sc is None or not provisioner or provisioner == NO_PROVISIONER:
            return
        pv_spec: Obj = {
            "capacity": {
                "storage": ((spec.get("resources") or {}).get("requests") or {}).get("storage", "0")
            },
            "accessModes": list(spec.get("accessModes") or ["ReadWriteOnce"]),
            "volumeMode": spec.get("volumeMode") or "Filesystem",
            "storageClassName": sc["metadata"]["name"],
            "persistentVolumeReclaimPolicy": sc.get("reclaimPolicy") or "Delete",
            "csi": {"driver": provisioner, "volumeHandle": name},
            "claimRef": {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "namespace": meta.get("namespace"),
                "name": meta["name"],
                "uid": meta.get("uid"),
            },
        }
        if self.provision_node_affinity:
            term = {"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": [node]}]}
            pv_spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [term]}}
        self.registry.create(
            PVS,
            "",
            {
                "apiVersion": "v1",
                "kind": "PersistentVolume",
                "metadata": {"name": name, "annotations": {ANN_PROVISIONED_BY: provisioner}},
                "spec": pv_spec,
            },
        )


def _with_phase(obj: Obj, phase: str) -> Obj:
    new = copy.deepcopy(obj)
    new.setdefault("status", {})["phase"] = phase
    return new


def _bound_claim(claim: Obj, pv: Obj) -> Obj:
    new = copy.deepcopy(claim)
    spec = new.setdefault("spec", {})
    annotations = new["metadata"].setdefault("annotations", {})
    if not spec.get("volumeName"):
        annotations[ANN_BOUND_BY_CONTROLLER] = "yes"
        spec["volumeName"] = pv["metadata"]["name"]
    annotations[ANN_BIND_COMPLETED] = "yes"
    pv_spec = pv.get("spec") or {}
    status = new.setdefault("status", {})
    status["phase"] = "Bound"
    status["accessModes"] = list(pv_spec.get("accessModes") or [])
    status["capacity"] = dict(pv_spec.get("capacity") or {})
    return new
