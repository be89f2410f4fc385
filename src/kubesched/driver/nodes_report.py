"""The per-node view of a run's end (``simulate --show nodes``): each node's
allocatable against what its pods request, and its pods.

Amounts are canonical Kubernetes quantities (``cpu`` like ``3500m``, byte
resources like ``8Gi``, counts as numbers in strings); ``requested`` sums the
effective requests (``api.resources.pod_requests``: containers, init and
sidecar containers, pod-level resources, overhead) of the pods bound to the
node, not deleted and not terminal (Succeeded or Failed) at the end, and
counts them under ``pods``.
"""

from __future__ import annotations

from typing import Any

from kubesched.api.quantity import format_bytes, format_milli_cpu
from kubesched.api.resources import pod_requests
from kubesched.api.types import CPU, PODS
from kubesched.driver.record import RunRecord

_BYTES = ("memory", "ephemeral-storage")
_TERMINAL = ("Succeeded", "Failed")
"""Phases whose pods hold nothing on their node (the scheduler's accounting)."""


def amount(resource: str, value: int) -> str:
    """A scheduler amount as a canonical quantity string."""
    if resource == CPU:
        return format_milli_cpu(value)
    if resource in _BYTES or resource.startswith("hugepages-"):
        return format_bytes(value)
    return str(value)


def node_entries(record: RunRecord) -> list[dict[str, Any]]:
    """The nodes that exist at the end, by name: allocatable, requested, pods."""
    requested: dict[str, dict[str, int]] = {}
    pods: dict[str, list[str]] = {}
    for life in record.lives.values():
        p = life.pod
        if not p.node_name or life.deleted_at is not None or p.phase in _TERMINAL:
            continue
        total = requested.setdefault(p.node_name, {})
        for k, v in pod_requests(p.spec).items():
            total[k] = total.get(k, 0) + v
        total[PODS] = total.get(PODS, 0) + 1
        pods.setdefault(p.node_name, []).append(f"{p.namespace}/{p.name}")
    out = []
    for name in sorted(record.nodes):
        node = record.nodes[name]
        used = requested.get(name, {})
        out.append(
            {
                "name": name,
                "unschedulable": node.unschedulable,
                "allocatable": {k: amount(k, v) for k, v in sorted(node.allocatable.items())},
                "requested": {k: amount(k, v) for k, v in sorted(used.items())},
                "pods": sorted(pods.get(name, [])),
            }
        )
    return out


def add_requests(doc: dict[str, Any], record: RunRecord) -> None:
    """Give each of ``doc``'s pods its effective ``requests`` (canonical
    quantities; with ``--show nodes``, for the report's allocation plot)."""
    lives = record.lives
    for entry in doc["pods"]:
        life = lives.get(entry["uid"])
        if life is not None:
            reqs = pod_requests(life.pod.spec)
            entry["requests"] = {k: amount(k, v) for k, v in sorted(reqs.items())}
