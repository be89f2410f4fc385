"""Server-side tables (`Accept: ...;as=Table;v=v1;g=meta.k8s.io`), as `kubectl get` asks.

Upstream's printer columns for pods, nodes, namespaces, leases and PriorityClasses,
Name/Age for the others (ages by the double's clock, duration.HumanDuration). Rows
carry PartialObjectMetadata, or the whole object with `includeObject=Object`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubesched.live.apiserver_double.objects import parse_time

Obj = dict[str, Any]
NONE = "<none>"


def human_duration(seconds: float) -> str:
    """k8s.io/apimachinery/pkg/util/duration.HumanDuration."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        rest = s % 60
        return f"{minutes}m" if rest == 0 else f"{minutes}m{rest}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h" if rest == 0 else f"{hours}h{rest}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d" if rest == 0 else f"{hours // 24}d{rest}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if days == 0 else f"{hours // 24 // 365}y{days}d"
    return f"{hours // 24 // 365}y"


def _col(name: str, kind: str = "string", priority: int = 0, fmt: str = "") -> Obj:
    return {"name": name, "type": kind, "format": fmt, "description": "", "priority": priority}


NAME = _col("Name", fmt="name")
AGE = _col("Age", "string")


def _pod_status(pod: Obj) -> str:
    status = pod.get("status") or {}
    reason = status.get("reason") or status.get("phase") or ""
    if (pod.get("spec") or {}).get("schedulingGates"):
        reason = "SchedulingGated"
    for cs in status.get("containerStatuses") or []:
        state = cs.get("state") or {}
        if state.get("waiting", {}).get("reason"):
            reason = state["waiting"]["reason"]
        elif state.get("terminated", {}).get("reason"):
            reason = state["terminated"]["reason"]
    if (pod.get("metadata") or {}).get("deletionTimestamp") and status.get("reason") != "NodeLost":
        reason = "Terminating"
    return str(reason)


def _pod_row(pod: Obj, age: str) -> list[Any]:
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    statuses = status.get("containerStatuses") or []
    ready = sum(1 for c in statuses if c.get("ready"))
    restarts = sum(int(c.get("restartCount") or 0) for c in statuses)
    gates = spec.get("readinessGates") or []
    return [
        pod["metadata"]["name"],
        f"{ready}/{len(spec.get('containers') or [])}",
        _pod_status(pod),
        restarts,
        age,
        status.get("podIP") or NONE,
        spec.get("nodeName") or NONE,
        status.get("nominatedNodeName") or NONE,
        f"0/{len(gates)}" if gates else NONE,
    ]


def _node_row(node: Obj, age: str) -> list[Any]:
    status = node.get("status") or {}
    ready = "Unknown"
    for cond in status.get("conditions") or []:
        if cond.get("type") == "Ready":
            ready = "Ready" if cond.get("status") == "True" else "NotReady"
    if (node.get("spec") or {}).get("unschedulable"):
        ready += ",SchedulingDisabled"
    labels = (node.get("metadata") or {}).get("labels") or {}
    roles = sorted(k.split("/", 1)[1] for k in labels if k.startswith("node-role.kubernetes.io/"))
    info = status.get("nodeInfo") or {}
    return [
        node["metadata"]["name"],
        ready,
        ",".join(roles) or NONE,
        age,
        info.get("kubeletVersion") or "",
    ]


TableSpec = tuple[list[Obj], Callable[[Obj, str], list[Any]]]

SPECS: dict[str, TableSpec] = {
    "pods": (
        [
            NAME,
            _col("Ready"),
            _col("Status"),
            _col("Restarts", "string"),
            AGE,
            _col("IP", priority=1),
            _col("Node", priority=1),
            _col("Nominated Node", priority=1),
            _col("Readiness Gates", priority=1),
        ],
        _pod_row,
    ),
    "nodes": ([NAME, _col("Status"), _col("Roles"), AGE, _col("Version")], _node_row),
    "namespaces": (
        [NAME, _col("Status"), AGE],
        lambda o, age: [o["metadata"]["name"], (o.get("status") or {}).get("phase", ""), age],
    ),
    "leases": (
        [NAME, _col("Holder"), AGE],
        lambda o, age: [
            o["metadata"]["name"],
            (o.get("spec") or {}).get("holderIdentity") or "",
            age,
        ],
    ),
    "priorityclasses": (
        [
            NAME,
            _col("Value", "integer"),
            _col("Global-Default", "boolean"),
            AGE,
            _col("PreemptionPolicy"),
        ],
        lambda o, age: [
            o["metadata"]["name"],
            o.get("value", 0),
            bool(o.get("globalDefault")),
            age,
            o.get("preemptionPolicy") or "",
        ],
    ),
}


def wants_table(accept: str | None) -> bool:
    return bool(accept) and "as=Table" in str(accept)


def to_table(store: str, items: list[Obj], list_meta: Obj, now: float, include: str) -> Obj:
    """A meta.k8s.io/v1 Table of `items` (objects with kind/apiVersion)."""
    columns, row_fn = SPECS.get(store, ([NAME, AGE], lambda o, age: [o["metadata"]["name"], age]))
    rows = []
    for obj in items:
        created = (obj.get("metadata") or {}).get("creationTimestamp")
        age = human_duration(now - parse_time(created)) if created else "<unknown>"
        if include == "Object":
            row_object: Obj = obj
        elif include == "None":
            row_object = {}
        else:
            row_object = {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": obj.get("metadata") or {},
            }
        rows.append({"cells": row_fn(obj, age), "object": row_object})
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_meta,
        "columnDefinitions": columns,
        "rows": rows,
    }
