"""Field-level conversion of Kubernetes JSON (as parsed from YAML/JSON) into ``api.types``.

Called by :func:`kubesched.api.load.load_objects`, one document at a time. Each
``convert_*`` function reads only the fields scheduling needs, ignores unknown
fields, applies the API server's *defaulting* that changes what the scheduler
sees (container requests default to limits, pod-level requests, host-network
ports, the namespace name label) and its *validation* where upstream would
reject the object (enums, ranges, required values), with upstream's wording.

Every problem raises :class:`InputError` with ``field`` set to the JSON path
(``spec.containers[0].resources.requests.cpu``); the caller adds ``source`` and
``obj``. ``null`` is treated as absent everywhere, as Go's JSON decoding does.

Timestamps (RFC 3339) become integer nanoseconds since the Unix epoch and are
stored as-is in ``Time`` fields; the simulator rebases them onto its clock.
"""

from __future__ import annotations

import calendar
import datetime as _dt
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

from kubesched.api.errors import InputError
from kubesched.api.quantity import QuantityError, scheduler_amount
from kubesched.api.resources import is_supported_pod_level_resource, pod_requests
from kubesched.api.selectors import label_selector_matches
from kubesched.api.storage import PodVolume
from kubesched.api.types import (
    CPU,
    DEFAULT_SCHEDULER_NAME,
    MEMORY,
    NO_EXECUTE,
    NO_SCHEDULE,
    PREEMPT_LOWER_PRIORITY,
    PREEMPT_NEVER,
    PREFER_NO_SCHEDULE,
    Affinity,
    Container,
    ContainerImage,
    ContainerPort,
    LabelSelector,
    LabelSelectorRequirement,
    Namespace,
    Node,
    NodeAffinity,
    NodeCondition,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    OwnerReference,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodCondition,
    PodDisruptionBudget,
    PodDisruptionBudgetStatus,
    PodSpec,
    PreferredSchedulingTerm,
    PriorityClass,
    Taint,
    Time,
    Toleration,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)

T = TypeVar("T")
Raw = Mapping[str, Any]

INT32_MIN: Final = -(2**31)
INT32_MAX: Final = 2**31 - 1
INT64_MIN: Final = -(2**63)
INT64_MAX: Final = 2**63 - 1

LABEL_METADATA_NAME: Final = "kubernetes.io/metadata.name"

TAINT_EFFECTS: Final = (NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE)
PREEMPTION_POLICIES: Final = (PREEMPT_LOWER_PRIORITY, PREEMPT_NEVER)
# Lt/Gt exist behind the alpha TaintTolerationComparisonOperators gate (off by default).
TOLERATION_OPERATORS: Final = ("Equal", "Exists")
WHEN_UNSATISFIABLE: Final = ("DoNotSchedule", "ScheduleAnyway")
NODE_INCLUSION_POLICIES: Final = ("Honor", "Ignore")
PORT_PROTOCOLS: Final = ("SCTP", "TCP", "UDP")
LABEL_SELECTOR_OPERATORS: Final = ("In", "NotIn", "Exists", "DoesNotExist")
UNHEALTHY_POD_EVICTION_POLICIES: Final = ("AlwaysAllow", "IfHealthyBudget")
POD_PHASES: Final = ("Pending", "Running", "Succeeded", "Failed", "Unknown")

_DNS1123_LABEL_FMT: Final = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT: Final = _DNS1123_LABEL_FMT + r"(\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_LABEL_RE: Final = re.compile("^" + _DNS1123_LABEL_FMT + "$")
_DNS1123_SUBDOMAIN_RE: Final = re.compile("^" + _DNS1123_SUBDOMAIN_FMT + "$")
# apimachinery's validation.IsDNS1123Subdomain / IsDNS1123Label messages.
DNS1123_SUBDOMAIN_MSG: Final = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
    "regex used for validation is '" + _DNS1123_SUBDOMAIN_FMT + "')"
)
DNS1123_LABEL_MSG: Final = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
    "regex used for validation is '" + _DNS1123_LABEL_FMT + "')"
)
PERCENT_MSG: Final = (
    "a valid percent string must be a numeric string followed by an ending '%' "
    "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
)
_PERCENT_RE: Final = re.compile(r"^[0-9]+%$")
_RFC3339_RE: Final = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|z|[+-]\d{2}:\d{2})$"
)


# --------------------------------------------------------------------------- messages


def quote(value: object) -> str:
    """Go's ``%q``-like rendering of a bad value, shortened to stay one line."""
    text = json.dumps(value if isinstance(value, str) else str(value), ensure_ascii=False)
    return text if len(text) <= 80 else text[:76] + '..."'


def type_name(value: object) -> str:
    """The JSON type of a parsed value, as users know it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "mapping"
    if isinstance(value, list | tuple):
        return "list"
    return type(value).__name__


def describe(value: object) -> str:
    """A scalar by its value (``"ten"``, ``1.5``, ``true``), anything else by type."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, int | float):
        return short_number(value)
    return type_name(value)


def short_number(value: int | float) -> str:
    """``repr`` of a number, its digits elided past 40 (a message stays readable)."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}...({len(text)} characters)"


def unsupported(value: object, supported: Sequence[str]) -> str:
    """field.NotSupported's body."""
    return f"Unsupported value: {quote(value)}: supported values: " + ", ".join(
        quote(s) for s in supported
    )


def invalid(value: object, detail: str) -> str:
    """field.Invalid's body: strings quoted, numbers bare."""
    shown = quote(value) if isinstance(value, str) else describe(value)
    return f"Invalid value: {shown}: {detail}"


