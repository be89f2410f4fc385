"""Object shapes: timestamps, defaults, the events.k8s.io view, serialization quirks.

What the real server adds to what a client sends: pod spec defaults,
status.phase Pending and qosClass, generation 1 for pods and PDBs, namespace
finalizers and name label, node allocatable from capacity. Conditions always carry
`lastProbeTime`/`lastTransitionTime` (null for a zero metav1.Time), core v1 events
their source, timestamps and reporting fields.
"""

from __future__ import annotations

import copy
import datetime as dt
from typing import Any

Obj = dict[str, Any]


def rfc3339(t: float) -> str:
    """metav1.Time: whole seconds, UTC."""
    return dt.datetime.fromtimestamp(int(t), tz=dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def rfc3339_micro(t: float) -> str:
    """metav1.MicroTime."""
    stamp = dt.datetime.fromtimestamp(t, tz=dt.UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond:06d}Z"


def parse_time(value: str) -> float:
    """RFC 3339 (with or without fraction) -> epoch seconds."""
    text = value.replace("Z", "+00:00")
    return dt.datetime.fromisoformat(text).timestamp()


RFC3339_MICRO_LAYOUT = "2006-01-02T15:04:05.000000Z07:00"
_LAYOUT_ELEMS: tuple[tuple[str, str], ...] = (
    ("2006", "digits4"),
    ("-", "lit"),
    ("01", "digits2"),
    ("-", "lit"),
    ("02", "digits2"),
    ("T", "lit"),
    ("15", "digits2"),
    (":", "lit"),
    ("04", "digits2"),
    (":", "lit"),
    ("05", "digits2"),
    (".000000", "frac6"),
    ("Z07:00", "zone"),
)


def _go_q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def micro_time_error(value: str) -> str | None:
    """Go's time.Parse(RFC3339Micro) error text for `value`, or None when it parses."""
    rest = value
    head = f"parsing time {_go_q(value)} as {_go_q(RFC3339_MICRO_LAYOUT)}"
    for elem, how in _LAYOUT_ELEMS:
        ok = False
        if how == "lit":
            ok = rest.startswith(elem)
            used = len(elem)
        elif how in ("digits4", "digits2"):
            n = 4 if how == "digits4" else 2
            ok = len(rest) >= n and rest[:n].isdigit()
            used = n
        elif how == "frac6":
            ok = len(rest) >= 7 and rest[0] == "." and rest[1:7].isdigit()
            used = 7
        elif rest.startswith("Z"):
            ok, used = True, 1
        else:
            ok = (
                len(rest) >= 6
                and rest[0] in "+-"
                and rest[1:3].isdigit()
                and rest[3] == ":"
                and rest[4:6].isdigit()
            )
            used = 6
        if not ok:
            return f"{head}: cannot parse {_go_q(rest)} as {_go_q(elem)}"
        rest = rest[used:]
    if rest:
        return f"parsing time {_go_q(value)}: extra text: {_go_q(rest)}"
    month, day = int(value[5:7]), int(value[8:10])
    if not 1 <= month <= 12:
        return f"parsing time {_go_q(value)}: month out of range"
    if not 1 <= day <= 31:
        return f"parsing time {_go_q(value)}: day out of range"
    return None


# -- typed views ----------------------------------------------------------------


def with_type(obj: Obj, kind: str, api_version: str) -> Obj:
    """`kind` and `apiVersion` first, as the server writes single objects and watch events."""
    out: Obj = {"kind": kind, "apiVersion": api_version}
    out.update({k: v for k, v in obj.items() if k not in ("kind", "apiVersion")})
    return out


def without_type(obj: Obj) -> Obj:
    return {k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}


def _fill_condition_times(conditions: Any) -> None:
    if isinstance(conditions, list):
        for cond in conditions:
            if isinstance(cond, dict):
                cond.setdefault("lastProbeTime", None)
                cond.setdefault("lastTransitionTime", None)


def normalize(store: str, obj: Obj) -> Obj:
    """Serialization quirks the real server shows on every write."""
    if store == "pods":
        _fill_condition_times((obj.get("status") or {}).get("conditions"))
        for cond in (obj.get("status") or {}).get("conditions") or []:
            if isinstance(cond, dict):
                for key in ("lastProbeTime", "lastTransitionTime"):
                    cond[key] = cond.pop(key)
                for key in ("reason", "message"):
                    if key in cond:
                        cond[key] = cond.pop(key)
    elif store == "nodes":
        for cond in (obj.get("status") or {}).get("conditions") or []:
            if isinstance(cond, dict):
                cond.setdefault("lastHeartbeatTime", None)
                cond.setdefault("lastTransitionTime", None)
    elif store == "events":
        for key in ("source",):
            obj.setdefault(key, {})
        for key in ("firstTimestamp", "lastTimestamp", "eventTime"):
            obj.setdefault(key, None)
        obj.setdefault("reportingComponent", "")
        obj.setdefault("reportingInstance", "")
        if obj.get("count") == 0:
            del obj["count"]
    return obj


# -- events.k8s.io/v1 <-> core v1 ----------------------------------------------

_V1_TO_CORE = (
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("reportingController", "reportingComponent"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
)

# The events.k8s.io/v1 field order the server writes.
_V1_ORDER = (
    "metadata",
    "eventTime",
    "series",
    "reportingController",
    "reportingInstance",
    "action",
    "reason",
    "regarding",
    "related",
    "note",
    "type",
    "deprecatedSource",
    "deprecatedFirstTimestamp",
    "deprecatedLastTimestamp",
    "deprecatedCount",
)


def event_from_v1(obj: Obj) -> Obj:
    """events.k8s.io/v1 Event -> core v1 (storage) form."""
    out = {k: copy.deepcopy(v) for k, v in obj.items() if k not in ("kind", "apiVersion")}
    for new, old in _V1_TO_CORE:
        if new in out:
            out[old] = out.pop(new)
    return out


def event_to_v1(obj: Obj) -> Obj:
    """core v1 (storage) form -> events.k8s.io/v1 Event fields, in the server's order."""
    renamed = {old: new for new, old in _V1_TO_CORE}
    tmp: Obj = {}
    for key, value in obj.items():
        if key in ("kind", "apiVersion"):
            continue
        tmp[renamed.get(key, key)] = copy.deepcopy(value)
    tmp.setdefault("deprecatedSource", {})
    tmp.setdefault("deprecatedFirstTimestamp", None)
    tmp.setdefault("deprecatedLastTimestamp", None)
    if tmp.get("deprecatedCount") == 0:
        del tmp["deprecatedCount"]
    if tmp.get("reportingController") == "":
        del tmp["reportingController"]
    if tmp.get("reportingInstance") == "":
        del tmp["reportingInstance"]
    out = {k: tmp[k] for k in _V1_ORDER if k in tmp}
    out.update({k: v for k, v in tmp.items() if k not in out})
    return out


# -- defaults ---------------------------------------------------------------------


def _image_pull_policy(image: str) -> str:
    if "@" in image:
        return "IfNotPresent"
    last = image.rsplit("/", 1)[-1]
    tag = last.split(":", 1)[1] if ":" in last else ""
    return "Always" if tag in ("", "latest") else "IfNotPresent"


def _default_container(container: Obj) -> None:
    resources = container.setdefault("resources", {})
    limits = resources.get("limits") or {}
    if limits:
        requests = resources.setdefault("requests", {})
        for name, value in limits.items():
            requests.setdefault(name, value)
    for port in container.get("ports") or []:
        port.setdefault("protocol", "TCP")
    container.setdefault("terminationMessagePath", "/dev/termination-log")
    container.setdefault("terminationMessagePolicy", "File")
    container.setdefault("imagePullPolicy", _image_pull_policy(str(container.get("image", ""))))


def qos_class(spec: Obj) -> str:
    """v1 QoS: BestEffort, Guaranteed or Burstable (pkg/apis/core/helper/qos)."""
    containers = list(spec.get("containers") or []) + list(spec.get("initContainers") or [])
    any_set = False
    guaranteed = True
    for container in containers:
        res = container.get("resources") or {}
        requests, limits = res.get("requests") or {}, res.get("limits") or {}
        for name in ("cpu", "memory"):
            if name in requests or name in limits:
                any_set = True
            if name not in limits or requests.get(name, limits.get(name)) != limits.get(name):
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def default_pod(pod: Obj) -> None:
    spec = pod.setdefault("spec", {})
    for key in ("containers", "initContainers"):
        for container in spec.get(key) or []:
            _default_container(container)
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("enableServiceLinks", True)
    status = pod.setdefault("status", {})
    status.setdefault("phase", "Pending")
    status["qosClass"] = qos_class(spec)


def default_node(node: Obj) -> None:
    node.setdefault("spec", {})
    status = node.setdefault("status", {})
    if "capacity" in status and "allocatable" not in status:
        status["allocatable"] = copy.deepcopy(status["capacity"])
    status.setdefault("daemonEndpoints", {"kubeletEndpoint": {"Port": 0}})
    status.setdefault(
        "nodeInfo",
        dict.fromkeys(
            (
                "machineID",
                "systemUUID",
                "bootID",
                "kernelVersion",
                "osImage",
                "containerRuntimeVersion",
                "kubeletVersion",
                "kubeProxyVersion",
                "operatingSystem",
                "architecture",
            ),
            "",
        ),
    )


def default_namespace(ns: Obj) -> None:
    meta = ns.setdefault("metadata", {})
    meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = meta.get("name", "")
    ns.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
    ns.setdefault("status", {}).setdefault("phase", "Active")


def default_priority_class(pc: Obj) -> None:
    pc.setdefault("preemptionPolicy", "PreemptLowerPriority")


def default_pdb(pdb: Obj) -> None:
    pdb.setdefault("spec", {})
    status = pdb.setdefault("status", {})
    for key in ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"):
        status.setdefault(key, 0)


def default_volume_status(obj: Obj) -> None:
    obj.setdefault("spec", {})
    obj.setdefault("status", {}).setdefault("phase", "Pending")


DEFAULTERS = {
    "persistentvolumes": default_volume_status,
    "persistentvolumeclaims": default_volume_status,
    "pods": default_pod,
    "nodes": default_node,
    "namespaces": default_namespace,
    "priorityclasses": default_priority_class,
    "poddisruptionbudgets": default_pdb,
}

# Stores whose objects carry metadata.generation (bumped on spec changes).
GENERATION_STORES = frozenset(
    {"pods", "poddisruptionbudgets", "replicasets", "statefulsets", "replicationcontrollers"}
)


def bookmark_object(store: str, kind: str, api_version: str, rv: int, initial_end: bool) -> Obj:
    """An empty object of the kind carrying only the revision, as a BOOKMARK event holds."""
    meta: Obj = {"resourceVersion": str(rv)}
    if initial_end:
        meta["annotations"] = {"k8s.io/initial-events-end": "true"}
    obj: Obj = {"kind": kind, "apiVersion": api_version, "metadata": meta}
    if store == "pods":
        obj.update({"spec": {"containers": None}, "status": {}})
    elif store in ("nodes", "namespaces", "poddisruptionbudgets"):
        obj.update({"spec": {}, "status": {}})
    elif store == "leases":
        obj["spec"] = {}
    return obj
