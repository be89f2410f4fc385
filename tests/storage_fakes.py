"""A StorageLister over plain dicts, for plugin and scheduler tests.

``FakeStorage`` answers the volume plugins' lookups and takes the volume
binder's writes (``update_pv`` / ``update_pvc``), recording them; ``react``
lets a test play the PV controller (it is called after each write).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from kubesched.api.storage import CSINode, PersistentVolume, PersistentVolumeClaim, StorageClass
from kubesched.api.volume_helpers import volume_class


class FakeStorage:
    def __init__(
        self,
        pvcs: Iterable[PersistentVolumeClaim] = (),
        pvs: Iterable[PersistentVolume] = (),
        classes: Iterable[StorageClass] = (),
        csi_nodes: Iterable[CSINode] = (),
    ) -> None:
        self.pvcs = {c.key: c for c in pvcs}
        self.pvs = {v.name: v for v in pvs}
        self.classes = {c.name: c for c in classes}
        self.csi_nodes = {c.name: c for c in csi_nodes}
        self.writes: list[tuple[str, str]] = []
        """``("pv", name)`` / ``("pvc", namespace/name)`` per write, in order."""
        self.react: Callable[[FakeStorage], None] | None = None

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

    def update_pv(self, pv: PersistentVolume) -> None:
        if pv.name not in self.pvs:
            raise KeyError(f'persistentvolumes "{pv.name}" not found')
        self.pvs[pv.name] = pv
        self.writes.append(("pv", pv.name))
        if self.react is not None:
            self.react(self)

    def update_pvc(self, pvc: PersistentVolumeClaim) -> None:
        if pvc.key not in self.pvcs:
            raise KeyError(f'persistentvolumeclaims "{pvc.name}" not found')
        self.pvcs[pvc.key] = pvc
        self.writes.append(("pvc", pvc.key))
        if self.react is not None:
            self.react(self)
