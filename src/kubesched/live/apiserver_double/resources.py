"""The resources the double serves, with the discovery facts upstream publishes.

`Resource.store` names the storage shared by several API views: core v1 events
and events.k8s.io/v1 events are one store (kept in core v1 form, as upstream
stores them), converted at the edge.
"""

from __future__ import annotations

from dataclasses import dataclass, field

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


@dataclass(frozen=True)
class Subresource:
    name: str
    kind: str
    verbs: tuple[str, ...]
    group: str = ""
    version: str = "v1"


@dataclass(frozen=True)
class Resource:
    """One served resource of one group version."""

    group: str
    version: str
    name: str  # plural, e.g. "pods"
    singular: str
    kind: str
    namespaced: bool
    store: str
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    subresources: tuple[Subresource, ...] = field(default=())

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def list_kind(self) -> str:
        return self.kind + "List"

    def subresource(self, name: str) -> Subresource | None:
        for sub in self.subresources:
            if sub.name == name:
                return sub
        return None


NAMESPACES = Resource(
    "",
    "v1",
    "namespaces",
    "namespace",
    "Namespace",
    False,
    "namespaces",
    ("ns",),
    verbs=("create", "delete", "get", "list", "patch", "update", "watch"),
    subresources=(
        Subresource("status", "Namespace", ("get", "patch", "update")),
        Subresource("finalize", "Namespace", ("update",)),
    ),
)
NODES = Resource(
    "",
    "v1",
    "nodes",
    "node",
    "Node",
    False,
    "nodes",
    ("no",),
    subresources=(Subresource("status", "Node", ("get", "patch", "update")),),
)
PODS = Resource(
    "",
    "v1",
    "pods",
    "pod",
    "Pod",
    True,
    "pods",
    ("po",),
    ("all",),
    subresources=(
        Subresource("binding", "Binding", ("create",)),
        Subresource("eviction", "Eviction", ("create",), "policy", "v1"),
        Subresource("status", "Pod", ("get", "patch", "update")),
    ),
)
BINDINGS = Resource("", "v1", "bindings", "binding", "Binding", True, "bindings", verbs=("create",))
CORE_EVENTS = Resource("", "v1", "events", "event", "Event", True, "events", ("ev",))
EVENTS = Resource("events.k8s.io", "v1", "events", "event", "Event", True, "events", ("ev",))
LEASES = Resource("coordination.k8s.io", "v1", "leases", "lease", "Lease", True, "leases")
PDBS = Resource(
    "policy",
    "v1",
    "poddisruptionbudgets",
    "poddisruptionbudget",
    "PodDisruptionBudget",
    True,
    "poddisruptionbudgets",
    ("pdb",),
    subresources=(
        Subresource("status", "PodDisruptionBudget", ("get", "patch", "update"), "policy"),
    ),
)
PRIORITY_CLASSES = Resource(
    "scheduling.k8s.io",
    "v1",
    "priorityclasses",
    "priorityclass",
    "PriorityClass",
    False,
    "priorityclasses",
    ("pc",),
)


def _simple(
    group: str,
    name: str,
    kind: str,
    namespaced: bool,
    short: tuple[str, ...] = (),
    status: bool = False,
    categories: tuple[str, ...] = (),
) -> Resource:
    """A resource with the standard verbs (and a status subresource when asked)."""
    subs = (Subresource("status", kind, ("get", "patch", "update"), group),) if status else ()
    singular = kind.lower()
    return Resource(
        group, "v1", name, singular, kind, namespaced, name, short, categories, subresources=subs
    )


# Objects a scheduler's informers also list (volumes, workloads for spreading).
SERVICES = _simple("", "services", "Service", True, ("svc",), status=True, categories=("all",))
REPLICATION_CONTROLLERS = _simple(
    "",
    "replicationcontrollers",
    "ReplicationController",
    True,
    ("rc",),
    status=True,
    categories=("all",),
)
PVS = _simple("", "persistentvolumes", "PersistentVolume", False, ("pv",), status=True)
PVCS = _simple("", "persistentvolumeclaims", "PersistentVolumeClaim", True, ("pvc",), status=True)
REPLICA_SETS = _simple(
    "apps", "replicasets", "ReplicaSet", True, ("rs",), status=True, categories=("all",)
)
STATEFUL_SETS = _simple(
    "apps", "statefulsets", "StatefulSet", True, ("sts",), status=True, categories=("all",)
)
DEPLOYMENTS = _simple(
    "apps", "deployments", "Deployment", True, ("deploy",), status=True, categories=("all",)
)
DAEMON_SETS = _simple(
    "apps", "daemonsets", "DaemonSet", True, ("ds",), status=True, categories=("all",)
)
JOBS = _simple("batch", "jobs", "Job", True, status=True, categories=("all",))
CRON_JOBS = _simple("batch", "cronjobs", "CronJob", True, ("cj",), status=True, categories=("all",))
STORAGE_CLASSES = _simple("storage.k8s.io", "storageclasses", "StorageClass", False, ("sc",))
CSI_NODES = _simple("storage.k8s.io", "csinodes", "CSINode", False)
CSI_DRIVERS = _simple("storage.k8s.io", "csidrivers", "CSIDriver", False)
CSI_CAPACITIES = _simple("storage.k8s.io", "csistoragecapacities", "CSIStorageCapacity", True)
VOLUME_ATTACHMENTS = _simple(
    "storage.k8s.io", "volumeattachments", "VolumeAttachment", False, status=True
)

SERVED: tuple[Resource, ...] = (
    NAMESPACES,
    NODES,
    PODS,
    BINDINGS,
    CORE_EVENTS,
    EVENTS,
    LEASES,
    PDBS,
    PRIORITY_CLASSES,
    SERVICES,
    REPLICATION_CONTROLLERS,
    PVS,
    PVCS,
    REPLICA_SETS,
    STATEFUL_SETS,
    DEPLOYMENTS,
    DAEMON_SETS,
    JOBS,
    CRON_JOBS,
    STORAGE_CLASSES,
    CSI_NODES,
    CSI_DRIVERS,
    CSI_CAPACITIES,
    VOLUME_ATTACHMENTS,
)

GROUP_VERSIONS: tuple[tuple[str, str], ...] = (
    ("", "v1"),
    ("apps", "v1"),
    ("batch", "v1"),
    ("coordination.k8s.io", "v1"),
    ("events.k8s.io", "v1"),
    ("policy", "v1"),
    ("scheduling.k8s.io", "v1"),
    ("storage.k8s.io", "v1"),
)


def lookup(group: str, version: str, name: str) -> Resource | None:
    for res in SERVED:
        if res.group == group and res.version == version and res.name == name:
            return res
    return None


def in_group_version(group: str, version: str) -> list[Resource]:
    return [r for r in SERVED if r.group == group and r.version == version]


def store_key(namespace: str, name: str) -> str:
    """The key under the resource prefix, as etcd keys and continue tokens use it."""
    return f"{namespace}/{name}" if namespace else name