REQUIRED: Final = "Required value"


def required(detail: str = "") -> str:
    return f"{REQUIRED}: {detail}" if detail else REQUIRED


def forbidden(detail: str) -> str:
    return f"Forbidden: {detail}"


def fail(path: str, message: str) -> InputError:
    return InputError(message, field=path or None)


def child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


# --------------------------------------------------------------------------- typed readers


def as_map(value: Any, path: str) -> Raw:
    """A mapping, or ``{}`` for null."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise fail(path, f"expected a mapping, got {type_name(value)}")
    return value


def opt_map(raw: Raw, key: str, path: str) -> Raw | None:
    value = raw.get(key)
    if value is None:
        return None
    return as_map(value, child(path, key))


def get_map(raw: Raw, key: str, path: str) -> Raw:
    return as_map(raw.get(key), child(path, key))


def get_list(raw: Raw, key: str, path: str) -> list[Any]:
    value = raw.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise fail(child(path, key), f"expected a list, got {type_name(value)}")
    return value


def as_str(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise fail(path, f"expected a string, got {describe(value)}")
    return value


def get_str(raw: Raw, key: str, path: str, default: str = "") -> str:
    value = raw.get(key)
    if value is None:
        return default
    return as_str(value, child(path, key))


def opt_str(raw: Raw, key: str, path: str) -> str | None:
    value = raw.get(key)
    if value is None:
        return None
    return as_str(value, child(path, key))


def req_str(raw: Raw, key: str, path: str) -> str:
    value = get_str(raw, key, path)
    if not value:
        raise fail(child(path, key), required())
    return value


def as_int(value: Any, path: str, lo: int = INT64_MIN, hi: int = INT64_MAX) -> int:
    """An integer; integral floats (``3.0``) are accepted, as JSON numbers."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise fail(path, f"expected an integer, got {describe(value)}")
    if not lo <= value <= hi:
        bits = 32 if hi == INT32_MAX else 64
        raise fail(path, f"expected a {bits}-bit integer, got {short_number(value)}")
    return value


def opt_int(raw: Raw, key: str, path: str, *, int32: bool = False) -> int | None:
    value = raw.get(key)
    if value is None:
        return None
    if int32:
        return as_int(value, child(path, key), INT32_MIN, INT32_MAX)
    return as_int(value, child(path, key))


def get_int(raw: Raw, key: str, path: str, default: int = 0, *, int32: bool = False) -> int:
    value = opt_int(raw, key, path, int32=int32)
    return default if value is None else value


def get_bool(raw: Raw, key: str, path: str, default: bool = False) -> bool:
    value = raw.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise fail(child(path, key), f"expected a boolean, got {describe(value)}")
    return value


def get_str_map(raw: Raw, key: str, path: str) -> dict[str, str]:
    """``map[string]string`` (labels, annotations, nodeSelector)."""
    p = child(path, key)
    out: dict[str, str] = {}
    for k, v in as_map(raw.get(key), p).items():
        if not isinstance(k, str):
            raise fail(p, f"expected string keys, got {describe(k)}")
        if v is None:
            v = ""
        out[k] = as_str(v, f"{p}[{k}]")
    return out


def get_str_list(raw: Raw, key: str, path: str) -> tuple[str, ...]:
    p = child(path, key)
    return tuple(as_str(v, f"{p}[{i}]") for i, v in enumerate(get_list(raw, key, path)))


def map_list(raw: Raw, key: str, path: str, convert: Callable[[Raw, str], T]) -> tuple[T, ...]:
    """Convert each mapping item of the list ``raw[key]``."""
    p = child(path, key)
    out = []
    for i, item in enumerate(get_list(raw, key, path)):
        ip = f"{p}[{i}]"
        out.append(convert(as_map(item, ip), ip))
    return tuple(out)


def enum(value: str, supported: Sequence[str], path: str) -> str:
    if value not in supported:
        raise fail(path, unsupported(value, supported))
    return value


def opt_enum(raw: Raw, key: str, path: str, supported: Sequence[str]) -> str | None:
    """An optional enum field; present-but-empty is ``Required value`` as upstream."""
    value = opt_str(raw, key, path)
    if value is None:
        return None
    if value == "":
        raise fail(child(path, key), required())
    return enum(value, supported, child(path, key))


def parse_time(value: Any, path: str) -> Time:
    """An RFC 3339 time as integer nanoseconds since the Unix epoch (not rebased)."""
    if isinstance(value, _dt.datetime):  # an explicit !!timestamp tag
        stamp: _dt.datetime = value
        if stamp.tzinfo is None:
            stamp = stamp.replace(tzinfo=_dt.UTC)
        delta = stamp - _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
        seconds: int = delta.days * 86_400 + delta.seconds
        return seconds * 10**9 + delta.microseconds * 1000
    text = as_str(value, path)
    m = _RFC3339_RE.match(text)
    bad = f'{quote(text)}: expected an RFC 3339 time such as "2024-01-02T03:04:05Z"'
    if m is None:
        raise fail(path, bad)
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    try:
        _dt.datetime(year, month, day, hour, minute, second)
    except ValueError:
        raise fail(path, bad) from None
    secs = calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0))
    frac = m.group(7) or ""
    nanos = int((frac + "000000000")[:9])
    zone = m.group(8)
    if zone not in ("Z", "z"):
        sign = 1 if zone[0] == "+" else -1
        zh, zm = int(zone[1:3]), int(zone[4:6])
        if zh > 23 or zm > 59:
            raise fail(path, bad)
        secs -= sign * (zh * 3600 + zm * 60)
    return secs * 10**9 + nanos


