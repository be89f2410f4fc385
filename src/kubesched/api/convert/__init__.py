"""Field-level conversion of Kubernetes JSON (as parsed from YAML/JSON) into typed
objects (``api.types``, ``api.storage``, ``api.workloads``), one module per kind:

- ``pod`` (Pod, the pod spec), ``node`` (Node), ``policy`` (PriorityClass,
  PodDisruptionBudget), ``meta`` (metadata, Namespace), ``storage``
  (PersistentVolumeClaim, PersistentVolume, StorageClass, CSINode, pod volumes),
  ``workloads`` and ``batch`` (Deployment, ReplicaSet, StatefulSet, DaemonSet,
  Job, CronJob, sharing ``templates``);
- the pieces the kinds share: ``selectors`` (label/node selectors, affinity),
  ``scheduling`` (taints, tolerations, topology spread), ``values`` (times,
  resource lists, IntOrString).

Called by :func:`kubesched.api.load.load_objects`, one document at a time. Each
``convert_*`` function reads only the fields scheduling needs with the reader
kit (``kubesched.api.reader``), ignores unknown fields, applies the API server's
*defaulting* that changes what the scheduler sees (container requests default to
limits, pod-level requests, host-network ports, the namespace name label) and
its *validation* where upstream would reject the object (enums, ranges, required
values), with upstream's wording.

Every problem raises :class:`InputError` with ``field`` set to the JSON path
(``spec.containers[0].resources.requests.cpu``); the caller adds ``source`` and
``obj``. ``null`` is treated as absent everywhere, as Go's JSON decoding does.

Timestamps (RFC 3339) become integer nanoseconds since the Unix epoch and are
stored as-is in ``Time`` fields; the simulator rebases them onto its clock.

This package's own names are what the loader calls, and what the simulator
imports from it: ``Workload`` (defined by ``kubesched.api.workloads``) and the DNS
name checks.
"""

from kubesched.api.convert.meta import (
    check_dns_label,
    check_dns_subdomain,
    convert_namespace,
    object_name,
)
from kubesched.api.convert.node import convert_node
from kubesched.api.convert.pod import convert_pod
from kubesched.api.convert.policy import convert_pdb, convert_priority_class
from kubesched.api.messages import describe, type_name
from kubesched.api.workloads import Workload

__all__ = [
    "Workload",
    "check_dns_label",
    "check_dns_subdomain",
    "convert_namespace",
    "convert_node",
    "convert_pdb",
    "convert_pod",
    "convert_priority_class",
    "describe",
    "object_name",
    "type_name",
]
