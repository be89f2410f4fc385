"""Field-level conversion of Kubernetes JSON (as parsed from YAML/JSON) into typed
objects (``api.types``, ``api.storage``, ``api.workloads``): one module per kind
(``pod``, ``node``, ``policy``, ``meta``, ``storage``, ``workloads`` and ``batch``
sharing ``templates``) and the shared pieces (``selectors``, ``scheduling``,
``values``).

:func:`kubesched.api.load.load_objects` calls it one document at a time. Each
``convert_*`` reads only the fields scheduling needs (``api.reader``), ignores
unknown fields, applies the API server's *defaulting* that changes what the
scheduler sees (container requests default to limits, pod-level requests,
host-network ports, the namespace name label) and its *validation* where upstream
would reject the object, with upstream's wording. Every problem raises
:class:`InputError` with ``field`` set to the JSON path; the caller adds ``source``
and ``obj``. ``null`` is absent everywhere, as in Go's JSON decoding. RFC 3339
timestamps become Unix-epoch nanoseconds (the simulator rebases them).
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
