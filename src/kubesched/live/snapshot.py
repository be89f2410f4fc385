"""A live cluster read into one ``kind: List`` that ``kubesched simulate -f`` takes.

``take(client)`` lists every kind the simulation models (``SNAPSHOT_KINDS``, the
kinds ``kubesched.api.load`` acts on, in the order an administrator would create
them) across all namespaces and returns them as one List, like ``kubectl get
... -A -o yaml`` prints it, with two differences: each item carries its
``apiVersion`` and ``kind`` (a list response leaves them out), and
``metadata.managedFields`` is dropped (server bookkeeping that nothing reads).
Everything else stays as the server sent it: uids, ownerReferences and
creationTimestamps (which the simulation uses to adopt pods and to order
creations), the pods' ``spec.nodeName`` and ``status`` (bound, running,
finished), the nodes' ``status.allocatable``.

A collection the server does not serve (404: an older cluster without a group)
is left out and named in ``Snapshot.missing``; any other failure (403 Forbidden,
an unreachable server) raises ``ClusterError``: a partial snapshot would
simulate a different cluster. The lists are read one after the other, so the
snapshot is not one atomic read: each list's resourceVersion is kept in
``Snapshot.versions`` (and in the YAML's header comment).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from kubesched.live.client import ClusterError, KubeClient, Raw, Resource

SNAPSHOT_KINDS: Final[tuple[Resource, ...]] = (
    Resource("", "v1", "namespaces", "Namespace"),
    Resource("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass"),
    Resource("storage.k8s.io", "v1", "storageclasses", "StorageClass"),
    Resource("storage.k8s.io", "v1", "csinodes", "CSINode"),
    Resource("", "v1", "persistentvolumes", "PersistentVolume"),
    Resource("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim"),
    Resource("", "v1", "nodes", "Node"),
    Resource("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget"),
    Resource("apps", "v1", "deployments", "Deployment"),
    Resource("apps", "v1", "replicasets", "ReplicaSet"),
    Resource("apps", "v1", "statefulsets", "StatefulSet"),
    Resource("apps", "v1", "daemonsets", "DaemonSet"),
    Resource("batch", "v1", "jobs", "Job"),
    Resource("batch", "v1", "cronjobs", "CronJob"),
    Resource("", "v1", "pods", "Pod"),
)
"""What a snapshot reads, in output order."""

DROPPED_METADATA: Final = ("managedFields",)


@dataclass(slots=True)
class Snapshot:
    """The objects read (``items``, in ``SNAPSHOT_KINDS`` order, each collection in
    the server's order), the resourceVersion of each list read (plural -> rv), the
    collections the server does not serve, and where they came from."""

    server: str
    items: list[Raw] = field(default_factory=list)
    versions: dict[str, str] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)

    def as_list(self) -> dict[str, Any]:
        """The ``kind: List`` document (``simulate -f`` input)."""
        return {"apiVersion": "v1", "kind": "List", "metadata": {}, "items": self.items}

    def header(self) -> str:
        """A YAML comment saying what was read from where (one line per fact)."""
        counts: dict[str, int] = {}
        for item in self.items:
            counts[item["kind"]] = counts.get(item["kind"], 0) + 1
        lines = [
            f"# kubesched snapshot of {self.server}: {len(self.items)} objects",
            "# " + (", ".join(f"{n} {k}" for k, n in counts.items()) or "no objects"),
            "# list resourceVersions: " + ", ".join(f"{p}={rv}" for p, rv in self.versions.items()),
        ]
        if self.missing:
            lines.append("# not served by this cluster: " + ", ".join(self.missing))
        return "\n".join(lines) + "\n"


def clean(item: Raw) -> Raw:
    """``item`` without server bookkeeping (``DROPPED_METADATA``); a new dict."""
    meta = item.get("metadata")
    if not isinstance(meta, dict) or not any(k in meta for k in DROPPED_METADATA):
        return item
    return {
        **item,
        "metadata": {k: v for k, v in meta.items() if k not in DROPPED_METADATA},
    }


def take(client: KubeClient, kinds: tuple[Resource, ...] = SNAPSHOT_KINDS) -> Snapshot:
    """Read ``kinds`` from the cluster (see the module docstring)."""
    snap = Snapshot(server=client.host)
    for resource in kinds:
        try:
            items, version = client.list(resource)
        except ClusterError as err:
            if err.status == 404:
                snap.missing.append(f"{resource.plural}.{resource.group or 'core'}")
                continue
            raise
        snap.items.extend(clean(i) for i in items)
        snap.versions[resource.plural] = version
    return snap