def opt_time(raw: Raw, key: str, path: str) -> Time | None:
    value = raw.get(key)
    if value is None:
        return None
    return parse_time(value, child(path, key))


def resource_list(raw: Raw, key: str, path: str) -> dict[str, int]:
    """A ResourceList in scheduler units; bad quantities name the resource's path."""
    p = child(path, key)
    out: dict[str, int] = {}
    for name, text in as_map(raw.get(key), p).items():
        if not isinstance(name, str):
            raise fail(p, f"expected string keys, got {describe(name)}")
        rp = f"{p}.{name}"
        # null is a zero quantity (Quantity.UnmarshalJSON)
        if text is not None and (isinstance(text, bool) or not isinstance(text, str | int | float)):
            raise fail(rp, f"expected a quantity, got {describe(text)}")
        cache_key = (name == CPU, type(text), text)
        amount = _AMOUNTS.get(cache_key)
        if amount is None:
            amount = _amount(name, text, rp)
            if len(_AMOUNTS) < 65536:
                _AMOUNTS[cache_key] = amount
        out[name] = amount
    return out


# (is cpu, type, text) -> amount: inputs repeat the same few quantities endlessly.
_AMOUNTS: dict[tuple[bool, type, str | int | float | None], int] = {}


def _amount(name: str, text: str | int | float | None, path: str) -> int:
    try:
        amount = scheduler_amount(name, text)
    except (QuantityError, ValueError, OverflowError) as err:
        shown = text if isinstance(text, str) else repr(text)
        raise fail(path, f"{quote(shown)}: {err}") from None
    if amount < 0:
        raise fail(path, invalid(str(text), "must be greater than or equal to 0"))
    if amount > INT64_MAX:
        raise fail(path, invalid(str(text), "value is too large"))
    return amount


def check_dns_subdomain(name: str, path: str) -> None:
    if len(name) > 253:
        raise fail(path, invalid(name, "must be no more than 253 characters"))
    if not _DNS1123_SUBDOMAIN_RE.match(name):
        raise fail(path, invalid(name, DNS1123_SUBDOMAIN_MSG))


def check_dns_label(name: str, path: str) -> None:
    if len(name) > 63:
        raise fail(path, invalid(name, "must be no more than 63 characters"))
    if not _DNS1123_LABEL_RE.match(name):
        raise fail(path, invalid(name, DNS1123_LABEL_MSG))


# --------------------------------------------------------------------------- metadata


@dataclass(frozen=True, slots=True)
class Meta:
    """The ``metadata`` fields every kind reads."""

    name: str
    namespace: str
    uid: str
    labels: dict[str, str]
    annotations: dict[str, str]
    creation_timestamp: Time


def object_name(raw: Raw) -> tuple[str, str]:
    """(namespace, name) as written, "" where missing or not a string: for error context
    before the metadata has been validated."""
    meta = raw.get("metadata")
    if not isinstance(meta, Mapping):
        return "", ""
    name, ns = meta.get("name"), meta.get("namespace")
    return (ns if isinstance(ns, str) else ""), (name if isinstance(name, str) else "")


def read_meta(raw: Raw, *, namespaced: bool, path: str = "metadata") -> Meta:
    meta = as_map(raw.get("metadata"), path)
    name = req_str(meta, "name", path)
    if namespaced:
        namespace = get_str(meta, "namespace", path) or "default"
        check_dns_label(namespace, child(path, "namespace"))
    else:
        namespace = ""
    created = opt_time(meta, "creationTimestamp", path)
    return Meta(
        name=name,
        namespace=namespace,
        uid=get_str(meta, "uid", path),
        labels=get_str_map(meta, "labels", path),
        annotations=get_str_map(meta, "annotations", path),
        creation_timestamp=0 if created is None else created,
    )


# --------------------------------------------------------------------------- selectors


def _label_requirement(raw: Raw, path: str) -> LabelSelectorRequirement:
    key = req_str(raw, "key", path)
    op = get_str(raw, "operator", path)
    values = get_str_list(raw, "values", path)
    if op in ("In", "NotIn"):
        if not values:
            raise fail(
                child(path, "values"),
                required("must be specified when `operator` is 'In' or 'NotIn'"),
            )
    elif op in ("Exists", "DoesNotExist"):
        if values:
            raise fail(
                child(path, "values"),
                forbidden("may not be specified when `operator` is 'Exists' or 'DoesNotExist'"),
            )
    else:
        raise fail(child(path, "operator"), unsupported(op, LABEL_SELECTOR_OPERATORS))
    return LabelSelectorRequirement(key=key, operator=op, values=values)


def label_selector(value: Any, path: str) -> LabelSelector | None:
    """metav1.LabelSelector; ``None`` when absent (selects nothing where optional)."""
    if value is None:
        return None
    raw = as_map(value, path)
    return LabelSelector(
        match_labels=get_str_map(raw, "matchLabels", path),
        match_expressions=map_list(raw, "matchExpressions", path, _label_requirement),
    )


