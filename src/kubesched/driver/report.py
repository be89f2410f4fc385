"""The SimulationResult document (docs/simulate-interface.md), built from a ``RunRecord``.

``build_result`` turns a finished run's record (and nothing else) into plain data
that renders identically as JSON, YAML or JSON lines.
"""

from __future__ import annotations

from typing import Any

from kubesched.api.types import NANOS, Pod
from kubesched.driver.record import EventRecord, PodLife, RunRecord
from kubesched.driver.storage_report import volume_result

API_VERSION = "kubesched.io/v1alpha1"
KIND = "SimulationResult"


def seconds(t: int | None) -> float | None:
    """Nanoseconds as seconds (a number); None stays None."""
    if t is None:
        return None
    return t / NANOS


def pod_entry(life: PodLife) -> dict[str, Any]:
    p: Pod = life.pod
    return {
        "namespace": p.namespace,
        "name": p.name,
        "uid": p.uid,
        "priority": p.priority,
        "priorityClassName": p.priority_class_name or None,
        "phase": p.phase,
        "nodeName": p.node_name or None,
        "nominatedNodeName": p.nominated_node_name or None,
        "createdAt": seconds(life.created_at),
        "scheduledAt": seconds(life.scheduled_at),
        "startTime": seconds(p.start_time),
        "deletedAt": seconds(life.deleted_at),
        "deletionReason": life.deletion_reason if life.deleted_at is not None else None,
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


def sorted_lives(record: RunRecord) -> list[PodLife]:
    """Every pod's life, by namespace, name and creation time."""
    return sorted(record.lives.values(), key=lambda r: (r.pod.namespace, r.pod.name, r.created_at))


def build_result(
    record: RunRecord,
    *,
    seed: int,
    end_time: int,
    metrics: dict[str, Any],
    explanations: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The document; ``explanations`` (``simulate --explain``) is added last when given."""
    doc = {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "seed": seed,
        "simulatedSeconds": seconds(end_time),
        "pods": [pod_entry(r) for r in sorted_lives(record)],
        "preemptions": [
            {
                "time": seconds(p.time),
                "preemptor": p.preemptor,
                "node": p.node,
                "victims": sorted(p.victims),
                "numPDBViolations": p.num_pdb_violations,
            }
            for p in record.preemptions
        ],
        "events": [event_entry(e) for e in record.events],
        "metrics": metrics,
        **volume_result(record),
    }
    if explanations is not None:
        doc["explanations"] = explanations
    return doc
