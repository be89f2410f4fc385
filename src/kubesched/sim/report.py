"""The SimulationResult document of ``kubesched simulate`` (simulate-interface.md).

``build_result`` turns a finished run into plain data (dicts, lists, numbers,
strings) that renders identically as JSON, YAML or JSON lines.
"""

from __future__ import annotations

from typing import Any

from kubesched.api.types import NANOS, Pod
from kubesched.sim.cluster import Cluster, EventRecord, PodRecord
from kubesched.sim.storage_report import volume_result

API_VERSION = "kubesched.io/v1alpha1"
KIND = "SimulationResult"


def seconds(t: int | None) -> float | None:
    """Nanoseconds as seconds (a number); None stays None."""
    if t is None:
        return None
    return t / NANOS


def pod_entry(rec: PodRecord) -> dict[str, Any]:
    p: Pod = rec.pod
    return {
        "namespace": p.namespace,
        "name": p.name,
        "uid": p.uid,
        "priority": p.priority,
        "priorityClassName": p.priority_class_name or None,
        "phase": p.phase,
        "nodeName": p.node_name or None,
        "nominatedNodeName": p.nominated_node_name or None,
        "createdAt": seconds(rec.created_at),
        "scheduledAt": seconds(rec.scheduled_at),
        "startTime": seconds(p.start_time),
        "deletedAt": seconds(rec.deleted_at),
        "deletionReason": rec.deletion_reason if rec.deleted_at is not None else None,
    }


def event_entry(e: EventRecord) -> dict[str, Any]:
    """One event of the result; ``kind`` is added for objects other than pods (an
    extension: ``ReplicaSet`` for the controller's ``FailedCreate``)."""
    entry: dict[str, Any] = {
        "time": seconds(e.time),
        "type": e.type,
        "reason": e.reason,
        "object": e.object,
        "related": e.related,
        "message": e.message,
    }
    if e.kind != "Pod":
        entry["kind"] = e.kind
    return entry


def sorted_records(cluster: Cluster) -> list[PodRecord]:
    return sorted(
        cluster.records.values(), key=lambda r: (r.pod.namespace, r.pod.name, r.created_at)
    )


def build_result(
    cluster: Cluster, *, seed: int, end_time: int, metrics: dict[str, Any]
) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "seed": seed,
        "simulatedSeconds": seconds(end_time),
        "pods": [pod_entry(r) for r in sorted_records(cluster)],
        "preemptions": [
            {
                "time": seconds(p.time),
                "preemptor": p.preemptor,
                "node": p.node,
                "victims": sorted(p.victims),
                "numPDBViolations": p.num_pdb_violations,
            }
            for p in cluster.preemptions
        ],
        "events": [event_entry(e) for e in cluster.events],
        "metrics": metrics,
        **volume_result(cluster.volumes),
    }