def _node_requirement(raw: Raw, path: str) -> NodeSelectorRequirement:
    key = req_str(raw, "key", path)
    op = get_str(raw, "operator", path)
    values = get_str_list(raw, "values", path)
    vpath = child(path, "values")
    if op in ("In", "NotIn"):
        if not values:
            raise fail(vpath, required("must be specified when `operator` is 'In' or 'NotIn'"))
    elif op in ("Exists", "DoesNotExist"):
        if values:
            raise fail(
                vpath,
                forbidden("may not be specified when `operator` is 'Exists' or 'DoesNotExist'"),
            )
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            raise fail(
                vpath, required("must be specified single value when `operator` is 'Lt' or 'Gt'")
            )
    else:
        raise fail(child(path, "operator"), invalid(op, "not a valid selector operator"))
    return NodeSelectorRequirement(key=key, operator=op, values=values)


def _node_field_requirement(raw: Raw, path: str) -> NodeSelectorRequirement:
    key = get_str(raw, "key", path)
    op = get_str(raw, "operator", path)
    values = get_str_list(raw, "values", path)
    if op in ("In", "NotIn"):
        if len(values) != 1:
            raise fail(
                child(path, "values"),
                required(
                    "must be only one value when `operator` is 'In' or 'NotIn' "
                    "for node field selector"
                ),
            )
    else:
        raise fail(child(path, "operator"), invalid(op, "not a valid selector operator"))
    if key != "metadata.name":
        raise fail(child(path, "key"), invalid(key, "not a valid field selector key"))
    return NodeSelectorRequirement(key=key, operator=op, values=values)


def node_selector_term(raw: Raw, path: str) -> NodeSelectorTerm:
    return NodeSelectorTerm(
        match_expressions=map_list(raw, "matchExpressions", path, _node_requirement),
        match_fields=map_list(raw, "matchFields", path, _node_field_requirement),
    )


def _weight(raw: Raw, path: str) -> int:
    weight = get_int(raw, "weight", path, int32=True)
    if not 1 <= weight <= 100:
        raise fail(child(path, "weight"), invalid(weight, "must be in the range 1-100"))
    return weight


def _preferred_term(raw: Raw, path: str) -> PreferredSchedulingTerm:
    weight = _weight(raw, path)
    pref = get_map(raw, "preference", path)
    return PreferredSchedulingTerm(weight, node_selector_term(pref, child(path, "preference")))


def node_affinity(raw: Raw, path: str) -> NodeAffinity:
    req_raw = opt_map(raw, "requiredDuringSchedulingIgnoredDuringExecution", path)
    required_sel = None
    if req_raw is not None:
        rp = child(path, "requiredDuringSchedulingIgnoredDuringExecution")
        terms = map_list(req_raw, "nodeSelectorTerms", rp, node_selector_term)
        if not terms:
            raise fail(
                child(rp, "nodeSelectorTerms"),
                required("must have at least one node selector term"),
            )
        required_sel = NodeSelector(terms)
    preferred = map_list(
        raw, "preferredDuringSchedulingIgnoredDuringExecution", path, _preferred_term
    )
    return NodeAffinity(required=required_sel, preferred=preferred)


def pod_affinity_term(raw: Raw, path: str) -> PodAffinityTerm:
    topology_key = get_str(raw, "topologyKey", path)
    if not topology_key:
        raise fail(child(path, "topologyKey"), required("can not be empty"))
    namespaces = get_str_list(raw, "namespaces", path)
    for i, ns in enumerate(namespaces):
        check_dns_label(ns, f"{child(path, 'namespaces')}[{i}]")
    return PodAffinityTerm(
        label_selector=label_selector(raw.get("labelSelector"), child(path, "labelSelector")),
        topology_key=topology_key,
        namespaces=namespaces,
        namespace_selector=label_selector(
            raw.get("namespaceSelector"), child(path, "namespaceSelector")
        ),
        match_label_keys=get_str_list(raw, "matchLabelKeys", path),
        mismatch_label_keys=get_str_list(raw, "mismatchLabelKeys", path),
    )


def _weighted_term(raw: Raw, path: str) -> WeightedPodAffinityTerm:
    weight = _weight(raw, path)
    term_raw = get_map(raw, "podAffinityTerm", path)
    return WeightedPodAffinityTerm(
        weight, pod_affinity_term(term_raw, child(path, "podAffinityTerm"))
    )


def pod_affinity(raw: Raw, path: str) -> PodAffinity:
    return PodAffinity(
        required=map_list(
            raw, "requiredDuringSchedulingIgnoredDuringExecution", path, pod_affinity_term
        ),
        preferred=map_list(
            raw, "preferredDuringSchedulingIgnoredDuringExecution", path, _weighted_term
        ),
    )


def affinity(raw: Raw, path: str) -> Affinity:
    na = opt_map(raw, "nodeAffinity", path)
    pa = opt_map(raw, "podAffinity", path)
    paa = opt_map(raw, "podAntiAffinity", path)
    return Affinity(
        node_affinity=None if na is None else node_affinity(na, child(path, "nodeAffinity")),
        pod_affinity=None if pa is None else pod_affinity(pa, child(path, "podAffinity")),
        pod_anti_affinity=None
        if paa is None
        else pod_affinity(paa, child(path, "podAntiAffinity")),
    )


# --------------------------------------------------------------------------- taints, spread


def taint(raw: Raw, path: str) -> Taint:
    key = req_str(raw, "key", path)
    effect = get_str(raw, "effect", path)
    if not effect:
        raise fail(child(path, "effect"), required())
    enum(effect, TAINT_EFFECTS, child(path, "effect"))
    return Taint(key=key, value=get_str(raw, "value", path), effect=effect)


