"""The storage part of the SimulationResult (an extension of simulate-interface.md).

``volume_result`` gives the ``persistentVolumeClaims`` and ``persistentVolumes``
existing at the end of the run (sorted by namespace and name), or nothing when the
run had no storage object, so that other results keep their exact shape.
"""

from __future__ import annotations

from typing import Any

from kubesched.api.storage import (
    ANN_DYNAMICALLY_PROVISIONED,
    ANN_SELECTED_NODE,
    PersistentVolume,
    PersistentVolumeClaim,
)
from kubesched.api.types import NodeSelector
from kubesched.driver.record import RunRecord


def _affinity(sel: NodeSelector | None) -> dict[str, Any] | None:
    if sel is None:
        return None
    return {
        "required": {
            "nodeSelectorTerms": [
                {
                    "matchExpressions": [
                        {"key": r.key, "operator": r.operator, "values": list(r.values)}
                        for r in t.match_expressions
                    ]
                }
                for t in sel.terms
            ]
        }
    }


def claim_entry(c: PersistentVolumeClaim) -> dict[str, Any]:
    return {
        "namespace": c.namespace,
        "name": c.name,
        "phase": c.phase,
        "storageClassName": c.storage_class_name,
        "volumeName": c.volume_name or None,
        "selectedNode": c.annotations.get(ANN_SELECTED_NODE),
        "terminating": c.deletion_timestamp is not None,
    }


def volume_entry(v: PersistentVolume) -> dict[str, Any]:
    return {
        "name": v.name,
        "phase": v.phase,
        "storageClassName": v.storage_class_name or None,
        "claim": v.claim_ref.key if v.claim_ref is not None else None,
        "provisionedBy": v.annotations.get(ANN_DYNAMICALLY_PROVISIONED),
        "nodeAffinity": _affinity(v.node_affinity),
    }


def volume_result(record: RunRecord) -> dict[str, Any]:
    if not record.storage_used:
        return {}
    return {
        "persistentVolumeClaims": [
            claim_entry(c) for c in sorted(record.pvcs.values(), key=lambda c: c.key)
        ],
        "persistentVolumes": [
            volume_entry(v) for v in sorted(record.pvs.values(), key=lambda v: v.name)
        ],
    }
