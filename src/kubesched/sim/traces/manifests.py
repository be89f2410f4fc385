"""Api objects back to Kubernetes manifests, as users write them.

``PriorityClass``, ``Node`` and ``Pod`` become the mappings a user would write,
quantities in canonical form (``12``, ``3152m``, ``16Gi``), pods before admission
(``priorityClassName``, no ``priority``); loading the output back gives equal
objects. A field the renderer cannot write (pod affinity, init containers, ...)
raises ValueError instead of being dropped silently.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import IO, Any, Final

import yaml

from kubesched.api.quantity import format_bytes, format_milli_cpu
from kubesched.api.resources import HUGEPAGES_PREFIX, is_native_resource
from kubesched.api.types import (
    CPU,
    DEFAULT_SCHEDULER_NAME,
    EPHEMERAL_STORAGE,
    MEMORY,
    PREEMPT_LOWER_PRIORITY,
    Node,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PriorityClass,
    Toleration,
)
from kubesched.sim.traces import TraceObjects

NODES_FILE: Final = "nodes.yaml"
PRIORITY_CLASSES_FILE: Final = "priorityclasses.yaml"
PODS_FILE: Final = "pods.yaml"

_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

Manifest = dict[str, Any]


def quantity(resource: str, amount: int) -> str:
    """A scheduler amount (``api.types.ResourceList`` units) as a canonical quantity."""
    if resource == CPU:
        return format_milli_cpu(amount)
    if resource in (MEMORY, EPHEMERAL_STORAGE) or resource.startswith(HUGEPAGES_PREFIX):
        return format_bytes(amount)
    return str(amount)


def _resources(rl: Mapping[str, int]) -> dict[str, str]:
    return {name: quantity(name, amount) for name, amount in rl.items()}


def _meta(
    name: str, namespace: str | None, labels: Mapping[str, str], ann: Mapping[str, str]
) -> Manifest:
    meta: Manifest = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    if labels:
        meta["labels"] = dict(labels)
    if ann:
        meta["annotations"] = dict(ann)
    return meta


def priority_class_manifest(pc: PriorityClass) -> Manifest:
    out: Manifest = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": pc.name},
        "value": pc.value,
    }
    if pc.global_default:
        out["globalDefault"] = True
    if pc.preemption_policy != PREEMPT_LOWER_PRIORITY:
        out["preemptionPolicy"] = pc.preemption_policy
    if pc.description:
        out["description"] = pc.description
    return out


def node_manifest(node: Node) -> Manifest:
    if node.images or node.conditions:
        raise ValueError(f"node {node.name}: images and conditions are not rendered")
    out: Manifest = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": _meta(node.name, None, node.labels, node.annotations),
    }
    spec: Manifest = {}
    if node.unschedulable:
        spec["unschedulable"] = True
    if node.taints:
        spec["taints"] = [
            {"key": t.key, **({"value": t.value} if t.value else {}), "effect": t.effect}
            for t in node.taints
        ]
    if spec:
        out["spec"] = spec
    out["status"] = {"allocatable": _resources(node.allocatable)}
    return out


def _requirement(r: NodeSelectorRequirement) -> Manifest:
    out: Manifest = {"key": r.key, "operator": r.operator}
    if r.values:
        out["values"] = list(r.values)
    return out


def _term(t: NodeSelectorTerm) -> Manifest:
    out: Manifest = {}
    if t.match_expressions:
        out["matchExpressions"] = [_requirement(r) for r in t.match_expressions]
    if t.match_fields:
        out["matchFields"] = [_requirement(r) for r in t.match_fields]
    return out


def _toleration(t: Toleration) -> Manifest:
    out: Manifest = {}
    if t.key:
        out["key"] = t.key
    if t.operator != "Equal":
        out["operator"] = t.operator
    if t.value:
        out["value"] = t.value
    if t.effect:
        out["effect"] = t.effect
    if t.toleration_seconds is not None:
        out["tolerationSeconds"] = t.toleration_seconds
    return out


def pod_manifest(pod: Pod) -> Manifest:
    """The pod as submitted (before admission): ``priorityClassName`` but no
    ``priority``; status only for a pod already bound (``nodeName`` is in spec)."""
    s = pod.spec
    unsupported = [
        name
        for name, present in (
            ("initContainers", s.init_containers),
            ("overhead", s.overhead),
            ("resources", s.resources),
            ("schedulingGates", s.scheduling_gates),
            ("topologySpreadConstraints", s.topology_spread_constraints),
            ("hostNetwork", s.host_network),
            ("ownerReferences", pod.owner_references),
            ("podAffinity", s.affinity is not None and s.affinity.pod_affinity),
            ("podAntiAffinity", s.affinity is not None and s.affinity.pod_anti_affinity),
            ("ports", any(c.ports for c in s.containers)),
        )
        if present
    ]
    if unsupported:
        raise ValueError(f"pod {pod.key}: not rendered: {', '.join(unsupported)}")
    spec: Manifest = {}
    if pod.priority_class_name:
        spec["priorityClassName"] = pod.priority_class_name
    if s.scheduler_name != DEFAULT_SCHEDULER_NAME:
        spec["schedulerName"] = s.scheduler_name
    if pod.node_name:
        spec["nodeName"] = pod.node_name
    if s.node_selector:
        spec["nodeSelector"] = dict(s.node_selector)
    na = s.affinity.node_affinity if s.affinity is not None else None
    if na is not None:
        node_affinity: Manifest = {}
        if na.required is not None:
            node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
                "nodeSelectorTerms": [_term(t) for t in na.required.terms]
            }
        if na.preferred:
            node_affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": p.weight, "preference": _term(p.preference)} for p in na.preferred
            ]
        spec["affinity"] = {"nodeAffinity": node_affinity}
    if s.tolerations:
        spec["tolerations"] = [_toleration(t) for t in s.tolerations]
    if s.termination_grace_period_seconds is not None:
        spec["terminationGracePeriodSeconds"] = s.termination_grace_period_seconds
    containers = []
    for c in s.containers:
        container: Manifest = {"name": c.name}
        if c.image:
            container["image"] = c.image
        if c.requests:
            resources: Manifest = {"requests": _resources(c.requests)}
            # The API server requires extended resources to have limit == request.
            limits = {n: q for n, q in resources["requests"].items() if not is_native_resource(n)}
            if limits:
                resources["limits"] = limits
            container["resources"] = resources
        containers.append(container)
    spec["containers"] = containers
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": _meta(pod.name, pod.namespace, pod.labels, pod.annotations),
        "spec": spec,
    }


def manifest(obj: PriorityClass | Node | Pod) -> Manifest:
    if isinstance(obj, Pod):
        return pod_manifest(obj)
    if isinstance(obj, Node):
        return node_manifest(obj)
    return priority_class_manifest(obj)


def dump(docs: Iterable[Manifest], stream: IO[str]) -> None:
    """What PyYAML's ``dump_all(..., sort_keys=False, explicit_start=True)`` writes
    for these manifests (dicts, lists, strings, ints, bools; tests compare), 10x
    faster."""
    for doc in docs:
        lines = ["---"]
        _emit_map(doc, 0, lines)
        lines.append("")
        stream.write("\n".join(lines))


# Plain (unquoted) only when unambiguous in any context we write: a conservative
# character set, no ": " or " #", no trailing ":", and resolving to a string under
# YAML 1.1 (so "12", "true", "~" are quoted).
_PLAIN_RE: Final = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./+-]*(?:[: ][A-Za-z0-9_./+-]+)*")
_PRINTABLE_ASCII_RE: Final = re.compile(r"[ -~]*")
_RESOLVER: Any = yaml.resolver.Resolver()
_STR_TAG: Final = "tag:yaml.org,2002:str"
_scalars: dict[str, str] = {}


def _str(s: str) -> str:
    """A string scalar as PyYAML's emitter writes it for the strings manifests hold
    (plain, else single-quoted); anything with control or non-ASCII characters is
    double-quoted with escapes (PyYAML may choose differently; both load the same)."""
    out = _scalars.get(s)
    if out is not None:
        return out
    if _PLAIN_RE.fullmatch(s) and _RESOLVER.resolve(yaml.ScalarNode, s, (True, False)) == _STR_TAG:
        out = s
    elif _PRINTABLE_ASCII_RE.fullmatch(s):
        out = "'" + s.replace("'", "''") + "'"
    else:
        out = _double_quoted(s)
    if len(_scalars) < 1 << 16:
        _scalars[s] = out
    return out


def _double_quoted(s: str) -> str:
    parts = ['"']
    for ch in s:
        o = ord(ch)
        if ch in '"\\':
            parts.append("\\" + ch)
        elif 0x20 <= o <= 0x7E or (
            (0xA0 <= o <= 0xD7FF or 0xE000 <= o <= 0xFFFD or o >= 0x10000)
            and o not in (0x2028, 0x2029, 0xFEFF)
        ):
            parts.append(ch)
        elif o <= 0xFF:
            parts.append(f"\\x{o:02X}")
        elif o <= 0xFFFF:
            parts.append(f"\\u{o:04X}")
        else:
            parts.append(f"\\U{o:08X}")
    parts.append('"')
    return "".join(parts)


def _scalar(v: Any) -> str:
    if isinstance(v, str):
        return _str(v)
    if v is True:
        return "true"
    if v is False:
        return "false"
    if v is None:
        return "null"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, dict) and not v:
        return "{}"
    if isinstance(v, list) and not v:
        return "[]"
    raise ValueError(f"cannot render {type(v).__name__} {v!r}")


def _emit_map(m: Mapping[str, Any], indent: int, lines: list[str]) -> None:
    pad = " " * indent
    for k, v in m.items():
        key = f"{pad}{_str(k)}:"
        if isinstance(v, dict) and v:
            lines.append(key)
            _emit_map(v, indent + 2, lines)
        elif isinstance(v, list) and v:
            lines.append(key)
            _emit_seq(v, indent, lines)
        else:
            lines.append(f"{key} {_scalar(v)}")


def _emit_seq(seq: list[Any], indent: int, lines: list[str]) -> None:
    """Items at the key's indentation (PyYAML's indentless block sequences)."""
    pad = " " * indent
    for item in seq:
        if isinstance(item, dict | list) and item:
            sub: list[str] = []
            if isinstance(item, dict):
                _emit_map(item, indent + 2, sub)
            else:
                _emit_seq(item, indent + 2, sub)
            sub[0] = f"{pad}- {sub[0][indent + 2 :]}"
            lines.extend(sub)
        else:
            lines.append(f"{pad}- {_scalar(item)}")


def trace_manifests(trace: TraceObjects) -> Iterable[Manifest]:
    """PriorityClasses, then nodes, then pods: the order ``--stdout`` writes them."""
    for pc in trace.priority_classes:
        yield priority_class_manifest(pc)
    for node in trace.nodes:
        yield node_manifest(node)
    for pod in trace.pods:
        yield pod_manifest(pod)


def write_yaml(trace: TraceObjects, stream: IO[str]) -> None:
    dump(trace_manifests(trace), stream)


def write_directory(trace: TraceObjects, directory: str) -> list[str]:
    """``priorityclasses.yaml``, ``nodes.yaml`` and ``pods.yaml`` in ``directory``
    (created if missing); returns the paths written (``-f DIR`` loads them)."""
    os.makedirs(directory, exist_ok=True)
    written = []
    for name, docs in (
        (PRIORITY_CLASSES_FILE, [priority_class_manifest(pc) for pc in trace.priority_classes]),
        (NODES_FILE, [node_manifest(n) for n in trace.nodes]),
        (PODS_FILE, (pod_manifest(p) for p in trace.pods)),
    ):
        path = os.path.join(directory, name)
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            dump(docs, f)
        written.append(path)
    return written