def taints(raw: Raw, key: str, path: str) -> tuple[Taint, ...]:
    out = map_list(raw, key, path, taint)
    seen: set[tuple[str, str]] = set()
    for i, t in enumerate(out):
        if (t.key, t.effect) in seen:
            raise fail(
                f"{child(path, key)}[{i}]",
                f"Duplicate value: {quote(f'{t.key}:{t.effect}')}: "
                "taints must be unique by key and effect pair",
            )
        seen.add((t.key, t.effect))
    return out


def toleration(raw: Raw, path: str) -> Toleration:
    key = get_str(raw, "key", path)
    op = get_str(raw, "operator", path)
    value = get_str(raw, "value", path)
    effect = get_str(raw, "effect", path)
    seconds = opt_int(raw, "tolerationSeconds", path)
    if not key and op != "Exists":
        raise fail(
            child(path, "operator"),
            invalid(
                op,
                'operator must be Exists when `key` is empty, which means "match all values '
                'and all keys"',
            ),
        )
    if seconds is not None and effect != NO_EXECUTE:
        raise fail(
            child(path, "effect"),
            invalid(effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"),
        )
    if op not in ("", *TOLERATION_OPERATORS):
        raise fail(child(path, "operator"), unsupported(op, TOLERATION_OPERATORS))
    if op == "Exists" and value:
        raise fail(
            child(path, "operator"), invalid(op, "value must be empty when `operator` is 'Exists'")
        )
    if effect:
        enum(effect, TAINT_EFFECTS, child(path, "effect"))
    return Toleration(
        key=key, operator=op or "Equal", value=value, effect=effect, toleration_seconds=seconds
    )


def spread_constraint(raw: Raw, path: str) -> TopologySpreadConstraint:
    max_skew = get_int(raw, "maxSkew", path, int32=True)
    if max_skew <= 0:
        raise fail(child(path, "maxSkew"), invalid(max_skew, "must be greater than zero"))
    topology_key = get_str(raw, "topologyKey", path)
    if not topology_key:
        raise fail(child(path, "topologyKey"), required("can not be empty"))
    when = get_str(raw, "whenUnsatisfiable", path)
    enum(when, WHEN_UNSATISFIABLE, child(path, "whenUnsatisfiable"))
    min_domains = opt_int(raw, "minDomains", path, int32=True)
    if min_domains is not None:
        mp = child(path, "minDomains")
        if min_domains <= 0:
            raise fail(mp, invalid(min_domains, "must be greater than zero"))
        if when != "DoNotSchedule":
            raise fail(
                mp,
                invalid(
                    min_domains,
                    f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {when}",
                ),
            )
    selector = label_selector(raw.get("labelSelector"), child(path, "labelSelector"))
    match_label_keys = get_str_list(raw, "matchLabelKeys", path)
    if match_label_keys and selector is None:
        raise fail(
            child(path, "matchLabelKeys"),
            forbidden("must not be specified when labelSelector is not set"),
        )
    return TopologySpreadConstraint(
        max_skew=max_skew,
        topology_key=topology_key,
        when_unsatisfiable=when,
        label_selector=selector,
        min_domains=min_domains,
        node_affinity_policy=opt_enum(raw, "nodeAffinityPolicy", path, NODE_INCLUSION_POLICIES),
        node_taints_policy=opt_enum(raw, "nodeTaintsPolicy", path, NODE_INCLUSION_POLICIES),
        match_label_keys=match_label_keys,
    )


def spread_constraints(raw: Raw, path: str) -> tuple[TopologySpreadConstraint, ...]:
    key = "topologySpreadConstraints"
    out = map_list(raw, key, path, spread_constraint)
    first: dict[tuple[str, str], int] = {}
    for i, c in enumerate(out):
        pair = (c.topology_key, c.when_unsatisfiable)
        if pair in first:
            # Upstream reports the earlier constraint of the repeated pair.
            raise fail(
                f"{child(path, key)}[{first[pair]}].{{topologyKey, whenUnsatisfiable}}",
                f"Duplicate value: {quote('{' + pair[0] + ', ' + pair[1] + '}')}",
            )
        first[pair] = i
    return out


# --------------------------------------------------------------------------- pod spec

CONTAINER_RESTART_POLICIES: Final = ("Always", "OnFailure", "Never")


def _port(raw: Raw, path: str) -> ContainerPort:
    container_port = get_int(raw, "containerPort", path, int32=True)
    if container_port == 0:
        raise fail(child(path, "containerPort"), required())
    if not 1 <= container_port <= 65535:
        raise fail(
            child(path, "containerPort"),
            invalid(container_port, "must be between 1 and 65535, inclusive"),
        )
    host_port = get_int(raw, "hostPort", path, int32=True)
    if host_port != 0 and not 1 <= host_port <= 65535:
        raise fail(
            child(path, "hostPort"), invalid(host_port, "must be between 1 and 65535, inclusive")
        )
    protocol = get_str(raw, "protocol", path) or "TCP"  # defaulted before validation
    enum(protocol, PORT_PROTOCOLS, child(path, "protocol"))
    return ContainerPort(
        container_port=container_port,
        host_port=host_port,
        protocol=protocol,
        host_ip=get_str(raw, "hostIP", path),
    )


def _container(raw: Raw, path: str, *, init: bool, host_network: bool) -> Container:
    name = req_str(raw, "name", path)
    rp = child(path, "resources")
    resources = get_map(raw, "resources", path)
    requests = resource_list(resources, "requests", rp)
    # SetDefaults_Pod: a resource with a limit and no request requests its limit.
    for res, amount in resource_list(resources, "limits", rp).items():
        requests.setdefault(res, amount)
    ports = map_list(raw, "ports", path, _port)
    if host_network:
        # SetDefaults_Pod (defaultHostNetworkPorts): with hostNetwork every container
        # port is also a host port.
        ports = tuple(
            ContainerPort(p.container_port, p.container_port, p.protocol, p.host_ip)
            if p.host_port == 0
            else p
            for p in ports
        )
    restart_policy = None
    if init:
        restart_policy = opt_str(raw, "restartPolicy", path)
        if restart_policy is not None:
            enum(restart_policy, CONTAINER_RESTART_POLICIES, child(path, "restartPolicy"))
    return Container(
        name=name,
        image=get_str(raw, "image", path),
        requests=requests,
        ports=ports,
        restart_policy=restart_policy,
    )


def _containers(
    raw: Raw, key: str, path: str, *, init: bool, host_network: bool
) -> tuple[Container, ...]:
    return map_list(
        raw, key, path, lambda c, p: _container(c, p, init=init, host_network=host_network)
    )


def _pod_level_requests(
    resources: Raw, path: str, containers: tuple[Container, ...], inits: tuple[Container, ...]
) -> dict[str, int]:
    """Pod-level ``spec.resources.requests`` after upstream's defaultPodRequests
    (PodLevelResources, beta and on since v1.34): with pod-level limits, a missing
    pod-level cpu/memory request defaults to the containers' aggregate request, then
    any supported resource's missing request to its pod-level limit."""
    requests = resource_list(resources, "requests", path)
    limits = resource_list(resources, "limits", path)
    if not limits:
        return requests
    aggregate = pod_requests(PodSpec(containers=containers, init_containers=inits))
    for res in (CPU, MEMORY):  # supported pod-level resources that allow overcommit
        if res in aggregate and res not in requests:
            requests[res] = aggregate[res]
    for res, amount in limits.items():
        if res not in requests and is_supported_pod_level_resource(res):
            requests[res] = amount
    return requests


def _scheduling_gates(raw: Raw, path: str) -> tuple[str, ...]:
    names = map_list(raw, "schedulingGates", path, lambda g, p: req_str(g, "name", p))
    seen: set[str] = set()
    for i, name in enumerate(names):
        if name in seen:
            raise fail(
                f"{child(path, 'schedulingGates')}[{i}].name", f"Duplicate value: {quote(name)}"
            )
        seen.add(name)
    return names


@dataclass(frozen=True, slots=True)
class SpecFields:
    """A converted pod spec plus the fields that live on ``Pod`` rather than ``PodSpec``
    (priority fields as written, before admission)."""

    spec: PodSpec
    node_name: str
    priority: int | None
    priority_class_name: str
    preemption_policy: str | None


def _pod_volumes(raw: Raw, path: str) -> tuple[PodVolume, ...]:
    if raw.get("volumes") in (None, []):
        return ()
    from kubesched.api.convert_storage import pod_volumes  # it builds on this module

    return pod_volumes(raw, path)


def pod_spec(value: Any, path: str) -> SpecFields:
    """A ``PodSpec`` (of a Pod or a pod template) with pod defaulting applied.
    Resource claims (DRA) are not read: ``kubesched.api.load`` skips pods that
    have any."""
    raw = as_map(value, path)
    host_network = get_bool(raw, "hostNetwork", path)
    containers = _containers(raw, "containers", path, init=False, host_network=host_network)
    if not containers:
        raise fail(child(path, "containers"), required())
    inits = _containers(raw, "initContainers", path, init=True, host_network=host_network)
    seen: set[str] = set()
    for key, group in (("containers", containers), ("initContainers", inits)):
        for i, c in enumerate(group):
            if c.name in seen:
                raise fail(f"{child(path, key)}[{i}].name", f"Duplicate value: {quote(c.name)}")
            seen.add(c.name)
    resources = get_map(raw, "resources", path)
    aff = opt_map(raw, "affinity", path)
    grace = opt_int(raw, "terminationGracePeriodSeconds", path)
    if grace is not None and grace < 0:
        raise fail(
            child(path, "terminationGracePeriodSeconds"),
            invalid(grace, "must be greater than or equal to 0"),
        )
    spec = PodSpec(
        containers=containers,
        init_containers=inits,
        overhead=resource_list(raw, "overhead", path),
        resources=_pod_level_requests(resources, child(path, "resources"), containers, inits),
        node_selector=get_str_map(raw, "nodeSelector", path),
        affinity=None if aff is None else affinity(aff, child(path, "affinity")),
        tolerations=map_list(raw, "tolerations", path, toleration),
        scheduler_name=get_str(raw, "schedulerName", path) or DEFAULT_SCHEDULER_NAME,
        termination_grace_period_seconds=grace,
        scheduling_gates=_scheduling_gates(raw, path),
        topology_spread_constraints=spread_constraints(raw, path),
        host_network=host_network,
        volumes=_pod_volumes(raw, path),
    )
    return SpecFields(
        spec=spec,
        node_name=get_str(raw, "nodeName", path),
        priority=opt_int(raw, "priority", path, int32=True),
        priority_class_name=get_str(raw, "priorityClassName", path),
        preemption_policy=opt_enum(raw, "preemptionPolicy", path, PREEMPTION_POLICIES),
    )


# --------------------------------------------------------------------------- kinds


def _owner_reference(raw: Raw, path: str) -> OwnerReference:
    return OwnerReference(
        api_version=get_str(raw, "apiVersion", path),
        kind=get_str(raw, "kind", path),
        name=get_str(raw, "name", path),
        uid=get_str(raw, "uid", path),
        controller=get_bool(raw, "controller", path),
    )


def _pod_condition(raw: Raw, path: str) -> PodCondition:
    return PodCondition(
        type=req_str(raw, "type", path),
        status=get_str(raw, "status", path),
        reason=get_str(raw, "reason", path),
        message=get_str(raw, "message", path),
        last_transition_time=opt_time(raw, "lastTransitionTime", path),
    )


def convert_pod(raw: Raw) -> tuple[Pod, int | None, str | None]:
    """A Pod, and its ``spec.priority`` and ``spec.preemptionPolicy`` as written (for
    admission). ``priority`` is the written value or 0 until admitted."""
    meta = read_meta(raw, namespaced=True)
    check_dns_subdomain(meta.name, "metadata.name")
    owners = map_list(get_map(raw, "metadata", ""), "ownerReferences", "metadata", _owner_reference)
    deletion = opt_time(get_map(raw, "metadata", ""), "deletionTimestamp", "metadata")
    fields = pod_spec(raw.get("spec"), "spec")
    if fields.node_name and fields.spec.scheduling_gates:
        raise fail(
            "spec.nodeName",
            forbidden("cannot be set until all schedulingGates have been cleared"),
        )
    status = get_map(raw, "status", "")
    phase = get_str(status, "phase", "status") or "Pending"
    enum(phase, POD_PHASES, "status.phase")
    pod = Pod(
        meta.name,
        meta.namespace,
        uid=meta.uid,
        labels=meta.labels,
        annotations=meta.annotations,
        owner_references=owners,
        spec=fields.spec,
        priority=fields.priority or 0,
        priority_class_name=fields.priority_class_name,
        preemption_policy=fields.preemption_policy or PREEMPT_LOWER_PRIORITY,
        node_name=fields.node_name,
        nominated_node_name=get_str(status, "nominatedNodeName", "status"),
        phase=phase,
        start_time=opt_time(status, "startTime", "status"),
        deletion_timestamp=deletion,
        conditions=list(map_list(status, "conditions", "status", _pod_condition)),
        creation_timestamp=meta.creation_timestamp,
    )
    return pod, fields.priority, fields.preemption_policy


def _node_condition(raw: Raw, path: str) -> NodeCondition:
    return NodeCondition(
        type=req_str(raw, "type", path),
        status=get_str(raw, "status", path),
        reason=get_str(raw, "reason", path),
        message=get_str(raw, "message", path),
    )


def _image(raw: Raw, path: str) -> ContainerImage:
    return ContainerImage(
        names=get_str_list(raw, "names", path), size_bytes=get_int(raw, "sizeBytes", path)
    )


def convert_node(raw: Raw) -> tuple[Node, dict[str, str]]:
    """A Node. ``status.allocatable`` falls back to ``status.capacity`` as a whole when
    it is absent (SetDefaults_NodeStatus), not resource by resource."""
    meta = read_meta(raw, namespaced=False)
    check_dns_subdomain(meta.name, "metadata.name")
    spec = get_map(raw, "spec", "")
    status = get_map(raw, "status", "")
    capacity = resource_list(status, "capacity", "status")
    if status.get("allocatable") is None:
        allocatable = capacity
    else:
        allocatable = resource_list(status, "allocatable", "status")
    node = Node(
        meta.name,
        uid=meta.uid,
        labels=meta.labels,
        annotations=meta.annotations,
        taints=taints(spec, "taints", "spec"),
        unschedulable=get_bool(spec, "unschedulable", "spec"),
        allocatable=allocatable,
        conditions=map_list(status, "conditions", "status", _node_condition),
        images=map_list(status, "images", "status", _image),
        creation_timestamp=meta.creation_timestamp,
    )
    return node, meta.annotations


def convert_priority_class(raw: Raw) -> tuple[PriorityClass, dict[str, str]]:
    """A PriorityClass, defaulted (preemptionPolicy) but not validated: see
    ``admission.validate_priority_class``."""
    meta = read_meta(raw, namespaced=False)
    check_dns_subdomain(meta.name, "metadata.name")
    policy = opt_str(raw, "preemptionPolicy", "")
    pc = PriorityClass(
        name=meta.name,
        value=get_int(raw, "value", "", int32=True),
        global_default=get_bool(raw, "globalDefault", ""),
        preemption_policy=PREEMPT_LOWER_PRIORITY if policy is None else policy,
        description=get_str(raw, "description", ""),
    )
    return pc, meta.annotations


def _int_or_percent(raw: Raw, key: str, path: str) -> int | str | None:
    """An IntOrString that must be a non-negative int or a percentage up to 100%."""
    value = raw.get(key)
    p = child(path, key)
    if value is None:
        return None
    if isinstance(value, str):
        if not _PERCENT_RE.match(value):
            raise fail(p, invalid(value, PERCENT_MSG))
        if int(value[:-1]) > 100:
            raise fail(p, invalid(value, "must not be greater than 100%"))
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        n = as_int(value, p, INT32_MIN, INT32_MAX)
        if n < 0:
            raise fail(p, invalid(n, "must be greater than or equal to 0"))
        return n
    raise fail(p, f"expected an integer or a percentage, got {describe(value)}")


def _disrupted_pods(raw: Raw, path: str) -> dict[str, Time]:
    p = child(path, "disruptedPods")
    out: dict[str, Time] = {}
    for name, when in as_map(raw.get("disruptedPods"), p).items():
        if not isinstance(name, str):
            raise fail(p, f"expected string keys, got {describe(name)}")
        out[name] = parse_time(when, f"{p}[{name}]")
    return out


def convert_pdb(raw: Raw) -> tuple[PodDisruptionBudget, dict[str, str]]:
    """A policy/v1 PodDisruptionBudget: a missing selector selects no pods, an empty
    one all pods of the namespace."""
    meta = read_meta(raw, namespaced=True)
    check_dns_subdomain(meta.name, "metadata.name")
    spec = get_map(raw, "spec", "")
    min_available = _int_or_percent(spec, "minAvailable", "spec")
    max_unavailable = _int_or_percent(spec, "maxUnavailable", "spec")
    if min_available is not None and max_unavailable is not None:
        raise fail("spec", "minAvailable and maxUnavailable cannot be both set")
    status = get_map(raw, "status", "")
    pdb = PodDisruptionBudget(
        name=meta.name,
        namespace=meta.namespace,
        selector=label_selector(spec.get("selector"), "spec.selector"),
        min_available=min_available,
        max_unavailable=max_unavailable,
        unhealthy_pod_eviction_policy=opt_enum(
            spec, "unhealthyPodEvictionPolicy", "spec", UNHEALTHY_POD_EVICTION_POLICIES
        ),
        status=PodDisruptionBudgetStatus(
            disruptions_allowed=get_int(status, "disruptionsAllowed", "status", int32=True),
            current_healthy=get_int(status, "currentHealthy", "status", int32=True),
            desired_healthy=get_int(status, "desiredHealthy", "status", int32=True),
            expected_pods=get_int(status, "expectedPods", "status", int32=True),
            disrupted_pods=_disrupted_pods(status, "status"),
            observed_generation=get_int(status, "observedGeneration", "status"),
        ),
    )
    return pdb, meta.annotations


def convert_namespace(raw: Raw) -> tuple[Namespace, dict[str, str]]:
    """A Namespace, with the ``kubernetes.io/metadata.name`` label the API server sets."""
    meta = read_meta(raw, namespaced=False)
    check_dns_label(meta.name, "metadata.name")
    labels = dict(meta.labels)
    labels[LABEL_METADATA_NAME] = meta.name
    return Namespace(name=meta.name, labels=labels), meta.annotations


@dataclass(frozen=True, slots=True, eq=False)
class Workload:
    """A controller of pods made from a template: an apps/v1 Deployment, ReplicaSet,
    StatefulSet or DaemonSet, a batch/v1 Job or CronJob (``kubesched.api.workloads``).

    ``template_spec`` is shared by every pod made from the template. The template's
    priority fields are kept as written: each pod made from it is admitted.
    ``replicas`` is ``spec.replicas`` where the kind has it (0 otherwise);
    ``details`` holds the kind's own fields (``kubesched.api.workloads``).
    """

    kind: str
    namespace: str
    name: str
    uid: str
    labels: Mapping[str, str]
    replicas: int
    selector: LabelSelector | None
    template_labels: Mapping[str, str]
    template_annotations: Mapping[str, str]
    template_spec: PodSpec
    template_node_name: str = ""
    template_priority: int | None = None
    template_priority_class_name: str = ""
    template_preemption_policy: str | None = None
    annotations: Mapping[str, str] = field(default_factory=dict)
    owner_references: tuple[OwnerReference, ...] = ()
    creation_timestamp: Time | None = None
    """``metadata.creationTimestamp`` as written (nanoseconds since the Unix epoch)."""
    template_key: str = ""
    """The pod template as canonical text without the ``pod-template-hash`` label:
    two workloads' templates are equal (EqualIgnoreHash) when their keys are."""
    details: object = None
    """The kind's own fields (a ``kubesched.api.workloads`` dataclass)."""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


def convert_workload(raw: Raw, kind: str) -> tuple[Workload, dict[str, str]]:
    meta = read_meta(raw, namespaced=True)
    check_dns_subdomain(meta.name, "metadata.name")
    spec = get_map(raw, "spec", "")
    replicas = get_int(spec, "replicas", "spec", 1, int32=True)
    if replicas < 0:
        raise fail("spec.replicas", invalid(replicas, "must be greater than or equal to 0"))
    selector = label_selector(spec.get("selector"), "spec.selector")
    if selector is None:
        raise fail("spec.selector", required())
    if selector.is_empty():
        raise fail("spec.selector", invalid("{}", "empty selector is invalid for deployment"))
    template = get_map(spec, "template", "spec")
    tmeta = get_map(template, "metadata", "spec.template")
    tlabels = get_str_map(tmeta, "labels", "spec.template.metadata")
    if not label_selector_matches(selector, tlabels):
        raise fail(
            "spec.template.metadata.labels",
            f"Invalid value: {json.dumps(tlabels, sort_keys=True)}: "
            "`selector` does not match template `labels`",
        )
    fields = pod_spec(template.get("spec"), "spec.template.spec")
    workload = Workload(
        kind=kind,
        namespace=meta.namespace,
        name=meta.name,
        uid=meta.uid or f"{kind.lower()}/{meta.namespace}/{meta.name}",
        labels=meta.labels,
        replicas=replicas,
        selector=selector,
        template_labels=tlabels,
        template_annotations=get_str_map(tmeta, "annotations", "spec.template.metadata"),
        template_spec=fields.spec,
        template_node_name=fields.node_name,
        template_priority=fields.priority,
        template_priority_class_name=fields.priority_class_name,
        template_preemption_policy=fields.preemption_policy,
    )
    return workload, meta.annotations
